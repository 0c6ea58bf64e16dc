//! Wake-up scenarios: how fast a parked pool starts one task (latency), and
//! how fast T tasks submitted at once reach T parked workers (fan-out).

use super::{has, leak, quantile, settle, timed, warm_up, Case, Measured, Needs};
use crate::latch::Latch;
use crate::scheds::bare_threads::BareThreads;
use crate::scheds::{thread_slot, Cap, Sched};
use crate::with_peer;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// How long a round waits after the pool went quiet (`settle`): with the
/// quiet window before it, every pool's workers have been parked ~3 ms.
const PARK_GAP: Duration = Duration::from_millis(1);
/// Each fan-out task holds its worker this long, so one worker cannot
/// quietly run several of them: a task left for a busy worker starts late.
const HOLD: Duration = Duration::from_millis(1);

pub fn cases() -> Vec<Case> {
    let latency = Case {
        scenario: "wake/latency",
        variant: "",
        about: "one task submitted to a parked pool (each round waits until no worker is runnable and the process used under 10% of a core for 2 ms, then 1 ms; that wait's own CPU is left out): submit-to-start p50 (p99 in extras; samples_parked = rounds that went quiet)",
        unit: "us p50",
        higher_is_better: false,
        sizes: [5, 80, 400],
        // Wake-ups also run on bare threads, the machine's floor.
        needs: Needs::ways(&[&[Cap::Spawn], &[Cap::Floor]]),
        run: |kind, workers, samples| match has(kind, Cap::Spawn) {
            Some(_) => with_peer!(kind, Tasks, latency(workers, samples as usize)),
            None => floor_latency(samples as usize),
        },
    };
    vec![
        latency,
        Case {
            scenario: "wake/fan-out",
            about: "T = workers tasks (each holds its worker 1 ms) to T parked workers (waited for as in wake/latency); time until the last starts; tasks record their starts in place, only the last wakes the submitter",
            sizes: [3, 40, 200],
            run: |kind, workers, samples| match has(kind, Cap::Spawn) {
                Some(_) => with_peer!(kind, Tasks, fan_out(workers, samples as usize)),
                None => floor_fan_out(workers, samples as usize),
            },
            ..latency
        },
    ]
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
    fan_out_rounds(workers, samples, |round| {
        for _ in 0..round.tasks() {
            let round = round.clone();
            pool.spawn(move || {
                round.started(S::worker_index().unwrap_or_else(thread_slot));
                std::thread::sleep(HOLD);
                round.ended();
            });
        }
    })
}

/// The `std` row: bare threads (`scheds::bare_threads`) with no scheduler between
/// the submitter and them, each handed its task directly.
fn floor_latency(samples: usize) -> Measured {
    let threads = BareThreads::start(1);
    latency_rounds(samples, |submit, tx| {
        threads.run_on(0, move || tx.send(submit.elapsed()).unwrap())
    })
}

