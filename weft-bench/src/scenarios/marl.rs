//! Scenarios from marl's benchmark suite: empty and some-work task floods,
//! fork-join rounds (CPU and sleeping, marl issue #232), and marl's waiting
//! primitives (wait group, event chain, event baton, ticket queue) against
//! the nearest equivalent each peer offers. The event chain, baton and
//! ticket shapes run twice: as plain tasks whose waits block (weft, whose
//! blocking wait suspends the task on its fiber, beside rayon and
//! threadpool, whose waits hold the worker's thread), and as futures (the
//! `async` variant: weft's `wait_async` beside tokio's own async code).

use super::{has, leak, ns_per, timed, warm_up, Case, Fit, Measured, Needs, TASKS};
use crate::latch::Latch;
use crate::rusage::thread_cpu;
use crate::scheds::{
    thread_slot, BlockingPrims, Cap, EventLike, Lacking, Sched, SchedKind, TicketLike,
    TicketQueueLike, WaitGroupLike,
};
use crate::with_peer;
use crate::work::{some_work, SOME_WORK_ITERS};
use std::any::TypeId;
use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const FORK_JOIN_UNITS: u32 = 256;
const SLEEP_TASK: Duration = Duration::from_millis(10);
const WAIT_GROUP_TASKS: usize = 64;
const CHAIN_TASKS: usize = 512;

/// Runs the `async` variant of one of marl's wait shapes: weft's and
/// tokio's own futures code below; no other scheduler fits it.
macro_rules! futures_on {
    ($kind:expr, $workers:expr, $size:expr, $weft:ident, $tokio:ident) => {{
        let n = $size as usize;
        match $kind {
            SchedKind::Weft => $weft($workers, n),
            SchedKind::Tokio => $tokio($workers, n),
            other => unreachable!("{} does not fit the async variant", other.name()),
        }
    }};
}

/// The plain rows of marl's wait shapes run the one generic body on every
/// scheduler's [`BlockingPrims`]: a wait that blocks the task where it
/// stands. tokio has the events and tickets only as futures (its `Waits`
/// role is [`Lacking`]): a tokio task cannot block on them without holding
/// its worker, so it runs the `async` variant only.
fn blocking_waits(kind: SchedKind, _workers: usize, fit: Fit) -> Fit {
    fn fills<W: BlockingPrims>() -> bool {
        TypeId::of::<W>() != TypeId::of::<Lacking>()
    }
    match fit {
        Fit::Yes(_) if !with_peer!(kind, Waits, fills()) => Fit::No(
            "its tasks wait by awaiting, not by blocking (a blocking wait would hold its \
             worker): see the async variant"
                .into(),
        ),
        fit => fit,
    }
}

/// marl runs both baton tasks as fibers on one thread; where a wait holds
/// the worker's thread, one worker would hold one task forever.
fn baton_workers(kind: SchedKind, workers: usize, fit: Fit) -> Fit {
    if matches!(fit, Fit::Yes(_)) && workers < 2 && has(kind, Cap::FreeingWaits).is_none() {
        Fit::No("two tasks that block each other need 2 workers without fibers".into())
    } else {
        fit
    }
}

/// What the `async` variant of a wait shape needs: futures, and the shape's
/// wait (its note) awaited in them.
const FUTURE_EVENTS: Needs = Needs::ways(&[&[Cap::Futures, Cap::TaskEvent]]);

