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

use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Barrier, Mutex, OnceLock};
use std::task::{Poll, Waker};
use std::thread;
use std::time::{Duration, Instant};

mod common;

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

// --- 1. shutdown racing spawns and wake-ups -------------------------------

/// Which `Handle` call the spawning threads of [`shutdown_races_spawns`] use.
#[derive(Clone, Copy, Debug)]
enum Via {
    Spawn,
    SpawnOn,
    SpawnFifo,
    /// Each accepted call runs once on every worker.
    SpawnBroadcast,
}

/// Threads spawn through a `Handle` as fast as they can while the pool is
/// dropped: every drop returns, every spawn after it fails, and every spawn
/// that was accepted ran exactly once (a broadcast once per worker).
fn shutdown_races_spawns(via: Via, worker_counts: &[usize]) {
    let started = Instant::now();
    let mut round = 0;
    while round < 100 && (round < 10 || started.elapsed() < Duration::from_secs(5)) {
        let workers = worker_counts[round % worker_counts.len()];
        let pool = Pool::builder().workers(workers).build().unwrap();
        let spammers = 2 + round % 2;
        let barrier = Arc::new(Barrier::new(spammers + 1));
        let accepted = counter();
        let ran = counter();
        let threads: Vec<_> = (0..spammers)
            .map(|_| {
                let handle = pool.handle();
                let barrier = Arc::clone(&barrier);
                let accepted = Arc::clone(&accepted);
                let ran = Arc::clone(&ran);
                thread::spawn(move || {
                    barrier.wait();
                    loop {
                        let ran = Arc::clone(&ran);
                        let (refused, runs) = match via {
                            Via::Spawn => (handle.spawn(move || bump(&ran)).is_err(), 1),
                            Via::SpawnOn => (handle.spawn_on(0, move || bump(&ran)).is_err(), 1),
                            Via::SpawnFifo => (handle.spawn_fifo(move || bump(&ran)).is_err(), 1),
                            Via::SpawnBroadcast => (
                                handle.spawn_broadcast(move |_| bump(&ran)).is_err(),
                                workers,
                            ),
                        };
                        if refused {
                            break;
                        }
                        accepted.fetch_add(runs, SeqCst);
                    }
                    assert!(handle.is_closed());
                    assert!(handle.spawn(|| ()).is_err(), "a spawn after the drop");
                })
            })
            .collect();
        barrier.wait();
        thread::sleep(Duration::from_micros(100 * (round % 5) as u64));
        drop(pool);
        for spammer in threads {
            spammer.join().expect("spammer thread");
        }
        assert_eq!(
            ran.load(SeqCst),
            accepted.load(SeqCst),
            "round {round}: tasks accepted through {via:?} did not all run by the drop",
        );
        round += 1;
    }
}

fn bump(count: &AtomicUsize) {
    count.fetch_add(1, SeqCst);
}

/// A closure that records whether it ran, and whether it was dropped unrun.
struct Tally {
    ran: Arc<AtomicUsize>,
    dropped_unrun: Arc<AtomicUsize>,
    done: bool,
}

impl Tally {
    fn run(mut self) {
        self.done = true;
        bump(&self.ran);
    }
}

impl Drop for Tally {
    fn drop(&mut self) {
        if !self.done {
            bump(&self.dropped_unrun);
        }
    }
}

/// One thread aborts tasks while their pool is dropped and its workers
/// start them: every task either ran or was dropped unrun, exactly once,
/// and every handle reports which (`Aborted` only for an unrun one).
fn shutdown_races_aborts() {
    for round in 0..40 {
        let pool = Pool::builder().workers(2 + round % 3).build().unwrap();
        let ran = counter();
        let dropped_unrun = counter();
        let handles: Vec<JoinHandle<()>> = (0..64)
            .map(|_| {
                let tally = Tally {
                    ran: Arc::clone(&ran),
                    dropped_unrun: Arc::clone(&dropped_unrun),
                    done: false,
                };
                pool.spawn_with_handle(move || tally.run())
            })
            .collect();
        let handles = Arc::new(handles);
        let aborter = {
            let handles = Arc::clone(&handles);
            thread::spawn(move || {
                for handle in handles.iter().rev() {
                    handle.abort();
                }
            })
        };
        drop(pool);
        aborter.join().expect("aborting thread");
        assert_eq!(
            ran.load(SeqCst) + dropped_unrun.load(SeqCst),
            64,
            "round {round}: a task neither ran nor was dropped, or both"
        );
        let handles = Arc::try_unwrap(handles).expect("the aborter is done");
        let aborted = handles
            .into_iter()
            .map(|handle| join_within(handle, "a task of a dropped pool"))
            .filter(|result| {
                result
                    .as_ref()
                    .is_err_and(|payload| payload.is::<weft::Aborted>())
            })
            .count();
        assert_eq!(aborted, dropped_unrun.load(SeqCst), "round {round}");
    }
}

/// Counts its drop.
struct CountsDrop(Arc<AtomicUsize>);

impl Drop for CountsDrop {
    fn drop(&mut self) {
        bump(&self.0);
    }
}

/// A future's task is one allocation shared by its handle, its wakers and
/// its queued poll, and whoever lets go of the last waker or poll drops a
/// pending future. Raced here against the pool's drop: one thread aborts
/// futures, another takes the wakers they left out and wakes or drops them,
/// some futures' destructors panic (one with a payload that panics when
/// dropped). Every future is dropped exactly once, the drop returns (or
/// hands a destructor's panic on), and every handle completes with `Err`.
fn shutdown_races_future_aborts() {
    const FUTURES: usize = 32;
    for round in 0..30 {
        let pool = Pool::builder().workers(2 + round % 3).build().unwrap();
        let dropped = counter();
        let slots: Arc<Vec<Mutex<Option<Waker>>>> =
            Arc::new((0..FUTURES).map(|_| Mutex::new(None)).collect());
        let handles: Vec<JoinHandle<()>> = (0..FUTURES)
            .map(|i| {
                let slots = Arc::clone(&slots);
                let guard = (
                    CountsDrop(Arc::clone(&dropped)),
                    (i % 8 == 3).then(|| PanicsOnDrop { bomb: i % 16 == 11 }),
                );
                pool.spawn_future(async move {
                    let _guard = guard;
                    std::future::poll_fn(|cx| {
                        *slots[i].lock().unwrap() = Some(cx.waker().clone());
                        Poll::<()>::Pending
                    })
                    .await;
                })
            })
            .collect();
        let handles = Arc::new(handles);
        let aborter = {
            let handles = Arc::clone(&handles);
            thread::spawn(move || {
                for handle in handles.iter().rev().step_by(2) {
                    handle.abort();
                }
            })
        };
        let waker_user = {
            let slots = Arc::clone(&slots);
            thread::spawn(move || {
                for _ in 0..4 {
                    for (i, slot) in slots.iter().enumerate() {
                        let waker = slot.lock().unwrap().take();
                        match waker {
                            Some(waker) if i % 3 == 0 => drop(waker),
                            Some(waker) => waker.wake(),
                            None => {}
                        }
                    }
                    thread::yield_now();
                }
            })
        };
        thread::sleep(Duration::from_micros(100 * (round % 4) as u64));
        forget_panic(panic::catch_unwind(AssertUnwindSafe(move || drop(pool))));
        aborter.join().expect("the aborting thread");
        waker_user.join().expect("the waking thread");
        let handles = Arc::try_unwrap(handles).expect("the aborter is done");
        for (i, handle) in handles.into_iter().enumerate() {
            assert!(
                forget_panic(join_within(handle, "a future of a dropped pool")),
                "round {round}: future {i}, which never finishes, reported Ok"
            );
        }
        // Wakers still left out belong to futures the pool's drop dropped.
        drop(slots);
        assert_eq!(
            dropped.load(SeqCst),
            FUTURES,
            "round {round}: a future was not dropped, or dropped twice"
        );
    }
}

/// Foreign threads keep waking futures parked on `Event`s while the pool is
/// dropped: the drop returns, and every future's handle completes (`Err` for
/// the ones that could never finish).
fn shutdown_races_wakes() {
    let started = Instant::now();
    let mut round = 0;
    while round < 60 && (round < 10 || started.elapsed() < Duration::from_secs(5)) {
        let pool = Pool::builder().workers(2 + round % 3).build().unwrap();
        let never = Arc::new(AtomicBool::new(false));
        let auto: Vec<Event> = (0..8).map(|_| Event::new(EventMode::Auto)).collect();
        let manual: Vec<Event> = (0..8).map(|_| Event::new(EventMode::Manual)).collect();
        // Futures that wait again after every wake: they never finish.
        let forever: Vec<JoinHandle<()>> = auto
            .iter()
            .map(|event| {
                let event = event.clone();
                let never = Arc::clone(&never);
                pool.spawn_future(async move {
                    while !never.load(SeqCst) {
                        event.wait_async().await;
                    }
                })
            })
            .collect();
        let once: Vec<JoinHandle<usize>> = manual
            .iter()
            .enumerate()
            .map(|(i, event)| {
                let event = event.clone();
                pool.spawn_future(async move {
                    event.wait_async().await;
                    i
                })
            })
            .collect();
        let stop = Arc::new(AtomicBool::new(false));
        let signallers: Vec<_> = (0..2)
            .map(|t| {
                let events: Vec<Event> = auto.iter().chain(manual.iter()).cloned().collect();
                let stop = Arc::clone(&stop);
                thread::spawn(move || {
                    while !stop.load(SeqCst) {
                        for event in events.iter().skip(t) {
                            event.signal();
                        }
                        thread::yield_now();
                    }
                })
            })
            .collect();
        thread::sleep(Duration::from_micros(200 * (round % 5) as u64));
        drop(pool);
        // The signals go on: a wake after the drop must not revive anything.
        for (i, handle) in forever.into_iter().enumerate() {
            let result = join_within(handle, "a parked future after the drop");
            assert!(
                forget_panic(result),
                "round {round}: future {i} that never finishes reported Ok"
            );
        }
        for (i, handle) in once.into_iter().enumerate() {
            if let Ok(value) = join_within(handle, "a woken future after the drop") {
                assert_eq!(value, i);
            }
        }
        stop.store(true, SeqCst);
        for signaller in signallers {
            signaller.join().expect("signaller thread");
        }
        round += 1;
    }
}

// --- 2. hooks that spawn and signal ----------------------------------------

/// Tasks spawned from `on_thread_start` all run, even when the pool is
/// dropped right after `build()`.
fn start_hook_spawns() {
    for round in 0..50 {
        let hooks = counter();
        let ran = counter();
        let pool = {
            let hooks = Arc::clone(&hooks);
            let ran = Arc::clone(&ran);
            Pool::builder()
                .workers(4)
                .on_thread_start(move |_| {
                    hooks.fetch_add(1, SeqCst);
                    let ran = Arc::clone(&ran);
                    weft::spawn(move || {
                        ran.fetch_add(1, SeqCst);
                    });
                })
                .build()
                .unwrap()
        };
        drop(pool);
        assert_eq!(hooks.load(SeqCst), 4, "round {round}: start hooks run");
        assert_eq!(
            ran.load(SeqCst),
            4,
            "round {round}: tasks spawned by start hooks had not all run when drop returned"
        );
    }
}

/// Tasks spawned from `on_thread_stop` have all run when the drop returns.
fn stop_hook_spawns() {
    for round in 0..30 {
        let workers = 2 + round % 4;
        let ran = counter();
        let pool = {
            let ran = Arc::clone(&ran);
            Pool::builder()
                .workers(workers)
                .on_thread_stop(move |_| {
                    // Every way of queuing work from a worker: LIFO, FIFO, a
                    // broadcast to every worker (all of them stopping too),
                    // and a join whose second half others may take.
                    let (lifo, fifo, each) = (Arc::clone(&ran), Arc::clone(&ran), Arc::clone(&ran));
                    weft::spawn(move || bump(&lifo));
                    weft::spawn_fifo(move || bump(&fifo));
                    weft::spawn_broadcast(move |_| bump(&each));
                    weft::join(|| bump(&ran), || bump(&ran));
                })
                .build()
                .unwrap()
        };
        if round % 2 == 0 {
            pool.spawn(|| ());
        }
        drop(pool);
        assert_eq!(
            ran.load(SeqCst),
            workers * (4 + workers),
            "round {round}: tasks spawned by stop hooks had not all run when drop returned"
        );
    }
}

