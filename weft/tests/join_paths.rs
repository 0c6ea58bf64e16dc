//! The paths a `join`'s second half can take, and what each must guarantee.
//!
//! `join(a, b)` leaves `b` on the worker's join stack. From there it is
//! popped back by its owner and run inline, shared onto the owner's local
//! queue at the owner's next `join` when an idle worker asks, stolen by force
//! when the owner does not join again, run by a wait of the owner's (newest
//! first), or taken with every other half before its task suspends. These
//! tests drive each path and check behaviour only: overlap (a long first half
//! never holds its second half back), progress on one worker, nesting a
//! thousand joins deep, exactly-once under many more workers than cores,
//! panics, `join_context`'s `migrated`, and the steal counters.
//!
//! Nothing here asserts a duration. Where a test needs something to happen,
//! it waits for the condition up to a generous deadline and asserts the
//! condition, so a slow, loaded machine only makes the tests slower.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

mod common;

use common::eventually;

use weft::{Event, EventMode, Pool, WaitGroup};

/// How long a test waits for something that should happen promptly.
const DEADLINE: Duration = Duration::from_secs(30);

fn pool(workers: usize) -> Pool {
    Pool::builder().workers(workers).build().expect("pool")
}

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = weft::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

fn fib_serial(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib_serial(n - 1) + fib_serial(n - 2)
    }
}

fn total_stolen(pool: &Pool) -> u64 {
    pool.stats().workers.iter().map(|w| w.tasks_stolen).sum()
}

fn payload_str(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<non-string payload>".to_string()
    }
}

// ---------------------------------------------------------------------------
// 1. No serialization: a second half runs while its first half still runs.

/// `a` keeps joining while it waits: the owner sees the request at its next
/// join and shares `b` onto its local queue (the cheap path).
#[test]
fn second_half_overlaps_a_first_half_that_keeps_joining() {
    let pool = pool(2);
    let b_started = AtomicBool::new(false);
    let ((saw, a_worker), b_worker) = pool.install(|| {
        weft::join(
            || {
                let saw = eventually(DEADLINE, || {
                    // Tiny joins: each one is a chance for the owner to share.
                    let ((), ()) = weft::join(|| (), || ());
                    b_started.load(SeqCst)
                });
                (saw, weft::current_worker_index())
            },
            || {
                b_started.store(true, SeqCst);
                weft::current_worker_index()
            },
        )
    });
    assert!(saw, "b never started while a was running");
    assert!(a_worker.is_some() && b_worker.is_some());
    assert_ne!(a_worker, b_worker, "b ran on a's worker while a ran");
}

/// `a` never joins again (a long computation): `b` can only be taken by force
/// from the join stack. Also checks the steal counters (part 7).
#[test]
fn second_half_is_forced_out_of_a_first_half_that_never_joins() {
    let pool = pool(2);
    let stolen_before = total_stolen(&pool);
    let b_started = AtomicBool::new(false);
    let ((saw, a_worker), b_worker) = pool.install(|| {
        weft::join(
            || {
                let saw = eventually(DEADLINE, || b_started.load(SeqCst));
                (saw, weft::current_worker_index())
            },
            || {
                b_started.store(true, SeqCst);
                weft::current_worker_index()
            },
        )
    });
    assert!(
        saw,
        "b was never taken from a first half that does not join"
    );
    assert!(a_worker.is_some() && b_worker.is_some());
    assert_ne!(a_worker, b_worker);
    // The thief counts its steal before it runs the half, and `b` ran
    // before `a` saw its flag.
    assert!(
        total_stolen(&pool) > stolen_before,
        "a half taken by another worker was not counted as stolen: {:?}",
        pool.stats()
    );
    // The pool keeps working after a forced steal.
    assert_eq!(pool.install(|| fib(15)), fib_serial(15));
}