pub fn cases() -> Vec<Case> {
    let empty = Case {
        scenario: "marl/empty",
        variant: "",
        about: "N empty tasks (each holds only a reference to the completion counter, like marl's `wg.done()` task) submitted from an outside thread, wait for all (size = N)",
        unit: "ns/task",
        higher_is_better: false,
        sizes: [1_000, 65_536, 262_144],
        needs: TASKS,
        run: |kind, workers, n| with_peer!(kind, Tasks, flood(workers, n as usize, Payload::Empty)),
    };
    let rounds = Case {
        scenario: "marl/fork-join",
        variant: "cpu",
        about: "rounds of one task per worker (256 x some-work each), wait after each; ideal/actual time (ideal: task CPU spread over min(workers, cores)); full_rounds = rounds that used every worker",
        unit: "ideal/actual",
        higher_is_better: true,
        sizes: [2, 12, 50],
        // The rounds also run on bare threads, the machine's floor.
        needs: Needs::ways(&[&[Cap::Spawn, Cap::WaitGroup], &[Cap::Floor]]),
        run: |kind, workers, rounds| rounds_on(kind, workers, rounds, false, 1),
    };
    let chain = Case {
        scenario: "marl/event-chain",
        variant: "",
        about: "chains of 512 plain tasks: task i blocks on event i then signals i+1 (size = chains); the same code on every pool (weft's wait suspends the task on its fiber, rayon's and threadpool's holds the worker's thread); tokio runs the async variant only",
        unit: "ns/hop",
        higher_is_better: false,
        sizes: [1, 20, 200],
        needs: Needs::ways(&[&[Cap::Spawn, Cap::TaskEvent]]).adjusted(blocking_waits),
        run: |kind, workers, chains| with_peer!(kind, Waits, event_chain(workers, chains as usize)),
    };
    let baton = Case {
        scenario: "marl/event-baton",
        about: "two plain tasks pass control back and forth through two auto events, each blocking on its own (size = passes); the same code on every pool; tokio runs the async variant only",
        unit: "ns/pass",
        sizes: [100, 20_000, 200_000],
        needs: Needs::ways(&[&[Cap::Spawn, Cap::TaskEvent]]).adjusted(|kind, workers, fit| {
            baton_workers(kind, workers, blocking_waits(kind, workers, fit))
        }),
        run: |kind, workers, passes| with_peer!(kind, Waits, baton(workers, passes as usize)),
        ..chain
    };
    let ticket = Case {
        scenario: "marl/ticket",
        about: "queues of 512 plain tasks, each takes a ticket in order, blocks until its turn, done (size = queues); the same code on every pool; tokio runs the async variant only",
        unit: "ns/ticket",
        needs: Needs::ways(&[&[Cap::Spawn, Cap::TaskTicket]]).adjusted(blocking_waits),
        run: |kind, workers, queues| with_peer!(kind, Waits, ticket(workers, queues as usize)),
        ..chain
    };
    vec![
        empty,
        Case {
            variant: "boxed",
            about: "as marl/empty, but each closure also carries three words it does not use (32 bytes in all), which every peer allocates per task and weft stores in the job (spawn/* has the sizes on either side)",
            run: |kind, workers, n| with_peer!(kind, Tasks, flood(workers, n as usize, Payload::Boxed)),
            ..empty
        },
        Case {
            scenario: "marl/some-work",
            about: "N tasks of a fixed 10k-iteration integer loop (marl's doSomeWork shape; marl uses 100k), wait for all",
            sizes: [100, 8_192, 262_144],
            run: |kind, workers, n| with_peer!(kind, Tasks, flood(workers, n as usize, Payload::Work)),
            ..empty
        },
        rounds,
        Case {
            variant: "sleep",
            about: "rounds of one 10 ms sleeping task per worker (marl #232), wait after each; ideal/actual time (ideal: 10 ms a round); full_rounds as above",
            sizes: [2, 10, 50],
            run: |kind, workers, rounds| rounds_on(kind, workers, rounds, true, 1),
            ..rounds
        },
        Case {
            variant: "sleep x3",
            about: "rounds of three 10 ms sleeping tasks per worker (marl #232's second shape), wait after each; ideal/actual time (ideal: 30 ms a round, each worker running three in turn); full_rounds as above",
            sizes: [2, 6, 30],
            run: |kind, workers, rounds| rounds_on(kind, workers, rounds, true, 3),
            ..rounds
        },
        Case {
            scenario: "marl/wait-group",
            about: "rounds of 64 empty tasks that each call done(); the submitter waits on the group",
            unit: "us/round",
            sizes: [5, 1_000, 10_000],
            needs: Needs::ways(&[&[Cap::Spawn, Cap::WaitGroup]]),
            run: |kind, workers, rounds| with_peer!(kind, Tasks, wait_group(workers, rounds as usize)),
            ..empty
        },
        chain,
        Case {
            variant: "async",
            about: "as marl/event-chain, as futures: task i awaits event i then signals i+1, the submitter waits from outside with its block_on (weft: wait_async in Pool::spawn_future tasks; tokio: Notify)",
            needs: FUTURE_EVENTS,
            run: |kind, workers, chains| {
                futures_on!(kind, workers, chains, weft_event_chain, tokio_event_chain)
            },
            ..chain
        },
        baton,
        Case {
            variant: "async",
            about: "as marl/event-baton, as futures awaiting the events (weft: wait_async in Pool::spawn_future tasks; tokio: Notify)",
            needs: FUTURE_EVENTS.adjusted(baton_workers),
            run: |kind, workers, passes| futures_on!(kind, workers, passes, weft_baton, tokio_baton),
            ..baton
        },
        ticket,
        Case {
            variant: "async",
            about: "as marl/ticket, as futures awaiting their turn (weft: Ticket::wait_async in Pool::spawn_future tasks; tokio: a chain of oneshots)",
            needs: Needs::ways(&[&[Cap::Futures, Cap::TaskTicket]]),
            run: |kind, workers, queues| futures_on!(kind, workers, queues, weft_ticket, tokio_ticket),
            ..ticket
        },
    ]
}