/// Futures spawned from `on_thread_stop` all complete with their output.
fn stop_hook_spawns_futures() {
    for round in 0..20 {
        let workers = 2 + round % 3;
        let (sender, receiver) = mpsc::channel::<JoinHandle<usize>>();
        let sender = Mutex::new(sender);
        let pool = Pool::builder()
            .workers(workers)
            .on_thread_stop(move |index| {
                let handle = weft::spawn_future(async move { index });
                sender.lock().unwrap().send(handle).unwrap();
            })
            .build()
            .unwrap();
        pool.spawn(|| ());
        drop(pool);
        let handles: Vec<_> = receiver.try_iter().collect();
        assert_eq!(handles.len(), workers, "round {round}: stop hooks run");
        let mut outputs: Vec<usize> = handles
            .into_iter()
            .map(
                |handle| match join_within(handle, "a future spawned by a stop hook") {
                    Ok(index) => index,
                    Err(_) => panic!("round {round}: a future spawned by a stop hook reported Err"),
                },
            )
            .collect();
        outputs.sort_unstable();
        assert_eq!(outputs, (0..workers).collect::<Vec<_>>());
    }
}

/// A future parked on an event that `on_thread_stop` signals completes with
/// its output.
fn stop_hook_signals_parked_future() {
    for round in 0..20 {
        let event = Event::new(EventMode::Manual);
        let pool = {
            let event = event.clone();
            Pool::builder()
                .workers(2)
                .on_thread_stop(move |_| event.signal())
                .build()
                .unwrap()
        };
        let waiting = {
            let event = event.clone();
            pool.spawn_future(async move {
                event.wait_async().await;
                7
            })
        };
        thread::sleep(Duration::from_millis(2));
        drop(pool);
        match join_within(waiting, "a future woken by a stop hook") {
            Ok(value) => assert_eq!(value, 7),
            Err(_) => panic!("round {round}: a future woken by a stop hook reported Err"),
        }
    }
}

/// Hooks that fork-join, open scopes and block: each returns its results and
/// the pool drops.
fn hooks_join_scope_blocking() {
    for _ in 0..10 {
        let starts = counter();
        let stops = counter();
        let pool = {
            let starts = Arc::clone(&starts);
            let stops = Arc::clone(&stops);
            Pool::builder()
                .workers(3)
                .on_thread_start(move |index| {
                    assert_eq!(weft::join(|| 1, || 2), (1, 2));
                    let mut hit = false;
                    weft::scope(|s| s.spawn(|_| hit = true));
                    assert!(hit);
                    assert_eq!(weft::blocking(|| 5), 5);
                    // Spare threads (indexes past the workers') run the
                    // hooks too: count workers only.
                    if index < 3 {
                        starts.fetch_add(1, SeqCst);
                    }
                })
                .on_thread_stop(move |index| {
                    assert_eq!(weft::join(|| 3, || 4), (3, 4));
                    let mut hit = false;
                    weft::scope(|s| s.spawn(|_| hit = true));
                    assert!(hit);
                    assert_eq!(weft::blocking(|| 6), 6);
                    if index < 3 {
                        stops.fetch_add(1, SeqCst);
                    }
                })
                .build()
                .unwrap()
        };
        assert_eq!(pool.join(|| 1, || 2), (1, 2));
        drop(pool);
        assert_eq!(starts.load(SeqCst), 3);
        assert_eq!(stops.load(SeqCst), 3);
    }
}

// --- 3. thread-local destructors that use weft ------------------------------

#[derive(Debug, PartialEq)]
struct DtorReport {
    spawned: bool,
    joined: (i32, i32),
    scoped: bool,
    future: Option<i32>,
}

/// Uses weft's free functions from its destructor and reports what it got.
struct UsesWeft {
    reports: Arc<Mutex<Vec<DtorReport>>>,
}

impl Drop for UsesWeft {
    fn drop(&mut self) {
        let (sender, receiver) = mpsc::channel();
        weft::spawn(move || {
            let _ = sender.send(());
        });
        let spawned = receiver.recv_timeout(WAIT).is_ok();
        let joined = weft::join(|| 1, || 2);
        let mut scoped = false;
        weft::scope(|s| s.spawn(|_| scoped = true));
        let future = match weft::spawn_future(async { 3 }).join_timeout(WAIT) {
            Ok(Ok(value)) => Some(value),
            _ => None,
        };
        self.reports.lock().unwrap().push(DtorReport {
            spawned,
            joined,
            scoped,
            future,
        });
    }
}

thread_local! {
    static USES_WEFT: RefCell<Option<UsesWeft>> = const { RefCell::new(None) };
    static POOL: RefCell<Option<Pool>> = const { RefCell::new(None) };
}

const GOOD_REPORT: DtorReport = DtorReport {
    spawned: true,
    joined: (1, 2),
    scoped: true,
    future: Some(3),
};

/// A thread-local whose destructor spawns, joins, scopes and spawns a future
/// on a plain thread: no abort, and each call does its job. Once with the
/// thread-local set before the thread first touches weft (so it is destroyed
/// after weft's own thread-locals), once after.
fn tls_destructor_uses_weft() {
    let reports = Arc::new(Mutex::new(Vec::new()));
    for set_first in [true, false, true, false] {
        let reports_for_thread = Arc::clone(&reports);
        thread::spawn(move || {
            let set = || {
                USES_WEFT.with(|slot| {
                    *slot.borrow_mut() = Some(UsesWeft {
                        reports: reports_for_thread.clone(),
                    })
                });
            };
            if set_first {
                set();
            }
            assert_eq!(weft::join(|| 1, || 2), (1, 2));
            let pool = Pool::builder().workers(2).build().unwrap();
            assert_eq!(pool.install(|| weft::join(|| 1, || 2)), (1, 2));
            weft::block_on(weft::spawn_future(async {})).unwrap();
            drop(pool);
            if !set_first {
                set();
            }
        })
        .join()
        .expect("the thread exits cleanly");
    }
    let reports = reports.lock().unwrap();
    assert_eq!(reports.len(), 4, "every destructor ran to its end");
    for report in reports.iter() {
        assert_eq!(*report, GOOD_REPORT);
    }
}

/// The same destructor on worker threads (set by `on_thread_start`), which
/// runs as each worker exits.
fn tls_destructor_on_worker() {
    for _ in 0..5 {
        let reports = Arc::new(Mutex::new(Vec::new()));
        let pool = {
            let reports = Arc::clone(&reports);
            Pool::builder()
                .workers(3)
                .on_thread_start(move |_| {
                    let reports = Arc::clone(&reports);
                    USES_WEFT.with(|slot| *slot.borrow_mut() = Some(UsesWeft { reports }));
                })
                .build()
                .unwrap()
        };
        assert_eq!(pool.join(|| 1, || 2), (1, 2));
        drop(pool);
        // Joined workers have run their thread-local destructors.
        let reports = reports.lock().unwrap();
        assert_eq!(reports.len(), 3, "every worker's destructor ran to its end");
        for report in reports.iter() {
            assert_eq!(*report, GOOD_REPORT);
        }
    }
}

/// A pool stored in a thread-local, with tasks queued and a parked future,
/// dropped as its thread exits: no abort, the tasks ran, the future reports
/// `Err`.
fn pool_in_thread_local() {
    for _ in 0..5 {
        let ran = counter();
        let (sender, receiver) = mpsc::channel();
        let never = Event::new(EventMode::Manual);
        {
            let ran = Arc::clone(&ran);
            let never = never.clone();
            thread::spawn(move || {
                let pool = Pool::builder().workers(2).build().unwrap();
                for _ in 0..16 {
                    let ran = Arc::clone(&ran);
                    pool.spawn(move || {
                        thread::sleep(Duration::from_millis(1));
                        ran.fetch_add(1, SeqCst);
                    });
                }
                sender.send(pool.spawn_future(never.wait_async())).unwrap();
                POOL.with(|slot| *slot.borrow_mut() = Some(pool));
            })
            .join()
            .expect("the thread exits cleanly");
        }
        assert_eq!(
            ran.load(SeqCst),
            16,
            "queued tasks ran before the pool went"
        );
        let parked = recv(&receiver, "the parked future's handle");
        assert!(forget_panic(join_within(
            parked,
            "a future parked in a dropped pool"
        )));
        drop(never);
    }
}

// --- 4. panics whose payload panics on drop ---------------------------------

/// A fire-and-forget task panics with a payload that panics on drop, on a
/// one-worker pool: the worker survives (unpinned and pinned tasks still run),
/// the drop returns, and no thread is left believing it is a worker.
fn bomb_in_task(dropping_handler: bool) {
    let handled = counter();
    let mut builder = Pool::builder().workers(1);
    if dropping_handler {
        let handled = Arc::clone(&handled);
        builder = builder.panic_handler(move |payload| {
            handled.fetch_add(1, SeqCst);
            drop(payload);
        });
    }
    let pool = builder.build().unwrap();
    for _ in 0..3 {
        pool.spawn(throw_bomb);
        pool.spawn_on(0, throw_bomb);
    }
    pool_still_works(&pool);
    if dropping_handler {
        assert_eq!(handled.load(SeqCst), 6, "the handler saw every panic");
    }
    drop(pool);
    assert_eq!(weft::current_worker_index(), None);
    assert_eq!(
        thread::spawn(weft::current_worker_index).join().unwrap(),
        None
    );
}

/// Two scope tasks panic with bombs: the scope hands a panic to its caller
/// instead of hanging, and the pool goes on.
fn bomb_in_scope() {
    for workers in [1, 2, 4] {
        let pool = Pool::builder().workers(workers).build().unwrap();
        for _ in 0..5 {
            let result = panic::catch_unwind(AssertUnwindSafe(|| {
                pool.scope(|s| {
                    s.spawn(|_| throw_bomb());
                    s.spawn(|_| throw_bomb());
                    s.spawn(|_| ());
                });
            }));
            assert!(
                forget_panic(result),
                "the scope swallowed its tasks' panics"
            );
        }
        // Outside any pool, through the global one.
        let result = panic::catch_unwind(|| {
            weft::scope(|s| {
                s.spawn(|_| throw_bomb());
                s.spawn(|_| throw_bomb());
            });
        });
        assert!(forget_panic(result));
        pool_still_works(&pool);
        drop(pool);
    }
}

/// Both halves of a join panic with bombs: the join hands a panic on.
fn bomb_in_join() {
    let pool = Pool::builder().workers(2).build().unwrap();
    for _ in 0..5 {
        let result = panic::catch_unwind(AssertUnwindSafe(|| pool.join(throw_bomb, throw_bomb)));
        assert!(forget_panic(result));
        let result = panic::catch_unwind(AssertUnwindSafe(|| pool.join(throw_bomb, || 1)));
        assert!(forget_panic(result));
        let result = panic::catch_unwind(AssertUnwindSafe(|| pool.join(|| 1, throw_bomb)));
        assert!(forget_panic(result));
        // Nested, on a worker.
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| weft::join(throw_bomb, throw_bomb))
        }));
        assert!(forget_panic(result));
    }
    let result = panic::catch_unwind(|| weft::join(throw_bomb, throw_bomb));
    assert!(forget_panic(result));
    // The second half taken by another worker (the first waits for it to
    // start and never joins again, so it is forced off the join stack), both
    // halves throwing bombs: the stolen half's payload is dropped safely.
    for _ in 0..5 {
        let started = AtomicBool::new(false);
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.join(
                || {
                    assert!(eventually(WAIT, || started.load(SeqCst)), "b never started");
                    throw_bomb()
                },
                || {
                    started.store(true, SeqCst);
                    throw_bomb()
                },
            )
        }));
        assert!(forget_panic(result));
    }
    pool_still_works(&pool);
    drop(pool);
}

