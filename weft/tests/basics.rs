//! The public API does what it says: every task runs exactly once, results and
//! panics reach the caller, and bad input gets a clear error.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use weft::{BuildError, Pool};

fn pool(workers: usize) -> Pool {
    Pool::builder().workers(workers).build().expect("pool")
}

#[test]
fn spawned_tasks_run_exactly_once_and_drop_waits_for_them() {
    let runs: Arc<Vec<AtomicUsize>> = Arc::new((0..10_000).map(|_| AtomicUsize::new(0)).collect());
    let pool = pool(4);
    for i in 0..10_000 {
        let runs = Arc::clone(&runs);
        pool.spawn(move || {
            runs[i].fetch_add(1, Ordering::Relaxed);
        });
    }
    drop(pool);
    assert!(runs.iter().all(|count| count.load(Ordering::Relaxed) == 1));
}

#[test]
fn tasks_spawned_by_tasks_during_shutdown_still_run() {
    let count = Arc::new(AtomicUsize::new(0));
    let pool = pool(3);
    for _ in 0..100 {
        let count = Arc::clone(&count);
        pool.spawn(move || {
            for _ in 0..10 {
                let count = Arc::clone(&count);
                weft::spawn(move || {
                    std::thread::sleep(Duration::from_micros(50));
                    count.fetch_add(1, Ordering::Relaxed);
                });
            }
        });
    }
    drop(pool);
    assert_eq!(count.load(Ordering::Relaxed), 1000);
}

#[test]
fn join_returns_both_results_and_nests() {
    fn sum(range: std::ops::Range<u64>) -> u64 {
        if range.end - range.start <= 64 {
            return range.sum();
        }
        let mid = (range.start + range.end) / 2;
        let (a, b) = weft::join(|| sum(range.start..mid), || sum(mid..range.end));
        a + b
    }
    let pool = pool(4);
    assert_eq!(pool.install(|| sum(0..100_000)), (0..100_000u64).sum());
    assert_eq!(pool.join(|| 1, || 2), (1, 2));
}

#[test]
fn join_outside_any_pool_uses_the_global_pool() {
    let (a, b) = weft::join(weft::current_worker_index, weft::current_worker_index);
    assert!(a.is_some() && b.is_some());
}

#[test]
fn join_raises_a_panic_only_after_the_other_side_finished() {
    let pool = pool(2);
    let other_finished = AtomicUsize::new(0);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.join(
            || panic!("left side"),
            || {
                std::thread::sleep(Duration::from_millis(20));
                other_finished.store(1, Ordering::SeqCst);
            },
        )
    }));
    assert!(result.is_err());
    assert_eq!(other_finished.load(Ordering::SeqCst), 1);
}

#[test]
fn scope_tasks_borrow_and_nest() {
    let pool = pool(4);
    let mut slots = vec![0usize; 64];
    pool.scope(|s| {
        for (i, slot) in slots.iter_mut().enumerate() {
            s.spawn(move |s| {
                *slot = i;
                s.spawn(move |_| ());
            });
        }
    });
    assert_eq!(slots, (0..64).collect::<Vec<_>>());
}

#[test]
fn scope_raises_a_task_panic_after_all_tasks_finished() {
    let pool = pool(2);
    let finished = AtomicUsize::new(0);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.scope(|s| {
            s.spawn(|_| panic!("task"));
            for _ in 0..10 {
                s.spawn(|_| {
                    std::thread::sleep(Duration::from_millis(2));
                    finished.fetch_add(1, Ordering::SeqCst);
                });
            }
        })
    }));
    assert!(result.is_err());
    assert_eq!(finished.load(Ordering::SeqCst), 10);
}

#[test]
fn spawn_with_handle_returns_values_and_panics() {
    let pool = pool(2);
    let handle = pool.spawn_with_handle(|| 7);
    assert_eq!(handle.join().unwrap(), 7);
    let handle = pool.spawn_with_handle(|| -> u32 { panic!("boom") });
    let payload = handle.join().unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
}

#[test]
fn join_handle_waited_on_inside_a_one_worker_pool_helps() {
    let pool = pool(1);
    let value = pool.install(|| pool.spawn_with_handle(|| 5).join().unwrap());
    assert_eq!(value, 5);
}

#[test]
fn spawn_on_runs_on_the_named_worker() {
    let pool = pool(4);
    for index in 0..4 {
        let handle = Arc::new(Mutex::new(None));
        let seen = Arc::clone(&handle);
        let (done, wait) = std::sync::mpsc::channel();
        pool.spawn_on(index, move || {
            *seen.lock().unwrap() = weft::current_worker_index();
            done.send(()).unwrap();
        });
        wait.recv().unwrap();
        assert_eq!(*handle.lock().unwrap(), Some(index));
    }
}

#[test]
#[should_panic(expected = "spawn_on: worker index 9 out of range for a pool of 2 workers")]
fn spawn_on_a_bad_index_panics_clearly() {
    pool(2).spawn_on(9, || ());
}

