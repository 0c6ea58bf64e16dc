//! What suspending a waiting task promises beyond "it does not deadlock"
//! (marl_shapes.rs has the marl-shaped cases): the task resumes on its own
//! worker thread, the worker is free meanwhile, the builder's bounds hold
//! (stack size, the cap on suspended tasks with its fallback), waits with a
//! deadline end on an otherwise idle worker, a panic after a resume reaches
//! the joiner, and a pool without fibers still helps.
//!
//! No test measures time: timeouts are deadlock guards or waits that
//! nobody ends early.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

mod common;

use common::assert_eventually;

use weft::{Event, EventMode, Pool, WaitGroup};

/// Long enough that only a deadlock reaches it.
const DEADLOCK_GUARD: Duration = Duration::from_secs(120);

/// Whether this target runs waits on fibers (crate docs, "Waiting inside a
/// task"): elsewhere the suspension counts stay zero and waits help.
const FIBERS: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) && !cfg!(miri);

/// Runs `test` on its own thread, failing if it has not finished within the
/// deadlock guard; a panic in `test` is passed on.
fn guarded(test: impl FnOnce() + Send + 'static) {
    let (sender, receiver) = mpsc::channel();
    let handle = thread::spawn(move || {
        test();
        let _ = sender.send(());
    });
    match receiver.recv_timeout(DEADLOCK_GUARD) {
        Ok(()) | Err(RecvTimeoutError::Disconnected) => {
            if let Err(payload) = handle.join() {
                std::panic::resume_unwind(payload);
            }
        }
        Err(RecvTimeoutError::Timeout) => panic!("deadlock: not finished in {DEADLOCK_GUARD:?}"),
    }
}

fn pool(workers: usize) -> Pool {
    Pool::builder().workers(workers).build().expect("pool")
}

#[test]
fn a_waiting_task_suspends_and_its_worker_runs_the_next_task_meanwhile() {
    guarded(|| {
        let pool = pool(1);
        let gate = Event::new(EventMode::Manual);
        let ran_meanwhile = Arc::new(AtomicUsize::new(0));
        let done = WaitGroup::with_count(2);
        {
            let (gate, done) = (gate.clone(), done.clone());
            pool.spawn(move || {
                gate.wait();
                done.done();
            });
        }
        // The pool's only worker holds the waiting task; this one runs only
        // if that wait freed the worker (or, without fibers, helped).
        {
            let (ran_meanwhile, done) = (Arc::clone(&ran_meanwhile), done.clone());
            pool.spawn(move || {
                ran_meanwhile.fetch_add(1, Ordering::SeqCst);
                done.done();
            });
        }
        assert_eventually(
            DEADLOCK_GUARD,
            "the second task runs while the first waits",
            || ran_meanwhile.load(Ordering::SeqCst) == 1,
        );
        if FIBERS {
            assert_eventually(
                DEADLOCK_GUARD,
                "the waiting task shows as suspended",
                || pool.stats().suspended_now == 1,
            );
        }
        gate.signal();
        done.wait();
        let stats = pool.stats();
        assert_eq!(stats.suspended_now, 0);
        if FIBERS {
            assert!(stats.total().waits_suspended >= 1, "{stats:?}");
            assert!(stats.total().fibers_created >= 2, "{stats:?}");
        }
    });
}

