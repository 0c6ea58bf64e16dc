//! A seat held by a thread that does not run the worker loop: the thread
//! that builds a pool with `Builder::use_current_thread` is that pool's
//! worker 0 from `build` until it drops the pool.
//!
//! # What the holder is
//!
//! * **A worker, to the API.** The context (context.rs) names seat 0 as the
//!   thread's worker, with no guard frame: the free functions act on the
//!   pool, `install` runs in place, spawns go onto seat 0's queues, where
//!   the other workers steal them, and the thread's waits run the loop as
//!   seat 0 (they help rather than suspend: the thread's stack is its
//!   program's, not a fiber of the loop, so the seat has no fibers).
//! * **A working worker, to the wake protocol** (sleep.rs). Between its
//!   calls into weft the thread is neither searching nor sleeping, as a
//!   worker running a long task is. Invariant 1 asks of such a worker only
//!   that it look at the queues before it next sleeps, and the holder
//!   sleeps only in its waits, which are the loop's. Its queues are visible
//!   to the others as any seat's, so a task it queues is taken by another
//!   worker while one is idle. What it cannot do is run the tasks pinned
//!   to seat 0 (`spawn_on(0, ..)`, its share of a broadcast) while it is
//!   away: those wait for its next wait in the pool, or for its shutdown.
//! * **A task that has not returned, to the drain books** (registry.rs,
//!   "Shutdown"). [`adopt`] counts the hold as a start hook's queued work,
//!   so the pool cannot drain while the thread holds the seat, and nothing
//!   the thread queues can be left behind by a pool that has stopped. Only
//!   the holder itself ends the hold, in [`shut_down`], called when it
//!   shuts the pool down between jobs (`Pool::drop`, `shutdown_timeout`).
//!   A pool dropped anywhere else (another thread, a task) therefore
//!   closes but never drains: its threads stay parked, serving the holder,
//!   for the life of the process. It cannot stop a thread it did not start.
//!
//! # Why the holder's state is never freed while it may be in use
//!
//! With no guard frame, nothing bounds the borrows of the seat's
//! `WorkerThread`: a `join` or a scope on the holder borrows it for its
//! whole call, and the pool may be dropped inside that call. So the state
//! is put on the heap and let go of at [`adopt`], the context forgets it at the end of
//! [`shut_down`] (later calls act outside any pool), and it is freed only
//! when the thread exits, with no frame of the thread left to borrow it.

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Instant;

use crate::sched::registry::Registry;
use crate::sched::worker::{SeatQueues, WorkerThread};

/// The seat a holder takes: the first, as rayon's `use_current_thread`.
pub(crate) const ADOPTED_SEAT: usize = 0;

thread_local! {
    /// Seats this thread held and gave up, freed when it exits. A
    /// destructor of its own, apart from context.rs's (which have none), so
    /// that weft stays callable from other thread-locals' destructors.
    static GIVEN_UP: RefCell<GivenUp> = const { RefCell::new(GivenUp(Vec::new())) };
}

/// The seats of `GIVEN_UP`, as the pointers `adopt` made with
/// `Box::into_raw`: no `Box` is made of one again before the thread exits,
/// as frames may still borrow it.
struct GivenUp(Vec<*const WorkerThread>);

impl Drop for GivenUp {
    fn drop(&mut self) {
        for worker in self.0.drain(..) {
            // SAFETY: each pointer came from `Box::into_raw` in `adopt`, was
            // forgotten by the context when it was pushed here, and is
            // pushed once. The thread is exiting: none of its frames is
            // left to borrow the seat, and no other thread ever does
            // (`WorkerThread` is neither `Send` nor `Sync`).
            drop(unsafe { Box::from_raw(worker.cast_mut()) });
        }
    }
}

/// Makes the calling thread hold seat [`ADOPTED_SEAT`] of `registry`,
/// whose `queues` it gets. The caller has checked that the thread is no
/// worker and is not inside `weft::blocking`; no other thread ever holds
/// or runs the seat.
pub(crate) fn adopt(registry: &Arc<Registry>, queues: SeatQueues) {
    // The hold on the books (module docs), and the start the pool's exit
    // count expects, both before the seat can be used.
    registry.count_start_hook();
    registry.worker_started();
    let worker = WorkerThread::new(Arc::clone(registry), ADOPTED_SEAT, queues, true);
    crate::sched::context::enter_adopted(Box::into_raw(Box::new(worker)));
}

/// The calling thread's seat in `registry`, if it holds one and is between
/// jobs: the only place from which it may shut the pool down.
pub(crate) fn holder_between_jobs<'a>(registry: &Registry) -> Option<&'a WorkerThread> {
    crate::sched::context::worker_of(registry)
        .filter(|worker| worker.is_adopted() && !worker.is_running_a_job())
}

/// The holder shuts its closed pool down: it ends its hold on the books,
/// then runs the loop as seat 0 while the pool drains (the tasks pinned to
/// the seat included), counts the stop hook the seat does not run (the
/// thread was never started by the pool, so neither hook runs on it, as
/// in rayon), and runs the loop until the pool terminates. Then the
/// context forgets the seat and the seat counts as exited. Returns false,
/// with the seat still held, if `deadline` passes first; calling it again
/// goes on where it stopped.
pub(crate) fn shut_down(worker: &WorkerThread, deadline: Option<Instant>) -> bool {
    let registry = &**worker.registry_arc();
    if worker.release_hold() {
        registry.start_hook_done();
    }
    if !worker.run_loop_until(&|| registry.is_stopping(), deadline) {
        return false;
    }
    if worker.start_stop_hook() {
        registry.stop_hook_done();
    }
    if !worker.run_loop_until(&|| registry.is_terminating(), deadline) {
        return false;
    }
    let registry = Arc::clone(worker.registry_arc());
    if let Some(seat) = crate::sched::context::leave_adopted(worker) {
        // If the thread is already exiting (a pool dropped by another
        // thread-local's destructor), the seat stays leaked.
        let _ = GIVEN_UP.try_with(|seats| seats.borrow_mut().0.push(seat));
    }
    // As a worker thread does, outside the worker context: the futures'
    // destructors may use weft.
    if registry.worker_exited() {
        registry.parked.abandon_waiting();
    }
    true
}