/// The same, 600 times over: each half taken from the old end is marked,
/// its frame's pop finds it so and empties the list, and the next round's
/// halves start on an empty stack (join_stack.rs, invariant 3). Rounds
/// alternate between the forced path (a never joins) and the shared
/// path (a keeps joining), and every other round leaves an older half below
/// `b`, which a thief takes first.
#[test]
fn halves_taken_from_the_old_end_round_after_round() {
    let pool = pool(2);
    for round in 0..600usize {
        let b_started = AtomicBool::new(false);
        let keep_joining = round % 2 == 1;
        let wait = || {
            eventually(DEADLINE, || {
                if keep_joining {
                    let ((), ()) = weft::join(|| (), || ());
                }
                b_started.load(SeqCst)
            })
        };
        let work = || {
            weft::join(wait, || {
                b_started.store(true, SeqCst);
                round * 2
            })
        };
        let (saw, value) = pool.install(|| {
            if round % 4 < 2 {
                work()
            } else {
                weft::join(work, || ()).0
            }
        });
        assert!(saw, "round {round}: b never started");
        assert_eq!(value, round * 2);
    }
}

/// Records one leaf entering and leaving, keeping the most seen at once.
struct Concurrency {
    running: AtomicUsize,
    max: AtomicUsize,
    started: AtomicUsize,
    timed_out: AtomicUsize,
    finished: AtomicUsize,
}

impl Concurrency {
    fn new() -> Concurrency {
        Concurrency {
            running: AtomicUsize::new(0),
            max: AtomicUsize::new(0),
            started: AtomicUsize::new(0),
            timed_out: AtomicUsize::new(0),
            finished: AtomicUsize::new(0),
        }
    }

    /// A leaf that stays running until `enough` holds (or the deadline).
    fn leaf(&self, enough: impl Fn(&Concurrency) -> bool) {
        self.started.fetch_add(1, SeqCst);
        let now = self.running.fetch_add(1, SeqCst) + 1;
        self.max.fetch_max(now, SeqCst);
        if !eventually(DEADLINE, || enough(self)) {
            self.timed_out.fetch_add(1, SeqCst);
        }
        self.running.fetch_sub(1, SeqCst);
        self.finished.fetch_add(1, SeqCst);
    }
}

#[test]
fn nested_joins_run_leaves_at_once_on_two_workers() {
    let pool = pool(2);
    let c = Concurrency::new();
    // Each leaf stays until two leaves have been running at the same time.
    let leaf = || c.leaf(|c| c.max.load(SeqCst) >= 2);
    pool.install(|| {
        weft::join(|| weft::join(leaf, leaf), || weft::join(leaf, leaf));
    });
    assert_eq!(c.finished.load(SeqCst), 4);
    assert_eq!(c.timed_out.load(SeqCst), 0, "a leaf waited in vain");
    assert!(c.max.load(SeqCst) >= 2);
}

#[test]
fn nested_joins_run_all_eight_leaves_at_once_on_eight_workers() {
    let pool = pool(8);
    let c = Concurrency::new();
    // Each leaf stays until all eight have started: so all eight must be
    // running at once, one on each worker.
    let leaf = || c.leaf(|c| c.started.load(SeqCst) == 8);
    let four = || weft::join(|| weft::join(leaf, leaf), || weft::join(leaf, leaf));
    pool.install(|| {
        weft::join(four, four);
    });
    assert_eq!(c.finished.load(SeqCst), 8);
    assert_eq!(
        c.timed_out.load(SeqCst),
        0,
        "some leaf finished before all eight had started"
    );
    assert_eq!(c.max.load(SeqCst), 8);
}

// ---------------------------------------------------------------------------
// 2. One worker: a first half that waits for its own second half.

#[test]
fn one_worker_first_half_waits_on_wait_group_for_second_half() {
    let pool = pool(1);
    let wg = WaitGroup::with_count(1);
    let (a, b) = pool.install(|| {
        weft::join(
            || {
                wg.wait();
                "a"
            },
            || {
                wg.done();
                "b"
            },
        )
    });
    assert_eq!((a, b), ("a", "b"));
    assert_eq!(wg.count(), 0);
}

#[test]
fn one_worker_first_half_waits_on_event_for_second_half() {
    let pool = pool(1);
    for mode in [EventMode::Manual, EventMode::Auto] {
        let event = Event::new(mode);
        let (a, b) = pool.install(|| weft::join(|| event.wait(), || event.signal()));
        assert_eq!((a, b), ((), ()));
    }
}

