//! What the scheduler did, per worker ([`Pool::stats`]): a snapshot of the
//! counters the core keeps (`sched/counters.rs`).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::sched::counters::WorkerCounters;
use crate::sched::registry::Registry;
use crate::Pool;

impl Pool {
    /// A snapshot of what the workers did so far: tasks run and stolen, parks,
    /// wake-ups, time searching and parked. See [`Stats`].
    pub fn stats(&self) -> Stats {
        snapshot(self.registry())
    }
}

/// The snapshot behind [`Pool::stats`].
fn snapshot(registry: &Registry) -> Stats {
    let counts = registry.sleep.counts();
    let mut seats = registry
        .stats
        .iter()
        .zip(registry.counters.iter())
        // Relaxed: a statistic; no decision depends on it.
        .map(|(stats, jobs)| worker_stats(stats, jobs.executed.load(Ordering::Relaxed)));
    let workers = seats.by_ref().take(registry.num_workers()).collect();
    let mut stats = Stats::new(workers, seats.collect());
    stats.searching_now = counts.searching as usize;
    stats.sleeping_now = counts.sleeping as usize;
    stats.suspended_now = registry.suspend_budget.current();
    stats
}

/// One seat's counters as its stats.
fn worker_stats(counters: &WorkerCounters, tasks_run: u64) -> WorkerStats {
    let read = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
    WorkerStats {
        tasks_run,
        tasks_stolen: read(&counters.stolen),
        failed_steals: read(&counters.failed_steals),
        join_halves_shared: read(&counters.halves_shared),
        join_halves_forced: read(&counters.halves_forced),
        waits_suspended: read(&counters.suspensions),
        fibers_created: read(&counters.fibers_created),
        parks: read(&counters.parks),
        wakeups: read(&counters.wakeups),
        wakeups_without_work: read(&counters.wakeups_without_work),
        searching: Duration::from_nanos(read(&counters.searching_ns)),
        parked: Duration::from_nanos(read(&counters.parked_ns)),
    }
}

/// What one worker did since the pool started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkerStats {
    /// Tasks this worker ran: spawned tasks, `install` and `broadcast` jobs.
    /// The halves of `join` are not counted (they cost no bookkeeping).
    pub tasks_run: u64,
    /// Tasks it took from another worker's queue.
    pub tasks_stolen: u64,
    /// Attempts to steal from another worker's queue that got nothing.
    pub failed_steals: u64,
    /// Second halves of its `join`s it moved to its queue for idle workers
    /// (then taken there like any task, or taken back by this worker):
    /// because one asked, because the half was the running task's
    /// outermost, or, between a parallel loop's chunks, because workers were
    /// searching.
    pub join_halves_shared: u64,
    /// Second halves of other workers' `join`s it took by force, when the
    /// owner did not answer a request in time (counted in `tasks_stolen`).
    pub join_halves_forced: u64,
    /// Waits of its tasks that suspended the task's fiber, the worker going
    /// on with other tasks meanwhile (crate docs, "Waiting on a worker").
    pub waits_suspended: u64,
    /// Fibers (task stacks) it created; idle ones are reused.
    pub fibers_created: u64,
    /// Times it parked.
    pub parks: u64,
    /// Times it was woken to look for a new task.
    pub wakeups: u64,
    /// Of those, wake-ups after which it found no task before parking again.
    pub wakeups_without_work: u64,
    /// Time spent searching other queues.
    pub searching: Duration,
    /// Time spent parked.
    pub parked: Duration,
}

impl WorkerStats {
    fn add(&mut self, other: &WorkerStats) {
        self.tasks_run += other.tasks_run;
        self.tasks_stolen += other.tasks_stolen;
        self.failed_steals += other.failed_steals;
        self.join_halves_shared += other.join_halves_shared;
        self.join_halves_forced += other.join_halves_forced;
        self.waits_suspended += other.waits_suspended;
        self.fibers_created += other.fibers_created;
        self.parks += other.parks;
        self.wakeups += other.wakeups;
        self.wakeups_without_work += other.wakeups_without_work;
        self.searching += other.searching;
        self.parked += other.parked;
    }
}

/// A snapshot of a pool's counters, from [`Pool::stats`](crate::Pool::stats).
///
/// ```
/// let pool = weft::Pool::builder().workers(2).build().unwrap();
/// pool.install(|| ());
/// let stats = pool.stats();
/// assert_eq!(stats.workers.len(), 2);
/// // A worker counts a task just after the task signalled its caller, so a
/// // snapshot taken right after a wait may still miss that last count.
/// assert!(stats.total().tasks_run <= 1);
/// println!("{stats}");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// One entry per worker, in worker order.
    pub workers: Vec<WorkerStats>,
    /// What the spare threads that stood in for blocked workers did
    /// ([`blocking`](crate::blocking)), summed.
    pub spares: WorkerStats,
    /// Workers searching when the snapshot was taken.
    pub searching_now: usize,
    /// Workers parked (or about to park) when the snapshot was taken.
    pub sleeping_now: usize,
    /// Tasks suspended in a wait when the snapshot was taken.
    pub suspended_now: usize,
}

impl Stats {
    pub(crate) fn new(workers: Vec<WorkerStats>, spare_seats: Vec<WorkerStats>) -> Stats {
        let mut spares = WorkerStats::default();
        for seat in &spare_seats {
            spares.add(seat);
        }
        Stats {
            workers,
            spares,
            searching_now: 0,
            sleeping_now: 0,
            suspended_now: 0,
        }
    }

    /// The sum over all workers and the spares.
    pub fn total(&self) -> WorkerStats {
        let mut total = self.spares;
        for worker in &self.workers {
            total.add(worker);
        }
        total
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:>6} {:>10} {:>8} {:>10} {:>7} {:>8} {:>10} {:>11} {:>11}",
            "worker",
            "tasks",
            "stolen",
            "failed",
            "parks",
            "wakeups",
            "idle-wake",
            "searching",
            "parked"
        )?;
        let row = |f: &mut fmt::Formatter<'_>, label: &str, w: &WorkerStats| {
            writeln!(
                f,
                "{:>6} {:>10} {:>8} {:>10} {:>7} {:>8} {:>10} {:>11} {:>11}",
                label,
                w.tasks_run,
                w.tasks_stolen,
                w.failed_steals,
                w.parks,
                w.wakeups,
                w.wakeups_without_work,
                format!("{:.1?}", w.searching),
                format!("{:.1?}", w.parked),
            )
        };
        for (index, worker) in self.workers.iter().enumerate() {
            row(f, &index.to_string(), worker)?;
        }
        if self.spares != WorkerStats::default() {
            row(f, "spares", &self.spares)?;
        }
        row(f, "total", &self.total())?;
        write!(
            f,
            "now: {} searching, {} parked, {} tasks suspended",
            self.searching_now, self.sleeping_now, self.suspended_now
        )
    }
}
