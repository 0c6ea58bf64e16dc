//! The synchronisation primitives keep their promises from plain threads and
//! from pool tasks, and a worker that waits on work queued in its own pool runs
//! that work instead of deadlocking.
//!
//! Every test asserts behaviour, never timing: timeouts are only deadlock
//! guards (generous, so a slow machine cannot fail a test) or the subject of a
//! test that nobody ends early.

use std::panic;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

mod common;

use common::assert_eventually;

use weft::{Condvar, Event, EventMode, Pool, TicketQueue, WaitGroup};

/// Long enough that only a deadlock reaches it.
const DEADLOCK_GUARD: Duration = Duration::from_secs(60);

/// Short timeouts for waits that nobody ends early: they return false however
/// slow the machine is.
const SHORT: Duration = Duration::from_millis(20);

fn pool(workers: usize) -> Pool {
    Pool::builder().workers(workers).build().expect("pool")
}

/// Runs `test` on its own thread and fails if it has not finished within the
/// deadlock guard; a panic in `test` is passed on.
fn guarded<T: Send + 'static>(test: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    let handle = thread::spawn(move || {
        let result = test();
        let _ = sender.send(());
        result
    });
    match receiver.recv_timeout(DEADLOCK_GUARD) {
        Ok(()) => handle.join().expect("test thread"),
        Err(RecvTimeoutError::Disconnected) => match handle.join() {
            Ok(result) => result,
            Err(payload) => panic::resume_unwind(payload),
        },
        Err(RecvTimeoutError::Timeout) => panic!("deadlock: not finished in {DEADLOCK_GUARD:?}"),
    }
}

/// The number of registered waits, as the primitives' `Debug` shows it.
fn waiters(debug: &impl std::fmt::Debug) -> usize {
    let text = format!("{debug:?}");
    let start = text.find("waiters: ").expect("Debug shows waiters") + "waiters: ".len();
    text[start..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|digits| digits.parse().ok())
        .expect("a number of waiters")
}

/// A small deterministic shuffle (no dev-dependency needed).
fn shuffled(n: usize, seed: u64) -> Vec<usize> {
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut items: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
    items
}

// ----------------------------------------------------------------- WaitGroup

#[test]
fn wait_group_waits_for_every_task_from_a_plain_thread() {
    guarded(|| {
        let pool = pool(4);
        let finished = Arc::new(AtomicUsize::new(0));
        let wg = WaitGroup::new();
        for _ in 0..1000 {
            wg.add(1);
            let (wg, finished) = (wg.clone(), Arc::clone(&finished));
            pool.spawn(move || {
                finished.fetch_add(1, Ordering::Relaxed);
                wg.done();
            });
        }
        wg.wait();
        assert_eq!(finished.load(Ordering::Relaxed), 1000);
        assert_eq!(wg.count(), 0);
    });
}

#[test]
fn wait_group_done_reports_reaching_zero() {
    let wg = WaitGroup::with_count(2);
    assert!(!wg.done());
    assert!(wg.done());
    assert!(wg.wait_timeout(SHORT));
    wg.add(1);
    assert!(wg.done());
}

#[test]
#[should_panic(expected = "more times than WaitGroup::add")]
fn wait_group_done_without_add_panics() {
    WaitGroup::new().done();
}

#[test]
fn wait_group_wait_timeout_is_false_until_zero_and_leaves_no_waiter() {
    guarded(|| {
        let wg = WaitGroup::with_count(1);
        assert!(!wg.wait_timeout(SHORT));
        assert_eq!(waiters(&wg), 0);
        let pool = pool(2);
        let inner = wg.clone();
        let on_worker = pool.install(move || inner.wait_timeout(SHORT));
        assert!(!on_worker);
        assert_eq!(waiters(&wg), 0);
        wg.done();
        assert!(wg.wait_timeout(DEADLOCK_GUARD));
    });
}