/// Bombs through `spawn_with_handle`, `spawn_future` and `install`: each
/// handle reports the panic, and the pool goes on.
fn bomb_through_join_handles() {
    let pool = Pool::builder().workers(2).build().unwrap();
    for _ in 0..5 {
        let handle = pool.spawn_with_handle(throw_bomb);
        assert!(forget_panic(join_within(
            handle,
            "a task that threw a bomb"
        )));
        let handle = pool.spawn_future(async { throw_bomb() });
        assert!(forget_panic(join_within(
            handle,
            "a future that threw a bomb"
        )));
        let result = panic::catch_unwind(AssertUnwindSafe(|| pool.install(throw_bomb)));
        assert!(forget_panic(result));
        // Detached handles, dropped before their tasks finish: nobody ever
        // takes the bomb out, so the pool's side drops it.
        let (gate, gated) = mpsc::channel::<()>();
        let gated = Arc::new(Mutex::new(gated));
        let wait = move || {
            let _ = gated.lock().unwrap().recv_timeout(WAIT);
        };
        let first = wait.clone();
        drop(pool.spawn_with_handle(move || {
            first();
            throw_bomb();
        }));
        drop(pool.spawn_future(async move {
            wait();
            throw_bomb();
        }));
        gate.send(()).unwrap();
        gate.send(()).unwrap();
    }
    pool_still_works(&pool);
    drop(pool);
}

/// A panic handler that itself panics (plainly, and with a bomb): the worker
/// of a one-worker pool survives and the drop returns.
fn panic_handler_panics() {
    for bomb in [false, true] {
        let pool = Pool::builder()
            .workers(1)
            .panic_handler(move |payload| {
                std::mem::forget(payload);
                if bomb {
                    throw_bomb();
                } else {
                    panic!("the panic handler panicked");
                }
            })
            .build()
            .unwrap();
        for _ in 0..3 {
            pool.spawn(|| panic!("a task panicked"));
            pool.spawn_on(0, throw_bomb);
        }
        pool_still_works(&pool);
        drop(pool);
    }
}

// --- 5. a long spin does not block drop --------------------------------------

fn long_spin_does_not_block_drop() {
    let builders = [
        Pool::builder().workers(1).spin(Duration::from_secs(3600)),
        Pool::builder()
            .workers(2)
            .max_spinning(2)
            .spin(Duration::MAX),
        Pool::builder()
            .workers(16)
            .max_spinning(16)
            .spin(Duration::MAX),
    ];
    for builder in builders {
        let started = Instant::now();
        let pool = builder.build().unwrap();
        runs_on(&pool, "a task on a spinning pool");
        assert_eq!(pool.install(|| 6 * 7), 42);
        pool.spawn(|| ());
        drop(pool);
        let elapsed = started.elapsed();
        assert!(
            elapsed < Duration::from_secs(10),
            "a pool with a long spin took {elapsed:?} to drop"
        );
    }
}

// --- 6. deep recursion ---------------------------------------------------------

/// A chain of `depth` `Event::any` events over one first event and one job
/// each: returns the first, the last, and the jobs.
fn any_chain(depth: usize) -> (Event, Event, Vec<Event>) {
    let first = Event::new(EventMode::Manual);
    let mut acc = first.clone();
    let mut jobs = Vec::with_capacity(depth);
    for _ in 0..depth {
        let job = Event::new(EventMode::Manual);
        acc = Event::any(EventMode::Manual, &[acc, job.clone()]);
        jobs.push(job);
    }
    (first, acc, jobs)
}

const SMALL_STACK: usize = 256 * 1024;

/// Signalling the root of a 20,000-deep `Event::any` chain, from a worker with
/// a small stack and from plain threads, reaches the last event without
/// overflowing any stack; so does dropping the chain there.
fn deep_any_chain_signal() {
    const DEPTH: usize = 20_000;
    let pool = Pool::builder()
        .workers(2)
        .stack_size(SMALL_STACK)
        .build()
        .unwrap();

    // The root, from a worker; the chain is dropped there too.
    let (first, last, jobs) = any_chain(DEPTH);
    let reached = pool.install(move || {
        first.signal();
        let reached = last.is_signalled();
        drop((last, first, jobs));
        reached
    });
    assert!(
        reached,
        "a signal from a worker did not reach the end of the chain"
    );

    // A job near the bottom, from a worker.
    let (first, last, jobs) = any_chain(DEPTH);
    pool.install(|| jobs[0].signal());
    assert!(last.is_signalled());
    drop((first, last, jobs));

    // The root, from the test thread.
    let (first, last, jobs) = any_chain(DEPTH);
    first.signal();
    assert!(last.is_signalled());
    drop((first, last, jobs));

    // The root, from a plain thread with a small stack.
    let (first, last, jobs) = any_chain(DEPTH);
    let reached = thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(move || {
            first.signal();
            let reached = last.is_signalled();
            drop((last, first, jobs));
            reached
        })
        .unwrap()
        .join()
        .expect("no stack overflow on a small stack");
    assert!(reached);

    // A future waiting at the end of the chain is released.
    let (first, last, jobs) = any_chain(DEPTH);
    let waiting = pool.spawn_future(last.wait_async());
    pool.spawn(move || first.signal());
    assert!(!forget_panic(join_within(
        waiting,
        "a future at the end of a deep chain"
    )));
    drop(pool);
    drop((last, jobs));
}

/// A 1,000,000-long chain of `Event::any` events dropped on a thread with a
/// small stack: no overflow.
fn deep_any_chain_drop() {
    thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(|| {
            let mut acc = Event::new(EventMode::Manual);
            for _ in 0..1_000_000 {
                acc = Event::any(EventMode::Manual, &[acc]);
            }
            drop(acc);
        })
        .unwrap()
        .join()
        .expect("no stack overflow dropping a long chain");
}

// --- 7. extreme durations --------------------------------------------------------

fn after(delay: Duration, action: impl FnOnce() + Send + 'static) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        thread::sleep(delay);
        action();
    })
}

/// Every wait that takes a duration, with `Duration::MAX` (must wait for the
/// thing and return it, not overflow) and `Duration::ZERO` (must return at
/// once and report that nothing came). `on_worker`: the calls are made on a
/// worker of `pool`, where waits run other tasks meanwhile.
fn duration_checks(pool: &Pool, on_worker: bool) {
    let prompt = Duration::from_secs(2);

    // JoinHandle::join_timeout, finished and running.
    let finished = pool.spawn_with_handle(|| 5);
    assert!(eventually(WAIT, || finished.is_finished()));
    match finished.join_timeout(Duration::MAX) {
        Ok(Ok(value)) => assert_eq!(value, 5),
        _ => panic!("join_timeout(MAX) on a finished task"),
    }
    let (gate, gated) = mpsc::channel::<()>();
    let running = pool.spawn_with_handle(move || {
        gated.recv_timeout(WAIT).expect("the gate opens");
        6
    });
    let opener = after(Duration::from_millis(30), move || gate.send(()).unwrap());
    match running.join_timeout(Duration::MAX) {
        Ok(Ok(value)) => assert_eq!(value, 6),
        _ => panic!("join_timeout(MAX) on a running task"),
    }
    opener.join().unwrap();

    // join_timeout(ZERO) on a task that cannot finish yet.
    let (gate, gated) = mpsc::channel::<()>();
    let blocked = pool.spawn_with_handle(move || {
        gated.recv_timeout(WAIT).expect("the gate opens");
        7
    });
    let started = Instant::now();
    let outcome = blocked.join_timeout(Duration::ZERO);
    gate.send(()).unwrap();
    match outcome {
        Err(handle) => {
            assert!(
                started.elapsed() < prompt,
                "join_timeout(ZERO) was not prompt"
            );
            assert_eq!(
                join_within(handle, "a task after join_timeout(ZERO)").unwrap(),
                7
            );
        }
        // A helping worker may have run the task itself.
        Ok(result) if on_worker => assert_eq!(result.unwrap(), 7),
        Ok(_) => panic!("join_timeout(ZERO) reported a task done that was gated"),
    }

    // Event.
    for mode in [EventMode::Manual, EventMode::Auto] {
        let event = Event::new(mode);
        event.signal();
        assert!(
            event.wait_timeout(Duration::MAX),
            "{mode:?}: signalled before"
        );
        let event = Event::new(mode);
        let signaller = {
            let event = event.clone();
            after(Duration::from_millis(20), move || event.signal())
        };
        assert!(
            event.wait_timeout(Duration::MAX),
            "{mode:?}: signalled during"
        );
        signaller.join().unwrap();
        let event = Event::new(mode);
        let started = Instant::now();
        assert!(!event.wait_timeout(Duration::ZERO), "{mode:?}: unsignalled");
        assert!(
            !event.wait_deadline(Instant::now()),
            "{mode:?}: deadline now"
        );
        assert!(started.elapsed() < prompt, "{mode:?}: ZERO was not prompt");
    }

    // WaitGroup.
    let wg = WaitGroup::with_count(2);
    for _ in 0..2 {
        let wg = wg.clone();
        pool.spawn(move || {
            thread::sleep(Duration::from_millis(10));
            wg.done();
        });
    }
    assert!(wg.wait_timeout(Duration::MAX));
    assert!(WaitGroup::new().wait_timeout(Duration::MAX));
    let wg = WaitGroup::with_count(1);
    let started = Instant::now();
    assert!(!wg.wait_timeout(Duration::ZERO));
    assert!(started.elapsed() < prompt);
    wg.done();

    // Condvar.
    let shared = Arc::new((Mutex::new(false), weft::Condvar::new()));
    let notifier = {
        let shared = Arc::clone(&shared);
        after(Duration::from_millis(20), move || {
            *shared.0.lock().unwrap() = true;
            shared.1.notify_one();
        })
    };
    let (mutex, condvar) = &*shared;
    let mut guard = mutex.lock().unwrap();
    while !*guard {
        guard = condvar.wait_timeout(mutex, guard, Duration::MAX).0;
    }
    drop(guard);
    notifier.join().unwrap();
    *mutex.lock().unwrap() = false;
    let notifier = {
        let shared = Arc::clone(&shared);
        after(Duration::from_millis(20), move || {
            *shared.0.lock().unwrap() = true;
            shared.1.notify_all();
        })
    };
    let (guard, timed_out) =
        condvar.wait_timeout_while(mutex, mutex.lock().unwrap(), Duration::MAX, |set| !*set);
    assert!(*guard && !timed_out.timed_out());
    drop(guard);
    notifier.join().unwrap();
    let started = Instant::now();
    let (guard, timed_out) = condvar.wait_timeout(mutex, mutex.lock().unwrap(), Duration::ZERO);
    assert!(
        timed_out.timed_out(),
        "Condvar::wait_timeout(ZERO) without a notification"
    );
    drop(guard);
    let (guard, timed_out) =
        condvar.wait_timeout_while(mutex, mutex.lock().unwrap(), Duration::ZERO, |_| true);
    assert!(timed_out.timed_out());
    drop(guard);
    assert!(started.elapsed() < prompt);
}

fn extreme_durations() {
    let pool = Pool::builder().workers(2).build().unwrap();
    duration_checks(&pool, false);
    pool.install(|| duration_checks(&pool, true));
    let spinning = Pool::builder()
        .workers(2)
        .spin(Duration::MAX)
        .build()
        .unwrap();
    duration_checks(&spinning, false);
    drop(spinning);
    drop(pool);
}

// --- 8. a pool dropped from inside its own task ------------------------------------

/// A task (or future) of the pool takes the last `Pool` out of a mutex and
/// drops it while another future is parked on an event that main keeps alive
/// and never signals: the parked future's handle still completes, with `Err`.
fn pool_dropped_in_own_task(from_future: bool) {
    for round in 0..10 {
        let slot = Arc::new(Mutex::new(Some(
            Pool::builder().workers(2 + round % 2).build().unwrap(),
        )));
        let event = Event::new(EventMode::Manual);
        let parked = slot
            .lock()
            .unwrap()
            .as_ref()
            .unwrap()
            .spawn_future(event.wait_async());
        thread::sleep(Duration::from_millis(2));
        let (sender, receiver) = mpsc::channel();
        let dropper = {
            let slot = Arc::clone(&slot);
            move || {
                let pool = slot.lock().unwrap().take();
                drop(pool);
                sender.send(()).unwrap();
            }
        };
        {
            let guard = slot.lock().unwrap();
            let pool = guard.as_ref().unwrap();
            if from_future {
                drop(pool.spawn_future(async move { dropper() }));
            } else {
                pool.spawn(dropper);
            }
        }
        recv(&receiver, "the drop inside the pool's own task returned");
        assert!(slot.lock().unwrap().is_none());
        assert!(
            forget_panic(join_within(
                parked,
                "a future parked in a pool dropped from inside"
            )),
            "round {round}: a future that was never woken reported Ok"
        );
        drop(event);
    }
}

