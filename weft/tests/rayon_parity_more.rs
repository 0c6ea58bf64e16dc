//! The third slice of rayon-core parity, and a group of tasks in tokio's
//! shape: `JoinSet` (results in the order tasks finish, aborts, the set's
//! drop), `Pool::shutdown_timeout` (what runs, what is dropped and counted),
//! `Builder::spawn_handler` with its `ThreadBuilder`, and
//! `Builder::build_scoped`. Written from what rayon-core's tests check (its
//! `scoped_threadpool`, `use_current_thread` and thread-pool tests) and
//! tokio's `task_join_set` tests, against weft's documented behaviour where
//! they differ. No assertion is about how fast anything is; deadlines only
//! turn a hang into a failure.

use std::cell::Cell;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

mod common;

use common::assert_eventually;

use weft::{BuildError, JoinError, JoinSet, Pool};

const HANG: Duration = Duration::from_secs(60);

fn pool(workers: usize) -> Pool {
    Pool::builder().workers(workers).build().expect("pool")
}

fn counter() -> Arc<AtomicUsize> {
    Arc::new(AtomicUsize::new(0))
}

/// Counts its drops.
struct DropCounter(Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Keeps one worker of `pool` busy (its OS thread blocked, so it takes
/// nothing else) until the returned sender sends or drops; returns once the
/// worker is held.
fn hold_worker(pool: &Pool) -> Sender<()> {
    let (release, held) = mpsc::channel::<()>();
    let (started, on_start) = mpsc::channel();
    pool.spawn(move || {
        started.send(()).unwrap();
        let _ = held.recv();
    });
    on_start.recv_timeout(HANG).expect("the worker is held");
    release
}

/// `join_next`, failing rather than hanging: the set is joined on a helper
/// thread, which gives it back.
fn join_next_within<T: Send + 'static>(
    set: JoinSet<T>,
) -> (JoinSet<T>, Option<Result<T, JoinError>>) {
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        let mut set = set;
        let next = set.join_next();
        let _ = sender.send((set, next));
    });
    receiver
        .recv_timeout(HANG)
        .expect("join_next returned in time")
}

fn aborted<T>(result: &Result<T, JoinError>) -> bool {
    matches!(result, Err(error) if error.is_aborted() && error.is_cancelled() && !error.is_panic())
}

// ---------------------------------------------------------------------------
// JoinSet, from tokio's `task_join_set` tests.

/// tokio's `test_with_sleep`, in its counting part: `len` follows the spawns,
/// `detach_all` empties the set without stopping anything, every task comes
/// back once, and an emptied set can be filled again.
#[test]
fn len_follows_spawns_and_each_task_comes_back_once() {
    let pool = pool(2);
    let mut set = JoinSet::new();
    let detached = counter();
    for i in 0..10 {
        let detached = Arc::clone(&detached);
        set.spawn_on(&pool, move || {
            detached.fetch_add(1, Ordering::SeqCst);
            i
        });
        assert_eq!(set.len(), i + 1);
    }
    set.detach_all();
    assert_eq!(set.len(), 0);
    assert!(set.join_next().is_none());
    // Detached, not aborted: they all still run.
    assert_eventually(HANG, "the detached tasks", || {
        detached.load(Ordering::SeqCst) == 10
    });

    for round in 0..2 {
        for i in 0..10 {
            set.spawn_on(&pool, move || {
                thread::sleep(Duration::from_micros(100 * i as u64));
                i
            });
        }
        let mut seen = [false; 10];
        while let Some(result) = set.join_next() {
            let i = result.unwrap();
            assert!(!seen[i], "round {round}: task {i} came back twice");
            seen[i] = true;
        }
        assert!(seen.iter().all(|&seen| seen), "round {round}: {seen:?}");
        assert!(set.is_empty() && set.join_next().is_none());
    }
}

/// The set's point: `join_next` returns whichever task finished first. Each
/// task waits on a gate of its own, holding its worker (one worker per
/// task, so all of them are running), and the gates open in a shuffled
/// order: only the task just released can finish next.
#[test]
fn join_next_returns_tasks_in_the_order_they_finish() {
    const TASKS: usize = 5;
    let pool = pool(TASKS);
    let mut set = JoinSet::new();
    let (running, all_running) = mpsc::channel();
    let mut gates = Vec::new();
    for i in 0..TASKS {
        let (open, gate) = mpsc::channel::<()>();
        gates.push(open);
        let running = running.clone();
        set.spawn_on(&pool, move || {
            running.send(()).unwrap();
            gate.recv().unwrap();
            i
        });
    }
    for _ in 0..TASKS {
        all_running.recv_timeout(HANG).expect("every task runs");
    }
    for (joined, &i) in [3, 0, 4, 1, 2].iter().enumerate() {
        gates[i].send(()).unwrap();
        let (back, next) = join_next_within(set);
        set = back;
        assert_eq!(next.expect("a task").unwrap(), i);
        assert_eq!(set.len(), TASKS - 1 - joined);
    }
    assert!(set.join_next().is_none());
}