#[test]
fn wait_group_wait_on_the_only_worker_runs_the_queued_task() {
    guarded(|| {
        let pool = pool(1);
        let ran = pool.install(|| {
            let wg = WaitGroup::new();
            let ran = Arc::new(AtomicUsize::new(0));
            wg.add(1);
            let (w, r) = (wg.clone(), Arc::clone(&ran));
            weft::spawn(move || {
                r.fetch_add(1, Ordering::Relaxed);
                w.done();
            });
            wg.wait();
            ran.load(Ordering::Relaxed)
        });
        assert_eq!(ran, 1);
    });
}

/// Every task waits for children queued behind it, on pools of one and two
/// workers: all workers end up waiting, and only helping finishes the tree.
#[test]
fn wait_group_nested_waits_on_every_worker_complete() {
    fn tree(depth: u32, leaves: &Arc<AtomicUsize>) {
        if depth == 0 {
            leaves.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let wg = WaitGroup::new();
        for _ in 0..2 {
            wg.add(1);
            let (wg, leaves) = (wg.clone(), Arc::clone(leaves));
            weft::spawn(move || {
                tree(depth - 1, &leaves);
                wg.done();
            });
        }
        wg.wait();
    }
    guarded(|| {
        for workers in [1, 2] {
            let pool = pool(workers);
            let leaves = Arc::new(AtomicUsize::new(0));
            let outer = WaitGroup::new();
            for _ in 0..workers {
                outer.add(1);
                let (outer, leaves) = (outer.clone(), Arc::clone(&leaves));
                pool.spawn(move || {
                    tree(6, &leaves);
                    outer.done();
                });
            }
            outer.wait();
            assert_eq!(leaves.load(Ordering::Relaxed), workers * 64);
        }
    });
}

#[test]
fn wait_group_stress_on_64_workers() {
    guarded(|| {
        let pool = pool(64);
        let total = Arc::new(AtomicUsize::new(0));
        let outer = WaitGroup::new();
        for _ in 0..64 {
            outer.add(1);
            let (outer, total) = (outer.clone(), Arc::clone(&total));
            pool.spawn(move || {
                let inner = WaitGroup::new();
                for _ in 0..100 {
                    inner.add(1);
                    let (inner, total) = (inner.clone(), Arc::clone(&total));
                    weft::spawn(move || {
                        total.fetch_add(1, Ordering::Relaxed);
                        inner.done();
                    });
                }
                inner.wait();
                outer.done();
            });
        }
        outer.wait();
        assert_eq!(total.load(Ordering::Relaxed), 6400);
    });
}

// --------------------------------------------------------------------- Event

#[test]
fn manual_event_releases_every_waiter_and_stays_signalled() {
    guarded(|| {
        let pool = pool(4);
        let event = Event::new(EventMode::Manual);
        let released = Arc::new(AtomicUsize::new(0));
        let wg = WaitGroup::new();
        for _ in 0..4 {
            wg.add(1);
            let (event, released, wg) = (event.clone(), Arc::clone(&released), wg.clone());
            pool.spawn(move || {
                event.wait();
                released.fetch_add(1, Ordering::Relaxed);
                wg.done();
            });
        }
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (event, released) = (event.clone(), Arc::clone(&released));
                thread::spawn(move || {
                    event.wait();
                    released.fetch_add(1, Ordering::Relaxed);
                })
            })
            .collect();
        event.signal();
        wg.wait();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(released.load(Ordering::Relaxed), 8);
        assert!(event.is_signalled());
        assert!(event.test(), "test does not clear a manual event");
        assert!(event.is_signalled());
        event.wait();
        event.clear();
        assert!(!event.is_signalled());
        assert!(!event.wait_timeout(SHORT));
    });
}

