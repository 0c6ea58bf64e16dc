//! Scenarios: every family module lists its own cases ([`Case`]: name,
//! sizes, what it needs of a scheduler, how it runs); this module puts them
//! in report order and holds the helpers every scenario shares (timing,
//! leaking pools, warm-up, quantiles).

pub mod asyncs;
pub mod blocking;
mod case;
pub mod go;
pub mod join;
pub mod marl;
pub mod par;
pub mod spawn;
pub mod tpcpp;
pub mod wake;

pub use case::{has, Case, Fit, Mode, Needs};

use crate::rusage::{process_cpu, thread_cpu};
use crate::scheds::Cap;
use std::time::{Duration, Instant};

/// Every case, in report order.
pub fn catalogue() -> Vec<Case> {
    [
        marl::cases(),
        spawn::cases(),
        tpcpp::cases(),
        go::cases(),
        wake::cases(),
        join::cases(),
        asyncs::cases(),
        blocking::cases(),
        par::cases(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

pub fn find(scenario: &str, variant: &str) -> Option<Case> {
    catalogue()
        .into_iter()
        .find(|c| c.scenario == scenario && c.variant == variant)
}

/// Cases made of independent tasks submitted to a pool.
pub const TASKS: Needs = Needs::ways(&[&[Cap::Spawn]]);

/// What a scenario measured in its timed section.
pub struct Measured {
    pub wall: Duration,
    /// CPU over the timed section: the whole process's, or for the idle
    /// and trickle scenarios every thread's but the measuring one's.
    pub cpu: Duration,
    pub figure: f64,
    pub extra: Vec<(&'static str, f64)>,
}

impl Measured {
    pub fn new(wall: Duration, cpu: Duration, figure: f64) -> Self {
        Measured {
            wall,
            cpu,
            figure,
            extra: Vec::new(),
        }
    }

    pub fn with(mut self, key: &'static str, value: f64) -> Self {
        self.extra.push((key, value));
        self
    }
}

/// Runs `body` and returns its result, wall time and process CPU time.
pub fn timed<R>(body: impl FnOnce() -> R) -> (R, Duration, Duration) {
    let cpu0 = process_cpu();
    let t0 = Instant::now();
    let out = body();
    let wall = t0.elapsed();
    (out, wall, process_cpu().saturating_sub(cpu0))
}

/// Sleeps until the pool under test is seen parked (no other thread of this
/// process runnable, and the process used almost no CPU over a whole
/// window), then for `then` more. Wake-up scenarios start each round from
/// here, so that every pool is measured from parked workers however long
/// its workers spin before they park, and from the same time spent parked
/// after that (a vCPU idle longer is slower to wake).
pub fn settle(then: Duration) -> Settled {
    let watcher_before = thread_cpu();
    let deadline = Instant::now() + SETTLE_CAP;
    let quiet = loop {
        let before = process_cpu();
        std::thread::sleep(SETTLE_WINDOW);
        let used = process_cpu().saturating_sub(before);
        if used < SETTLE_QUIET && !other_thread_runnable() {
            break true;
        }
        if Instant::now() >= deadline {
            break false;
        }
    };
    std::thread::sleep(then);
    Settled {
        quiet,
        watcher_cpu: thread_cpu().saturating_sub(watcher_before),
    }
}

/// What [`settle`] saw.
pub struct Settled {
    /// The pool went quiet before [`SETTLE_CAP`] (false: the round starts
    /// anyway, and the scenario reports how many rounds did).
    pub quiet: bool,
    /// CPU the watching (calling) thread spent in `settle`, for the caller
    /// to leave out of the pool's CPU figure.
    pub watcher_cpu: Duration,
}

/// The window [`settle`] watches the process CPU over.
const SETTLE_WINDOW: Duration = Duration::from_millis(2);
/// CPU used within one window that still counts as quiet: 10% of one core.
/// The watching thread's own sleep, wake-up and getrusage use 50-90 us of it
/// on a 2-core VM. Threads that wake often show here; one that spins may
/// not (see [`other_thread_runnable`]).
const SETTLE_QUIET: Duration = Duration::from_micros(200);
/// The longest [`settle`] waits for quiet.
const SETTLE_CAP: Duration = Duration::from_millis(500);

/// Whether any thread of this process but the caller is running or waiting
/// for a CPU (state `R` in `/proc/self/task/*/stat`; false where there is
/// no `/proc`). getrusage alone cannot tell: the kernel adds the CPU of a
/// thread spinning on another core to the total only at scheduler ticks
/// (every 4 ms at HZ=250), so a 2 ms window can read quiet while a worker
/// spins without ever blocking.
fn other_thread_runnable() -> bool {
    // "/proc/thread-self" links to "<pid>/task/<tid>" of the calling thread.
    let own = std::fs::read_link("/proc/thread-self")
        .ok()
        .and_then(|link| link.file_name().map(|tid| tid.to_owned()));
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return false;
    };
    tasks.flatten().any(|task| {
        if Some(task.file_name()) == own {
            return false;
        }
        std::fs::read_to_string(task.path().join("stat")).is_ok_and(|stat| runnable(&stat))
    })
}

/// Whether a `/proc/<pid>/task/<tid>/stat` line says `R` (running or
/// waiting for a CPU). The state follows the command name, which is in
/// parentheses and may itself hold spaces or parentheses.
fn runnable(stat: &str) -> bool {
    stat.rsplit_once(')')
        .is_some_and(|(_, rest)| rest.trim_start().starts_with('R'))
}

/// Pools are leaked: tasks then hold `&'static` pools with no reference
/// counting on the hot path, and no task can ever drop its own pool. Each
/// child process runs one measurement and exits.
pub fn leak<T>(value: T) -> &'static T {
    Box::leak(Box::new(value))
}

/// Starts every worker thread (some pools start lazily) before anything is
/// timed: a few empty tasks per worker, waited for.
pub fn warm_up<S: crate::scheds::Sched>(pool: &S, workers: usize) {
    let latch = leak(crate::latch::Latch::new(workers * 4));
    for _ in 0..workers * 4 {
        pool.spawn(move || latch.count_down());
    }
    latch.wait();
}

pub fn ns_per(d: Duration, count: u64) -> f64 {
    d.as_nanos() as f64 / count.max(1) as f64
}

/// Value at quantile `q` (0..=1) of an unsorted sample.
pub fn quantile(samples: &mut [f64], q: f64) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    samples.sort_by(f64::total_cmp);
    let idx = ((samples.len() - 1) as f64 * q).round() as usize;
    samples[idx]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn the_state_is_read_after_the_last_parenthesis() {
        assert!(runnable("4242 (weft-worker-3) R 4240 4240 0"));
        assert!(!runnable("4242 (weft-worker-3) S 4240 4240 0"));
        assert!(!runnable("4242 (odd) R (name) S 4240 4240 0"));
        assert!(!runnable("garbage"));
    }

    #[test]
    fn a_spinning_thread_is_seen_runnable() {
        if !std::path::Path::new("/proc/thread-self").exists() {
            return; // no /proc: settle falls back to the CPU window alone
        }
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            });
            // The spinner never blocks, so it is running or waiting for a CPU.
            let seen = (0..100).any(|_| {
                std::thread::sleep(Duration::from_millis(1));
                other_thread_runnable()
            });
            stop.store(true, Ordering::Relaxed);
            assert!(seen, "a thread that never blocks was not seen runnable");
        });
    }
}