/// tokio's `alternating`: joining one and spawning one keeps the count.
#[test]
fn alternating_joins_and_spawns_keep_the_count() {
    let pool = pool(2);
    let mut set = JoinSet::new();
    set.spawn_on(&pool, || ());
    set.spawn_on(&pool, || ());
    assert_eq!(set.len(), 2);
    for _ in 0..16 {
        set.join_next().unwrap().unwrap();
        assert_eq!(set.len(), 1);
        set.spawn_on(&pool, || ());
        assert_eq!(set.len(), 2);
    }
}

/// tokio's `test_abort_on_drop`: dropping the set aborts its tasks. In weft
/// a task not yet started never runs and its closure is dropped.
#[test]
fn dropping_the_set_drops_its_unstarted_tasks_without_running_them() {
    let pool = pool(1);
    let release = hold_worker(&pool);
    let ran = counter();
    let dropped = counter();
    let mut set = JoinSet::new();
    for _ in 0..16 {
        let ran = Arc::clone(&ran);
        let guard = DropCounter(Arc::clone(&dropped));
        set.spawn_on(&pool, move || {
            let _guard = guard;
            ran.fetch_add(1, Ordering::SeqCst);
        });
    }
    drop(set);
    release.send(()).unwrap();
    assert_eventually(HANG, "the aborted closures' drops", || {
        dropped.load(Ordering::SeqCst) == 16
    });
    drop(pool);
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

/// A started task is not stopped by the set's drop: it runs to its end.
#[test]
fn dropping_the_set_lets_a_running_task_finish() {
    let pool = pool(1);
    let (started, on_start) = mpsc::channel();
    let (release, held) = mpsc::channel::<()>();
    let finished = Arc::new(AtomicBool::new(false));
    let mut set = JoinSet::new();
    {
        let finished = Arc::clone(&finished);
        set.spawn_on(&pool, move || {
            started.send(()).unwrap();
            held.recv().unwrap();
            finished.store(true, Ordering::SeqCst);
        });
    }
    on_start.recv_timeout(HANG).unwrap();
    drop(set);
    release.send(()).unwrap();
    drop(pool); // runs what is left, joins the worker
    assert!(finished.load(Ordering::SeqCst));
}

/// tokio's `abort_tasks`: aborting half the tasks through the handles their
/// spawns returned. Queued behind a held worker, the aborted ones never run
/// and come back aborted; the others come back with their values.
#[test]
fn aborting_some_tasks_through_their_handles() {
    let pool = pool(1);
    let release = hold_worker(&pool);
    let mut set = JoinSet::new();
    for i in 0..16 {
        let abort = set.spawn_on(&pool, move || i);
        if i % 2 == 1 {
            abort.abort();
        }
    }
    release.send(()).unwrap();
    let (mut completed, mut cancelled) = (0, 0);
    while let Some(result) = set.join_next() {
        match result {
            Ok(value) => {
                assert_eq!(value % 2, 0);
                completed += 1;
            }
            Err(ref error) => {
                assert!(aborted(&result), "{error}");
                cancelled += 1;
            }
        }
    }
    assert_eq!((completed, cancelled), (8, 8));
}

/// tokio's `abort_all`: every task stays in the set after the abort and
/// comes back once; the ones that had finished keep their results, the
/// queued ones are aborted.
#[test]
fn abort_all_keeps_the_tasks_in_the_set_until_joined() {
    let pool = pool(1);
    let mut set = JoinSet::new();
    let done: Vec<_> = (0..5).map(|i| set.spawn_on(&pool, move || i)).collect();
    assert_eventually(HANG, "the first tasks", || {
        done.iter().all(|task| task.is_finished())
    });
    let release = hold_worker(&pool);
    for i in 5..10 {
        set.spawn_on(&pool, move || i);
    }
    set.abort_all();
    assert_eq!(set.len(), 10);
    release.send(()).unwrap();
    let (mut values, mut cancelled) = (Vec::new(), 0);
    while let Some(result) = set.join_next() {
        match result {
            Ok(value) => values.push(value),
            Err(_) => {
                assert!(aborted(&result));
                cancelled += 1;
            }
        }
    }
    values.sort_unstable();
    assert_eq!((values, cancelled), (vec![0, 1, 2, 3, 4], 5));
    assert!(set.is_empty());
}

/// tokio's `join_all`.
#[test]
fn join_all_returns_every_value() {
    let pool = pool(2);
    let mut set = JoinSet::new();
    for _ in 0..5 {
        set.spawn_on(&pool, || 1);
    }
    assert_eq!(set.join_all(), [1; 5]);
}

/// tokio's `task_panics`: `join_all` raises a task's panic, and the set it
/// drops on the way out aborts the task that had not started.
#[test]
fn join_all_raises_a_tasks_panic_and_aborts_the_rest() {
    let pool = pool(1);
    let mut set = JoinSet::new();
    let first = set.spawn_on(&pool, || panic!("task failed"));
    assert_eventually(HANG, "the panicking task", || first.is_finished());
    let release = hold_worker(&pool);
    let ran = Arc::new(AtomicBool::new(false));
    let dropped = counter();
    {
        let ran = Arc::clone(&ran);
        let guard = DropCounter(Arc::clone(&dropped));
        set.spawn_on(&pool, move || {
            let _guard = guard;
            ran.store(true, Ordering::SeqCst);
        });
    }
    let payload = panic::catch_unwind(AssertUnwindSafe(|| set.join_all())).unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"task failed"));
    release.send(()).unwrap();
    assert_eventually(HANG, "the aborted task's drop", || {
        dropped.load(Ordering::SeqCst) == 1
    });
    assert!(!ran.load(Ordering::SeqCst));
}

