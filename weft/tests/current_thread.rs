//! `Builder::use_current_thread`: the thread that builds the pool is its
//! worker 0 until it drops the pool. Written from the intent of rayon-core's
//! `use_current_thread` test (index 0 on the building thread, one thread
//! fewer started, a second such pool refused on that thread, tasks running
//! on the other workers while it blocks), and from weft's own contract for
//! it: the free functions act on the pool, waits run the pool's tasks, and a
//! drop anywhere loses no task. Each test runs on a thread of its own, so
//! that no test thread is left a worker. Deadlines only turn a hang into a
//! failure.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use weft::prelude::*;
use weft::{BuildError, Pool, WaitGroup};

const HANG: Duration = Duration::from_secs(60);

/// Runs `body` on a fresh thread and waits for it, passing its panic on.
fn on_own_thread(body: impl FnOnce() + Send + 'static) {
    if let Err(payload) = thread::spawn(body).join() {
        std::panic::resume_unwind(payload);
    }
}

fn counter() -> Arc<AtomicUsize> {
    Arc::new(AtomicUsize::new(0))
}

/// The threads a spawn handler started, with their worker index.
type Started = Arc<Mutex<Vec<(usize, JoinHandle<()>)>>>;

/// A pool of `workers` whose first is the calling thread, with its other
/// threads started by a spawn handler that keeps their handles.
fn adopted_pool(workers: usize) -> (Pool, Started) {
    let handles = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&handles);
    let pool = Pool::builder()
        .workers(workers)
        .use_current_thread()
        .spawn_handler(move |thread| {
            let index = thread.index();
            let handle = thread::Builder::new().spawn(|| thread.run())?;
            kept.lock().unwrap().push((index, handle));
            Ok(())
        })
        .build()
        .expect("pool");
    (pool, handles)
}

#[test]
fn the_building_thread_is_worker_zero_and_one_thread_fewer_starts() {
    on_own_thread(|| {
        let (pool, handles) = adopted_pool(2);
        assert_eq!(weft::current_thread_index(), Some(0));
        assert_eq!(pool.current_worker_index(), Some(0));
        let started: Vec<usize> = handles.lock().unwrap().iter().map(|(i, _)| *i).collect();
        assert_eq!(started, [1], "only worker 1 gets a thread");

        let another = Pool::builder().workers(2).use_current_thread().build();
        assert!(matches!(another, Err(BuildError::CurrentThreadInPool)));

        // Runs on worker 1 while this thread blocks outside weft.
        let (sender, receiver) = mpsc::channel();
        pool.spawn(move || sender.send(weft::current_thread_index()).unwrap());
        assert_eq!(receiver.recv_timeout(HANG).unwrap(), Some(1));

        drop(pool);
        assert_eq!(weft::current_thread_index(), None);
        for (_, handle) in handles.lock().unwrap().drain(..) {
            handle.join().unwrap();
        }
    });
}

#[test]
fn free_functions_and_install_act_on_the_pool_from_the_building_thread() {
    on_own_thread(|| {
        let (pool, _handles) = adopted_pool(4);
        assert_eq!(weft::current_num_threads(), 4);
        let building = thread::current().id();
        assert_eq!(pool.install(|| thread::current().id()), building);

        let seen = Mutex::new(HashSet::new());
        weft::scope(|s| {
            for _ in 0..1000 {
                let seen = &seen;
                s.spawn(move |_| {
                    let index = weft::current_thread_index().expect("on a worker");
                    seen.lock().unwrap().insert(index);
                });
            }
        });
        assert!(seen.into_inner().unwrap().iter().all(|&index| index < 4));

        let (a, b) = weft::join(|| (1..=100u64).sum::<u64>(), || 7);
        assert_eq!((a, b), (5050, 7));
        let total: u64 = (0..100_000u64).into_par_iter().map(|x| x % 7).sum();
        assert_eq!(total, (0..100_000u64).map(|x| x % 7).sum());
    });
}

/// With no other thread, whatever the holder queues runs in its own waits.
#[test]
fn the_holders_waits_run_its_tasks() {
    on_own_thread(|| {
        let pool = Pool::builder()
            .workers(1)
            .use_current_thread()
            .build()
            .unwrap();
        let done = WaitGroup::new();
        let ran = counter();
        for _ in 0..10 {
            done.add(1);
            let (done, ran) = (done.clone(), Arc::clone(&ran));
            weft::spawn(move || {
                assert_eq!(weft::current_thread_index(), Some(0));
                ran.fetch_add(1, Ordering::SeqCst);
                done.done();
            });
        }
        done.wait();
        assert_eq!(ran.load(Ordering::SeqCst), 10);
        drop(pool);
    });
}