#[test]
fn one_worker_nested_waits_for_second_halves() {
    let pool = pool(1);
    // The wait is inside an inner join: the newest half on the join stack is
    // the inner one, which does not release it; the outer one does.
    let wg = WaitGroup::with_count(1);
    let ((x, y), z) = pool.install(|| {
        weft::join(
            || {
                weft::join(
                    || {
                        wg.wait();
                        1
                    },
                    || 2,
                )
            },
            || {
                wg.done();
                3
            },
        )
    });
    assert_eq!((x, y, z), (1, 2, 3));

    // The releasing half itself joins, and two waits nest on one worker.
    let first = WaitGroup::with_count(1);
    let second = WaitGroup::with_count(1);
    let ran = AtomicUsize::new(0);
    pool.install(|| {
        weft::join(
            || {
                weft::join(
                    || {
                        first.wait();
                        ran.fetch_add(1, SeqCst);
                    },
                    || {
                        second.wait();
                        first.done();
                        ran.fetch_add(1, SeqCst);
                    },
                )
            },
            || {
                weft::join(
                    || {
                        second.done();
                    },
                    || {
                        ran.fetch_add(1, SeqCst);
                    },
                )
            },
        )
    });
    assert_eq!(ran.load(SeqCst), 3);
}

#[test]
fn two_workers_first_half_waits_on_its_second_half() {
    // With a second worker the half may be stolen or run by the wait; either
    // way the join completes, every time.
    let pool = pool(2);
    for _ in 0..200 {
        let wg = WaitGroup::with_count(1);
        pool.install(|| weft::join(|| wg.wait(), || wg.done()));
        assert_eq!(wg.count(), 0);
    }
}

// ---------------------------------------------------------------------------
// 3. Deep nesting: the join stack links its halves through their frames.

fn deep(n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    let (a, b) = weft::join(|| deep(n - 1), || 1);
    a + b
}

/// As `deep`, with the second halves doing the recursion: each level's first
/// half is short, so the join stack fills from the other end.
fn deep_right(n: usize, count: &AtomicUsize) -> usize {
    if n == 0 {
        return 0;
    }
    let (a, b) = weft::join(
        || {
            count.fetch_add(1, SeqCst);
            1
        },
        || deep_right(n - 1, count),
    );
    a + b
}

fn big_stack_pool(workers: usize) -> Pool {
    Pool::builder()
        .workers(workers)
        .stack_size(64 << 20)
        .build()
        .expect("pool")
}

/// A thousand joins deep: the join stack links its halves through their
/// frames and has no capacity to spill past.
#[test]
fn nesting_a_thousand_joins_deep() {
    for workers in [1, 2, 8] {
        let pool = big_stack_pool(workers);
        for _ in 0..3 {
            assert_eq!(pool.install(|| deep(1000)), 1000, "{workers} workers");
        }
        let count = AtomicUsize::new(0);
        assert_eq!(pool.install(|| deep_right(1000, &count)), 1000);
        assert_eq!(count.load(SeqCst), 1000, "{workers} workers");
    }
}

#[test]
fn one_worker_waits_at_the_bottom_of_a_deep_stack() {
    // 600 nested joins, and the deepest first half waits for the outermost
    // second half: the wait must dig through every half above it (newest
    // first, or all at once as its task suspends) to find it.
    fn down(n: usize, wg: &WaitGroup, leaves: &AtomicUsize) {
        if n == 0 {
            wg.wait();
            return;
        }
        weft::join(
            || down(n - 1, wg, leaves),
            || {
                leaves.fetch_add(1, SeqCst);
            },
        );
    }
    for workers in [1, 2] {
        let pool = big_stack_pool(workers);
        let wg = WaitGroup::with_count(1);
        let leaves = AtomicUsize::new(0);
        pool.install(|| {
            weft::join(
                || down(600, &wg, &leaves),
                || {
                    wg.done();
                },
            )
        });
        assert_eq!(leaves.load(SeqCst), 600, "{workers} workers");
    }
}

// ---------------------------------------------------------------------------
// 4. Many more workers than cores.