/// tokio's `try_join_next`: nothing before the tasks finish; once they
/// have (a task whose abort handle says it finished is ready to join),
/// each result once, without waiting.
#[test]
fn try_join_next_never_waits() {
    const TASKS: usize = 100;
    let pool = pool(1);
    let release = hold_worker(&pool);
    let mut set = JoinSet::new();
    let handles: Vec<_> = (0..TASKS).map(|_| set.spawn_on(&pool, || ())).collect();
    assert!(set.try_join_next().is_none());
    release.send(()).unwrap();
    assert_eventually(HANG, "every task", || {
        handles.iter().all(|task| task.is_finished())
    });
    let mut count = 0;
    while let Some(result) = set.try_join_next() {
        result.unwrap();
        count += 1;
    }
    assert_eq!(count, TASKS);
    assert!(set.try_join_next().is_none() && set.is_empty());
}

/// tokio's `extend`, for closures: `collect` and `extend` spawn each.
#[test]
fn a_set_collects_and_extends_closures() {
    let mut set: JoinSet<usize> = (0..5).map(|i| move || i).collect();
    set.extend((5..10).map(|i| move || i));
    let mut seen = [false; 10];
    while let Some(result) = set.join_next() {
        seen[result.unwrap()] = true;
    }
    assert!(seen.iter().all(|&seen| seen));
}

/// The set's `spawn` follows `weft::spawn`'s pool rule: outside any pool,
/// the global pool; on a worker, the worker's own pool.
#[test]
fn spawn_follows_the_free_function_pool_rule() {
    let mut set = JoinSet::new();
    set.spawn(weft::current_thread_index);
    assert!(set.join_next().unwrap().unwrap().is_some());

    let pool = pool(3);
    let inner = pool.install(|| {
        let mut set = JoinSet::new();
        for _ in 0..4 {
            set.spawn(weft::current_num_threads);
        }
        set.join_all()
    });
    assert_eq!(inner, [3; 4]);
}

/// `join_next` inside a task is a weft wait: in a one-worker pool the
/// waiting task's own worker runs the tasks it waits for.
#[test]
fn join_next_inside_a_one_worker_pool_runs_what_it_waits_for() {
    let pool = pool(1);
    let (sender, receiver) = mpsc::channel();
    pool.spawn(move || {
        let mut set = JoinSet::new();
        for i in 0..8 {
            set.spawn(move || i);
        }
        let mut values = set.join_all();
        values.sort_unstable();
        sender.send(values).unwrap();
    });
    assert_eq!(
        receiver.recv_timeout(HANG).unwrap(),
        (0..8).collect::<Vec<_>>()
    );
}

/// tokio's `runtime_gone`, in weft's terms: a pool dropped under a set runs
/// its queued tasks first, so the set still gets their values; a pool shut
/// down with no time left drops them, and the set sees them aborted.
#[test]
fn a_set_outlives_its_pool() {
    let mut set = JoinSet::new();
    {
        let pool = pool(1);
        set.spawn_on(&pool, || 1);
    }
    assert_eq!(set.join_next().unwrap().unwrap(), 1);

    let pool = pool(1);
    let release = hold_worker(&pool);
    set.spawn_on(&pool, || 2);
    let releaser = thread::spawn(move || {
        thread::sleep(Duration::from_millis(10));
        release.send(()).unwrap();
    });
    let report = pool.shutdown_timeout(Duration::ZERO);
    releaser.join().unwrap();
    assert_eq!(report.dropped(), 1);
    assert!(aborted(&set.join_next().unwrap()));
}

