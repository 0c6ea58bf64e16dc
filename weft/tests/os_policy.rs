//! `Builder::batch_scheduling`: on Linux the threads that run a pool's tasks
//! (workers, spares, a spawn handler's threads) run under `SCHED_BATCH`
//! when the pool has more workers than the process has cores or the
//! builder asks for it; only a thread under the normal policy is moved,
//! and a thread gets its own policy back when it leaves the pool. Threads
//! start under the policy of the thread that spawns them, so each test
//! compares with the test thread's own (a test run under `chrt` still
//! passes).
#![cfg(target_os = "linux")]

use std::sync::mpsc;
use std::time::Duration;

use weft::Pool;

const LONG: Duration = Duration::from_secs(30);

/// The calling thread's policy.
fn policy() -> i32 {
    // SAFETY: takes a thread id (0: the calling thread) and no pointer.
    unsafe { libc::sched_getscheduler(0) }
}

/// The policy the pool's threads get when started from this thread.
fn expected_in_pool(batch: bool) -> i32 {
    let own = policy();
    if batch && own == libc::SCHED_OTHER {
        libc::SCHED_BATCH
    } else {
        own
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

#[test]
fn a_pool_of_more_workers_than_cores_runs_under_sched_batch_by_default() {
    let pool = Pool::builder().workers(cores() + 1).build().unwrap();
    let (sender, receiver) = mpsc::channel();
    for _ in 0..8 {
        let sender = sender.clone();
        pool.spawn(move || sender.send(policy()).unwrap());
    }
    for _ in 0..8 {
        assert_eq!(receiver.recv_timeout(LONG).unwrap(), expected_in_pool(true));
    }
    assert_eq!(pool.install(policy), expected_in_pool(true));
    // The caller of `install` is no worker: its own policy is untouched.
    assert_eq!(policy(), expected_in_pool(false));
}

#[test]
fn a_pool_that_fits_the_cores_keeps_the_normal_policy_by_default() {
    let pool = Pool::builder().workers(cores()).build().unwrap();
    assert_eq!(pool.install(policy), expected_in_pool(false));
    let asked = Pool::builder()
        .workers(cores())
        .batch_scheduling(true)
        .build()
        .unwrap();
    assert_eq!(asked.install(policy), expected_in_pool(true));
}

#[test]
fn batch_scheduling_off_leaves_the_threads_policy() {
    let pool = Pool::builder()
        .workers(cores() + 1)
        .batch_scheduling(false)
        .build()
        .unwrap();
    assert_eq!(pool.install(policy), expected_in_pool(false));
}

#[test]
fn a_spare_thread_runs_under_the_pools_policy() {
    let pool = Pool::builder()
        .workers(1)
        .batch_scheduling(true)
        .build()
        .unwrap();
    let (sender, receiver) = mpsc::channel();
    let (done, wait) = mpsc::channel();
    pool.install(move || {
        // The only worker blocks, so the spawned task runs on a spare.
        weft::spawn(move || {
            let name = std::thread::current().name().map(str::to_owned);
            sender.send((name, policy())).unwrap();
            done.send(()).unwrap();
        });
        weft::blocking(|| wait.recv_timeout(LONG).unwrap());
    });
    let (name, seen) = receiver.recv_timeout(LONG).unwrap();
    assert!(
        name.as_deref()
            .is_some_and(|n| n.starts_with("weft-spare-")),
        "{name:?}"
    );
    assert_eq!(seen, expected_in_pool(true));
}

#[test]
fn a_spawn_handlers_thread_gets_its_policy_back() {
    let (inside, inside_rx) = mpsc::channel();
    let (after, after_rx) = mpsc::channel();
    let pool = Pool::builder()
        .workers(2)
        .batch_scheduling(true)
        .build_with_spawn_handler(|thread| {
            let after = after.clone();
            std::thread::spawn(move || {
                thread.run();
                after.send(policy()).unwrap();
            });
            Ok(())
        })
        .unwrap();
    let sender = inside.clone();
    pool.spawn(move || sender.send(policy()).unwrap());
    assert_eq!(
        inside_rx.recv_timeout(LONG).unwrap(),
        expected_in_pool(true)
    );
    drop(pool);
    for _ in 0..2 {
        assert_eq!(
            after_rx.recv_timeout(LONG).unwrap(),
            expected_in_pool(false)
        );
    }
}

#[test]
fn a_thread_under_another_policy_keeps_it() {
    let (inside, inside_rx) = mpsc::channel();
    let (after, after_rx) = mpsc::channel();
    let pool = Pool::builder()
        .workers(1)
        .batch_scheduling(true)
        .build_with_spawn_handler(|thread| {
            let after = after.clone();
            std::thread::spawn(move || {
                let param = libc::sched_param { sched_priority: 0 };
                // SAFETY: the calling thread, and a parameter that lives
                // across the call. SCHED_IDLE needs no privilege.
                let set = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
                assert_eq!(set, 0, "SCHED_IDLE refused");
                thread.run();
                after.send(policy()).unwrap();
            });
            Ok(())
        })
        .unwrap();
    pool.spawn(move || inside.send(policy()).unwrap());
    assert_eq!(inside_rx.recv_timeout(LONG).unwrap(), libc::SCHED_IDLE);
    drop(pool);
    assert_eq!(after_rx.recv_timeout(LONG).unwrap(), libc::SCHED_IDLE);
}

#[test]
fn the_building_thread_as_a_worker_keeps_its_policy() {
    std::thread::spawn(|| {
        let own = policy();
        let pool = Pool::builder()
            .workers(2)
            .batch_scheduling(true)
            .use_current_thread()
            .build()
            .unwrap();
        // Seat 0 is this thread's, which weft did not start: not moved.
        assert_eq!(weft::current_thread_index(), Some(0));
        assert_eq!(policy(), own);
        drop(pool);
        assert_eq!(policy(), own);
    })
    .join()
    .unwrap();
}
