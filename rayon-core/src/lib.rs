//! rayon-core's public API, run by the [weft] scheduler.
//!
//! This crate has real rayon-core's name, version (1.13.0) and `links` key,
//! so a program that uses rayon (directly or through a dependency) moves
//! onto weft with one line in its `Cargo.toml`:
//!
//! ```toml
//! [patch.crates-io]
//! rayon-core = { path = "path/to/weft/rayon-core" }
//! ```
//!
//! Every item of rayon-core 1.13's public API is here with rayon's
//! signature and contract: `join`, the scopes, `spawn`, `broadcast`,
//! [`ThreadPool`], [`ThreadPoolBuilder`] and the rest. Where weft and rayon
//! differ, this crate gives rayon's behaviour, for instance:
//!
//! * dropping a [`ThreadPool`] does not wait for its queued work, which
//!   goes on running in the background (weft's own `Pool` waits);
//! * a panic in a fire-and-forget task ([`spawn`], [`ThreadPool::spawn`],
//!   a start or exit handler) aborts the process unless the pool has a
//!   [`panic_handler`](ThreadPoolBuilder::panic_handler);
//! * the thread count comes from [`ThreadPoolBuilder::num_threads`], else
//!   `RAYON_NUM_THREADS`, else weft's default (`WEFT_WORKERS`, else the
//!   number of CPUs), and is capped at [`max_num_threads`].
//!
//! What stays weft's: the order in which a worker picks tasks, that tasks
//! run on fibers (a task waiting in `join` or a scope suspends and its
//! worker runs other tasks; it resumes on the same thread), and the worker
//! threads' default names, `weft-worker-{index}`, by which a program can
//! tell it runs on weft. [`is_weft`] says so too.
//!
//! The global pool is the one weft's own free functions use: a program
//! that calls both `rayon::join` and `weft::join` runs both on one pool.
//! The first rayon call outside any pool builds it with the settings
//! above, unless [`ThreadPoolBuilder::build_global`] (or weft's own
//! `Builder::build_global`) built it before.

#![deny(missing_docs)]
#![deny(clippy::undocumented_unsafe_blocks)]
#![warn(missing_debug_implementations, unsafe_op_in_unsafe_fn)]

mod broadcast;
mod builder;
mod pool;
mod scope;

pub use crate::broadcast::{broadcast, spawn_broadcast, BroadcastContext};
#[allow(deprecated)]
pub use crate::builder::{initialize, Configuration};
pub use crate::builder::{ThreadBuilder, ThreadPoolBuildError, ThreadPoolBuilder};
pub use crate::pool::ThreadPool;
pub use crate::scope::{in_place_scope, in_place_scope_fifo, scope, scope_fifo, Scope, ScopeFifo};

/// The context [`join_context`] gives each of its closures: whether that
/// closure runs on another thread than the one that called `join_context`
/// (it was stolen). weft's type, with rayon's
/// [`migrated`](FnContext::migrated).
pub use weft::FnContext;

/// What [`yield_now`] and [`yield_local`] did: ran a pending task
/// ([`Yield::Executed`]) or found none ([`Yield::Idle`]). weft's type.
pub use weft::Yield;

/// Always true: this program's rayon-core is the weft stand-in. A program
/// (or its test) can call `rayon_core::is_weft()` to check that its
/// `[patch.crates-io]` took effect; with real rayon-core it does not compile.
///
/// ```
/// assert!(rayon_core::is_weft());
/// ```
pub fn is_weft() -> bool {
    true
}

/// Makes sure that the global pool, if a free function about to run uses
/// it, is built with this crate's defaults (a task's panic aborts,
/// `RAYON_NUM_THREADS`) and not with weft's: the first call tells weft how
/// to build it ([`weft::Pool::set_global_maker`]), and weft builds it when
/// it is first needed, as rayon does. A program that only ever uses its
/// own pools never builds it. Every call after the first is one load.
#[inline]
fn ensure_global() {
    if builder::global_defaults_untold() {
        builder::give_global_defaults();
    }
}

/// The most threads a pool can have: a larger
/// [`num_threads`](ThreadPoolBuilder::num_threads) or `RAYON_NUM_THREADS`
/// is lowered to this. weft's [`MAX_WORKERS`](weft::MAX_WORKERS).
///
/// ```
/// assert!(rayon_core::max_num_threads() >= 256);
/// ```
pub fn max_num_threads() -> usize {
    weft::MAX_WORKERS
}

