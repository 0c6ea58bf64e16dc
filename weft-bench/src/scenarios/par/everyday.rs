//! Everyday loop shapes beside the family's first rows: a stencil's sweeps
//! over rows, `position_any` and `any` with an early match, a sort of
//! records by key, matrix rows by `par_chunks_mut`, a byte histogram by
//! `par_chunks`, text by `par_lines` and `par_split_whitespace`, a chain of
//! indexed adapters, a `map` + `reduce` into a small struct, and loops in
//! tasks that wait between them (`par/suspending`). Every loop is called
//! from the main thread, outside the pool, as a program calls one, and is
//! written once for weft and rayon ([`everyday_loops!`], the family's
//! one-source rule) with a sequential floor ([`Sequential`]).

use std::hint::black_box;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::{
    hash, median_call, median_run, ms, on_rayon, on_weft, Loops, Sequential, PAR, RUNS_PER_CHILD,
};
use crate::scenarios::{ns_per, Case, Measured};
use crate::scheds::SchedKind;
use crate::work::Rng;

/// Sweeps of the stencil a call makes.
const STENCIL_SWEEPS: usize = 20;
/// Where `par/position-any`'s only match is, and the length of its range.
const EARLY_MATCH_AT: usize = 1_000;
const EARLY_RANGE: usize = 50_000_000;
/// Bytes of `par/histogram` a `par_chunks` chunk holds.
const HISTOGRAM_CHUNK: usize = 64 * 1024;
/// Numbers on each line of `par/strings lines`.
const NUMBERS_PER_LINE: usize = 8;
/// `par/suspending`: each task's loops, the wait after each, and the
/// length of the data each loop sums.
const SUSPENDING_ROUNDS: usize = 4;
const SUSPENDING_WAIT: Duration = Duration::from_micros(200);
const SUSPENDING_DATA: usize = 100_000;

