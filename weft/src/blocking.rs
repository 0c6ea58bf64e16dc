//! Blocking calls from tasks (an extension over the core): [`blocking`]
//! lends the calling worker one of its pool's spare seats (`sched/spares.rs`,
//! which says how a spare keeps the pool's capacity and the protocol's
//! invariants) for the length of the call.
//!
//! # Cost
//!
//! A lend is a lock, and when the spare sleeps one thread wake (a few to tens
//! of microseconds); the first lend of each spare seat starts its thread. A
//! short call pays that for nothing: use [`blocking`] for calls that block for
//! longer than a wake-up takes (I/O, sleeps, locks held by other threads).

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

use crate::sched::context::BlockedGuard;
use crate::sched::worker::WorkerThread;

/// Runs `call` — a call that blocks the thread (I/O, a sleep, a lock another
/// thread holds) — from a task without shrinking the pool's capacity: while it
/// runs, a spare thread works in the calling worker's stead, running queued
/// tasks and taking tasks from the blocked worker's queue.
///
/// Inside `call` the thread is not a worker: [`current_worker_index`]
/// is `None`, waits on weft's primitives block the thread instead of running
/// other tasks on top of `call`, and `weft::spawn`, `join`, `scope` and
/// `spawn_future` act on the worker's pool. Afterwards the thread is the same
/// worker again, with its own queue.
///
/// Off a worker thread this just runs `call`. If all of the pool's spare seats
/// ([`Builder::max_blocking`](crate::Builder::max_blocking)) are in use, or a
/// spare thread cannot be started, `call` runs without a stand-in: the pool
/// then has one worker fewer until it returns. Tasks pinned to the blocked
/// worker (`spawn_on`) wait for it.
///
/// Cost: a lock and, when the lent spare is asleep, one thread wake (a few to
/// tens of microseconds); the first use of each spare seat starts its thread,
/// and when every spare is busy but one is just leaving, the call waits for
/// that one. Worth it for calls that block longer than that.
///
/// A panic in `call` is passed on to the caller, after the spare was told to
/// stop.
///
/// [`current_worker_index`]: crate::current_worker_index
///
/// ```
/// use std::time::Duration;
///
/// let pool = weft::Pool::builder().workers(1).build().unwrap();
/// let (sender, receiver) = std::sync::mpsc::channel();
/// pool.install(move || {
///     // The only worker blocks, yet the task below runs meanwhile: a spare
///     // thread stands in for the worker until `recv` returns.
///     weft::spawn(move || sender.send(42).unwrap());
///     let got = weft::blocking(|| receiver.recv_timeout(Duration::from_secs(10)));
///     assert_eq!(got, Ok(42));
/// });
/// ```
pub fn blocking<F, R>(call: F) -> R
where
    F: FnOnce() -> R,
{
    let Some(worker) = WorkerThread::current() else {
        return call();
    };
    let registry = Arc::clone(worker.registry_arc());
    // A future waiting in the worker's `next` slot must not wait for the call.
    worker.flush_next();
    let spare = registry.spares.lend(&registry, worker.index());
    let outcome = {
        // The thread is no worker until the call returns: waits block it
        // instead of stacking tasks on a thread that is meant to block, and
        // free functions act on this pool (context.rs).
        let _not_a_worker = BlockedGuard::enter(Arc::clone(&registry));
        panic::catch_unwind(AssertUnwindSafe(call))
    };
    if let Some(spare) = spare {
        spare.retire(&registry);
    }
    match outcome {
        Ok(value) => value,
        Err(payload) => panic::resume_unwind(payload),
    }
}