#[test]
fn tasks_for_worker_zero_run_in_its_waits_and_at_its_drop() {
    on_own_thread(|| {
        let (pool, _handles) = adopted_pool(2);
        assert_eq!(pool.broadcast(|index| index), [0, 1]);

        let ran = counter();
        for _ in 0..10 {
            let ran = Arc::clone(&ran);
            pool.spawn_on(0, move || {
                assert_eq!(weft::current_thread_index(), Some(0));
                ran.fetch_add(1, Ordering::SeqCst);
            });
        }
        // Only seat 0 takes them, and this thread is away: none has run.
        thread::sleep(Duration::from_millis(20));
        assert_eq!(ran.load(Ordering::SeqCst), 0);
        drop(pool);
        assert_eq!(ran.load(Ordering::SeqCst), 10);
    });
}

#[test]
fn a_drop_on_the_holder_runs_every_queued_task_and_frees_the_thread() {
    on_own_thread(|| {
        for _ in 0..20 {
            let (pool, handles) = adopted_pool(3);
            let ran = counter();
            for i in 0..3000 {
                let ran = Arc::clone(&ran);
                let task = move || {
                    ran.fetch_add(1, Ordering::SeqCst);
                };
                match i % 3 {
                    0 => weft::spawn(task),
                    1 => weft::spawn_fifo(task),
                    _ => pool.spawn(task),
                }
            }
            drop(pool);
            assert_eq!(ran.load(Ordering::SeqCst), 3000);
            assert_eq!(weft::current_thread_index(), None);
            for (_, handle) in handles.lock().unwrap().drain(..) {
                handle.join().unwrap();
            }
        }
        // The thread is free to hold a seat of another pool.
        let pool = Pool::builder()
            .workers(2)
            .use_current_thread()
            .build()
            .unwrap();
        assert_eq!(weft::current_thread_index(), Some(0));
        drop(pool);
    });
}

/// Dropped on another thread, the pool cannot stop the holder: it closes
/// (a handle's spawn is refused) and keeps running what the holder queues.
#[test]
fn a_pool_dropped_away_from_its_holder_keeps_serving_it() {
    on_own_thread(|| {
        let (pool, _handles) = adopted_pool(2);
        let handle = pool.handle();
        thread::spawn(move || drop(pool)).join().unwrap();
        assert!(handle.spawn(|| ()).is_err());

        assert_eq!(weft::current_thread_index(), Some(0));
        let (sender, receiver) = mpsc::channel();
        weft::spawn(move || sender.send(weft::current_thread_index()).unwrap());
        assert_eq!(receiver.recv_timeout(HANG).unwrap(), Some(1));
        let (a, b) = weft::join(|| 1, || 2);
        assert_eq!(a + b, 3);
    });
}

/// Dropped inside one of its tasks running on the holder, the pool cannot
/// wait for the task that drops it: the drop returns, nothing hangs.
#[test]
fn a_pool_dropped_inside_a_task_on_its_holder_returns() {
    on_own_thread(|| {
        let (pool, _handles) = adopted_pool(2);
        let slot = Arc::new(Mutex::new(None));
        let done = WaitGroup::new();
        done.add(1);
        {
            let (slot, done) = (Arc::clone(&slot), done.clone());
            pool.spawn_on(0, move || {
                drop(slot.lock().unwrap().take());
                done.done();
            });
        }
        *slot.lock().unwrap() = Some(pool);
        // Only the holder's wait can run the pinned task that drops the pool.
        done.wait();
        assert!(slot.lock().unwrap().is_none());
        // The pool closed but cannot drain: it still runs the holder's tasks.
        let (sender, receiver) = mpsc::channel();
        weft::spawn(move || sender.send(()).unwrap());
        receiver.recv_timeout(HANG).unwrap();
    });
}