/// A panic's payload and message come through the error; an abort is not a
/// panic; the error is `Send + Sync` for `Box<dyn Error + Send + Sync>`.
#[test]
fn join_errors_tell_panics_from_aborts() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<JoinError>();
    send_sync::<weft::AbortHandle>();
    fn send<T: Send>() {}
    send::<JoinSet<u32>>();
    send::<weft::ThreadBuilder>();
    send_sync::<weft::Builder>();
    send_sync::<weft::ShutdownReport>();

    let mut set = JoinSet::<()>::new();
    set.spawn(|| panic!("{}", String::from("owned message")));
    let error = set.join_next().unwrap().unwrap_err();
    assert!(error.is_panic() && !error.is_aborted());
    assert_eq!(error.to_string(), "task panicked: owned message");
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(error);
    let error = *boxed.downcast::<JoinError>().unwrap();
    let payload = error.try_into_panic().unwrap();
    assert_eq!(payload.downcast_ref::<String>().unwrap(), "owned message");

    let pool = pool(1);
    let release = hold_worker(&pool);
    let mut set = JoinSet::new();
    set.spawn_on(&pool, || ()).abort();
    release.send(()).unwrap();
    let error = set.join_next().unwrap().unwrap_err();
    assert_eq!(error.to_string(), "task was aborted");
    let error = error.try_into_panic().unwrap_err();
    assert!(error.into_payload().is::<weft::Aborted>());
}

// ---------------------------------------------------------------------------
// Pool::shutdown_timeout.

/// With time enough the call is `drop`: everything runs, nothing dropped.
#[test]
fn shutdown_timeout_with_time_enough_drops_nothing() {
    let pool = pool(2);
    let ran = counter();
    for _ in 0..100 {
        let ran = Arc::clone(&ran);
        pool.spawn(move || {
            ran.fetch_add(1, Ordering::SeqCst);
        });
    }
    let report = pool.shutdown_timeout(HANG);
    assert!(!report.timed_out() && report.joined());
    assert_eq!(report.dropped(), 0);
    assert_eq!(ran.load(Ordering::SeqCst), 100);
}

/// Past the timeout, every kind of task the pool's API queues that has not
/// started is dropped, counted, and never run; handles report the abort.
#[test]
fn shutdown_timeout_drops_every_kind_of_unstarted_api_task() {
    let pool = pool(2);
    // Both workers held, so nothing queued below can start.
    let first = hold_worker(&pool);
    let second = hold_worker(&pool);
    let ran = counter();
    let dropped = counter();
    let task = || {
        let ran = Arc::clone(&ran);
        let guard = DropCounter(Arc::clone(&dropped));
        move || {
            let _guard = guard;
            ran.fetch_add(1, Ordering::SeqCst);
        }
    };
    pool.spawn(task());
    pool.spawn_named("named", task());
    pool.spawn_fifo(task());
    pool.spawn_on(1, task());
    let handle = pool.handle();
    handle.spawn(task()).unwrap();
    handle.spawn_fifo(task()).unwrap();
    handle.spawn_on(0, task()).unwrap();
    let with_handle = pool.spawn_with_handle(task());
    let broadcast_calls = Arc::clone(&ran);
    pool.spawn_broadcast(move |_| {
        broadcast_calls.fetch_add(1, Ordering::SeqCst);
    });
    let mut set = JoinSet::new();
    set.spawn_on(&pool, task());
    // 8 closures, 2 broadcast calls, 1 task of the set.
    let expected = 8 + 2 + 1;

    let releaser = thread::spawn(move || {
        thread::sleep(Duration::from_millis(10));
        drop((first, second));
    });
    let report = pool.shutdown_timeout(Duration::ZERO);
    releaser.join().unwrap();
    assert!(report.timed_out() && report.joined());
    assert_eq!(report.dropped(), expected);
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(dropped.load(Ordering::SeqCst), 9);
    assert!(with_handle.join().unwrap_err().is::<weft::Aborted>());
    assert!(aborted(&set.join_next().unwrap()));
    assert!(handle.is_closed());
}

