//! The fork-join step under `join`: run two closures, the second offered to
//! idle workers while the first runs, and wait for both.
//!
//! The second closure becomes a job that lives in this stack frame and goes
//! onto the calling worker's join stack (join_stack.rs); the first runs at
//! once. If nobody took the second by then, the worker pops it back and
//! runs it inline: the common case costs a push and a pop with no atomic
//! read-modify-write, no fence and no allocation. Idle workers learn of the
//! pushed half through the notify of the push that made the join stack
//! non-empty (sleep.rs, "Join stacks", rule covered-stack) and take it by
//! asking the owner or, after a bounded wait, by force, so a long first
//! half never keeps its second half from an idle worker (the
//! serialization of heartbeat schedulers).
//!
//! Where the second closure goes is the caller's choice ([`Place`]). The join
//! stack's owner answers a searcher's request at its next `join`; a first
//! half that is a sequential leaf joins no more, so for `join` itself the
//! outermost half of the running task (the push that finds the join stack and
//! the local queue empty) goes to the local queue at once, where thieves take
//! it without asking and without the barrier of a forced steal, at the cost
//! of the queue's fences (once per task, not per nested join), when a thief
//! may come for it and pay: thieves took this worker's last half that left
//! its join stack and it ran long, or some worker is idle and the last half a
//! thief took from the running task was not shorter than the hand-over itself
//! (worker/join_owner.rs, `thieves_may_come`). Where every other worker is
//! busy and has not been taking halves, it stays on the join stack: a task
//! that runs many small nested loops (rayon's code in a leaf) would pay the
//! share once a loop. A parallel loop's pieces follow the same rule (a loop's
//! first split is its task's outermost half when nothing else is pending),
//! and besides hand the oldest half to searchers between their chunks
//! themselves (worker/join_owner.rs, `offer_work`). The halves of a loop of
//! few items, each of which may block its thread, all go to the local queue,
//! the path a full join stack takes.

use std::panic::{self, AssertUnwindSafe};

use crate::sched::job::StackJob;
use crate::sched::join_stack::{Half, Room};
use crate::sched::latch::OwnerLatch;
use crate::sched::unwind::drop_payload;
use crate::sched::worker::WorkerThread;

/// Where [`join_on`] leaves its second closure while the first runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Place {
    /// The join stack, except the running task's outermost half, which
    /// goes to the local queue at once when a thief may come for it
    /// (`join`).
    JoinStack,
    /// The join stack always, the outermost half too: the path
    /// `JoinStack` takes for that half when no thief may come, which the
    /// loom models reach through this variant (under loom
    /// `thieves_may_come` always says one may).
    #[cfg_attr(not(loom), allow(dead_code))]
    JoinStackOnly,
    /// The local queue (a parallel loop of few items).
    LocalQueue,
}

/// Runs `a` and `b` on `worker`, the calling thread's, and returns both
/// results; each closure is told whether it migrated (`join_context`):
/// `injected` when the call came from outside the pool (both count as
/// migrated then), and `b` also when it ran as a job taken from a queue.
/// `b` goes where `place` says (see the module docs). Panics as `join`
/// documents.
#[inline(always)]
pub(crate) fn join_on<A, B, RA, RB>(
    worker: &WorkerThread,
    a: A,
    b: B,
    injected: bool,
    place: Place,
) -> (RA, RB)
where
    A: FnOnce(bool) -> RA + Send,
    B: FnOnce(bool) -> RB + Send,
    RA: Send,
    RB: Send,
{
    // Where `b` goes is settled before anything is built: on the join
    // stack's path the compiler then knows that `b` went there, and carries
    // no "where did it go" across `a`.
    let room = match place {
        Place::LocalQueue => None,
        Place::JoinStack | Place::JoinStackOnly => worker.join_room(),
    };
    match room {
        Some(room) => fork(worker, a, b, injected, place, Some(room)),
        None => join_without_quick_room(worker, a, b, injected, place),
    }
}

/// [`join_on`] when the join stack's quick room check said no (a searcher
/// asked: join_stack.rs, `room_after_looking`), or `b` goes to the local
/// queue: a parallel loop of few items (`Place::LocalQueue`), or a join
/// stack that holds no halves.
#[cold]
#[inline(never)]
fn join_without_quick_room<A, B, RA, RB>(
    worker: &WorkerThread,
    a: A,
    b: B,
    injected: bool,
    place: Place,
) -> (RA, RB)
where
    A: FnOnce(bool) -> RA + Send,
    B: FnOnce(bool) -> RB + Send,
    RA: Send,
    RB: Send,
{
    let room = match place {
        Place::LocalQueue => None,
        Place::JoinStack | Place::JoinStackOnly => worker.join_room_after_looking(),
    };
    fork(worker, a, b, injected, place, room)
}