pub(super) fn cases() -> Vec<Case> {
    let stencil = Case {
        scenario: "par/stencil",
        variant: "",
        about: "a size x size grid of f32 in rows (Vec<Vec<f32>>), 20 sweeps of next.par_iter_mut().enumerate().for_each(|(i, row)| each cell the mean of itself and its four neighbours in the previous grid), the two grids swapped between sweeps; from the main thread; timed: the 20 sweeps (grids made untimed), median of 5 per child; the grid checked against the sequential sweeps, bit for bit",
        unit: "ms",
        higher_is_better: false,
        sizes: [64, 2_000, 2_000],
        needs: PAR,
        run: |kind, workers, side| on_peer!(kind, stencil(workers, side as usize)),
    };
    let position_any = Case {
        scenario: "par/position-any",
        variant: "position_any",
        about: "(0..50M).into_par_iter().position_any(|i| hash(i) == hash(1_000)): the only match at 1,000 of 50M, called size times in a loop from the main thread; timed: the whole loop, median of 5 loops per child; every answer checked",
        unit: "us/call",
        higher_is_better: false,
        sizes: [5, 1_000, 2_000],
        needs: PAR,
        run: |kind, workers, calls| on_peer!(kind, early_match(workers, calls, Early::Position)),
    };
    let sort_by_key = Case {
        scenario: "par/sort-by-key",
        variant: "",
        about: "records.par_sort_unstable_by_key(|r| r.key) of size 24-byte records (a u64 key, distinct, pseudo-random with a fixed seed, and two u64 of payload), from the main thread; timed: the sort alone (each run sorts a fresh clone made untimed), median of 3 per child; every output checked against a sequential sort",
        unit: "ms",
        higher_is_better: false,
        sizes: [10_000, 5_000_000, 5_000_000],
        needs: PAR,
        run: |kind, workers, n| on_peer!(kind, sort_by_key(workers, n as usize)),
    };
    vec![
        stencil,
        position_any,
        Case {
            variant: "any",
            about: "(0..50M).into_par_iter().any(|i| hash(i) == hash(1_000)), as the position_any row",
            run: |kind, workers, calls| on_peer!(kind, early_match(workers, calls, Early::Any)),
            ..position_any
        },
        sort_by_key,
        Case {
            scenario: "par/matmul",
            about: "c = a x b for size x size f64 matrices, c's rows by c.par_chunks_mut(size).enumerate().for_each(|(i, row)| row i of the product, in i-k-j order), from the main thread; timed: the call (c zeroed untimed), median of 5 per child; c checked against the sequential product, bit for bit",
            sizes: [32, 384, 512],
            run: |kind, workers, n| on_peer!(kind, matmul(workers, n as usize)),
            ..sort_by_key
        },
        Case {
            scenario: "par/histogram",
            about: "bytes.par_chunks(64 KiB).map(|chunk| its 256 counts).reduce(zeros, add) over size MiB of skewed pseudo-random bytes (fixed seed), from the main thread; timed: the call, median of 5 per child; the counts checked against a sequential count",
            sizes: [1, 64, 64],
            run: |kind, workers, mib| on_peer!(kind, histogram(workers, mib as usize)),
            ..sort_by_key
        },
        Case {
            scenario: "par/strings",
            variant: "lines",
            about: "text.par_lines().map(|line| the sum of its 8 comma-separated numbers, each parsed as u64).sum() over size lines (about 60 bytes each, fixed seed), from the main thread; timed: the call, median of 5 per child; the sum checked against the sequential one",
            sizes: [1_000, 500_000, 1_000_000],
            run: |kind, workers, lines| on_peer!(kind, line_sums(workers, lines as usize)),
            ..sort_by_key
        },
        Case {
            scenario: "par/strings",
            variant: "words",
            about: "text.par_split_whitespace().filter(|w| w.len() >= 6).count() over size lines of 10 words each (the word-counts row's text, joined by newlines), from the main thread; timed: the call, median of 5 per child; the count checked against the sequential one",
            sizes: [1_000, 400_000, 800_000],
            run: |kind, workers, lines| on_peer!(kind, long_words(workers, lines as usize)),
            ..sort_by_key
        },
        Case {
            scenario: "par/chained",
            about: "a.par_iter().zip(&b).enumerate().skip(3).step_by(2).map(..).filter(..).map(..).sum::<u64>() over two slices of size u32: a chain of indexed adapters, then unindexed ones, from the main thread; timed: the call, median of 5 per child; the sum checked against the sequential one",
            sizes: [10_000, 5_000_000, 5_000_000],
            run: |kind, workers, n| on_peer!(kind, chained(workers, n as usize)),
            ..sort_by_key
        },
        Case {
            scenario: "par/suspending",
            about: "size tasks spawned in a scope from the main thread, each 4 rounds of data.par_iter().map(|&x| (x ^ task) * x).sum() over 100,000 u64, then a wait of 200 us for a gate that another thread opens (a reply from outside the pool); on weft the wait is an Event's, which suspends the task and frees its worker, on rayon a Mutex and Condvar's, which blocks it (rayon has no other); timed: the scope, median of 5 per child; every task's sums checked",
            sizes: [2, 16, 16],
            run: |kind, workers, tasks| on_peer!(kind, suspending(workers, tasks as usize)),
            ..sort_by_key
        },
        Case {
            scenario: "par/map-reduce",
            about: "(0..n).into_par_iter().map(|i| the spread of hash(i)).reduce(empty, merge): a 32-byte value (min, max, wrapping sum, count) built per item and merged (n = size), from the main thread; timed: the call, median of 5 per child; the spread checked against the sequential one",
            sizes: [10_000, 10_000_000, 10_000_000],
            run: |kind, workers, n| on_peer!(kind, map_reduce(workers, n as usize)),
            ..sort_by_key
        },
    ]
}

/// The family's everyday shapes, one method a loop.
pub(super) trait Everyday: Loops {
    /// One sweep: every row of `next` from the rows of `prev` around it.
    fn stencil_sweep(next: &mut [Vec<f32>], prev: &[Vec<f32>]);
    fn position_any(n: usize, target: u64) -> Option<usize>;
    fn any(n: usize, target: u64) -> bool;
    fn sort_by_key(records: &mut [Record]);
    /// `c = a x b`, `n x n`, `c` zeroed.
    fn matmul(c: &mut [f64], a: &[f64], b: &[f64], n: usize);
    fn histogram(bytes: &[u8]) -> Vec<u64>;
    fn line_sums(text: &str) -> u64;
    fn long_words(text: &str) -> usize;
    fn chained(a: &[u32], b: &[u32]) -> u64;
    fn map_reduce(n: usize) -> Spread;
    /// `tasks` tasks, each [`SUSPENDING_ROUNDS`] loops over `data`, each
    /// loop followed by a wait for a gate that `replies` opens; the sum of
    /// every task's loops.
    fn suspending(tasks: usize, data: &[u64], replies: &Replies) -> u64;
}