// --- 9. a panicking thread_name closure ----------------------------------------------

fn panicking_thread_name() {
    build_fails_naming_a_worker(10, 5, true, |i| {
        if i >= 5 {
            panic!("thread_name panicked for worker {i}");
        }
        format!("w{i}")
    });
}

/// Builds `workers` workers named by `name`, which fails (panics, or names
/// a thread so that `spawn` fails) from worker `first_bad` on, three times:
/// the failure reaches the caller (as the panic itself if `must_panic`), no
/// thread is left behind, and every worker that started ran its stop hook.
fn build_fails_naming_a_worker(
    workers: usize,
    first_bad: usize,
    must_panic: bool,
    name: fn(usize) -> String,
) {
    for round in 0..3 {
        let before = thread_count();
        let starts = counter();
        let stops = counter();
        let built = {
            let starts = Arc::clone(&starts);
            let stops = Arc::clone(&stops);
            panic::catch_unwind(move || {
                Pool::builder()
                    .workers(workers)
                    .thread_name(name)
                    .on_thread_start(move |_| {
                        starts.fetch_add(1, SeqCst);
                    })
                    .on_thread_stop(move |_| {
                        stops.fetch_add(1, SeqCst);
                    })
                    .build()
            })
        };
        match built {
            Err(payload) => drop(payload),
            Ok(Err(_)) if !must_panic => {}
            Ok(Err(error)) => panic!("round {round}: the name's panic became an error: {error}"),
            Ok(Ok(_)) => panic!("round {round}: the bad name did not fail the build"),
        }
        assert!(
            eventually(Duration::from_secs(5), || thread_count() <= before),
            "round {round}: {} threads left over from the failed build",
            thread_count().saturating_sub(before)
        );
        assert!(starts.load(SeqCst) <= first_bad);
        assert_eq!(
            stops.load(SeqCst),
            starts.load(SeqCst),
            "round {round}: a started worker did not run its stop hook"
        );
    }
}

/// `thread_name` panics for spare threads only (indexes past the workers):
/// a `blocking` call either runs or hands the panic to its caller, and the
/// pool goes on and drops.
fn panicking_spare_thread_name() {
    let pool = Pool::builder()
        .workers(1)
        .thread_name(|i| {
            if i >= 1 {
                panic!("thread_name panicked for spare {i}");
            }
            format!("w{i}")
        })
        .build()
        .unwrap();
    for _ in 0..3 {
        let outcome = pool.install(|| panic::catch_unwind(|| weft::blocking(|| 5)));
        if let Ok(value) = outcome {
            assert_eq!(value, 5);
        }
        pool_still_works(&pool);
    }
    let (sender, receiver) = mpsc::channel();
    pool.spawn(move || {
        let outcome = panic::catch_unwind(|| weft::blocking(|| 6)).ok();
        sender.send(outcome).unwrap();
    });
    if let Some(value) = recv(&receiver, "a blocking call in a task") {
        assert_eq!(value, 6);
    }
    pool_still_works(&pool);
    drop(pool);
}

// --- 10. current_worker_index in blocking and on a spare ----------------------------

fn worker_index_in_blocking() {
    let pool = Pool::builder().workers(1).build().unwrap();
    let inside = pool.install(|| weft::blocking(weft::current_worker_index));
    assert_eq!(inside, None, "inside `blocking` the thread is not a worker");

    for _ in 0..5 {
        // The only worker blocks in `blocking`; the task spawned meanwhile
        // runs on the spare that stands in for it.
        let (entered_tx, entered_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let blocked = pool.spawn_with_handle(move || {
            weft::blocking(move || {
                entered_tx.send(weft::current_worker_index()).unwrap();
                release_rx
                    .recv_timeout(WAIT)
                    .expect("released by the spare's task");
            });
        });
        assert_eq!(recv(&entered_rx, "the worker entered blocking"), None);
        let (report_tx, report_rx) = mpsc::channel();
        let (pinned_tx, pinned_rx) = mpsc::channel();
        let handle = pool.handle();
        let workers = pool.workers();
        pool.spawn(move || {
            let index = weft::current_worker_index();
            let pinned = panic::catch_unwind(AssertUnwindSafe(|| {
                if let Some(i) = index {
                    handle
                        .spawn_on(i, move || {
                            pinned_tx.send(weft::current_worker_index()).unwrap()
                        })
                        .is_ok()
                } else {
                    false
                }
            }));
            report_tx
                .send((index, pinned.is_ok(), pinned.unwrap_or(false)))
                .unwrap();
            release_tx.send(()).unwrap();
        });
        let (index, no_panic, pinned) = recv(&report_rx, "the task run by the spare");
        if let Some(i) = index {
            assert!(
                i < workers,
                "current_worker_index() = {i} on a pool of {workers}"
            );
        }
        assert!(
            no_panic,
            "spawn_on(current_worker_index()) panicked on a spare"
        );
        join_within(blocked, "the blocked task").unwrap();
        if pinned {
            assert_eq!(
                recv(&pinned_rx, "the task pinned from the spare"),
                index,
                "the pinned task ran elsewhere"
            );
        }
    }
    pool_still_works(&pool);
    drop(pool);
}

// --- 11. bursts: every task exactly once ---------------------------------------------

fn burst_exactly_once() {
    const BURST: usize = 64;
    let pool = Pool::builder().workers(8).build().unwrap();
    let handle = pool.handle();
    let started = Instant::now();
    let mut all_runs = Vec::new();
    let mut round = 0;
    while round < 40 && (round < 10 || started.elapsed() < Duration::from_secs(4)) {
        let runs: Arc<Vec<AtomicUsize>> =
            Arc::new((0..=BURST).map(|_| AtomicUsize::new(0)).collect());
        let wg = WaitGroup::with_count(BURST + 1);
        let task = |i: usize| {
            let runs = Arc::clone(&runs);
            let wg = wg.clone();
            move || {
                if i == BURST {
                    thread::sleep(Duration::from_millis(40));
                }
                runs[i].fetch_add(1, SeqCst);
                wg.done();
            }
        };
        let long_first = round % 2 == 0;
        if long_first {
            pool.spawn(task(BURST));
        }
        if round % 3 == 2 {
            // From two foreign threads at once, through handles.
            let halves: Vec<_> = (0..2)
                .map(|half| {
                    let tasks: Vec<_> = (0..BURST).filter(|i| i % 2 == half).map(task).collect();
                    let handle = handle.clone();
                    thread::spawn(move || {
                        for task in tasks {
                            assert!(handle.spawn(task).is_ok());
                        }
                    })
                })
                .collect();
            for half in halves {
                half.join().unwrap();
            }
        } else {
            for i in 0..BURST {
                pool.spawn(task(i));
            }
        }
        if !long_first {
            pool.spawn(task(BURST));
        }
        assert!(
            wg.wait_timeout(WAIT),
            "round {round}: {} of {} tasks never ran",
            wg.count(),
            BURST + 1
        );
        all_runs.push(runs);
        round += 1;
    }
    drop(pool);
    for (round, runs) in all_runs.iter().enumerate() {
        for (i, count) in runs.iter().enumerate() {
            assert_eq!(
                count.load(SeqCst),
                1,
                "round {round}: task {i} ran {count:?} times"
            );
        }
    }
}

// --- more: every entry point x every lifecycle moment ------------------------------------

/// Calls weft from its destructor: `weft::spawn` (reported through `ran`) and
/// a spawn through `handle` (its outcome sent back).
struct SpawnsOnDrop {
    handle: weft::Handle,
    ran: mpsc::Sender<&'static str>,
    outcome: mpsc::Sender<bool>,
}

impl Drop for SpawnsOnDrop {
    fn drop(&mut self) {
        let ran = self.ran.clone();
        weft::spawn(move || ran.send("weft::spawn").unwrap());
        let ran = self.ran.clone();
        let accepted = self
            .handle
            .spawn(move || ran.send("handle.spawn").unwrap())
            .is_ok();
        assert_eq!(weft::join(|| 1, || 2), (1, 2));
        self.outcome.send(accepted).unwrap();
    }
}

/// `Handle` after the drop: spawns fail and give the task back (from any
/// thread, pinned or not), and a refused task whose captures spawn on drop
/// does not wedge anything.
fn handle_after_drop() {
    let pool = Pool::builder().workers(2).build().unwrap();
    let handle = pool.handle();
    assert!(!handle.is_closed());
    assert_eq!(handle.workers(), 2);
    let (sender, receiver) = mpsc::channel();
    let early = sender.clone();
    handle.spawn(move || early.send("before").unwrap()).unwrap();
    assert_eq!(
        recv(&receiver, "a task spawned through the handle"),
        "before"
    );
    drop(pool);
    assert!(handle.is_closed());

    let late = sender.clone();
    let refused = handle
        .spawn(move || late.send("refused").unwrap())
        .unwrap_err();
    (refused.into_inner())();
    assert_eq!(recv(&receiver, "the refused task, run by hand"), "refused");
    let late = sender.clone();
    let refused = handle
        .spawn_on(1, move || late.send("pinned").unwrap())
        .unwrap_err();
    (refused.into_inner())();
    assert_eq!(recv(&receiver, "the refused pinned task"), "pinned");
    let other = handle.clone();
    assert!(thread::spawn(move || other.spawn(|| ()).is_err())
        .join()
        .unwrap());

    // A refused task whose captures call weft when they are dropped.
    let (ran_tx, ran_rx) = mpsc::channel();
    let (outcome_tx, outcome_rx) = mpsc::channel();
    let guard = SpawnsOnDrop {
        handle: handle.clone(),
        ran: ran_tx,
        outcome: outcome_tx,
    };
    let refused = handle
        .spawn(move || {
            let _guard = guard;
        })
        .unwrap_err();
    drop(refused);
    assert!(!recv(&outcome_rx, "the refused task's destructor"));
    assert_eq!(
        recv(&ran_rx, "weft::spawn from a destructor"),
        "weft::spawn"
    );
}

/// Tasks that spawn more tasks (chains, trees, futures) while the pool is
/// dropped: the drop runs all of them, each once.
fn drop_drains_spawn_chains() {
    fn chain(left: usize, ran: Arc<AtomicUsize>) {
        ran.fetch_add(1, SeqCst);
        if left > 0 {
            weft::spawn(move || chain(left - 1, ran));
        }
    }
    fn tree(depth: u32, ran: Arc<AtomicUsize>) {
        ran.fetch_add(1, SeqCst);
        if depth > 0 {
            let other = Arc::clone(&ran);
            weft::spawn(move || tree(depth - 1, other));
            weft::spawn(move || tree(depth - 1, ran));
        }
    }
    fn future_chain(
        left: usize,
        ran: Arc<AtomicUsize>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
        Box::pin(async move {
            ran.fetch_add(1, SeqCst);
            weft::yield_async().await;
            if left > 0 {
                drop(weft::spawn_future(future_chain(left - 1, ran)));
            }
        })
    }
    for round in 0..20 {
        let pool = Pool::builder().workers(2 + round % 7).build().unwrap();
        let ran = counter();
        for _ in 0..4 {
            let ran = Arc::clone(&ran);
            pool.spawn(move || chain(499, ran));
        }
        {
            let ran = Arc::clone(&ran);
            pool.spawn(move || tree(9, ran)); // 1023 tasks
        }
        for _ in 0..2 {
            drop(pool.spawn_future(future_chain(99, Arc::clone(&ran))));
        }
        drop(pool);
        assert_eq!(
            ran.load(SeqCst),
            4 * 500 + 1023 + 2 * 100,
            "round {round}: the drop returned before the spawned work ran"
        );
    }
}

/// A future parked when its pool is dropped, whose captures call weft in
/// their destructor (`weft::spawn`, a spawn through the dead pool's handle,
/// `weft::join`): the drop returns, the destructor gets through, and a spawn
/// that was accepted runs.
fn parked_future_destructor_uses_weft() {
    for _ in 0..10 {
        let pool = Pool::builder().workers(2).build().unwrap();
        let (ran_tx, ran_rx) = mpsc::channel();
        let (outcome_tx, outcome_rx) = mpsc::channel();
        let guard = SpawnsOnDrop {
            handle: pool.handle(),
            ran: ran_tx,
            outcome: outcome_tx,
        };
        let never = Event::new(EventMode::Manual);
        let parked = {
            let never = never.clone();
            pool.spawn_future(async move {
                let _guard = guard;
                never.wait_async().await;
            })
        };
        thread::sleep(Duration::from_millis(2));
        drop(pool);
        assert!(forget_panic(join_within(
            parked,
            "a future parked at the drop"
        )));
        let accepted = recv(&outcome_rx, "the parked future's destructor");
        let mut ran = vec![recv(&ran_rx, "weft::spawn from a destructor")];
        if accepted {
            ran.push(recv(&ran_rx, "a spawn accepted during the drop"));
        }
        ran.sort_unstable();
        let mut expected = vec!["weft::spawn"];
        if accepted {
            expected.push("handle.spawn");
            expected.sort_unstable();
        }
        assert_eq!(ran, expected);
        drop(never);
    }
}

/// Panics in its destructor: plainly, or with a bomb.
struct PanicsOnDrop {
    bomb: bool,
}

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        if thread::panicking() {
            return;
        }
        if self.bomb {
            throw_bomb();
        } else {
            panic!("a future's destructor panicked");
        }
    }
}