/// With every waiter registered, each signal releases exactly one: the count
/// of returns never runs ahead of the signals, and once all have returned no
/// signal is left over (a signal that released nobody would be).
///
/// In the pool, a waiting worker may run another waiter task on top of its
/// stack, and the one below returns only after it: there the signals are sent
/// without waiting for each release, and the end state is what is checked.
#[test]
fn auto_event_each_signal_releases_exactly_one_waiter() {
    fn check(step_by_step: bool, spawn_waiter: impl Fn(Box<dyn FnOnce() + Send>)) {
        const N: usize = 8;
        let event = Event::new(EventMode::Auto);
        let released = Arc::new(AtomicUsize::new(0));
        let wg = WaitGroup::with_count(N);
        for _ in 0..N {
            let (event, released, wg) = (event.clone(), Arc::clone(&released), wg.clone());
            spawn_waiter(Box::new(move || {
                event.wait();
                released.fetch_add(1, Ordering::SeqCst);
                wg.done();
            }));
        }
        assert_eventually(DEADLOCK_GUARD, "every waiter registered", || {
            waiters(&event) == N
        });
        for k in 1..=N {
            if step_by_step {
                assert_eq!(released.load(Ordering::SeqCst), k - 1);
            }
            event.signal();
            if step_by_step {
                assert_eventually(DEADLOCK_GUARD, "a signal releases a waiter", || {
                    released.load(Ordering::SeqCst) >= k
                });
            }
        }
        wg.wait();
        assert_eq!(released.load(Ordering::SeqCst), N);
        assert!(!event.is_signalled(), "a signal released nobody");
    }
    guarded(|| {
        check(true, |waiter| {
            thread::spawn(waiter);
        });
        for workers in [2, 64] {
            let pool = pool(workers);
            check(false, |waiter| pool.spawn(waiter));
        }
    });
}

#[test]
fn auto_event_signal_without_waiter_is_consumed_once() {
    let event = Event::new(EventMode::Auto);
    assert!(!event.test());
    event.signal();
    event.signal();
    assert!(event.is_signalled(), "is_signalled does not consume");
    assert!(event.test());
    assert!(!event.test());
    event.signal();
    event.wait();
    assert!(!event.is_signalled());
    assert!(!event.wait_timeout(SHORT));
    assert_eq!(event.mode(), EventMode::Auto);
}

#[test]
fn event_wait_timeout_is_false_without_signal_and_keeps_a_later_signal() {
    guarded(|| {
        let event = Event::new(EventMode::Auto);
        assert!(!event.wait_timeout(SHORT));
        assert!(!event.wait_deadline(Instant::now() + SHORT));
        assert_eq!(waiters(&event), 0);
        let pool = pool(2);
        let inner = event.clone();
        assert!(!pool.install(move || inner.wait_timeout(SHORT)));
        assert_eq!(waiters(&event), 0);
        event.signal();
        assert!(event.is_signalled(), "no timed-out wait took the signal");
        assert!(event.wait_timeout(DEADLOCK_GUARD));
    });
}

#[test]
fn event_wait_on_every_worker_runs_the_queued_signaller() {
    guarded(|| {
        for workers in [1, 2] {
            let pool = pool(workers);
            let wg = WaitGroup::with_count(workers);
            for _ in 0..workers {
                let wg = wg.clone();
                pool.spawn(move || {
                    let event = Event::new(EventMode::Auto);
                    let signaller = event.clone();
                    weft::spawn(move || signaller.signal());
                    event.wait();
                    wg.done();
                });
            }
            wg.wait();
        }
    });
}

#[test]
fn event_any_is_signalled_by_any_source() {
    guarded(|| {
        let a = Event::new(EventMode::Manual);
        let b = Event::new(EventMode::Auto);
        let any = Event::any(EventMode::Manual, &[a.clone(), b.clone()]);
        assert!(!any.is_signalled());
        let signaller = b.clone();
        let thread = thread::spawn(move || signaller.signal());
        any.wait();
        thread.join().unwrap();
        assert!(any.is_signalled());
        assert!(b.test(), "the source keeps its own signal");

        // Auto-reset: each source signal lets one wait through.
        let any = Event::any(EventMode::Auto, &[a.clone(), b.clone()]);
        a.clear();
        assert!(!any.is_signalled());
        a.signal();
        assert!(any.test());
        assert!(!any.test());
        b.signal();
        let pool = pool(2);
        let inner = any.clone();
        pool.install(move || inner.wait());
        assert!(!any.is_signalled());

        // A source already signalled signals the new event at once.
        let c = Event::with_state(EventMode::Auto, true);
        let any = Event::any(EventMode::Manual, &[Event::new(EventMode::Auto), c.clone()]);
        assert!(any.is_signalled());
        assert!(
            c.is_signalled(),
            "creating `any` does not consume the source"
        );

        // Events made by `any` can themselves be sources.
        let d = Event::new(EventMode::Manual);
        let any_of_any = Event::any(
            EventMode::Manual,
            &[Event::any(EventMode::Manual, std::slice::from_ref(&d))],
        );
        d.signal();
        any_of_any.wait();
    });
}