/// marl/fork-join on `kind`: the pool's rounds, or the floor's.
fn rounds_on(
    kind: SchedKind,
    workers: usize,
    rounds: u64,
    sleep: bool,
    per_worker: usize,
) -> Measured {
    let rounds = rounds as usize;
    if has(kind, Cap::Spawn).is_some() {
        return with_peer!(
            kind,
            Tasks,
            fork_join_pool(workers, rounds, sleep, per_worker)
        );
    }
    let threads = crate::scheds::bare_threads::BareThreads::start(workers);
    let no_index = || None;
    fork_join(workers, rounds, sleep, no_index, |task| {
        threads.run_round(per_worker, task)
    })
}

/// What each flooded task holds and does.
#[derive(Clone, Copy)]
enum Payload {
    /// Only its completion handle, as marl's `[=] { wg.done(); }` does.
    Empty,
    /// Its handle and three words it does not use: 32 bytes, which every
    /// peer allocates (weft stores up to 32 bytes in the job).
    Boxed,
    /// Its index and marl's doSomeWork loop ([`SOME_WORK_ITERS`]).
    Work,
}

/// `n` tasks from this thread; the bench's own latch (identical for all)
/// tells when all have run. Each scheduler stores the closures its own way:
/// rayon, tokio and threadpool allocate one per task, weft only those of
/// more than 32 bytes.
fn flood<S: Sched>(workers: usize, n: usize, payload: Payload) -> Measured {
    let pool = leak(S::build(workers));
    warm_up(pool, workers);
    let latch = leak(Latch::new(n));
    let ((), wall, cpu) = timed(|| {
        for i in 0..n {
            match payload {
                Payload::Empty => pool.spawn(move || latch.count_down()),
                Payload::Boxed => {
                    let unused = [i as u64; 3];
                    pool.spawn(move || {
                        black_box(&unused);
                        latch.count_down();
                    })
                }
                Payload::Work => pool.spawn(move || {
                    black_box(some_work(i as u32, SOME_WORK_ITERS));
                    latch.count_down();
                }),
            }
        }
        latch.wait();
    });
    Measured::new(wall, cpu, ns_per(wall, n as u64))
}

/// What one fork-join task reports: the worker it ran on and how long its
/// work took (thread CPU for the cpu variant, the sleep for the other).
type TaskLog = Mutex<Vec<(usize, Duration)>>;

fn fork_join_task(sleep: bool, worker: usize, log: &TaskLog) {
    let took = if sleep {
        std::thread::sleep(SLEEP_TASK);
        SLEEP_TASK
    } else {
        let c0 = thread_cpu();
        for u in 0..FORK_JOIN_UNITS {
            black_box(some_work(u, SOME_WORK_ITERS));
        }
        thread_cpu().saturating_sub(c0)
    };
    log.lock().unwrap().push((worker, took));
}

