//! Blocking the calling thread until a condition holds, the way every wait in
//! weft does it: a worker keeps running its pool's tasks meanwhile (so waits on
//! queued tasks cannot deadlock the pool); any other thread parks.
//!
//! Whoever makes the condition true afterwards calls [`Waiter::wake`] on the
//! waiter that registered with it.

use std::sync::Arc;

use crate::facade::thread::{self, Thread};
use std::time::Instant;

use crate::sched::registry::Registry;
use crate::sched::worker::WorkerThread;

/// A thread blocked in [`block_until`], as the party that will wake it sees it.
#[derive(Clone)]
pub(crate) enum Waiter {
    Worker {
        registry: Arc<Registry>,
        index: usize,
    },
    Thread(Thread),
}

impl Waiter {
    /// The calling thread as a waiter.
    pub(crate) fn current() -> Waiter {
        match WorkerThread::current() {
            Some(worker) => Waiter::Worker {
                registry: Arc::clone(worker.registry_arc()),
                index: worker.index(),
            },
            None => Waiter::Thread(thread::current()),
        }
    }

    /// Wakes the waiter after its condition was made true. Spurious wakes are
    /// harmless: the waiter checks its condition again.
    pub(crate) fn wake(&self) {
        match self {
            Waiter::Worker { registry, index } => {
                registry.sleep.wake_worker(*index);
            }
            Waiter::Thread(thread) => thread.unpark(),
        }
    }

    /// Whether two waiters are the same thread.
    pub(crate) fn same_as(&self, other: &Waiter) -> bool {
        match (self, other) {
            (
                Waiter::Worker { registry, index },
                Waiter::Worker {
                    registry: other_registry,
                    index: other_index,
                },
            ) => Arc::ptr_eq(registry, other_registry) && index == other_index,
            (Waiter::Thread(thread), Waiter::Thread(other)) => thread.id() == other.id(),
            _ => false,
        }
    }
}

/// Blocks until `ready()` holds or `deadline` passes; returns whether it holds.
/// The caller must have registered [`Waiter::current`] with whatever will make
/// `ready()` true, before calling this.
pub(crate) fn block_until(ready: &dyn Fn() -> bool, deadline: Option<Instant>) -> bool {
    if let Some(worker) = WorkerThread::current() {
        return worker.wait_until_deadline(ready, deadline);
    }
    loop {
        if ready() {
            return true;
        }
        match deadline {
            None => thread::park(),
            Some(deadline) => {
                let now = Instant::now();
                if now >= deadline {
                    return ready();
                }
                // loom has no timed park; a model's waits end by a wake.
                #[cfg(not(loom))]
                thread::park_timeout(deadline - now);
                #[cfg(loom)]
                thread::park();
            }
        }
    }
}
