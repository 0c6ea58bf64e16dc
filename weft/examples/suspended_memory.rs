//! Measures what suspended tasks cost in memory: spawns `TASKS` tasks that
//! each wait on one event, waits until all of them are suspended, and reads
//! the process's resident and virtual size from `/proc/self/status` (Linux)
//! before and after. The figures in the crate docs and docs/FIBERS.md come
//! from this program.
//!
//! ```sh
//! cargo run --release -p weft --example suspended_memory [-- TASKS WORKERS]
//! ```

use std::time::{Duration, Instant};

use weft::{Event, EventMode, Pool, WaitGroup};

/// A field of /proc/self/status, in KiB.
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let tasks: usize = args.next().map_or(10_000, |n| n.parse().expect("TASKS"));
    let workers: usize = args.next().map_or(4, |n| n.parse().expect("WORKERS"));
    let pool = Pool::builder()
        .workers(workers)
        .max_suspended(tasks.max(1))
        .build()
        .expect("pool");
    // Warm the pool up, so its own start is not counted.
    pool.install(|| ());
    let (rss_before, vm_before) = (status_kib("VmRSS:"), status_kib("VmSize:"));

    let release = Event::new(EventMode::Manual);
    let finished = WaitGroup::with_count(tasks);
    for _ in 0..tasks {
        let (release, finished) = (release.clone(), finished.clone());
        pool.spawn(move || {
            release.wait();
            finished.done();
        });
    }
    let started = Instant::now();
    while pool.stats().suspended_now < tasks {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "only {} of {tasks} tasks suspended",
            pool.stats().suspended_now
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let (rss_after, vm_after) = (status_kib("VmRSS:"), status_kib("VmSize:"));
    release.signal();
    finished.wait();

    let fibers: u64 = pool.stats().total().fibers_created;
    println!("{tasks} tasks suspended at once on {workers} workers, {fibers} fibers created");
    match (rss_before, rss_after, vm_before, vm_after) {
        (Some(rss0), Some(rss1), Some(vm0), Some(vm1)) => {
            let per_task =
                |before: u64, after: u64| after.saturating_sub(before) as f64 / tasks as f64;
            println!(
                "resident: {rss0} KiB -> {rss1} KiB, {:.1} KiB per suspended task",
                per_task(rss0, rss1)
            );
            println!(
                "virtual:  {vm0} KiB -> {vm1} KiB, {:.1} KiB per suspended task (reserved, not committed)",
                per_task(vm0, vm1)
            );
        }
        _ => println!("memory figures need Linux's /proc/self/status"),
    }
}
