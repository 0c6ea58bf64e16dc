//! Edge cases, in the shape a user's program goes wrong: shutdown racing
//! spawns and wake-ups, hooks and destructors that use weft, panics whose
//! payloads panic on drop, extreme durations, deep `Event::any` chains,
//! pools dropped from inside themselves.
//!
//! Every case runs in a child process (this test binary, re-run with the case
//! named in `WEFT_EDGE_CASE`) under a timeout, since the failures guarded
//! against are hangs and aborts as much as wrong answers. The child asserts
//! the contract and exits nonzero when it does not hold; a child that only has
//! to get through (no abort, no hang) simply returns.
//!
//! This file holds the harness, the list of cases and one test per case;
//! the cases themselves are in a file a theme: `shutdown.rs`, `hooks.rs`,
//! `thread_locals.rs`, `payload_panics.rs`, `limits.rs`, `lifecycle.rs`,
//! `entry_points.rs`, `exhaustion.rs` and `drop_in.rs`.

use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Barrier, Mutex, OnceLock};
use std::task::{Poll, Waker};
use std::thread;
use std::time::{Duration, Instant};

#[path = "../common/mod.rs"]
mod common;

mod drop_in;
mod entry_points;
mod exhaustion;
mod hooks;
mod lifecycle;
mod limits;
mod payload_panics;
mod shutdown;
mod thread_locals;

use drop_in::*;
use entry_points::*;
use exhaustion::*;
use hooks::*;
use lifecycle::*;
use limits::*;
use payload_panics::*;
use shutdown::*;
use thread_locals::*;

use common::eventually;

use weft::{Event, EventMode, JoinHandle, Pool, TicketQueue, WaitGroup};

const CASE_ENV: &str = "WEFT_EDGE_CASE";

/// How long a child may run before it counts as hung.
const CHILD_LIMIT: Duration = Duration::from_secs(60);

/// How long a child waits for something that should happen at once.
const WAIT: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------
// The parent side.

fn run_case(case: &str) {
    common::run_child_case(CASE_ENV, case, CHILD_LIMIT);
}

// ---------------------------------------------------------------------------
// The child side.