#[test]
fn auto_event_stress_on_64_workers() {
    guarded(|| {
        const WAITS: usize = 1000;
        let pool = pool(64);
        let event = Event::new(EventMode::Auto);
        let released = Arc::new(AtomicUsize::new(0));
        let wg = WaitGroup::with_count(WAITS);
        for _ in 0..WAITS {
            let (event, released, wg) = (event.clone(), Arc::clone(&released), wg.clone());
            pool.spawn(move || {
                event.wait();
                released.fetch_add(1, Ordering::Relaxed);
                wg.done();
            });
        }
        // An auto event holds one signal, not a count: signals sent while
        // nobody waits would merge, so every wait is registered first (the
        // waiting workers run the queued waiter tasks on top of each other).
        assert_eventually(DEADLOCK_GUARD, "every waiter registered", || {
            waiters(&event) == WAITS
        });
        let signallers: Vec<_> = (0..4)
            .map(|_| {
                let event = event.clone();
                thread::spawn(move || {
                    for _ in 0..WAITS / 4 {
                        event.signal();
                    }
                })
            })
            .collect();
        for signaller in signallers {
            signaller.join().unwrap();
        }
        wg.wait();
        assert_eq!(released.load(Ordering::Relaxed), WAITS);
        assert!(
            !event.is_signalled(),
            "every signal released exactly one wait"
        );
    });
}

// ------------------------------------------------------------------- Tickets

fn take_tickets(n: usize) -> Vec<Option<weft::Ticket>> {
    let queue = TicketQueue::new();
    (0..n).map(|_| Some(queue.take())).collect()
}

