//! `weft::blocking`: a worker that blocks keeps the pool's capacity, because a
//! spare thread stands in for it; inside the call the thread is not a worker.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(60);

/// Every worker blocks on a barrier that only a task queued behind them can
/// complete: without stand-ins this would hang (each worker holds one party).
#[test]
fn all_workers_blocked_still_run_queued_tasks() {
    for workers in [1, 2, 8] {
        let pool = weft::Pool::builder().workers(workers).build().unwrap();
        let barrier = Arc::new(Barrier::new(workers + 1));
        let wg = weft::WaitGroup::new();
        wg.add(workers + 1);
        for _ in 0..workers {
            let (barrier, wg) = (barrier.clone(), wg.clone());
            pool.spawn(move || {
                weft::blocking(|| barrier.wait());
                wg.done();
            });
        }
        let (barrier2, wg2) = (barrier.clone(), wg.clone());
        pool.spawn(move || {
            barrier2.wait();
            wg2.done();
        });
        assert!(
            wg.wait_timeout(LONG),
            "{workers} workers: a queued task never ran"
        );
        // With every worker blocked, one of the tasks ran on a spare. A task
        // is counted just after it ran, so the count may land a moment later.
        let deadline = std::time::Instant::now() + LONG;
        while pool.stats().spares.tasks_run == 0 {
            assert!(std::time::Instant::now() < deadline, "no spare ran a task");
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

#[test]
fn returns_the_value_and_runs_inline_off_a_worker() {
    assert_eq!(weft::blocking(|| 7), 7);
    let pool = weft::Pool::builder().workers(2).build().unwrap();
    let got = pool.install(|| weft::blocking(|| String::from("done")));
    assert_eq!(got, "done");
}

/// Inside the call the thread is not a worker (waits block it rather than
/// running tasks on top of the call); afterwards it is the same worker again.
#[test]
fn inside_the_call_the_thread_is_not_a_worker() {
    let pool = weft::Pool::builder().workers(2).build().unwrap();
    let (before, inside, after) = pool.install(|| {
        let before = weft::current_worker_index();
        let inside = weft::blocking(weft::current_worker_index);
        (before, inside, weft::current_worker_index())
    });
    assert!(before.is_some());
    assert_eq!(inside, None);
    assert_eq!(after, before);
}

/// Free functions called inside the blocking call act on the worker's own
/// pool, not on the global one.
#[test]
fn spawn_and_join_inside_the_call_use_the_same_pool() {
    // Spare threads run the pool's tasks too but are none of its workers
    // (`current_worker_index` is `None` there): tell the pool's threads by
    // their names.
    let pool = weft::Pool::builder()
        .workers(2)
        .thread_name(|i| format!("this-pool-{i}"))
        .build()
        .unwrap();
    let thread_name = || std::thread::current().name().map(str::to_owned);
    let on_pool = |name: &Option<String>| {
        name.as_deref()
            .is_some_and(|name| name.starts_with("this-pool-"))
    };
    let (sender, receiver) = mpsc::channel();
    let joined = pool.install(move || {
        weft::blocking(move || {
            weft::spawn(move || sender.send(thread_name()).unwrap());
            weft::join(thread_name, thread_name)
        })
    });
    let spawned_on = receiver.recv_timeout(LONG).unwrap();
    assert!(
        on_pool(&spawned_on),
        "spawned task ran off the pool: {spawned_on:?}"
    );
    assert!(on_pool(&joined.0) && on_pool(&joined.1), "{joined:?}");
}

#[test]
fn a_panic_in_the_call_reaches_the_caller_and_the_pool_lives_on() {
    let pool = weft::Pool::builder().workers(2).build().unwrap();
    let caught = pool
        .install(|| std::panic::catch_unwind(|| weft::blocking(|| panic!("blocked call failed"))));
    let payload = caught.unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"blocked call failed"));
    assert_eq!(pool.install(|| 1 + 1), 2);
}

/// More blocking calls at once than spare seats: the extra ones run without a
/// stand-in, and every task still runs exactly once.
#[test]
fn more_blocking_calls_than_spares_all_finish() {
    let pool = weft::Pool::builder()
        .workers(4)
        .max_blocking(2)
        .build()
        .unwrap();
    let runs: Arc<Vec<AtomicUsize>> = Arc::new((0..64).map(|_| AtomicUsize::new(0)).collect());
    let wg = weft::WaitGroup::new();
    for i in 0..64 {
        wg.add(1);
        let (runs, wg) = (runs.clone(), wg.clone());
        pool.spawn(move || {
            weft::blocking(|| std::thread::sleep(Duration::from_millis(2)));
            runs[i].fetch_add(1, Ordering::Relaxed);
            wg.done();
        });
    }
    assert!(wg.wait_timeout(LONG));
    assert!(runs.iter().all(|count| count.load(Ordering::Relaxed) == 1));
}

/// A spare that itself blocks gets a spare of its own.
#[test]
fn nested_blocking_calls_each_get_a_stand_in() {
    let pool = weft::Pool::builder().workers(1).build().unwrap();
    let (first_tx, first_rx) = mpsc::channel::<()>();
    let (second_tx, second_rx) = mpsc::channel::<()>();
    let done = weft::WaitGroup::new();
    done.add(3);
    let d = done.clone();
    pool.spawn(move || {
        weft::blocking(|| first_rx.recv_timeout(LONG).unwrap());
        d.done();
    });
    let d = done.clone();
    pool.spawn(move || {
        weft::blocking(|| second_rx.recv_timeout(LONG).unwrap());
        first_tx.send(()).unwrap();
        d.done();
    });
    let d = done.clone();
    pool.spawn(move || {
        second_tx.send(()).unwrap();
        d.done();
    });
    assert!(done.wait_timeout(LONG));
}

/// The shape a helping wait cannot run (a chain of tasks, each waiting on the
/// one queued after it), made safe by waiting inside `blocking`.
#[test]
fn a_chain_of_waits_inside_blocking_does_not_deadlock() {
    const CHAIN: usize = 48;
    let pool = weft::Pool::builder()
        .workers(2)
        .max_blocking(CHAIN)
        .build()
        .unwrap();
    let events: Vec<weft::Event> = (0..=CHAIN)
        .map(|_| weft::Event::new(weft::EventMode::Auto))
        .collect();
    for i in 0..CHAIN {
        let (prev, next) = (events[i].clone(), events[i + 1].clone());
        pool.spawn(move || {
            weft::blocking(|| prev.wait());
            next.signal();
        });
    }
    events[0].signal();
    assert!(events[CHAIN].wait_timeout(LONG), "the chain stalled");
}

#[test]
fn spare_threads_are_named_hooked_and_joined_on_drop() {
    let started = Arc::new(AtomicUsize::new(0));
    let stopped = Arc::new(AtomicUsize::new(0));
    let names = Arc::new(Mutex::new(Vec::new()));
    let pool = {
        let (started, stopped) = (started.clone(), stopped.clone());
        weft::Pool::builder()
            .workers(1)
            .thread_name(|i| format!("unit-{i}"))
            .on_thread_start(move |_| {
                started.fetch_add(1, Ordering::SeqCst);
            })
            .on_thread_stop(move |_| {
                stopped.fetch_add(1, Ordering::SeqCst);
            })
            .build()
            .unwrap()
    };
    let (sender, receiver) = mpsc::channel();
    let names2 = names.clone();
    pool.install(move || {
        weft::spawn(move || {
            let name = std::thread::current().name().map(str::to_owned);
            names2.lock().unwrap().push(name);
            sender.send(()).unwrap();
        });
        weft::blocking(|| receiver.recv_timeout(LONG).unwrap());
    });
    drop(pool);
    assert_eq!(started.load(Ordering::SeqCst), 2, "one worker, one spare");
    assert_eq!(
        stopped.load(Ordering::SeqCst),
        2,
        "drop joined the spare too"
    );
    let names = names.lock().unwrap();
    assert_eq!(names.len(), 1);
    assert!(
        names[0].as_deref().is_some_and(|n| n.starts_with("unit-")),
        "{names:?}"
    );
}

#[test]
fn max_blocking_beyond_the_counters_is_an_error() {
    let error = weft::Pool::builder()
        .workers(2)
        .max_blocking(1 << 20)
        .build()
        .unwrap_err();
    assert!(matches!(error, weft::BuildError::TooManyBlocking { .. }));
    assert!(error.to_string().contains("blocking"), "{error}");
    // Zero spares is allowed: blocking calls then run without a stand-in.
    let pool = weft::Pool::builder()
        .workers(1)
        .max_blocking(0)
        .build()
        .unwrap();
    assert_eq!(pool.install(|| weft::blocking(|| 3)), 3);
}

/// The pool still parks once the blocking calls are over: a retired spare
/// leaves the wake protocol.
#[test]
fn spares_park_and_the_pool_drains_after_blocking() {
    let pool = weft::Pool::builder().workers(4).build().unwrap();
    let wg = weft::WaitGroup::new();
    for _ in 0..16 {
        wg.add(1);
        let wg = wg.clone();
        pool.spawn(move || {
            weft::blocking(|| std::thread::sleep(Duration::from_millis(1)));
            wg.done();
        });
    }
    assert!(wg.wait_timeout(LONG));
    // All four workers park again (spares are off the protocol once retired).
    let deadline = std::time::Instant::now() + LONG;
    loop {
        let stats = pool.stats();
        if stats.sleeping_now == 4 && stats.searching_now == 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "pool never parked: {stats}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Many more threads than cores: tasks that block (some inside `blocking`,
/// some spawning more work from inside it) all run exactly once, and the
/// pool drains and joins every thread on drop.
#[test]
fn stress_blocking_with_many_workers() {
    const TASKS: usize = 3_000;
    let pool = weft::Pool::builder()
        .workers(64)
        .max_blocking(32)
        .build()
        .unwrap();
    let runs: Arc<Vec<AtomicUsize>> =
        Arc::new((0..TASKS * 2).map(|_| AtomicUsize::new(0)).collect());
    let wg = weft::WaitGroup::new();
    wg.add(TASKS * 2);
    for i in 0..TASKS {
        let (runs, wg) = (runs.clone(), wg.clone());
        pool.spawn(move || {
            runs[i].fetch_add(1, Ordering::Relaxed);
            if i % 3 == 0 {
                let (runs, wg) = (runs.clone(), wg.clone());
                weft::blocking(move || {
                    std::thread::sleep(Duration::from_micros(50));
                    weft::spawn(move || {
                        runs[TASKS + i].fetch_add(1, Ordering::Relaxed);
                        wg.done();
                    });
                });
            } else {
                runs[TASKS + i].fetch_add(1, Ordering::Relaxed);
                wg.done();
            }
            wg.done();
        });
    }
    assert!(wg.wait_timeout(LONG), "tasks were lost");
    drop(pool);
    assert!(runs.iter().all(|count| count.load(Ordering::Relaxed) == 1));
}

/// A pool dropped inside `weft::blocking` by one of its own tasks does not
/// wait for itself (its workers drain and exit, detached).
#[test]
fn pool_dropped_inside_blocking_by_its_own_task_does_not_hang() {
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let pool = Arc::new(weft::Pool::builder().workers(2).build().unwrap());
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let mine = pool.clone();
        pool.spawn(move || {
            weft::blocking(move || {
                go_rx.recv().unwrap();
                drop(mine); // the last reference
            });
            done_tx.send(()).unwrap();
        });
        drop(pool);
        go_tx.send(()).unwrap();
    });
    assert!(
        done_rx.recv_timeout(Duration::from_secs(5)).is_ok(),
        "dropping the pool inside blocking() hung"
    );
}

/// A spare whose borrower already returned (it is retiring) and whose task
/// then blocks gets another spare, not itself, as a stand-in.
#[test]
fn a_retiring_spare_that_blocks_gets_a_real_stand_in() {
    let pool = weft::Pool::builder()
        .workers(1)
        .max_blocking(4)
        .build()
        .unwrap();
    let (entered_tx, entered_rx) = mpsc::channel();
    let (a_tx, a_rx) = mpsc::channel::<()>();
    let (retired_tx, retired_rx) = mpsc::channel::<()>();
    let (hold_tx, hold_rx) = mpsc::channel::<()>();
    let (result_tx, result_rx) = mpsc::channel();
    pool.spawn(move || {
        entered_tx.send(()).unwrap();
        weft::blocking(|| a_rx.recv().unwrap()); // spare S1 stands in
        retired_tx.send(()).unwrap(); // S1 is RETIRING now
                                      // Keep the only worker busy (a plain wait, not weft::blocking).
        let _ = hold_rx.recv_timeout(Duration::from_secs(10));
    });
    entered_rx.recv().unwrap();
    pool.spawn(move || {
        // Runs on S1 (the worker is blocked).
        a_tx.send(()).unwrap();
        retired_rx.recv().unwrap();
        let (b_tx, b_rx) = mpsc::channel();
        weft::spawn(move || b_tx.send(()).unwrap());
        let ok = weft::blocking(|| b_rx.recv_timeout(Duration::from_secs(2))).is_ok();
        result_tx.send(ok).unwrap();
        hold_tx.send(()).unwrap();
    });
    assert!(
        result_rx.recv_timeout(Duration::from_secs(20)).unwrap(),
        "the spare's blocking call had no stand-in: the task it spawned never ran"
    );
}