/// Parked futures whose destructors panic when the pool drops them: no
/// abort, the drop returns (or hands a panic on), and every parked future's
/// handle completes with `Err`.
fn future_destructor_panics() {
    for round in 0..5 {
        let pool = Pool::builder().workers(2).build().unwrap();
        let never = Event::new(EventMode::Manual);
        let handles: Vec<JoinHandle<()>> = (0..8)
            .map(|i| {
                let never = never.clone();
                let guard = (i % 4 == 1).then(|| PanicsOnDrop { bomb: i % 8 == 5 });
                pool.spawn_future(async move {
                    let _guard = guard;
                    never.wait_async().await;
                })
            })
            .collect();
        thread::sleep(Duration::from_millis(2));
        let dropped = panic::catch_unwind(AssertUnwindSafe(move || drop(pool)));
        forget_panic(dropped);
        for (i, handle) in handles.into_iter().enumerate() {
            assert!(
                forget_panic(join_within(handle, "a parked future of a dropped pool")),
                "round {round}: future {i} reported Ok"
            );
        }
        drop(never);
    }
    let pool = Pool::builder().workers(2).build().unwrap();
    pool_still_works(&pool);
}

/// `on_thread_start` panics on worker 0: either the build hands the panic on
/// and leaves no thread behind, or the pool it returns works in full
/// (including tasks pinned to worker 0) and drops.
fn panicking_start_hook() {
    for bomb in [false, true] {
        let before = thread_count();
        let built = panic::catch_unwind(move || {
            Pool::builder()
                .workers(4)
                .on_thread_start(move |i| {
                    if i == 0 {
                        if bomb {
                            throw_bomb();
                        }
                        panic!("on_thread_start panicked");
                    }
                })
                .build()
        });
        match built {
            Err(payload) => {
                std::mem::forget(payload);
                assert!(eventually(Duration::from_secs(5), || thread_count() <= before));
            }
            Ok(Err(error)) => panic!("build failed: {error}"),
            Ok(Ok(pool)) => {
                pool_still_works(&pool);
                assert_eq!(pool.broadcast(|i| i), vec![0, 1, 2, 3]);
                let wg = WaitGroup::with_count(64);
                for _ in 0..64 {
                    let wg = wg.clone();
                    pool.spawn(move || {
                        wg.done();
                    });
                }
                assert!(wg.wait_timeout(WAIT));
                drop(pool);
            }
        }
    }
}

/// `on_thread_stop` panics on half the workers: no abort, the drop returns
/// (or hands a panic on), and the other workers' stop hooks still ran.
fn panicking_stop_hook() {
    for bomb in [false, true] {
        let stopped = counter();
        let pool = {
            let stopped = Arc::clone(&stopped);
            Pool::builder()
                .workers(4)
                .on_thread_stop(move |i| {
                    if i % 2 == 0 {
                        if bomb {
                            throw_bomb();
                        }
                        panic!("on_thread_stop panicked");
                    }
                    stopped.fetch_add(1, SeqCst);
                })
                .build()
                .unwrap()
        };
        pool_still_works(&pool);
        let dropped = panic::catch_unwind(AssertUnwindSafe(move || drop(pool)));
        forget_panic(dropped);
        assert_eq!(stopped.load(SeqCst), 2, "the other workers' stop hooks ran");
    }
    let pool = Pool::builder().workers(2).build().unwrap();
    pool_still_works(&pool);
}

/// `builder` with start and stop hooks that each spawn a task counting
/// itself in `start_ran` or `stop_ran`.
fn hooks_that_spawn(
    builder: weft::Builder,
    start_ran: &Arc<AtomicUsize>,
    stop_ran: &Arc<AtomicUsize>,
) -> weft::Builder {
    let (start_ran, stop_ran) = (Arc::clone(start_ran), Arc::clone(stop_ran));
    builder
        .on_thread_start(move |_| {
            let ran = Arc::clone(&start_ran);
            weft::spawn(move || {
                ran.fetch_add(1, SeqCst);
            });
        })
        .on_thread_stop(move |_| {
            let ran = Arc::clone(&stop_ran);
            weft::spawn(move || {
                ran.fetch_add(1, SeqCst);
            });
        })
}

/// Pools of 64-256 workers built and dropped in a loop, with tasks spawned
/// from both hooks and from outside: every task runs.
fn huge_pools_with_hook_tasks() {
    for workers in [64, 128, 256, 100, 256] {
        let from_start = counter();
        let from_stop = counter();
        let from_outside = counter();
        let pool = hooks_that_spawn(Pool::builder().workers(workers), &from_start, &from_stop)
            .build()
            .unwrap();
        for _ in 0..workers {
            let ran = Arc::clone(&from_outside);
            pool.spawn(move || {
                ran.fetch_add(1, SeqCst);
            });
        }
        drop(pool);
        assert_eq!(
            from_outside.load(SeqCst),
            workers,
            "{workers} workers: outside"
        );
        assert_eq!(
            from_start.load(SeqCst),
            workers,
            "{workers} workers: start hooks"
        );
        assert_eq!(
            from_stop.load(SeqCst),
            workers,
            "{workers} workers: stop hooks"
        );
    }
}

/// Tasks inside `weft::blocking`, spawning from there, while the pool is
/// dropped: the drop waits for them and runs what they spawned.
fn blocking_races_drop() {
    let started = Instant::now();
    let mut round = 0;
    while round < 120 && (round < 24 || started.elapsed() < Duration::from_secs(3)) {
        let pool = Pool::builder()
            .workers(1 + round % 3)
            .max_blocking(round % 4)
            .build()
            .unwrap();
        let entered = counter();
        let spawned_ran = counter();
        for _ in 0..8 {
            let entered = Arc::clone(&entered);
            let spawned_ran = Arc::clone(&spawned_ran);
            pool.spawn(move || {
                weft::blocking(move || {
                    entered.fetch_add(1, SeqCst);
                    thread::sleep(Duration::from_millis(1));
                    weft::spawn(move || {
                        spawned_ran.fetch_add(1, SeqCst);
                    });
                });
            });
        }
        if round % 2 == 0 {
            thread::sleep(Duration::from_millis(1));
        }
        drop(pool);
        assert_eq!(entered.load(SeqCst), 8, "round {round}: blocking tasks");
        assert_eq!(
            spawned_ran.load(SeqCst),
            8,
            "round {round}: tasks spawned inside blocking"
        );
        round += 1;
    }
}

/// Pools built and dropped inside each other's tasks: an inner pool built on
/// an outer worker feeds the outer pool through a handle and is dropped
/// there; a pool is dropped from a worker of another pool.
fn nested_pools_dropped_in_tasks() {
    for round in 0..10 {
        let outer = Pool::builder().workers(2).build().unwrap();
        let outer_handle = outer.handle();
        let ran = counter();
        {
            let ran = Arc::clone(&ran);
            outer.install(move || {
                let inner = Pool::builder().workers(3).build().unwrap();
                for _ in 0..16 {
                    let outer_handle = outer_handle.clone();
                    let ran = Arc::clone(&ran);
                    inner.spawn(move || {
                        let accepted = outer_handle.spawn(move || {
                            ran.fetch_add(1, SeqCst);
                        });
                        assert!(accepted.is_ok(), "the outer pool is alive");
                    });
                }
                drop(inner);
            });
        }
        drop(outer);
        assert_eq!(ran.load(SeqCst), 16, "round {round}: nested spawns");

        // A pool dropped on a worker of another, while it has work queued.
        let victim = Pool::builder().workers(2).build().unwrap();
        let victim_ran = counter();
        for _ in 0..32 {
            let victim_ran = Arc::clone(&victim_ran);
            victim.spawn(move || {
                victim_ran.fetch_add(1, SeqCst);
            });
        }
        let host = Pool::builder().workers(2).build().unwrap();
        host.install(move || drop(victim));
        assert_eq!(victim_ran.load(SeqCst), 32);
        // And the host dropped from a worker of a third pool, via a task.
        let third = Pool::builder().workers(1).build().unwrap();
        let (sender, receiver) = mpsc::channel();
        third.spawn(move || {
            drop(host);
            sender.send(()).unwrap();
        });
        recv(&receiver, "a pool dropped in a task of another");
        drop(third);
    }
}

/// The scope's own closure panics (plainly, or with a bomb) while its tasks
/// still run: the scope waits for them before the panic reaches the caller.
fn scope_op_panics_with_tasks_running() {
    let pool = Pool::builder().workers(3).build().unwrap();
    for round in 0..10 {
        let done = AtomicUsize::new(0);
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.scope(|s| {
                for _ in 0..8 {
                    s.spawn(|_| {
                        thread::sleep(Duration::from_millis(2));
                        done.fetch_add(1, SeqCst);
                    });
                }
                if round % 2 == 0 {
                    throw_bomb();
                }
                panic!("the scope's closure panicked");
            })
        }));
        assert!(forget_panic(result));
        assert_eq!(
            done.load(SeqCst),
            8,
            "round {round}: the scope returned early"
        );
    }
    pool_still_works(&pool);
}

/// Futures queued on tickets when the pool is dropped, the first ticket still
/// held by the main thread and released after: no hang, no abort, every
/// handle completes.
fn ticket_futures_on_pool_drop() {
    for _ in 0..10 {
        let pool = Pool::builder().workers(2).build().unwrap();
        let queue = TicketQueue::new();
        let first = queue.take();
        let handles: Vec<JoinHandle<()>> = (0..8)
            .map(|_| {
                let ticket = queue.take();
                pool.spawn_future(async move {
                    ticket.wait_async().await;
                    ticket.done();
                })
            })
            .collect();
        thread::sleep(Duration::from_millis(2));
        drop(pool);
        first.done();
        for handle in handles {
            forget_panic(join_within(handle, "a ticket future of a dropped pool"));
        }
        let last = queue.take();
        assert!(
            eventually(Duration::from_secs(5), || last.is_called()),
            "the queue moved on past the dropped futures"
        );
    }
}

