//! marl-shaped code on a weft pool: the acceptance tests for waits that
//! suspend the waiting task instead of helping.
//!
//! Each test has the intent of one of marl's unit tests (or a group of them)
//! for events, tickets, wait groups, condition variables and the scheduler
//! (`src/*_test.cpp` in google/marl), written afresh for weft's API, and runs
//! at marl's worker counts (1, 2, 4, 8 and 64; the stress tests at 64 and
//! 256). The tasks use the plain blocking waits (`wait`, `wait_timeout`,
//! `wait_deadline`, `JoinHandle::join`), never `wait_async` or `blocking`:
//! marl code blocks a task and expects its worker to carry on with other
//! tasks. A wait that helps (runs other tasks on top of the waiting one)
//! deadlocks in many of these shapes, because a waiter released while buried
//! under a task that waits for it can never return; a wait that suspends the
//! task on a fiber passes every one of them, every time.
//!
//! Every test asserts behaviour, never timing. A hang is how a broken
//! implementation fails, so each test runs under a deadlock guard that names
//! the worker count it was stuck at. Time limits inside the tests are either
//! the subject of the test, on waits that nobody ends early (so they must
//! report a timeout however slow the machine), or long enough that only a
//! deadlock reaches them.

use std::any::Any;
use std::collections::HashSet;
use std::panic;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

mod common;

use common::assert_eventually;

use weft::{Condvar, Event, EventMode, JoinHandle, Pool, TicketQueue, WaitGroup};

/// marl runs its scheduler tests at these worker counts (`marl_test.cpp`; its
/// single-threaded mode 0 has no weft counterpart).
const MARL_WORKERS: &[usize] = &[1, 2, 4, 8, 64];

/// Many more workers than the machine has cores, so that suspended tasks
/// resume on threads the OS interleaves arbitrarily.
const STRESS_WORKERS: &[usize] = &[64, 256];

/// Long enough that only a deadlock reaches it.
const DEADLOCK_GUARD: Duration = Duration::from_secs(120);

/// For waits that something ends early: if this runs out, the wake was lost.
const LONG: Duration = Duration::from_secs(60);

/// For waits that nobody ends: they time out however slow the machine is.
const SHORT: Duration = Duration::from_millis(10);

/// What the deadlock guard reports about the test it watches.
#[derive(Default)]
struct Progress {
    /// The worker count of the pool the test is at.
    workers: AtomicUsize,
    /// The first panic that escaped a task: a failed assertion in a task
    /// would otherwise look like a deadlock (its wait group never reaches
    /// zero).
    task_panic: Mutex<Option<String>>,
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<&str>() {
        (*message).to_owned()
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `body` once per worker count, each time with a fresh pool (dropped
/// afterwards, which waits for its tasks), on a thread of its own; fails if a
/// task panicked or if the whole run has not finished within the deadlock
/// guard. A panic in `body` is passed on.
fn on_pools(name: &'static str, worker_counts: &'static [usize], body: fn(Arc<Pool>)) {
    let progress = Arc::new(Progress::default());
    let (finished, finishing) = mpsc::channel();
    let shared = Arc::clone(&progress);
    let runner = thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            for &workers in worker_counts {
                shared.workers.store(workers, Ordering::SeqCst);
                let panics = Arc::clone(&shared);
                let pool = Pool::builder()
                    .workers(workers)
                    .panic_handler(move |payload| {
                        lock(&panics.task_panic).get_or_insert_with(|| panic_message(&*payload));
                    })
                    .build()
                    .expect("pool");
                body(Arc::new(pool));
            }
            let _ = finished.send(());
        })
        .expect("test thread");
    let deadline = Instant::now() + DEADLOCK_GUARD;
    loop {
        let outcome = finishing.recv_timeout(Duration::from_millis(20));
        let workers = progress.workers.load(Ordering::SeqCst);
        if let Some(message) = lock(&progress.task_panic).take() {
            panic!("{name}: a task panicked at {workers} workers: {message}");
        }
        match outcome {
            Ok(()) | Err(RecvTimeoutError::Disconnected) => {
                if let Err(payload) = runner.join() {
                    panic::resume_unwind(payload);
                }
                return;
            }
            Err(RecvTimeoutError::Timeout) => {
                if Instant::now() >= deadline {
                    panic!(
                        "deadlock: {name} not finished within {DEADLOCK_GUARD:?} \
                         (stuck at {workers} workers)"
                    );
                }
            }
        }
    }
}

/// A fixed permutation of `0..n` (xorshift; no dev-dependency needed). Tasks
/// spawned in an order unrelated to the order they must run in put waiters
/// ahead of the tasks that release them on every worker count.
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

fn counters(n: usize) -> Arc<Vec<AtomicUsize>> {
    Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect())
}

/// Panics unless every counter is `expected`, naming the first that is not.
fn assert_all(counters: &[AtomicUsize], expected: usize, what: &str) {
    for (index, counter) in counters.iter().enumerate() {
        let value = counter.load(Ordering::SeqCst);
        assert_eq!(value, expected, "{what}: task {index} counted {value}");
    }
}

// -------------------------------------------------------------------- Event

/// marl's EventAutoWait: each signal lets exactly one of the waiting tasks
/// through, and the main thread sees them go one at a time.
#[test]
fn event_auto_signal_releases_one_waiting_task_at_a_time() {
    on_pools("event_auto_signal", MARL_WORKERS, |pool| {
        let event = Event::new(EventMode::Auto);
        let done = Event::new(EventMode::Auto);
        let passed = Arc::new(AtomicUsize::new(0));
        for _ in 0..3 {
            let (event, done, passed) = (event.clone(), done.clone(), Arc::clone(&passed));
            pool.spawn(move || {
                event.wait();
                passed.fetch_add(1, Ordering::SeqCst);
                done.signal();
            });
        }
        assert_eq!(passed.load(Ordering::SeqCst), 0);
        for released in 1..=3 {
            event.signal();
            done.wait();
            assert_eq!(passed.load(Ordering::SeqCst), released);
        }
        assert!(!event.is_signalled(), "a signal was left over");
    });
}