#[test]
fn a_suspended_task_resumes_on_its_own_worker_thread() {
    guarded(|| {
        for workers in [1, 2, 8] {
            let pool = Arc::new(pool(workers));
            let tasks = 64;
            let gate = Event::new(EventMode::Manual);
            let same_thread = Arc::new(AtomicUsize::new(0));
            let done = WaitGroup::with_count(tasks);
            for _ in 0..tasks {
                let (gate, same_thread, done) =
                    (gate.clone(), Arc::clone(&same_thread), done.clone());
                pool.spawn(move || {
                    let before = (thread::current().id(), weft::current_worker_index());
                    // A thread-local value the task holds across its wait.
                    thread_local!(static MARK: std::cell::Cell<usize> = const { std::cell::Cell::new(0) });
                    let mark = MARK.with(|mark| {
                        mark.set(mark.get() + 1);
                        mark.get()
                    });
                    gate.wait();
                    let after = (thread::current().id(), weft::current_worker_index());
                    if before == after && MARK.with(|mark| mark.get()) >= mark {
                        same_thread.fetch_add(1, Ordering::SeqCst);
                    }
                    done.done();
                });
            }
            // Let every task reach its wait before the gate opens.
            thread::sleep(Duration::from_millis(10));
            gate.signal();
            done.wait();
            assert_eq!(
                same_thread.load(Ordering::SeqCst),
                tasks,
                "{workers} workers"
            );
        }
    });
}

#[test]
fn a_timed_wait_ends_on_a_worker_with_nothing_else_to_do() {
    guarded(|| {
        let pool = pool(1);
        let never = Event::new(EventMode::Manual);
        // The only worker parks while the task is suspended: the park must
        // end at the task's deadline, since nothing else will wake it.
        let timed_out = pool.install(|| !never.wait_timeout(Duration::from_millis(20)));
        assert!(timed_out);
        let deadline = Instant::now() + Duration::from_millis(20);
        let timed_out = pool.install(|| !never.wait_deadline(deadline));
        assert!(timed_out);
        assert!(Instant::now() >= deadline);
        assert_eq!(pool.stats().suspended_now, 0);
    });
}

#[test]
fn many_timed_waits_with_different_deadlines_all_end() {
    guarded(|| {
        let pool = pool(2);
        let never = Event::new(EventMode::Manual);
        let timed_out = Arc::new(AtomicUsize::new(0));
        let done = WaitGroup::with_count(100);
        for i in 0..100u64 {
            let (never, timed_out, done) = (never.clone(), Arc::clone(&timed_out), done.clone());
            pool.spawn(move || {
                // Deadlines in reverse order of spawning, some already past.
                let timeout = Duration::from_millis((100 - i) % 37);
                if !never.wait_timeout(timeout) {
                    timed_out.fetch_add(1, Ordering::SeqCst);
                }
                done.done();
            });
        }
        done.wait();
        assert_eq!(timed_out.load(Ordering::SeqCst), 100);
    });
}

#[test]
fn a_panic_after_a_suspended_wait_reaches_the_joiner() {
    guarded(|| {
        let pool = pool(1);
        let gate = Event::new(EventMode::Manual);
        let handle = {
            let gate = gate.clone();
            pool.spawn_with_handle(move || {
                gate.wait();
                panic!("after the wait");
            })
        };
        let signaller = {
            let gate = gate.clone();
            pool.spawn_with_handle(move || gate.signal())
        };
        signaller.join().expect("the signalling task");
        let outcome = handle.join();
        assert!(outcome.is_err(), "the panic is the join's error");
        // The worker carries on.
        assert_eq!(pool.install(|| 5), 5);
    });
}

/// Recursion that needs about `depth` KiB of stack.
fn deep(depth: usize) -> usize {
    let frame = [depth as u8; 1024];
    let below = if depth == 0 { 0 } else { deep(depth - 1) };
    std::hint::black_box(&frame)[0] as usize % 2 + below
}

#[test]
fn the_builder_stack_size_is_the_task_stack_size() {
    guarded(|| {
        // 6 MiB of frames: more than the default 2 MiB fiber, well within 16.
        let pool = Pool::builder()
            .workers(1)
            .stack_size(16 * 1024 * 1024)
            .build()
            .unwrap();
        let gate = Event::new(EventMode::Manual);
        gate.signal();
        let total = pool.install(|| {
            // A wait first, so the recursion runs on a fiber for sure.
            gate.wait();
            deep(6 * 1024)
        });
        assert!(total <= 6 * 1024 + 1);
    });
}