/// The join itself: builds `b`'s job in this frame, leaves it on the join
/// stack as a [`Half`] in this frame when `room` says so, or
/// with no room on the local queue, runs `a`, takes `b` back or waits for
/// it, and returns both results. The job stays in this frame until it is
/// popped back unrun or its latch is set: every path below ends in one of
/// the two before returning, including the path where `a` panics.
#[inline(always)]
fn fork<A, B, RA, RB>(
    worker: &WorkerThread,
    a: A,
    b: B,
    injected: bool,
    place: Place,
    room: Option<Room>,
) -> (RA, RB)
where
    A: FnOnce(bool) -> RA + Send,
    B: FnOnce(bool) -> RB + Send,
    RA: Send,
    RB: Send,
{
    let job_b = StackJob::new(b, OwnerLatch::for_worker(worker));
    // Made on both paths, so that whether `b` is on the join stack is a
    // local of its own, which the compiler folds on the common path (a
    // flag inside the half would be reloaded after `a`, as the half's
    // address is published). On the queue path the half is never pushed.
    // SAFETY: the job stays in this frame as the docs above say, and is
    // taken at most once by the join stack's protocol.
    let half = unsafe { Half::new(job_b.as_job_ref(), room.as_ref()) };
    let on_join_stack = match room {
        Some(room) => {
            // SAFETY: `half` stays in this frame, unmoved, until `pop_join`
            // returns for it (and the job until its latch is set, if that
            // says it was taken); `half` was made with `room`, which is
            // fresh (nothing was pushed onto the join stack or taken since).
            unsafe { worker.push_join(room, &half, place == Place::JoinStack) };
            true
        }
        None => {
            // SAFETY: as above; the half holding the other reference is
            // never pushed, so this one is the job's only reference.
            worker.push_uncounted(unsafe { job_b.as_job_ref() });
            false
        }
    };
    let result_a = panic::catch_unwind(AssertUnwindSafe(|| a(injected)));
    let reclaimed = match on_join_stack {
        // The `next` slot is empty here, though `b` may run long: no job
        // goes there while the join stack holds a half, and the push that
        // made it non-empty emptied it (worker/join_owner.rs,
        // `first_half_pushed`; future/spawn.rs, `schedule`).
        true if worker.pop_join(&half) => true,
        // Taken from the join stack, or never on it (a stack that holds no
        // halves put it on the local queue): it may still be on the local
        // queue.
        _ => reclaim_or_wait(worker, &job_b),
    };
    match result_a {
        Ok(value_a) if reclaimed => {
            // SAFETY: popped back unrun; forgotten right after.
            let value_b = unsafe { job_b.run_inline(injected) };
            job_b.forget_after_inline();
            (value_a, value_b)
        }
        Ok(value_a) => {
            // SAFETY: not reclaimed, so `reclaim_or_wait` returned after it
            // saw the latch set.
            let result_b = unsafe { job_b.into_result() };
            (value_a, result_b.into_value())
        }
        Err(payload) => {
            // `b` belongs to this call too: it finishes before the panic
            // leaves, and nothing of it replaces `a`'s panic: neither a panic
            // of its own nor one from dropping its result. `move`: the flags
            // captured by reference would be stored to the frame on every
            // `join`, not only on this path. The job may move: nobody else
            // holds it now (reclaimed, or its latch set).
            let finish_b = move || {
                if reclaimed {
                    // SAFETY: popped back unrun; forgotten right after.
                    let value_b = unsafe { job_b.run_inline(injected) };
                    job_b.forget_after_inline();
                    drop(value_b);
                } else {
                    // SAFETY: not reclaimed: the latch was seen set.
                    let result_b = unsafe { job_b.into_result() };
                    drop(result_b.into_value());
                }
            };
            if let Err(payload_b) = panic::catch_unwind(AssertUnwindSafe(finish_b)) {
                drop_payload(payload_b);
            }
            panic::resume_unwind(payload)
        }
    }
}

/// Pops jobs until our own `job_b` comes back (returns true: run it inline) or
/// until it was stolen and has finished (returns false), and notes which,
/// and whether a stolen half ran shorter than its hand-over
/// (`latch::SHORT_RUN`), for the next outermost half
/// (`WorkerThread::note_half_taken`). A join whose half another worker ran
/// lets the pool linger (`Registry::linger_after_call`): such joins end
/// loops (rayon's, through the rayon-core stand-in), and loops come one
/// after another.
#[cold]
fn reclaim_or_wait<F, R>(worker: &WorkerThread, job_b: &StackJob<OwnerLatch, F, R>) -> bool
where
    F: FnOnce(bool) -> R + Send,
    R: Send,
{
    let reclaimed = take_back_or_wait(worker, job_b);
    // Not reclaimed: the latch was seen set, so `ran_short` is as its
    // setter left it.
    worker.note_half_taken(!reclaimed, !reclaimed && job_b.latch().ran_short());
    if !reclaimed {
        worker.registry_arc().linger_after_call();
    }
    reclaimed
}

/// [`reclaim_or_wait`]'s search. Jobs above ours on the queue were pushed
/// by `a`: on a fiber the task suspends rather than run them, elsewhere
/// they are run on the way.
fn take_back_or_wait<F, R>(worker: &WorkerThread, job_b: &StackJob<OwnerLatch, F, R>) -> bool
where
    F: FnOnce(bool) -> R + Send,
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
            Some(job) if worker.fibers().can_suspend() => {
                // A task `a` queued: run here it would sit on top of this
                // one, which could not go on before it returns, and it may
                // wait for what this task does after the join (fiber.rs).
                // It goes back, and this task suspends until the fiber that
                // takes over the loop has run it and `b`.
                worker.push_uncounted(job);
                worker.wait_for_stolen_half(&|| job_b.latch().probe());
                return false;
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