/// marl's EventManualWait: one signal lets every waiting task through, and
/// stays.
#[test]
fn event_manual_signal_releases_every_waiting_task() {
    on_pools("event_manual_signal", MARL_WORKERS, |pool| {
        let event = Event::new(EventMode::Manual);
        let wg = WaitGroup::with_count(3);
        let passed = Arc::new(AtomicUsize::new(0));
        for _ in 0..3 {
            let (event, wg, passed) = (event.clone(), wg.clone(), Arc::clone(&passed));
            pool.spawn(move || {
                event.wait();
                passed.fetch_add(1, Ordering::SeqCst);
                wg.done();
            });
        }
        event.signal();
        wg.wait();
        assert_eq!(passed.load(Ordering::SeqCst), 3);
        assert!(event.is_signalled());
    });
}

/// marl's EventSequence, hundreds of links long: task `i` waits on link `i`
/// and signals link `i + 1`. The tasks are spawned in a shuffled order, so
/// on one worker most waiters run before the task that releases them, and a
/// released waiter must get its worker back while later links still wait.
#[test]
fn event_chain_runs_in_link_order_in_both_modes() {
    on_pools("event_chain", MARL_WORKERS, |pool| {
        const LINKS: usize = 300;
        for mode in [EventMode::Manual, EventMode::Auto] {
            let links: Vec<Event> = (0..=LINKS).map(|_| Event::new(mode)).collect();
            let order = Arc::new(Mutex::new(Vec::with_capacity(LINKS)));
            for i in shuffled(LINKS, 0x5eed_0001) {
                let (mine, next) = (links[i].clone(), links[i + 1].clone());
                let order = Arc::clone(&order);
                pool.spawn(move || {
                    mine.wait();
                    lock(&order).push(i);
                    next.signal();
                });
            }
            assert!(
                lock(&order).is_empty(),
                "a link ran before the first signal"
            );
            links[0].signal();
            links[LINKS].wait();
            assert_eq!(*lock(&order), (0..LINKS).collect::<Vec<_>>(), "{mode:?}");
        }
    });
}

/// marl's EventAny, with the `any` event waited on by tasks: a signal of any
/// source releases a task waiting on it, and the task consumes the `any`
/// event's signal, not the source's. Then many tasks each wait on "their own
/// event, or the shared stop": half are released one way, half the other.
#[test]
fn event_any_releases_tasks_waiting_on_it() {
    on_pools("event_any", MARL_WORKERS, |pool| {
        for signalled in 0..3 {
            let sources: Vec<Event> = (0..3).map(|_| Event::new(EventMode::Auto)).collect();
            let any = Event::any(EventMode::Auto, &sources);
            let done = Event::new(EventMode::Manual);
            {
                let (any, done) = (any.clone(), done.clone());
                pool.spawn(move || {
                    any.wait();
                    done.signal();
                });
            }
            sources[signalled].signal();
            done.wait();
            assert!(
                !any.is_signalled(),
                "the waiting task left the any event signalled"
            );
            for (index, source) in sources.iter().enumerate() {
                assert_eq!(source.is_signalled(), index == signalled, "source {index}");
            }
        }

        const TASKS: usize = 100;
        let stop = Event::new(EventMode::Manual);
        let own: Vec<Event> = (0..TASKS).map(|_| Event::new(EventMode::Auto)).collect();
        let by_own = WaitGroup::with_count(TASKS / 2);
        let by_stop = WaitGroup::with_count(TASKS / 2);
        let passed = counters(TASKS);
        for (index, mine) in own.iter().enumerate() {
            let either = Event::any(EventMode::Auto, &[mine.clone(), stop.clone()]);
            let group = if index % 2 == 0 {
                by_own.clone()
            } else {
                by_stop.clone()
            };
            let passed = Arc::clone(&passed);
            pool.spawn(move || {
                either.wait();
                passed[index].fetch_add(1, Ordering::SeqCst);
                group.done();
            });
        }
        for mine in own.iter().step_by(2) {
            mine.signal();
        }
        by_own.wait();
        stop.signal();
        by_stop.wait();
        assert_all(&passed, 1, "releases");
    });
}

/// marl's EventWaitForTimeTaken: timed waits in tasks on an event nobody
/// signals all report a timeout, none before its time.
#[test]
fn event_wait_timeout_in_tasks_times_out() {
    on_pools("event_wait_timeout_times_out", MARL_WORKERS, |pool| {
        const TASKS: usize = 1000;
        let event = Event::new(EventMode::Auto);
        let wg = WaitGroup::with_count(TASKS);
        let signalled = Arc::new(AtomicUsize::new(0));
        let early = Arc::new(AtomicUsize::new(0));
        for _ in 0..TASKS {
            let (event, wg) = (event.clone(), wg.clone());
            let (signalled, early) = (Arc::clone(&signalled), Arc::clone(&early));
            pool.spawn(move || {
                let start = Instant::now();
                if event.wait_timeout(SHORT) {
                    signalled.fetch_add(1, Ordering::SeqCst);
                }
                if start.elapsed() < SHORT {
                    early.fetch_add(1, Ordering::SeqCst);
                }
                wg.done();
            });
        }
        wg.wait();
        assert_eq!(signalled.load(Ordering::SeqCst), 0);
        assert_eq!(
            early.load(Ordering::SeqCst),
            0,
            "timed out before the timeout"
        );
        assert!(!event.is_signalled());
    });
}

