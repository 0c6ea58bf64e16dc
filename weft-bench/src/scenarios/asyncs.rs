//! Async scenarios: the shapes of tokio's published runtime micro-benchmarks
//! (chained_spawn, ping_pong, spawn_many, yield_many) and an async fan-out,
//! run on every runtime of futures (weft, tokio, async-executor) through
//! [`AsyncSched`]. The three do the same work: the same task counts, the same
//! futures-channel oneshot wherever tasks talk to each other or report
//! completion, and each runtime's own `block_on` on the submitting thread,
//! which is never a worker.

use super::{leak, ns_per, quantile, settle, timed, warm_up, Case, Measured, Needs};
use crate::scheds::{AsyncSched, Cap, GateLike};
use crate::with_peer;
use futures_channel::oneshot;
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Depth of one spawn chain (tokio's chained_spawn uses 1,000).
pub const CHAIN_DEPTH: usize = 1_000;
/// Ping-pong pairs per batch (tokio's ping_pong uses 1,000).
pub const PING_PAIRS: usize = 1_000;
/// Futures spawned per spawn-many batch (tokio's spawn_many uses 10,000).
pub const SPAWN_BATCH: usize = 10_000;
/// Tasks of yield-many (tokio's yield_many uses 200).
pub const YIELD_TASKS: usize = 200;
/// Waiting futures per worker in the fan-out.
pub const FAN_OUT_PER_WORKER: usize = 4;
/// How long a fan-out round waits after the runtime went quiet (`settle`,
/// as in wake/*): every runtime's workers have been parked ~3 ms.
const PARK_GAP: Duration = Duration::from_millis(1);

pub fn cases() -> Vec<Case> {
    let chained = Case {
        scenario: "async/chained-spawn",
        variant: "",
        about: "tokio's chained_spawn: a future spawns a future that spawns ... 1,000 deep, the last reports on a oneshot; the submitter's block_on waits (size = chains)",
        unit: "ns/spawn",
        higher_is_better: false,
        sizes: [2, 100, 1_000],
        needs: Needs::ways(&[&[Cap::Futures]]),
        run: |kind, workers, n| with_peer!(kind, Futures, chained_spawn(workers, n as usize)),
    };
    vec![
        chained,
        Case {
            scenario: "async/ping-pong",
            about: "tokio's ping_pong: one future spawns 1,000 pings; each spawns its pong and does one round trip over two futures-channel oneshots (size = batches; figure per round trip)",
            unit: "ns/round trip",
            sizes: [2, 50, 500],
            run: |kind, workers, n| with_peer!(kind, Futures, ping_pong(workers, n as usize)),
            ..chained
        },
        Case {
            scenario: "async/spawn-many",
            about: "tokio's spawn_many: one future spawns 10,000 empty futures that count down; the submitter's block_on waits for the last (size = batches)",
            unit: "ns/task",
            sizes: [1, 20, 200],
            run: |kind, workers, n| with_peer!(kind, Futures, spawn_many(workers, n as usize)),
            ..chained
        },
        Case {
            scenario: "async/yield-many",
            about: "tokio's yield_many: 200 futures submitted from outside each call the runtime's yield_now K times (size = K)",
            unit: "ns/yield",
            sizes: [10, 2_000, 10_000],
            needs: Needs::ways(&[&[Cap::Futures, Cap::YieldNow]]),
            run: |kind, workers, n| with_peer!(kind, Futures, yield_many(workers, n as usize)),
            ..chained
        },
        Case {
            scenario: "async/fan-out",
            about: "rounds of T = 4 x workers futures, all pending on one timer-free wake-all gate, released at once once the runtime parked (as in wake/latency); release until the last finishes, median round (p99 in extras; size = rounds)",
            unit: "us p50",
            sizes: [3, 100, 400],
            needs: Needs::ways(&[&[Cap::Futures, Cap::WakeAll]]),
            run: |kind, workers, n| with_peer!(kind, Futures, fan_out(workers, n as usize)),
            ..chained
        },
    ]
}

fn runtime<S: AsyncSched>(workers: usize) -> &'static S {
    let pool = leak(S::build(workers));
    warm_up(pool, workers);
    pool
}