#[test]
fn shutdown_timeout_on_the_holder_drops_what_did_not_start() {
    on_own_thread(|| {
        let (pool, _handles) = adopted_pool(2);
        // Worker 1 is held; the holder is away: the spawns stay queued.
        let (release, held) = mpsc::channel::<()>();
        let (started, on_start) = mpsc::channel();
        pool.spawn(move || {
            started.send(()).unwrap();
            let _ = held.recv();
        });
        on_start.recv_timeout(HANG).unwrap();
        let ran = counter();
        for _ in 0..5 {
            let ran = Arc::clone(&ran);
            pool.spawn(move || {
                ran.fetch_add(1, Ordering::SeqCst);
            });
        }
        let releaser = thread::spawn(move || {
            thread::sleep(Duration::from_millis(20));
            release.send(()).unwrap();
        });
        let report = pool.shutdown_timeout(Duration::ZERO);
        releaser.join().unwrap();
        assert!(report.timed_out());
        assert!(report.joined());
        assert_eq!(report.dropped(), 5);
        assert_eq!(ran.load(Ordering::SeqCst), 0);
        assert_eq!(weft::current_thread_index(), None);
    });
}

#[test]
fn no_thread_hook_runs_on_the_holder_and_no_name_is_asked_for_it() {
    on_own_thread(|| {
        let starts = counter();
        let stops = counter();
        let named = Arc::new(Mutex::new(Vec::new()));
        let pool = {
            let (starts, stops, named) =
                (Arc::clone(&starts), Arc::clone(&stops), Arc::clone(&named));
            Pool::builder()
                .workers(3)
                .use_current_thread()
                .thread_name(move |index| {
                    named.lock().unwrap().push(index);
                    format!("held-{index}")
                })
                .on_thread_start(move |_| {
                    starts.fetch_add(1, Ordering::SeqCst);
                })
                .on_thread_stop(move |_| {
                    stops.fetch_add(1, Ordering::SeqCst);
                })
                .build()
                .unwrap()
        };
        drop(pool);
        assert_eq!(starts.load(Ordering::SeqCst), 2);
        assert_eq!(stops.load(Ordering::SeqCst), 2);
        let mut named = named.lock().unwrap().clone();
        named.sort_unstable();
        assert_eq!(named, [1, 2]);
    });
}

/// Many more workers than cores, the holder among them.
#[test]
fn a_holder_among_many_workers() {
    on_own_thread(|| {
        for workers in [64, 256] {
            let pool = Pool::builder()
                .workers(workers)
                .use_current_thread()
                .build()
                .unwrap();
            let ran = counter();
            weft::scope(|s| {
                for _ in 0..10_000 {
                    let ran = &ran;
                    s.spawn(move |_| {
                        ran.fetch_add(1, Ordering::Relaxed);
                    });
                }
            });
            assert_eq!(ran.load(Ordering::Relaxed), 10_000);
            let spawned = counter();
            for _ in 0..1000 {
                let spawned = Arc::clone(&spawned);
                weft::spawn(move || {
                    spawned.fetch_add(1, Ordering::Relaxed);
                });
            }
            drop(pool);
            assert_eq!(spawned.load(Ordering::Relaxed), 1000);
        }
    });
}

/// A thread inside a pool's task cannot hold another pool's seat.
#[test]
fn a_worker_cannot_hold_a_seat_of_another_pool() {
    let pool = Pool::builder().workers(1).build().unwrap();
    let refused = pool.install(|| {
        matches!(
            Pool::builder().workers(1).use_current_thread().build(),
            Err(BuildError::CurrentThreadInPool)
        )
    });
    assert!(refused);
}

/// A thread inside `weft::blocking`, in a task of one pool, cannot become a
/// worker of another pool through its `ThreadBuilder`: `run` panics there,
/// and the other pool, its worker given up, still drops.
#[test]
fn a_blocking_call_cannot_run_another_pools_worker() {
    let pool = Pool::builder().workers(1).build().unwrap();
    let (threads, builders) = mpsc::channel();
    let other = Pool::builder()
        .workers(1)
        .spawn_handler(move |thread| {
            threads.send(thread).unwrap();
            Ok(())
        })
        .build()
        .unwrap();
    let thread = builders.recv().unwrap();
    // Were `run` to take the thread, it would return only once the other
    // pool is dropped: drop it after a while, so that the test fails then
    // rather than hang.
    let (returned, dropper_waits) = mpsc::channel::<()>();
    let dropper = thread::spawn(move || {
        let _ = dropper_waits.recv_timeout(Duration::from_secs(20));
        drop(other);
    });
    let refused = pool.install(|| {
        weft::blocking(|| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| thread.run())).is_err()
        })
    });
    let _ = returned.send(());
    dropper.join().unwrap();
    assert!(refused, "run went on inside a blocking call");
}
