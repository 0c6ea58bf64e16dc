//! `join` and `join_context`: run two closures, potentially in parallel, and
//! wait for both.
//!
//! Which pool a call runs in is decided here; the fork-join step itself is
//! the core's (sched/fork.rs).

use crate::sched::fork;
pub(crate) use crate::sched::fork::Place;
use crate::sched::worker::WorkerThread;

/// Runs `a` and `b`, possibly in parallel, and returns both results.
///
/// On a worker, `b` is offered to idle workers while `a` runs. Outside any
/// pool it runs in the global pool. If either closure panics, the panic is
/// raised here after both have finished (the first panic wins if both do).
///
/// ```
/// fn fib(n: u64) -> u64 {
///     if n < 2 {
///         return n;
///     }
///     let (a, b) = weft::join(|| fib(n - 1), || fib(n - 2));
///     a + b
/// }
/// assert_eq!(fib(20), 6765);
/// ```
#[inline]
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    join_context(|_| a(), |_| b())
}

/// A point where the running task can give work away (sched/worker/join_owner.rs,
/// `offer_work`); false off a worker. For loops that split on demand.
#[inline]
pub(crate) fn offer_work() -> bool {
    WorkerThread::current().is_some_and(WorkerThread::offer_work)
}

/// What a closure run by [`join_context`] learns of where it runs.
#[derive(Clone, Copy, Debug)]
pub struct FnContext {
    migrated: bool,
}

impl FnContext {
    /// Whether the closure runs away from the thread that called
    /// `join_context`: the second closure when another worker took it (or
    /// a wait of the caller's ran it as a queued job), and both closures
    /// when `join_context` was called outside any pool. A hint for adaptive
    /// splitting: a half that migrated found an idle worker, so splitting
    /// it further may pay.
    #[inline]
    pub fn migrated(&self) -> bool {
        self.migrated
    }
}

/// As [`join`], telling each closure whether it migrated (see
/// [`FnContext::migrated`]); rayon's `join_context`.
///
/// ```
/// let pool = weft::Pool::builder().workers(2).build().unwrap();
/// let (a, b) = pool.install(|| {
///     weft::join_context(|ctx| ctx.migrated(), |ctx| (ctx.migrated(), 2))
/// });
/// // Called on a worker, the first closure runs where join_context was called.
/// assert!(!a);
/// assert_eq!(b.1, 2);
/// ```
#[inline]
pub fn join_context<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    join_context_with(a, b, fork::Place::JoinStack)
}

/// [`join_context`], with `b` where `place` says (sched/fork.rs).
#[inline(always)]
pub(crate) fn join_context_with<A, B, RA, RB>(a: A, b: B, place: fork::Place) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    let a = |migrated| a(FnContext { migrated });
    let b = |migrated| b(FnContext { migrated });
    match WorkerThread::current() {
        Some(worker) => fork::join_on(worker, a, b, false, place),
        // `move`: `place` captured by reference would be stored to the
        // frame on every call, worker path included.
        None => {
            crate::api::on_workers::install(&crate::api::global::free_function_pool(), move || {
                let worker = WorkerThread::current().expect("install runs on a worker");
                fork::join_on(worker, a, b, true, place)
            })
        }
    }
}