/// The timeout is waited out first: the queued tasks may start until then,
/// and what has not started by the end of it is dropped.
#[test]
fn shutdown_timeout_waits_out_its_timeout_before_dropping() {
    let timeout = Duration::from_millis(30);
    let pool = pool(1);
    let release = hold_worker(&pool);
    let ran = counter();
    for _ in 0..5 {
        let ran = Arc::clone(&ran);
        pool.spawn(move || {
            ran.fetch_add(1, Ordering::SeqCst);
        });
    }
    let handle = pool.handle();
    // Released well after the call closed the pool and its time ran out.
    let releaser = thread::spawn(move || {
        assert_eventually(HANG, "the shutdown to begin", || handle.is_closed());
        thread::sleep(timeout + Duration::from_millis(200));
        release.send(()).unwrap();
    });
    let start = Instant::now();
    let report = pool.shutdown_timeout(timeout);
    assert!(start.elapsed() >= timeout);
    releaser.join().unwrap();
    assert!(report.timed_out());
    assert_eq!(report.dropped(), 5);
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

/// What running tasks queue through the free functions still runs after the
/// timeout (their callers may wait for it), as do the stop hooks.
#[test]
fn shutdown_timeout_runs_free_function_spawns_and_stop_hooks() {
    let stops = counter();
    let pool = {
        let stops = Arc::clone(&stops);
        Pool::builder()
            .workers(1)
            .on_thread_stop(move |_| {
                stops.fetch_add(1, Ordering::SeqCst);
            })
            .build()
            .unwrap()
    };
    let (started, on_start) = mpsc::channel();
    let (release, held) = mpsc::channel::<()>();
    let spawned = counter();
    let scoped = counter();
    {
        let (spawned, scoped) = (Arc::clone(&spawned), Arc::clone(&scoped));
        pool.spawn(move || {
            started.send(()).unwrap();
            held.recv().unwrap();
            // The pool is dropping unstarted API tasks by now.
            for _ in 0..3 {
                let spawned = Arc::clone(&spawned);
                weft::spawn(move || {
                    spawned.fetch_add(1, Ordering::SeqCst);
                });
            }
            weft::scope(|s| {
                for _ in 0..3 {
                    s.spawn(|_| {
                        scoped.fetch_add(1, Ordering::SeqCst);
                    });
                }
            });
        });
    }
    on_start.recv_timeout(HANG).unwrap();
    let queued_ran = Arc::new(AtomicBool::new(false));
    {
        let queued_ran = Arc::clone(&queued_ran);
        pool.spawn(move || queued_ran.store(true, Ordering::SeqCst));
    }
    let releaser = thread::spawn(move || {
        thread::sleep(Duration::from_millis(10));
        release.send(()).unwrap();
    });
    let report = pool.shutdown_timeout(Duration::ZERO);
    releaser.join().unwrap();
    assert_eq!(report.dropped(), 1);
    assert!(!queued_ran.load(Ordering::SeqCst));
    assert_eq!(spawned.load(Ordering::SeqCst), 3);
    assert_eq!(scoped.load(Ordering::SeqCst), 3);
    assert_eq!(stops.load(Ordering::SeqCst), 1);
}

/// From inside one of the pool's tasks the call cannot wait for the pool:
/// it waits out its timeout (as a weft wait: the other worker's tasks and
/// the caller's worker go on), starts dropping, and returns without joining.
#[test]
fn shutdown_timeout_from_inside_the_pool_returns_without_joining() {
    let pool = pool(2);
    let handle = pool.handle();
    let slot = Arc::new(Mutex::new(Some(pool)));
    let (sender, receiver) = mpsc::channel();
    {
        let slot = Arc::clone(&slot);
        handle
            .spawn(move || {
                let pool = slot.lock().unwrap().take().unwrap();
                let report = pool.shutdown_timeout(Duration::from_millis(5));
                sender.send(report).unwrap();
            })
            .unwrap();
    }
    let report = receiver.recv_timeout(HANG).unwrap();
    assert!(report.timed_out() && !report.joined());
    assert!(handle.is_closed());

    // A timeout too large for an `Instant` is no timeout: inside, it returns
    // at once and drops nothing.
    let slot = Arc::new(Mutex::new(Some(self::pool(1))));
    let (sender, receiver) = mpsc::channel();
    let inner = Arc::clone(&slot);
    slot.lock().unwrap().as_ref().unwrap().spawn(move || {
        let pool = inner.lock().unwrap().take().unwrap();
        sender.send(pool.shutdown_timeout(Duration::MAX)).unwrap();
    });
    let report = receiver.recv_timeout(HANG).unwrap();
    assert!(!report.timed_out() && !report.joined());
    assert_eq!(report.dropped(), 0);
}

// ---------------------------------------------------------------------------
// Builder::spawn_handler and ThreadBuilder, from rayon-core's tests.

/// rayon's `cleared_current_thread`: the handler is called once per worker,
/// in index order; its threads run the pool; dropping the pool waits for
/// the workers to finish (their stop hooks have run), and each `run` then
/// returns a thread that is no worker any more.
#[test]
fn spawn_handler_threads_run_the_pool_and_are_freed_after_it() {
    const WORKERS: usize = 3;
    let indexes = Arc::new(Mutex::new(Vec::new()));
    let threads = Arc::new(Mutex::new(Vec::new()));
    let stops = counter();
    let pool = {
        let (indexes, threads, stops) = (
            Arc::clone(&indexes),
            Arc::clone(&threads),
            Arc::clone(&stops),
        );
        Pool::builder()
            .workers(WORKERS)
            .on_thread_stop(move |_| {
                stops.fetch_add(1, Ordering::SeqCst);
            })
            .spawn_handler(move |thread| {
                indexes.lock().unwrap().push(thread.index());
                let handle = thread::Builder::new().spawn(move || {
                    thread.run();
                    // The thread is an ordinary one again.
                    weft::current_thread_index()
                })?;
                threads.lock().unwrap().push(handle);
                Ok(())
            })
            .build()
            .unwrap()
    };
    assert_eq!(*indexes.lock().unwrap(), [0, 1, 2]);
    let mut seen = pool.broadcast(|index| (index, weft::current_thread_index()));
    seen.sort_unstable();
    assert_eq!(seen, [(0, Some(0)), (1, Some(1)), (2, Some(2))]);
    drop(pool);
    assert_eq!(
        stops.load(Ordering::SeqCst),
        WORKERS,
        "drop waits for the workers"
    );
    for thread in threads.lock().unwrap().drain(..) {
        assert_eq!(thread.join().unwrap(), None);
    }
}

/// The `ThreadBuilder` carries the builder's name and stack size, and a
/// handler that uses them gets threads named as weft names its own.
#[test]
fn thread_builders_carry_the_names_and_stack_size() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let pool = {
        let seen = Arc::clone(&seen);
        Pool::builder()
            .workers(2)
            .thread_name(|index| format!("handled-{index}"))
            .stack_size(512 * 1024)
            .spawn_handler(move |thread| {
                seen.lock().unwrap().push((
                    thread.index(),
                    thread.name().map(str::to_owned),
                    thread.stack_size(),
                ));
                let mut builder = thread::Builder::new();
                if let Some(name) = thread.name() {
                    builder = builder.name(name.to_owned());
                }
                if let Some(bytes) = thread.stack_size() {
                    builder = builder.stack_size(bytes);
                }
                builder.spawn(|| thread.run())?;
                Ok(())
            })
            .build()
            .unwrap()
    };
    let mut names = pool.broadcast(|_| thread::current().name().map(str::to_owned));
    names.sort();
    assert_eq!(
        names,
        [Some("handled-0".to_owned()), Some("handled-1".to_owned())]
    );
    drop(pool);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (0, Some("handled-0".to_owned()), Some(512 * 1024)),
            (1, Some("handled-1".to_owned()), Some(512 * 1024)),
        ]
    );

    // Without the settings: weft's default name, no stack size.
    let pool = Pool::builder()
        .workers(1)
        .spawn_handler(|thread| {
            assert_eq!(thread.name(), Some("weft-worker-0"));
            assert_eq!(thread.stack_size(), None);
            thread::spawn(|| thread.run());
            Ok(())
        })
        .build()
        .unwrap();
    pool.install(|| ());
}

