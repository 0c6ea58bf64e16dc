//! Parallel iterators, rayon's shapes: small and large sums called in a
//! loop, map-collect, filter-count, an early `find_any`, an unbalanced loop,
//! `par_sort_unstable`, Mandelbrot rows through `par_chunks_mut`, a few
//! slow (sleeping) items, and, called from a task inside the pool (the rows
//! named `in-pool`), many small loops in a row, word counts by
//! `fold`/`reduce` into `HashMap`s, an unindexed `filter` + `collect`, and a
//! parallel loop inside each item of another; and (everyday.rs) the shapes
//! of everyday programs: stencils, early matches, sorts by key, matrix rows,
//! histograms, text, chains of adapters, map + reduce. weft and rayon run the very same source, expanded
//! twice by [`parallel_loops!`] with `weft::prelude::*` in one module and
//! `rayon::prelude::*` in the other; the `std` row runs the same loops as
//! plain sequential `std::iter` code, on the calling thread.
//!
//! How a rayon user calls such a loop: from the main thread, on the global
//! pool. Each child process builds its peer's global pool with the
//! requested worker count (`weft::Builder::workers(n).build_global()`,
//! `rayon::ThreadPoolBuilder::num_threads(n).build_global()`), which the
//! suite's one-measurement-per-process makes possible, and every loop is
//! called from the child's main thread, outside the pool, except in the
//! `in-pool` rows: there one task on a worker calls the loops, as code
//! under `install` does (`scope`, which runs its closure on a worker on
//! both peers).
//!
//! The sequential floor is a row of its own (the `std` peer, through
//! [`Cap::Floor`]) rather than a figure in every row's details: it is then
//! measured once per worker count in a process of its own, with no idle pool
//! beside it that could spin on a core (a details figure would be measured
//! twice, beside weft's idle workers and beside rayon's, and differ); its
//! "vs weft" cell is weft's speedup over sequential code, and its CPU cell
//! the CPU of the work alone, against which the pools' overhead shows. It
//! uses one thread whatever the worker count, which its note says.

use std::cell::Cell;
use std::collections::HashMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use super::{has, ns_per, timed, Case, Fit, Measured, Needs};
use crate::scheds::{Cap, SchedKind};
use crate::work::{image_checksum, some_work, Rng, MANDEL_MAX_ITER};

/// What the std row says it runs.
const SEQUENTIAL: &str = "sequential std::iter (and slice::sort_unstable) on the calling thread, \
                          no pool: the floor a parallel loop must beat; one thread whatever the \
                          worker count";

/// Parallel iterators, with the sequential std code as the floor row.
const PAR: Needs = Needs::ways(&[&[Cap::ParIter], &[Cap::Floor]]).adjusted(sequential_floor);

/// The std row reaches the case through [`Cap::Floor`], whose note describes
/// the bare threads of the other families: here it runs sequential code.
fn sequential_floor(kind: SchedKind, _workers: usize, fit: Fit) -> Fit {
    match fit {
        Fit::Yes(_) if has(kind, Cap::ParIter).is_none() => Fit::Yes(SEQUENTIAL.into()),
        fit => fit,
    }
}

/// Runs `$row::<L>(args)` where `L` is the [`Loops`] of `$kind`.
macro_rules! on_peer {
    ($kind:expr, $row:ident($($arg:expr),* $(,)?)) => {
        match $kind {
            SchedKind::Weft => $row::<on_weft::Weft>($($arg),*),
            // The same rayon code: which rayon-core it runs on is the build's.
            SchedKind::Rayon | SchedKind::RayonOnWeft => $row::<on_rayon::Rayon>($($arg),*),
            SchedKind::Std => $row::<Sequential>($($arg),*),
            other => unreachable!("{} has no parallel iterators (its fit says n/a)", other.name()),
        }
    };
}

mod everyday;