/// Rounds of `per_worker` tasks per worker, all submitted at once.
fn fork_join_pool<S: Sched>(
    workers: usize,
    rounds: usize,
    sleep: bool,
    per_worker: usize,
) -> Measured {
    let pool = leak(S::build(workers));
    warm_up(pool, workers);
    fork_join(workers, rounds, sleep, S::worker_index, |task| {
        let wg = S::WaitGroup::new();
        wg.add(workers * per_worker);
        for _ in 0..workers * per_worker {
            let (wg, task) = (wg.clone(), task.clone());
            pool.spawn(move || {
                task();
                wg.done();
            });
        }
        wg.wait();
    })
}

/// One round's task, run once per worker.
pub type RoundTask = Arc<dyn Fn() + Send + Sync>;

/// Runs `rounds` rounds through `run_round`, which must run the given task
/// a whole number of times per worker and return when all have finished.
fn fork_join(
    workers: usize,
    rounds: usize,
    sleep: bool,
    worker_index: fn() -> Option<usize>,
    mut run_round: impl FnMut(&RoundTask),
) -> Measured {
    let parallel = workers.min(crate::runner::cpus());
    let mut ideal = Duration::ZERO;
    let mut actual = Duration::ZERO;
    let mut full_rounds = 0;
    let ((), wall, cpu) = timed(|| {
        for _ in 0..rounds {
            let log: Arc<TaskLog> = Arc::new(Mutex::new(Vec::with_capacity(workers)));
            let task: RoundTask = {
                let log = log.clone();
                Arc::new(move || {
                    let worker = worker_index().unwrap_or_else(thread_slot);
                    fork_join_task(sleep, worker, &log)
                })
            };
            let t0 = Instant::now();
            run_round(&task);
            actual += t0.elapsed();
            // Every task logged before it reported done, so the log is whole.
            let log = log.lock().unwrap().clone();
            let longest = log.iter().map(|e| e.1).max().unwrap_or_default();
            let total: Duration = log.iter().map(|e| e.1).sum();
            // Sleeping tasks need no core, so all can overlap; CPU tasks
            // share min(workers, cpus) cores at best.
            let spread = if sleep { workers } else { parallel };
            ideal += longest.max(total / spread as u32);
            let mut ids: Vec<usize> = log.iter().map(|e| e.0).collect();
            ids.sort_unstable();
            ids.dedup();
            if ids.len() == workers {
                full_rounds += 1;
            }
        }
    });
    Measured::new(wall, cpu, ideal.as_secs_f64() / actual.as_secs_f64())
        .with("rounds", rounds as f64)
        .with("full_rounds", full_rounds as f64)
        .with("ideal_ms", ideal.as_secs_f64() * 1e3)
        .with("actual_ms", actual.as_secs_f64() * 1e3)
}

fn wait_group<S: Sched>(workers: usize, rounds: usize) -> Measured {
    let pool = leak(S::build(workers));
    warm_up(pool, workers);
    let ((), wall, cpu) = timed(|| {
        for _ in 0..rounds {
            let wg = S::WaitGroup::new();
            wg.add(WAIT_GROUP_TASKS);
            for _ in 0..WAIT_GROUP_TASKS {
                let wg = wg.clone();
                pool.spawn(move || wg.done());
            }
            wg.wait();
        }
    });
    Measured::new(wall, cpu, ns_per(wall, rounds as u64) / 1e3)
}

fn event_chain<S: BlockingPrims>(workers: usize, chains: usize) -> Measured {
    let pool = leak(S::build(workers));
    warm_up(pool, workers);
    let ((), wall, cpu) = timed(|| {
        for _ in 0..chains {
            let events: Vec<S::Event> = (0..=CHAIN_TASKS).map(|_| S::Event::new_auto()).collect();
            for i in 0..CHAIN_TASKS {
                let (prev, next) = (events[i].clone(), events[i + 1].clone());
                pool.spawn(move || {
                    prev.wait();
                    next.signal();
                });
            }
            events[0].signal();
            events[CHAIN_TASKS].wait();
        }
    });
    Measured::new(wall, cpu, ns_per(wall, (chains * CHAIN_TASKS) as u64))
}

