//! # weft
//!
//! A work-stealing task scheduler that gives every idle worker a task at once
//! when work arrives, and parks every worker (no CPU at all) when none is left.
//!
//! Submitting `k` tasks to a pool whose workers sleep wakes `min(k, sleepers)`
//! of them straight away: no task waits behind another on one worker while
//! others sleep, and no one-at-a-time cascade trickles through the pool. The
//! submitter makes every wake where each worker has a core; in a pool of more
//! workers than cores, where a wake preempts a running thread, the woken
//! workers share them out in a tree. Idle workers search other queues for a short, bounded time, a bounded
//! number at a time, and then park on a condition variable. The protocol and
//! the argument for its invariants live in one module of the source
//! (`src/sched/sleep.rs`).
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
//! ## Parallel loops
//!
//! [`prelude`] brings rayon's parallel-iterator traits, so a loop written
//! for rayon switches with its import (`use weft::prelude::*;`):
//!
//! ```
//! use weft::prelude::*;
//!
//! let words = ["fork", "join", "steal", "park"];
//! let lengths: Vec<usize> = words.par_iter().map(|w| w.len()).collect();
//! assert_eq!(lengths, [4, 4, 5, 4]);
//! let evens = (0..1_000_000u64).into_par_iter().filter(|x| x % 2 == 0).count();
//! assert_eq!(evens, 500_000);
//! ```
//!
//! No grain size needs tuning: a loop splits about once per worker, splits
//! further where an idle worker took work, and each piece offers its rest
//! to idle workers between chunks of a few microseconds ([`iter::plumbing`]
//! has the rule). Called from a thread outside any pool, a loop starts on
//! that thread and hands its rest to the global pool after a couple of
//! microseconds, so a short loop wakes no worker at all; the calling thread
//! then keeps folding beside the pool, and a long loop runs on as many
//! threads as the pool has workers, at most the cores, the caller among
//! them (with one worker, the caller alone). See [`iter`] for
//! what is there and [`ParallelIterator::deterministic`](iter::ParallelIterator::deterministic)
//! for reductions that give the same floating-point result on every run.
//!
//! ## Waiting inside a task
//!
//! A task that waits — in `join` for a half another worker runs, `scope`,
//! `install`, [`JoinHandle::join`], [`block_on`], or on a [`WaitGroup`],
//! [`Event`], [`Ticket`] or [`Condvar`] — *suspends*, as a task on marl's
//! fibers does: every task runs on a fiber (a stack of its worker's), and a
//! wait whose condition does not hold switches its worker to another fiber,
//! which goes on running the pool's other tasks. When the condition holds,
//! the task resumes on the same worker thread (its thread-locals and any
//! `!Send` guard it holds stay valid), ahead of the worker's new work. So
//! tasks may wait for each other in any shape — a chain of tasks each waiting
//! for the previous one's event, two tasks handing a baton back and forth,
//! a thousand tickets served in order, on one worker or many — and the pool
//! neither deadlocks nor loses a worker to the wait.
//!
//! A task that never waits pays nothing for this: it runs on the fiber's
//! stack as a plain call, with no switch and no allocation. A wait that
//! suspends costs two stack switches (a few nanoseconds each) and, the first
//! time a worker needs one more fiber, a stack mapping; idle fibers are kept
//! and reused (up to 1,024 a worker). The sizes: each fiber's stack has [`Builder::stack_size`]
//! bytes (default [`DEFAULT_FIBER_STACK`], 2 MiB) reserved, of which the
//! operating system commits only the pages the task touched; at most
//! [`Builder::max_suspended`] tasks of a pool are suspended at once
//! (default [`DEFAULT_MAX_SUSPENDED`]). Measured with 10,000 tasks suspended
//! at once, each waiting on an event at a shallow depth: 4.3 KiB of resident
//! memory per task (one touched stack page and the bookkeeping) and 2 MiB of
//! reserved address space ([the measurement][fibers-memory]; the crate's
//! `suspended_memory` example repeats it).
//!
//! [fibers-memory]: https://github.com/weft-rs/weft/blob/main/docs/FIBERS.md#suspended-memory
//!
//! Timed waits (`wait_timeout`, `wait_deadline`) suspend too: the worker
//! resumes the task at its deadline (or when the task it is running then
//! returns), parking until then if it has nothing else to do. No timer thread exists; a pool with no timed wait parks with
//! no timeout.
//!
//! Where a wait cannot suspend, the worker instead runs other queued tasks
//! on top of the waiting one until the condition holds (it *helps*):
//!
//! * on targets without fibers (anything but x86_64 and AArch64), under loom
//!   and Miri, and in a pool built with [`Builder::fibers`]`(false)`;
//! * when the pool already has [`Builder::max_suspended`] tasks suspended,
//!   or a new fiber's stack cannot be mapped. The fibers of every pool in
//!   the process share one budget of stacks: on Linux, where a process may
//!   hold `vm.max_map_count` memory mappings (65,530 by default) and a
//!   stack is two, seven eighths of that cap, 28,669 stacks by default
//!   (idle fibers included), leaving 8,191 mappings for the rest of the
//!   process. Two pools with the default cap of 16,384 suspended tasks
//!   each do not both fit: the waits past the budget help;
//! * on the spare threads of [`blocking`], and in a wait made while the
//!   thread unwinds from a panic (in a destructor).
//!
//! Helping keeps queued work moving, but the helped task sits on top of the
//! waiting one, which cannot return before it: if the helped task waits for
//! something only the task beneath will do after its own wait, the two
//! deadlock. Helping also nests on the stack: a helping wait on a fiber
//! that finds less than a quarter of its stack left runs no more tasks and
//! blocks its thread until its condition holds (looking at it at most a
//! millisecond apart), so a pool whose every worker is there runs nothing
//! else until one of those waits ends. On the
//! thread's own stack (no fibers) nothing checks the depth: about 3,700
//! waits deep in a release build overflow it. Futures
//! ([`spawn_future`] with `wait_async`) and [`blocking`] are the ways out
//! there.
//!
//! Two things suspension cannot fix. A task that waits while it holds a
//! lock that is not weft's (a `std::sync::Mutex` guard, say) keeps holding
//! it while suspended; another task on the same worker that then blocks on
//! that lock blocks the worker's thread, and with it the suspended holder:
//! release such locks before a weft wait ([`Condvar`] does so for the mutex
//! it is given), or have the task that holds one across a wait do the
//! locking, the wait and the unlocking all inside one [`blocking`] call
//! (its wait then blocks that thread, not a fiber another task's thread
//! must resume). Putting the *other* task's lock inside [`blocking`] does
//! not help: the suspended holder resumes only on the worker thread that
//! call blocks. And a wait on something
//! only a thread outside the pool will do simply waits, suspended, holding
//! its fiber until then.
//!
//! ## Waits with a time limit
//!
//! Every blocking wait of weft has two limited forms, named alike:
//! `*_timeout(Duration)` and `*_deadline(Instant)` ([`Event::wait_timeout`],
//! [`WaitGroup::wait_deadline`], [`Condvar::wait_timeout`],
//! [`JoinHandle::join_deadline`](crate::JoinHandle::join_deadline), ...).
//! Each says whether what it waited for happened: `true` (or `Ok` with the
//! task's result) if it did, `false` (or the handle back in `Err`, to wait
//! again) if time ran out first. The one exception keeps std's shape, so
//! that code moves over from `std::sync::Condvar` unchanged: `Condvar`'s
//! limited waits return the guard with a [`WaitTimeoutResult`], whose
//! [`timed_out`](WaitTimeoutResult::timed_out) says the opposite. Any
//! duration is accepted: a timeout past what `Instant` can hold
//! (`Duration::MAX`) waits without a limit, and a deadline already passed
//! checks once and returns.
//!
//! ## Blocking calls
//!
//! A task that blocks its thread (file or socket I/O, a sleep, a lock held
//! elsewhere) should do it inside [`blocking`], which lends the worker a
//! spare thread for the duration; see there for the cost and limits
//! ([`Builder::max_blocking`]).
//!
//! ## Task order
//!
//! Other workers take tasks from any queue at any time, oldest first, so
//! order is only ever a matter of one worker's preference. Spawned *on a
//! worker* (from one of its tasks):
//!
//! * [`spawn`] (and [`Pool::spawn`], [`Scope::spawn`]) tasks run
//!   newest-first on that worker: they go onto its local queue, whose
//!   newest task it takes first (as do the halves of its pending `join`s,
//!   which it takes before them);
//! * [`spawn_fifo`] (and [`Pool::spawn_fifo`], [`Handle::spawn_fifo`],
//!   [`Scope::spawn_fifo`], and [`Scope::spawn`] in a FIFO scope of
//!   [`scope_fifo`], [`in_place_scope_fifo`] or their `Pool` methods) tasks
//!   run oldest-first relative to each other, once the worker has no
//!   `spawn` task or `join` half left: they go onto a first-in first-out
//!   queue of the worker's, which futures woken during their own poll
//!   (as by [`yield_async`]) join in the same order.
//!
//! Spawned *from outside* the pool, both kinds go through the pool's
//! global queue, which workers take from oldest-first; a worker moves a
//! batch of it into its own queue in the same order, where the tasks that
//! batch's tasks spawn go in front of the rest of the batch.
//!
//! The fairness pick changes this once every 61 tasks a worker takes: that
//! take looks first at the queue of tasks pinned to the worker
//! ([`Pool::spawn_on`], broadcasts, [`Scope::spawn_broadcast`]), then at
//! the global queue, then at the oldest `spawn_fifo` task, then at the
//! oldest `spawn` task, so that no queue starves behind a stream of new
//! local work. So, on one worker: the
//! `spawn_fifo` tasks still run oldest-first among themselves (one of them
//! may run ahead of pending `spawn` tasks); one `spawn` task in 61 may be
//! the oldest pending one rather than the newest; and a pick made while the
//! worker holds part of a batch from the global queue runs the next tasks
//! of the global queue ahead of that part.
//!
//! This differs from rayon in one case: rayon interleaves the `spawn` and
//! `spawn_fifo` tasks of one worker by the time of their spawn (each
//! `spawn_fifo` leaves a marker where a `spawn` task would go, and the
//! marker runs the oldest `spawn_fifo` task), where weft runs the worker's
//! `spawn` tasks first.
//!
//! ## rayon's names
//!
//! Besides [`join`], [`join_context`], [`scope`], [`spawn`] and
//! [`Pool::broadcast`]/[`Pool::install`], weft has rayon-core's free
//! functions [`current_num_threads`], [`current_thread_index`] (the alias of
//! [`current_worker_index`]), [`broadcast`], [`spawn_broadcast`],
//! [`spawn_fifo`], [`in_place_scope`], [`scope_fifo`],
//! [`in_place_scope_fifo`], and the synchronous [`yield_now`] and
//! [`yield_local`], which run one pending task in place; on the pool,
//! [`Pool::spawn_fifo`], [`Pool::spawn_broadcast`], [`Pool::scope_fifo`],
//! [`Pool::in_place_scope`] and [`Pool::in_place_scope_fifo`] (and on a
//! [`Handle`], `spawn_fifo` and `spawn_broadcast`, which hand the task back
//! once the pool is dropped); in a scope, [`Scope::spawn_broadcast`].
//!
//! rayon's `ScopeFifo` is not a type of its own here: a FIFO scope is a
//! [`Scope`] made by one of the `*_fifo` functions, whose [`Scope::spawn`]
//! then queues as [`Scope::spawn_fifo`] does (the tasks it gets are in the
//! same FIFO scope), and [`ScopeFifo`] is an alias of `Scope`. So code
//! written for rayon's `ScopeFifo::spawn_fifo` compiles as it is, and
//! `Scope::spawn_fifo` is FIFO in any scope. The order within one worker
//! is weft's ("Task order" above), not rayon's per-scope FIFO queues.
//!
//! To start the worker threads itself, a program gives the builder rayon's
//! [`Builder::spawn_handler`], which gets a [`ThreadBuilder`] per worker
//! (with its `index`, `name`, `stack_size` and `run`), or builds with
//! [`Builder::build_scoped`], whose threads are scoped threads that may
//! borrow from the caller. The handler `spawn_handler` stores is `'static`
//! (weft's builder is not generic over it, as rayon's is); one that borrows
//! goes to [`Builder::build_with_spawn_handler`] instead, and threads that
//! borrow go through `build_scoped`. With rayon's [`Builder::use_current_thread`] the
//! building thread is the pool's worker 0 until it drops the pool, and the
//! pool starts one thread fewer; that thread runs the pool's tasks only
//! while it waits in the pool, and a pool dropped away from it keeps
//! running for it (see the method).
//!
//! From tokio: [`JoinSet`], a group of closures and futures joined in the
//! order they finish (with [`JoinError`] and [`AbortHandle`]; from async
//! code, [`JoinSet::join_next_async`]), and
//! [`Pool::shutdown_timeout`], which bounds how long queued tasks may keep
//! starting once the pool shuts down, drops the rest and counts them
//! ([`ShutdownReport`]).
//!
//! For loops, [`prelude`] has rayon's `ParallelIterator`,
//! `IndexedParallelIterator`, `IntoParallelIterator`, `par_iter`,
//! `par_iter_mut`, `par_chunks`, `par_chunks_mut`, `par_windows`, the
//! `par_sort` family, `ParallelString` (`par_chars`, `par_lines`,
//! `par_split`...), `ParallelBridge` (`par_bridge`),
//! `FromParallelIterator` and `ParallelExtend`, with
//! rayon's semantics (collect keeps order; `find_first` is the first in
//! order). `flat_map`'s inner iterators run in parallel, each through
//! the loop's consumer, as rayon's do; `flat_map_iter` takes sequential
//! ones.
//!
//! The async yield for futures is [`yield_async`]; [`yield_now`] is
//! rayon's synchronous one.
//!
//! ## Panics
//!
//! A panic in a fire-and-forget task goes to the pool's panic handler
//! ([`Builder::panic_handler`]); the worker carries on. `join`, `scope`,
//! `install` and [`JoinHandle::join`] hand the panic to their caller after the
//! other work they own has finished.
//!
//! ## Cancellation
//!
//! [`JoinHandle::abort`] withdraws a task: a closure that has not started
//! never runs (one that has runs to its end), and a future is dropped instead
//! of being polled again. The handle then reports `Err` with an [`Aborted`]
//! payload, which tells an abort from a panic.

