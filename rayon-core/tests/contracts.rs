//! The contracts rayon programs rely on, checked on the weft-backed
//! rayon-core: thread counts and indexes, broadcasts, FIFO order, panics,
//! a pool dropped while its work runs, nested pools, and the builder's
//! handlers.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

use rayon_core::{ThreadPool, ThreadPoolBuilder};

fn pool(threads: usize) -> ThreadPool {
    ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

#[test]
fn a_pool_has_the_threads_it_was_asked_for() {
    let pool = pool(3);
    assert_eq!(pool.current_num_threads(), 3);
    assert_eq!(pool.install(rayon_core::current_num_threads), 3);
    // Every thread answers a broadcast: the count is real threads, not a hint.
    let threads: Vec<_> = pool.broadcast(|_| std::thread::current().id());
    let mut distinct = threads.clone();
    distinct.sort_by_key(|id| format!("{id:?}"));
    distinct.dedup();
    assert_eq!(distinct.len(), 3);
}

#[test]
fn indexes_are_below_the_count_and_none_outside() {
    let pool = pool(4);
    assert_eq!(rayon_core::current_thread_index(), None);
    assert_eq!(pool.current_thread_index(), None);
    let index = pool.install(rayon_core::current_thread_index).unwrap();
    assert!(index < 4);
    // A task keeps its thread across a wait: its index does not change.
    pool.install(|| {
        let before = rayon_core::current_thread_index();
        rayon_core::join(|| std::thread::sleep(Duration::from_millis(5)), || ());
        assert_eq!(rayon_core::current_thread_index(), before);
    });
}

#[test]
fn broadcast_runs_once_per_thread_in_index_order() {
    let pool = pool(3);
    let seen = pool.broadcast(|ctx| {
        assert_eq!(rayon_core::current_thread_index(), Some(ctx.index()));
        (ctx.index(), ctx.num_threads())
    });
    assert_eq!(seen, [(0, 3), (1, 3), (2, 3)]);
    // From inside the pool, the free function broadcasts to the same pool.
    assert_eq!(
        pool.install(|| rayon_core::broadcast(|ctx| ctx.index())),
        [0, 1, 2]
    );
}

#[test]
fn spawn_broadcast_reaches_every_thread() {
    let pool = pool(3);
    let (send, recv) = mpsc::channel();
    let send = Mutex::new(send);
    pool.spawn_broadcast(move |ctx| send.lock().unwrap().send(ctx.index()).unwrap());
    let mut seen: Vec<_> = recv.iter().take(3).collect();
    seen.sort();
    assert_eq!(seen, [0, 1, 2]);
}

#[test]
fn fifo_spawns_run_oldest_first() {
    let pool = pool(1);
    let order = Mutex::new(Vec::new());
    pool.scope_fifo(|s| {
        for i in 0..10 {
            let order = &order;
            s.spawn_fifo(move |_| order.lock().unwrap().push(i));
        }
    });
    assert_eq!(order.into_inner().unwrap(), (0..10).collect::<Vec<_>>());

    let (send, recv) = mpsc::channel();
    pool.spawn(move || {
        for i in 0..10 {
            let send = send.clone();
            rayon_core::spawn_fifo(move || send.send(i).unwrap());
        }
    });
    assert_eq!(recv.iter().collect::<Vec<_>>(), (0..10).collect::<Vec<_>>());
}

#[test]
fn a_spawned_panic_goes_to_the_panic_handler() {
    let (send, recv) = mpsc::channel();
    let send = Mutex::new(send);
    let pool = ThreadPoolBuilder::new()
        .num_threads(2)
        .panic_handler(move |payload| {
            let message = payload.downcast_ref::<&str>().copied().unwrap_or("?");
            send.lock().unwrap().send(message.to_owned()).unwrap();
        })
        .build()
        .unwrap();
    pool.spawn(|| panic!("lost task"));
    assert_eq!(
        recv.recv_timeout(Duration::from_secs(10)).unwrap(),
        "lost task"
    );
    // The pool goes on working after it.
    assert_eq!(pool.install(|| 5), 5);
}

#[test]
fn a_join_panic_reaches_the_caller_after_the_other_half() {
    let pool = pool(2);
    let other_ran = AtomicUsize::new(0);
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.join(
            || panic!("left half"),
            || {
                std::thread::sleep(Duration::from_millis(20));
                other_ran.fetch_add(1, Ordering::SeqCst);
            },
        )
    }));
    let payload = result.unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"left half"));
    assert_eq!(other_ran.load(Ordering::SeqCst), 1);
}

