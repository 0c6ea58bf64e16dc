//! Where the calling thread stands: which worker it is, if any, and which
//! pool it is standing aside for inside `weft::blocking`. Both are
//! thread-locals without destructors (a raw pointer in a `Cell`), so weft
//! can be called from other thread-locals' destructors, and each is set
//! only by a guard that puts the previous value back when dropped, unwinding
//! included, so no pointer outlives the frame it points into. The one
//! exception is the seat of a thread that built its pool with
//! `use_current_thread`, which no frame owns: it is set and cleared by
//! sched/adopted.rs, which keeps the seat alive until the thread exits.
//!
//! The rule for which pool a free function (`weft::spawn`, `join`, `scope`,
//! `spawn_future`) acts on is written once, on top of this, in
//! [`crate::api::global::free_function_pool`].

use std::cell::Cell;
use std::marker::PhantomData;
use std::ptr;
use std::sync::Arc;

use crate::sched::registry::Registry;
use crate::sched::worker::WorkerThread;

#[cfg(not(loom))]
thread_local! {
    /// The worker whose loop runs on this thread (set by [`WorkerGuard`]).
    static CURRENT: Cell<*const WorkerThread> = const { Cell::new(ptr::null()) };
    /// The pool of the worker this thread was before it entered
    /// `weft::blocking`, while it is inside (set by [`BlockedGuard`]).
    static BLOCKED_IN: Cell<*const Registry> = const { Cell::new(ptr::null()) };
}

// Under loom, every model thread runs on one OS thread: the thread-locals
// must be loom's, one per model thread.
#[cfg(loom)]
loom::thread_local! {
    static CURRENT: Cell<*const WorkerThread> = Cell::new(ptr::null());
    static BLOCKED_IN: Cell<*const Registry> = Cell::new(ptr::null());
}

/// The worker running on this thread, if this thread is a worker.
#[inline]
pub(crate) fn current_worker<'a>() -> Option<&'a WorkerThread> {
    let worker = CURRENT.with(Cell::get);
    // SAFETY: a non-null pointer was set by a `WorkerGuard` (or restored by a
    // `BlockedGuard`) of this thread whose frame is still running: both put
    // the previous value back when dropped, and the guard's frame owns the
    // `WorkerThread` it points to. WorkerThread is !Send and !Sync, so the
    // reference never leaves this thread (a worker's latch carries a raw
    // pointer, which another thread reads only for two fields that never
    // change, while the owner waits: latch.rs), and none outlives that frame:
    // every caller is inside a job the worker executes, or is its loop.
    // Or it was set by `enter_adopted`, to a seat that is freed only when
    // the thread exits, after `leave_adopted` (sched/adopted.rs).
    unsafe { worker.as_ref() }
}

/// The calling thread's worker, if it is one of `registry`'s pool: the one
/// test for "this call comes from inside that pool", which decides between
/// a push onto the worker's own queue and one onto the global queue, and
/// between running a closure in place and handing it to the pool.
#[inline]
pub(crate) fn worker_of<'a>(registry: &Registry) -> Option<&'a WorkerThread> {
    current_worker().filter(|worker| worker.is_in(registry))
}

/// Makes the calling thread `worker`, with no guard frame to end it: the
/// thread holds an adopted seat (sched/adopted.rs) until
/// [`leave_adopted`]. The caller checked that the thread is no worker.
/// `worker` is the pointer of `Box::into_raw`, valid until the thread exits.
#[cfg(not(loom))]
pub(crate) fn enter_adopted(worker: *const WorkerThread) {
    let outer = CURRENT.with(|current| current.replace(worker));
    debug_assert!(outer.is_null(), "an adopted seat on a worker's thread");
}

/// The calling thread stops being `worker`, the adopted seat it holds:
/// from now on it is no worker. Returns the pointer [`enter_adopted`] was
/// given, if the context still named the seat.
#[cfg(not(loom))]
pub(crate) fn leave_adopted(worker: &WorkerThread) -> Option<*const WorkerThread> {
    CURRENT.with(|current| {
        let held = current.get();
        ptr::eq(held, worker).then(|| {
            current.set(ptr::null());
            held
        })
    })
}

/// Makes the calling thread `worker` until dropped.
pub(crate) struct WorkerGuard<'a> {
    outer: *const WorkerThread,
    _worker: PhantomData<&'a WorkerThread>,
}

impl<'a> WorkerGuard<'a> {
    pub(crate) fn enter(worker: &'a WorkerThread) -> WorkerGuard<'a> {
        let outer = CURRENT.with(|current| current.replace(worker));
        WorkerGuard {
            outer,
            _worker: PhantomData,
        }
    }
}

impl Drop for WorkerGuard<'_> {
    fn drop(&mut self) {
        CURRENT.with(|current| current.set(self.outer));
    }
}

/// While alive, the calling thread is no worker, and free functions act on
/// `registry`: the thread is inside `weft::blocking` for one of its workers.
pub(crate) struct BlockedGuard {
    worker: *const WorkerThread,
    outer: *const Registry,
    /// Keeps alive the pool `BLOCKED_IN` points to while it does.
    _registry: Arc<Registry>,
}

impl BlockedGuard {
    pub(crate) fn enter(registry: Arc<Registry>) -> BlockedGuard {
        let worker = CURRENT.with(|current| current.replace(ptr::null()));
        let outer = BLOCKED_IN.with(|blocked| blocked.replace(Arc::as_ptr(&registry)));
        BlockedGuard {
            worker,
            outer,
            _registry: registry,
        }
    }
}

impl Drop for BlockedGuard {
    fn drop(&mut self) {
        BLOCKED_IN.with(|blocked| blocked.set(self.outer));
        CURRENT.with(|current| current.set(self.worker));
    }
}

/// The pool whose worker this thread is standing aside for in
/// `weft::blocking`, if it is inside such a call.
pub(crate) fn blocked_pool() -> Option<Arc<Registry>> {
    let registry = BLOCKED_IN.with(Cell::get);
    if registry.is_null() {
        return None;
    }
    // SAFETY: a non-null `BLOCKED_IN` was set by a `BlockedGuard` of this
    // thread that is still alive (it restores the outer value when dropped),
    // and that guard holds a strong reference to this registry, taken with
    // `Arc::as_ptr`. So the pointer came from an `Arc` that is alive, and
    // taking one more reference is sound.
    unsafe {
        Arc::increment_strong_count(registry);
        Some(Arc::from_raw(registry))
    }
}

/// Whether this thread runs a pool's tasks: it is one of a pool's workers
/// (or holds its seat), or it stands aside for one in `weft::blocking`. Such
/// a thread cannot become another pool's worker (`ThreadBuilder::run`,
/// `Builder::use_current_thread`): the other pool's loop would run where a
/// task of the first waits to return.
pub(crate) fn runs_pool_tasks() -> bool {
    current_worker().is_some() || !BLOCKED_IN.with(Cell::get).is_null()
}

/// Whether this thread is inside `weft::blocking` for a worker of `registry`.
pub(crate) fn is_blocked_in(registry: &Registry) -> bool {
    ptr::eq(BLOCKED_IN.with(Cell::get), registry)
}