/// Futures that hand their wakers out and stay pending: the wakers outlive
/// the pool and are woken, cloned and dropped on other threads afterwards.
fn wakers_outlive_the_pool() {
    for round in 0..10 {
        let pool = Pool::builder().workers(2 + round % 3).build().unwrap();
        let saved: Arc<Mutex<Vec<Waker>>> = Arc::new(Mutex::new(Vec::new()));
        let handles: Vec<JoinHandle<()>> = (0..8)
            .map(|_| {
                let saved = Arc::clone(&saved);
                pool.spawn_future(std::future::poll_fn(move |cx| {
                    let mut saved = saved.lock().unwrap();
                    if saved.len() < 64 {
                        saved.push(cx.waker().clone());
                    }
                    Poll::Pending
                }))
            })
            .collect();
        assert!(eventually(WAIT, || saved.lock().unwrap().len() >= 8));
        // Some wakes land just before the drop.
        for waker in saved.lock().unwrap().iter().take(4) {
            waker.wake_by_ref();
        }
        drop(pool);
        for (i, handle) in handles.into_iter().enumerate() {
            assert!(
                forget_panic(join_within(handle, "a pending future after the drop")),
                "round {round}: future {i} reported Ok"
            );
        }
        let wakers = std::mem::take(&mut *saved.lock().unwrap());
        let threads: Vec<_> = wakers
            .chunks(8)
            .map(|chunk| {
                let chunk = chunk.to_vec();
                thread::spawn(move || {
                    for waker in &chunk {
                        waker.wake_by_ref();
                        // A clone that outlives this iteration, woken later.
                        let copy = waker.clone();
                        thread::yield_now();
                        copy.wake();
                    }
                    for waker in chunk {
                        waker.wake();
                    }
                })
            })
            .collect();
        drop(wakers);
        for waker_thread in threads {
            waker_thread.join().expect("waking after the drop");
        }
    }
}

/// Wakes a stored waker when dropped: its own task's, or a neighbour's.
struct WakeOnDrop {
    slot: Arc<Mutex<Option<Waker>>>,
}

impl Drop for WakeOnDrop {
    fn drop(&mut self) {
        let waker = self.slot.lock().unwrap().take();
        if let Some(waker) = waker {
            waker.wake_by_ref();
            waker.wake();
        }
    }
}

/// Parked futures whose destructors wake themselves, or the next future in
/// line, while the pool drops them: the drop returns and every handle
/// completes with `Err`.
fn futures_wake_in_their_destructors() {
    for round in 0..10 {
        let pool = Pool::builder().workers(2).build().unwrap();
        let slots: Vec<Arc<Mutex<Option<Waker>>>> =
            (0..8).map(|_| Arc::new(Mutex::new(None))).collect();
        let polled = counter();
        let handles: Vec<JoinHandle<()>> = (0..8)
            .map(|i| {
                let mine = Arc::clone(&slots[i]);
                // Even futures wake themselves; odd ones wake their neighbour.
                let woken = if i % 2 == 0 {
                    Arc::clone(&slots[i])
                } else {
                    Arc::clone(&slots[(i + 1) % 8])
                };
                let polled = Arc::clone(&polled);
                pool.spawn_future(async move {
                    let _guard = WakeOnDrop { slot: woken };
                    let mut first = true;
                    std::future::poll_fn(move |cx| {
                        *mine.lock().unwrap() = Some(cx.waker().clone());
                        if first {
                            first = false;
                            polled.fetch_add(1, SeqCst);
                        }
                        Poll::<()>::Pending
                    })
                    .await;
                })
            })
            .collect();
        assert!(eventually(WAIT, || polled.load(SeqCst) == 8));
        drop(pool);
        for (i, handle) in handles.into_iter().enumerate() {
            assert!(
                forget_panic(join_within(
                    handle,
                    "a future that woke itself as it was dropped"
                )),
                "round {round}: future {i} reported Ok"
            );
        }
    }
}

/// Handles of futures parked in a pool that is dropped, awaited by a future
/// on another pool and by `weft::block_on` on a plain thread: both get the
/// `Err` report instead of waiting forever.
fn join_handles_awaited_across_a_drop() {
    for _ in 0..10 {
        let doomed = Pool::builder().workers(2).build().unwrap();
        let survivor = Pool::builder().workers(2).build().unwrap();
        let never = Event::new(EventMode::Manual);
        let awaited = doomed.spawn_future(never.wait_async());
        let blocked_on = doomed.spawn_future(never.wait_async());
        let awaiting = survivor.spawn_future(async move { awaited.await.is_err() });
        let blocker = thread::spawn(move || weft::block_on(blocked_on).is_err());
        thread::sleep(Duration::from_millis(2));
        drop(doomed);
        assert!(
            join_within(awaiting, "a future awaiting a handle of a dropped pool").unwrap(),
            "the awaited handle reported Ok"
        );
        assert!(
            blocker.join().unwrap(),
            "block_on of the handle reported Ok"
        );
        pool_still_works(&survivor);
        drop(never);
    }
}

/// `build_global` from several threads at once, racing the first use of the
/// global pool from others: at most one build wins, the rest are refused,
/// and every use returns.
fn build_global_races_first_use() {
    const THREADS: usize = 8;
    let barrier = Arc::new(Barrier::new(THREADS));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                barrier.wait();
                if t % 2 == 0 {
                    Some(Pool::builder().workers(2).build_global())
                } else {
                    assert_eq!(weft::join(|| 1, || 2), (1, 2));
                    let (sender, receiver) = mpsc::channel();
                    weft::spawn(move || sender.send(()).unwrap());
                    recv(&receiver, "a task on the global pool");
                    None
                }
            })
        })
        .collect();
    let mut built = 0;
    for racer in threads {
        match racer.join().expect("racer thread") {
            Some(Ok(())) => built += 1,
            Some(Err(error)) => assert!(
                matches!(error, weft::BuildError::GlobalAlreadyInitialized),
                "unexpected build error {error:?}"
            ),
            None => {}
        }
    }
    assert!(built <= 1, "{built} global pools were built");
    assert!(matches!(
        Pool::builder().workers(2).build_global(),
        Err(weft::BuildError::GlobalAlreadyInitialized)
    ));
    let mut hit = false;
    weft::scope(|s| s.spawn(|_| hit = true));
    assert!(hit);
}

/// Workers still inside slow start hooks (or already in slow stop hooks)
/// when the pool is dropped: every queued task runs, pinned ones included.
fn slow_hooks_then_drop() {
    for round in 0..5 {
        let workers = 4;
        let ran = counter();
        let pinned = counter();
        let pool = Pool::builder()
            .workers(workers)
            .on_thread_start(|_| thread::sleep(Duration::from_millis(15)))
            .on_thread_stop(|_| thread::sleep(Duration::from_millis(5)))
            .build()
            .unwrap();
        for _ in 0..100 {
            let ran = Arc::clone(&ran);
            pool.spawn(move || {
                ran.fetch_add(1, SeqCst);
            });
        }
        for index in 0..workers {
            let pinned = Arc::clone(&pinned);
            pool.spawn_on(index, move || {
                assert_eq!(weft::current_worker_index(), Some(index));
                pinned.fetch_add(1, SeqCst);
            });
        }
        drop(pool);
        assert_eq!(ran.load(SeqCst), 100, "round {round}: tasks");
        assert_eq!(pinned.load(SeqCst), workers, "round {round}: pinned tasks");
    }
}

/// A panic handler that spawns a task for every panic, while the pool is
/// being dropped: the drop runs all of them.
fn panic_handler_spawns_during_drop() {
    for round in 0..10 {
        let handled = counter();
        let ran = counter();
        let pool = {
            let handled = Arc::clone(&handled);
            let ran = Arc::clone(&ran);
            Pool::builder()
                .workers(1 + round % 3)
                .panic_handler(move |payload| {
                    drop(payload);
                    handled.fetch_add(1, SeqCst);
                    let ran = Arc::clone(&ran);
                    weft::spawn(move || {
                        ran.fetch_add(1, SeqCst);
                    });
                })
                .build()
                .unwrap()
        };
        for _ in 0..50 {
            pool.spawn(|| panic!("a task panicked"));
        }
        drop(pool);
        assert_eq!(handled.load(SeqCst), 50, "round {round}: panics handled");
        assert_eq!(
            ran.load(SeqCst),
            50,
            "round {round}: tasks from the handler"
        );
    }
}

/// The only worker blocks in `weft::blocking`; a task run meanwhile by its
/// spare takes the last `Pool` out of a mutex and drops it before it
/// releases the worker: the drop does not wait for itself, the blocked task
/// finishes, and the pool's threads go away.
fn pool_dropped_by_a_task_on_a_spare() {
    let baseline = thread_count();
    for round in 0..5 {
        let slot = Arc::new(Mutex::new(Some(
            Pool::builder().workers(1).build().unwrap(),
        )));
        let (entered_tx, entered_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let blocked = slot
            .lock()
            .unwrap()
            .as_ref()
            .unwrap()
            .spawn_with_handle(move || {
                weft::blocking(move || {
                    entered_tx.send(()).unwrap();
                    release_rx.recv_timeout(WAIT).expect("released");
                });
                "blocked task done"
            });
        recv(&entered_rx, "the worker entered blocking");
        let (dropped_tx, dropped_rx) = mpsc::channel();
        {
            let guard = slot.lock().unwrap();
            let slot = Arc::clone(&slot);
            guard.as_ref().unwrap().spawn(move || {
                let pool = slot.lock().unwrap().take();
                drop(pool);
                dropped_tx.send(()).unwrap();
                release_tx.send(()).unwrap();
            });
        }
        recv(&dropped_rx, "the drop on the spare returned");
        assert_eq!(
            join_within(blocked, "the blocked task").unwrap(),
            "blocked task done"
        );
        assert!(
            eventually(Duration::from_secs(5), || thread_count() <= baseline),
            "round {round}: {} threads of the dropped pool are left",
            thread_count().saturating_sub(baseline)
        );
    }
}

/// `on_thread_stop` spawns through the pool's own `Handle`: refused, or run.
fn stop_hook_spawns_through_own_handle() {
    for round in 0..20 {
        let cell: Arc<OnceLock<weft::Handle>> = Arc::new(OnceLock::new());
        let accepted = counter();
        let ran = counter();
        let pool = {
            let cell = Arc::clone(&cell);
            let accepted = Arc::clone(&accepted);
            let ran = Arc::clone(&ran);
            Pool::builder()
                .workers(3)
                .on_thread_stop(move |_| {
                    let Some(handle) = cell.get() else { return };
                    let ran = Arc::clone(&ran);
                    let outcome = handle.spawn(move || {
                        ran.fetch_add(1, SeqCst);
                    });
                    if outcome.is_ok() {
                        accepted.fetch_add(1, SeqCst);
                    }
                })
                .build()
                .unwrap()
        };
        assert!(cell.set(pool.handle()).is_ok());
        pool.spawn(|| ());
        drop(pool);
        assert_eq!(
            ran.load(SeqCst),
            accepted.load(SeqCst),
            "round {round}: a spawn accepted during the drop never ran"
        );
    }
}

/// The last `Arc<Pool>` is dropped by one of the pool's own tasks: every
/// task runs and the detached workers still exit.
fn last_pool_reference_dropped_by_own_tasks() {
    let baseline = thread_count();
    for round in 0..20 {
        let pool = Arc::new(Pool::builder().workers(2 + round % 3).build().unwrap());
        let ran = counter();
        for _ in 0..16 {
            let mine = Arc::clone(&pool);
            let ran = Arc::clone(&ran);
            pool.spawn(move || {
                thread::sleep(Duration::from_micros(200));
                ran.fetch_add(1, SeqCst);
                drop(mine);
            });
        }
        drop(pool);
        assert!(
            eventually(WAIT, || ran.load(SeqCst) == 16),
            "round {round}: {} of 16 tasks ran",
            ran.load(SeqCst)
        );
    }
    assert!(
        eventually(Duration::from_secs(5), || thread_count() <= baseline),
        "{} threads of pools dropped by their own tasks are left",
        thread_count().saturating_sub(baseline)
    );
}

/// A gate: the closure blocks (up to [`WAIT`]) until the sender sends once
/// per caller.
fn gate() -> (mpsc::Sender<()>, impl Fn() + Clone + Send + 'static) {
    let (open, gated) = mpsc::channel::<()>();
    let gated = Arc::new(Mutex::new(gated));
    let wait = move || {
        let _ = gated.lock().unwrap().recv_timeout(WAIT);
    };
    (open, wait)
}

/// The only worker blocks in `weft::blocking`; the task its spare runs
/// meanwhile uses every way into the pool (`install`, `join`, `scope`,
/// `spawn_with_handle` + `join`, `block_on`, the free functions): each
/// returns while the worker is still blocked.
fn pool_entry_points_on_a_spare() {
    let pool = Arc::new(Pool::builder().workers(1).build().unwrap());
    for round in 0..5 {
        let (entered_tx, entered_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let timed_out = Arc::new(AtomicBool::new(false));
        let blocked = {
            let timed_out = Arc::clone(&timed_out);
            pool.spawn_with_handle(move || {
                weft::blocking(move || {
                    entered_tx.send(()).unwrap();
                    // Longer than the main thread waits for the report, so
                    // that a deadlock on the spare is not undone by this.
                    if release_rx.recv_timeout(Duration::from_secs(45)).is_err() {
                        timed_out.store(true, SeqCst);
                    }
                });
            })
        };
        recv(&entered_rx, "the worker entered blocking");
        let (report_tx, report_rx) = mpsc::channel();
        {
            let pool_in_task = Arc::clone(&pool);
            pool.spawn(move || {
                let pool = pool_in_task;
                let mut report = Vec::new();
                report.push(("install", pool.install(|| 5) == 5));
                report.push(("join", pool.join(|| 1, || 2) == (1, 2)));
                let mut hit = false;
                pool.scope(|s| s.spawn(|_| hit = true));
                report.push(("scope", hit));
                report.push(("weft::join", weft::join(|| 3, || 4) == (3, 4)));
                let mut hit = false;
                weft::scope(|s| s.spawn(|_| hit = true));
                report.push(("weft::scope", hit));
                let handle = pool.spawn_with_handle(|| 6);
                report.push((
                    "spawn_with_handle",
                    matches!(handle.join_timeout(WAIT), Ok(Ok(6))),
                ));
                let handle = weft::spawn_future(async { 7 });
                report.push(("spawn_future", weft::block_on(handle).ok() == Some(7)));
                report.push(("Pool::block_on", pool.block_on(async { 8 }) == 8));
                let wg = WaitGroup::with_count(4);
                for _ in 0..4 {
                    let wg = wg.clone();
                    weft::spawn(move || {
                        wg.done();
                    });
                }
                report.push(("WaitGroup", wg.wait_timeout(WAIT)));
                report_tx.send(report).unwrap();
                release_tx.send(()).unwrap();
            });
        }
        let report = recv(
            &report_rx,
            "the spare's task (a wait on the spare deadlocked)",
        );
        assert!(
            !timed_out.load(SeqCst),
            "round {round}: the worker was released by its timeout"
        );
        for (what, ok) in report {
            assert!(ok, "round {round}: {what} on a spare gave a wrong result");
        }
        join_within(blocked, "the blocked task").unwrap();
    }
    pool_still_works(&pool);
}

/// Values (not panics) that panic when dropped: the outputs of detached
/// handles, a `join` half whose other half panicked, `broadcast` results
/// next to a panicking worker. No abort, no hang, and the pool goes on.
fn bomb_valued_outputs() {
    let pool = Pool::builder().workers(2).build().unwrap();
    for _ in 0..5 {
        let (open, wait) = gate();
        let first = wait.clone();
        drop(pool.spawn_with_handle(move || {
            first();
            Bomb
        }));
        drop(pool.spawn_future(async move {
            wait();
            Bomb
        }));
        open.send(()).unwrap();
        open.send(()).unwrap();

        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.join(|| Bomb, || panic!("the other half panicked"))
        }));
        forget_panic(result);
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.join(|| panic!("the other half panicked"), || Bomb)
        }));
        forget_panic(result);
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.broadcast(|i| {
                if i == 0 {
                    panic!("worker 0 panicked");
                }
                Bomb
            })
        }));
        forget_panic(result);
        std::mem::forget(pool.install(|| Bomb));
    }
    pool_still_works(&pool);
    drop(pool);
}

