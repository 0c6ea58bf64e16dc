//! Scenarios from thread-pool-cpp's tests: throughput with K self-reposting
//! task chains in flight, the Mandelbrot image (a task per pixel, and 64
//! task chains) with a checksum every scheduler must reproduce, and the CPU
//! a pool burns while idle after a burst.

use super::{has, leak, ns_per, timed, warm_up, Case, Fit, Measured, Needs, TASKS};
use crate::latch::Latch;
use crate::rusage::other_threads_cpu;
use crate::scheds::{Cap, ForkJoin, Sched, SchedKind};
use crate::with_peer;
use crate::work::{image_checksum, mandel_pixel};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

const MANDEL_CHAINS: usize = 64;
const IDLE_BURST: usize = 10_000;

pub fn cases() -> Vec<Case> {
    let throughput = Case {
        scenario: "tpcpp/throughput",
        variant: "k=1",
        about: "K tasks in flight, each posts its successor, N tasks in all (size = N)",
        unit: "ns/task",
        higher_is_better: false,
        sizes: [2_000, 100_000, 1_000_000],
        needs: TASKS,
        run: throughput_on::<1>,
    };
    let pixels = Case {
        scenario: "tpcpp/mandelbrot",
        variant: "pixels",
        about: "one task per pixel of a side x side image (2500 in --full); checksum checked",
        unit: "ms",
        higher_is_better: false,
        sizes: [32, 300, 2_500],
        needs: TASKS,
        run: |kind, workers, side| with_peer!(kind, Tasks, mandelbrot(workers, side as u32, false)),
    };
    vec![
        throughput,
        Case { variant: "k=16", run: throughput_on::<16>, ..throughput },
        Case { variant: "k=64", run: throughput_on::<64>, ..throughput },
        Case { variant: "k=1000", run: throughput_on::<1000>, ..throughput },
        pixels,
        Case {
            variant: "chains",
            about: "same image as 64 task chains, each pixel task posts the next; checksum checked",
            run: |kind, workers, side| with_peer!(kind, Tasks, mandelbrot(workers, side as u32, true)),
            ..pixels
        },
        Case {
            scenario: "tpcpp/idle",
            variant: "",
            about: "CPU used by a pool left idle after a burst of 10,000 tasks, from the moment the burst is done (size = idle ms; first 50 ms and the rest in extras)",
            unit: "cpu ms",
            higher_is_better: false,
            sizes: [50, 500, 2_000],
            // A pool that only joins makes its burst of joins.
            needs: Needs::ways(&[&[Cap::Spawn], &[Cap::ForkJoin]]).adjusted(|kind, _, fit| {
                match fit {
                    Fit::Yes(_) if has(kind, Cap::Spawn).is_none() => {
                        Fit::Yes("burst of joins (its only way to spread work), then idle".into())
                    }
                    fit => fit,
                }
            }),
            run: |kind, workers, idle_ms| {
                if has(kind, Cap::Spawn).is_some() {
                    with_peer!(kind, Tasks, idle(workers, idle_ms))
                } else {
                    with_peer!(kind, Joins, idle_joins(workers, idle_ms))
                }
            },
        },
    ]
}

fn throughput_on<const K: usize>(kind: SchedKind, workers: usize, n: u64) -> Measured {
    with_peer!(kind, Tasks, throughput(workers, n as usize, K))
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

fn idle_figures(idle_ms: u64, cpu: IdleCpu) -> Measured {
    let secs = idle_ms as f64 / 1e3;
    let total = cpu.winding_down + cpu.after;
    Measured::new(
        Duration::from_millis(idle_ms),
        total,
        total.as_secs_f64() * 1e3,
    )
    .with("cpu_ms_per_s", total.as_secs_f64() * 1e3 / secs)
    .with("first_50ms_cpu_ms", cpu.winding_down.as_secs_f64() * 1e3)
    .with("after_50ms_cpu_ms", cpu.after.as_secs_f64() * 1e3)
}

/// The idle window's CPU, split where a pool should long have parked.
struct IdleCpu {
    /// The first [`WINDING_DOWN`]: the workers' last searches and parks.
    winding_down: Duration,
    /// The rest: a parked pool's own ticking, if any.
    after: Duration,
}

const WINDING_DOWN: Duration = Duration::from_millis(50);

/// CPU of the pool (every thread but this one) while this thread sleeps.
/// Read thread by thread ([`other_threads_cpu`]): the window opens right
/// after the burst, while workers may still be running.
fn measure_idle(idle_ms: u64) -> IdleCpu {
    let idle = Duration::from_millis(idle_ms);
    let first = WINDING_DOWN.min(idle);
    let cpu0 = other_threads_cpu();
    std::thread::sleep(first);
    let cpu1 = other_threads_cpu();
    std::thread::sleep(idle - first);
    IdleCpu {
        winding_down: cpu1.saturating_sub(cpu0),
        after: other_threads_cpu().saturating_sub(cpu1),
    }
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

/// The idle pool of a scheduler that only joins: a burst of joins with
/// 10,000 leaves, made from the caller's seat, which it then leaves.
fn idle_joins<J: ForkJoin>(workers: usize, idle_ms: u64) -> Measured {
    fn burst<J: ForkJoin>(ctx: &mut J::Ctx<'_>, leaves: usize) -> usize {
        if leaves <= 1 {
            return std::hint::black_box(leaves);
        }
        let half = leaves / 2;
        let (a, b) = J::join(
            ctx,
            |c| burst::<J>(c, half),
            |c| burst::<J>(c, leaves - half),
        );
        a + b
    }
    let pool = J::start(workers);
    let leaves = pool.seat(|seat| J::enter(seat, |c| burst::<J>(c, IDLE_BURST)));
    assert_eq!(leaves, IDLE_BURST);
    let cpu = measure_idle(idle_ms);
    drop(pool);
    idle_figures(idle_ms, cpu)
}
