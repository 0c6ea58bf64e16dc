//! # weft
//!
//! A work-stealing task scheduler that gives every idle worker a task at once
//! when work arrives, and parks every worker (no CPU at all) when none is left.
//!
//! Submitting `k` tasks to a pool whose workers sleep wakes `min(k, sleepers)`
//! of them straight away, from the submitter: no task waits behind another on
//! one worker while others sleep, and no wake-up cascade trickles through the
//! pool. Idle workers search other queues for a short, bounded time, a bounded
//! number at a time, and then park on a condition variable. The protocol and
//! the argument for its invariants live in one module (`sleep.rs`).
//!
//! ```
//! let pool = weft::Pool::builder().workers(4).build().unwrap();
//! let (left, right) = pool.join(|| (1..=50).sum::<u32>(), || (51..=100).sum::<u32>());
//! assert_eq!(left + right, 5050);
//!
//! let wg = weft::WaitGroup::new();
//! for _ in 0..8 {
//!     wg.add(1);
//!     let wg = wg.clone();
//!     pool.spawn(move || {
//!         wg.done();
//!     });
//! }
//! wg.wait();
//! ```
//!
//! ## Fork-join
//!
//! [`join`] (and [`join_context`], [`Pool::join`]) leaves its second closure
//! on a deque of the calling worker's own while the first runs, with no
//! atomic read-modify-write and no fence when nobody takes it, and runs it
//! inline afterwards: a few nanoseconds a call. An idle worker that sees
//! the pending half asks the owner for it (the owner hands its oldest half
//! over at its next `join`), and takes it by force after about 20 us
//! without an answer, so two long halves still run side by side:
//! `join(|| sleep(10 ms), || sleep(10 ms))` takes 10 ms on two workers, not
//! 20 as on heartbeat schedulers. The missing fences are made up for by a
//! process-wide barrier on the rare side (Linux `membarrier`; a thief taking
//! by force, the first worker of a busy pool to go idle); where that call
//! is unavailable both sides use ordinary fences. No timer or heartbeat
//! runs: an idle pool stays parked.
//!
//! ## Waiting on a worker helps
//!
//! When a worker thread waits — in `join`, `scope`, `install`,
//! [`JoinHandle::join`], or on a [`WaitGroup`], [`Event`], [`Ticket`] or
//! [`Condvar`] — it runs other queued tasks of its pool until its condition
//! holds. A pool whose workers all wait on tasks that are still queued
//! therefore makes progress instead of deadlocking.
//!
//! The known limit of this approach: a helping worker runs the other task on
//! top of its own stack, so it can only return from its wait once that task
//! returns. If the helped task itself waits for something that only the
//! helper's own task will do after its wait returns, the two wait on each
//! other and the worker deadlocks. marl's `event-chain` (task *i* waits on
//! event *i*, then signals *i + 1*), `event-baton` (two tasks hand control back
//! and forth) and `ticket` benchmarks are of this shape when their tasks are
//! queued in the pool they wait in. Two ways out, both deadlock-free:
//!
//! * futures: [`spawn_future`] with `wait_async` on the primitive, which hold
//!   no worker while they wait (how `weft-bench` runs those three shapes);
//! * [`blocking`]: a wait inside `weft::blocking(|| event.wait())` blocks the
//!   thread instead of helping, and a spare thread takes the worker's place
//!   meanwhile, so the pool keeps its capacity (about one thread wake a call).
//!
//! Waits on work the waiting task spawned itself (fork-join through a
//! `WaitGroup`, `JoinHandle` or `scope`) are safe as long as those tasks do
//! not in turn wait for the waiting task.
//!
//! Helping also nests on the stack: a queued task that waits while its
//! worker is already helping runs the next task on top of both. Tasks that
//! each block on one event nobody has signalled yet pile up one frame chain
//! per task on their worker's stack: with the default 2 MiB worker stack,
//! about 3,700 such waits nest in a release build and about 1,500 in a debug
//! build (one worker, tasks that each call `Event::wait`) before the thread
//! overflows its stack and the process aborts. [`Builder::stack_size`] moves
//! the limit in proportion; so do the two ways out above, which do not nest.
//!
//! ## Blocking calls
//!
//! A task that blocks its thread (file or socket I/O, a sleep, a lock held
//! elsewhere) should do it inside [`blocking`], which lends the worker a
//! spare thread for the duration; see there for the cost and limits
//! ([`Builder::max_blocking`]).
//!
//! ## Panics
//!
//! A panic in a fire-and-forget task goes to the pool's panic handler
//! ([`Builder::panic_handler`]); the worker carries on. `join`, `scope`,
//! `install` and [`JoinHandle::join`] hand the panic to their caller after the
//! other work they own has finished.