/// marl's EventWaitForUnblocked: timed waits in tasks that a signal ends in
/// time all report the signal. Then the same through a shuffled chain of
/// timed waits, where each waiter is released by another task.
#[test]
fn event_wait_timeout_in_tasks_is_signalled_in_time() {
    on_pools("event_wait_timeout_signalled", MARL_WORKERS, |pool| {
        const TASKS: usize = 1000;
        let event = Event::new(EventMode::Manual);
        let wg = WaitGroup::with_count(TASKS);
        let signalled = Arc::new(AtomicUsize::new(0));
        for _ in 0..TASKS {
            let (event, wg, signalled) = (event.clone(), wg.clone(), Arc::clone(&signalled));
            pool.spawn(move || {
                if event.wait_timeout(LONG) {
                    signalled.fetch_add(1, Ordering::SeqCst);
                }
                wg.done();
            });
        }
        event.signal();
        wg.wait();
        assert_eq!(signalled.load(Ordering::SeqCst), TASKS);

        const LINKS: usize = 100;
        let links: Vec<Event> = (0..=LINKS).map(|_| Event::new(EventMode::Auto)).collect();
        let order = Arc::new(Mutex::new(Vec::with_capacity(LINKS)));
        for i in shuffled(LINKS, 0x5eed_0002) {
            let (mine, next, order) = (links[i].clone(), links[i + 1].clone(), Arc::clone(&order));
            pool.spawn(move || {
                let in_time = mine.wait_timeout(LONG);
                lock(&order).push((i, in_time));
                next.signal();
            });
        }
        links[0].signal();
        assert!(
            links[LINKS].wait_timeout(LONG),
            "the chain never reached its end"
        );
        let expected: Vec<(usize, bool)> = (0..LINKS).map(|i| (i, true)).collect();
        assert_eq!(*lock(&order), expected);
    });
}

/// marl's EventWaitUntilTimeTaken and EventWaitUntilUnblocked: waits to a
/// deadline in tasks time out at the deadline when nobody signals, and report
/// the signal when one comes in time.
#[test]
fn event_wait_deadline_in_tasks() {
    on_pools("event_wait_deadline", MARL_WORKERS, |pool| {
        const TASKS: usize = 500;
        let silent = Event::new(EventMode::Auto);
        let wg = WaitGroup::with_count(TASKS);
        let wrong = Arc::new(AtomicUsize::new(0));
        for _ in 0..TASKS {
            let (silent, wg, wrong) = (silent.clone(), wg.clone(), Arc::clone(&wrong));
            pool.spawn(move || {
                let deadline = Instant::now() + SHORT;
                let signalled = silent.wait_deadline(deadline);
                if signalled || Instant::now() < deadline {
                    wrong.fetch_add(1, Ordering::SeqCst);
                }
                wg.done();
            });
        }
        wg.wait();
        assert_eq!(wrong.load(Ordering::SeqCst), 0, "signalled or early");

        let event = Event::new(EventMode::Manual);
        let wg = WaitGroup::with_count(TASKS);
        let signalled = Arc::new(AtomicUsize::new(0));
        for _ in 0..TASKS {
            let (event, wg, signalled) = (event.clone(), wg.clone(), Arc::clone(&signalled));
            pool.spawn(move || {
                if event.wait_deadline(Instant::now() + LONG) {
                    signalled.fetch_add(1, Ordering::SeqCst);
                }
                wg.done();
            });
        }
        event.signal();
        wg.wait();
        assert_eq!(signalled.load(Ordering::SeqCst), TASKS);
    });
}