/// What a task of `par/suspending` waits on between its loops: opened once,
/// from a thread outside the pool ([`Replies`]).
pub(super) trait Gate: Send + Sync + 'static {
    fn closed() -> Self;
    fn open(&self);
    fn wait(&self);
}

/// weft's gate: an event, whose wait suspends a task and frees its worker.
pub(super) struct SuspendingGate(weft::Event);

impl Gate for SuspendingGate {
    fn closed() -> Self {
        SuspendingGate(weft::Event::new(weft::EventMode::Manual))
    }
    fn open(&self) {
        self.0.signal();
    }
    fn wait(&self) {
        self.0.wait();
    }
}

/// The gate of a pool with no waits of its own (rayon's, the floor's): a
/// mutex and condition variable, whose wait blocks the thread.
pub(super) struct BlockingGate {
    open: Mutex<bool>,
    opened: Condvar,
}

impl Gate for BlockingGate {
    fn closed() -> Self {
        BlockingGate {
            open: Mutex::new(false),
            opened: Condvar::new(),
        }
    }
    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.opened.notify_all();
    }
    fn wait(&self) {
        let open = self.open.lock().unwrap();
        drop(self.opened.wait_while(open, |open| !*open).unwrap());
    }
}

/// A gate's opening, and when it is due.
type Reply = (Instant, Box<dyn FnOnce() + Send>);

/// A thread outside the pool that opens each gate [`SUSPENDING_WAIT`] after
/// it was handed over, in the order handed (a reply to a request, as from
/// a server or a disk).
pub(super) struct Replies {
    requests: Option<mpsc::Sender<Reply>>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Replies {
    fn start() -> Replies {
        let (requests, incoming) = mpsc::channel::<Reply>();
        let thread = thread::spawn(move || {
            for (due, open) in incoming {
                let now = Instant::now();
                if due > now {
                    thread::sleep(due - now);
                }
                open();
            }
        });
        Replies {
            requests: Some(requests),
            thread: Some(thread),
        }
    }

    /// Opens `gate` after [`SUSPENDING_WAIT`].
    pub(super) fn open_later<G: Gate>(&self, gate: &Arc<G>) {
        let gate = Arc::clone(gate);
        let due = Instant::now() + SUSPENDING_WAIT;
        self.requests
            .as_ref()
            .expect("replies running")
            .send((due, Box::new(move || gate.open())))
            .expect("the replies thread ended");
    }
}

impl Drop for Replies {
    fn drop(&mut self) {
        drop(self.requests.take());
        if let Some(thread) = self.thread.take() {
            thread.join().expect("the replies thread panicked");
        }
    }
}

/// One task of `par/suspending`, for any peer: its loops through `sum`, a
/// wait on a fresh `G` after each.
fn suspending_task<G: Gate>(replies: &Replies, mut sum: impl FnMut() -> u64) -> u64 {
    let mut total = 0u64;
    for _ in 0..SUSPENDING_ROUNDS {
        total = total.wrapping_add(sum());
        let gate = Arc::new(G::closed());
        replies.open_later(&gate);
        gate.wait();
    }
    total
}

/// `par/sort-by-key`'s element: 24 bytes, sorted by `key`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Record {
    key: u64,
    payload: [u64; 2],
}

/// `par/map-reduce`'s value: what a reduction over many items keeps.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Spread {
    min: u64,
    max: u64,
    sum: u64,
    count: u64,
}

impl Spread {
    fn empty() -> Spread {
        Spread {
            min: u64::MAX,
            max: 0,
            sum: 0,
            count: 0,
        }
    }

    fn of(x: u64) -> Spread {
        Spread {
            min: x,
            max: x,
            sum: x,
            count: 1,
        }
    }