pub fn cases() -> Vec<Case> {
    let sum_1k = Case {
        scenario: "par/sum-squares",
        variant: "1k",
        about: "data.par_iter().map(|&x| x * x).sum::<u64>() over 1,000 u64, called size times in a loop from the main thread (outside the pool) as a program calls a small parallel loop; timed: the whole loop, median of 5 loops per child; figure: wall per call; every call's sum checked",
        unit: "us/call",
        higher_is_better: false,
        sizes: [20, 4_000, 20_000],
        needs: PAR,
        run: |kind, workers, calls| on_peer!(kind, sum_squares(workers, 1_000, calls)),
    };
    let map_collect = Case {
        scenario: "par/map-collect",
        variant: "",
        about: "(0..n).into_par_iter().map(hash).collect::<Vec<u64>>() (n = size, usize range: indexed on both peers), from the main thread; timed: the call, the output's allocation and first touch included (dropped untimed), median of 5 per child; every element checked",
        unit: "ms",
        higher_is_better: false,
        sizes: [10_000, 10_000_000, 10_000_000],
        needs: PAR,
        run: |kind, workers, n| on_peer!(kind, map_collect(workers, n as usize)),
    };
    let small_in_pool = Case {
        scenario: "par/small-loops",
        variant: "in-pool",
        about: "size loops in a row, each (0..1000).into_par_iter().map(hash & 0xFFFF).sum::<u64>(), all called from one task on a worker (inside scope, as code under install calls them): a loop too small to pay for a steal, called from inside the pool; timed: the size loops, median of 5 per child; figure: wall per loop; every sum checked",
        unit: "us/loop",
        higher_is_better: false,
        sizes: [20, 10_000, 10_000],
        needs: PAR,
        run: |kind, workers, loops| on_peer!(kind, small_loops(workers, loops as usize, 1_000, Runs::Warm)),
    };
    vec![
        sum_1k,
        Case {
            variant: "100k",
            about: "as the 1k row, over 100,000 u64 (800 KB, cache-resident), size calls per loop",
            sizes: [10, 500, 2_000],
            run: |kind, workers, calls| on_peer!(kind, sum_squares(workers, 100_000, calls)),
            ..sum_1k
        },
        Case {
            variant: "10M",
            about: "as the 1k row, over 10,000,000 u64 (80 MB: memory-bound), size calls per loop",
            sizes: [1, 3, 10],
            run: |kind, workers, calls| on_peer!(kind, sum_squares(workers, 10_000_000, calls)),
            ..sum_1k
        },
        map_collect,
        Case {
            scenario: "par/filter-count",
            about: "(0..n).into_par_iter().filter(|&i| hash(i) % 3 == 0).count() (n = size), from the main thread; timed: the call, median of 5 per child; count checked against the sequential count",
            run: |kind, workers, n| on_peer!(kind, filter_count(workers, n as usize)),
            ..map_collect
        },
        Case {
            scenario: "par/find-any",
            about: "(0..10M).into_par_iter().find_any(|&i| i == 100_000): the only match at 1% of the range; the predicate also counts its calls in a per-thread counter (seen_per_call: items it saw, about 100k sequentially); called size times in a loop from the main thread; timed: the whole loop, median of 5 loops per child; every answer checked",
            unit: "us/call",
            sizes: [3, 100, 500],
            run: |kind, workers, calls| on_peer!(kind, find_any(workers, calls)),
            ..map_collect
        },
        Case {
            scenario: "par/unbalanced",
            about: "(0..n).into_par_iter().map(|i| some_work(i, 40 * i)).sum(): item i costs i units, the last items the dearest (n = size; ~40 ms sequential at the quick size); from the main thread; timed: the call, median of 5 per child; sum checked",
            sizes: [100, 1_000, 2_000],
            run: |kind, workers, n| on_peer!(kind, unbalanced(workers, n as usize)),
            ..map_collect
        },
        Case {
            scenario: "par/sort-unstable",
            about: "v.par_sort_unstable() of n pseudo-random u32 (fixed seed; n = size), from the main thread; timed: the sort alone (each run sorts a fresh clone made untimed), median of 3 per child; every output checked against a sequential sort",
            run: |kind, workers, n| on_peer!(kind, sort_unstable(workers, n as usize)),
            ..map_collect
        },
        Case {
            scenario: "par/mandelbrot",
            variant: "rows",
            about: "image.par_chunks_mut(width).enumerate().for_each(paint the row): a width x (width * 3 / 4) image (size = width), one chunk per row, escape time over [-2.5, 1] x [-1.25, 1.25], 256 iterations at most; from the main thread; timed: the call (the image allocated and touched untimed), median of 5 per child; checksum checked against a sequential paint and across peers",
            sizes: [64, 1_024, 2_048],
            run: |kind, workers, width| on_peer!(kind, mandelbrot(workers, width as usize)),
            ..map_collect
        },
        Case {
            scenario: "par/slow-items",
            about: "(0..size).into_par_iter().for_each(|_| thread::sleep(10 ms)): a few slow items, from the main thread; timed: the call, median of 5 per child; every item checked to have run once (ideal_ms: 10 x ceil(items / workers), 10 at 8 workers: a sleeping item needs no core; it counts the pool's workers only, and a pool whose calling thread folds items too, as weft's does from outside, can go below it)",
            sizes: [8, 8, 8],
            run: |kind, workers, items| on_peer!(kind, slow_items(workers, items as usize, SLOW_ITEM)),
            ..map_collect
        },
        Case {
            scenario: "par/slow-items",
            variant: "64 of 1 ms",
            about: "(0..size).into_par_iter().for_each(|_| thread::sleep(1 ms)): a long loop of items that wait (as a read or a lock's wait would), from the main thread; timed: the call, median of 5 per child; every item checked to have run once (ideal_ms: 1 x ceil(items / workers): a sleeping item needs no core, so a pool of more workers than cores, made for such loops, should run one item a worker at once)",
            sizes: [64, 64, 64],
            run: |kind, workers, items| on_peer!(kind, slow_items(workers, items as usize, WAITING_ITEM)),
            ..map_collect
        },
        small_in_pool,
        Case {
            variant: "in-pool first",
            about: "as the in-pool row, but only the first size loops of the child's process, timed once with no warm-up, right after the pool starts: what a short program (a command-line tool, a test) pays for its first loops, where a once-per-process set-up would show; figure: wall per loop",
            sizes: [20, 1_000, 1_000],
            run: |kind, workers, loops| on_peer!(kind, small_loops(workers, loops as usize, 1_000, Runs::FirstOnly)),
            ..small_in_pool
        },
        Case {
            variant: "first from outside",
            about: "a program's first size loops, each (0..1000).into_par_iter().map(hash & 0xFFFF).sum::<u64>(), from the main thread with no pool built before them: the first call builds the global pool, sized through the peer's environment variable (WEFT_WORKERS, RAYON_NUM_THREADS) as a user would; timed once from before the first call: what a command-line tool pays for its first loop, the pool's start included; figure: wall of the size loops; every sum checked",
            unit: "us",
            sizes: [1, 1, 1],
            run: |kind, workers, loops| on_peer!(kind, first_loops(workers, loops as usize)),
            ..small_in_pool
        },
        Case {
            variant: "in-pool 3k",
            about: "as the in-pool row, with 3,000 items a loop (about 3 us): a loop that runs just past the time a loop works alone before weft shares it, and is still too small to pay for a steal; figure: wall per loop",
            sizes: [10, 5_000, 10_000],
            run: |kind, workers, loops| on_peer!(kind, small_loops(workers, loops as usize, 3_000, Runs::Warm)),
            ..small_in_pool
        },
        Case {
            variant: "from outside 3k",
            about: "as the in-pool 3k row, the loops called from the main thread, outside the pool, as a program calls them; figure: wall per loop",
            sizes: [10, 5_000, 10_000],
            run: |kind, workers, loops| on_peer!(kind, small_loops(workers, loops as usize, 3_000, Runs::WarmFromOutside)),
            ..small_in_pool
        },
        Case {
            variant: "in-pool 20k",
            about: "as the in-pool row, with 20,000 items a loop (tens of microseconds): a loop long enough to split, short enough that a helper's steal and the owner's wait for it weigh; figure: wall per loop",
            sizes: [10, 1_000, 2_000],
            run: |kind, workers, loops| on_peer!(kind, small_loops(workers, loops as usize, 20_000, Runs::Warm)),
            ..small_in_pool
        },
        Case {
            scenario: "par/word-counts",
            variant: "in-pool",
            about: "lines.par_iter().fold(HashMap::new, count the line's words).reduce(HashMap::new, merge the smaller map into the larger) over size lines of 10 words each (drawn from 5,000 words of 3-9 letters, fixed seed; about 60 bytes a line), called inside the pool; timed: the call, the maps' drop included, median of 5 per child; every count checked against a sequential count",
            sizes: [1_000, 200_000, 400_000],
            run: |kind, workers, lines| on_peer!(kind, word_counts(workers, lines as usize)),
            ..map_collect
        },
        Case {
            scenario: "par/filter-collect",
            variant: "in-pool",
            about: "(0..n).into_par_iter().map(hash).filter(|x| x % 3 == 0).collect::<Vec<u64>>() (n = size): an unindexed collect of about a third of the items, called inside the pool; timed: the call, median of 5 per child; the output checked against the sequential one, in order",
            sizes: [10_000, 5_000_000, 5_000_000],
            run: |kind, workers, n| on_peer!(kind, filter_collect(workers, n as usize)),
            ..map_collect
        },
        Case {
            scenario: "par/nested",
            variant: "in-pool",
            about: "(0..size).into_par_iter().map(|j| data.par_iter().map(|&x| (x ^ j) * x).sum()).sum() over 100,000 u64 (800 KB): a parallel loop inside each item of a parallel loop, called inside the pool; timed: the call, median of 5 per child; sum checked",
            sizes: [4, 64, 64],
            run: |kind, workers, outer| on_peer!(kind, nested(workers, outer as usize)),
            ..map_collect
        },
        Case {
            scenario: "par/flat-map",
            variant: "few long",
            about: "(0..size).into_par_iter().flat_map(|j| data.par_iter().map(move |&x| (x ^ j) * x)).sum() over 100,000 u64 (800 KB): fewer outer items than workers, each a long inner parallel iterator, called inside the pool; timed: the call, median of 5 per child; sum checked",
            sizes: [2, 4, 4],
            run: |kind, workers, outer| on_peer!(kind, flat_map_long(workers, outer as usize)),
            ..map_collect
        },
        Case {
            scenario: "par/flat-map",
            variant: "many short",
            about: "(0..n).into_par_iter().flat_map(|i| (0..4usize).into_par_iter().map(move |k| hash(4 * i + k) & 0xFFFF)).sum() (n = size): many outer items, each a parallel iterator of 4 items, called inside the pool; timed: the call, median of 5 per child; sum checked",
            sizes: [10_000, 1_000_000, 1_000_000],
            run: |kind, workers, n| on_peer!(kind, flat_map_short(workers, n as usize)),
            ..map_collect
        },
    ]
    .into_iter()
    .chain(everyday::cases())
    .collect()
}

