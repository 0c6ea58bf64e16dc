//! Running a closure on a pool's workers and waiting for it: on one
//! (`install`, under `Pool::install`, `join` and `scope` from outside a
//! pool) or on each (`broadcast`, `spawn_broadcast_in`), and the pointer
//! their jobs carry across threads (`SendPtr`).

use std::sync::Arc;

use crate::api::task;
use crate::sched::job::{ClosureJob, JobRef, StackJob};
use crate::sched::latch::{CountLatch, Latch, OwnerLatch};
use crate::sched::registry::Registry;

/// Runs `op` on a worker of `registry` and waits for it.
pub(crate) fn install<OP, R>(registry: &Arc<Registry>, op: OP) -> R
where
    OP: FnOnce() -> R + Send,
    R: Send,
{
    if crate::sched::context::worker_of(registry).is_some() {
        return op();
    }
    let job = StackJob::new(|_migrated| op(), OwnerLatch::for_current_thread());
    // SAFETY: `job` stays on this frame until its latch is set: we wait below.
    // Counted: its owner is outside the pool, so nothing running in the pool
    // keeps the pool from looking drained while the job is queued.
    let job_ref = unsafe { job.as_counted_job_ref() };
    if registry.inject(job_ref, |job_ref| job_ref).is_err() {
        panic!("install: the pool has shut down");
    }
    job.latch().wait();
    // SAFETY: the wait returned: the latch was seen set.
    unsafe { job.into_result() }.into_value()
}

/// Queues one job of a broadcast for worker `index`. From a thread running
/// in the pool (a worker or a spare, even of a pool dropped meanwhile, or a
/// stop hook) the caller's own job keeps the pool from draining, so the job
/// is accepted as `weft::spawn`'s are; from outside, only a live pool takes
/// it, which a `Pool` or the global pool always is.
fn inject_broadcast_job(registry: &Arc<Registry>, index: usize, job: JobRef) {
    if crate::sched::context::worker_of(registry).is_some() {
        registry.inject_pinned_for_running_job(index, job);
    } else if registry.inject_pinned(index, job, |job| job).is_err() {
        panic!("broadcast: the pool has shut down");
    }
}

/// Queues `op` once for every worker of `registry` and returns at once.
pub(crate) fn spawn_broadcast_in<OP>(registry: &Arc<Registry>, op: OP)
where
    OP: Fn(usize) + Send + Sync + 'static,
{
    let op = Arc::new(op);
    for index in 0..registry.num_workers() {
        let op = Arc::clone(&op);
        // Each worker's call is a task that `Pool::shutdown_timeout` may drop.
        let call = task::droppable(move || op(index));
        // SAFETY: the closure owns what it uses (`OP: 'static`).
        let job = unsafe { ClosureJob::new_ref(call) };
        inject_broadcast_job(registry, index, job);
    }
}

/// Runs `op` once on every worker of `registry` and waits for all of them.
pub(crate) fn broadcast<OP, R>(registry: &Arc<Registry>, op: &OP) -> Vec<R>
where
    OP: Fn(usize) -> R + Sync,
    R: Send,
{
    let workers = registry.num_workers();
    let mut results: Vec<Option<std::thread::Result<R>>> = (0..workers).map(|_| None).collect();
    let latch = CountLatch::for_current_thread();
    {
        let latch_ptr = SendPtr(&latch as *const CountLatch);
        let results_ptr = SendPtr(results.as_mut_ptr() as *const Option<std::thread::Result<R>>);
        let op_ptr = SendPtr(op as *const OP);
        for index in 0..workers {
            latch.increment();
            let job = move || {
                // SAFETY: `broadcast` waits on the latch before `op`, `results` or
                // the latch go away, and each job writes only its own slot.
                unsafe {
                    let op = &*op_ptr.get();
                    let result =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| op(index)));
                    *(results_ptr.get() as *mut Option<std::thread::Result<R>>).add(index) =
                        Some(result);
                    CountLatch::set(latch_ptr.get());
                }
            };
            // SAFETY: the job borrows `op`, `results` and `latch`, all of which
            // outlive it because we wait for the latch below.
            let job_ref = unsafe { ClosureJob::new_ref(job) };
            inject_broadcast_job(registry, index, job_ref);
        }
        // SAFETY: drops the count held by this function itself.
        unsafe { CountLatch::set(&latch) };
        latch.wait();
    }
    let mut values = Vec::with_capacity(workers);
    let mut first_panic = None;
    for result in results {
        match result.expect("every broadcast job ran") {
            Ok(value) => values.push(value),
            Err(payload) if first_panic.is_none() => first_panic = Some(payload),
            // Only the first panic is raised; a later payload's destructor
            // must not unwind from here (unwind.rs).
            Err(payload) => crate::sched::unwind::drop_payload(payload),
        }
    }
    match first_panic {
        Some(payload) => {
            // The other workers' values go before the panic leaves; their
            // destructors are the user's, like the results of any call.
            drop(values);
            std::panic::resume_unwind(payload)
        }
        None => values,
    }
}

/// A raw pointer that may cross threads, for jobs whose owner waits for them.
pub(crate) struct SendPtr<T>(*const T);

// SAFETY: only used for pointers whose pointee the owning frame keeps alive,
// and whose accesses are made exclusive or shared-immutable by construction.
unsafe impl<T> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SendPtr<T> {}

impl<T> SendPtr<T> {
    pub(crate) fn new(ptr: *const T) -> Self {
        SendPtr(ptr)
    }
    pub(crate) fn get(&self) -> *const T {
        self.0
    }
}

impl<T> Clone for SendPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for SendPtr<T> {}