#[test]
fn tickets_waited_on_from_threads_in_random_order_run_in_ticket_order() {
    guarded(|| {
        let mut tickets = take_tickets(64);
        let order = Arc::new(Mutex::new(Vec::new()));
        let threads: Vec<_> = shuffled(64, 0x9e37_79b9)
            .into_iter()
            .map(|i| {
                let ticket = tickets[i].take().unwrap();
                let order = Arc::clone(&order);
                thread::spawn(move || {
                    ticket.wait();
                    order.lock().unwrap().push(i);
                    ticket.done();
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(*order.lock().unwrap(), (0..64).collect::<Vec<_>>());
    });
}

/// Tasks run in random order and each hands its critical section to
/// `on_call`: the sections run in ticket order.
#[test]
fn ticket_sections_from_tasks_in_random_order_run_in_ticket_order() {
    guarded(|| {
        for (workers, seed) in [(1, 1), (2, 2), (64, 3)] {
            let pool = pool(workers);
            let mut tickets = take_tickets(64);
            let order = Arc::new(Mutex::new(Vec::new()));
            let wg = WaitGroup::with_count(64);
            for i in shuffled(64, seed) {
                let ticket = tickets[i].take().unwrap();
                let (order, wg) = (Arc::clone(&order), wg.clone());
                pool.spawn(move || {
                    ticket.on_call(move || {
                        order.lock().unwrap().push(i);
                        wg.done();
                    });
                });
            }
            wg.wait();
            assert_eq!(*order.lock().unwrap(), (0..64).collect::<Vec<_>>());
        }
    });
}

#[test]
fn ticket_wait_on_the_only_worker_runs_the_queued_predecessor() {
    guarded(|| {
        for workers in [1, 2] {
            let pool = pool(workers);
            let wg = WaitGroup::with_count(workers);
            for _ in 0..workers {
                let wg = wg.clone();
                pool.spawn(move || {
                    let queue = TicketQueue::new();
                    let first = queue.take();
                    let second = queue.take();
                    weft::spawn(move || first.done());
                    second.wait();
                    assert!(second.is_called());
                    wg.done();
                });
            }
            wg.wait();
        }
    });
}

#[test]
fn tickets_done_early_or_dropped_are_passed_over() {
    let queue = TicketQueue::new();
    let first = queue.take();
    let second = queue.take();
    let third = queue.take();
    assert!(first.is_called());
    assert!(!second.is_called());
    second.done();
    second.done();
    assert!(!third.is_called(), "the first ticket is not done yet");
    drop(first);
    assert!(third.is_called());
    third.wait();
    drop(third);
    let fourth = queue.take();
    assert!(fourth.is_called());
}

#[test]
fn on_call_of_a_called_ticket_runs_without_waiting_for_anyone() {
    guarded(|| {
        let queue = TicketQueue::new();
        let event = Event::new(EventMode::Manual);
        let signaller = event.clone();
        queue.take().on_call(move || signaller.signal());
        event.wait();
        // The section's ticket is done once it returns.
        let next = queue.take();
        next.wait();
    });
}

#[test]
fn a_panicking_section_still_passes_the_turn_on() {
    guarded(|| {
        let pool = Pool::builder()
            .workers(2)
            .panic_handler(|_| {})
            .build()
            .unwrap();
        let queue = TicketQueue::new();
        let first = queue.take();
        let second = queue.take();
        pool.spawn(move || first.on_call(|| panic!("section panics")));
        second.wait();
    });
}

// ------------------------------------------------------------------- Condvar

#[test]
fn condvar_bounded_queue_between_threads_passes_every_item() {
    guarded(|| {
        const PRODUCERS: usize = 4;
        const ITEMS: usize = 2000;
        const CAPACITY: usize = 8;
        struct Queue {
            items: Mutex<(Vec<usize>, usize)>, // (buffer, producers finished)
            not_empty: Condvar,
            not_full: Condvar,
        }
        let queue = Arc::new(Queue {
            items: Mutex::new((Vec::new(), 0)),
            not_empty: Condvar::new(),
            not_full: Condvar::new(),
        });
        let producers: Vec<_> = (0..PRODUCERS)
            .map(|p| {
                let queue = Arc::clone(&queue);
                thread::spawn(move || {
                    for i in 0..ITEMS {
                        let mut guard = queue.items.lock().unwrap();
                        guard = queue
                            .not_full
                            .wait_while(&queue.items, guard, |(items, _)| items.len() >= CAPACITY);
                        guard.0.push(p * ITEMS + i);
                        drop(guard);
                        queue.not_empty.notify_one();
                    }
                    queue.items.lock().unwrap().1 += 1;
                    queue.not_empty.notify_all();
                })
            })
            .collect();
        let consumers: Vec<_> = (0..2)
            .map(|_| {
                let queue = Arc::clone(&queue);
                thread::spawn(move || {
                    let mut received = Vec::new();
                    let mut guard = queue.items.lock().unwrap();
                    loop {
                        guard = queue
                            .not_empty
                            .wait_while(&queue.items, guard, |(items, done)| {
                                items.is_empty() && *done < PRODUCERS
                            });
                        if guard.0.is_empty() {
                            return received;
                        }
                        received.append(&mut guard.0);
                        queue.not_full.notify_all();
                    }
                })
            })
            .collect();
        for producer in producers {
            producer.join().unwrap();
        }
        let mut all: Vec<usize> = consumers
            .into_iter()
            .flat_map(|consumer| consumer.join().unwrap())
            .collect();
        all.sort_unstable();
        assert_eq!(all, (0..PRODUCERS * ITEMS).collect::<Vec<_>>());
    });
}

/// Consumers are pool tasks that wait for items only producers queued behind
/// them make: on one or two workers, the consumers' waits run the producers.
#[test]
fn condvar_consumers_in_the_pool_run_the_queued_producers() {
    guarded(|| {
        for workers in [1, 2, 64] {
            const PRODUCERS: usize = 8;
            const ITEMS: usize = 500;
            let pool = pool(workers);
            let state = Arc::new((Mutex::new((Vec::<usize>::new(), 0usize)), Condvar::new()));
            let received = Arc::new(AtomicUsize::new(0));
            let wg = WaitGroup::with_count(workers);
            for _ in 0..workers {
                let (state, received, wg) = (Arc::clone(&state), Arc::clone(&received), wg.clone());
                pool.spawn(move || {
                    let (items, condvar) = &*state;
                    let mut guard = items.lock().unwrap();
                    loop {
                        guard = condvar.wait_while(items, guard, |(items, done)| {
                            items.is_empty() && *done < PRODUCERS
                        });
                        if guard.0.is_empty() {
                            break;
                        }
                        received.fetch_add(guard.0.drain(..).count(), Ordering::Relaxed);
                    }
                    drop(guard);
                    wg.done();
                });
            }
            for _ in 0..PRODUCERS {
                let state = Arc::clone(&state);
                pool.spawn(move || {
                    let (items, condvar) = &*state;
                    for i in 0..ITEMS {
                        items.lock().unwrap().0.push(i);
                        condvar.notify_one();
                    }
                    items.lock().unwrap().1 += 1;
                    condvar.notify_all();
                });
            }
            wg.wait();
            assert_eq!(received.load(Ordering::Relaxed), PRODUCERS * ITEMS);
        }
    });
}

#[test]
fn condvar_wait_on_the_only_worker_runs_the_queued_notifier() {
    guarded(|| {
        let pool = pool(1);
        pool.install(|| {
            let state = Arc::new((Mutex::new(false), Condvar::new()));
            let notifier = Arc::clone(&state);
            weft::spawn(move || {
                *notifier.0.lock().unwrap() = true;
                notifier.1.notify_one();
            });
            let (ready, condvar) = &*state;
            let guard = condvar.wait_while(ready, ready.lock().unwrap(), |ready| !*ready);
            assert!(*guard);
        });
    });
}

/// Each `wait` returns only when notified, so with every waiter registered,
/// each `notify_one` lets exactly one through; `notify_all` lets all through.
#[test]
fn condvar_notify_one_releases_one_and_notify_all_releases_all() {
    guarded(|| {
        const N: usize = 6;
        let state = Arc::new((Mutex::new((0usize, 0usize)), Condvar::new())); // (waiting, returned)
        let spawn_waiters = || -> Vec<thread::JoinHandle<()>> {
            (0..N)
                .map(|_| {
                    let state = Arc::clone(&state);
                    thread::spawn(move || {
                        let (counts, condvar) = &*state;
                        let mut guard = counts.lock().unwrap();
                        guard.0 += 1;
                        guard = condvar.wait(counts, guard);
                        guard.1 += 1;
                    })
                })
                .collect()
        };
        let (counts, condvar) = &*state;
        let threads = spawn_waiters();
        // A waiter counted under the mutex is registered with the condvar
        // before it releases the mutex.
        assert_eventually(DEADLOCK_GUARD, "every waiter registered", || {
            counts.lock().unwrap().0 == N
        });
        for k in 1..=N {
            assert_eq!(counts.lock().unwrap().1, k - 1);
            condvar.notify_one();
            assert_eventually(DEADLOCK_GUARD, "a notify releases a waiter", || {
                counts.lock().unwrap().1 >= k
            });
        }
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(counts.lock().unwrap().1, N);
        assert_eq!(waiters(condvar), 0);

        *counts.lock().unwrap() = (0, 0);
        let threads = spawn_waiters();
        assert_eventually(DEADLOCK_GUARD, "every waiter registered", || {
            counts.lock().unwrap().0 == N
        });
        condvar.notify_all();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(counts.lock().unwrap().1, N);
    });
}

#[test]
fn condvar_notify_after_the_waiter_released_the_mutex_is_not_lost() {
    guarded(|| {
        for _ in 0..200 {
            let state = Arc::new((Mutex::new(false), Condvar::new()));
            let notifier = Arc::clone(&state);
            let (flag, condvar) = &*state;
            let guard = flag.lock().unwrap();
            let thread = thread::spawn(move || {
                // Gets the mutex only once the waiter released it inside `wait`.
                let mut guard = notifier.0.lock().unwrap();
                *guard = true;
                notifier.1.notify_one();
            });
            let (guard, timed_out) = condvar.wait_timeout(flag, guard, DEADLOCK_GUARD);
            assert!(!timed_out.timed_out());
            assert!(*guard);
            drop(guard);
            thread.join().unwrap();
        }
    });
}

#[test]
fn condvar_wait_timeout_times_out_when_nobody_notifies() {
    guarded(|| {
        let mutex = Mutex::new(0);
        let condvar = Condvar::new();
        let (mut guard, timed_out) = condvar.wait_timeout(&mutex, mutex.lock().unwrap(), SHORT);
        assert!(timed_out.timed_out());
        *guard += 1; // the mutex is locked again
        let (guard, timed_out) = condvar.wait_timeout_while(&mutex, guard, SHORT, |n| *n > 0);
        assert!(timed_out.timed_out());
        assert_eq!(*guard, 1);
        drop(guard);
        assert_eq!(waiters(&condvar), 0);

        let pool = pool(2);
        let shared = Arc::new((Mutex::new(()), Condvar::new()));
        let inner = Arc::clone(&shared);
        let timed_out = pool.install(move || {
            let (mutex, condvar) = &*inner;
            condvar
                .wait_timeout(mutex, mutex.lock().unwrap(), SHORT)
                .1
                .timed_out()
        });
        assert!(timed_out);
        assert_eq!(waiters(&shared.1), 0);
    });
}

#[test]
#[should_panic(expected = "does not belong to the mutex")]
fn condvar_rejects_a_guard_of_another_mutex() {
    let (a, b) = (Mutex::new(()), Mutex::new(()));
    let condvar = Condvar::new();
    let _ = condvar.wait_timeout(&a, b.lock().unwrap(), SHORT);
}

#[test]
fn condvar_wait_recovers_a_poisoned_mutex() {
    let mutex = Arc::new(Mutex::new(7));
    let poisoner = Arc::clone(&mutex);
    let _ = thread::spawn(move || {
        let _guard = poisoner.lock().unwrap();
        panic!("poison the mutex");
    })
    .join();
    assert!(mutex.is_poisoned());
    let condvar = Condvar::new();
    let guard = mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let (guard, timed_out) = condvar.wait_timeout(&mutex, guard, SHORT);
    assert!(timed_out.timed_out());
    assert_eq!(*guard, 7);
}

/// A barrier built on the condvar, crossed by more tasks than cores.
#[test]
fn condvar_barrier_stress_on_64_workers() {
    guarded(|| {
        const TASKS: usize = 64;
        let pool = pool(64);
        for _round in 0..20 {
            let state = Arc::new((Mutex::new(0usize), Condvar::new()));
            let wg = WaitGroup::with_count(TASKS);
            for _ in 0..TASKS {
                let (state, wg) = (Arc::clone(&state), wg.clone());
                pool.spawn(move || {
                    let (arrived, condvar) = &*state;
                    let mut guard = arrived.lock().unwrap();
                    *guard += 1;
                    if *guard == TASKS {
                        condvar.notify_all();
                    }
                    let guard = condvar.wait_while(arrived, guard, |arrived| *arrived < TASKS);
                    assert_eq!(*guard, TASKS);
                    drop(guard);
                    wg.done();
                });
            }
            wg.wait();
        }
    });
}

#[test]
fn primitives_are_send_sync_clone_and_debug() {
    fn check<T: Send + Sync + std::fmt::Debug>() {}
    fn cloneable<T: Clone>() {}
    check::<WaitGroup>();
    check::<Event>();
    check::<TicketQueue>();
    check::<weft::Ticket>();
    check::<Condvar>();
    cloneable::<WaitGroup>();
    cloneable::<Event>();
    cloneable::<TicketQueue>();
    cloneable::<Condvar>();
}