/// Counts tasks down; the last one sends the time it finished through a
/// oneshot that the submitter awaits. The same for every runtime, so that
/// only the scheduling differs.
struct Countdown {
    left: AtomicUsize,
    done: Mutex<Option<oneshot::Sender<Instant>>>,
}

impl Countdown {
    fn new(count: usize) -> (Arc<Countdown>, oneshot::Receiver<Instant>) {
        let (tx, rx) = oneshot::channel();
        let countdown = Countdown {
            left: AtomicUsize::new(count),
            done: Mutex::new(Some(tx)),
        };
        (Arc::new(countdown), rx)
    }

    fn count_down(&self) {
        // AcqRel: the last task sees every other task's work done; the
        // oneshot then carries that to the submitter.
        if self.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            let now = Instant::now();
            if let Some(tx) = self.done.lock().unwrap().take() {
                let _ = tx.send(now);
            }
        }
    }
}

/// Spawns the next link of a chain from inside the current one; the last
/// link reports. A plain function that spawns (not a recursive async fn),
/// as in tokio's benchmark.
fn chain_link<S: AsyncSched>(pool: &'static S, left: usize, done: oneshot::Sender<Instant>) {
    if left == 0 {
        let _ = done.send(Instant::now());
    } else {
        pool.spawn_detached(async move { chain_link(pool, left - 1, done) });
    }
}

/// `rounds` chains: the submitter spawns the first link, each link spawns the
/// next, CHAIN_DEPTH deep; the submitter waits for the last.
fn chained_spawn<S: AsyncSched>(workers: usize, rounds: usize) -> Measured {
    let pool = runtime::<S>(workers);
    let ((), wall, cpu) = timed(|| {
        for _ in 0..rounds {
            let (tx, rx) = oneshot::channel();
            chain_link(pool, CHAIN_DEPTH, tx);
            pool.block_on(rx).expect("chain finished");
        }
    });
    Measured::new(wall, cpu, ns_per(wall, (rounds * CHAIN_DEPTH) as u64))
}

/// `rounds` batches: one task spawns PING_PAIRS pings; each ping spawns its
/// pong, sends it a message on a oneshot and awaits the reply on another.
/// The figure is per round trip (ping spawned, pong spawned, two messages).
fn ping_pong<S: AsyncSched>(workers: usize, rounds: usize) -> Measured {
    let pool = runtime::<S>(workers);
    let ((), wall, cpu) = timed(|| {
        for _ in 0..rounds {
            let (countdown, all_done) = Countdown::new(PING_PAIRS);
            pool.spawn_detached(async move {
                for _ in 0..PING_PAIRS {
                    let countdown = countdown.clone();
                    pool.spawn_detached(async move {
                        let (ping_tx, ping_rx) = oneshot::channel::<()>();
                        let (pong_tx, pong_rx) = oneshot::channel::<()>();
                        pool.spawn_detached(async move {
                            ping_rx.await.expect("ping");
                            pong_tx.send(()).expect("pong receiver alive");
                        });
                        ping_tx.send(()).expect("ping receiver alive");
                        pong_rx.await.expect("pong");
                        countdown.count_down();
                    });
                }
            });
            pool.block_on(all_done).expect("all pairs finished");
        }
    });
    Measured::new(wall, cpu, ns_per(wall, (rounds * PING_PAIRS) as u64))
}