/// Settings the OS or the standard library refuse: names with a NUL byte,
/// stacks no system can give,
/// and searcher bounds at both extremes. A refused build returns an error or
/// hands a panic to its caller, with no thread left behind; an accepted one
/// works.
fn hostile_builder_settings() {
    type Make = fn() -> Result<Pool, weft::BuildError>;
    let refused: [(&str, Make); 3] = [
        ("NUL in every name", || {
            Pool::builder()
                .workers(4)
                .thread_name(|i| format!("w\0{i}"))
                .build()
        }),
        ("usize::MAX stack", || {
            Pool::builder().workers(2).stack_size(usize::MAX).build()
        }),
        ("64 TiB stack", || {
            Pool::builder().workers(2).stack_size(1 << 46).build()
        }),
    ];
    let baseline = thread_count();
    for (what, make) in refused {
        match panic::catch_unwind(make) {
            Ok(Ok(pool)) => {
                pool_still_works(&pool);
                drop(pool);
            }
            Ok(Err(_)) => {}
            Err(payload) => drop(payload),
        }
        assert!(
            eventually(Duration::from_secs(5), || thread_count() <= baseline),
            "{what}: {} threads left behind",
            thread_count().saturating_sub(baseline)
        );
    }
    for searchers in [0, 1, usize::MAX] {
        let pool = Pool::builder()
            .workers(3)
            .max_spinning(searchers)
            .build()
            .unwrap();
        pool_still_works(&pool);
        let wg = WaitGroup::with_count(100);
        for _ in 0..100 {
            let wg = wg.clone();
            pool.spawn(move || {
                wg.done();
            });
        }
        assert!(
            wg.wait_timeout(WAIT),
            "max_spinning({searchers}): tasks lost"
        );
        drop(pool);
    }
}

/// `thread_name` gives names with a NUL byte from worker 3 on, so that the
/// standard library's spawn panics after three workers started: the panic
/// (or an error) reaches the caller, the started workers run their stop
/// hooks and are joined.
fn nul_thread_name_mid_build() {
    build_fails_naming_a_worker(6, 3, false, |i| {
        if i >= 3 {
            format!("w\0{i}")
        } else {
            format!("w{i}")
        }
    });
}

/// Sends what `weft::join` gave it from its destructor.
struct ReportsDrop {
    dropped: mpsc::Sender<(i32, i32)>,
}

impl Drop for ReportsDrop {
    fn drop(&mut self) {
        let joined = weft::join(|| 1, || 2);
        let _ = weft::spawn_future(async {}).join_timeout(WAIT);
        let _ = self.dropped.send(joined);
    }
}

/// Futures no one can ever wake: one that drops its waker (dropped at once,
/// its handle reports `Err`), and one that awaits its own `JoinHandle` (a
/// cycle only the pool's drop can break). Their destructors use weft.
fn futures_nobody_can_wake() {
    for _ in 0..10 {
        let pool = Pool::builder().workers(2).build().unwrap();

        let (dropped_tx, dropped_rx) = mpsc::channel();
        let guard = ReportsDrop {
            dropped: dropped_tx.clone(),
        };
        let forgotten = pool.spawn_future(async move {
            let _guard = guard;
            std::future::poll_fn(|_| Poll::<()>::Pending).await;
        });
        assert!(forget_panic(join_within(
            forgotten,
            "a future whose waker was dropped"
        )));
        assert_eq!(recv(&dropped_rx, "its destructor"), (1, 2));

        let (handle_tx, handle_rx) = mpsc::channel::<JoinHandle<()>>();
        let guard = ReportsDrop {
            dropped: dropped_tx,
        };
        let own = pool.spawn_future(async move {
            let _guard = guard;
            let me = handle_rx.recv().expect("its own handle");
            let _ = me.await;
        });
        handle_tx.send(own).unwrap();
        thread::sleep(Duration::from_millis(2));
        drop(pool);
        assert_eq!(
            recv(&dropped_rx, "a future awaiting its own handle, at the drop"),
            (1, 2)
        );
    }
}

// ---------------------------------------------------------------------------
// Resource exhaustion: the kernel's cap on a process's memory mappings.

/// The kernel's cap on mappings per process, where it is low enough for a
/// test to pass it (each fiber stack is two mappings); `None` elsewhere,
/// and the cases below then say so and return.
fn reachable_map_limit() -> Option<usize> {
    let limit: usize = std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()?
        .trim()
        .parse()
        .ok()?;
    if limit > 200_000 {
        eprintln!("vm.max_map_count is {limit}: too many fibers to pass it here");
        return None;
    }
    Some(limit)
}

/// Holds `tasks` tasks of each pool in a wait on one event, signals it once
/// no more start, and checks that every task finishes once. Not every task
/// need start before the signal: past the fibers weft can map, each worker
/// nests helped waits until its stack is three quarters used and then
/// blocks, so a few workers hold fewer waits than the process could map.
fn wait_on_one_event(pools: &[Pool], tasks: usize) {
    let go = Event::new(EventMode::Manual);
    let started = counter();
    let finished = counter();
    for pool in pools {
        for _ in 0..tasks {
            let (go, started, finished) = (go.clone(), Arc::clone(&started), Arc::clone(&finished));
            pool.spawn(move || {
                started.fetch_add(1, SeqCst);
                go.wait();
                finished.fetch_add(1, SeqCst);
            });
        }
    }
    let all = tasks * pools.len();
    let limit = Duration::from_secs(40);
    let mut seen = 0;
    let mut still = 0;
    eventually(limit, || {
        let now = started.load(SeqCst);
        still = if now == seen { still + 1 } else { 0 };
        seen = now;
        now == all || still == 100
    });
    eprintln!("{seen} of {all} tasks started before the signal");
    go.signal();
    assert!(
        eventually(limit, || finished.load(SeqCst) == all),
        "{} of {all} tasks finished",
        finished.load(SeqCst)
    );
}

/// More tasks waiting at once than the kernel lets the process map fiber
/// stacks for, in one pool whose cap on suspended tasks would allow them
/// all: the waits past the mappings weft can have help instead of
/// suspending, and every task finishes once.
fn waits_past_the_map_limit() {
    let Some(limit) = reachable_map_limit() else {
        return;
    };
    let tasks = limit / 2 + 1_000;
    let pool = Pool::builder()
        .workers(4)
        .max_suspended(tasks)
        .build()
        .unwrap();
    wait_on_one_event(std::slice::from_ref(&pool), tasks);
}

/// Two pools with the default settings, each with its default cap of
/// suspended tasks waiting: together past the process's mappings, and
/// every task of both finishes once.
fn two_default_pools_past_the_map_limit() {
    if reachable_map_limit().is_none() {
        return;
    }
    let pools = [
        Pool::builder().workers(4).build().unwrap(),
        Pool::builder().workers(4).build().unwrap(),
    ];
    wait_on_one_event(&pools, weft::DEFAULT_MAX_SUSPENDED);
}