#[test]
fn fib_on_many_more_workers_than_cores() {
    let expected = fib_serial(25);
    for workers in [64, 256] {
        let pool = pool(workers);
        for _ in 0..3 {
            assert_eq!(pool.install(|| fib(25)), expected, "{workers} workers");
        }
    }
}

#[test]
fn every_half_of_a_join_tree_runs_exactly_once() {
    fn tree(range: std::ops::Range<usize>, runs: &[AtomicUsize], total: &AtomicUsize) {
        if range.len() == 1 {
            runs[range.start].fetch_add(1, SeqCst);
            total.fetch_add(1, SeqCst);
            return;
        }
        let mid = range.start + range.len() / 2;
        weft::join(
            || tree(range.start..mid, runs, total),
            || tree(mid..range.end, runs, total),
        );
    }
    const LEAVES: usize = 1 << 14;
    for workers in [3, 64, 256] {
        let pool = pool(workers);
        let runs: Vec<AtomicUsize> = (0..LEAVES).map(|_| AtomicUsize::new(0)).collect();
        let total = AtomicUsize::new(0);
        for round in 1..=2 {
            pool.install(|| tree(0..LEAVES, &runs, &total));
            assert_eq!(total.load(SeqCst), LEAVES * round, "{workers} workers");
            for (leaf, count) in runs.iter().enumerate() {
                assert_eq!(count.load(SeqCst), round, "leaf {leaf}, {workers} workers");
            }
        }
    }
}

/// Leaves that run past the time a searcher asks before it steals, so that
/// halves are taken by force from stacks many joins deep while their
/// owners pop, on many more workers than cores: each leaf still runs once.
/// A forced steal walks the owner's frames under the stack's lock, and a
/// pop that meets it waits (join_stack.rs, invariant 1).
#[test]
#[cfg_attr(
    miri,
    ignore = "leaves spin for tens of microseconds: covered natively"
)]
fn halves_forced_from_deep_stacks_run_once_on_many_more_workers_than_cores() {
    fn tree(range: std::ops::Range<usize>, runs: &[AtomicUsize]) {
        if range.len() == 1 {
            let until = std::time::Instant::now() + std::time::Duration::from_micros(40);
            while std::time::Instant::now() < until {
                std::hint::spin_loop();
            }
            runs[range.start].fetch_add(1, SeqCst);
            return;
        }
        let mid = range.start + range.len() / 2;
        weft::join(
            || tree(range.start..mid, runs),
            || tree(mid..range.end, runs),
        );
    }
    const LEAVES: usize = 1 << 9;
    for workers in [64, 256] {
        let pool = pool(workers);
        let runs: Vec<AtomicUsize> = (0..LEAVES).map(|_| AtomicUsize::new(0)).collect();
        for round in 1..=3 {
            pool.install(|| tree(0..LEAVES, &runs));
            for (leaf, count) in runs.iter().enumerate() {
                assert_eq!(count.load(SeqCst), round, "leaf {leaf}, {workers} workers");
            }
        }
    }
}

#[test]
fn many_outside_threads_install_joins_at_once() {
    let expected = fib_serial(20);
    for workers in [4, 64] {
        let pool = Arc::new(pool(workers));
        let threads: Vec<_> = (0..16)
            .map(|_| {
                let pool = Arc::clone(&pool);
                thread::spawn(move || (0..4).map(|_| pool.install(|| fib(20))).collect::<Vec<_>>())
            })
            .collect();
        for thread in threads {
            let results = thread.join().expect("outside thread");
            assert_eq!(results, vec![expected; 4], "{workers} workers");
        }
    }
}

// ---------------------------------------------------------------------------
// 5. Panics: raised after both halves finish; the first half's panic wins.

fn catch<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    panic::catch_unwind(AssertUnwindSafe(f)).map_err(|payload| payload_str(&*payload))
}

#[test]
fn panic_in_first_half_waits_for_second_half() {
    let pool = pool(2);
    let b_done = AtomicBool::new(false);
    let result = catch(|| {
        pool.join(
            || panic!("panic in a"),
            || {
                thread::sleep(Duration::from_millis(20));
                b_done.store(true, SeqCst);
            },
        )
    });
    assert_eq!(result.unwrap_err(), "panic in a");
    assert!(b_done.load(SeqCst), "the panic left before b finished");
    assert_eq!(pool.install(|| fib(15)), fib_serial(15));
}