/// rayon's `spawn_scoped_tls_threadpool`, with a std thread-local: what the
/// handler's threads set up is what the pool's tasks see, and changing the
/// caller's copy afterwards does not reach them. rayon's `missing_scoped_tls`:
/// a pool built the default way sees none of it.
#[test]
fn a_spawn_handler_sets_up_what_the_tasks_see() {
    thread_local!(static LOCAL: Cell<i32> = const { Cell::new(0) });
    LOCAL.with(|local| local.set(42));
    let plain = pool(1);
    assert_eq!(plain.install(|| LOCAL.with(Cell::get)), 0);

    let value = LOCAL.with(Cell::get);
    let pool = Pool::builder()
        .workers(2)
        .spawn_handler(move |thread| {
            thread::Builder::new().spawn(move || {
                LOCAL.with(|local| local.set(value));
                thread.run();
            })?;
            Ok(())
        })
        .build()
        .unwrap();
    assert_eq!(pool.broadcast(|_| LOCAL.with(Cell::get)), [42, 42]);
    LOCAL.with(|local| local.set(-1));
    assert_eq!(pool.broadcast(|_| LOCAL.with(Cell::get)), [42, 42]);
}

/// A handler's error fails the build with `ThreadSpawn` for that index; the
/// workers it had started are stopped and their `run`s return.
#[test]
fn a_spawn_handler_error_fails_the_build_and_stops_the_others() {
    let threads = Arc::new(Mutex::new(Vec::new()));
    let result = {
        let threads = Arc::clone(&threads);
        Pool::builder()
            .workers(4)
            .spawn_handler(move |thread| {
                if thread.index() == 2 {
                    return Err(io::Error::other("no thread for you"));
                }
                threads.lock().unwrap().push(thread::spawn(|| thread.run()));
                Ok(())
            })
            .build()
    };
    match result {
        Err(BuildError::ThreadSpawn { index, source }) => {
            assert_eq!(index, 2);
            assert_eq!(source.to_string(), "no thread for you");
        }
        other => panic!("expected ThreadSpawn, got {other:?}"),
    }
    let threads: Vec<_> = threads.lock().unwrap().drain(..).collect();
    assert_eq!(threads.len(), 2);
    for thread in threads {
        thread.join().unwrap();
    }
}