#[test]
fn waits_beyond_the_cap_help_instead_and_still_finish() {
    guarded(|| {
        let cap = 3;
        let pool = Pool::builder()
            .workers(2)
            .max_suspended(cap)
            .build()
            .unwrap();
        let tasks = 40;
        let gate = Event::new(EventMode::Manual);
        let done = WaitGroup::with_count(tasks);
        let most_suspended = Arc::new(AtomicUsize::new(0));
        for _ in 0..tasks {
            let (gate, done) = (gate.clone(), done.clone());
            pool.spawn(move || {
                gate.wait();
                done.done();
            });
        }
        for _ in 0..50 {
            most_suspended.fetch_max(pool.stats().suspended_now, Ordering::SeqCst);
            thread::sleep(Duration::from_millis(1));
        }
        gate.signal();
        done.wait();
        assert!(most_suspended.load(Ordering::SeqCst) <= cap);
        if FIBERS {
            assert!(most_suspended.load(Ordering::SeqCst) >= 1);
        }
    });
}

#[test]
fn a_pool_without_fibers_helps_and_suspends_nothing() {
    guarded(|| {
        let pool = Pool::builder().workers(1).fibers(false).build().unwrap();
        // A wait on a task queued behind the waiter: helping runs it.
        let total = pool.install(|| {
            let done = WaitGroup::with_count(1);
            let counted = Arc::new(AtomicUsize::new(0));
            {
                let (done, counted) = (done.clone(), Arc::clone(&counted));
                weft::spawn(move || {
                    counted.fetch_add(1, Ordering::SeqCst);
                    done.done();
                });
            }
            done.wait();
            counted.load(Ordering::SeqCst)
        });
        assert_eq!(total, 1);
        let stats = pool.stats();
        assert_eq!(stats.total().waits_suspended, 0);
        assert_eq!(stats.total().fibers_created, 0);
    });
}

#[test]
fn ten_thousand_tasks_suspended_at_once_each_run_once() {
    guarded(|| {
        for workers in [2, 64] {
            let pool = pool(workers);
            let tasks = 10_000;
            let gate = Event::new(EventMode::Manual);
            let runs = Arc::new(AtomicUsize::new(0));
            let done = WaitGroup::with_count(tasks);
            for _ in 0..tasks {
                let (gate, runs, done) = (gate.clone(), Arc::clone(&runs), done.clone());
                pool.spawn(move || {
                    gate.wait();
                    runs.fetch_add(1, Ordering::SeqCst);
                    done.done();
                });
            }
            if FIBERS {
                assert_eventually(DEADLOCK_GUARD, "every task suspended", || {
                    pool.stats().suspended_now == tasks
                });
            }
            gate.signal();
            done.wait();
            assert_eq!(runs.load(Ordering::SeqCst), tasks, "{workers} workers");
        }
    });
}

#[test]
fn joins_whose_halves_wait_on_each_other_across_many_workers() {
    guarded(|| {
        for workers in [1, 4, 64, 256] {
            let pool = pool(workers);
            let pairs = 200;
            let total = pool.install(|| {
                let finished = AtomicUsize::new(0);
                weft::scope(|s| {
                    for _ in 0..pairs {
                        let finished = &finished;
                        s.spawn(move |_| {
                            // Each half waits for the other: on one worker
                            // only suspension lets both get there.
                            let (ping, pong) =
                                (Event::new(EventMode::Auto), Event::new(EventMode::Auto));
                            weft::join(
                                || {
                                    ping.signal();
                                    pong.wait();
                                },
                                || {
                                    ping.wait();
                                    pong.signal();
                                },
                            );
                            finished.fetch_add(1, Ordering::SeqCst);
                        });
                    }
                });
                finished.load(Ordering::SeqCst)
            });
            assert_eq!(total, pairs, "{workers} workers");
        }
    });
}