#[test]
fn panic_in_second_half_reaches_the_caller() {
    let pool = pool(2);
    let a_done = AtomicBool::new(false);
    let result = catch(|| {
        pool.join(
            || {
                thread::sleep(Duration::from_millis(20));
                a_done.store(true, SeqCst);
            },
            || panic!("panic in b"),
        )
    });
    assert_eq!(result.unwrap_err(), "panic in b");
    assert!(a_done.load(SeqCst));
    assert_eq!(pool.install(|| fib(15)), fib_serial(15));
}

/// A result whose drop panics.
struct PanicsOnDrop;

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        panic!("panic dropping b's result");
    }
}

// The second half's result is dropped unused when the first half panics;
// its destructor's panic must not replace the first half's, whether the
// second half ran on the joining worker or was stolen and ran elsewhere.
#[test]
fn first_halfs_panic_wins_over_the_drop_of_second_halfs_result() {
    for workers in [1, 2, 4] {
        let pool = pool(workers);
        for stolen in [false, true] {
            let result = catch(|| {
                pool.join(
                    || {
                        if stolen {
                            // Long enough for an idle worker to take b.
                            thread::sleep(Duration::from_millis(30));
                        }
                        panic!("panic in a")
                    },
                    || PanicsOnDrop,
                )
            });
            assert_eq!(
                result.err().as_deref(),
                Some("panic in a"),
                "{workers} workers, waited for a thief: {stolen}"
            );
        }
        assert_eq!(pool.install(|| fib(15)), fib_serial(15));
    }
}

#[test]
fn panic_in_both_halves_raises_the_first_halfs() {
    for workers in [1, 2] {
        let pool = pool(workers);
        let b_ran = AtomicBool::new(false);
        let result = catch(|| {
            pool.join(
                || panic!("panic in a"),
                || {
                    b_ran.store(true, SeqCst);
                    panic!("panic in b")
                },
            )
        });
        assert_eq!(result.unwrap_err(), "panic in a", "{workers} workers");
        assert!(b_ran.load(SeqCst));
        assert_eq!(pool.install(|| fib(15)), fib_serial(15));
    }
}

#[test]
fn panics_when_the_second_half_was_stolen() {
    let pool = pool(2);

    // b stolen and panics; a finishes normally.
    let b_started = AtomicBool::new(false);
    let saw = AtomicBool::new(false);
    let result = catch(|| {
        pool.join(
            || saw.store(eventually(DEADLINE, || b_started.load(SeqCst)), SeqCst),
            || {
                b_started.store(true, SeqCst);
                panic!("stolen b")
            },
        )
    });
    assert!(saw.load(SeqCst), "b was not taken while a ran");
    assert_eq!(result.unwrap_err(), "stolen b");

    // a panics while the stolen b still runs: the panic waits for b.
    let b_started = AtomicBool::new(false);
    let b_done = AtomicBool::new(false);
    let saw = AtomicBool::new(false);
    let result = catch(|| {
        pool.join(
            || {
                saw.store(eventually(DEADLINE, || b_started.load(SeqCst)), SeqCst);
                panic!("a after stolen b")
            },
            || {
                b_started.store(true, SeqCst);
                thread::sleep(Duration::from_millis(20));
                b_done.store(true, SeqCst);
            },
        )
    });
    assert!(saw.load(SeqCst));
    assert_eq!(result.unwrap_err(), "a after stolen b");
    assert!(b_done.load(SeqCst), "the panic left while the stolen b ran");

    // Both panic, b stolen: a's panic wins.
    let b_started = AtomicBool::new(false);
    let result = catch(|| {
        pool.join(
            || {
                eventually(DEADLINE, || b_started.load(SeqCst));
                panic!("a wins")
            },
            || {
                b_started.store(true, SeqCst);
                panic!("b loses")
            },
        )
    });
    assert_eq!(result.unwrap_err(), "a wins");

    // And the pool still works, joins and steals included.
    assert_eq!(pool.install(|| fib(18)), fib_serial(18));
    let b_started = AtomicBool::new(false);
    let (saw, ()) = pool.join(
        || eventually(DEADLINE, || b_started.load(SeqCst)),
        || b_started.store(true, SeqCst),
    );
    assert!(saw);
}