/// The number of threads of the pool the caller runs in, or else of the
/// global pool (which this builds if it does not exist yet). This is the
/// pool's real worker count, which stays fixed for the pool's life.
///
/// ```
/// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
/// assert_eq!(pool.install(rayon_core::current_num_threads), 3);
/// ```
pub fn current_num_threads() -> usize {
    ensure_global();
    weft::current_num_threads()
}

/// The calling thread's index in its pool (below that pool's
/// [`current_num_threads`]), or `None` on a thread that is none of a
/// pool's workers.
///
/// ```
/// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// assert_eq!(rayon_core::current_thread_index(), None);
/// assert!(pool.install(rayon_core::current_thread_index).unwrap() < 2);
/// ```
pub fn current_thread_index() -> Option<usize> {
    weft::current_thread_index()
}

/// Whether the calling worker has queued tasks of its own (spawned, or
/// `join` halves) that nobody has started yet; `None` off the workers. A
/// snapshot: other workers may take those tasks at any moment.
///
/// ```
/// assert_eq!(rayon_core::current_thread_has_pending_tasks(), None);
/// ```
pub fn current_thread_has_pending_tasks() -> Option<bool> {
    weft::current_thread_has_pending_tasks()
}

/// Runs `oper_a` and `oper_b`, possibly in parallel, and returns both
/// results. On a worker, `oper_a` runs on the calling thread and `oper_b`
/// is offered to other workers, the caller running it itself if nobody has
/// taken it by then; outside any pool both run in the global pool while
/// the caller waits.
///
/// If either closure panics, the other still runs to its end and the panic
/// reaches the caller (`oper_a`'s if both panic).
///
/// ```
/// let (a, b) = rayon_core::join(|| 1 + 1, || "two");
/// assert_eq!((a, b), (2, "two"));
/// ```
pub fn join<A, B, RA, RB>(oper_a: A, oper_b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    ensure_global();
    weft::join(oper_a, oper_b)
}

/// [`join`], with each closure told in a [`FnContext`] whether it runs on
/// another thread than the caller's.
///
/// ```
/// let (a, _) = rayon_core::join_context(|ctx| ctx.migrated(), |_| ());
/// // Called from outside the pool, both halves run on the pool's threads.
/// assert!(a);
/// ```
pub fn join_context<A, B, RA, RB>(oper_a: A, oper_b: B) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    ensure_global();
    weft::join_context(oper_a, oper_b)
}

/// Runs `func` in the background on the caller's pool (the global pool
/// outside any pool), without waiting for it. On a worker, the task goes on
/// that worker's own queue, newest first. A panic in `func` goes to the
/// pool's panic handler, and aborts the process if it has none.
///
/// ```
/// let (send, recv) = std::sync::mpsc::channel();
/// rayon_core::spawn(move || send.send(6 * 7).unwrap());
/// assert_eq!(recv.recv().unwrap(), 42);
/// ```
pub fn spawn<F>(func: F)
where
    F: FnOnce() + Send + 'static,
{
    ensure_global();
    weft::spawn(func);
}

/// [`spawn`], first in first out: the tasks a worker spawns this way run
/// oldest first relative to each other.
///
/// ```
/// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
/// let (send, recv) = std::sync::mpsc::channel();
/// pool.spawn(move || {
///     for i in 0..3 {
///         let send = send.clone();
///         rayon_core::spawn_fifo(move || send.send(i).unwrap());
///     }
/// });
/// assert_eq!(recv.iter().collect::<Vec<_>>(), [0, 1, 2]);
/// ```
pub fn spawn_fifo<F>(func: F)
where
    F: FnOnce() + Send + 'static,
{
    ensure_global();
    weft::spawn_fifo(func);
}

/// On a worker, runs one pending task of the pool if one is found
/// (`Some(Yield::Executed)`), else returns `Some(Yield::Idle)`; `None` off
/// the workers. Lets a task that waits for something outside the pool keep
/// its thread busy meanwhile.
///
/// ```
/// assert_eq!(rayon_core::yield_now(), None);
/// ```
pub fn yield_now() -> Option<Yield> {
    weft::yield_now()
}

/// [`yield_now`], looking only at the calling worker's own queues, never
/// at other workers' or the pool's shared queue.
///
/// ```
/// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
/// assert_eq!(pool.install(rayon_core::yield_local), Some(rayon_core::Yield::Idle));
/// ```
pub fn yield_local() -> Option<Yield> {
    weft::yield_local()
}