/// Every case, by the name the parent passes in `WEFT_EDGE_CASE`.
const CASES: &[(&str, fn())] = &[
    ("shutdown-races-spawns", || {
        shutdown_races_spawns(Via::Spawn, &[2, 3, 4])
    }),
    ("shutdown-races-spawn-on", || {
        shutdown_races_spawns(Via::SpawnOn, &[2, 3, 4])
    }),
    ("shutdown-races-spawn-fifo", || {
        shutdown_races_spawns(Via::SpawnFifo, &[2, 3, 4])
    }),
    ("shutdown-races-spawn-broadcast", || {
        shutdown_races_spawns(Via::SpawnBroadcast, &[2, 3, 4])
    }),
    ("shutdown-races-spawns-many-workers", || {
        shutdown_races_spawns(Via::Spawn, &[16, 32, 64])
    }),
    ("shutdown-races-joins", || {
        shutdown_races_spawns(Via::SpawnJoining, &[2, 3, 8])
    }),
    (
        "outside-callers-race-the-drop",
        outside_callers_race_the_drop,
    ),
    (
        "outermost-halves-kept-while-the-pool-drops",
        outermost_halves_kept_while_the_pool_drops,
    ),
    ("shutdown-races-aborts", shutdown_races_aborts),
    ("shutdown-races-wakes", shutdown_races_wakes),
    ("shutdown-races-future-aborts", shutdown_races_future_aborts),
    ("start-hook-spawns", start_hook_spawns),
    ("stop-hook-spawns", stop_hook_spawns),
    ("stop-hook-spawns-futures", stop_hook_spawns_futures),
    (
        "stop-hook-signals-parked-future",
        stop_hook_signals_parked_future,
    ),
    ("hooks-join-scope-blocking", hooks_join_scope_blocking),
    ("tls-destructor-uses-weft", tls_destructor_uses_weft),
    (
        "tls-destructor-on-worker-uses-weft",
        tls_destructor_on_worker,
    ),
    ("pool-in-thread-local", pool_in_thread_local),
    ("bomb-without-handler", || bomb_in_task(false)),
    ("bomb-dropped-by-handler", || bomb_in_task(true)),
    ("bomb-in-scope", bomb_in_scope),
    ("bomb-in-join", bomb_in_join),
    ("bomb-through-join-handles", bomb_through_join_handles),
    ("panic-handler-panics", panic_handler_panics),
    (
        "long-spin-does-not-block-drop",
        long_spin_does_not_block_drop,
    ),
    ("deep-any-chain-signal", deep_any_chain_signal),
    ("deep-any-chain-drop", deep_any_chain_drop),
    ("extreme-durations", extreme_durations),
    ("pool-dropped-in-own-task", || {
        pool_dropped_in_own_task(false)
    }),
    ("pool-dropped-in-own-future", || {
        pool_dropped_in_own_task(true)
    }),
    ("panicking-thread-name", panicking_thread_name),
    ("panicking-spare-thread-name", panicking_spare_thread_name),
    (
        "worker-index-in-blocking-and-spare",
        worker_index_in_blocking,
    ),
    ("burst-exactly-once", burst_exactly_once),
    ("handle-after-drop", handle_after_drop),
    ("drop-drains-spawn-chains", drop_drains_spawn_chains),
    (
        "parked-future-destructor-uses-weft",
        parked_future_destructor_uses_weft,
    ),
    (
        "future-destructor-panics-on-pool-drop",
        future_destructor_panics,
    ),
    ("panicking-start-hook", panicking_start_hook),
    ("panicking-stop-hook", panicking_stop_hook),
    ("huge-pools-with-hook-tasks", huge_pools_with_hook_tasks),
    ("blocking-races-drop", blocking_races_drop),
    (
        "nested-pools-dropped-in-tasks",
        nested_pools_dropped_in_tasks,
    ),
    (
        "scope-op-panics-with-tasks-running",
        scope_op_panics_with_tasks_running,
    ),
    ("ticket-futures-on-pool-drop", ticket_futures_on_pool_drop),
    ("wakers-outlive-the-pool", wakers_outlive_the_pool),
    (
        "futures-wake-in-their-destructors",
        futures_wake_in_their_destructors,
    ),
    (
        "join-handles-awaited-across-a-drop",
        join_handles_awaited_across_a_drop,
    ),
    ("build-global-races-first-use", build_global_races_first_use),
    ("slow-hooks-then-drop", slow_hooks_then_drop),
    (
        "panic-handler-spawns-during-drop",
        panic_handler_spawns_during_drop,
    ),
    (
        "pool-dropped-by-a-task-on-a-spare",
        pool_dropped_by_a_task_on_a_spare,
    ),
    (
        "stop-hook-spawns-through-own-handle",
        stop_hook_spawns_through_own_handle,
    ),
    (
        "last-pool-reference-dropped-by-own-tasks",
        last_pool_reference_dropped_by_own_tasks,
    ),
    ("pool-entry-points-on-a-spare", pool_entry_points_on_a_spare),
    ("bomb-valued-outputs", bomb_valued_outputs),
    ("hostile-builder-settings", hostile_builder_settings),
    ("nul-thread-name-mid-build", nul_thread_name_mid_build),
    ("futures-nobody-can-wake", futures_nobody_can_wake),
    (
        "bombing-stop-hooks-racing-spawns",
        bombing_stop_hooks_racing_spawns,
    ),
    (
        "future-and-output-destructors-panic",
        future_and_output_destructors_panic,
    ),
    (
        "failed-build-joins-spares-of-start-hooks",
        failed_build_joins_spares_of_start_hooks,
    ),
    (
        "suspended-waits-race-the-drop",
        suspended_waits_race_the_drop,
    ),
    ("stop-hooks-suspend-on-tasks", stop_hooks_suspend_on_tasks),
    ("bombs-after-suspension", bombs_after_suspension),
    (
        "shutdown-timeout-races-spawns",
        shutdown_timeout_races_spawns,
    ),
    ("adopted-seat-races-the-drop", adopted_seat_races_the_drop),
    ("parallel-loops-race-the-drop", parallel_loops_race_the_drop),
    (
        "first-calls-race-a-starting-pool",
        first_calls_race_a_starting_pool,
    ),
    ("waits-past-the-map-limit", waits_past_the_map_limit),
    (
        "two-default-pools-past-the-map-limit",
        two_default_pools_past_the_map_limit,
    ),
    (
        "waits-and-blocking-past-the-address-space",
        waits_and_blocking_past_the_address_space,
    ),
    (
        "threads-past-the-address-space",
        threads_past_the_address_space,
    ),
    (
        "shutdown-background-races-spawns-waits-and-bombs",
        shutdown_background_races,
    ),
    (
        "borrowing-spawn-handler-fails-midway",
        borrowing_spawn_handler_fails_midway,
    ),
    ("into-global-races-first-use", into_global_races_first_use),
    (
        "stackless-waits-race-the-drop",
        stackless_waits_race_the_drop,
    ),
];

/// The child side: does nothing unless a case is named.
#[test]
fn child_entry() {
    let Ok(case) = std::env::var(CASE_ENV) else {
        return;
    };
    let Some((_, body)) = CASES.iter().find(|(name, _)| *name == case) else {
        panic!("unknown edge case {case}");
    };
    // Many cases panic on purpose, some hundreds of times: report each panic
    // in one line (where and what), without the cost of a backtrace.
    panic::set_hook(Box::new(|info| {
        let name = thread::current().name().unwrap_or("<unnamed>").to_owned();
        eprintln!("thread '{name}' {info}");
    }));
    body();
}