/// Caps the process's address space at what it maps now plus `spare`
/// bytes (`RLIMIT_AS`), so that the next large mappings fail.
fn cap_address_space(spare: usize) {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kib: usize = status
        .lines()
        .find_map(|line| line.strip_prefix("VmSize:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmSize in /proc/self/status");
    let cap = (kib * 1024 + spare) as libc::rlim_t;
    let limit = libc::rlimit {
        rlim_cur: cap,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: setrlimit reads the struct it is given and changes only the
    // limit of this (child) process.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) }, 0);
}

/// With the address space capped a little above what the process maps
/// (room for a few dozen 2 MiB fiber stacks, not for hundreds), a pool
/// whose tasks all wait on one event, some of them inside a `blocking`
/// call whose spare thread may not start: the waits that get no fiber help,
/// the blocking calls run with or without a stand-in, and every task
/// finishes once.
fn waits_and_blocking_past_the_address_space() {
    let pool = Pool::builder().workers(2).max_blocking(4).build().unwrap();
    // Touch the pool once, so its first fibers exist before the cap.
    pool.install(|| weft::join(|| (), || ()));
    cap_address_space(64 << 20);
    let go = Event::new(EventMode::Manual);
    let finished = counter();
    let tasks = 400;
    for i in 0..tasks {
        let (go, finished) = (go.clone(), Arc::clone(&finished));
        pool.spawn(move || {
            if i % 50 == 0 {
                weft::blocking(|| go.wait());
            } else {
                go.wait();
            }
            finished.fetch_add(1, SeqCst);
        });
    }
    thread::sleep(Duration::from_millis(200));
    let suspended = pool.stats().suspended_now;
    assert!(
        suspended < tasks - tasks / 50,
        "{suspended} tasks suspended: the cap left room for every fiber"
    );
    go.signal();
    assert!(
        eventually(Duration::from_secs(40), || finished.load(SeqCst) == tasks),
        "{} of {tasks} tasks finished",
        finished.load(SeqCst)
    );
    drop(pool);
}

/// With the address space capped so that no thread stack fits: a pool
/// that asks for new threads fails to build with `ThreadSpawn` and leaves
/// no thread behind, and a pool built before the cap still runs tasks and
/// `blocking` calls (their spare threads cannot start; each call runs
/// without a stand-in) and drops.
fn threads_past_the_address_space() {
    let pool = Pool::builder().workers(2).build().unwrap();
    pool.install(|| weft::join(|| (), || ()));
    let threads_before = thread_count();
    cap_address_space(1 << 20);
    for workers in [1, 4, 16] {
        match Pool::builder().workers(workers).stack_size(8 << 20).build() {
            Err(weft::BuildError::ThreadSpawn { .. }) => {}
            Err(other) => panic!("{workers} workers: {other}"),
            Ok(_) => panic!("{workers} workers of 8 MiB started within 1 MiB"),
        }
        assert_eq!(thread_count(), threads_before, "{workers} workers");
    }
    let ran = counter();
    let done = WaitGroup::new();
    for _ in 0..8 {
        done.add(1);
        let (ran, done) = (Arc::clone(&ran), done.clone());
        pool.spawn(move || {
            weft::blocking(|| ran.fetch_add(1, SeqCst));
            done.done();
        });
    }
    assert!(
        done.wait_timeout(WAIT),
        "{} of 8 tasks ran",
        ran.load(SeqCst)
    );
    drop(pool);
}

// ---------------------------------------------------------------------------
// The entry points rayon's drop-in needed: a shutdown that does not wait, a
// spawn handler that borrows, a pool made global after it was built.

/// `shutdown_background` while tasks wait suspended on a gate, some throw a
/// [`Bomb`], and a thread spawns through a handle: it returns at once, and
/// after the gate opens every accepted task runs once, every started
/// thread runs its stop hook, and spawns after it are refused.
fn shutdown_background_races() {
    for round in 0..20 {
        let workers = 1 + round % 4;
        let started = counter();
        let stopped = counter();
        let pool = Pool::builder()
            .workers(workers)
            .on_thread_start({
                let started = Arc::clone(&started);
                move |_| bump(&started)
            })
            .on_thread_stop({
                let stopped = Arc::clone(&stopped);
                move |_| bump(&stopped)
            })
            .panic_handler(std::mem::forget)
            .build()
            .unwrap();
        let gate = Event::new(EventMode::Manual);
        let ran = counter();
        let accepted = counter();
        for i in 0..48 {
            let (gate, ran) = (gate.clone(), Arc::clone(&ran));
            accepted.fetch_add(1, SeqCst);
            pool.spawn(move || {
                gate.wait();
                ran.fetch_add(1, SeqCst);
                if i % 8 == 0 {
                    throw_bomb();
                }
            });
        }
        let handle = pool.handle();
        let spawner = {
            let (gate, ran, accepted) = (gate.clone(), Arc::clone(&ran), Arc::clone(&accepted));
            thread::spawn(move || {
                let mut refused = false;
                for _ in 0..64 {
                    let (gate, ran) = (gate.clone(), Arc::clone(&ran));
                    let spawned = handle.spawn(move || {
                        gate.wait();
                        ran.fetch_add(1, SeqCst);
                    });
                    match spawned {
                        Ok(()) => {
                            assert!(!refused, "a spawn accepted after one was refused");
                            accepted.fetch_add(1, SeqCst);
                        }
                        Err(_) => refused = true,
                    }
                    thread::yield_now();
                }
            })
        };
        pool.shutdown_background();
        spawner.join().unwrap();
        gate.signal();
        assert!(
            eventually(WAIT, || ran.load(SeqCst) == accepted.load(SeqCst)),
            "round {round}: {} of {} accepted tasks ran",
            ran.load(SeqCst),
            accepted.load(SeqCst)
        );
        assert!(
            eventually(WAIT, || stopped.load(SeqCst) == started.load(SeqCst)),
            "round {round}: {} of {} threads ran their stop hook",
            stopped.load(SeqCst),
            started.load(SeqCst)
        );
    }
}

#[derive(Clone, Copy, Debug)]
enum HandlerFailure {
    Error,
    Panic,
    Dropped,
}

/// `build_with_spawn_handler` with a handler that borrows the caller's
/// list and fails at one worker (an error, a panic, a `ThreadBuilder`
/// dropped unrun): the build reports it (the panic goes on to the caller),
/// and every thread the handler had started returns from `run`.
fn borrowing_spawn_handler_fails_midway() {
    use HandlerFailure::{Dropped, Error, Panic};
    for failure in [Error, Panic, Dropped] {
        for fail_at in 0..4 {
            let mut threads = Vec::new();
            let built = panic::catch_unwind(AssertUnwindSafe(|| {
                Pool::builder()
                    .workers(4)
                    .build_with_spawn_handler(|thread| {
                        if thread.index() == fail_at {
                            match failure {
                                Error => return Err(std::io::Error::other("refused by the test")),
                                Panic => panic!("spawn handler panics at {fail_at}"),
                                Dropped => return Ok(()),
                            }
                        }
                        threads.push(thread::spawn(move || thread.run()));
                        Ok(())
                    })
            }));
            match (failure, built) {
                (Panic, Err(payload)) => drop(payload),
                (Error | Dropped, Ok(Err(weft::BuildError::ThreadSpawn { index, .. }))) => {
                    assert_eq!(index, fail_at, "{failure:?}");
                }
                (failure, Err(_)) => panic!("{failure:?} at {fail_at}: the build panicked"),
                (failure, Ok(Err(error))) => panic!("{failure:?} at {fail_at}: {error:?}"),
                (failure, Ok(Ok(_))) => panic!("{failure:?} at {fail_at}: the build succeeded"),
            }
            assert_eq!(threads.len(), fail_at, "{failure:?} at {fail_at}");
            for thread in threads {
                thread.join().expect("a started worker's thread");
            }
        }
    }
}

/// Threads race to make a built pool global and to use the global pool
/// through free functions: at most one `into_global` wins, every loser
/// gets its pool back whole and usable, and the free functions all work.
fn into_global_races_first_use() {
    const THREADS: usize = 8;
    let barrier = Arc::new(Barrier::new(THREADS));
    let racers: Vec<_> = (0..THREADS)
        .map(|t| {
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                let pool = (t % 2 == 0).then(|| Pool::builder().workers(3).build().unwrap());
                barrier.wait();
                match pool {
                    Some(pool) => match pool.into_global() {
                        Ok(()) => true,
                        Err(pool) => {
                            assert_eq!(pool.workers(), 3);
                            runs_on(&pool, "a pool into_global handed back");
                            false
                        }
                    },
                    None => {
                        assert_eq!(weft::join(|| 1, || 2), (1, 2));
                        let (sender, receiver) = mpsc::channel();
                        weft::spawn(move || sender.send(()).unwrap());
                        recv(&receiver, "a task on the global pool");
                        false
                    }
                }
            })
        })
        .collect();
    let won = racers
        .into_iter()
        .map(|racer| racer.join().expect("racer thread"))
        .filter(|&won| won)
        .count();
    assert!(won <= 1, "{won} pools were made global");
    let spare = Pool::builder().workers(1).build().unwrap();
    assert!(
        spare.into_global().is_err(),
        "the global pool exists by now"
    );
    let mut hit = false;
    weft::scope(|s| s.spawn(|_| hit = true));
    assert!(hit);
}

/// Waits that can neither suspend (a cap of 4 suspended tasks) nor help
/// deeper (256 KiB fiber stacks, which nested helping fills) block their
/// threads, while the pool drops: start hooks spawn more waiting tasks, a
/// thread spawns through a handle, another opens the gate, and some tasks
/// throw a [`Bomb`] with no panic handler. The drop returns, and every
/// accepted task and every task the hooks spawned ran once.
fn stackless_waits_race_the_drop() {
    for round in 0..12 {
        let workers = 1 + round % 3;
        let gate = Event::new(EventMode::Manual);
        let ran = counter();
        let accepted = counter();
        let pool = Pool::builder()
            .workers(workers)
            .max_suspended(4)
            .stack_size(256 << 10)
            .on_thread_start({
                let (gate, ran, accepted) = (gate.clone(), Arc::clone(&ran), Arc::clone(&accepted));
                move |_| {
                    for _ in 0..16 {
                        let (gate, ran) = (gate.clone(), Arc::clone(&ran));
                        accepted.fetch_add(1, SeqCst);
                        weft::spawn(move || {
                            gate.wait();
                            ran.fetch_add(1, SeqCst);
                        });
                    }
                }
            })
            .build()
            .unwrap();
        for i in 0..400 {
            let (gate, ran) = (gate.clone(), Arc::clone(&ran));
            accepted.fetch_add(1, SeqCst);
            pool.spawn(move || {
                gate.wait();
                ran.fetch_add(1, SeqCst);
                if i % 97 == 0 {
                    throw_bomb();
                }
            });
        }
        let handle = pool.handle();
        let spawner = {
            let (gate, ran, accepted) = (gate.clone(), Arc::clone(&ran), Arc::clone(&accepted));
            thread::spawn(move || {
                for _ in 0..64 {
                    let (gate, ran) = (gate.clone(), Arc::clone(&ran));
                    let spawned = handle.spawn(move || {
                        gate.wait();
                        ran.fetch_add(1, SeqCst);
                    });
                    if spawned.is_ok() {
                        accepted.fetch_add(1, SeqCst);
                    }
                    thread::yield_now();
                }
            })
        };
        let opener = after(Duration::from_millis(30), move || gate.signal());
        drop(pool);
        spawner.join().unwrap();
        opener.join().unwrap();
        assert_eq!(ran.load(SeqCst), accepted.load(SeqCst), "round {round}");
    }
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
fn bombing_stop_hooks_racing_spawns() {
    for round in 0..20 {
        let workers = 2 + round % 3;
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
        let spammers: Vec<_> = (0..2)
            .map(|_| {
                let handle = pool.handle();
                let (barrier, accepted, ran, wrong) = (
                    Arc::clone(&barrier),
                    Arc::clone(&accepted),
                    Arc::clone(&ran),
                    Arc::clone(&wrong),
                );
                thread::spawn(move || {
                    barrier.wait();
                    loop {
                        let (ran, wrong) = (Arc::clone(&ran), Arc::clone(&wrong));
                        let task = move || {
                            if (0..2_000u64).into_par_iter().sum::<u64>() != 2_000 * 1_999 / 2 {
                                bump(&wrong);
                            }
                            bump(&ran);
                        };
                        if handle.spawn(task).is_err() {
                            break;
                        }
                        bump(&accepted);
                    }
                })
            })
            .collect();
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
    shutdown_races_aborts_of_queued_tasks => "shutdown-races-aborts",
    shutdown_races_spawns_with_many_workers => "shutdown-races-spawns-many-workers",
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
    waits_past_the_kernels_map_limit_help_and_lose_no_task => "waits-past-the-map-limit",
    two_default_pools_past_the_kernels_map_limit_lose_no_task => "two-default-pools-past-the-map-limit",
    waits_and_blocking_past_the_address_space_lose_no_task => "waits-and-blocking-past-the-address-space",
    threads_past_the_address_space_fail_builds_cleanly_and_blocking_goes_on => "threads-past-the-address-space",
    shutdown_background_races_spawns_suspended_waits_and_bombs => "shutdown-background-races-spawns-waits-and-bombs",
    a_borrowing_spawn_handler_that_fails_midway_leaves_no_thread_running => "borrowing-spawn-handler-fails-midway",
    into_global_races_first_use_of_the_global_pool => "into-global-races-first-use",
    waits_with_no_stack_left_to_help_race_the_drop_hooks_and_bombs => "stackless-waits-race-the-drop",
}
