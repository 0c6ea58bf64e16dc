//! Wake-up scenarios: how fast a parked pool starts one task (latency), and
//! how fast T tasks submitted at once reach T parked workers (fan-out).

use super::{leak, quantile, timed, warm_up, Case, Measured};
use crate::scheds::{thread_slot, Sched, SchedKind};
use crate::with_sched;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Long enough for every pool to stop searching and park.
const PARK_GAP: Duration = Duration::from_millis(3);
/// Each fan-out task holds its worker this long, so one worker cannot
/// quietly run several of them: a task left for a busy worker starts late.
const HOLD: Duration = Duration::from_millis(1);

pub fn run(case: &Case, kind: SchedKind, workers: usize, size: u64) -> Measured {
    match (case.scenario, kind) {
        ("wake/latency", SchedKind::Std) => floor_latency(size as usize),
        ("wake/fan-out", SchedKind::Std) => floor_fan_out(workers, size as usize),
        ("wake/latency", _) => with_sched!(kind, latency(workers, size as usize)),
        ("wake/fan-out", _) => with_sched!(kind, fan_out(workers, size as usize)),
        (other, _) => panic!("unknown wake scenario {other}"),
    }
}

fn latency<S: Sched>(workers: usize, samples: usize) -> Measured {
    let pool = leak(S::build(workers));
    warm_up(pool, workers);
    let (tx, rx) = mpsc::channel::<Duration>();
    let (mut lat_us, wall, cpu) = timed(|| {
        let mut lat_us = Vec::with_capacity(samples);
        for _ in 0..samples {
            std::thread::sleep(PARK_GAP);
            let tx = tx.clone();
            let submit = Instant::now();
            pool.spawn(move || tx.send(submit.elapsed()).unwrap());
            lat_us.push(rx.recv().unwrap().as_secs_f64() * 1e6);
        }
        lat_us
    });
    let p50 = quantile(&mut lat_us, 0.5);
    Measured::new(wall, cpu, p50)
        .with("p99_us", quantile(&mut lat_us, 0.99))
        .with("max_us", quantile(&mut lat_us, 1.0))
}

fn fan_out<S: Sched>(workers: usize, samples: usize) -> Measured {
    let pool = leak(S::build(workers));
    warm_up(pool, workers);
    let (tx, rx) = mpsc::channel::<(Duration, usize)>();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let ((mut last_us, spread), wall, cpu) = timed(|| {
        let mut last_us = Vec::with_capacity(samples);
        let mut all_workers = 0;
        for _ in 0..samples {
            std::thread::sleep(PARK_GAP);
            let submit = Instant::now();
            for _ in 0..workers {
                let (tx, done_tx) = (tx.clone(), done_tx.clone());
                pool.spawn(move || {
                    let started = submit.elapsed();
                    tx.send((started, S::worker_index().unwrap_or_else(thread_slot)))
                        .unwrap();
                    std::thread::sleep(HOLD);
                    done_tx.send(()).unwrap();
                });
            }
            let (last, every_worker) = collect_starts(&rx, workers);
            last_us.push(last);
            all_workers += usize::from(every_worker);
            (0..workers).for_each(|_| done_rx.recv().unwrap());
        }
        (last_us, all_workers)
    });
    let p50 = quantile(&mut last_us, 0.5);
    Measured::new(wall, cpu, p50)
        .with("p99_us", quantile(&mut last_us, 0.99))
        .with("samples_all_workers", spread as f64)
}

/// Receives one round's `tasks` start reports: the last start (us after the
/// submit), and whether `tasks` distinct workers (or threads) ran them.
fn collect_starts(reports: &mpsc::Receiver<(Duration, usize)>, tasks: usize) -> (f64, bool) {
    let starts: Vec<(Duration, usize)> = (0..tasks).map(|_| reports.recv().unwrap()).collect();
    let last = starts.iter().map(|s| s.0).max().unwrap_or_default();
    let mut ids: Vec<usize> = starts.iter().map(|s| s.1).collect();
    ids.sort_unstable();
    ids.dedup();
    (last.as_secs_f64() * 1e6, ids.len() == tasks)
}

/// The machine's floor for these scenarios, with no scheduler at all: bare
/// threads, each blocked on its own channel, sent the task's start signal
/// directly by the submitter, one system call per thread. What a pool adds
/// to a wake-up is its distance above these rows.
struct BareThreads {
    starts: Vec<mpsc::Sender<Instant>>,
    done: mpsc::Receiver<()>,
}

impl BareThreads {
    /// `threads` bare threads; each reports (time since submit, its index) on
    /// `report`, then holds its thread for `hold` and says it is done, as the
    /// pool tasks of these scenarios do.
    fn start(threads: usize, report: mpsc::Sender<(Duration, usize)>, hold: Duration) -> Self {
        let (done_tx, done) = mpsc::channel();
        let starts = (0..threads)
            .map(|index| {
                let (start, started) = mpsc::channel::<Instant>();
                let (report, done_tx) = (report.clone(), done_tx.clone());
                std::thread::spawn(move || {
                    for submit in started {
                        report.send((submit.elapsed(), index)).unwrap();
                        std::thread::sleep(hold);
                        done_tx.send(()).unwrap();
                    }
                });
                start
            })
            .collect();
        BareThreads { starts, done }
    }

    /// Waits until `threads` holds have ended.
    fn wait_done(&self, threads: usize) {
        (0..threads).for_each(|_| self.done.recv().unwrap());
    }

    fn release(&self, thread: usize, submit: Instant) {
        self.starts[thread].send(submit).unwrap();
    }
}

fn floor_latency(samples: usize) -> Measured {
    let (tx, rx) = mpsc::channel();
    let threads = BareThreads::start(1, tx, Duration::ZERO);
    let (mut lat_us, wall, cpu) = timed(|| {
        let mut lat_us = Vec::with_capacity(samples);
        for _ in 0..samples {
            std::thread::sleep(PARK_GAP);
            threads.release(0, Instant::now());
            lat_us.push(rx.recv().unwrap().0.as_secs_f64() * 1e6);
            threads.wait_done(1);
        }
        lat_us
    });
    let p50 = quantile(&mut lat_us, 0.5);
    Measured::new(wall, cpu, p50)
        .with("p99_us", quantile(&mut lat_us, 0.99))
        .with("max_us", quantile(&mut lat_us, 1.0))
}

fn floor_fan_out(workers: usize, samples: usize) -> Measured {
    let (tx, rx) = mpsc::channel();
    let threads = BareThreads::start(workers, tx, HOLD);
    let ((mut last_us, spread), wall, cpu) = timed(|| {
        let mut last_us = Vec::with_capacity(samples);
        let mut all_threads = 0;
        for _ in 0..samples {
            std::thread::sleep(PARK_GAP);
            let submit = Instant::now();
            (0..workers).for_each(|thread| threads.release(thread, submit));
            let (last, every_thread) = collect_starts(&rx, workers);
            last_us.push(last);
            all_threads += usize::from(every_thread);
            threads.wait_done(workers);
        }
        (last_us, all_threads)
    });
    let p50 = quantile(&mut last_us, 0.5);
    Measured::new(wall, cpu, p50)
        .with("p99_us", quantile(&mut last_us, 0.99))
        .with("samples_all_workers", spread as f64)
}