fn counter() -> Arc<AtomicUsize> {
    Arc::new(AtomicUsize::new(0))
}

fn recv<T>(receiver: &mpsc::Receiver<T>, what: &str) -> T {
    match receiver.recv_timeout(WAIT) {
        Ok(value) => value,
        Err(error) => panic!("{what}: nothing within {WAIT:?} ({error})"),
    }
}

/// Waits for a handle, failing (not hanging) if it never completes.
fn join_within<T>(handle: JoinHandle<T>, what: &str) -> thread::Result<T> {
    match handle.join_timeout(WAIT) {
        Ok(result) => result,
        Err(_) => panic!("{what}: the join handle did not complete within {WAIT:?}"),
    }
}

fn thread_count() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|tasks| tasks.count())
        .unwrap_or(0)
}

/// A panic payload that panics when it is dropped (unless already unwinding,
/// which would abort the process for a reason that is not weft's).
struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        if !thread::panicking() {
            panic!("bomb: a panic payload panicked on drop");
        }
    }
}

fn throw_bomb() {
    panic::panic_any(Bomb);
}

/// Whether `result` holds a panic; the payload is forgotten, never dropped
/// (it may be a [`Bomb`]).
fn forget_panic<T>(result: thread::Result<T>) -> bool {
    match result {
        Ok(value) => {
            std::mem::forget(value);
            false
        }
        Err(payload) => {
            std::mem::forget(payload);
            true
        }
    }
}

/// Runs `task` on `pool` and waits for it; fails if it never runs.
fn runs_on(pool: &Pool, what: &str) {
    let (sender, receiver) = mpsc::channel();
    pool.spawn(move || sender.send(()).unwrap());
    recv(&receiver, what);
}

/// The pool still runs fire-and-forget tasks, pinned tasks on every worker,
/// `install`, `join` and `scope`.
fn pool_still_works(pool: &Pool) {
    runs_on(pool, "a spawned task");
    for index in 0..pool.workers() {
        let (sender, receiver) = mpsc::channel();
        pool.spawn_on(index, move || {
            sender.send(weft::current_worker_index()).unwrap()
        });
        assert_eq!(
            recv(&receiver, "a task pinned to a worker"),
            Some(index),
            "a pinned task ran on another worker"
        );
    }
    assert!(pool.install(weft::current_worker_index).is_some());
    assert_eq!(pool.join(|| 1, || 2), (1, 2));
    let mut hits = [0u8; 8];
    pool.scope(|s| {
        for hit in hits.iter_mut() {
            s.spawn(move |_| *hit = 1);
        }
    });
    assert_eq!(hits, [1; 8]);
}

// ---------------------------------------------------------------------------
// One test per case.

#[test]
fn case_list_is_consistent() {
    let mut names: Vec<&str> = CASES.iter().map(|(name, _)| *name).collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(before, names.len(), "duplicate case names");
}

/// All three at once: threads spawn through handles while the pool drops,
/// and each stop hook spawns a task and then panics with a [`Bomb`] (no
/// panic handler). The drop returns, every accepted task and every task the
/// hooks spawned ran exactly once, and the hooks' panics took no thread down.
/// Pools of 2 and 3 workers, and one of more workers than the machine has
/// cores: the first make their wakes directly on any machine of a few
/// cores, the last in a tree (woken workers making owed wakes), so both
/// ways of waking race the drop whatever machine runs the test.
fn bombing_stop_hooks_racing_spawns() {
    let more_than_cores = thread::available_parallelism().map_or(1, usize::from) + 2;
    for round in 0..21 {
        let workers = [2, 3, more_than_cores][round % 3];
        let from_hooks = counter();
        let pool = {
            let from_hooks = Arc::clone(&from_hooks);
            Pool::builder()
                .workers(workers)
                .on_thread_stop(move |_| {
                    let from_hooks = Arc::clone(&from_hooks);
                    weft::spawn(move || {
                        from_hooks.fetch_add(1, SeqCst);
                    });
                    throw_bomb();
                })
                .build()
                .unwrap()
        };
        let accepted = counter();
        let ran = counter();
        let spammers: Vec<_> = (0..2)
            .map(|_| {
                let (handle, accepted, ran) =
                    (pool.handle(), Arc::clone(&accepted), Arc::clone(&ran));
                thread::spawn(move || loop {
                    let ran = Arc::clone(&ran);
                    if handle
                        .spawn(move || {
                            ran.fetch_add(1, SeqCst);
                        })
                        .is_err()
                    {
                        break;
                    }
                    accepted.fetch_add(1, SeqCst);
                })
            })
            .collect();
        thread::sleep(Duration::from_micros(200 * (round % 4) as u64));
        drop(pool);
        for spammer in spammers {
            spammer.join().unwrap();
        }
        assert_eq!(ran.load(SeqCst), accepted.load(SeqCst), "round {round}");
        assert_eq!(from_hooks.load(SeqCst), workers, "round {round}");
    }
}