#[test]
fn a_scope_panic_reaches_the_caller_once_every_task_ended() {
    let pool = pool(2);
    let finished = AtomicUsize::new(0);
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.scope(|s| {
            s.spawn(|_| panic!("in the scope"));
            for _ in 0..8 {
                s.spawn(|_| {
                    std::thread::sleep(Duration::from_millis(5));
                    finished.fetch_add(1, Ordering::SeqCst);
                });
            }
        })
    }));
    assert!(result.is_err());
    assert_eq!(finished.load(Ordering::SeqCst), 8);
}

/// Run in a child process by the next test: a panic with no handler ends
/// the process.
#[test]
#[ignore]
fn child_panics_without_a_handler() {
    let pool = pool(1);
    pool.spawn(|| panic!("nobody catches this"));
    std::thread::sleep(Duration::from_secs(30));
}

#[test]
fn without_a_panic_handler_a_spawned_panic_aborts() {
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "child_panics_without_a_handler"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(!status.success());
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            status.signal(),
            Some(6),
            "SIGABRT, from std::process::abort"
        );
    }
}

#[test]
fn dropping_a_pool_does_not_wait_for_its_work() {
    let exits = Arc::new(AtomicUsize::new(0));
    let exited = Arc::clone(&exits);
    let pool = ThreadPoolBuilder::new()
        .num_threads(2)
        .exit_handler(move |_| {
            exited.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    let (release, held) = mpsc::channel::<()>();
    let (done, finished) = mpsc::channel();
    pool.spawn(move || {
        held.recv().unwrap();
        // Work queued by the running task after the drop still runs.
        let done = done.clone();
        rayon_core::spawn(move || done.send("spawned after the drop").unwrap());
    });
    drop(pool); // returns with the task still blocked
    assert_eq!(exits.load(Ordering::SeqCst), 0);
    release.send(()).unwrap();
    assert_eq!(
        finished.recv_timeout(Duration::from_secs(10)).unwrap(),
        "spawned after the drop"
    );
    // Then the threads wind down on their own.
    for _ in 0..1000 {
        if exits.load(Ordering::SeqCst) == 2 {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("the exit handlers did not run");
}

#[test]
fn nested_pools_answer_for_the_innermost() {
    let outer = pool(2);
    let inner = pool(3);
    outer.install(|| {
        assert_eq!(rayon_core::current_num_threads(), 2);
        assert!(outer.current_thread_index().is_some());
        assert_eq!(inner.current_thread_index(), None);
        inner.install(|| {
            assert_eq!(rayon_core::current_num_threads(), 3);
            assert!(inner.current_thread_index().is_some());
            assert_eq!(outer.current_thread_index(), None);
            let (a, b) = rayon_core::join(|| 1, || 2);
            assert_eq!(a + b, 3);
        });
        assert_eq!(rayon_core::current_num_threads(), 2);
    });
}

#[test]
fn handlers_and_names_reach_every_thread() {
    let started = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&started);
    let pool = ThreadPoolBuilder::new()
        .num_threads(3)
        .thread_name(|i| format!("shim-test-{i}"))
        .start_handler(move |_| {
            count.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    let names = pool.broadcast(|_| std::thread::current().name().unwrap().to_owned());
    assert_eq!(names, ["shim-test-0", "shim-test-1", "shim-test-2"]);
    // Each start handler ran before its thread's part of the broadcast.
    assert_eq!(started.load(Ordering::SeqCst), 3);
}

#[test]
fn a_spawn_handler_may_borrow_and_sees_the_names() {
    let mut seen = Vec::new();
    let mut threads = Vec::new();
    let pool = ThreadPoolBuilder::new()
        .num_threads(2)
        .thread_name(|i| format!("borrowed-{i}"))
        .spawn_handler(|thread| {
            seen.push((thread.index(), thread.name().map(str::to_owned)));
            threads.push(std::thread::spawn(|| thread.run()));
            Ok(())
        })
        .build()
        .unwrap();
    assert_eq!(pool.install(|| 1 + 1), 2);
    drop(pool);
    assert_eq!(
        seen,
        [
            (0, Some("borrowed-0".to_owned())),
            (1, Some("borrowed-1".to_owned()))
        ]
    );
    for thread in threads {
        thread.join().unwrap();
    }
}

#[test]
fn a_failing_spawn_handler_fails_the_build_with_its_error() {
    let error = ThreadPoolBuilder::new()
        .num_threads(2)
        .spawn_handler(|_| Err(std::io::Error::other("no threads today")))
        .build()
        .unwrap_err();
    assert_eq!(error.to_string(), "no threads today");
    assert!(std::error::Error::source(&error).is_some());
}

#[test]
fn use_current_thread_makes_the_caller_thread_zero() {
    std::thread::spawn(|| {
        let pool = ThreadPoolBuilder::new()
            .num_threads(2)
            .use_current_thread()
            .build()
            .unwrap();
        assert_eq!(rayon_core::current_thread_index(), Some(0));
        let again = ThreadPoolBuilder::new().use_current_thread().build();
        assert_eq!(
            again.unwrap_err().to_string(),
            "The current thread is already part of another thread pool."
        );
        let barrier = Barrier::new(2);
        pool.join(|| barrier.wait(), || barrier.wait());
        drop(pool);
    })
    .join()
    .unwrap();
}

#[test]
fn pending_tasks_and_yields_are_the_callers() {
    let pool = pool(1);
    assert_eq!(pool.current_thread_has_pending_tasks(), None);
    assert_eq!(pool.yield_now(), None);
    pool.install(|| {
        assert_eq!(pool.current_thread_has_pending_tasks(), Some(false));
        let ran = Arc::new(AtomicUsize::new(0));
        let flag = Arc::clone(&ran);
        rayon_core::spawn(move || {
            flag.fetch_add(1, Ordering::SeqCst);
        });
        assert_eq!(pool.current_thread_has_pending_tasks(), Some(true));
        assert_eq!(pool.yield_local(), Some(rayon_core::Yield::Executed));
        assert_eq!(ran.load(Ordering::SeqCst), 1);
        assert_eq!(pool.yield_now(), Some(rayon_core::Yield::Idle));
    });
}

#[test]
fn scopes_borrow_and_wait() {
    let pool = pool(2);
    let mut data = [0; 16];
    pool.scope(|s| {
        for (i, slot) in data.iter_mut().enumerate() {
            s.spawn(move |_| *slot = i * i);
        }
    });
    assert_eq!(data[15], 225);
    let total = AtomicUsize::new(0);
    pool.in_place_scope(|s| {
        s.spawn_broadcast(|_, ctx| {
            total.fetch_add(ctx.index() + 1, Ordering::SeqCst);
        });
    });
    assert_eq!(total.load(Ordering::SeqCst), 3);
}

#[test]
fn build_scoped_threads_may_borrow() {
    let label = String::from("scoped");
    let names = ThreadPoolBuilder::new()
        .num_threads(2)
        .thread_name(|i| format!("s-{i}"))
        .build_scoped(
            |thread| {
                assert_eq!(label, "scoped");
                thread.run();
            },
            |pool| pool.broadcast(|_| std::thread::current().name().unwrap().to_owned()),
        )
        .unwrap();
    assert_eq!(names, ["s-0", "s-1"]);
}

#[test]
#[allow(deprecated)]
fn the_deprecated_configuration_still_builds() {
    let config = rayon_core::Configuration::new()
        .num_threads(2)
        .thread_name(|i| format!("old-{i}"))
        .breadth_first();
    assert!(format!("{config:?}").contains("num_threads: 2"));
    let pool = ThreadPool::new(config).unwrap();
    assert_eq!(pool.current_num_threads(), 2);
    assert_eq!(
        pool.broadcast(|_| std::thread::current().name().unwrap().to_owned()),
        ["old-0", "old-1"]
    );
}