/// Timed runs per child process; the child reports the run of median wall
/// time (one run is tens of milliseconds at most, as long as a shared
/// machine's hiccups).
const RUNS_PER_CHILD: usize = 5;
/// Timed sorts per child: a sort of 10M takes hundreds of milliseconds on
/// 2 cores, and the child must end within the suite's default timeout.
const SORTS_PER_CHILD: usize = 3;

/// Units of [`some_work`] iterations per index in `par/unbalanced`.
const UNBALANCED_UNIT: u32 = 40;
/// How long each item of `par/slow-items` sleeps.
const SLOW_ITEM: Duration = Duration::from_millis(10);
/// How long each item of `par/slow-items` "64 of 1 ms" sleeps.
const WAITING_ITEM: Duration = Duration::from_millis(1);
/// Where `par/find-any`'s only match is: at 1% of [`FIND_LEN`].
const FIND_AT: usize = 100_000;
const FIND_LEN: usize = 10_000_000;

/// Every loop of the family, once per peer: [`parallel_loops!`] writes weft's
/// and rayon's from one source, [`Sequential`] is the floor.
trait Loops {
    /// Builds the peer's global pool with `workers` threads (nothing for the
    /// floor). Called once per child, before anything else touches the pool.
    fn start(workers: usize);
    /// The environment variable that sizes the peer's global pool when the
    /// pool is built by its first use (none for the floor).
    const WORKERS_ENV: Option<&'static str>;
    fn sum_squares(data: &[u64]) -> u64;
    fn map_collect(n: usize) -> Vec<u64>;
    fn filter_count(n: usize) -> usize;
    fn find_any(n: usize, target: usize) -> Option<usize>;
    fn unbalanced(n: usize) -> u64;
    fn sort_unstable(v: &mut [u32]);
    fn mandelbrot(image: &mut [u32], width: usize);
    fn slow_items(items: usize, sleep: Duration, ran: &AtomicUsize);
    /// Runs `op` on a worker of the global pool (the calling thread for the
    /// floor), as a program's code inside `install` runs: the rows named
    /// `in-pool` call their loops from there.
    fn in_pool<R: Send>(op: impl FnOnce() -> R + Send) -> R;
    fn small_sum(n: usize) -> u64;
    fn word_counts(lines: &[String]) -> HashMap<&str, u64>;
    fn filter_collect(n: usize) -> Vec<u64>;
    fn nested_sums(outer: usize, data: &[u64]) -> u64;
    fn flat_map_sums(outer: usize, data: &[u64]) -> u64;
    fn flat_map_short(n: usize) -> u64;
}