    fn merge(a: Spread, b: Spread) -> Spread {
        Spread {
            min: a.min.min(b.min),
            max: a.max.max(b.max),
            sum: a.sum.wrapping_add(b.sum),
            count: a.count + b.count,
        }
    }
}

macro_rules! everyday_loops {
    ($($module:ident: $peer:ty, $krate:ident, $gate:ty;)*) => {$(
        mod $module {
            use super::{
                add_counts, byte_counts, chained_item, line_sum, product_row, stencil_row,
                suspending_task, Everyday, Record, Replies, Spread, HISTOGRAM_CHUNK,
            };
            use std::sync::atomic::{AtomicU64, Ordering};
            use crate::scenarios::par::hash;
            use $krate::prelude::*;

            impl Everyday for $peer {
                fn stencil_sweep(next: &mut [Vec<f32>], prev: &[Vec<f32>]) {
                    next.par_iter_mut()
                        .enumerate()
                        .for_each(|(i, row)| stencil_row(row, prev, i));
                }

                fn position_any(n: usize, target: u64) -> Option<usize> {
                    (0..n).into_par_iter().position_any(|i| hash(i) == target)
                }

                fn any(n: usize, target: u64) -> bool {
                    (0..n).into_par_iter().any(|i| hash(i) == target)
                }

                fn sort_by_key(records: &mut [Record]) {
                    records.par_sort_unstable_by_key(|r| r.key);
                }

                fn matmul(c: &mut [f64], a: &[f64], b: &[f64], n: usize) {
                    c.par_chunks_mut(n)
                        .enumerate()
                        .for_each(|(i, row)| product_row(row, i, a, b));
                }

                fn histogram(bytes: &[u8]) -> Vec<u64> {
                    bytes
                        .par_chunks(HISTOGRAM_CHUNK)
                        .map(byte_counts)
                        .reduce(|| vec![0; 256], add_counts)
                }

                fn line_sums(text: &str) -> u64 {
                    text.par_lines().map(line_sum).sum()
                }

                fn long_words(text: &str) -> usize {
                    text.par_split_whitespace().filter(|w| w.len() >= 6).count()
                }

                fn chained(a: &[u32], b: &[u32]) -> u64 {
                    a.par_iter()
                        .zip(b)
                        .enumerate()
                        .skip(3)
                        .step_by(2)
                        .map(chained_item)
                        .filter(|v| v % 5 != 0)
                        .map(|v| v & 0xFFFF)
                        .sum()
                }

                fn map_reduce(n: usize) -> Spread {
                    (0..n)
                        .into_par_iter()
                        .map(|i| Spread::of(hash(i)))
                        .reduce(Spread::empty, Spread::merge)
                }

                fn suspending(tasks: usize, data: &[u64], replies: &Replies) -> u64 {
                    let total = AtomicU64::new(0);
                    $krate::scope(|s| {
                        for task in 0..tasks as u64 {
                            let total = &total;
                            s.spawn(move |_| {
                                let sums = suspending_task::<$gate>(replies, || {
                                    data.par_iter().map(|&x| (x ^ task) * x).sum::<u64>()
                                });
                                total.fetch_add(sums, Ordering::Relaxed);
                            });
                        }
                    });
                    total.into_inner()
                }
            }
        }
    )*};
}

everyday_loops! {
    everyday_on_weft: crate::scenarios::par::on_weft::Weft, weft, super::SuspendingGate;
    everyday_on_rayon: crate::scenarios::par::on_rayon::Rayon, rayon, super::BlockingGate;
}

impl Everyday for Sequential {
    fn stencil_sweep(next: &mut [Vec<f32>], prev: &[Vec<f32>]) {
        next.iter_mut()
            .enumerate()
            .for_each(|(i, row)| stencil_row(row, prev, i));
    }

    fn position_any(n: usize, target: u64) -> Option<usize> {
        (0..n).position(|i| hash(i) == target)
    }

    fn any(n: usize, target: u64) -> bool {
        (0..n).any(|i| hash(i) == target)
    }

    fn sort_by_key(records: &mut [Record]) {
        records.sort_unstable_by_key(|r| r.key);
    }