/// A future whose own destructor panics and whose output is a [`Bomb`]: the
/// handle still completes, with the future's panic.
fn future_and_output_destructors_panic() {
    struct BombFuture;
    impl std::future::Future for BombFuture {
        type Output = Bomb;
        fn poll(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Bomb> {
            std::task::Poll::Ready(Bomb)
        }
    }
    impl Drop for BombFuture {
        fn drop(&mut self) {
            if !thread::panicking() {
                panic!("the future's destructor panics");
            }
        }
    }
    let pool = Pool::builder().workers(2).build().unwrap();
    for _ in 0..10 {
        let handle = pool.spawn_future(BombFuture);
        let outcome = join_within(handle, "a future whose destructor and output both panic");
        assert!(forget_panic(outcome), "the destructor's panic is reported");
    }
    drop(pool);
}

/// A start hook makes a blocking call (starting a spare), then a later
/// worker's name panics: `build` hands the panic back only after every thread
/// of the pool, spares included, has run its stop hook and left.
fn failed_build_joins_spares_of_start_hooks() {
    let starts = counter();
    let stops = counter();
    let built = {
        let (starts, stops) = (Arc::clone(&starts), Arc::clone(&stops));
        panic::catch_unwind(move || {
            Pool::builder()
                .workers(4)
                .max_blocking(2)
                .on_thread_start(move |index| {
                    starts.fetch_add(1, SeqCst);
                    if index < 4 {
                        weft::blocking(|| thread::sleep(Duration::from_millis(5)));
                    }
                })
                .on_thread_stop(move |index| {
                    if index >= 4 {
                        // A slow spare: `build` must wait for it.
                        thread::sleep(Duration::from_millis(30));
                    }
                    stops.fetch_add(1, SeqCst);
                })
                .thread_name(|i| {
                    if i == 3 {
                        panic!("no name for worker 3");
                    }
                    format!("w{i}")
                })
                .build()
        })
    };
    assert!(built.is_err(), "the thread_name panic reaches the caller");
    let (started, stopped) = (starts.load(SeqCst), stops.load(SeqCst));
    assert!(
        started > 3,
        "the start hooks' blocking calls started spares"
    );
    assert_eq!(
        stopped, started,
        "build returned before every thread stopped"
    );
}

/// Tasks suspended in plain blocking waits (fibers) when the pool is
/// dropped, woken only by other threads while the drop is under way, with
/// more tasks spawned through a handle meanwhile and timed waits pending:
/// the drop waits for all of them, and each accepted task runs once.
fn suspended_waits_race_the_drop() {
    for round in 0..24 {
        let workers = 1 + round % 4;
        let pool = Pool::builder().workers(workers).build().unwrap();
        let gate = Event::new(EventMode::Manual);
        let never = Event::new(EventMode::Manual);
        let ran = counter();
        let accepted = counter();
        for i in 0..64 {
            let (gate, never, ran) = (gate.clone(), never.clone(), Arc::clone(&ran));
            accepted.fetch_add(1, SeqCst);
            pool.spawn(move || {
                if i % 4 == 0 {
                    // A timed wait that nobody ends, suspended at the drop.
                    assert!(!never.wait_timeout(Duration::from_millis(1 + i as u64 % 7)));
                }
                gate.wait();
                ran.fetch_add(1, SeqCst);
            });
        }
        let handle = pool.handle();
        let waker = {
            let (gate, ran, accepted) = (gate.clone(), Arc::clone(&ran), Arc::clone(&accepted));
            thread::spawn(move || {
                for _ in 0..32 {
                    let (gate, ran) = (gate.clone(), Arc::clone(&ran));
                    if handle
                        .spawn(move || {
                            gate.wait();
                            ran.fetch_add(1, SeqCst);
                        })
                        .is_ok()
                    {
                        accepted.fetch_add(1, SeqCst);
                    }
                    thread::yield_now();
                }
                thread::sleep(Duration::from_millis(2));
                gate.signal();
            })
        };
        drop(pool);
        waker.join().unwrap();
        assert_eq!(ran.load(SeqCst), accepted.load(SeqCst), "round {round}");
    }
}

/// Stop hooks that spawn a task and then block on it (the hook's wait
/// suspends on its fiber), and start hooks that spawn tasks waiting on a
/// gate another thread opens while the pool drops: every hook returns,
/// every task runs once, and the drop returns.
fn stop_hooks_suspend_on_tasks() {
    for round in 0..12 {
        let workers = 1 + round % 4;
        let gate = Event::new(EventMode::Manual);
        let hook_waits = counter();
        let from_start = counter();
        let pool = {
            let (gate, from_start, hook_waits) = (
                gate.clone(),
                Arc::clone(&from_start),
                Arc::clone(&hook_waits),
            );
            Pool::builder()
                .workers(workers)
                .on_thread_start(move |_| {
                    let (gate, from_start) = (gate.clone(), Arc::clone(&from_start));
                    weft::spawn(move || {
                        gate.wait();
                        from_start.fetch_add(1, SeqCst);
                    });
                })
                .on_thread_stop(move |_| {
                    let done = WaitGroup::with_count(1);
                    let signalled = Event::new(EventMode::Auto);
                    {
                        let (done, signalled) = (done.clone(), signalled.clone());
                        weft::spawn(move || {
                            signalled.signal();
                            done.done();
                        });
                    }
                    signalled.wait();
                    done.wait();
                    hook_waits.fetch_add(1, SeqCst);
                })
                .build()
                .unwrap()
        };
        let opener = {
            let gate = gate.clone();
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(1));
                gate.signal();
            })
        };
        drop(pool);
        opener.join().unwrap();
        assert_eq!(from_start.load(SeqCst), workers, "round {round}");
        assert_eq!(hook_waits.load(SeqCst), workers, "round {round}");
    }
}