#![warn(missing_debug_implementations, unsafe_op_in_unsafe_fn)]
// docs.rs (`--cfg docsrs`, see Cargo.toml) marks what the `trace` feature adds.
#![cfg_attr(docsrs, feature(doc_cfg))]
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
// facade; the core scheduler (with the thread's context); the API over it; the
// extensions, each over the core and the API (see each folder's module docs).
#[cfg(not(loom))]
mod api;
#[cfg(not(loom))]
mod blocking;
mod facade;
mod future;
#[cfg(not(loom))]
pub mod iter;
#[cfg(not(loom))]
pub mod prelude;
mod sched;
#[cfg(not(loom))]
mod stats;
#[cfg(not(loom))]
mod sync;
#[cfg(all(feature = "trace", not(loom)))]
#[cfg_attr(docsrs, doc(cfg(feature = "trace")))]
pub mod trace;

#[cfg(not(loom))]
pub use crate::api::builder::{
    BuildError, Builder, ThreadBuilder, DEFAULT_FIBER_STACK, DEFAULT_MAX_BLOCKING,
    DEFAULT_MAX_SUSPENDED, DEFAULT_SPIN, MAX_WORKERS, MIN_STACK_SIZE, WORKERS_ENV,
};
#[cfg(not(loom))]
pub use crate::api::free::{
    broadcast, current_num_threads, current_thread_has_pending_tasks, current_thread_index,
    current_worker_index, name_current_task, spawn, spawn_broadcast, spawn_fifo, yield_local,
    yield_now, Yield,
};
#[cfg(not(loom))]
pub use crate::api::handle::{Handle, SpawnError};
#[cfg(not(loom))]
pub use crate::api::join::{join, join_context, FnContext};
#[cfg(not(loom))]
pub use crate::api::join_set::{JoinError, JoinSet};
#[cfg(not(loom))]
pub use crate::api::pool::{Pool, ShutdownReport};
#[cfg(not(loom))]
pub use crate::api::scope::{
    in_place_scope, in_place_scope_fifo, scope, scope_fifo, Scope, ScopeFifo,
};
#[cfg(not(loom))]
pub use crate::api::task::{AbortHandle, Aborted, JoinHandle};
#[cfg(not(loom))]
pub use crate::blocking::blocking;
#[cfg(not(loom))]
pub use crate::future::block_on::{block_on, yield_async, YieldNow};
#[cfg(not(loom))]
pub use crate::future::spawn::spawn_future;
#[cfg(not(loom))]
pub use crate::stats::{Stats, WorkerStats};
#[cfg(not(loom))]
pub use crate::sync::{
    Condvar, Event, EventMode, Ticket, TicketQueue, WaitGroup, WaitTimeoutResult,
};
#[cfg(all(feature = "trace", not(loom)))]
#[cfg_attr(docsrs, doc(cfg(feature = "trace")))]
pub use crate::trace::Trace;
