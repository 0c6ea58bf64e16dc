//! Latches: one-shot "done" flags that a waiting owner blocks on, set by whoever
//! finishes the owner's work. Setting one wakes the owner: a task on a fiber
//! by queueing its fiber to resume (fiber.rs), a worker waiting without one
//! through its sleep slot (it may be parked while helping), any other thread
//! by unparking it.

use std::ptr::NonNull;
use std::sync::Arc;

use crate::facade::thread::{self, Thread};
use crate::facade::{AtomicBool, AtomicUsize, Ordering};

use crate::sched::fiber::FiberCell;
use crate::sched::registry::Registry;
use crate::sched::worker::WorkerThread;

/// Something a finished job signals.
pub(crate) trait Latch {
    /// Signals the latch.
    ///
    /// # Safety
    /// `this` must be valid when the call starts. It may be freed by its waiting
    /// owner as soon as the signal is visible, so implementations touch nothing
    /// behind `this` after the store that publishes it (hence a raw pointer rather
    /// than a reference, which would have to stay valid for the whole call).
    unsafe fn set(this: *const Self);

    /// Whether a stack job that sets this latch is timed when it runs as a
    /// job, taken from a queue rather than popped back by its owner's
    /// `join` ([`note_ran_short`](Latch::note_ran_short)): two clock reads
    /// on a path that already paid a steal.
    const TIMED: bool = false;

    /// The job ran for less than [`SHORT_RUN`]. Called before
    /// [`set`](Latch::set), by the thread that then sets the latch.
    fn note_ran_short(&self) {}
}

/// A job's run shorter than what handing it to another worker costs: a
/// join half that short was not worth a thief (worker/join_owner.rs,
/// `thieves_may_come`). The hand-over (the share, the steal, the owner's
/// wait for the latch) took 1.5-2.5 us in traces of 2-worker pools
/// (docs/RAYON.md, "Session 22"); the bound sits under it, so that it
/// marks only halves a thief surely lost on, whatever the machine.
pub(crate) const SHORT_RUN: std::time::Duration = std::time::Duration::from_micros(1);

/// Who waits on an [`OwnerLatch`].
enum Owner {
    /// A worker that helps while it waits, alive at least until the latch
    /// is set (the owner waits for it). One pointer rather than its
    /// registry and index: `join` builds a latch on every call, and the
    /// setter, which runs once per stolen half, reads the two itself.
    /// Never null, which tells the variants apart (the other variant lies
    /// beside it), so that building a worker's latch stores no tag.
    Worker {
        worker: NonNull<WorkerThread>,
        /// The fiber the owner's task runs on, null if none: its cell,
        /// alive while the owner waits (fiber.rs).
        fiber: *const FiberCell,
    },
    /// A thread outside the pool, blocked in `thread::park`.
    Thread(Thread),
}

// The worker's pointer is the tag: no word of its own (see `Owner::Worker`).
#[cfg(not(loom))]
const _: () = assert!(std::mem::size_of::<Owner>() == 2 * std::mem::size_of::<usize>());

/// A latch that wakes the thread that made it.
pub(crate) struct OwnerLatch {
    done: AtomicBool,
    /// Set before `done` when the job ran as a job for less than
    /// [`SHORT_RUN`]. In `done`'s padding: the latch is no bigger.
    ran_short: AtomicBool,
    owner: Owner,
}

// Both flags fit the word before `owner`: the second costs `join` no space.
#[cfg(not(loom))]
const _: () = assert!(std::mem::size_of::<OwnerLatch>() == 3 * std::mem::size_of::<usize>());

// SAFETY: the raw worker pointer is only dereferenced while the owner waits
// (before `done` is published), when the worker it points to is alive, and
// only for fields never written after the worker starts; the fiber cell is
// an `Arc`'s, taken as a reference of the setter's own before that store.
unsafe impl Sync for OwnerLatch {}
// SAFETY: as for `Sync`: the pointer is used only under the same condition.
unsafe impl Send for OwnerLatch {}

impl OwnerLatch {
    /// A latch owned by the calling thread.
    pub(crate) fn for_current_thread() -> OwnerLatch {
        match WorkerThread::current() {
            Some(worker) => OwnerLatch::for_worker(worker),
            None => OwnerLatch {
                done: AtomicBool::new(false),
                ran_short: AtomicBool::new(false),
                owner: Owner::Thread(thread::current()),
            },
        }
    }

    /// A latch owned by `worker`, which must be the calling thread's.
    #[inline]
    pub(crate) fn for_worker(worker: &WorkerThread) -> OwnerLatch {
        OwnerLatch {
            done: AtomicBool::new(false),
            ran_short: AtomicBool::new(false),
            owner: Owner::Worker {
                worker: NonNull::from(worker),
                fiber: worker.fibers().current_cell(),
            },
        }
    }