/// Bombs (payloads that panic on drop) thrown after a task's wait
/// suspended and resumed: from a plain task (no handler), through a join
/// handle and a `JoinSet`, and from a parallel loop's closure called
/// from outside the pool. Nothing aborts, and the pools go on.
fn bombs_after_suspension() {
    let pool = Pool::builder().workers(2).build().unwrap();
    let gate = Event::new(EventMode::Manual);
    for _ in 0..4 {
        let gate = gate.clone();
        pool.spawn(move || {
            gate.wait();
            throw_bomb();
        });
    }
    let handle = {
        let gate = gate.clone();
        pool.spawn_with_handle(move || {
            gate.wait();
            throw_bomb();
        })
    };
    let mut set = weft::JoinSet::new();
    for _ in 0..4 {
        let gate = gate.clone();
        set.spawn_on(&pool, move || {
            gate.wait();
            throw_bomb();
        });
    }
    thread::sleep(Duration::from_millis(2));
    gate.signal();
    assert!(handle.join().map_err(std::mem::forget).is_err());
    while let Some(outcome) = set.join_next() {
        match outcome {
            Ok(()) => panic!("a bombing task in a JoinSet succeeded"),
            Err(error) => std::mem::forget(error),
        }
    }
    pool_still_works(&pool);
    {
        use weft::prelude::*;
        for at in [3usize, 50_000, 199_999] {
            let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
                (0..200_000usize).into_par_iter().for_each(|i| {
                    if i == at {
                        throw_bomb();
                    }
                });
            }));
            assert!(forget_panic(outcome), "the loop's bomb reaches its caller");
        }
        let total: usize = (0..1000usize).into_par_iter().sum();
        assert_eq!(total, 999 * 1000 / 2);
    }
    drop(pool);
}

/// Threads spawn through handles while `shutdown_timeout` runs out on a
/// pool whose tasks are suspended on a gate that opens later: every task
/// the pool accepted either ran or was dropped and counted, once.
fn shutdown_timeout_races_spawns() {
    for round in 0..12 {
        let pool = Pool::builder().workers(1 + round % 3).build().unwrap();
        let gate = Event::new(EventMode::Manual);
        let ran = counter();
        let accepted = counter();
        for _ in 0..16 {
            let (gate, ran) = (gate.clone(), Arc::clone(&ran));
            accepted.fetch_add(1, SeqCst);
            pool.spawn(move || {
                gate.wait();
                ran.fetch_add(1, SeqCst);
            });
        }
        let spammers: Vec<_> = (0..2)
            .map(|_| {
                let (handle, ran, accepted) =
                    (pool.handle(), Arc::clone(&ran), Arc::clone(&accepted));
                thread::spawn(move || {
                    for _ in 0..200 {
                        let ran = Arc::clone(&ran);
                        match handle.spawn(move || {
                            ran.fetch_add(1, SeqCst);
                        }) {
                            Ok(()) => {
                                accepted.fetch_add(1, SeqCst);
                            }
                            Err(_) => break,
                        }
                    }
                })
            })
            .collect();
        let opener = {
            let gate = gate.clone();
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(5));
                gate.signal();
            })
        };
        let report = pool.shutdown_timeout(Duration::from_millis(1));
        for spammer in spammers {
            spammer.join().unwrap();
        }
        opener.join().unwrap();
        let dropped = report.dropped();
        assert_eq!(
            ran.load(SeqCst) + dropped,
            accepted.load(SeqCst),
            "round {round}: ran {} + dropped {dropped}",
            ran.load(SeqCst)
        );
    }
}

