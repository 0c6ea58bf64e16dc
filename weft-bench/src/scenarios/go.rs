//! The steady trickle of Go issue #43997: one producer submits a short task
//! (2-5 us of work) every 20-100 us. The figure is the pool's CPU over the
//! useful work it did (the producer's own CPU left out), with the
//! submit-to-start latency of every task.

use super::{leak, quantile, warm_up, Case, Measured, TASKS};
use crate::rusage::{other_threads_cpu, set_timer_slack, thread_cpu};
use crate::scheds::Sched;
use crate::with_peer;
use crate::work::{iters_per_micro, some_work, Rng};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Per task: (submit-to-start latency, time spent in the work), in ns.
type TaskLog = Mutex<Vec<(u64, u64)>>;

pub fn cases() -> Vec<Case> {
    vec![Case {
        scenario: "go/trickle",
        variant: "",
        about:
            "one producer submits a 2-5 us task every 20-100 us; pool CPU / useful CPU (size = ms)",
        unit: "cpu/useful",
        higher_is_better: false,
        sizes: [50, 400, 3_000],
        needs: TASKS,
        run: |kind, workers, run_ms| with_peer!(kind, Tasks, trickle(workers, run_ms)),
    }]
}

fn trickle<S: Sched>(workers: usize, run_ms: u64) -> Measured {
    // Calibrated before the pool exists, so its threads cannot disturb it.
    let iters_per_us = iters_per_micro();
    let pool = leak(S::build(workers));
    warm_up(pool, workers);
    let log: &'static TaskLog = leak(Mutex::new(Vec::with_capacity(4096)));
    let finished: &'static AtomicUsize = leak(AtomicUsize::new(0));
    // The producer (this thread) sleeps between submissions; tighten the
    // timer slack so the 20-100 us gaps are kept.
    set_timer_slack(1_000);
    let mut rng = Rng::new(43_997);
    let run_for = Duration::from_millis(run_ms);

    // The pool's CPU: every thread but this one, the producer.
    let cpu0 = other_threads_cpu();
    let producer0 = thread_cpu();
    let t0 = Instant::now();
    let mut submitted = 0;
    while t0.elapsed() < run_for {
        let iters = (rng.range(2, 5) as f64 * iters_per_us) as u32;
        let gap = Duration::from_micros(rng.range(20, 100));
        let submit = Instant::now();
        pool.spawn(move || {
            let start = Instant::now();
            black_box(some_work(iters, iters));
            let end = Instant::now();
            let latency = (start - submit).as_nanos() as u64;
            log.lock()
                .unwrap()
                .push((latency, (end - start).as_nanos() as u64));
            finished.fetch_add(1, Ordering::Release);
        });
        submitted += 1;
        std::thread::sleep(gap);
    }
    while finished.load(Ordering::Acquire) < submitted {
        std::thread::sleep(Duration::from_micros(50));
    }
    let wall = t0.elapsed();
    let producer = thread_cpu().saturating_sub(producer0);
    let pool_cpu = other_threads_cpu().saturating_sub(cpu0);

    let log = log.lock().unwrap();
    let useful_ns: u64 = log.iter().map(|e| e.1).sum();
    let mut latencies: Vec<f64> = log.iter().map(|e| e.0 as f64 / 1e3).collect();
    let figure = pool_cpu.as_nanos() as f64 / useful_ns.max(1) as f64;
    Measured::new(wall, pool_cpu, figure)
        .with("tasks", submitted as f64)
        .with("useful_ms", useful_ns as f64 / 1e6)
        .with("pool_cpu_ms", pool_cpu.as_secs_f64() * 1e3)
        .with("producer_cpu_ms", producer.as_secs_f64() * 1e3)
        .with("latency_p50_us", quantile(&mut latencies, 0.5))
        .with("latency_p99_us", quantile(&mut latencies, 0.99))
}
