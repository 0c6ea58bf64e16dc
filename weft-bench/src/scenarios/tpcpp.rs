//! Scenarios from thread-pool-cpp's tests: throughput with K self-reposting
//! task chains in flight, the Mandelbrot image (a task per pixel, and 64
//! task chains) with a checksum every scheduler must reproduce, and the CPU
//! a pool burns while idle after a burst.

use super::{leak, ns_per, timed, warm_up, Case, Measured};
use crate::latch::Latch;
use crate::rusage::process_cpu;
use crate::scheds::{Sched, SchedKind};
use crate::with_sched;
use crate::work::{image_checksum, mandel_pixel};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

const MANDEL_CHAINS: usize = 64;
const IDLE_BURST: usize = 10_000;

pub fn run(case: &Case, kind: SchedKind, workers: usize, size: u64) -> Measured {
    match (case.scenario, case.variant) {
        ("tpcpp/throughput", variant) => {
            let k = variant
                .strip_prefix("k=")
                .and_then(|k| k.parse().ok())
                .expect("throughput variant is k=N");
            with_sched!(kind, throughput(workers, size as usize, k))
        }
        ("tpcpp/mandelbrot", variant) => {
            let chains = variant == "chains";
            with_sched!(kind, mandelbrot(workers, size as u32, chains))
        }
        ("tpcpp/idle", _) if kind == SchedKind::Chili => idle_chili(workers, size),
        ("tpcpp/idle", _) => with_sched!(kind, idle(workers, size)),
        (other, _) => panic!("unknown tpcpp scenario {other}"),
    }
}

/// One link of a chain: posts the next link until `left` reaches zero.
fn link<S: Sched>(pool: &'static S, left: usize, latch: &'static Latch) {
    if left == 0 {
        latch.count_down();
    } else {
        pool.spawn(move || link(pool, left - 1, latch));
    }
}

fn throughput<S: Sched>(workers: usize, total: usize, k: usize) -> Measured {
    let pool = leak(S::build(workers));
    warm_up(pool, workers);
    let per_chain = (total / k).max(1);
    let latch = leak(Latch::new(k));
    let ((), wall, cpu) = timed(|| {
        for _ in 0..k {
            pool.spawn(move || link(pool, per_chain - 1, latch));
        }
        latch.wait();
    });
    let tasks = (k * per_chain) as u64;
    Measured::new(wall, cpu, ns_per(wall, tasks)).with("tasks", tasks as f64)
}

fn mandelbrot<S: Sched>(workers: usize, side: u32, chains: bool) -> Measured {
    let pixels = (side * side) as usize;
    // Computed serially before the timed section: the figure every
    // scheduler's image must reproduce.
    let reference = image_checksum((0..pixels).map(|i| {
        let i = i as u32;
        mandel_pixel(i % side, i / side, side)
    }));
    let image: &'static [AtomicU32] = leak(
        (0..pixels)
            .map(|_| AtomicU32::new(u32::MAX))
            .collect::<Vec<_>>(),
    )
    .as_slice();
    let pool = leak(S::build(workers));
    warm_up(pool, workers);
    let paint = move |i: usize| {
        let p = i as u32;
        image[i].store(mandel_pixel(p % side, p / side, side), Ordering::Relaxed);
    };
    let ((), wall, cpu) = if chains {
        let latch = leak(Latch::new(MANDEL_CHAINS.min(pixels)));
        timed(|| {
            for start in 0..MANDEL_CHAINS.min(pixels) {
                pool.spawn(move || pixel_chain(pool, start, pixels, paint, latch));
            }
            latch.wait();
        })
    } else {
        let latch = leak(Latch::new(pixels));
        timed(|| {
            for i in 0..pixels {
                pool.spawn(move || {
                    paint(i);
                    latch.count_down();
                });
            }
            latch.wait();
        })
    };
    // The latch's acquire ordering makes every pixel store visible here.
    let checksum = image_checksum(image.iter().map(|p| p.load(Ordering::Relaxed)));
    assert_eq!(
        checksum, reference,
        "MANDELBROT CHECKSUM MISMATCH: the scheduler lost or misplaced pixels"
    );
    Measured::new(wall, cpu, wall.as_secs_f64() * 1e3)
        .with("checksum", checksum as f64)
        .with("ns_per_pixel", ns_per(wall, pixels as u64))
}

/// Paints pixel `i`, then posts the task for pixel `i + 64`.
fn pixel_chain<S: Sched>(
    pool: &'static S,
    i: usize,
    pixels: usize,
    paint: impl Fn(usize) + Copy + Send + 'static,
    latch: &'static Latch,
) {
    paint(i);
    let next = i + MANDEL_CHAINS;
    if next < pixels {
        pool.spawn(move || pixel_chain(pool, next, pixels, paint, latch));
    } else {
        latch.count_down();
    }
}

fn idle_figures(idle_ms: u64, cpu: Duration) -> Measured {
    let secs = idle_ms as f64 / 1e3;
    Measured::new(Duration::from_millis(idle_ms), cpu, cpu.as_secs_f64() * 1e3)
        .with("cpu_ms_per_s", cpu.as_secs_f64() * 1e3 / secs)
}

/// CPU of the whole process while this thread sleeps: only the pool runs.
fn measure_idle(idle_ms: u64) -> Duration {
    let cpu0 = process_cpu();
    std::thread::sleep(Duration::from_millis(idle_ms));
    process_cpu().saturating_sub(cpu0)
}

fn idle<S: Sched>(workers: usize, idle_ms: u64) -> Measured {
    let pool = leak(S::build(workers));
    warm_up(pool, workers);
    let latch = leak(Latch::new(IDLE_BURST));
    for _ in 0..IDLE_BURST {
        pool.spawn(move || latch.count_down());
    }
    latch.wait();
    idle_figures(idle_ms, measure_idle(idle_ms))
}

fn idle_chili(workers: usize, idle_ms: u64) -> Measured {
    fn burst(s: &mut chili::Scope<'_>, leaves: usize) -> usize {
        if leaves <= 1 {
            return std::hint::black_box(leaves);
        }
        let half = leaves / 2;
        let (a, b) = s.join(|s| burst(s, half), |s| burst(s, leaves - half));
        a + b
    }
    let pool = crate::scheds::chili::build(workers);
    assert_eq!(burst(&mut pool.scope(), IDLE_BURST), IDLE_BURST);
    let cpu = measure_idle(idle_ms);
    drop(pool);
    idle_figures(idle_ms, cpu)
}