/// Parallel loops race the drop: loops called inside `weft::blocking`
/// (whose caller folds beside the pool's task, so the task meets a pool
/// that is closing), loops in start and stop hooks, loops whose items
/// throw a [`Bomb`], and tasks running loops spawned through handles while
/// the pool drops. Every loop that ran gave the sequential answer, every
/// accepted task ran once, and the bombs reached their loops' callers.
fn parallel_loops_race_the_drop() {
    use weft::prelude::*;
    const LEN: u64 = 20_000;
    let expected = LEN * (LEN - 1) / 2;
    let sum = || (0..LEN).into_par_iter().sum::<u64>();
    for round in 0..24 {
        let workers = 1 + round % 4;
        let (start_loops, stop_loops) = (counter(), counter());
        let wrong = counter();
        let pool = {
            let (started, stopped) = (Arc::clone(&start_loops), Arc::clone(&stop_loops));
            let (wrong_start, wrong_stop) = (Arc::clone(&wrong), Arc::clone(&wrong));
            Pool::builder()
                .workers(workers)
                .max_blocking(round % 3)
                .on_thread_start(move |_| {
                    if sum() != expected {
                        bump(&wrong_start);
                    }
                    bump(&started);
                })
                .on_thread_stop(move |_| {
                    if sum() != expected {
                        bump(&wrong_stop);
                    }
                    bump(&stopped);
                })
                .build()
                .unwrap()
        };
        let in_blocking = counter();
        let bombs_caught = counter();
        for task in 0..6 {
            let (in_blocking, bombs_caught, wrong) = (
                Arc::clone(&in_blocking),
                Arc::clone(&bombs_caught),
                Arc::clone(&wrong),
            );
            pool.spawn(move || {
                weft::blocking(move || {
                    if task % 2 == 0 {
                        if sum() != expected {
                            bump(&wrong);
                        }
                    } else {
                        let at = [3, LEN / 2, LEN - 1][task % 3];
                        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
                            (0..LEN).into_par_iter().for_each(|i| {
                                if i == at {
                                    throw_bomb();
                                }
                            })
                        }));
                        if forget_panic(outcome) {
                            bump(&bombs_caught);
                        }
                    }
                    bump(&in_blocking);
                });
            });
        }
        let barrier = Arc::new(Barrier::new(3));
        let (accepted, ran) = (counter(), counter());
        let spammers = spawner_threads(2, &pool, &barrier, {
            let (accepted, ran, wrong) =
                (Arc::clone(&accepted), Arc::clone(&ran), Arc::clone(&wrong));
            move |handle| {
                spawn_until_refused(&handle, &accepted, || {
                    let (ran, wrong) = (Arc::clone(&ran), Arc::clone(&wrong));
                    move || {
                        if (0..2_000u64).into_par_iter().sum::<u64>() != 2_000 * 1_999 / 2 {
                            bump(&wrong);
                        }
                        bump(&ran);
                    }
                });
            }
        });
        barrier.wait();
        thread::sleep(Duration::from_micros(200 * (round % 4) as u64));
        drop(pool);
        for spammer in spammers {
            spammer.join().expect("spammer thread");
        }
        assert_eq!(wrong.load(SeqCst), 0, "round {round}: a loop's answer");
        assert_eq!(
            in_blocking.load(SeqCst),
            6,
            "round {round}: loops in blocking"
        );
        assert_eq!(
            bombs_caught.load(SeqCst),
            3,
            "round {round}: bombs reached their loops"
        );
        // Spare threads run the hooks too: each thread that started, stopped.
        let started = start_loops.load(SeqCst);
        assert!(started >= workers, "round {round}: loops in start hooks");
        assert_eq!(
            stop_loops.load(SeqCst),
            started,
            "round {round}: loops in stop hooks"
        );
        assert_eq!(
            ran.load(SeqCst),
            accepted.load(SeqCst),
            "round {round}: spawned loops"
        );
    }
}