fn baton<S: BlockingPrims>(workers: usize, passes: usize) -> Measured {
    let pool = leak(S::build(workers));
    warm_up(pool, workers);
    let (to_a, to_b, done) = (
        S::Event::new_auto(),
        S::Event::new_auto(),
        S::Event::new_auto(),
    );
    let ((), wall, cpu) = timed(|| {
        let (a_in, a_out) = (to_a.clone(), to_b.clone());
        pool.spawn(move || {
            for _ in 0..passes {
                a_in.wait();
                a_out.signal();
            }
        });
        let (b_in, b_out, b_done) = (to_b.clone(), to_a.clone(), done.clone());
        pool.spawn(move || {
            for _ in 0..passes {
                b_in.wait();
                b_out.signal();
            }
            b_done.signal();
        });
        to_a.signal();
        done.wait();
    });
    Measured::new(wall, cpu, ns_per(wall, passes as u64))
}

fn ticket<S: BlockingPrims>(workers: usize, queues: usize) -> Measured {
    let pool = leak(S::build(workers));
    warm_up(pool, workers);
    let ((), wall, cpu) = timed(|| {
        for _ in 0..queues {
            let queue = S::Tickets::new();
            for _ in 0..CHAIN_TASKS {
                let t = queue.take();
                pool.spawn(move || {
                    t.wait();
                    t.done();
                });
            }
            queue.take().wait();
        }
    });
    Measured::new(wall, cpu, ns_per(wall, (queues * CHAIN_TASKS) as u64))
}

// The async variant of the three wait shapes on weft, mirroring tokio's code
// below: weft's plain rows run the generic bodies above, where a blocking
// wait inside a `Pool::spawn` task suspends the task on its fiber and the
// worker runs other tasks meanwhile (marl's model); here the same shapes are
// `Pool::spawn_future` tasks awaiting `wait_async`, which holds no worker
// while pending. The submitter waits from outside the pool with
// weft::block_on, which parks the calling thread, as tokio's
// Runtime::block_on does.

fn weft_pool(workers: usize) -> &'static weft::Pool {
    let pool = leak(crate::scheds::weft_sched::WeftSched::build(workers));
    warm_up(pool, workers);
    pool.pool()
}

fn weft_event_chain(workers: usize, chains: usize) -> Measured {
    use weft::{Event, EventMode};
    let pool = weft_pool(workers);
    let ((), wall, cpu) = timed(|| {
        for _ in 0..chains {
            let events: Vec<Event> = (0..=CHAIN_TASKS)
                .map(|_| Event::new(EventMode::Auto))
                .collect();
            for i in 0..CHAIN_TASKS {
                let (prev, next) = (events[i].clone(), events[i + 1].clone());
                // A dropped JoinHandle detaches the task.
                drop(pool.spawn_future(async move {
                    prev.wait_async().await;
                    next.signal();
                }));
            }
            events[0].signal();
            weft::block_on(events[CHAIN_TASKS].wait_async());
        }
    });
    Measured::new(wall, cpu, ns_per(wall, (chains * CHAIN_TASKS) as u64))
}

fn weft_baton(workers: usize, passes: usize) -> Measured {
    use weft::{Event, EventMode};
    let pool = weft_pool(workers);
    let (to_a, to_b, done) = (
        Event::new(EventMode::Auto),
        Event::new(EventMode::Auto),
        Event::new(EventMode::Auto),
    );
    let ((), wall, cpu) = timed(|| {
        let (a_in, a_out) = (to_a.clone(), to_b.clone());
        drop(pool.spawn_future(async move {
            for _ in 0..passes {
                a_in.wait_async().await;
                a_out.signal();
            }
        }));
        let (b_in, b_out, b_done) = (to_b.clone(), to_a.clone(), done.clone());
        drop(pool.spawn_future(async move {
            for _ in 0..passes {
                b_in.wait_async().await;
                b_out.signal();
            }
            b_done.signal();
        }));
        to_a.signal();
        weft::block_on(done.wait_async());
    });
    Measured::new(wall, cpu, ns_per(wall, passes as u64))
}

