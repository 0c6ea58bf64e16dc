//! Blocking calls from tasks: what `weft::blocking` costs per call (an empty
//! call, nothing but the lending and retiring of a stand-in), and what it buys
//! (short tasks still run while every worker blocks). tokio's
//! `block_in_place` is the peer with a stand-in; rayon and threadpool, which
//! have none, make the call directly in the task, and show what a pool loses
//! without one.

use super::{has, leak, ns_per, quantile, timed, warm_up, Case, Fit, Measured, Needs};
use crate::latch::Latch;
use crate::scheds::{BlockingCall, Cap, SchedKind};
use crate::with_peer;
use crate::work::some_work;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long each blocker of blocking/capacity holds its thread.
pub const HOLD: Duration = Duration::from_millis(20);
/// Short tasks per worker in blocking/capacity.
pub const SHORT_PER_WORKER: usize = 4;
/// Iterations of `some_work` in one short task: a microsecond or two, far
/// below HOLD, so the figure shows whether they waited for the blockers.
pub const SHORT_ITERS: u32 = 1_000;

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            scenario: "blocking/empty-call",
            variant: "",
            about: "N tasks submitted from outside each make one blocking call of an empty closure through the pool's stand-in API; wall time until the latch saw all N, divided by N (size = N). plain_ns: the same flood on the same pool calling the closure directly, so figure - plain_ns is what lending and retiring a stand-in adds per call; at_call_ns: mean wall time a task spends in the call (lend, call, retire)",
            unit: "ns/call",
            higher_is_better: false,
            sizes: [200, 20_000, 200_000],
            needs: Needs::ways(&[&[Cap::StandIn, Cap::Spawn]]).adjusted(|kind, _, fit| {
                if has(kind, Cap::Spawn).is_some() && has(kind, Cap::StandIn).is_none() {
                    return Fit::No(
                        "no stand-in to lend: a direct empty call is an empty task (marl/empty); \
                         plain_ns on the weft and tokio rows is that floor"
                            .into(),
                    );
                }
                call_note(kind, fit, "()")
            }),
            run: |kind, workers, n| with_peer!(kind, Calls, empty_call(workers, n as usize)),
        },
        Case {
            scenario: "blocking/capacity",
            variant: "",
            about: "rounds of W = workers tasks that each sleep 20 ms inside a blocking call; once all W are inside, 4 x W short tasks (1,000-iteration some-work) are submitted; time from submitting the first short task until the last finished, median round (first_ms: first round, which starts the stand-in threads; size = rounds). Under 20 ms only if the pool runs tasks while its workers block",
            unit: "ms p50",
            higher_is_better: false,
            sizes: [1, 5, 25],
            // Without a stand-in, the call is made directly in the task.
            needs: Needs::ways(&[&[Cap::StandIn, Cap::Spawn], &[Cap::Spawn]])
                .adjusted(|kind, _, fit| call_note(kind, fit, "thread::sleep(20 ms)")),
            run: |kind, workers, rounds| with_peer!(kind, Calls, capacity(workers, rounds as usize)),
        },
    ]
}

/// The note of tasks (spawned as `fit` says) that call `body` through the
/// pool's stand-in, or directly where it has none.
fn call_note(kind: SchedKind, fit: Fit, body: &str) -> Fit {
    let Fit::Yes(spawn) = fit else { return fit };
    Fit::Yes(match has(kind, Cap::StandIn) {
        Some(stand_in) => format!("{stand_in}(|| {body}) in {spawn} tasks"),
        None => format!("no stand-in: {body} called directly in {spawn} tasks"),
    })
}

/// `n` tasks from this thread, each making one call of an empty closure,
/// through the stand-in API (`stand_in`) or directly; returns the wall time
/// until the latch saw all of them, and the summed time the tasks spent at
/// the call site (lend, call, retire).
fn empty_calls<S: BlockingCall>(pool: &'static S, n: usize, stand_in: bool) -> (Duration, u64) {
    let latch = leak(Latch::new(n));
    let at_call_ns = leak(AtomicU64::new(0));
    let t0 = Instant::now();
    for _ in 0..n {
        pool.spawn(move || {
            // Both variants read the clock, so plain_ns carries the same
            // measuring cost as the figure it is subtracted from.
            let c0 = Instant::now();
            if stand_in {
                S::call_blocking(|| black_box(()));
            } else {
                black_box(());
            }
            at_call_ns.fetch_add(c0.elapsed().as_nanos() as u64, Ordering::Relaxed);
            latch.count_down();
        });
    }
    latch.wait();
    (t0.elapsed(), at_call_ns.load(Ordering::Relaxed))
}

fn empty_call<S: BlockingCall>(workers: usize, n: usize) -> Measured {
    let pool = leak(S::build(workers));
    warm_up(pool, workers);
    // Starts the stand-in threads (weft's spare seats and tokio's blocking
    // pool start theirs on first use), which the timed run is not about.
    empty_calls(pool, workers * 4, true);
    // The same flood on the same pool with the closure called directly: the
    // cost of the task around the call, for the figure to be read against.
    let (plain, _) = empty_calls(pool, n, false);
    let ((_, at_call_ns), wall, cpu) = timed(|| empty_calls(pool, n, true));
    Measured::new(wall, cpu, ns_per(wall, n as u64))
        .with("plain_ns", ns_per(plain, n as u64))
        .with("at_call_ns", at_call_ns as f64 / n.max(1) as f64)
}

/// Rounds of: one blocker per worker, each holding its thread for HOLD
/// inside the blocking call; once all are inside, SHORT_PER_WORKER short
/// tasks per worker; the time from submitting the first short task until
/// the last has finished. The next round starts after the blockers return.
fn capacity<S: BlockingCall>(workers: usize, rounds: usize) -> Measured {
    let pool = leak(S::build(workers));
    warm_up(pool, workers);
    let shorts = SHORT_PER_WORKER * workers;
    let (mut took_ms, wall, cpu) = timed(|| {
        let mut took_ms = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            let inside = leak(Latch::new(workers));
            let blockers_done = leak(Latch::new(workers));
            let shorts_done = leak(Latch::new(shorts));
            for _ in 0..workers {
                pool.spawn(move || {
                    S::call_blocking(|| {
                        inside.count_down();
                        std::thread::sleep(HOLD);
                    });
                    blockers_done.count_down();
                });
            }
            // Every worker is blocked from here on (or stood in for).
            inside.wait();
            let t0 = Instant::now();
            for i in 0..shorts {
                pool.spawn(move || {
                    black_box(some_work(i as u32, SHORT_ITERS));
                    shorts_done.count_down();
                });
            }
            shorts_done.wait();
            took_ms.push(t0.elapsed().as_secs_f64() * 1e3);
            blockers_done.wait();
        }
        took_ms
    });
    // The first round also starts the stand-in threads.
    let first_ms = took_ms.first().copied().unwrap_or(f64::NAN);
    let p50 = quantile(&mut took_ms, 0.5);
    Measured::new(wall, cpu, p50)
        .with("first_ms", first_ms)
        .with("max_ms", quantile(&mut took_ms, 1.0))
        .with("shorts", shorts as f64)
}