    fn matmul(c: &mut [f64], a: &[f64], b: &[f64], n: usize) {
        c.chunks_mut(n)
            .enumerate()
            .for_each(|(i, row)| product_row(row, i, a, b));
    }

    fn histogram(bytes: &[u8]) -> Vec<u64> {
        bytes
            .chunks(HISTOGRAM_CHUNK)
            .map(byte_counts)
            .fold(vec![0; 256], add_counts)
    }

    fn line_sums(text: &str) -> u64 {
        text.lines().map(line_sum).sum()
    }

    fn long_words(text: &str) -> usize {
        text.split_whitespace().filter(|w| w.len() >= 6).count()
    }

    fn chained(a: &[u32], b: &[u32]) -> u64 {
        a.iter()
            .zip(b)
            .enumerate()
            .skip(3)
            .step_by(2)
            .map(chained_item)
            .filter(|v| v % 5 != 0)
            .map(|v| v & 0xFFFF)
            .sum()
    }

    fn map_reduce(n: usize) -> Spread {
        (0..n)
            .map(|i| Spread::of(hash(i)))
            .fold(Spread::empty(), Spread::merge)
    }

    fn suspending(tasks: usize, data: &[u64], replies: &Replies) -> u64 {
        (0..tasks as u64)
            .map(|task| {
                suspending_task::<BlockingGate>(replies, || {
                    data.iter().map(|&x| (x ^ task) * x).sum::<u64>()
                })
            })
            .fold(0u64, u64::wrapping_add)
    }
}

// ------------------------------------------------------------- kernels

/// Row `i` of a sweep: border rows and columns copied, every inner cell the
/// mean of itself and its four neighbours in `prev`.
fn stencil_row(row: &mut [f32], prev: &[Vec<f32>], i: usize) {
    let here = &prev[i];
    if i == 0 || i + 1 == prev.len() {
        row.copy_from_slice(here);
        return;
    }
    let (up, down) = (&prev[i - 1], &prev[i + 1]);
    let last = row.len() - 1;
    row[0] = here[0];
    row[last] = here[last];
    for j in 1..last {
        row[j] = 0.2 * (here[j] + here[j - 1] + here[j + 1] + up[j] + down[j]);
    }
}

/// Row `i` of `a x b` into `row` (zeroed), in i-k-j order: the inner loop
/// runs along rows of `b` and `row`, which the compiler vectorises.
fn product_row(row: &mut [f64], i: usize, a: &[f64], b: &[f64]) {
    let n = row.len();
    for (k, &aik) in a[i * n..(i + 1) * n].iter().enumerate() {
        for (cij, &bkj) in row.iter_mut().zip(&b[k * n..(k + 1) * n]) {
            *cij += aik * bkj;
        }
    }
}

/// The 256 counts of one chunk's bytes.
fn byte_counts(chunk: &[u8]) -> Vec<u64> {
    let mut counts = vec![0; 256];
    for &byte in chunk {
        counts[usize::from(byte)] += 1;
    }
    counts
}

fn add_counts(mut into: Vec<u64>, from: Vec<u64>) -> Vec<u64> {
    for (a, b) in into.iter_mut().zip(from) {
        *a += b;
    }
    into
}

/// The sum of a line's comma-separated numbers.
fn line_sum(line: &str) -> u64 {
    line.split(',')
        .map(|field| field.parse::<u64>().expect("a number"))
        .sum()
}

/// An item of `par/chained` after `enumerate`.
fn chained_item((i, (&x, &y)): (usize, (&u32, &u32))) -> u64 {
    u64::from(x) * u64::from(y) + i as u64
}

// ---------------------------------------------------------------- rows

