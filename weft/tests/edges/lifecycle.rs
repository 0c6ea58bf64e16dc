//! A pool's life seen from odd places: dropped from inside its own task, a panicking `thread_name`, `current_worker_index` in `blocking` and on a spare, bursts run exactly once, first calls into a pool whose workers are still starting.

use super::*;

// --- 8. a pool dropped from inside its own task ------------------------------------

/// A task (or future) of the pool takes the last `Pool` out of a mutex and
/// drops it while another future is parked on an event that main keeps alive
/// and never signals: the parked future's handle still completes, with `Err`.
pub(super) fn pool_dropped_in_own_task(from_future: bool) {
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

pub(super) fn panicking_thread_name() {
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
pub(super) fn build_fails_naming_a_worker(
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
pub(super) fn panicking_spare_thread_name() {
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

pub(super) fn worker_index_in_blocking() {
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

pub(super) fn burst_exactly_once() {
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

// --- first calls into a pool whose workers are still starting ----------------------

/// A program's first calls into a pool none of whose workers has started
/// (the caller yields until one has, api/on_workers.rs): the spawn handler
/// holds every thread back (in some rounds past the callers' 1 ms of
/// yielding), the start hook spawns, four threads call `install` at once,
/// one of whose closures throws a panic whose payload panics on drop, and
/// a thread outside keeps spawning through a handle while the pool drops.
/// Every call returns its value or its panic, every accepted task runs
/// exactly once, the rest are refused, and nothing hangs.
pub(super) fn first_calls_race_a_starting_pool() {
    for round in 0..24u64 {
        let (hooks, hooked_ran) = (counter(), counter());
        let (held_send, held) = mpsc::channel();
        let pool = {
            let (hooks, hooked_ran) = (Arc::clone(&hooks), Arc::clone(&hooked_ran));
            Pool::builder()
                .workers(1 + round as usize % 3)
                .on_thread_start(move |_| {
                    bump(&hooks);
                    let ran = Arc::clone(&hooked_ran);
                    weft::spawn(move || bump(&ran));
                })
                .build_with_spawn_handler(move |thread| {
                    held_send.send(thread).unwrap();
                    Ok(())
                })
                .unwrap()
        };
        let workers = pool.workers();
        let hold = Duration::from_micros([0, 300, 3_000][round as usize % 3]);
        let starter = thread::spawn(move || {
            thread::sleep(hold);
            let threads: Vec<_> = held.iter().collect();
            let running: Vec<_> = threads
                .into_iter()
                .map(|held| thread::spawn(move || held.run()))
                .collect();
            for running in running {
                running.join().unwrap();
            }
        });
        let (accepted, ran) = (counter(), counter());
        let stop_spawning = Arc::new(AtomicBool::new(false));
        let spawner = {
            let (handle, accepted, ran) = (pool.handle(), Arc::clone(&accepted), Arc::clone(&ran));
            let stop = Arc::clone(&stop_spawning);
            thread::spawn(move || {
                while !stop.load(SeqCst) {
                    let ran = Arc::clone(&ran);
                    match handle.spawn(move || bump(&ran)) {
                        Ok(()) => bump(&accepted),
                        Err(_) => break,
                    }
                    thread::yield_now();
                }
            })
        };
        let calls_ran = counter();
        thread::scope(|s| {
            for caller in 0..4u64 {
                let (pool, calls_ran) = (&pool, &calls_ran);
                s.spawn(move || {
                    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
                        pool.install(|| {
                            if caller == 0 {
                                throw_bomb();
                            }
                            bump(calls_ran);
                            caller * 10 + round
                        })
                    }));
                    if caller == 0 {
                        assert!(
                            forget_panic(outcome),
                            "round {round}: the bomb's call returned"
                        );
                    } else {
                        assert_eq!(outcome.ok(), Some(caller * 10 + round), "round {round}");
                    }
                });
            }
        });
        assert_eq!(
            calls_ran.load(SeqCst),
            3,
            "round {round}: the calls that did not panic"
        );
        // The child's timeout catches a hang in any of these joins.
        drop(pool);
        stop_spawning.store(true, SeqCst);
        spawner.join().unwrap();
        starter.join().unwrap();
        assert_eq!(hooks.load(SeqCst), workers, "round {round}: start hooks");
        assert_eq!(
            hooked_ran.load(SeqCst),
            workers,
            "round {round}: tasks the start hooks spawned"
        );
        assert_eq!(
            ran.load(SeqCst),
            accepted.load(SeqCst),
            "round {round}: tasks accepted through the handle that ran"
        );
    }
}
