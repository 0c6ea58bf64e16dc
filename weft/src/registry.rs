//! The state one pool's workers share: the queues, the sleep protocol, the
//! counters that tell when a closed pool has drained, and the user's hooks.

use std::any::Any;
use std::sync::atomic::{fence, AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crossbeam_deque::{Injector, Stealer};
use crossbeam_utils::CachePadded;

use crate::blocking::Spares;
use crate::future::ParkedFutures;
use crate::job::JobRef;
use crate::sleep::Sleep;
use crate::stats::{Stats, WorkerCounters};

pub(crate) type PanicHandler = Box<dyn Fn(Box<dyn Any + Send>) + Send + Sync>;
pub(crate) type ThreadHook = Box<dyn Fn(usize) + Send + Sync>;

/// Settings the workers read while running.
pub(crate) struct Hooks {
    pub(crate) spin: Duration,
    pub(crate) panic_handler: Option<PanicHandler>,
    pub(crate) on_thread_start: Option<ThreadHook>,
    pub(crate) on_thread_stop: Option<ThreadHook>,
    /// The event recorder, when `Builder::trace` turned tracing on.
    #[cfg(feature = "trace")]
    pub(crate) trace: Option<crate::trace::Tracer>,
}

/// Counts of jobs pushed by and run on one worker. Each field has one writer
/// (the worker), so increments are plain load-then-store, not read-modify-writes.
#[derive(Default)]
pub(crate) struct JobCounters {
    pub(crate) pushed: AtomicU64,
    pub(crate) executed: AtomicU64,
}

impl JobCounters {
    /// Release: a drain check that sees this count also sees the jobs the
    /// counted work pushed before it (see [`Registry::is_drained`]).
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.store(counter.load(Ordering::Relaxed) + 1, Ordering::Release);
    }
}

/// The queues, counters and parking slots are per *seat*: the `workers`
/// workers' seats first, then the spare seats of `weft::blocking`
/// (blocking.rs), which only threads standing in for a blocked worker use.
pub(crate) struct Registry {
    pub(crate) injector: Injector<JobRef>,
    /// One per seat: the seats' `local` queues...
    pub(crate) stealers: Box<[Stealer<JobRef>]>,
    /// ...and their `yielded` queues (see `worker::SeatQueues`).
    pub(crate) yield_stealers: Box<[Stealer<JobRef>]>,
    /// One queue per worker for `spawn_on`: only its owner takes from it.
    pinned: Box<[Injector<JobRef>]>,
    pub(crate) spares: Spares,
    pub(crate) sleep: Sleep,
    pub(crate) counters: Box<[CachePadded<JobCounters>]>,
    pub(crate) stats: Box<[CachePadded<WorkerCounters>]>,
    /// Jobs pushed from threads outside the pool, and those refused after closing.
    external_pushed: CachePadded<AtomicU64>,
    external_refused: AtomicU64,
    closed: AtomicBool,
    terminating: AtomicBool,
    pub(crate) hooks: Hooks,
    /// This pool's futures that went pending, for the sweep when it is dropped.
    pub(crate) parked_futures: ParkedFutures,
}

impl Registry {
    /// `stealers` and `yield_stealers` have one entry per seat: `workers`
    /// workers' seats, then the spare seats whose owner ends `spares` holds.
    pub(crate) fn new(
        stealers: Vec<Stealer<JobRef>>,
        yield_stealers: Vec<Stealer<JobRef>>,
        workers: usize,
        spares: Spares,
        max_searching: usize,
        hooks: Hooks,
    ) -> Registry {
        let seats = stealers.len();
        Registry {
            injector: Injector::new(),
            stealers: stealers.into_boxed_slice(),
            yield_stealers: yield_stealers.into_boxed_slice(),
            pinned: (0..workers).map(|_| Injector::new()).collect(),
            spares,
            sleep: Sleep::new(seats, max_searching),
            counters: (0..seats).map(|_| CachePadded::default()).collect(),
            stats: (0..seats).map(|_| CachePadded::default()).collect(),
            external_pushed: CachePadded::new(AtomicU64::new(0)),
            external_refused: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            terminating: AtomicBool::new(false),
            hooks,
            parked_futures: ParkedFutures::default(),
        }
    }

    pub(crate) fn num_workers(&self) -> usize {
        self.pinned.len()
    }

    /// Seats whose queues may hold tasks: every worker's, and the spare seats
    /// that have had a thread.
    pub(crate) fn seats_in_use(&self) -> usize {
        self.num_workers() + self.spares.started()
    }

    /// Worker `index`'s pinned queue, if it has one (spare seats do not) and
    /// it is not empty.
    pub(crate) fn pinned_queue(&self, index: usize) -> Option<&Injector<JobRef>> {
        self.pinned.get(index).filter(|queue| !queue.is_empty())
    }

    /// Pushes a job from outside the pool onto the global queue, unless the pool
    /// was closed; then the caller gets `item` back.
    pub(crate) fn inject<T>(&self, item: T, make_job: impl FnOnce(T) -> JobRef) -> Result<(), T> {
        if !self.reserve_external() {
            return Err(item);
        }
        self.push_global(make_job(item));
        Ok(())
    }