fn stencil<L: Everyday>(workers: usize, side: usize) -> Measured {
    let mut rng = Rng::new(0x5eed_57e2);
    let start: Vec<Vec<f32>> = (0..side)
        .map(|_| (0..side).map(|_| (rng.next_u64() % 1_000) as f32).collect())
        .collect();
    let sweeps = |sweep: fn(&mut [Vec<f32>], &[Vec<f32>]),
                  (mut grid, mut spare): (Vec<Vec<f32>>, Vec<Vec<f32>>)| {
        for _ in 0..STENCIL_SWEEPS {
            sweep(&mut spare, &grid);
            std::mem::swap(&mut grid, &mut spare);
        }
        grid
    };
    let expected = sweeps(Sequential::stencil_sweep, (start.clone(), start.clone()));
    let check = |grid: Vec<Vec<f32>>| assert!(grid == expected, "stencil: a cell differs");
    let (wall, cpu) = median_run::<L, _, _>(
        workers,
        RUNS_PER_CHILD,
        || check(sweeps(L::stencil_sweep, (start.clone(), start.clone()))),
        || (start.clone(), start.clone()),
        |grids| sweeps(L::stencil_sweep, grids),
        check,
    );
    Measured::new(wall, cpu, ms(wall))
        .with("side", side as f64)
        .with("sweeps", STENCIL_SWEEPS as f64)
}

/// Which early-exit consumer `par/position-any` calls.
#[derive(Clone, Copy)]
enum Early {
    Position,
    Any,
}

fn early_match<L: Everyday>(workers: usize, calls: u64, early: Early) -> Measured {
    let target = hash(EARLY_MATCH_AT);
    assert_eq!(
        Sequential::position_any(EARLY_RANGE, target),
        Some(EARLY_MATCH_AT),
        "the match is not the only one before it"
    );
    let call = || match early {
        Early::Position => L::position_any(EARLY_RANGE, black_box(target)) == Some(EARLY_MATCH_AT),
        Early::Any => L::any(EARLY_RANGE, black_box(target)),
    };
    let call_loop = || (0..calls).filter(|_| !black_box(call())).count();
    let (wall, cpu) = median_run::<L, _, _>(
        workers,
        RUNS_PER_CHILD,
        || {
            call_loop();
        },
        || (),
        |()| call_loop(),
        |wrong| assert_eq!(wrong, 0, "{wrong} of {calls} calls missed the match"),
    );
    Measured::new(wall, cpu, ns_per(wall, calls) / 1e3)
        .with("calls", calls as f64)
        .with("match_at", EARLY_MATCH_AT as f64)
}

fn sort_by_key<L: Everyday>(workers: usize, n: usize) -> Measured {
    let mut rng = Rng::new(0x5eed_50b7);
    let data: Vec<Record> = (0..n)
        .map(|_| Record {
            key: rng.next_u64(),
            payload: [rng.next_u64(), rng.next_u64()],
        })
        .collect();
    let mut sorted = data.clone();
    Sequential::sort_by_key(&mut sorted);
    // Distinct keys: an unstable sort then has one right answer.
    assert!(
        sorted.windows(2).all(|w| w[0].key < w[1].key),
        "sort-by-key: two records drew the same key"
    );
    let (wall, cpu) = median_run::<L, _, _>(
        workers,
        super::SORTS_PER_CHILD,
        || L::sort_by_key(&mut data[..n.min(1 << 16)].to_vec()),
        || data.clone(),
        |mut v| {
            L::sort_by_key(&mut v);
            v
        },
        |v| assert!(v == sorted, "par_sort_unstable_by_key gave a wrong order"),
    );
    Measured::new(wall, cpu, ms(wall))
        .with("elements", n as f64)
        .with("ns_per_element", ns_per(wall, n as u64))
}

fn matmul<L: Everyday>(workers: usize, n: usize) -> Measured {
    let mut rng = Rng::new(0x5eed_3a73);
    let mut matrix = || -> Vec<f64> {
        (0..n * n)
            .map(|_| (rng.next_u64() % 100) as f64 / 10.0)
            .collect()
    };
    let (a, b) = (matrix(), matrix());
    let mut expected = vec![0.0; n * n];
    Sequential::matmul(&mut expected, &a, &b, n);
    let check = |c: Vec<f64>| assert!(c == expected, "matmul: an element differs");
    let (wall, cpu) = median_run::<L, _, _>(
        workers,
        RUNS_PER_CHILD,
        || {
            let mut c = vec![0.0; n * n];
            L::matmul(&mut c, &a, &b, n);
            check(c);
        },
        || vec![0.0; n * n],
        |mut c| {
            L::matmul(&mut c, &a, &b, n);
            c
        },
        check,
    );
    let flops = 2.0 * (n as f64).powi(3);
    Measured::new(wall, cpu, ms(wall))
        .with("side", n as f64)
        .with("gflops", flops / wall.as_secs_f64() / 1e9)
}

