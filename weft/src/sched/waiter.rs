//! Blocking the calling task or thread until a condition holds, the way every
//! wait in weft does it: a task on a worker's fiber suspends, and the worker
//! goes on with other tasks (fiber.rs); a worker whose wait cannot suspend
//! keeps running its pool's tasks on top of the wait (so waits on queued
//! tasks still get them run); any other thread parks.
//!
//! Whoever makes the condition true afterwards calls [`Waiter::wake`] on the
//! waiter that registered with it.

use std::sync::Arc;

use crate::facade::thread::{self, Thread};
use std::time::Instant;

use crate::sched::fiber::FiberCell;
use crate::sched::registry::Registry;
use crate::sched::worker::WorkerThread;

/// The deadline of a wait limited to `timeout` from now, the one rule every
/// `*_timeout` wait of weft follows (crate docs, "Waits with a time limit"):
/// a timeout past what `Instant` can hold (`Duration::MAX`) is no deadline
/// at all, and the wait waits without a limit.
pub(crate) fn deadline_after(timeout: std::time::Duration) -> Option<Instant> {
    Instant::now().checked_add(timeout)
}

/// A thread blocked in [`block_until`], as the party that will wake it sees it.
#[derive(Clone)]
pub(crate) enum Waiter {
    /// A task on a worker's fiber.
    Fiber(Arc<FiberCell>),
    Worker {
        registry: Arc<Registry>,
        index: usize,
    },
    Thread(Thread),
}

impl Waiter {
    /// The calling task (on a fiber) or thread as a waiter.
    pub(crate) fn current() -> Waiter {
        match WorkerThread::current() {
            Some(worker) => match worker.fibers().current_handle() {
                Some(fiber) => Waiter::Fiber(fiber),
                None => Waiter::Worker {
                    registry: Arc::clone(worker.registry_arc()),
                    index: worker.index(),
                },
            },
            None => Waiter::Thread(thread::current()),
        }
    }

    /// Wakes the waiter after its condition was made true. Spurious wakes are
    /// harmless: the waiter checks its condition again.
    pub(crate) fn wake(&self) {
        match self {
            Waiter::Fiber(fiber) => fiber.wake(),
            Waiter::Worker { registry, index } => {
                registry.sleep.wake_worker(*index);
            }
            Waiter::Thread(thread) => thread.unpark(),
        }
    }

    /// Whether two waiters are the same thread.
    pub(crate) fn same_as(&self, other: &Waiter) -> bool {
        match (self, other) {
            (Waiter::Fiber(fiber), Waiter::Fiber(other)) => Arc::ptr_eq(fiber, other),
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