#[test]
fn panics_deep_in_a_join_tree_reach_the_root_after_everything_ran() {
    fn tree(depth: u32, runs: &AtomicUsize) {
        if depth == 0 {
            if runs.fetch_add(1, SeqCst) == 77 {
                panic!("leaf 77");
            }
            return;
        }
        weft::join(|| tree(depth - 1, runs), || tree(depth - 1, runs));
    }
    for workers in [1, 4] {
        let pool = pool(workers);
        let runs = AtomicUsize::new(0);
        let result = catch(|| pool.install(|| tree(10, &runs)));
        assert_eq!(result.unwrap_err(), "leaf 77");
        // Every leaf belongs to some join that was waited for.
        assert_eq!(runs.load(SeqCst), 1 << 10, "{workers} workers");
    }
}

// ---------------------------------------------------------------------------
// 6. join_context's `migrated`.

#[test]
fn join_context_outside_any_pool_counts_both_as_migrated() {
    let (a, b) = weft::join_context(|ctx| ctx.migrated(), |ctx| ctx.migrated());
    assert!(a && b, "outside any pool: a {a}, b {b}");
}

#[test]
fn join_context_inline_second_half_did_not_migrate() {
    let pool = pool(1);
    for _ in 0..10 {
        let (a, b) =
            pool.install(|| weft::join_context(|ctx| ctx.migrated(), |ctx| ctx.migrated()));
        assert!(!a && !b, "one worker, no waits: a {a}, b {b}");
    }
}

#[test]
fn join_context_first_half_on_a_worker_never_migrated() {
    let pool = pool(4);
    for _ in 0..100 {
        let (a, _) =
            pool.install(|| weft::join_context(|ctx| ctx.migrated(), |ctx| ctx.migrated()));
        assert!(!a);
    }
}

#[test]
fn join_context_stolen_second_half_migrated() {
    let pool = pool(2);
    let b_started = AtomicBool::new(false);
    let ((saw, a_migrated, a_worker), (b_migrated, b_worker)) = pool.install(|| {
        weft::join_context(
            |ctx| {
                let saw = eventually(DEADLINE, || b_started.load(SeqCst));
                (saw, ctx.migrated(), weft::current_worker_index())
            },
            |ctx| {
                b_started.store(true, SeqCst);
                (ctx.migrated(), weft::current_worker_index())
            },
        )
    });
    assert!(saw);
    assert!(!a_migrated);
    assert_ne!(a_worker, b_worker);
    assert!(
        b_migrated,
        "b ran on another worker but was told it did not"
    );
}

#[test]
fn join_context_second_half_run_by_a_wait_migrated() {
    let pool = pool(1);
    let wg = WaitGroup::with_count(1);
    let (a, b) = pool.install(|| {
        weft::join_context(
            |ctx| {
                wg.wait();
                ctx.migrated()
            },
            |ctx| {
                wg.done();
                ctx.migrated()
            },
        )
    });
    assert!(!a);
    assert!(b, "b ran as a queued job of a wait but was told it did not");
}

// ---------------------------------------------------------------------------
// The first half leaves its worker: a blocking call, another pool.

#[test]
fn second_half_runs_while_the_first_half_blocks_its_only_worker() {
    // The only worker is inside `blocking`: the spare thread standing in
    // for it is the only thread that can run `b`, which sits on the blocked
    // worker's join stack.
    let pool = pool(1);
    for _ in 0..20 {
        let b_started = AtomicBool::new(false);
        let (saw, ()) = pool.install(|| {
            weft::join(
                || weft::blocking(|| eventually(DEADLINE, || b_started.load(SeqCst))),
                || b_started.store(true, SeqCst),
            )
        });
        assert!(saw, "b never ran while its worker was blocked");
    }
}