fn histogram<L: Everyday>(workers: usize, mib: usize) -> Measured {
    let mut rng = Rng::new(0x5eed_4157);
    // Skewed: the low values far more often than the high, as text and
    // most binary data are.
    let bytes: Vec<u8> = (0..mib << 20)
        .map(|_| {
            let x = rng.next_u64();
            ((x & 0xFF) & (x >> 8 & 0xFF)) as u8
        })
        .collect();
    let expected = Sequential::histogram(&bytes);
    let check = |counts: Vec<u64>| assert!(counts == expected, "histogram: a count differs");
    let (wall, cpu) = median_call::<L, _>(workers, || L::histogram(&bytes), check);
    Measured::new(wall, cpu, ms(wall)).with("bytes", bytes.len() as f64)
}

fn line_sums<L: Everyday>(workers: usize, lines: usize) -> Measured {
    let mut rng = Rng::new(0x5eed_c5f1);
    let text: String = (0..lines)
        .map(|_| {
            let fields: Vec<String> = (0..NUMBERS_PER_LINE)
                .map(|_| (rng.next_u64() % 10_000_000).to_string())
                .collect();
            fields.join(",") + "\n"
        })
        .collect();
    let expected = Sequential::line_sums(&text);
    let check = |sum: u64| assert_eq!(sum, expected, "strings lines: wrong sum");
    let (wall, cpu) = median_call::<L, _>(workers, || L::line_sums(&text), check);
    Measured::new(wall, cpu, ms(wall))
        .with("lines", lines as f64)
        .with("bytes", text.len() as f64)
}

fn long_words<L: Everyday>(workers: usize, lines: usize) -> Measured {
    let text = super::word_lines(lines).join("\n");
    let expected = Sequential::long_words(&text);
    let check = |count: usize| assert_eq!(count, expected, "strings words: wrong count");
    let (wall, cpu) = median_call::<L, _>(workers, || L::long_words(&text), check);
    Measured::new(wall, cpu, ms(wall))
        .with("bytes", text.len() as f64)
        .with("long_words", expected as f64)
}

fn chained<L: Everyday>(workers: usize, n: usize) -> Measured {
    let mut rng = Rng::new(0x5eed_c4a1);
    let a: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
    let b: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
    let expected = Sequential::chained(&a, &b);
    let check = |sum: u64| assert_eq!(sum, expected, "chained: wrong sum");
    let (wall, cpu) = median_call::<L, _>(workers, || L::chained(&a, &b), check);
    Measured::new(wall, cpu, ms(wall)).with("elements", n as f64)
}

fn map_reduce<L: Everyday>(workers: usize, n: usize) -> Measured {
    let expected = Sequential::map_reduce(n);
    let check = |spread: Spread| assert_eq!(spread, expected, "map-reduce: wrong spread");
    let (wall, cpu) = median_call::<L, _>(workers, || L::map_reduce(n), check);
    Measured::new(wall, cpu, ms(wall)).with("elements", n as f64)
}

fn suspending<L: Everyday>(workers: usize, tasks: usize) -> Measured {
    let mut rng = Rng::new(0x5eed_5a5b);
    let data: Vec<u64> = (0..SUSPENDING_DATA)
        .map(|_| rng.next_u64() & 0xFFFF)
        .collect();
    let expected = (0..tasks as u64)
        .map(|task| {
            let sum = data.iter().map(|&x| (x ^ task) * x).sum::<u64>();
            (0..SUSPENDING_ROUNDS).fold(0u64, |total, _| total.wrapping_add(sum))
        })
        .fold(0u64, u64::wrapping_add);
    let replies = Replies::start();
    let check = |sum: u64| assert_eq!(sum, expected, "suspending: wrong sum");
    let (wall, cpu) = median_call::<L, _>(workers, || L::suspending(tasks, &data, &replies), check);
    Measured::new(wall, cpu, ms(wall))
        .with("tasks", tasks as f64)
        .with("waits", (tasks * SUSPENDING_ROUNDS) as f64)
}
