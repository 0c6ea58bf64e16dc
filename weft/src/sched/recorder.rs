//! The per-seat event rings the worker loop appends to when tracing is on
//! (cargo feature `trace`, [`Builder::trace`](crate::Builder::trace)), and
//! the [`Trace`] snapshot taken of them. The core records; the `trace`
//! extension (`weft::trace`) renders the snapshot and re-exports its types.
//!
//! Each worker owns one ring behind its own `Mutex`. Only the owner writes to
//! it, and the only other thread that ever locks it is one taking a snapshot,
//! so on the hot path the lock is always uncontended: one atomic swap to take
//! it and one to release it, no waiting and no cache line shared with another
//! worker (each ring sits on its own cache line). That suffices; a lock-free
//! single-writer ring would save those two atomics at the cost of `unsafe`.
//! Injections from threads outside the pool have no ring of their own: they go
//! to one small shared ring (`outside`), locked by injecting threads only.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use crossbeam_utils::CachePadded;

use crate::sched::registry::Registry;
use crate::sched::worker::WorkerThread;

/// What happened, as recorded by a worker (or by an outside thread for
/// [`EventKind::Inject`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
#[cfg_attr(docsrs, doc(cfg(feature = "trace")))]
pub enum EventKind {
    /// The worker started running a task. The name comes from
    /// [`Pool::spawn_named`](crate::Pool::spawn_named) or
    /// [`name_current_task`](crate::name_current_task).
    TaskStart {
        /// The task's name, if it was given one.
        name: Option<&'static str>,
    },
    /// The task started by the matching `TaskStart` returned (or panicked).
    /// Tasks nest: a task that waits runs other tasks inside its own span.
    TaskEnd,
    /// The worker began sweeping other queues for work.
    SearchStart,
    /// The sweep ended, with a task (`found`) or without one.
    SearchEnd {
        /// Whether the sweep found a task.
        found: bool,
    },
    /// The worker parked (went to sleep).
    Park,
    /// The worker woke up from a park.
    Wake,
    /// The worker took a task from worker `from`'s queue.
    Steal {
        /// The seat stolen from.
        from: usize,
    },
    /// A task was pushed onto the global queue, or onto worker `worker`'s
    /// pinned queue (`spawn_on`, `broadcast`), from outside that queue's
    /// owner. Recorded by the thread that pushed it.
    Inject {
        /// The pinned queue's worker, or `None` for the global queue.
        worker: Option<usize>,
    },
}

/// One recorded event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
#[cfg_attr(docsrs, doc(cfg(feature = "trace")))]
pub struct Event {
    /// Nanoseconds since the pool was built (a monotonic clock).
    pub time_ns: u64,
    /// What happened.
    pub kind: EventKind,
}

/// The events one ring kept, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
#[cfg_attr(docsrs, doc(cfg(feature = "trace")))]
pub struct WorkerTrace {
    /// The events still in the ring, oldest first.
    pub events: Vec<Event>,
    /// How many older events the full ring dropped to make room.
    pub dropped: u64,
}

/// A snapshot of a pool's trace, from [`Pool::trace`](crate::Pool::trace).
/// Only with the cargo feature `trace`.
///
/// ```
/// # #[cfg(feature = "trace")] {
/// let pool = weft::Pool::builder().workers(2).trace(1024).build().unwrap();
/// pool.install(|| ());
/// let trace = pool.trace();
/// assert_eq!(trace.workers.len(), 2);
/// let mut json = Vec::new();
/// trace.write_chrome_json(&mut json).unwrap();
/// let mut svg = Vec::new();
/// trace.write_svg(&mut svg).unwrap();
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
#[cfg_attr(docsrs, doc(cfg(feature = "trace")))]
pub struct Trace {
    /// One entry per worker, in worker order. Empty rings if the pool was
    /// built without [`Builder::trace`](crate::Builder::trace).
    pub workers: Vec<WorkerTrace>,
    /// Injections made by threads outside the pool.
    pub outside: WorkerTrace,
    /// When the snapshot was taken, in nanoseconds since the pool was built.
    /// Spans still open then (a parked worker, a running task) end here.
    pub taken_ns: u64,
}

/// A bounded queue of events that drops its oldest when full.
struct Ring {
    events: VecDeque<Event>,
    capacity: usize,
    dropped: u64,
}

impl Ring {
    /// `preallocate`: whether to allocate the whole ring now, so that
    /// recording never allocates (workers' rings); spare seats' rings, most of
    /// which never record anything, grow on demand instead.
    fn new(capacity: usize, preallocate: bool) -> Ring {
        Ring {
            events: VecDeque::with_capacity(if preallocate { capacity } else { 0 }),
            capacity,
            dropped: 0,
        }
    }

    fn push(&mut self, event: Event) {
        if self.events.len() == self.capacity {
            self.dropped += 1;
            if self.events.pop_front().is_none() {
                return; // capacity 0: every event is dropped
            }
        }
        self.events.push_back(event);
    }