#[test]
fn join_inside_blocking_inside_join() {
    let pool = pool(2);
    let ((x, y), z) =
        pool.install(|| weft::join(|| weft::blocking(|| weft::join(|| 1, || 2)), || 3));
    assert_eq!((x, y, z), (1, 2, 3));
}

#[test]
fn second_half_runs_while_the_first_half_waits_in_another_pool() {
    let outer = pool(2);
    let inner = pool(1);
    for _ in 0..20 {
        let b_started = AtomicBool::new(false);
        let (saw, ()) = outer.install(|| {
            weft::join(
                || inner.install(|| eventually(DEADLINE, || b_started.load(SeqCst))),
                || b_started.store(true, SeqCst),
            )
        });
        assert!(saw, "b never ran while its worker waited in another pool");
    }
}

#[test]
fn scopes_and_joins_nest_in_each_other() {
    let pool = pool(3);
    let count = AtomicUsize::new(0);
    pool.install(|| {
        weft::join(
            || {
                weft::scope(|s| {
                    for _ in 0..50 {
                        s.spawn(|_| {
                            assert_eq!(fib(10), 55);
                            count.fetch_add(1, SeqCst);
                        });
                    }
                })
            },
            || {
                weft::scope(|s| {
                    s.spawn(|_| {
                        let (a, b) = weft::join(|| fib(12), || fib(11));
                        assert_eq!(a + b, fib_serial(13));
                        count.fetch_add(1, SeqCst);
                    });
                })
            },
        )
    });
    assert_eq!(count.load(SeqCst), 51);
}

/// A payload whose drop panics.
struct BombPayload;

impl Drop for BombPayload {
    fn drop(&mut self) {
        panic::panic_any("the payload's drop panicked");
    }
}

// Waits for stolen halves (the spin, then a suspension) race the pool's
// drop: outside threads keep spawning tasks that join (64 workers on this
// machine's cores, so halves are stolen and owners wait), start hooks
// spawn such tasks too, and some tasks panic in a first half whose second
// half was taken, with a payload whose drop panics. The drop returns after
// every accepted task ran exactly once, and every panic reached the
// handler.
#[test]
fn stolen_half_waits_race_the_pools_drop() {
    race_the_pools_drop(joins_whose_half_is_stolen);
}

/// The work of the stolen-half races: a fib by `join`, or (with `panics`)
/// a join whose first half panics with a [`BombPayload`] after its second
/// half was taken.
fn joins_whose_half_is_stolen(panics: bool) {
    if panics {
        weft::join(
            || {
                thread::sleep(Duration::from_micros(200));
                panic::panic_any(BombPayload)
            },
            || fib(12),
        );
    } else {
        assert_eq!(fib(16), fib_serial(16));
    }
}

// The same race in a pool whose workers fit the cores (at least two): there
// a join whose second half another worker ran opens a linger window
// (registry.rs, `linger_after_call`), so searchers keep searching while the
// pool closes; the drop must still return with every task run once.
#[test]
fn stolen_halves_in_a_pool_that_fits_the_cores_race_the_pools_drop() {
    let cores = thread::available_parallelism().map_or(1, usize::from);
    race_a_pool_of_the_size_to_its_drop(cores.clamp(2, 64), joins_whose_half_is_stolen);
}

// The same race with parallel loops in the tasks: loops of 20,000 items,
// long enough to split, whose leaves hand halves to the pool's searchers
// between chunks (worker/join_owner.rs, `offer_work`) while the pool
// drops; some panic at an item of their second half with a payload whose
// drop panics.
#[test]
fn loops_sharing_with_searchers_race_the_pools_drop() {
    use weft::prelude::*;
    const ITEMS: u64 = 20_000;
    race_the_pools_drop(|panics| {
        if panics {
            (0..ITEMS).into_par_iter().for_each(|i| {
                if i == ITEMS * 3 / 4 {
                    thread::sleep(Duration::from_micros(200));
                    panic::panic_any(BombPayload)
                }
            });
        } else {
            let sum: u64 = (0..ITEMS).into_par_iter().map(|x| x * x % 7).sum();
            assert_eq!(sum, (0..ITEMS).map(|x| x * x % 7).sum::<u64>());
        }
    });
}