    /// Pushes a job from outside the pool on behalf of a job that is running
    /// in it (a scope's owner): accepted even once the pool is closed, since
    /// while that job runs the pool cannot have drained.
    pub(crate) fn inject_for_running_job(&self, job: JobRef) {
        // SeqCst: ordered against `is_drained` like `reserve_external`.
        self.external_pushed.fetch_add(1, Ordering::SeqCst);
        self.push_global(job);
    }

    /// The global-queue push of an external job already counted.
    fn push_global(&self, job: JobRef) {
        trace_hook!(crate::trace::record_inject(self, None));
        self.injector.push(job);
        self.sleep.notify_work();
    }

    /// Pushes a job that only worker `index` may run.
    pub(crate) fn inject_pinned<T>(
        &self,
        index: usize,
        item: T,
        make_job: impl FnOnce(T) -> JobRef,
    ) -> Result<(), T> {
        if !self.reserve_external() {
            return Err(item);
        }
        trace_hook!(crate::trace::record_inject(self, Some(index)));
        self.pinned[index].push(make_job(item));
        self.sleep.wake_worker(index);
        Ok(())
    }

    /// Counts an external push before the closed check, so a drain check that
    /// misses the push also finds the pool closed for it (see `is_drained`).
    /// A thread inside `weft::blocking` for one of this pool's workers is let
    /// through: its task still runs, so the pool cannot have drained.
    /// Returns false, with the push counted as refused, once the pool is closed.
    fn reserve_external(&self) -> bool {
        // SeqCst on both: the count and the closed flag must be ordered against
        // `close` and `is_drained`, which use SeqCst too.
        self.external_pushed.fetch_add(1, Ordering::SeqCst);
        if self.closed.load(Ordering::SeqCst) && !crate::blocking::is_blocked_in(self) {
            self.external_refused.fetch_add(1, Ordering::SeqCst);
            return false;
        }
        true
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Stops intake from outside and makes sleeping workers look for the end.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.sleep.wake_all();
    }

    pub(crate) fn is_terminating(&self) -> bool {
        // Acquire/Release suffice: a worker that misses the flag is about to
        // park, and `terminate_if_drained` sets it before `wake_all`, whose
        // sleepers lock every parking worker also takes (so a worker that
        // registers after `wake_all` sees the flag in `sleep_unless`).
        self.terminating.load(Ordering::Acquire)
    }

    /// Called by a worker about to sleep in a closed pool, and by a spare
    /// leaving the worker loop: if no job is queued or running anywhere, tells
    /// every worker (and spare) to exit.
    pub(crate) fn terminate_if_drained(&self) {
        if self.is_closed() && self.is_drained() {
            self.terminating.store(true, Ordering::Release);
            self.sleep.wake_all();
            self.spares.shut_down();
        }
    }

    /// Whether every job ever pushed has finished. Executed counts are read
    /// first, pushed counts second; both only grow, and a job's push is counted
    /// before it can run, so equal sums mean that at some instant between the
    /// two passes nothing was queued or running. After that nothing can push
    /// again: pushes come from running jobs or from outside, refused once closed.
    /// Stack jobs of `join` are left out of the books: they are pushed by a
    /// running counted job that cannot finish before them, so while one exists
    /// the books cannot balance anyway.
    fn is_drained(&self) -> bool {
        let mut executed = self.external_refused.load(Ordering::SeqCst);
        for counters in self.counters.iter() {
            executed += counters.executed.load(Ordering::Acquire);
        }
        // Keeps the second pass after the first.
        fence(Ordering::SeqCst);
        let mut pushed = self.external_pushed.load(Ordering::SeqCst);
        for counters in self.counters.iter() {
            pushed += counters.pushed.load(Ordering::Acquire);
        }
        executed == pushed
    }

    /// Whether a job is visible anywhere worker `index` may take one from.
    pub(crate) fn has_work_for(&self, index: usize) -> bool {
        !self.injector.is_empty()
            || self.pinned_queue(index).is_some()
            || (0..self.seats_in_use()).any(|seat| {
                !self.stealers[seat].is_empty() || !self.yield_stealers[seat].is_empty()
            })
    }

    pub(crate) fn stats(&self) -> Stats {
        let counts = self.sleep.counts();
        let mut seats = self
            .stats
            .iter()
            .zip(self.counters.iter())
            // Relaxed: a statistic; no decision depends on it.
            .map(|(stats, jobs)| stats.snapshot(jobs.executed.load(Ordering::Relaxed)));
        let workers = seats.by_ref().take(self.num_workers()).collect();
        let mut stats = Stats::new(workers, seats.collect());
        stats.searching_now = counts.searching as usize;
        stats.sleeping_now = counts.sleeping as usize;
        stats
    }

    pub(crate) fn handle_panic(&self, payload: Box<dyn Any + Send>) {
        match &self.hooks.panic_handler {
            Some(handler) => {
                // A panicking handler must not take the worker down with it.
                if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(payload)))
                    .is_err()
                {
                    eprintln!("weft: the panic handler panicked; the panic is dropped");
                }
            }
            None => {
                // The default: the panic message was already printed by the panic
                // hook; the worker lives on.
                drop(payload);
            }
        }
    }
}