#[test]
fn handle_spawn_on_a_bad_index_gives_the_task_back() {
    let pool = pool(2);
    let handle = pool.handle();
    let (sender, receiver) = std::sync::mpsc::channel();
    let refused = handle
        .spawn_on(2, move || sender.send("ran elsewhere").unwrap())
        .unwrap_err();
    assert!(!refused.is_closed());
    assert_eq!(
        refused.to_string(),
        "spawn_on: worker index 2 out of range for a pool of 2 workers; the task was not run"
    );
    (refused.into_inner())();
    assert_eq!(receiver.recv().unwrap(), "ran elsewhere");
    drop(pool);
    assert!(handle.spawn_on(0, || ()).unwrap_err().is_closed());
    assert!(handle.spawn(|| ()).unwrap_err().is_closed());
}

#[test]
fn broadcast_runs_once_on_every_worker() {
    let pool = pool(8);
    let seen = pool.broadcast(|i| (i, weft::current_worker_index()));
    assert_eq!(seen, (0..8).map(|i| (i, Some(i))).collect::<Vec<_>>());
}

#[test]
fn handle_spawn_fails_after_the_pool_is_dropped_and_gives_the_task_back() {
    let pool = pool(2);
    let handle = pool.handle();
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&ran);
    handle
        .spawn(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    drop(pool);
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    assert!(handle.is_closed());
    let counter = Arc::clone(&ran);
    let refused = handle
        .spawn(move || {
            counter.fetch_add(10, Ordering::SeqCst);
        })
        .unwrap_err();
    assert_eq!(ran.load(Ordering::SeqCst), 1, "a refused task does not run");
    refused.into_inner()();
    assert_eq!(ran.load(Ordering::SeqCst), 11, "the task came back intact");
}

#[test]
fn panics_in_spawned_tasks_reach_the_handler_and_workers_survive() {
    let caught = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&caught);
    let pool = Pool::builder()
        .workers(2)
        .panic_handler(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    for _ in 0..10 {
        pool.spawn(|| panic!("task panic"));
    }
    assert_eq!(pool.install(|| 1 + 1), 2);
    drop(pool);
    assert_eq!(caught.load(Ordering::SeqCst), 10);
}

#[test]
fn thread_hooks_and_names_apply_to_every_worker() {
    let started = Arc::new(AtomicUsize::new(0));
    let stopped = Arc::new(AtomicUsize::new(0));
    let (s, t) = (Arc::clone(&started), Arc::clone(&stopped));
    let pool = Pool::builder()
        .workers(3)
        .thread_name(|i| format!("named-{i}"))
        .stack_size(256 * 1024)
        .on_thread_start(move |_| {
            s.fetch_add(1, Ordering::SeqCst);
        })
        .on_thread_stop(move |_| {
            t.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    let names = pool.broadcast(|_| std::thread::current().name().map(str::to_owned));
    assert_eq!(
        names,
        (0..3)
            .map(|i| Some(format!("named-{i}")))
            .collect::<Vec<_>>()
    );
    drop(pool);
    assert_eq!(started.load(Ordering::SeqCst), 3);
    assert_eq!(stopped.load(Ordering::SeqCst), 3);
}

#[test]
fn bad_configurations_are_clear_errors() {
    assert!(matches!(
        Pool::builder().workers(0).build(),
        Err(BuildError::ZeroWorkers)
    ));
    assert!(matches!(
        Pool::builder().workers(1 << 20).build(),
        Err(BuildError::TooManyWorkers { .. })
    ));
    assert!(matches!(
        Pool::builder().workers(1).stack_size(1024).build(),
        Err(BuildError::StackTooSmall { .. })
    ));
    let message = Pool::builder().workers(0).build().unwrap_err().to_string();
    assert_eq!(message, "a pool needs at least one worker");
}

#[test]
fn build_global_twice_is_an_error() {
    // The first call may lose to a lazy use of the global pool by another test;
    // the second can never succeed.
    let _ = Pool::builder().workers(2).build_global();
    assert!(matches!(
        Pool::builder().workers(2).build_global(),
        Err(BuildError::GlobalAlreadyInitialized)
    ));
}

#[test]
fn pinned_workers_still_run_tasks() {
    let pool = Pool::builder()
        .workers(2)
        .pin_workers(true)
        .build()
        .unwrap();
    assert_eq!(pool.install(|| 40 + 2), 42);
}

#[test]
fn a_pool_dropped_inside_its_own_task_drains_and_exits() {
    let pool = Arc::new(Mutex::new(Some(pool(2))));
    let (done, wait) = std::sync::mpsc::channel();
    let slot = Arc::clone(&pool);
    pool.lock().unwrap().as_ref().unwrap().spawn(move || {
        let own = slot.lock().unwrap().take();
        drop(own);
        done.send(()).unwrap();
    });
    wait.recv().unwrap();
}

#[test]
fn a_failed_thread_start_is_an_error_and_leaks_no_worker() {
    // No system maps a stack this large, so the first worker fails to start.
    let stopped = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&stopped);
    let result = Pool::builder()
        .workers(4)
        .stack_size(1 << 60)
        .on_thread_stop(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
        })
        .build();
    match result {
        Err(BuildError::ThreadSpawn { index, .. }) => {
            // Every worker started before the failure was stopped and joined.
            assert_eq!(stopped.load(Ordering::SeqCst), index);
        }
        other => panic!("expected a thread start error, got {other:?}"),
    }
}