#![warn(missing_debug_implementations, unsafe_op_in_unsafe_fn)]
#![deny(missing_docs)]
#![deny(clippy::undocumented_unsafe_blocks)]
// Under `--cfg loom` only the core and its models are built, and much of the
// core is there for the API and extensions that loom leaves out.
#![cfg_attr(loom, allow(dead_code, unused_imports))]

/// Runs the enclosed statement only with the `trace` feature: a tracing hook
/// in the worker loop. Without the feature it expands to nothing, so the hooks
/// cost nothing at all.
#[cfg(feature = "trace")]
#[cfg_attr(loom, allow(unused_macros))]
macro_rules! trace_hook {
    ($($hook:tt)*) => { $($hook)* };
}
#[cfg(not(feature = "trace"))]
#[cfg_attr(loom, allow(unused_macros))]
macro_rules! trace_hook {
    ($($hook:tt)*) => {};
}

// The layers, in the order they depend on each other: the crate-wide sync
// facade and thread context; the core scheduler; the API over it; the
// extensions, each over the core and the API (see each folder's module docs).
#[cfg(not(loom))]
mod api;
#[cfg(not(loom))]
mod blocking;
mod context;
mod facade;
mod future;
mod sched;
#[cfg(not(loom))]
mod stats;
#[cfg(not(loom))]
mod sync;
#[cfg(all(feature = "trace", not(loom)))]
pub mod trace;

#[cfg(not(loom))]
pub use crate::api::builder::{
    BuildError, Builder, DEFAULT_MAX_BLOCKING, DEFAULT_SPIN, MIN_STACK_SIZE, WORKERS_ENV,
};
#[cfg(not(loom))]
pub use crate::api::join::{join, join_context, FnContext};
#[cfg(not(loom))]
pub use crate::api::pool::{Handle, Pool, SpawnError};
#[cfg(not(loom))]
pub use crate::api::scope::{scope, Scope};
#[cfg(not(loom))]
pub use crate::api::task::JoinHandle;
#[cfg(not(loom))]
pub use crate::blocking::blocking;
#[cfg(not(loom))]
pub use crate::future::block_on::{block_on, yield_now, YieldNow};
#[cfg(not(loom))]
pub use crate::future::spawn::spawn_future;
#[cfg(not(loom))]
pub use crate::stats::{Stats, WorkerStats};
#[cfg(not(loom))]
pub use crate::sync::{
    Condvar, Event, EventMode, Ticket, TicketQueue, WaitGroup, WaitTimeoutResult,
};
#[cfg(all(feature = "trace", not(loom)))]
pub use crate::trace::Trace;

/// Runs `task` on the current worker's pool (its own queue), or on the global
/// pool when called outside any pool.
///
/// ```
/// let (sender, receiver) = std::sync::mpsc::channel();
/// weft::spawn(move || sender.send(weft::current_worker_index().is_some()).unwrap());
/// assert!(receiver.recv().unwrap());
/// ```
#[cfg(not(loom))]
pub fn spawn<F>(task: F)
where
    F: FnOnce() + Send + 'static,
{
    match sched::worker::WorkerThread::current() {
        // SAFETY: `F: 'static`, so the job borrows nothing.
        Some(worker) => worker.push(unsafe { sched::job::ClosureJob::new_ref(task) }),
        None => {
            if api::task::spawn_in(&api::global::free_function_pool(), task).is_err() {
                unreachable!("the pool of a free function accepts spawns");
            }
        }
    }
}

/// The index of the calling thread within its pool, if it is one of the
/// pool's workers: always below the pool's `workers()`, so valid for
/// [`Pool::spawn_on`].
///
/// `None` elsewhere, including inside [`blocking`] (the thread is not a
/// worker until the call returns) and on the spare threads that stand in for
/// a blocked worker meanwhile: they run the pool's tasks, but are none of its
/// `workers()` and have no pinned queue.
#[cfg(not(loom))]
pub fn current_worker_index() -> Option<usize> {
    sched::worker::WorkerThread::current().and_then(sched::worker::WorkerThread::worker_index)
}

/// Names the task running on the calling worker in its pool's trace (cargo
/// feature `trace`, with `Builder::trace` on): the way to name a task spawned
/// in a [`Scope`] or through `weft::spawn`. The name goes on the innermost task
/// still running; elsewhere, or without tracing, this does nothing.
///
/// ```
/// let pool = weft::Pool::builder().workers(2).build().unwrap();
/// pool.scope(|s| {
///     s.spawn(|_| {
///         weft::name_current_task("render");
///     });
/// });
/// ```
#[cfg(not(loom))]
#[inline]
pub fn name_current_task(name: &'static str) {
    #[cfg(feature = "trace")]
    sched::recorder::name_current_task(name);
    #[cfg(not(feature = "trace"))]
    let _ = name;
}
