//! Counters of what each seat's scheduler loop did, always on and cheap
//! enough not to show in the benchmarks. Each seat writes only its own
//! counters (plain load-then-store, no read-modify-write); the `stats`
//! extension reads them into a snapshot.

use std::sync::atomic::{AtomicU64, Ordering};

/// A worker's live counters.
#[derive(Default)]
pub(crate) struct WorkerCounters {
    pub(crate) stolen: AtomicU64,
    pub(crate) failed_steals: AtomicU64,
    /// Join halves this seat moved from its join stack to its local queue
    /// for searchers: asked for, `join`'s outermost half, or a loop's
    /// offer between chunks.
    pub(crate) halves_shared: AtomicU64,
    /// Join halves this seat took from another seat's join stack by force
    /// (counted in `stolen` too).
    pub(crate) halves_forced: AtomicU64,
    /// Waits of tasks on this seat that suspended their fiber (fiber.rs).
    pub(crate) suspensions: AtomicU64,
    /// Fibers this seat created (each a stack).
    pub(crate) fibers_created: AtomicU64,
    pub(crate) parks: AtomicU64,
    pub(crate) wakeups: AtomicU64,
    pub(crate) wakeups_without_work: AtomicU64,
    pub(crate) searching_ns: AtomicU64,
    pub(crate) parked_ns: AtomicU64,
}

impl WorkerCounters {
    /// Adds to a counter only its owner writes. Relaxed: the counters are
    /// statistics; no decision depends on them.
    pub(crate) fn add(counter: &AtomicU64, amount: u64) {
        counter.store(counter.load(Ordering::Relaxed) + amount, Ordering::Relaxed);
    }
}