/// A thread outside the pool spawning into a running scope after the pool
/// was dropped: the scope's owner still runs in the pool, so the task is
/// accepted and run.
#[test]
fn scope_spawn_from_a_helper_thread_after_close() {
    let (tx, rx) = std::sync::mpsc::channel();
    let pool = weft::Pool::builder().workers(1).build().unwrap();
    let (started_tx, started_rx) = std::sync::mpsc::channel();
    pool.spawn(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            weft::scope(|s| {
                started_tx.send(()).unwrap();
                std::thread::scope(|ts| {
                    ts.spawn(|| {
                        std::thread::sleep(Duration::from_millis(200));
                        s.spawn(|_| ());
                    });
                });
            })
        }));
        tx.send(r.is_ok()).unwrap();
    });
    started_rx.recv().unwrap();
    drop(pool);
    assert!(
        rx.recv().unwrap(),
        "scope spawn from a helper thread panicked after close"
    );
}

/// A pool of many more workers than cores dropped while other threads keep
/// spawning into it through handles, while its start and stop hooks spawn,
/// and while its tasks join and panic with payloads whose destructors panic
/// (no panic handler: the worker drops them). Every task runs at most once,
/// every task's closure is dropped exactly once (run, refused, or dropped
/// unrun by the closing pool), and every hook's task runs.
#[test]
fn a_pool_dropped_amid_outside_spawns_spawning_hooks_and_bomb_payloads_loses_nothing() {
    struct Bomb;
    impl Drop for Bomb {
        fn drop(&mut self) {
            if !std::thread::panicking() {
                panic!("the payload's destructor panics");
            }
        }
    }
    /// Counts its drop: one per task closure, however the task ends.
    struct Token(Arc<AtomicUsize>);
    impl Drop for Token {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    const WORKERS: usize = 64;
    const SPAWNERS: usize = 4;
    const TASKS: usize = 200;
    for _ in 0..5 {
        let hooks_ran = Arc::new(AtomicUsize::new(0));
        let (on_start, on_stop) = (Arc::clone(&hooks_ran), Arc::clone(&hooks_ran));
        let pool = weft::Pool::builder()
            .workers(WORKERS)
            .on_thread_start(move |_| {
                let ran = Arc::clone(&on_start);
                weft::spawn(move || {
                    ran.fetch_add(1, Ordering::SeqCst);
                });
            })
            .on_thread_stop(move |_| {
                let ran = Arc::clone(&on_stop);
                weft::spawn(move || {
                    ran.fetch_add(1, Ordering::SeqCst);
                });
            })
            .build()
            .unwrap();
        let runs: Arc<Vec<AtomicUsize>> =
            Arc::new((0..SPAWNERS * TASKS).map(|_| AtomicUsize::new(0)).collect());
        let tokens_dropped = Arc::new(AtomicUsize::new(0));
        let spawners: Vec<_> = (0..SPAWNERS)
            .map(|spawner| {
                let handle = pool.handle();
                let runs = Arc::clone(&runs);
                let tokens_dropped = Arc::clone(&tokens_dropped);
                std::thread::spawn(move || {
                    for i in 0..TASKS {
                        let id = spawner * TASKS + i;
                        let token = Token(Arc::clone(&tokens_dropped));
                        let runs = Arc::clone(&runs);
                        let task = move || {
                            let _token = token;
                            runs[id].fetch_add(1, Ordering::SeqCst);
                            let (a, b) = weft::join(|| id, || id + 1);
                            assert_eq!(a + 1, b);
                            if id % 7 == 0 {
                                std::panic::panic_any(Bomb);
                            }
                        };
                        if let Err(refused) = handle.spawn(task) {
                            assert!(refused.is_closed());
                            drop(refused.into_inner());
                        }
                    }
                })
            })
            .collect();
        std::thread::yield_now();
        drop(pool);
        for spawner in spawners {
            spawner.join().unwrap();
        }
        assert!(
            runs.iter().all(|runs| runs.load(Ordering::SeqCst) <= 1),
            "a task ran twice"
        );
        assert_eq!(
            tokens_dropped.load(Ordering::SeqCst),
            SPAWNERS * TASKS,
            "a task's closure was leaked or dropped twice"
        );
        assert_eq!(
            hooks_ran.load(Ordering::SeqCst),
            2 * WORKERS,
            "a hook's task did not run"
        );
    }
}