/// rayon's `panic_thread_name`, for the handler: a panic in it leaves
/// `build` once the workers started before it have stopped.
#[test]
fn a_panicking_spawn_handler_panics_out_of_build_after_stopping_the_others() {
    let threads = Arc::new(Mutex::new(Vec::new()));
    let outcome = {
        let threads = Arc::clone(&threads);
        panic::catch_unwind(AssertUnwindSafe(|| {
            Pool::builder()
                .workers(3)
                .spawn_handler(move |thread| {
                    assert!(thread.index() < 1, "handler gave up");
                    threads.lock().unwrap().push(thread::spawn(|| thread.run()));
                    Ok(())
                })
                .build()
        }))
    };
    let payload = outcome.unwrap_err();
    let message = payload
        .downcast_ref::<&str>()
        .map(|message| message.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned());
    assert_eq!(message.as_deref(), Some("handler gave up"));
    for thread in threads.lock().unwrap().drain(..) {
        thread.join().unwrap();
    }
}

/// A handler that returns `Ok` but drops its `ThreadBuilder` unrun fails the
/// build rather than leaving a pool a worker short.
#[test]
fn a_handler_that_drops_its_thread_unrun_fails_the_build() {
    let threads = Arc::new(Mutex::new(Vec::new()));
    let result = {
        let threads = Arc::clone(&threads);
        Pool::builder()
            .workers(2)
            .spawn_handler(move |thread| {
                if thread.index() == 1 {
                    drop(thread);
                } else {
                    threads.lock().unwrap().push(thread::spawn(|| thread.run()));
                }
                Ok(())
            })
            .build()
    };
    assert!(matches!(
        result,
        Err(BuildError::ThreadSpawn { index: 1, .. })
    ));
    for thread in threads.lock().unwrap().drain(..) {
        thread.join().unwrap();
    }
}

/// rayon's `use_current_thread` test checks that a thread already in a pool
/// cannot become another's worker; weft's `run` refuses such a thread too.
/// Here the handler tries to run its worker inside a task of another pool:
/// `run` panics, and the handler turns that into the build's error.
#[test]
fn run_refuses_a_thread_that_already_runs_a_pools_tasks() {
    let other = Arc::new(pool(1));
    let result = {
        let other = Arc::clone(&other);
        Pool::builder()
            .workers(1)
            .spawn_handler(move |thread| {
                let attempt = other.spawn_with_handle(move || thread.run());
                match attempt.join() {
                    Ok(()) => Ok(()),
                    Err(_) => Err(io::Error::other("run panicked")),
                }
            })
            .build()
    };
    assert!(matches!(
        result,
        Err(BuildError::ThreadSpawn { index: 0, .. })
    ));
    // The other pool is unharmed.
    assert_eq!(other.install(|| 5), 5);
}

/// The spare threads of `weft::blocking` are weft's own, with or without a
/// spawn handler: a blocking call in such a pool gets its stand-in.
#[test]
fn blocking_works_in_a_pool_of_handled_threads() {
    let pool = Pool::builder()
        .workers(1)
        .spawn_handler(|thread| {
            thread::spawn(|| thread.run());
            Ok(())
        })
        .build()
        .unwrap();
    let (sender, receiver) = mpsc::channel::<()>();
    let (ran, on_ran) = mpsc::channel();
    pool.spawn(move || {
        // The only worker blocks here until the task below ran on the spare.
        weft::blocking(|| receiver.recv().unwrap());
    });
    pool.spawn(move || {
        ran.send(()).unwrap();
        sender.send(()).unwrap();
    });
    on_ran
        .recv_timeout(HANG)
        .expect("the stand-in ran the second task");
}

// ---------------------------------------------------------------------------
// Builder::build_scoped, from rayon-core's `scoped_threadpool` tests.