/// The parallel loops, one source expanded once per peer, with only the
/// prelude and the global pool's builder differing.
macro_rules! parallel_loops {
    ($($module:ident: $peer:ident, $krate:ident, env $env:literal, start($workers:ident) $start:block)*) => {$(
        mod $module {
            use super::{
                count_words, hash, keep, mark_seen, merge_counts, nested_item, paint_row,
                slow_item, small_item, unbalanced_item, Loops,
            };
            use std::collections::HashMap;
            use std::sync::atomic::AtomicUsize;
            use $krate::prelude::*;

            pub struct $peer;

            impl Loops for $peer {
                fn start($workers: usize) $start

                const WORKERS_ENV: Option<&'static str> = Some($env);

                fn sum_squares(data: &[u64]) -> u64 {
                    data.par_iter().map(|&x| x * x).sum()
                }

                fn map_collect(n: usize) -> Vec<u64> {
                    (0..n).into_par_iter().map(hash).collect()
                }

                fn filter_count(n: usize) -> usize {
                    (0..n).into_par_iter().filter(|&i| keep(i)).count()
                }

                fn find_any(n: usize, target: usize) -> Option<usize> {
                    (0..n).into_par_iter().find_any(|&i| {
                        mark_seen();
                        i == target
                    })
                }

                fn unbalanced(n: usize) -> u64 {
                    (0..n).into_par_iter().map(unbalanced_item).sum()
                }

                fn sort_unstable(v: &mut [u32]) {
                    v.par_sort_unstable();
                }

                fn mandelbrot(image: &mut [u32], width: usize) {
                    let height = image.len() / width;
                    image
                        .par_chunks_mut(width)
                        .enumerate()
                        .for_each(|(y, row)| paint_row(row, y, height));
                }

                fn slow_items(items: usize, sleep: std::time::Duration, ran: &AtomicUsize) {
                    (0..items).into_par_iter().for_each(|_| slow_item(sleep, ran));
                }

                fn in_pool<R: Send>(op: impl FnOnce() -> R + Send) -> R {
                    $krate::scope(|_| op())
                }

                fn small_sum(n: usize) -> u64 {
                    (0..n).into_par_iter().map(small_item).sum()
                }

                fn word_counts(lines: &[String]) -> HashMap<&str, u64> {
                    lines
                        .par_iter()
                        .fold(HashMap::new, |counts, line| count_words(counts, line))
                        .reduce(HashMap::new, merge_counts)
                }

                fn filter_collect(n: usize) -> Vec<u64> {
                    (0..n).into_par_iter().map(hash).filter(|&x| x % 3 == 0).collect()
                }

                fn nested_sums(outer: usize, data: &[u64]) -> u64 {
                    (0..outer)
                        .into_par_iter()
                        .map(|j| data.par_iter().map(|&x| nested_item(j, x)).sum::<u64>())
                        .sum()
                }

                fn flat_map_sums(outer: usize, data: &[u64]) -> u64 {
                    (0..outer)
                        .into_par_iter()
                        .flat_map(|j| data.par_iter().map(move |&x| nested_item(j, x)))
                        .sum()
                }

                fn flat_map_short(n: usize) -> u64 {
                    (0..n)
                        .into_par_iter()
                        .flat_map(|i| (0..4usize).into_par_iter().map(move |k| hash(4 * i + k) & 0xFFFF))
                        .sum()
                }
            }
        }
    )*};
}

parallel_loops! {
    on_weft: Weft, weft, env "WEFT_WORKERS", start(workers) {
        weft::Builder::new()
            .workers(workers)
            .build_global()
            .expect("weft global pool");
    }
    on_rayon: Rayon, rayon, env "RAYON_NUM_THREADS", start(workers) {
        rayon::ThreadPoolBuilder::new()
            .num_threads(workers)
            .build_global()
            .expect("rayon global pool");
    }
}

/// The floor: the same loops as plain sequential iterators.
struct Sequential;

impl Loops for Sequential {
    fn start(_workers: usize) {}

    const WORKERS_ENV: Option<&'static str> = None;

    fn sum_squares(data: &[u64]) -> u64 {
        data.iter().map(|&x| x * x).sum()
    }

    fn map_collect(n: usize) -> Vec<u64> {
        (0..n).map(hash).collect()
    }

    fn filter_count(n: usize) -> usize {
        (0..n).filter(|&i| keep(i)).count()
    }

    fn find_any(n: usize, target: usize) -> Option<usize> {
        (0..n).find(|&i| {
            mark_seen();
            i == target
        })
    }

    fn unbalanced(n: usize) -> u64 {
        (0..n).map(unbalanced_item).sum()
    }

