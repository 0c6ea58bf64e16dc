//! `join`: run two closures, potentially in parallel, and wait for both.
//!
//! The second closure is pushed onto the calling worker's queue as a job that
//! lives in this stack frame; the first runs at once. If no thief took the
//! second by then, the worker pops it back and runs it inline: the common case
//! costs a push, a pop and no allocation.

use std::panic::{self, AssertUnwindSafe};

use crate::sched::job::{JobResult, StackJob};
use crate::sched::latch::OwnerLatch;
use crate::sched::unwind::drop_payload;
use crate::sched::worker::WorkerThread;

/// Runs `a` and `b`, possibly in parallel, and returns both results.
///
/// On a worker, `b` is offered to thieves while `a` runs. Outside any pool it
/// runs in the global pool. If either closure panics, the panic is raised here
/// after both have finished (the first panic wins if both do).
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
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    match WorkerThread::current() {
        Some(worker) => join_on(worker, a, b),
        None => crate::api::pool::install(&crate::api::global::free_function_pool(), || join(a, b)),
    }
}

fn join_on<A, B, RA, RB>(worker: &WorkerThread, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let job_b = StackJob::new(b, OwnerLatch::for_worker(worker));
    // SAFETY: `job_b` stays in this frame until it is popped back unrun or its
    // latch is set: every path below ends in one of the two before returning,
    // including the path where `a` panics.
    worker.push_uncounted(unsafe { job_b.as_job_ref() });
    let result_a = panic::catch_unwind(AssertUnwindSafe(a));
    let reclaimed = reclaim_or_wait(worker, &job_b);
    match result_a {
        Ok(value_a) if reclaimed => (value_a, job_b.run_inline()),
        Ok(value_a) => (value_a, job_b.into_result().into_value()),
        Err(payload) => {
            // `b` belongs to this call too: it finishes before the panic leaves.
            if reclaimed {
                if let Err(payload_b) = panic::catch_unwind(AssertUnwindSafe(|| job_b.run_inline()))
                {
                    drop_payload(payload_b);
                }
            } else if let JobResult::Panicked(payload_b) = job_b.into_result() {
                drop_payload(payload_b);
            }
            panic::resume_unwind(payload)
        }
    }
}

/// Pops jobs until our own `job_b` comes back (returns true: run it inline) or
/// until it was stolen and has finished (returns false). Jobs above ours on the
/// queue were pushed by `a` and are run on the way.
fn reclaim_or_wait<F, R>(worker: &WorkerThread, job_b: &StackJob<OwnerLatch, F, R>) -> bool
where
    F: FnOnce() -> R + Send,
    R: Send,
{
    // A poll run below may have filled the `next` slot: this worker goes back
    // to the joining task (which may run long), so the slot goes where thieves
    // see it (`wait_until` does the same on its way out).
    while !job_b.latch().probe() {
        match worker.pop() {
            Some(job) if job_b.is_referenced_by(&job) => {
                worker.flush_next();
                return true;
            }
            Some(job) => worker.execute(job),
            None => {
                worker.wait_for_stolen_half(&|| job_b.latch().probe());
                return false;
            }
        }
    }
    worker.flush_next();
    false
}