/// rayon's `build_scoped_tls_threadpool`: the wrapper borrows from the
/// caller; the pool's tasks see what it set up; a change on the caller's
/// side afterwards does not reach them; once `build_scoped` returns the
/// borrow is over (the value is moved below) and every thread has ended.
#[test]
fn build_scoped_threads_borrow_from_the_caller() {
    thread_local!(static LOCAL: Cell<usize> = const { Cell::new(0) });
    let table = vec![1usize, 2, 3, 4];
    let running = AtomicUsize::new(0);
    let result = Pool::builder()
        .workers(2)
        .build_scoped(
            |thread| {
                running.fetch_add(1, Ordering::SeqCst);
                LOCAL.with(|local| local.set(table.iter().sum()));
                thread.run();
                running.fetch_sub(1, Ordering::SeqCst);
            },
            |pool| {
                assert_eq!(pool.broadcast(|_| LOCAL.with(Cell::get)), [10, 10]);
                LOCAL.with(|local| local.set(99));
                assert_eq!(pool.broadcast(|_| LOCAL.with(Cell::get)), [10, 10]);
                pool.install(|| "done")
            },
        )
        .unwrap();
    assert_eq!(result, "done");
    assert_eq!(running.load(Ordering::SeqCst), 0);
    let moved = table;
    assert_eq!(moved.len(), 4);
}

/// A pool that cannot be built never reaches `with_pool`.
#[test]
fn build_scoped_reports_a_failed_build() {
    let called = AtomicBool::new(false);
    let result = Pool::builder().workers(0).build_scoped(
        |thread| thread.run(),
        |_| called.store(true, Ordering::SeqCst),
    );
    assert!(matches!(result, Err(BuildError::ZeroWorkers)));
    assert!(!called.load(Ordering::SeqCst));
}

/// A panic in `with_pool` leaves `build_scoped` after the pool was dropped
/// and its scoped threads joined.
#[test]
fn build_scoped_lets_a_panic_out_after_the_threads_end() {
    let running = AtomicUsize::new(0);
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        Pool::builder().workers(2).build_scoped(
            |thread| {
                running.fetch_add(1, Ordering::SeqCst);
                thread.run();
                running.fetch_sub(1, Ordering::SeqCst);
            },
            |pool| {
                pool.install(|| ());
                panic!("with_pool failed");
            },
        )
    }));
    assert!(outcome.is_err());
    assert_eq!(running.load(Ordering::SeqCst), 0);
}

/// The handler runs on the thread that calls `build`; a `spawn_handler`
/// that returned `Ok` for every worker gives a pool of that many workers.
#[test]
fn spawn_handler_runs_on_the_building_thread() {
    let builder_thread = thread::current().id();
    let on: Arc<Mutex<Vec<thread::ThreadId>>> = Arc::new(Mutex::new(Vec::new()));
    let pool = {
        let on = Arc::clone(&on);
        Pool::builder()
            .workers(2)
            .spawn_handler(move |thread| {
                on.lock().unwrap().push(thread::current().id());
                thread::spawn(|| thread.run());
                Ok(())
            })
            .build()
            .unwrap()
    };
    assert_eq!(pool.workers(), 2);
    assert!(on.lock().unwrap().iter().all(|id| *id == builder_thread));
}

/// Futures in a set: results come back in the order they finish, mixed
/// with closures, through `join_next` and through `join_next_async`.
#[test]
fn join_set_takes_futures_and_joins_them_in_async_code() {
    let pool = pool(2);
    let mut set = JoinSet::new();
    let (go, gate) = mpsc::channel::<()>();
    let gate = Arc::new(Mutex::new(gate));
    set.spawn_future_on(&pool, async move {
        // Ready only once released: polled again by the yield below.
        loop {
            if gate.lock().unwrap().try_recv().is_ok() {
                return "slow";
            }
            weft::yield_async().await;
        }
    });
    set.spawn_future_on(&pool, async { "fast future" });
    assert_eq!(set.join_next().unwrap().unwrap(), "fast future");
    set.spawn_on(&pool, || "closure");
    let seen = weft::block_on(async {
        let first = set.join_next_async().await.unwrap().unwrap();
        go.send(()).unwrap();
        let second = set.join_next_async().await.unwrap().unwrap();
        assert!(set.join_next_async().await.is_none());
        [first, second]
    });
    assert_eq!(seen, ["closure", "slow"]);
}

/// An aborted future that is waiting is dropped at its next poll at the
/// latest, and the set returns it as aborted.
#[test]
fn join_set_aborts_a_waiting_future() {
    let pool = pool(1);
    let dropped = counter();
    let mut set = JoinSet::<()>::new();
    let guard = DropCounter(Arc::clone(&dropped));
    let event = weft::Event::new(weft::EventMode::Manual);
    {
        let event = event.clone();
        set.spawn_future_on(&pool, async move {
            let _guard = guard;
            event.wait_async().await;
        });
    }
    set.abort_all();
    // The wake that lets it be polled again.
    event.signal();
    // Aborted before the wake: whether or not its first poll had run, its
    // next one never starts.
    assert!(set.join_next().unwrap().unwrap_err().is_aborted());
    assert_eventually(HANG, "the future's drop", || {
        dropped.load(Ordering::SeqCst) == 1
    });
}