    /// Whether a worker owns the latch (which then holds nothing to drop).
    pub(crate) fn is_a_workers(&self) -> bool {
        matches!(self.owner, Owner::Worker { .. })
    }

    /// Whether the latch was set. Acquire: the owner then sees everything the
    /// setter wrote before setting (the job's result).
    #[inline]
    pub(crate) fn probe(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// Whether the job, run as a job, ran for less than [`SHORT_RUN`].
    /// Meaningful once [`probe`](OwnerLatch::probe) saw the latch set;
    /// Relaxed, as that Acquire load ordered the setter's store before it.
    pub(crate) fn ran_short(&self) -> bool {
        self.ran_short.load(Ordering::Relaxed)
    }

    /// Blocks the owner until the latch is set, running other tasks meanwhile if
    /// the owner is a worker.
    pub(crate) fn wait(&self) {
        match WorkerThread::current() {
            Some(worker) => worker.wait_until(&|| self.probe()),
            None => {
                while !self.probe() {
                    // A stray unpark only costs another check of the flag.
                    thread::park();
                }
            }
        }
    }
}

impl Latch for OwnerLatch {
    const TIMED: bool = true;

    fn note_ran_short(&self) {
        // Relaxed: published by `set`'s Release store of `done`.
        self.ran_short.store(true, Ordering::Relaxed);
    }

    unsafe fn set(this: *const Self) {
        // SAFETY: `this` is valid until the `done` store below (trait contract);
        // everything needed afterwards is copied out first.
        unsafe {
            match &(*this).owner {
                Owner::Worker { worker, fiber } => {
                    // The owner's worker is alive while it waits, and its
                    // index and registry are never written after it starts,
                    // so reading them from this thread races with nothing.
                    let owner: &WorkerThread = worker.as_ref();
                    let index = owner.index();
                    // The cell too must outlive the store: a reference of
                    // our own, taken while the owner still waits.
                    let fiber = (!fiber.is_null()).then(|| {
                        Arc::increment_strong_count(*fiber);
                        Arc::from_raw(*fiber)
                    });
                    let registry: &Arc<Registry> = owner.registry_arc();
                    // The owner may finish, and its pool shut down, once `done` is
                    // visible. A setter that is a worker of the same pool keeps the
                    // registry alive by itself; any other setter holds a reference.
                    let helper = WorkerThread::current()
                        .filter(|worker| Arc::ptr_eq(worker.registry_arc(), registry));
                    let keep_alive = helper.is_none().then(|| Arc::clone(registry));
                    let registry_ptr: *const Registry = Arc::as_ptr(registry);
                    // Release: publishes the job's result to the owner's Acquire probe.
                    // `wake_worker` fences before it looks at the owner's slot.
                    (*this).done.store(true, Ordering::Release);
                    match fiber {
                        // The cell's wake queues the fiber if it suspended,
                        // and wakes the seat in any case (it may be helping).
                        Some(fiber) => fiber.wake(),
                        None => {
                            (*registry_ptr).sleep.wake_worker(index);
                        }
                    }
                    drop(keep_alive);
                    if let Some(helper) = helper {
                        // A worker that ran another's half of a `join`: that
                        // join, often a loop's, is about to end, and the
                        // next call should find this worker searching, not
                        // parked (registry.rs, `linger_after_call`).
                        helper.registry_arc().linger_after_call();
                    }
                }
                Owner::Thread(thread) => {
                    let thread = thread.clone();
                    // Release: publishes the job's result to the owner's Acquire
                    // probe; `unpark` wakes it if it parked before the store.
                    (*this).done.store(true, Ordering::Release);
                    thread.unpark();
                }
            }
        }
    }
}

/// A latch set when a count of outstanding jobs drops to zero (`scope`).
pub(crate) struct CountLatch {
    pending: AtomicUsize,
    inner: OwnerLatch,
}

impl CountLatch {
    /// Starts at one: the scope body itself is outstanding.
    pub(crate) fn for_current_thread() -> CountLatch {
        CountLatch {
            pending: AtomicUsize::new(1),
            inner: OwnerLatch::for_current_thread(),
        }
    }

    pub(crate) fn increment(&self) {
        // Relaxed: the incrementer already holds a count (the body or a running
        // job of the scope), so the count cannot reach zero meanwhile.
        self.pending.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn wait(&self) {
        self.inner.wait();
    }
}

impl Latch for CountLatch {
    unsafe fn set(this: *const Self) {
        // SAFETY: valid at the start of the call (trait contract); after the last
        // decrement only `inner`'s own `set` touches it, under the same contract.
        unsafe {
            // AcqRel: the last decrementer sees every other job's writes, and
            // passes them on through `inner`'s Release store.
            if (*this).pending.fetch_sub(1, Ordering::AcqRel) == 1 {
                OwnerLatch::set(&(*this).inner);
            }
        }
    }
}