    fn sort_unstable(v: &mut [u32]) {
        v.sort_unstable();
    }

    fn mandelbrot(image: &mut [u32], width: usize) {
        let height = image.len() / width;
        image
            .chunks_mut(width)
            .enumerate()
            .for_each(|(y, row)| paint_row(row, y, height));
    }

    fn slow_items(items: usize, sleep: Duration, ran: &AtomicUsize) {
        (0..items).for_each(|_| slow_item(sleep, ran));
    }

    fn in_pool<R: Send>(op: impl FnOnce() -> R + Send) -> R {
        op()
    }

    fn small_sum(n: usize) -> u64 {
        (0..n).map(small_item).sum()
    }

    fn word_counts(lines: &[String]) -> HashMap<&str, u64> {
        lines
            .iter()
            .fold(HashMap::new(), |counts, line| count_words(counts, line))
    }

    fn filter_collect(n: usize) -> Vec<u64> {
        (0..n).map(hash).filter(|&x| x % 3 == 0).collect()
    }

    fn nested_sums(outer: usize, data: &[u64]) -> u64 {
        (0..outer)
            .map(|j| data.iter().map(|&x| nested_item(j, x)).sum::<u64>())
            .sum()
    }

    fn flat_map_sums(outer: usize, data: &[u64]) -> u64 {
        (0..outer)
            .flat_map(|j| data.iter().map(move |&x| nested_item(j, x)))
            .sum()
    }

    fn flat_map_short(n: usize) -> u64 {
        (0..n)
            .flat_map(|i| (0..4usize).map(move |k| hash(4 * i + k) & 0xFFFF))
            .sum()
    }
}

// ------------------------------------------------------------- kernels