// The same race with loops called from outside a worker: inside
// `weft::blocking` the thread is no worker and free functions act on its
// pool, so each loop starts on the calling thread and hands its rest to
// the pool that is dropping (iter/plumbing/outside.rs: the hand-off task,
// taken or withdrawn, that wakes its caller when done; a pool with a task
// inside `blocking` still accepts it); some panic at an item past the
// caller's first chunks with a payload whose drop panics.
#[test]
fn loops_handed_off_from_blocking_race_the_pools_drop() {
    use weft::prelude::*;
    const ITEMS: u64 = 20_000;
    race_the_pools_drop(|panics| {
        weft::blocking(|| {
            if panics {
                (0..ITEMS).into_par_iter().for_each(|i| {
                    if i == ITEMS * 3 / 4 {
                        thread::sleep(Duration::from_micros(200));
                        panic::panic_any(BombPayload)
                    }
                });
            } else {
                let sum: u64 = (0..ITEMS).into_par_iter().map(|x| x * x % 7).sum();
                assert_eq!(sum, (0..ITEMS).map(|x| x * x % 7).sum::<u64>());
            }
        })
    });
}

/// Outside threads spawn tasks running `work` (with `true`, a task that
/// must panic with [`BombPayload`]) on a pool of 64 workers, whose start
/// hooks spawn such tasks too, until the pool is dropped under them, three
/// times: every accepted task ran once, and every panic reached the
/// handler.
fn race_the_pools_drop(work: fn(bool)) {
    race_a_pool_of_the_size_to_its_drop(64, work);
}

/// [`race_the_pools_drop`] on a pool of `workers`.
fn race_a_pool_of_the_size_to_its_drop(workers: usize, work: fn(bool)) {
    const SPAWNERS: usize = 4;
    const PANIC_EVERY: usize = 16;
    for round in 0..3 {
        let accepted = Arc::new(AtomicUsize::new(0));
        let ran = Arc::new(AtomicUsize::new(0));
        let panicking = Arc::new(AtomicUsize::new(0));
        let handled = Arc::new(AtomicUsize::new(0));
        let pool = {
            let (accepted, ran, handled) = (accepted.clone(), ran.clone(), handled.clone());
            // The batch policy asked for, so that every worker enters and
            // leaves it while the pool drops, whatever this machine's cores.
            Pool::builder()
                .workers(workers)
                .batch_scheduling(true)
                .on_thread_start(move |index| {
                    if index % 16 == 0 {
                        accepted.fetch_add(1, SeqCst);
                        let ran = ran.clone();
                        weft::spawn(move || {
                            work(false);
                            ran.fetch_add(1, SeqCst);
                        });
                    }
                })
                .panic_handler(move |payload| {
                    handled.fetch_add(1, SeqCst);
                    drop(payload);
                })
                .build()
                .expect("pool")
        };
        let spawners: Vec<_> = (0..SPAWNERS)
            .map(|spawner| {
                let handle = pool.handle();
                let (accepted, ran, panicking) = (accepted.clone(), ran.clone(), panicking.clone());
                thread::spawn(move || {
                    for i in 0.. {
                        let panics = (i + spawner) % PANIC_EVERY == 0;
                        let ran = ran.clone();
                        let task = move || {
                            ran.fetch_add(1, SeqCst);
                            work(panics);
                        };
                        match handle.spawn(task) {
                            Ok(()) => {
                                accepted.fetch_add(1, SeqCst);
                                if panics {
                                    panicking.fetch_add(1, SeqCst);
                                }
                            }
                            Err(_) => break,
                        }
                    }
                })
            })
            .collect();
        // Let the spawners get going, then drop the pool under them.
        assert!(
            eventually(DEADLINE, || accepted.load(SeqCst) >= 64),
            "the spawners never got going"
        );
        drop(pool);
        for spawner in spawners {
            spawner.join().expect("a spawner panicked");
        }
        assert_eq!(ran.load(SeqCst), accepted.load(SeqCst), "round {round}");
        assert_eq!(
            handled.load(SeqCst),
            panicking.load(SeqCst),
            "round {round}"
        );
    }
}