/// `rounds` batches: one task spawns SPAWN_BATCH empty futures (onto its own
/// worker's queue, for the others to steal); the submitter waits for all.
fn spawn_many<S: AsyncSched>(workers: usize, rounds: usize) -> Measured {
    let pool = runtime::<S>(workers);
    let ((), wall, cpu) = timed(|| {
        for _ in 0..rounds {
            let (countdown, all_done) = Countdown::new(SPAWN_BATCH);
            pool.spawn_detached(async move {
                for _ in 0..SPAWN_BATCH {
                    let countdown = countdown.clone();
                    pool.spawn_detached(async move { countdown.count_down() });
                }
            });
            pool.block_on(all_done)
                .expect("all spawned futures finished");
        }
    });
    Measured::new(wall, cpu, ns_per(wall, (rounds * SPAWN_BATCH) as u64))
}

/// YIELD_TASKS futures submitted from outside, each yielding `yields` times
/// through the runtime's own yield_now; the submitter waits for all.
fn yield_many<S: AsyncSched>(workers: usize, yields: usize) -> Measured {
    let pool = runtime::<S>(workers);
    let ((), wall, cpu) = timed(|| {
        let (countdown, all_done) = Countdown::new(YIELD_TASKS);
        for _ in 0..YIELD_TASKS {
            let countdown = countdown.clone();
            pool.spawn_detached(async move {
                for _ in 0..yields {
                    S::yield_now().await;
                }
                countdown.count_down();
            });
        }
        pool.block_on(all_done)
            .expect("all yielding futures finished");
    });
    Measured::new(wall, cpu, ns_per(wall, (YIELD_TASKS * yields) as u64))
}

/// Awaits `wait`, adding one to `armed` the first time it is pending, i.e.
/// once the waiter is registered with the gate. A wrapper shared by every
/// runtime, so the submitter can tell when all waiters are in place.
async fn wait_armed(wait: impl Future<Output = ()>, armed: &AtomicUsize) {
    let mut wait = pin!(wait);
    let mut counted = false;
    std::future::poll_fn(|cx| {
        let poll = wait.as_mut().poll(cx);
        if poll.is_pending() && !counted {
            counted = true;
            // Release: pairs with the submitter's Acquire load.
            armed.fetch_add(1, Ordering::Release);
        }
        poll
    })
    .await
}

/// `rounds` rounds of T = FAN_OUT_PER_WORKER x workers futures that each
/// await one gate (the runtime's timer-free wake-all primitive). Once every
/// one is pending and the pool has parked (`settle`), the submitter
/// releases the gate; a round's figure is the time from the release until
/// the last future has finished. Reports the median round (p99 in extras).
fn fan_out<S: AsyncSched>(workers: usize, rounds: usize) -> Measured {
    let pool = runtime::<S>(workers);
    let tasks = FAN_OUT_PER_WORKER * workers;
    let ((mut took_us, parked, watcher_cpu), wall, cpu) = timed(|| {
        let mut took_us = Vec::with_capacity(rounds);
        let (mut parked, mut watcher_cpu) = (0, Duration::ZERO);
        for _ in 0..rounds {
            let gate = S::Gate::new();
            let armed = Arc::new(AtomicUsize::new(0));
            let (countdown, all_done) = Countdown::new(tasks);
            for _ in 0..tasks {
                let (wait, armed, countdown) = (gate.wait(), armed.clone(), countdown.clone());
                pool.spawn_detached(async move {
                    wait_armed(wait, &armed).await;
                    countdown.count_down();
                });
            }
            while armed.load(Ordering::Acquire) < tasks {
                std::thread::sleep(Duration::from_micros(50));
            }
            let settled = settle(PARK_GAP);
            parked += usize::from(settled.quiet);
            watcher_cpu += settled.watcher_cpu;
            let released = Instant::now();
            gate.release();
            let finished = pool.block_on(all_done).expect("every waiter finished");
            took_us.push(finished.duration_since(released).as_secs_f64() * 1e6);
        }
        (took_us, parked, watcher_cpu)
    });
    let cpu = cpu.saturating_sub(watcher_cpu);
    let p50 = quantile(&mut took_us, 0.5);
    Measured::new(wall, cpu, p50)
        .with("p99_us", quantile(&mut took_us, 0.99))
        .with("tasks", tasks as f64)
        .with("samples_parked", parked as f64)
}