/// A cheap mix of the index (splitmix64's finaliser): an element the
/// compiler cannot compute in closed form over a range.
fn hash(i: usize) -> u64 {
    let mut x = (i as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// `par/filter-count`'s predicate: about a third of the indices.
fn keep(i: usize) -> bool {
    hash(i).is_multiple_of(3)
}

/// Item `i` of `par/unbalanced`: `i` units of work.
fn unbalanced_item(i: usize) -> u64 {
    u64::from(some_work(i as u32, i as u32 * UNBALANCED_UNIT))
}

/// An element of `par/small-loops`: a hash cut to 16 bits, so that no sum
/// overflows.
fn small_item(i: usize) -> u64 {
    hash(i) & 0xFFFF
}

/// An element of `par/nested`'s inner loop `j`: its own value per outer item.
fn nested_item(j: usize, x: u64) -> u64 {
    (x ^ j as u64) * x
}

/// Counts the words of `line` into `counts` (`par/word-counts`' fold).
fn count_words<'a>(mut counts: HashMap<&'a str, u64>, line: &'a str) -> HashMap<&'a str, u64> {
    for word in line.split_ascii_whitespace() {
        *counts.entry(word).or_insert(0) += 1;
    }
    counts
}

/// Adds the smaller map's counts into the larger (`par/word-counts`'
/// reduce).
fn merge_counts<'a>(a: HashMap<&'a str, u64>, b: HashMap<&'a str, u64>) -> HashMap<&'a str, u64> {
    let (mut into, from) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    for (word, n) in from {
        *into.entry(word).or_insert(0) += n;
    }
    into
}

fn slow_item(sleep: Duration, ran: &AtomicUsize) {
    std::thread::sleep(sleep);
    ran.fetch_add(1, Ordering::Relaxed);
}

/// Paints row `y` of an image `row.len()` wide and `height` high: the
/// escape time of each pixel over [-2.5, 1] x [-1.25, 1.25].
fn paint_row(row: &mut [u32], y: usize, height: usize) {
    let width = row.len();
    let cy = -1.25 + 2.5 * y as f64 / height as f64;
    for (x, pixel) in row.iter_mut().enumerate() {
        let cx = -2.5 + 3.5 * x as f64 / width as f64;
        let (mut zx, mut zy, mut n) = (0.0f64, 0.0f64, 0);
        while n < MANDEL_MAX_ITER && zx * zx + zy * zy <= 4.0 {
            let t = zx * zx - zy * zy + cx;
            zy = 2.0 * zx * zy + cy;
            zx = t;
            n += 1;
        }
        *pixel = n;
    }
}

/// One counter per thread, on a cache line of its own, that only its thread
/// writes: `par/find-any`'s predicate counts its calls without the threads
/// contending for one line.
#[repr(align(128))]
struct SeenCounter(AtomicU64);

static SEEN: Mutex<Vec<&'static SeenCounter>> = Mutex::new(Vec::new());

thread_local! {
    static MY_SEEN: &'static SeenCounter = {
        let counter: &'static SeenCounter = Box::leak(Box::new(SeenCounter(AtomicU64::new(0))));
        SEEN.lock().unwrap().push(counter);
        counter
    };
}

fn mark_seen() {
    MY_SEEN.with(|c| {
        c.0.store(c.0.load(Ordering::Relaxed) + 1, Ordering::Relaxed)
    });
}

/// Calls of the predicate so far, every thread's. Read once the loop has
/// returned: its join orders every worker's counting before this.
fn seen_total() -> u64 {
    SEEN.lock()
        .unwrap()
        .iter()
        .map(|c| c.0.load(Ordering::Relaxed))
        .sum()
}

// ---------------------------------------------------------------- rows

/// On `L`'s global pool of `workers`, from this (the main) thread: runs
/// `warm_up` once untimed (it starts the workers and touches the code),
/// then `runs` times makes an input (untimed), times `run` on
/// it and hands its output to `check` (untimed, so the output is dropped
/// untimed too). Returns the wall and CPU time of the run of median wall.
fn median_run<L: Loops, I, R>(
    workers: usize,
    runs: usize,
    warm_up: impl FnOnce(),
    mut input: impl FnMut() -> I,
    mut run: impl FnMut(I) -> R,
    mut check: impl FnMut(R),
) -> (Duration, Duration) {
    L::start(workers);
    warm_up();
    let mut times: Vec<(Duration, Duration)> = (0..runs)
        .map(|_| {
            let input = input();
            let (out, wall, cpu) = timed(|| run(input));
            check(out);
            (wall, cpu)
        })
        .collect();
    times.sort_by_key(|time| time.0);
    times[runs / 2]
}

/// [`median_run`] of one call that needs no input made per run: `call`
/// runs once untimed as the warm-up, then is timed, and every output goes
/// to `check`.
fn median_call<L: Loops, R>(
    workers: usize,
    call: impl Fn() -> R,
    check: impl Fn(R),
) -> (Duration, Duration) {
    median_run::<L, _, _>(
        workers,
        RUNS_PER_CHILD,
        || check(call()),
        || (),
        |()| call(),
        &check,
    )
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn sum_squares<L: Loops>(workers: usize, elements: usize, calls: u64) -> Measured {
    let mut rng = Rng::new(0x5eed_0501);
    // 16-bit values: no sum of 10M squares overflows a u64.
    let data: Vec<u64> = (0..elements).map(|_| rng.next_u64() & 0xFFFF).collect();
    let expected: u64 = data.iter().map(|&x| x * x).sum();
    let call_loop = || {
        (0..calls)
            .filter(|_| black_box(L::sum_squares(black_box(&data))) != expected)
            .count()
    };
    let (wall, cpu) = median_run::<L, _, _>(
        workers,
        RUNS_PER_CHILD,
        || {
            // For at least 200 ms: a freshly allocated 80 MB input runs
            // slower for its first several passes on every peer and on
            // sequential code alike (10.7 down to 8.3 ms a sequential pass
            // over ten passes on the 2-core VM), which a single warm-up
            // call leaves in the timed runs.
            let warming = std::time::Instant::now();
            while warming.elapsed() < std::time::Duration::from_millis(200) {
                call_loop();
            }
        },
        || (),
        |()| call_loop(),
        |wrong| assert_eq!(wrong, 0, "{wrong} of {calls} sums of squares were wrong"),
    );
    Measured::new(wall, cpu, ns_per(wall, calls) / 1e3)
        .with("calls", calls as f64)
        .with("elements", elements as f64)
        .with("cpu_us_per_call", ns_per(cpu, calls) / 1e3)
}

fn map_collect<L: Loops>(workers: usize, n: usize) -> Measured {
    let check = |v: Vec<u64>| {
        assert_eq!(v.len(), n, "map-collect gave {} elements", v.len());
        let wrong = v.iter().enumerate().filter(|&(i, &x)| x != hash(i)).count();
        assert_eq!(
            wrong, 0,
            "map-collect: {wrong} elements wrong or out of order"
        );
    };
    let (wall, cpu) = median_call::<L, _>(workers, || L::map_collect(n), check);
    Measured::new(wall, cpu, ms(wall))
        .with("elements", n as f64)
        .with("ns_per_element", ns_per(wall, n as u64))
}

fn filter_count<L: Loops>(workers: usize, n: usize) -> Measured {
    let expected = (0..n).filter(|&i| keep(i)).count();
    let check = |got: usize| assert_eq!(got, expected, "filter-count gave a wrong count");
    let (wall, cpu) = median_call::<L, _>(workers, || L::filter_count(n), check);
    Measured::new(wall, cpu, ms(wall))
        .with("elements", n as f64)
        .with("kept", expected as f64)
}

fn find_any<L: Loops>(workers: usize, calls: u64) -> Measured {
    let call_loop = || {
        (0..calls)
            .filter(|_| black_box(L::find_any(FIND_LEN, black_box(FIND_AT))) != Some(FIND_AT))
            .count()
    };
    let mut seen_in_runs = Vec::new();
    let seen_before = Cell::new(0);
    let (wall, cpu) = median_run::<L, _, _>(
        workers,
        RUNS_PER_CHILD,
        || {
            call_loop();
        },
        || seen_before.set(seen_total()),
        |()| call_loop(),
        |wrong| {
            assert_eq!(
                wrong, 0,
                "{wrong} of {calls} find_any calls missed the match"
            );
            seen_in_runs.push((seen_total() - seen_before.get()) as f64 / calls as f64);
        },
    );
    let seen = super::quantile(&mut seen_in_runs, 0.5);
    Measured::new(wall, cpu, ns_per(wall, calls) / 1e3)
        .with("calls", calls as f64)
        .with("seen_per_call", seen)
        .with("match_at", FIND_AT as f64)
}

fn unbalanced<L: Loops>(workers: usize, n: usize) -> Measured {
    let expected: u64 = (0..n).map(unbalanced_item).sum();
    let check = |got: u64| assert_eq!(got, expected, "unbalanced loop gave a wrong sum");
    let (wall, cpu) = median_run::<L, _, _>(
        workers,
        RUNS_PER_CHILD,
        // A quarter of the loop (a sixteenth of its work), checked too.
        || {
            let quarter = (0..n / 4).map(unbalanced_item).sum::<u64>();
            assert_eq!(
                L::unbalanced(n / 4),
                quarter,
                "unbalanced warm-up gave a wrong sum"
            );
        },
        || (),
        |()| L::unbalanced(n),
        check,
    );
    let units = n as u64 * n.saturating_sub(1) as u64 / 2;
    Measured::new(wall, cpu, ms(wall))
        .with("items", n as f64)
        .with("units", units as f64)
}

fn sort_unstable<L: Loops>(workers: usize, n: usize) -> Measured {
    let mut rng = Rng::new(0x5eed_5047);
    let data: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
    let mut sorted = data.clone();
    sorted.sort_unstable();
    let (wall, cpu) = median_run::<L, _, _>(
        workers,
        SORTS_PER_CHILD,
        || L::sort_unstable(&mut data[..n.min(1 << 16)].to_vec()),
        || data.clone(),
        |mut v| {
            L::sort_unstable(&mut v);
            v
        },
        |v| assert!(v == sorted, "par_sort_unstable gave a wrong order"),
    );
    Measured::new(wall, cpu, ms(wall))
        .with("elements", n as f64)
        .with("ns_per_element", ns_per(wall, n as u64))
}

fn mandelbrot<L: Loops>(workers: usize, width: usize) -> Measured {
    let height = width * 3 / 4;
    let mut reference = vec![0; width * height];
    Sequential::mandelbrot(&mut reference, width);
    let checksum = image_checksum(reference.iter().copied());
    let check = |image: Vec<u32>| {
        assert!(image == reference, "Mandelbrot rows: a pixel differs");
    };
    let (wall, cpu) = median_run::<L, _, _>(
        workers,
        RUNS_PER_CHILD,
        || {
            let mut image = vec![u32::MAX; width * height];
            L::mandelbrot(&mut image, width);
            check(image);
        },
        // Filled with a value no pixel takes, so every page is touched
        // untimed and an unpainted pixel shows.
        || vec![u32::MAX; width * height],
        |mut image| {
            L::mandelbrot(&mut image, width);
            image
        },
        check,
    );
    Measured::new(wall, cpu, ms(wall))
        .with("checksum", checksum as f64)
        .with("rows", height as f64)
}

fn slow_items<L: Loops>(workers: usize, items: usize, sleep: Duration) -> Measured {
    let ran = AtomicUsize::new(0);
    let check = |()| {
        let ran = ran.swap(0, Ordering::Relaxed);
        assert_eq!(ran, items, "{ran} of {items} slow items ran");
    };
    let (wall, cpu) = median_run::<L, _, _>(
        workers,
        RUNS_PER_CHILD,
        || {
            L::slow_items(items, sleep, &ran);
            check(());
        },
        || (),
        |()| L::slow_items(items, sleep, &ran),
        check,
    );
    let ideal = sleep * items.div_ceil(workers) as u32;
    Measured::new(wall, cpu, ms(wall))
        .with("ideal_ms", ms(ideal))
        .with("items", items as f64)
}

/// Which runs of a child `small_loops` times.
#[derive(Clone, Copy)]
enum Runs {
    /// The median of [`RUNS_PER_CHILD`] after a warm-up run, from one task
    /// in the pool.
    Warm,
    /// As `Warm`, from the main thread, outside the pool.
    WarmFromOutside,
    /// The process's first run alone, as a short program runs its loops:
    /// a once-per-process set-up shows there.
    FirstOnly,
}

fn small_loops<L: Loops>(workers: usize, loops: usize, items: usize, runs: Runs) -> Measured {
    let expected: u64 = (0..items).map(small_item).sum();
    let sums = || {
        (0..loops)
            .filter(|_| black_box(L::small_sum(black_box(items))) != expected)
            .count()
    };
    let run = || match runs {
        Runs::WarmFromOutside => sums(),
        Runs::Warm | Runs::FirstOnly => L::in_pool(sums),
    };
    let (timed_runs, warm_up) = match runs {
        Runs::Warm | Runs::WarmFromOutside => (RUNS_PER_CHILD, true),
        Runs::FirstOnly => (1, false),
    };
    let (wall, cpu) = median_run::<L, _, _>(
        workers,
        timed_runs,
        || {
            if warm_up {
                run();
            }
        },
        || (),
        |()| run(),
        |wrong| assert_eq!(wrong, 0, "{wrong} of {loops} small loops gave a wrong sum"),
    );
    Measured::new(wall, cpu, ns_per(wall, loops as u64) / 1e3)
        .with("loops", loops as f64)
        .with("items_per_loop", items as f64)
        .with("cpu_us_per_loop", ns_per(cpu, loops as u64) / 1e3)
}

/// A process's first `loops` small loops, called from the main thread
/// before anything built the peer's global pool: the first builds it, with
/// `workers` threads through the peer's environment variable.
fn first_loops<L: Loops>(workers: usize, loops: usize) -> Measured {
    if let Some(variable) = L::WORKERS_ENV {
        // The child has no other thread yet (child.rs runs the case first).
        std::env::set_var(variable, workers.to_string());
    }
    let items = 1_000;
    let expected: u64 = (0..items).map(small_item).sum();
    let faults = crate::rusage::process_minor_faults();
    let (wrong, wall, cpu) = timed(|| {
        (0..loops)
            .filter(|_| black_box(L::small_sum(black_box(items))) != expected)
            .count()
    });
    let faults = crate::rusage::process_minor_faults() - faults;
    assert_eq!(wrong, 0, "{wrong} of {loops} first loops gave a wrong sum");
    Measured::new(wall, cpu, wall.as_secs_f64() * 1e6)
        .with("loops", loops as f64)
        .with("page_faults", faults as f64)
}

/// `lines` lines of ten words drawn from a fixed vocabulary.
fn word_lines(lines: usize) -> Vec<String> {
    let mut rng = Rng::new(0x5eed_3007);
    let vocabulary: Vec<String> = (0..5_000)
        .map(|_| {
            let len = 3 + (rng.next_u64() % 7) as usize;
            (0..len)
                .map(|_| char::from(b'a' + (rng.next_u64() % 26) as u8))
                .collect()
        })
        .collect();
    (0..lines)
        .map(|_| {
            let words: Vec<&str> = (0..10)
                .map(|_| vocabulary[(rng.next_u64() % 5_000) as usize].as_str())
                .collect();
            words.join(" ")
        })
        .collect()
}

fn word_counts<L: Loops>(workers: usize, lines: usize) -> Measured {
    let text = word_lines(lines);
    let expected = Sequential::word_counts(&text);
    let check = |counts: HashMap<&str, u64>| {
        assert!(counts == expected, "word-counts: a count differs");
    };
    let (wall, cpu) = median_run::<L, _, _>(
        workers,
        RUNS_PER_CHILD,
        || check(L::in_pool(|| L::word_counts(&text))),
        || (),
        |()| {
            let counts = L::in_pool(|| L::word_counts(&text));
            let distinct = counts.len();
            drop(counts);
            distinct
        },
        |distinct| assert_eq!(distinct, expected.len(), "word-counts: words missing"),
    );
    Measured::new(wall, cpu, ms(wall))
        .with("lines", lines as f64)
        .with("distinct_words", expected.len() as f64)
}

fn filter_collect<L: Loops>(workers: usize, n: usize) -> Measured {
    let expected = Sequential::filter_collect(n);
    let check = |v: Vec<u64>| assert!(v == expected, "filter-collect: output differs");
    let (wall, cpu) = median_call::<L, _>(workers, || L::in_pool(|| L::filter_collect(n)), check);
    Measured::new(wall, cpu, ms(wall))
        .with("elements", n as f64)
        .with("kept", expected.len() as f64)
}

fn nested<L: Loops>(workers: usize, outer: usize) -> Measured {
    outer_over_data::<L>(
        workers,
        outer,
        "nested",
        L::nested_sums,
        Sequential::nested_sums,
    )
}

fn flat_map_long<L: Loops>(workers: usize, outer: usize) -> Measured {
    outer_over_data::<L>(
        workers,
        outer,
        "flat-map few long",
        L::flat_map_sums,
        Sequential::flat_map_sums,
    )
}

/// A row of `outer` items, each a loop over the same 100,000 u64 (800 KB),
/// called inside the pool (`par/nested`, `par/flat-map few long`): `sums`
/// is the peer's loop, `floor` the sequential one whose answer it must give.
fn outer_over_data<L: Loops>(
    workers: usize,
    outer: usize,
    row: &str,
    sums: fn(usize, &[u64]) -> u64,
    floor: fn(usize, &[u64]) -> u64,
) -> Measured {
    let mut rng = Rng::new(0x5eed_0e57);
    let data: Vec<u64> = (0..100_000).map(|_| rng.next_u64() & 0xFFFF).collect();
    let expected = floor(outer, &data);
    let check = |got: u64| assert_eq!(got, expected, "{row}: wrong sum");
    let (wall, cpu) = median_call::<L, _>(workers, || L::in_pool(|| sums(outer, &data)), check);
    Measured::new(wall, cpu, ms(wall))
        .with("outer", outer as f64)
        .with("inner", data.len() as f64)
}

fn flat_map_short<L: Loops>(workers: usize, n: usize) -> Measured {
    let expected = Sequential::flat_map_short(n);
    let check = |got: u64| assert_eq!(got, expected, "flat-map many short: wrong sum");
    let (wall, cpu) = median_call::<L, _>(workers, || L::in_pool(|| L::flat_map_short(n)), check);
    Measured::new(wall, cpu, ms(wall)).with("outer", n as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios::catalogue;

    /// Every row runs its check on the floor's own code: the kernels and
    /// checks agree with themselves at a small size.
    #[test]
    fn the_floor_passes_every_check() {
        for case in catalogue()
            .iter()
            .filter(|c| c.scenario.starts_with("par/"))
        {
            let size = case.sizes[0];
            if case.scenario == "par/slow-items" {
                continue; // 80 ms of sleeping, checked by the smoke run
            }
            let m = (case.run)(SchedKind::Std, 2, size);
            assert!(m.figure > 0.0, "{}: no figure", case.name());
        }
    }

    /// Only the peers `on_peer!` knows may fit: any other would reach its
    /// `unreachable!`.
    #[test]
    fn only_known_peers_fit() {
        for case in catalogue()
            .iter()
            .filter(|c| c.scenario.starts_with("par/"))
        {
            for &kind in SchedKind::ALL {
                let fits = matches!(case.fit(kind, 2), Fit::Yes(_));
                let known = matches!(
                    kind,
                    SchedKind::Weft | SchedKind::Rayon | SchedKind::RayonOnWeft | SchedKind::Std
                );
                assert_eq!(fits, known, "{} on {}", case.name(), kind.name());
            }
        }
    }

    #[test]
    fn the_mandelbrot_image_is_not_flat() {
        let (width, height) = (32, 24);
        let mut image = vec![0; width * height];
        Sequential::mandelbrot(&mut image, width);
        assert!(image.contains(&MANDEL_MAX_ITER), "no pixel inside the set");
        assert!(image.iter().any(|&n| n < 4), "no pixel escapes at once");
    }
}