fn floor_fan_out(workers: usize, samples: usize) -> Measured {
    let threads = BareThreads::start(workers);
    fan_out_rounds(workers, samples, |round| {
        for thread in 0..round.tasks() {
            let round = round.clone();
            threads.run_on(thread, move || {
                round.started(thread);
                std::thread::sleep(HOLD);
                round.ended();
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
    let ((mut lat_us, parked, watcher_cpu), wall, cpu) = timed(|| {
        let mut lat_us = Vec::with_capacity(samples);
        let (mut parked, mut watcher_cpu) = (0, Duration::ZERO);
        for _ in 0..samples {
            let settled = settle(PARK_GAP);
            parked += usize::from(settled.quiet);
            watcher_cpu += settled.watcher_cpu;
            submit(Instant::now(), tx.clone());
            lat_us.push(rx.recv().unwrap().as_secs_f64() * 1e6);
        }
        (lat_us, parked, watcher_cpu)
    });
    let cpu = cpu.saturating_sub(watcher_cpu);
    let p50 = quantile(&mut lat_us, 0.5);
    Measured::new(wall, cpu, p50)
        .with("p99_us", quantile(&mut lat_us, 0.99))
        .with("max_us", quantile(&mut lat_us, 1.0))
        .with("samples_parked", parked as f64)
}

/// One fan-out round's record. Tasks write their start (delay, worker) into
/// their own slot and count down; only the last start and the last end wake
/// the submitter, so the measured wakes do not share the cores with one
/// wake-up of the submitter per task.
struct FanOutRound {
    submit: Instant,
    start_ns: Vec<AtomicU64>,
    worker: Vec<AtomicUsize>,
    next_slot: AtomicUsize,
    all_started: Latch,
    all_ended: Latch,
}

impl FanOutRound {
    /// Allocates the slots first, then stamps the submit time (the `Arc`
    /// around the record is allocated after the stamp, as a task would be).
    fn new(tasks: usize) -> FanOutRound {
        let start_ns = (0..tasks).map(|_| AtomicU64::new(0)).collect();
        let worker = (0..tasks).map(|_| AtomicUsize::new(0)).collect();
        FanOutRound {
            start_ns,
            worker,
            next_slot: AtomicUsize::new(0),
            all_started: Latch::new(tasks),
            all_ended: Latch::new(tasks),
            submit: Instant::now(),
        }
    }

    /// How many tasks the round is for: the submitter spawns exactly these.
    fn tasks(&self) -> usize {
        self.start_ns.len()
    }

    fn started(&self, worker: usize) {
        let delay = self.submit.elapsed().as_nanos() as u64;
        // Relaxed: the slot is this task's alone; the latch's AcqRel count
        // publishes the writes to the submitter, which reads after its wait.
        let slot = self.next_slot.fetch_add(1, Ordering::Relaxed);
        self.start_ns[slot].store(delay, Ordering::Relaxed);
        self.worker[slot].store(worker, Ordering::Relaxed);
        self.all_started.count_down();
    }

    fn ended(&self) {
        self.all_ended.count_down();
    }

    /// The last start (us after the submit), and whether every task ran on
    /// a different worker (or thread). Call after `all_started` opened.
    fn last_start_and_spread(&self) -> (f64, bool) {
        let last = self
            .start_ns
            .iter()
            .map(|ns| ns.load(Ordering::Relaxed))
            .max()
            .unwrap_or(0);
        let mut ids: Vec<usize> = self
            .worker
            .iter()
            .map(|w| w.load(Ordering::Relaxed))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        (last as f64 / 1e3, ids.len() == self.worker.len())
    }
}

/// `samples` rounds of: let the pool park, `submit` `workers` tasks that each
/// record their start and hold their worker for [`HOLD`], wait for all to
/// start and end.
fn fan_out_rounds(
    workers: usize,
    samples: usize,
    mut submit: impl FnMut(&Arc<FanOutRound>),
) -> Measured {
    let ((mut last_us, spread, parked, watcher_cpu), wall, cpu) = timed(|| {
        let mut last_us = Vec::with_capacity(samples);
        let mut all_workers = 0;
        let (mut parked, mut watcher_cpu) = (0, Duration::ZERO);
        for _ in 0..samples {
            let settled = settle(PARK_GAP);
            parked += usize::from(settled.quiet);
            watcher_cpu += settled.watcher_cpu;
            let round = Arc::new(FanOutRound::new(workers));
            submit(&round);
            round.all_started.wait();
            let (last, every_worker) = round.last_start_and_spread();
            last_us.push(last);
            all_workers += usize::from(every_worker);
            round.all_ended.wait();
        }
        (last_us, all_workers, parked, watcher_cpu)
    });
    let cpu = cpu.saturating_sub(watcher_cpu);
    let p50 = quantile(&mut last_us, 0.5);
    Measured::new(wall, cpu, p50)
        .with("p99_us", quantile(&mut last_us, 0.99))
        .with("samples_all_workers", spread as f64)
        .with("samples_parked", parked as f64)
}