fn weft_ticket(workers: usize, queues: usize) -> Measured {
    let pool = weft_pool(workers);
    let ((), wall, cpu) = timed(|| {
        for _ in 0..queues {
            let queue = weft::TicketQueue::new();
            for _ in 0..CHAIN_TASKS {
                let t = queue.take();
                drop(pool.spawn_future(async move {
                    t.wait_async().await;
                    t.done();
                }));
            }
            let last = queue.take();
            weft::block_on(last.wait_async());
        }
    });
    Measured::new(wall, cpu, ns_per(wall, (queues * CHAIN_TASKS) as u64))
}

// tokio tasks wait by awaiting, never by blocking a worker: its nearest
// equivalents are async (Notify for events, a oneshot chain for tickets).

fn tokio_pool(workers: usize) -> &'static tokio::runtime::Runtime {
    let pool = leak(crate::scheds::tokio_sched::TokioSched::build(workers));
    warm_up(pool, workers);
    pool.runtime()
}

fn tokio_event_chain(workers: usize, chains: usize) -> Measured {
    use tokio::sync::Notify;
    let rt = tokio_pool(workers);
    let ((), wall, cpu) = timed(|| {
        for _ in 0..chains {
            let events: Vec<Arc<Notify>> =
                (0..=CHAIN_TASKS).map(|_| Arc::new(Notify::new())).collect();
            for i in 0..CHAIN_TASKS {
                let (prev, next) = (events[i].clone(), events[i + 1].clone());
                drop(rt.spawn(async move {
                    prev.notified().await;
                    next.notify_one();
                }));
            }
            events[0].notify_one();
            rt.block_on(events[CHAIN_TASKS].notified());
        }
    });
    Measured::new(wall, cpu, ns_per(wall, (chains * CHAIN_TASKS) as u64))
}

fn tokio_baton(workers: usize, passes: usize) -> Measured {
    use tokio::sync::Notify;
    let rt = tokio_pool(workers);
    let (to_a, to_b, done) = (
        Arc::new(Notify::new()),
        Arc::new(Notify::new()),
        Arc::new(Notify::new()),
    );
    let ((), wall, cpu) = timed(|| {
        let (a_in, a_out) = (to_a.clone(), to_b.clone());
        drop(rt.spawn(async move {
            for _ in 0..passes {
                a_in.notified().await;
                a_out.notify_one();
            }
        }));
        let (b_in, b_out, b_done) = (to_b.clone(), to_a.clone(), done.clone());
        drop(rt.spawn(async move {
            for _ in 0..passes {
                b_in.notified().await;
                b_out.notify_one();
            }
            b_done.notify_one();
        }));
        to_a.notify_one();
        rt.block_on(done.notified());
    });
    Measured::new(wall, cpu, ns_per(wall, passes as u64))
}

fn tokio_ticket(workers: usize, queues: usize) -> Measured {
    use tokio::sync::oneshot;
    let rt = tokio_pool(workers);
    let ((), wall, cpu) = timed(|| {
        for _ in 0..queues {
            // Taking a ticket = receiving the previous ticket's "done".
            let (first_tx, mut turn) = oneshot::channel::<()>();
            first_tx.send(()).unwrap();
            for _ in 0..CHAIN_TASKS {
                let (done_tx, next_turn) = oneshot::channel::<()>();
                let my_turn = std::mem::replace(&mut turn, next_turn);
                drop(rt.spawn(async move {
                    my_turn.await.unwrap();
                    done_tx.send(()).unwrap();
                }));
            }
            rt.block_on(turn).unwrap();
        }
    });
    Measured::new(wall, cpu, ns_per(wall, (queues * CHAIN_TASKS) as u64))
}
