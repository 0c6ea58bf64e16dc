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
// Never inlined into its caller. Inlined, the join makes a recursive
// caller (divide and conquer: `join`'s use) call itself for each half,
// and the compiler does not inline a function into itself, so a node's
// halves are two calls and a tree's leaf is looked at only once the call
// for it runs. As a function of its own, each instance of the join takes
// the caller's body into both of its halves (one level of the recursion
// unrolled): a tree's two children are read in one frame and their cache
// misses overlap. Trees 1.06-1.33x faster, fib the same (docs/TUNING.md,
// "join is a function of its own"). The loops' driver joins through
// `join_context_with`, which stays inlined into it; the sorts' recursion
// calls `join`, and took the same time either way.
#[inline(never)]
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
        None => join_from_outside(a, b, place),
    }
}

/// [`join_context_with`] called outside any pool: both closures run in the
/// global pool while the caller waits, as a call from outside, after
/// which the pool lingers for the next (api/on_workers.rs, `install`):
/// each of rayon's parallel loops is such a call, through the rayon-core
/// stand-in. Not inlined: the worker path's frame then holds nothing of
/// this one.
#[inline(never)]
fn join_from_outside<A, B, RA, RB>(a: A, b: B, place: fork::Place) -> (RA, RB)
where
    A: FnOnce(bool) -> RA + Send,
    B: FnOnce(bool) -> RB + Send,
    RA: Send,
    RB: Send,
{
    // `move`: `place` captured by reference would be stored to the frame.
    crate::api::on_workers::install(&crate::api::global::free_function_pool(), move || {
        let worker = WorkerThread::current().expect("install runs on a worker");
        fork::join_on(worker, a, b, true, place)
    })
}

// Not under loom: pools are built there only inside the models.
#[cfg(all(test, not(loom)))]
mod tests {
    use crate::sched::registry::{LINGER_SLACK_NS, LINGER_WINDOW};
    use crate::Pool;

    fn window_ns() -> u64 {
        u64::try_from(LINGER_WINDOW.as_nanos()).unwrap()
    }

    /// A `join` from outside any pool opens a linger window in the global
    /// pool before it returns, when that pool's workers fit the cores (its
    /// size comes from the environment: the test looks which it is). Other
    /// tests may open windows in the same pool at the same time: a window's
    /// end only moves later, and a join that finds one with three quarters
    /// left leaves it as it is, so the floor is the join's start plus the
    /// window less that slack.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "the global pool at this machine's size: covered natively"
    )]
    fn a_join_from_outside_leaves_the_global_pool_lingering() {
        let pool = crate::api::global::free_function_pool();
        let (_, before) = pool.linger_end_and_now();
        assert_eq!(crate::join(|| 1, || 2), (1, 2));
        let (end, _) = pool.linger_end_and_now();
        if pool.num_workers() <= std::thread::available_parallelism().map_or(1, usize::from) {
            assert!(
                end >= before + window_ns() - LINGER_SLACK_NS,
                "the window ends at {end} ns, before the join's start ({before} ns) plus the window less its slack"
            );
        }
    }

    /// The rule itself, on pools of known sizes: a pool whose workers fit
    /// the cores lingers after a `join` from outside, one with more
    /// workers than cores does not.
    #[test]
    fn only_a_pool_whose_workers_fit_the_cores_lingers_after_a_join() {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let fits = Pool::builder().workers(1).build().unwrap();
        let (_, before) = fits.registry().linger_end_and_now();
        fits.registry().linger_after_call();
        let (end, _) = fits.registry().linger_end_and_now();
        assert!(end >= before + window_ns(), "1 worker: no window opened");
        let crowded = Pool::builder().workers(cores + 1).build().unwrap();
        crowded.registry().linger_after_call();
        assert_eq!(
            crowded.registry().linger_end_and_now().0,
            0,
            "{} workers on {cores} cores opened a window",
            cores + 1
        );
    }

    /// A `join` on a worker whose second half another worker ran opens a
    /// window too (rayon's loops inside `install` end that way), in a pool
    /// whose workers fit the cores. The first half waits until the second
    /// has started, so the second must run elsewhere.
    #[test]
    fn a_join_whose_half_was_stolen_leaves_the_pool_lingering() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        if cores < 2 {
            return;
        }
        let pool = Pool::builder().workers(2).build().unwrap();
        let (_, before) = pool.registry().linger_end_and_now();
        let started = AtomicBool::new(false);
        let ran_on = pool.install(|| {
            let (_, b_worker) = crate::join(
                || {
                    while !started.load(Ordering::Acquire) {
                        std::thread::yield_now();
                    }
                },
                || {
                    started.store(true, Ordering::Release);
                    crate::current_worker_index()
                },
            );
            (crate::current_worker_index(), b_worker)
        });
        assert_ne!(ran_on.0, ran_on.1, "the second half ran on its own worker");
        let (end, _) = pool.registry().linger_end_and_now();
        assert!(
            end >= before + window_ns(),
            "the window ends at {end} ns, before the join's start ({before} ns) plus the window"
        );
    }

    /// The worker that ran a stolen half opens a window itself as it hands
    /// the result back, while the join's owner is still in its first half:
    /// a helper that finishes first must not park before the owner's own
    /// window opens. The first half waits for the second to finish, then
    /// for a window that ends at least a window (less its slack) after
    /// that; nothing else in the pool could open it.
    #[test]
    fn the_worker_that_ran_a_stolen_half_leaves_the_pool_lingering() {
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        use std::time::{Duration, Instant};
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        if cores < 2 {
            return;
        }
        let pool = Pool::builder().workers(2).build().unwrap();
        let registry = pool.registry();
        let finished = AtomicBool::new(false);
        let finished_at = AtomicU64::new(0);
        let (window_end, b_worker, a_worker) = pool.install(|| {
            let (end, b_worker) = crate::join(
                || {
                    while !finished.load(Ordering::Acquire) {
                        std::thread::yield_now();
                    }
                    let floor = finished_at.load(Ordering::Relaxed) + window_ns() - LINGER_SLACK_NS;
                    let deadline = Instant::now() + Duration::from_secs(30);
                    loop {
                        let (end, _) = registry.linger_end_and_now();
                        if end >= floor || Instant::now() > deadline {
                            return (end, floor);
                        }
                        std::thread::yield_now();
                    }
                },
                || {
                    let worker = crate::current_worker_index();
                    finished_at.store(registry.linger_end_and_now().1, Ordering::Relaxed);
                    finished.store(true, Ordering::Release);
                    worker
                },
            );
            (end, b_worker, crate::current_worker_index())
        });
        assert_ne!(a_worker, b_worker, "the second half ran on its own worker");
        let (end, floor) = window_end;
        assert!(
            end >= floor,
            "while the owner was still in its first half, no window ending at {floor} ns or later opened (latest end {end} ns)"
        );
    }
}