/// marl's EventWaitStressTest: rounds of timed waits of every length from
/// zero up, some ended by their timeout and the rest by a signal, so timeouts
/// and early wake-ups of suspended tasks interleave. Unlike marl the event is
/// cleared between rounds, so that every round waits.
#[test]
fn event_timed_waits_mixed_with_signals() {
    on_pools("event_timed_waits_mixed", MARL_WORKERS, |pool| {
        const ROUNDS: usize = 5;
        const TASKS: u64 = 100;
        let event = Event::new(EventMode::Manual);
        for _ in 0..ROUNDS {
            let wg = WaitGroup::with_count(TASKS as usize);
            let timed_out = Arc::new(AtomicUsize::new(0));
            let signalled = Arc::new(AtomicUsize::new(0));
            let early = Arc::new(AtomicUsize::new(0));
            for millis in 0..TASKS {
                let (event, wg) = (event.clone(), wg.clone());
                let (timed_out, signalled) = (Arc::clone(&timed_out), Arc::clone(&signalled));
                let early = Arc::clone(&early);
                pool.spawn(move || {
                    let timeout = Duration::from_millis(millis);
                    let start = Instant::now();
                    if event.wait_timeout(timeout) {
                        signalled.fetch_add(1, Ordering::SeqCst);
                    } else {
                        timed_out.fetch_add(1, Ordering::SeqCst);
                        if start.elapsed() < timeout {
                            early.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                    wg.done();
                });
            }
            // The zero-length waits time out for sure while the event is
            // clear: wait for one, so that the round has both outcomes.
            assert_eventually(DEADLOCK_GUARD, "a zero-length wait timed out", || {
                timed_out.load(Ordering::SeqCst) > 0
            });
            event.signal();
            wg.wait();
            event.clear();
            let total = timed_out.load(Ordering::SeqCst) + signalled.load(Ordering::SeqCst);
            assert_eq!(total, TASKS as usize, "waits returned other than once each");
            assert_eq!(
                early.load(Ordering::SeqCst),
                0,
                "timed out before the timeout"
            );
        }
    });
}

// ------------------------------------------------------------------ Tickets

/// marl's Ticket test: tickets taken in order on the main thread, each moved
/// into a task that waits for its turn; the turns come in ticket order.
#[test]
fn ticket_tasks_run_their_turns_in_ticket_order() {
    on_pools("ticket_in_order", MARL_WORKERS, |pool| {
        const TICKETS: usize = 1000;
        let queue = TicketQueue::new();
        let order = Arc::new(Mutex::new(Vec::with_capacity(TICKETS)));
        for i in 0..TICKETS {
            let ticket = queue.take();
            let order = Arc::clone(&order);
            pool.spawn(move || {
                ticket.wait();
                lock(&order).push(i);
                ticket.done();
            });
        }
        queue.take().wait();
        assert_eq!(*lock(&order), (0..TICKETS).collect::<Vec<_>>());
    });
}

/// As marl's Ticket test, with the tasks spawned in a shuffled order: on one
/// worker, most tasks wait for a turn that a task queued behind them gives.
#[test]
fn ticket_tasks_spawned_out_of_order_run_in_ticket_order() {
    on_pools("ticket_out_of_order", MARL_WORKERS, |pool| {
        const TICKETS: usize = 300;
        let queue = TicketQueue::new();
        let mut tickets: Vec<_> = (0..TICKETS).map(|_| Some(queue.take())).collect();
        let order = Arc::new(Mutex::new(Vec::with_capacity(TICKETS)));
        for i in shuffled(TICKETS, 0x5eed_0003) {
            let ticket = tickets[i].take().expect("each ticket once");
            let order = Arc::clone(&order);
            pool.spawn(move || {
                ticket.wait();
                lock(&order).push(i);
                ticket.done();
            });
        }
        queue.take().wait();
        assert_eq!(*lock(&order), (0..TICKETS).collect::<Vec<_>>());
    });
}

/// marl's `Ticket::onCall`, mixed with waits: tasks in a shuffled order hand
/// every other ticket's section to `on_call` and wait for the rest in place;
/// all sections run in ticket order.
#[test]
fn ticket_on_call_and_wait_interleave_in_ticket_order() {
    on_pools("ticket_on_call", MARL_WORKERS, |pool| {
        const TICKETS: usize = 300;
        let queue = TicketQueue::new();
        let mut tickets: Vec<_> = (0..TICKETS).map(|_| Some(queue.take())).collect();
        let order = Arc::new(Mutex::new(Vec::with_capacity(TICKETS)));
        for i in shuffled(TICKETS, 0x5eed_0004) {
            let ticket = tickets[i].take().expect("each ticket once");
            let order = Arc::clone(&order);
            pool.spawn(move || {
                if i % 2 == 0 {
                    ticket.on_call(move || lock(&order).push(i));
                } else {
                    ticket.wait();
                    lock(&order).push(i);
                    ticket.done();
                }
            });
        }
        queue.take().wait();
        assert_eq!(*lock(&order), (0..TICKETS).collect::<Vec<_>>());
    });
}

// -------------------------------------------------------------- WaitGroup

/// marl's WaitGroup_OneTask and WaitGroup_10Tasks, with the waiters inside
/// the pool as well as on the main thread: tasks spawned before the ones they
/// wait for see every one of them done.
#[test]
fn wait_group_wait_in_tasks_for_other_tasks() {
    on_pools("wait_group_in_tasks", MARL_WORKERS, |pool| {
        for members in [1, 10] {
            const WAITERS: usize = 4;
            let wg = WaitGroup::with_count(members);
            let counted = Arc::new(AtomicUsize::new(0));
            let seen = Arc::new(Mutex::new(Vec::new()));
            let waiters_done = WaitGroup::with_count(WAITERS);
            for _ in 0..WAITERS {
                let (wg, counted, seen) = (wg.clone(), Arc::clone(&counted), Arc::clone(&seen));
                let waiters_done = waiters_done.clone();
                pool.spawn(move || {
                    wg.wait();
                    lock(&seen).push(counted.load(Ordering::SeqCst));
                    waiters_done.done();
                });
            }
            for _ in 0..members {
                let (wg, counted) = (wg.clone(), Arc::clone(&counted));
                pool.spawn(move || {
                    counted.fetch_add(1, Ordering::SeqCst);
                    wg.done();
                });
            }
            wg.wait();
            assert_eq!(counted.load(Ordering::SeqCst), members);
            waiters_done.wait();
            assert_eq!(*lock(&seen), vec![members; WAITERS]);
        }
    });
}

/// A task waits for a group whose members, once done, wait for that task to
/// let them finish: the waiter must run again while they are still blocked.
#[test]
fn wait_group_waiter_releases_the_tasks_it_waited_for() {
    on_pools("wait_group_waiter_releases", MARL_WORKERS, |pool| {
        const MEMBERS: usize = 50;
        let arrived = WaitGroup::with_count(MEMBERS);
        let release = Event::new(EventMode::Manual);
        let finished = WaitGroup::with_count(MEMBERS + 1);
        {
            let (arrived, release, finished) = (arrived.clone(), release.clone(), finished.clone());
            pool.spawn(move || {
                arrived.wait();
                release.signal();
                finished.done();
            });
        }
        let passed = counters(MEMBERS);
        for index in 0..MEMBERS {
            let (arrived, release, finished) = (arrived.clone(), release.clone(), finished.clone());
            let passed = Arc::clone(&passed);
            pool.spawn(move || {
                arrived.done();
                release.wait();
                passed[index].fetch_add(1, Ordering::SeqCst);
                finished.done();
            });
        }
        finished.wait();
        assert_all(&passed, 1, "releases");
    });
}

/// Nested fork-join through wait groups: every task of a tree spawns its
/// children and waits for them before it reports to its parent.
#[test]
fn wait_group_tasks_wait_for_the_tasks_they_spawned() {
    const FANOUT: usize = 4;
    const DEPTH: usize = 4;

    /// Returns, through `parent`, the number of nodes in its subtree.
    fn node(depth: usize, nodes: Arc<AtomicUsize>, parent: WaitGroup) {
        if depth < DEPTH {
            let children = WaitGroup::with_count(FANOUT);
            let below = Arc::new(AtomicUsize::new(0));
            for _ in 0..FANOUT {
                let (below, children) = (Arc::clone(&below), children.clone());
                weft::spawn(move || node(depth + 1, below, children));
            }
            children.wait();
            nodes.fetch_add(below.load(Ordering::SeqCst), Ordering::SeqCst);
        }
        nodes.fetch_add(1, Ordering::SeqCst);
        parent.done();
    }

    on_pools("wait_group_nested", MARL_WORKERS, |pool| {
        let nodes = Arc::new(AtomicUsize::new(0));
        let root = WaitGroup::with_count(1);
        {
            let (nodes, root) = (Arc::clone(&nodes), root.clone());
            pool.spawn(move || node(0, nodes, root));
        }
        root.wait();
        // 1 + 4 + 16 + 64 + 256: each node counted its subtree only after
        // every child had reported.
        let expected: usize = (0..=DEPTH).map(|level| FANOUT.pow(level as u32)).sum();
        assert_eq!(nodes.load(Ordering::SeqCst), expected);
    });
}

/// Timed waits on wait groups in tasks: one that nobody finishes times out
/// (to a timeout and to a deadline) and leaves the count alone; one that
/// other tasks finish in time reports it.
#[test]
fn wait_group_wait_timeout_in_tasks() {
    on_pools("wait_group_wait_timeout", MARL_WORKERS, |pool| {
        const TASKS: usize = 200;
        let never = WaitGroup::with_count(1);
        let finished = WaitGroup::with_count(TASKS);
        let wrong = Arc::new(AtomicUsize::new(0));
        for index in 0..TASKS {
            let (never, finished, wrong) = (never.clone(), finished.clone(), Arc::clone(&wrong));
            pool.spawn(move || {
                let start = Instant::now();
                let reached = if index % 2 == 0 {
                    never.wait_timeout(SHORT)
                } else {
                    never.wait_deadline(start + SHORT)
                };
                if reached || start.elapsed() < SHORT {
                    wrong.fetch_add(1, Ordering::SeqCst);
                }
                finished.done();
            });
        }
        finished.wait();
        assert_eq!(
            wrong.load(Ordering::SeqCst),
            0,
            "reached zero or timed out early"
        );
        assert_eq!(never.count(), 1);

        let group = WaitGroup::with_count(TASKS);
        let waiters = WaitGroup::with_count(TASKS);
        let in_time = Arc::new(AtomicUsize::new(0));
        for _ in 0..TASKS {
            let (group, waiters, in_time) = (group.clone(), waiters.clone(), Arc::clone(&in_time));
            pool.spawn(move || {
                if group.wait_timeout(LONG) {
                    in_time.fetch_add(1, Ordering::SeqCst);
                }
                waiters.done();
            });
        }
        for _ in 0..TASKS {
            let group = group.clone();
            pool.spawn(move || {
                group.done();
            });
        }
        waiters.wait();
        assert_eq!(in_time.load(Ordering::SeqCst), TASKS);
    });
}

// --------------------------------------------------------- Condvar

/// One side of marl's ConditionVariable handshake: wait for trigger `i`, set
/// signal `i`, notify. `triggers` and `signals` share one mutex.
type Handshake = (Mutex<([bool; HANDSHAKES], [bool; HANDSHAKES])>, Condvar);
const HANDSHAKES: usize = 100;

fn handshake() -> Arc<Handshake> {
    Arc::new((
        Mutex::new(([false; HANDSHAKES], [false; HANDSHAKES])),
        Condvar::new(),
    ))
}

fn answer_triggers(handshake: &Handshake) {
    let (state, condvar) = handshake;
    for i in 0..HANDSHAKES {
        let mut guard = condvar.wait_while(state, lock(state), |(triggers, _)| !triggers[i]);
        guard.1[i] = true;
        condvar.notify_one();
    }
}

/// The other side: set trigger `i`, notify, wait for signal `i`; returns
/// whether every signal was set exactly when its trigger had been answered.
fn pull_triggers(handshake: &Handshake) -> bool {
    let (state, condvar) = handshake;
    let mut in_step = true;
    for i in 0..HANDSHAKES {
        let mut guard = lock(state);
        guard.0[i] = true;
        condvar.notify_one();
        let guard = condvar.wait_while(state, guard, |(_, signals)| !signals[i]);
        in_step &= guard
            .1
            .iter()
            .enumerate()
            .all(|(j, &signal)| signal == (j <= i));
    }
    in_step
}

/// marl's ConditionVariable test (WithBoundScheduler), with the answering
/// side as a pool task: a handshake through one condition variable between
/// the main thread and a task.
#[test]
fn condvar_handshake_between_main_and_a_task() {
    on_pools("condvar_handshake_main", MARL_WORKERS, |pool| {
        let handshake = handshake();
        let done = WaitGroup::with_count(1);
        {
            let (handshake, done) = (Arc::clone(&handshake), done.clone());
            pool.spawn(move || {
                answer_triggers(&handshake);
                done.done();
            });
        }
        assert!(pull_triggers(&handshake));
        done.wait();
    });
}

/// The same handshake between two tasks, the answering one spawned first: on
/// one worker it waits before the other side has started, and each side then
/// waits for the other in turn.
#[test]
fn condvar_handshake_between_two_tasks() {
    on_pools("condvar_handshake_tasks", MARL_WORKERS, |pool| {
        let handshake = handshake();
        let done = WaitGroup::with_count(2);
        let in_step = Arc::new(AtomicBool::new(false));
        {
            let (handshake, done) = (Arc::clone(&handshake), done.clone());
            pool.spawn(move || {
                answer_triggers(&handshake);
                done.done();
            });
        }
        {
            let (handshake, done, in_step) =
                (Arc::clone(&handshake), done.clone(), Arc::clone(&in_step));
            pool.spawn(move || {
                in_step.store(pull_triggers(&handshake), Ordering::SeqCst);
                done.done();
            });
        }
        done.wait();
        assert!(in_step.load(Ordering::SeqCst));
    });
}

/// Tasks wait with `wait_while` for a counter that the main thread and other
/// tasks bump: each waiter sees the final count.
#[test]
fn condvar_wait_while_in_tasks_for_a_counter_bumped_by_main_and_tasks() {
    on_pools("condvar_counter", MARL_WORKERS, |pool| {
        const WAITERS: usize = 8;
        const BUMPS_FROM_MAIN: usize = 50;
        const BUMPS_FROM_TASKS: usize = 50;
        const TARGET: usize = BUMPS_FROM_MAIN + BUMPS_FROM_TASKS;
        let shared: Arc<(Mutex<usize>, Condvar)> = Arc::default();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let waiters = WaitGroup::with_count(WAITERS);
        for _ in 0..WAITERS {
            let (shared, seen, waiters) = (Arc::clone(&shared), Arc::clone(&seen), waiters.clone());
            pool.spawn(move || {
                let (count, condvar) = &*shared;
                let guard = condvar.wait_while(count, lock(count), |count| *count < TARGET);
                lock(&seen).push(*guard);
                drop(guard);
                waiters.done();
            });
        }
        for _ in 0..BUMPS_FROM_TASKS {
            let shared = Arc::clone(&shared);
            pool.spawn(move || {
                let (count, condvar) = &*shared;
                *lock(count) += 1;
                condvar.notify_all();
            });
        }
        let (count, condvar) = &*shared;
        for _ in 0..BUMPS_FROM_MAIN {
            *lock(count) += 1;
            condvar.notify_all();
        }
        waiters.wait();
        assert_eq!(*lock(&seen), vec![TARGET; WAITERS]);
    });
}

/// (tokens on offer, tokens taken); the tasks wait on the first condition
/// variable for a token, the main thread on the second for it to be taken.
type Tokens = (Mutex<(usize, usize)>, Condvar, Condvar);

/// Many tasks wait on one condition variable. `notify_all` releases them
/// all at once; `notify_one`, given with one token at a time, releases one
/// task per token until each task has taken exactly one.
#[test]
fn condvar_notify_one_and_notify_all_with_many_waiting_tasks() {
    on_pools("condvar_notify", MARL_WORKERS, |pool| {
        const TASKS: usize = 200;

        let gate: Arc<(Mutex<bool>, Condvar)> = Arc::default();
        let through = WaitGroup::with_count(TASKS);
        for _ in 0..TASKS {
            let (gate, through) = (Arc::clone(&gate), through.clone());
            pool.spawn(move || {
                let (open, condvar) = &*gate;
                drop(condvar.wait_while(open, lock(open), |open| !*open));
                through.done();
            });
        }
        {
            let (open, condvar) = &*gate;
            *lock(open) = true;
            condvar.notify_all();
        }
        through.wait();

        let tokens: Arc<Tokens> = Arc::default();
        let taken = counters(TASKS);
        for index in 0..TASKS {
            let (tokens, taken) = (Arc::clone(&tokens), Arc::clone(&taken));
            pool.spawn(move || {
                let (state, offered, took) = &*tokens;
                let mut guard =
                    offered.wait_while(state, lock(state), |(on_offer, _)| *on_offer == 0);
                guard.0 -= 1;
                guard.1 += 1;
                taken[index].fetch_add(1, Ordering::SeqCst);
                drop(guard);
                took.notify_one();
            });
        }
        let (state, offered, took) = &*tokens;
        for given in 1..=TASKS {
            let mut guard = lock(state);
            guard.0 += 1;
            offered.notify_one();
            let guard = took.wait_while(state, guard, |(_, taken)| *taken < given);
            assert_eq!(*guard, (0, given), "(on offer, taken) after token {given}");
        }
        assert_all(&taken, 1, "tokens taken");
    });
}

/// marl's ConditionVariableTimeouts: rounds of timed `wait_while`s of every
/// length in tasks, some ended by their timeout and the rest by a
/// `notify_all`; each reports a timeout exactly when its condition still
/// held, always with the mutex locked. A plain `wait_timeout` in a task that
/// nobody notifies times out.
#[test]
fn condvar_wait_timeout_in_tasks() {
    on_pools("condvar_wait_timeout", MARL_WORKERS, |pool| {
        const ROUNDS: usize = 5;
        const TASKS: u64 = 100;
        for _ in 0..ROUNDS {
            let shared: Arc<(Mutex<bool>, Condvar)> = Arc::default();
            let wg = WaitGroup::with_count(TASKS as usize);
            let timed_out = Arc::new(AtomicUsize::new(0));
            let inconsistent = Arc::new(AtomicUsize::new(0));
            for millis in 0..TASKS {
                let (shared, wg) = (Arc::clone(&shared), wg.clone());
                let (timed_out, inconsistent) = (Arc::clone(&timed_out), Arc::clone(&inconsistent));
                pool.spawn(move || {
                    let (signalled, condvar) = &*shared;
                    let (guard, result) = condvar.wait_timeout_while(
                        signalled,
                        lock(signalled),
                        Duration::from_millis(millis),
                        |signalled| !*signalled,
                    );
                    if result.timed_out() {
                        timed_out.fetch_add(1, Ordering::SeqCst);
                    }
                    if result.timed_out() == *guard {
                        inconsistent.fetch_add(1, Ordering::SeqCst);
                    }
                    drop(guard);
                    wg.done();
                });
            }
            // The zero-length waits time out for sure before the notify:
            // wait for one, so that the round has both outcomes.
            assert_eventually(DEADLOCK_GUARD, "a zero-length wait timed out", || {
                timed_out.load(Ordering::SeqCst) > 0
            });
            let (signalled, condvar) = &*shared;
            *lock(signalled) = true;
            condvar.notify_all();
            wg.wait();
            assert_eq!(inconsistent.load(Ordering::SeqCst), 0);
        }

        const SILENT: usize = 100;
        let shared: Arc<(Mutex<()>, Condvar)> = Arc::default();
        let wg = WaitGroup::with_count(SILENT);
        let wrong = Arc::new(AtomicUsize::new(0));
        for _ in 0..SILENT {
            let (shared, wg, wrong) = (Arc::clone(&shared), wg.clone(), Arc::clone(&wrong));
            pool.spawn(move || {
                let (mutex, condvar) = &*shared;
                let start = Instant::now();
                let (guard, result) = condvar.wait_timeout(mutex, lock(mutex), SHORT);
                drop(guard);
                if !result.timed_out() || start.elapsed() < SHORT {
                    wrong.fetch_add(1, Ordering::SeqCst);
                }
                wg.done();
            });
        }
        wg.wait();
        assert_eq!(
            wrong.load(Ordering::SeqCst),
            0,
            "notified or timed out early"
        );
    });
}

// ---------------------------------------------------------------- Scheduler

/// Tasks spawn children with handles and join them in place, two levels of
/// fan-out deep.
#[test]
fn join_handle_join_inside_tasks() {
    on_pools("join_in_tasks", MARL_WORKERS, |pool| {
        const PARENTS: usize = 64;
        const CHILDREN: usize = 4;
        let parents: Vec<JoinHandle<usize>> = (0..PARENTS)
            .map(|parent| {
                let inner = Arc::clone(&pool);
                pool.spawn_with_handle(move || {
                    let children: Vec<JoinHandle<usize>> = (0..CHILDREN)
                        .map(|child| inner.spawn_with_handle(move || parent * CHILDREN + child))
                        .collect();
                    // The main thread keeps the pool; a task never drops it last.
                    drop(inner);
                    children
                        .into_iter()
                        .map(|child| child.join().expect("child"))
                        .sum()
                })
            })
            .collect();
        let total: usize = parents
            .into_iter()
            .map(|parent| parent.join().expect("parent"))
            .sum();
        assert_eq!(total, (0..PARENTS * CHILDREN).sum::<usize>());
    });
}

/// A task joins its child while another task, queued in the pool, blocks on
/// what the parent does only after the join, and the child blocks on a
/// signal that comes once that other task has started: on one worker the
/// child must run again while the other task is still blocked.
#[test]
fn join_handle_join_inside_a_task_while_another_task_blocks() {
    on_pools("join_while_blocked", MARL_WORKERS, |pool| {
        let child_go = Event::new(EventMode::Manual);
        let parent_joined = Event::new(EventMode::Manual);
        let bystander_started = Arc::new(AtomicBool::new(false));
        let parent = {
            let (inner, child_go, parent_joined) =
                (Arc::clone(&pool), child_go.clone(), parent_joined.clone());
            pool.spawn_with_handle(move || {
                let child = inner.spawn_with_handle(move || {
                    child_go.wait();
                    7
                });
                drop(inner);
                let value = child.join().expect("child");
                parent_joined.signal();
                value
            })
        };
        let bystander = {
            let (parent_joined, started) = (parent_joined.clone(), Arc::clone(&bystander_started));
            pool.spawn_with_handle(move || {
                started.store(true, Ordering::SeqCst);
                parent_joined.wait();
            })
        };
        assert_eventually(DEADLOCK_GUARD, "the bystander started", || {
            bystander_started.load(Ordering::SeqCst)
        });
        child_go.signal();
        assert_eq!(parent.join().expect("parent"), 7);
        bystander.join().expect("bystander");
    });
}

/// marl's FibersResumeOnSameThread and TasksOnlyScheduledOnWorkerThreads at
/// scale: ten thousand tasks wait on one manual event that the main thread
/// sets once all are spawned. Each runs exactly once, only ever on the
/// pool's workers, and is on a worker again when its wait returns.
#[test]
fn many_tasks_wait_on_one_manual_event() {
    on_pools("many_tasks_one_event", MARL_WORKERS, |pool| {
        const TASKS: usize = 10_000;
        let go = Event::new(EventMode::Manual);
        let wg = WaitGroup::with_count(TASKS);
        let started = counters(TASKS);
        let passed = counters(TASKS);
        let off_worker = Arc::new(AtomicUsize::new(0));
        let threads = Arc::new(Mutex::new(HashSet::new()));
        for index in 0..TASKS {
            let (go, wg, off_worker) = (go.clone(), wg.clone(), Arc::clone(&off_worker));
            let (started, passed, threads) = (
                Arc::clone(&started),
                Arc::clone(&passed),
                Arc::clone(&threads),
            );
            pool.spawn(move || {
                started[index].fetch_add(1, Ordering::SeqCst);
                lock(&threads).insert(thread::current().id());
                let before = weft::current_worker_index();
                go.wait();
                let after = weft::current_worker_index();
                lock(&threads).insert(thread::current().id());
                if before.is_none() || after.is_none() {
                    off_worker.fetch_add(1, Ordering::SeqCst);
                }
                passed[index].fetch_add(1, Ordering::SeqCst);
                wg.done();
            });
        }
        go.signal();
        wg.wait();
        assert_all(&started, 1, "starts");
        assert_all(&passed, 1, "passes");
        assert_eq!(
            off_worker.load(Ordering::SeqCst),
            0,
            "ran off the pool's workers"
        );
        let threads = lock(&threads);
        assert!(
            threads.len() <= pool.workers(),
            "{} threads ran tasks",
            threads.len()
        );
        assert!(
            !threads.contains(&thread::current().id()),
            "a task ran on the spawner"
        );
    });
}

/// marl's DestructWithPendingTasks and DestructWithPendingFibers: dropping
/// the pool runs every queued task, and every task blocked in a wait that a
/// queued task releases, before it returns.
#[test]
fn dropping_the_pool_finishes_queued_and_waiting_tasks() {
    on_pools("drop_with_pending", MARL_WORKERS, |pool| {
        const TASKS: usize = 1000;
        let pool = Arc::try_unwrap(pool).expect("the only handle to the pool");
        let counted = Arc::new(AtomicUsize::new(0));
        for _ in 0..TASKS {
            let counted = Arc::clone(&counted);
            pool.spawn(move || {
                counted.fetch_add(1, Ordering::SeqCst);
            });
        }
        drop(pool);
        assert_eq!(counted.load(Ordering::SeqCst), TASKS);
    });
    on_pools("drop_with_waiting", MARL_WORKERS, |pool| {
        const TASKS: usize = 1000;
        let pool = Arc::try_unwrap(pool).expect("the only handle to the pool");
        let counted = Arc::new(AtomicUsize::new(0));
        let gate = WaitGroup::with_count(1);
        for _ in 0..TASKS {
            let (gate, counted) = (gate.clone(), Arc::clone(&counted));
            pool.spawn(move || {
                gate.wait();
                counted.fetch_add(1, Ordering::SeqCst);
            });
        }
        pool.spawn(move || {
            gate.done();
        });
        drop(pool);
        assert_eq!(counted.load(Ordering::SeqCst), TASKS);
    });
}

/// marl's ScheduleMTWWithNoBind pairs, and then the shapes that need a
/// blocked task to give up its worker: two tasks hand a baton back and forth
/// through auto events (the first waits before its partner has started), and
/// a task spawned last releases the waiting tasks ahead of it and then waits
/// for them to finish.
#[test]
fn the_only_worker_runs_the_tasks_that_unblock_its_waiting_tasks() {
    on_pools("unblocked_by_queued_tasks", MARL_WORKERS, |pool| {
        const PAIRS: usize = 100;
        let paired = WaitGroup::with_count(PAIRS);
        for _ in 0..PAIRS {
            let event = Event::new(EventMode::Auto);
            let (waiting, paired) = (event.clone(), paired.clone());
            pool.spawn(move || {
                waiting.wait();
                paired.done();
            });
            pool.spawn(move || event.signal());
        }
        paired.wait();

        const ROUNDS: usize = 500;
        let ping = Event::new(EventMode::Auto);
        let pong = Event::new(EventMode::Auto);
        let trips = Arc::new(AtomicUsize::new(0));
        let players = WaitGroup::with_count(2);
        {
            let (ping, pong, trips, players) = (
                ping.clone(),
                pong.clone(),
                Arc::clone(&trips),
                players.clone(),
            );
            pool.spawn(move || {
                for _ in 0..ROUNDS {
                    ping.wait();
                    trips.fetch_add(1, Ordering::SeqCst);
                    pong.signal();
                }
                players.done();
            });
        }
        {
            let players = players.clone();
            pool.spawn(move || {
                for _ in 0..ROUNDS {
                    ping.signal();
                    pong.wait();
                }
                players.done();
            });
        }
        players.wait();
        assert_eq!(trips.load(Ordering::SeqCst), ROUNDS);

        const WAITERS: usize = 100;
        let gates: Vec<Event> = (0..WAITERS).map(|_| Event::new(EventMode::Auto)).collect();
        let waiters = WaitGroup::with_count(WAITERS);
        let passed = counters(WAITERS);
        for (index, gate) in gates.iter().enumerate() {
            let (gate, waiters, passed) = (gate.clone(), waiters.clone(), Arc::clone(&passed));
            pool.spawn(move || {
                gate.wait();
                passed[index].fetch_add(1, Ordering::SeqCst);
                waiters.done();
            });
        }
        let releaser = {
            let waiters = waiters.clone();
            pool.spawn_with_handle(move || {
                for gate in &gates {
                    gate.signal();
                }
                waiters.wait();
            })
        };
        releaser.join().expect("releaser");
        assert_eq!(waiters.count(), 0);
        assert_all(&passed, 1, "releases");
    });
}

// ------------------------------------------------------------------- Stress

/// Thousands of tasks in rings pass a baton through auto events, several
/// rings at once, on many more workers than cores: every task is suspended
/// most of the time and resumes on whichever worker picks it up. Each task
/// runs once and holds the baton once per lap; at the end each ring's baton
/// rests on its first event and no other event holds a signal.
#[test]
fn stress_baton_rings_on_many_workers() {
    on_pools("stress_baton_rings", STRESS_WORKERS, |pool| {
        const RINGS: usize = 8;
        const RING: usize = 250;
        const LAPS: usize = 2;
        const TASKS: usize = RINGS * RING;
        let rings: Vec<Vec<Event>> = (0..RINGS)
            .map(|_| (0..RING).map(|_| Event::new(EventMode::Auto)).collect())
            .collect();
        let started = counters(TASKS);
        let held = counters(TASKS);
        let finished = WaitGroup::with_count(TASKS);
        for slot in shuffled(TASKS, 0x5eed_0005) {
            let (ring, place) = (slot / RING, slot % RING);
            let mine = rings[ring][place].clone();
            let next = rings[ring][(place + 1) % RING].clone();
            let (started, held, finished) =
                (Arc::clone(&started), Arc::clone(&held), finished.clone());
            pool.spawn(move || {
                started[slot].fetch_add(1, Ordering::SeqCst);
                for _ in 0..LAPS {
                    mine.wait();
                    held[slot].fetch_add(1, Ordering::SeqCst);
                    next.signal();
                }
                finished.done();
            });
        }
        for ring in &rings {
            ring[0].signal();
        }
        finished.wait();
        assert_all(&started, 1, "starts");
        assert_all(&held, LAPS, "baton holds");
        for (index, ring) in rings.iter().enumerate() {
            for (place, event) in ring.iter().enumerate() {
                assert_eq!(
                    event.is_signalled(),
                    place == 0,
                    "ring {index}, event {place}"
                );
            }
        }
    });
}

/// Thousands of tasks meet at a barrier several times, on many more workers
/// than cores. The barrier's keeper is itself a task that blocks until all
/// have arrived, while every other task is blocked on its release; nobody
/// passes a barrier before all have arrived, and each task passes each once.
#[test]
fn stress_barrier_phases_on_many_workers() {
    on_pools("stress_barrier_phases", STRESS_WORKERS, |pool| {
        const TASKS: usize = 2000;
        const PHASES: usize = 3;
        let arrived: Vec<WaitGroup> = (0..PHASES).map(|_| WaitGroup::with_count(TASKS)).collect();
        let released: Vec<Event> = (0..PHASES).map(|_| Event::new(EventMode::Manual)).collect();
        let keeper = {
            let (arrived, released) = (arrived.clone(), released.clone());
            pool.spawn_with_handle(move || {
                for (arrived, released) in arrived.iter().zip(&released) {
                    arrived.wait();
                    released.signal();
                }
            })
        };
        let passes = counters(TASKS);
        let too_early = Arc::new(AtomicUsize::new(0));
        let finished = WaitGroup::with_count(TASKS);
        for index in 0..TASKS {
            let (arrived, released) = (arrived.clone(), released.clone());
            let (passes, too_early, finished) = (
                Arc::clone(&passes),
                Arc::clone(&too_early),
                finished.clone(),
            );
            pool.spawn(move || {
                for (arrived, released) in arrived.iter().zip(&released) {
                    arrived.done();
                    released.wait();
                    if arrived.count() != 0 {
                        too_early.fetch_add(1, Ordering::SeqCst);
                    }
                    passes[index].fetch_add(1, Ordering::SeqCst);
                }
                finished.done();
            });
        }
        finished.wait();
        keeper.join().expect("keeper");
        assert_all(&passes, PHASES, "barrier passes");
        assert_eq!(
            too_early.load(Ordering::SeqCst),
            0,
            "passed before all arrived"
        );
    });
}