/// A pool whose worker 0 is the thread that built it
/// (`use_current_thread`), dropped by that thread while other threads
/// spawn through handles and wake a waiting future, while its start and
/// stop hooks spawn, and while some of its tasks throw bombs: every
/// accepted task runs once, the hooks' tasks run, the future ends one way
/// or the other, the drop returns and the thread is no worker after it.
fn adopted_seat_races_the_drop() {
    for round in 0..12 {
        thread::spawn(move || {
            let workers = 2 + round % 3;
            let ran = counter();
            let accepted = counter();
            let hook_tasks = counter();
            let builder = Pool::builder().workers(workers).use_current_thread();
            let pool = hooks_that_spawn(builder, &hook_tasks, &hook_tasks)
                .build()
                .unwrap();
            let event = Event::new(EventMode::Manual);
            let waiting = {
                let event = event.clone();
                pool.spawn_future(async move { event.wait_async().await })
            };
            let bombs = counter();
            for i in 0..100 {
                if i % 10 == 0 {
                    let bombs = Arc::clone(&bombs);
                    weft::spawn(move || {
                        bombs.fetch_add(1, SeqCst);
                        throw_bomb();
                    });
                } else {
                    let ran = Arc::clone(&ran);
                    accepted.fetch_add(1, SeqCst);
                    weft::spawn(move || {
                        ran.fetch_add(1, SeqCst);
                    });
                }
            }
            let spammers: Vec<_> = (0..2)
                .map(|_| {
                    let (handle, ran, accepted) =
                        (pool.handle(), Arc::clone(&ran), Arc::clone(&accepted));
                    thread::spawn(move || loop {
                        let ran = Arc::clone(&ran);
                        accepted.fetch_add(1, SeqCst);
                        if handle
                            .spawn(move || {
                                ran.fetch_add(1, SeqCst);
                            })
                            .is_err()
                        {
                            accepted.fetch_sub(1, SeqCst);
                            break;
                        }
                    })
                })
                .collect();
            let waker = thread::spawn(move || event.signal());
            drop(pool);
            for spammer in spammers {
                spammer.join().unwrap();
            }
            waker.join().unwrap();
            // Woken before or after the pool closed: it finished or was
            // dropped, and either way its handle is complete.
            let _ = join_within(waiting, "the waiting future's handle");
            assert_eq!(ran.load(SeqCst), accepted.load(SeqCst), "round {round}");
            assert_eq!(bombs.load(SeqCst), 10, "round {round}");
            // One start and one stop hook per started thread (not seat 0).
            assert_eq!(hook_tasks.load(SeqCst), 2 * (workers - 1), "round {round}");
            assert_eq!(weft::current_worker_index(), None);
        })
        .join()
        .unwrap();
    }
}

macro_rules! edge_tests {
    ($($test:ident => $case:literal,)*) => {
        $(
            #[test]
            fn $test() {
                run_case($case);
            }
        )*

        #[test]
        fn every_case_has_a_test() {
            let tested = [$($case),*];
            for (name, _) in CASES {
                assert!(tested.contains(name), "case {name} has no test");
            }
        }
    };
}

