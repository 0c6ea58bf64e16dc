//! Wake-up scenarios: how fast a parked pool starts one task (latency), and
//! how fast T tasks submitted at once reach T parked workers (fan-out).

use super::{leak, quantile, timed, warm_up, Case, Measured};
use crate::scheds::std::BareThreads;
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
    latency_rounds(samples, |submit, tx| {
        pool.spawn(move || tx.send(submit.elapsed()).unwrap())
    })
}

fn fan_out<S: Sched>(workers: usize, samples: usize) -> Measured {
    let pool = leak(S::build(workers));
    warm_up(pool, workers);
    fan_out_rounds(workers, samples, |submit, tx, done_tx| {
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
    })
}

/// The `std` row: bare threads (`scheds::std`) with no scheduler between
/// the submitter and them, each handed its task directly.
fn floor_latency(samples: usize) -> Measured {
    let threads = BareThreads::start(1);
    latency_rounds(samples, |submit, tx| {
        threads.run_on(0, move || tx.send(submit.elapsed()).unwrap())
    })
}

fn floor_fan_out(workers: usize, samples: usize) -> Measured {
    let threads = BareThreads::start(workers);
    fan_out_rounds(workers, samples, |submit, tx, done_tx| {
        for thread in 0..workers {
            let (tx, done_tx) = (tx.clone(), done_tx.clone());
            threads.run_on(thread, move || {
                tx.send((submit.elapsed(), thread)).unwrap();
                std::thread::sleep(HOLD);
                done_tx.send(()).unwrap();
            });
        }
    })
}

/// `samples` rounds of: let the pool park, `submit` one task that sends its
/// start delay, wait for it. Each caller spawns in its own way (directly,
/// monomorphised), so only the bookkeeping is shared.
fn latency_rounds(
    samples: usize,
    mut submit: impl FnMut(Instant, mpsc::Sender<Duration>),
) -> Measured {
    let (tx, rx) = mpsc::channel::<Duration>();
    let (mut lat_us, wall, cpu) = timed(|| {
        let mut lat_us = Vec::with_capacity(samples);
        for _ in 0..samples {
            std::thread::sleep(PARK_GAP);
            submit(Instant::now(), tx.clone());
            lat_us.push(rx.recv().unwrap().as_secs_f64() * 1e6);
        }
        lat_us
    });
    let p50 = quantile(&mut lat_us, 0.5);
    Measured::new(wall, cpu, p50)
        .with("p99_us", quantile(&mut lat_us, 0.99))
        .with("max_us", quantile(&mut lat_us, 1.0))
}

/// `samples` rounds of: let the pool park, `submit` `workers` tasks that each
/// report (start delay, worker) and hold their worker for [`HOLD`], wait for
/// all to start and end.
fn fan_out_rounds(
    workers: usize,
    samples: usize,
    mut submit: impl FnMut(Instant, &mpsc::Sender<(Duration, usize)>, &mpsc::Sender<()>),
) -> Measured {
    let (tx, rx) = mpsc::channel::<(Duration, usize)>();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let ((mut last_us, spread), wall, cpu) = timed(|| {
        let mut last_us = Vec::with_capacity(samples);
        let mut all_workers = 0;
        for _ in 0..samples {
            std::thread::sleep(PARK_GAP);
            submit(Instant::now(), &tx, &done_tx);
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