    fn snapshot(&self) -> WorkerTrace {
        WorkerTrace {
            events: self.events.iter().copied().collect(),
            dropped: self.dropped,
        }
    }
}

/// A pool's recorder, held in the registry's hooks when tracing is on.
pub(crate) struct Tracer {
    start: Instant,
    rings: Box<[CachePadded<Mutex<Ring>>]>,
    outside: Mutex<Ring>,
}

fn lock(ring: &Mutex<Ring>) -> MutexGuard<'_, Ring> {
    // Nothing panics while a ring is locked, but a poisoned ring is still valid.
    crate::facade::lock(ring)
}

impl Tracer {
    /// One ring per seat: `workers` workers, then `spares` spare seats.
    pub(crate) fn new(workers: usize, spares: usize, events_per_worker: usize) -> Tracer {
        Tracer {
            start: Instant::now(),
            rings: (0..workers + spares)
                .map(|seat| {
                    CachePadded::new(Mutex::new(Ring::new(events_per_worker, seat < workers)))
                })
                .collect(),
            outside: Mutex::new(Ring::new(events_per_worker, true)),
        }
    }

    fn now_ns(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn record(&self, worker: usize, kind: EventKind) {
        let time_ns = self.now_ns();
        lock(&self.rings[worker]).push(Event { time_ns, kind });
    }

    fn record_outside(&self, kind: EventKind) {
        let mut ring = lock(&self.outside);
        // Stamped under the lock, so that the shared ring stays in time order.
        let time_ns = self.now_ns();
        ring.push(Event { time_ns, kind });
    }

    /// Names the innermost task still running on `worker`, if its start is
    /// still in the ring.
    fn name_current(&self, worker: usize, name: &'static str) {
        let mut ring = lock(&self.rings[worker]);
        let mut depth = 0usize;
        for event in ring.events.iter_mut().rev() {
            match &mut event.kind {
                EventKind::TaskEnd => depth += 1,
                EventKind::TaskStart { name: slot } => {
                    if depth == 0 {
                        *slot = Some(name);
                        return;
                    }
                    depth -= 1;
                }
                _ => {}
            }
        }
    }

    /// The rings of the first `seats` seats (those that may have recorded).
    fn snapshot(&self, seats: usize) -> Trace {
        let workers = self.rings[..seats]
            .iter()
            .map(|ring| lock(ring).snapshot())
            .collect();
        let outside = lock(&self.outside).snapshot();
        Trace {
            workers,
            outside,
            taken_ns: self.now_ns(),
        }
    }
}

/// Records `kind` on worker `worker`'s ring if the pool traces.
#[inline]
pub(crate) fn record(registry: &Registry, worker: usize, kind: EventKind) {
    if let Some(tracer) = &registry.hooks.trace {
        tracer.record(worker, kind);
    }
}

/// Records an injection into `registry` on the injecting side: the calling
/// worker's ring if it belongs to the pool, the shared outside ring otherwise.
#[inline]
pub(crate) fn record_inject(registry: &Registry, pinned: Option<usize>) {
    if let Some(tracer) = &registry.hooks.trace {
        let kind = EventKind::Inject { worker: pinned };
        match crate::sched::context::worker_of(registry) {
            Some(worker) => tracer.record(worker.index(), kind),
            None => tracer.record_outside(kind),
        }
    }
}

/// Names the task running on the calling worker in its pool's trace.
pub(crate) fn name_current_task(name: &'static str) {
    if let Some(worker) = WorkerThread::current() {
        if let Some(tracer) = &worker.registry_arc().hooks.trace {
            tracer.name_current(worker.index(), name);
        }
    }
}

/// The snapshot behind `Pool::trace`.
pub(crate) fn snapshot(registry: &Registry) -> Trace {
    match &registry.hooks.trace {
        Some(tracer) => tracer.snapshot(registry.seats_in_use()),
        None => Trace {
            workers: vec![WorkerTrace::default(); registry.seats_in_use()],
            outside: WorkerTrace::default(),
            taken_ns: 0,
        },
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn event(time_ns: u64, kind: EventKind) -> Event {
        Event { time_ns, kind }
    }

    #[test]
    fn a_full_ring_drops_the_oldest() {
        let mut ring = Ring::new(3, true);
        for time in 0..5 {
            ring.push(event(time, EventKind::Park));
        }
        let kept = ring.snapshot();
        assert_eq!(kept.dropped, 2);
        let times: Vec<u64> = kept.events.iter().map(|e| e.time_ns).collect();
        assert_eq!(times, [2, 3, 4]);
    }

    #[test]
    fn a_ring_of_zero_keeps_nothing() {
        let mut ring = Ring::new(0, false);
        ring.push(event(1, EventKind::Park));
        assert_eq!(
            ring.snapshot(),
            WorkerTrace {
                events: Vec::new(),
                dropped: 1
            }
        );
    }
}