edge_tests! {
    shutdown_races_spawns_through_handles => "shutdown-races-spawns",
    shutdown_races_pinned_spawns_through_handles => "shutdown-races-spawn-on",
    shutdown_races_fifo_spawns_through_handles => "shutdown-races-spawn-fifo",
    shutdown_races_broadcasts_through_handles => "shutdown-races-spawn-broadcast",
    outermost_join_halves_kept_on_busy_workers_while_the_pool_drops => "outermost-halves-kept-while-the-pool-drops",
    shutdown_races_aborts_of_queued_tasks => "shutdown-races-aborts",
    shutdown_races_spawns_with_many_workers => "shutdown-races-spawns-many-workers",
    shutdown_races_joining_tasks_and_their_bombs => "shutdown-races-joins",
    outside_callers_spinning_for_short_calls_race_the_drop => "outside-callers-race-the-drop",
    shutdown_races_foreign_wakes_of_parked_futures => "shutdown-races-wakes",
    shutdown_races_aborts_wakes_and_waker_drops_of_futures => "shutdown-races-future-aborts",
    tasks_spawned_by_start_hooks_all_run => "start-hook-spawns",
    tasks_spawned_by_stop_hooks_all_run => "stop-hook-spawns",
    futures_spawned_by_stop_hooks_all_complete => "stop-hook-spawns-futures",
    a_future_woken_by_a_stop_hook_completes => "stop-hook-signals-parked-future",
    hooks_may_join_scope_and_block => "hooks-join-scope-blocking",
    thread_local_destructors_may_use_weft => "tls-destructor-uses-weft",
    thread_local_destructors_on_workers_may_use_weft => "tls-destructor-on-worker-uses-weft",
    a_pool_in_a_thread_local_drops_cleanly => "pool-in-thread-local",
    a_bomb_payload_without_a_handler_leaves_the_worker_alive => "bomb-without-handler",
    a_bomb_payload_dropped_by_the_handler_leaves_the_worker_alive => "bomb-dropped-by-handler",
    bombs_in_a_scope_reach_the_caller => "bomb-in-scope",
    bombs_in_a_join_reach_the_caller => "bomb-in-join",
    bombs_through_join_handles_reach_the_caller => "bomb-through-join-handles",
    a_panicking_panic_handler_leaves_the_worker_alive => "panic-handler-panics",
    a_long_spin_does_not_block_drop => "long-spin-does-not-block-drop",
    signalling_a_deep_any_chain_does_not_overflow => "deep-any-chain-signal",
    dropping_a_long_any_chain_does_not_overflow => "deep-any-chain-drop",
    extreme_durations_neither_overflow_nor_wait => "extreme-durations",
    a_pool_dropped_in_its_own_task_reports_parked_futures => "pool-dropped-in-own-task",
    a_pool_dropped_in_its_own_future_reports_parked_futures => "pool-dropped-in-own-future",
    a_panicking_thread_name_leaves_no_threads => "panicking-thread-name",
    a_panicking_spare_thread_name_leaves_the_pool_working => "panicking-spare-thread-name",
    worker_index_in_blocking_and_on_a_spare => "worker-index-in-blocking-and-spare",
    bursts_run_every_task_exactly_once => "burst-exactly-once",
    handles_after_the_drop_give_tasks_back => "handle-after-drop",
    drop_runs_tasks_spawned_while_draining => "drop-drains-spawn-chains",
    parked_future_destructors_may_use_weft => "parked-future-destructor-uses-weft",
    panicking_future_destructors_at_pool_drop => "future-destructor-panics-on-pool-drop",
    a_panicking_start_hook => "panicking-start-hook",
    a_panicking_stop_hook => "panicking-stop-hook",
    huge_pools_with_tasks_from_hooks => "huge-pools-with-hook-tasks",
    blocking_calls_racing_a_drop => "blocking-races-drop",
    nested_pools_dropped_in_each_others_tasks => "nested-pools-dropped-in-tasks",
    a_panicking_scope_closure_waits_for_its_tasks => "scope-op-panics-with-tasks-running",
    ticket_futures_at_pool_drop => "ticket-futures-on-pool-drop",
    wakers_may_outlive_their_pool => "wakers-outlive-the-pool",
    futures_may_wake_in_their_destructors => "futures-wake-in-their-destructors",
    join_handles_awaited_across_a_drop_report_err => "join-handles-awaited-across-a-drop",
    build_global_racing_first_use => "build-global-races-first-use",
    slow_hooks_then_drop_run_every_task => "slow-hooks-then-drop",
    panic_handler_spawns_during_drop_all_run => "panic-handler-spawns-during-drop",
    a_pool_dropped_by_a_task_on_its_spare => "pool-dropped-by-a-task-on-a-spare",
    stop_hooks_spawning_through_the_pools_own_handle => "stop-hook-spawns-through-own-handle",
    the_last_pool_reference_dropped_by_its_own_tasks => "last-pool-reference-dropped-by-own-tasks",
    every_pool_entry_point_works_on_a_spare => "pool-entry-points-on-a-spare",
    outputs_that_panic_on_drop => "bomb-valued-outputs",
    hostile_builder_settings_fail_cleanly => "hostile-builder-settings",
    a_nul_in_a_later_thread_name_leaves_no_threads => "nul-thread-name-mid-build",
    futures_nobody_can_wake_are_dropped => "futures-nobody-can-wake",
    stop_hooks_that_spawn_then_throw_a_bomb_while_spawns_race_the_drop => "bombing-stop-hooks-racing-spawns",
    a_future_and_its_output_both_panicking_on_drop_complete_the_handle => "future-and-output-destructors-panic",
    a_failed_build_joins_the_spares_its_start_hooks_started => "failed-build-joins-spares-of-start-hooks",
    suspended_waits_woken_from_other_threads_race_the_drop => "suspended-waits-race-the-drop",
    stop_hooks_may_suspend_on_tasks_they_spawn => "stop-hooks-suspend-on-tasks",
    bombs_thrown_after_a_suspended_wait_are_contained => "bombs-after-suspension",
    shutdown_timeout_races_spawns_through_handles => "shutdown-timeout-races-spawns",
    a_building_threads_seat_races_its_drop_with_spawns_wakes_hooks_and_bombs => "adopted-seat-races-the-drop",
    parallel_loops_in_blocking_hooks_and_spawned_tasks_race_the_drop => "parallel-loops-race-the-drop",
    first_calls_from_four_threads_race_a_starting_pool_and_its_drop => "first-calls-race-a-starting-pool",
    waits_past_the_kernels_map_limit_help_and_lose_no_task => "waits-past-the-map-limit",
    two_default_pools_past_the_kernels_map_limit_lose_no_task => "two-default-pools-past-the-map-limit",
    waits_and_blocking_past_the_address_space_lose_no_task => "waits-and-blocking-past-the-address-space",
    threads_past_the_address_space_fail_builds_cleanly_and_blocking_goes_on => "threads-past-the-address-space",
    shutdown_background_races_spawns_suspended_waits_and_bombs => "shutdown-background-races-spawns-waits-and-bombs",
    a_borrowing_spawn_handler_that_fails_midway_leaves_no_thread_running => "borrowing-spawn-handler-fails-midway",
    into_global_races_first_use_of_the_global_pool => "into-global-races-first-use",
    waits_with_no_stack_left_to_help_race_the_drop_hooks_and_bombs => "stackless-waits-race-the-drop",
}
