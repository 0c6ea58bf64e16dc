//! The owner's side of this seat's join stack (join_stack.rs): leaving a
//! second half on it, taking it back, and handing one to searchers, asked
//! for or, between a loop's chunks, unasked (`offer_work`).

use crate::sched::barrier;
use crate::sched::job::JobRef;
use crate::sched::join_stack::{JoinStack, Room};

use super::*;

impl WorkerThread {
    #[inline(always)]
    pub(super) fn join_stack(&self) -> &JoinStack {
        // SAFETY: the pointer is into `self.registry`'s boxed slice of join
        // stacks, which lives as long as the `Arc` this struct holds.
        unsafe { &*self.join_stack }
    }

    /// Whether this seat's join stack takes another half, and where
    /// ([`push_join`]), by the bound its owner keeps: `None` asks
    /// [`join_room_after_looking`](WorkerThread::join_room_after_looking).
    ///
    /// [`push_join`]: WorkerThread::push_join
    #[inline(always)]
    pub(crate) fn join_room(&self) -> Option<Room> {
        self.join_stack().room()
    }

    /// [`join_room`](WorkerThread::join_room) settled by a look at the
    /// stack's `top`: `None` when the stack is full (or holds no halves at
    /// all: join_stack.rs), where `join` leaves its half on the local queue.
    #[cold]
    pub(crate) fn join_room_after_looking(&self) -> Option<Room> {
        self.join_stack().room_after_looking()
    }

    /// Leaves `join`'s second half on this seat's join stack (join_stack.rs)
    /// where `room` says, and returns its index: [`pop_join`] then says
    /// whether it came back. With `outermost_to_queue`, a half that finds
    /// this seat's join stack and local queue empty moves on to the local
    /// queue at once if a thief may come for it (`thieves_may_come`), and
    /// [`pop_join`] then says it did not come back (fork.rs, `Place`).
    ///
    /// # Safety
    /// `job` must come from `StackJob::as_job_ref`, with that contract, and
    /// `room` from [`join_room`](WorkerThread::join_room) or
    /// [`join_room_after_looking`](WorkerThread::join_room_after_looking)
    /// with nothing pushed onto or taken from the join stack by this thread
    /// since.
    ///
    /// [`pop_join`]: WorkerThread::pop_join
    #[inline(always)]
    pub(crate) unsafe fn push_join(
        &self,
        room: Room,
        job: JobRef,
        outermost_to_queue: bool,
    ) -> usize {
        let stack = self.join_stack();
        // SAFETY: forwarded from this function's contract; this is the
        // seat's thread, the stack's owner.
        let pushed = unsafe { stack.push(room, job) };
        // A push onto a stack that holds older halves is covered by the
        // notify of the push that made it non-empty (sleep.rs, rule
        // covered-stack).
        if pushed.alone {
            self.first_half_pushed(outermost_to_queue);
        }
        if stack.take_request() {
            self.share_oldest_half();
        }
        pushed.index
    }

    /// Takes back the half the caller pushed at `index` with [`push_join`].
    /// Returns false if it was taken: stolen, run by a wait of this
    /// worker's, or shared onto the local queue (where
    /// [`WorkerThread::pop`] may still find it).
    ///
    /// [`push_join`]: WorkerThread::push_join
    #[inline(always)]
    pub(crate) fn pop_join(&self, index: usize) -> bool {
        self.join_stack().pop(index)
    }

    /// A point where the running task can give work away (a parallel loop
    /// between two chunks of its items): shares the oldest half of this
    /// seat's join stack when a searcher asked for it, as the next `join`
    /// would (join_stack.rs), or when workers are searching and the local
    /// queue is empty (so that no half shared before still waits there);
    /// returns
    /// whether workers are searching with nothing of this worker's to take,
    /// in which case the caller may split off more.
    ///
    /// Sharing unasked saves the round trip of a request: a searcher that
    /// sees the half asks at once, but its owner, inside a chunk of a few
    /// microseconds, answers only at the chunk's end, and in a loop of
    /// tens of microseconds that wait is a fifth of the loop
    /// (docs/PARALLEL.md, "A loop of about 15 us in a pool"). The share is
    /// the owner's own move, the one a request would have made (a
    /// request is a hint, never a condition), and `publish` notifies for
    /// it as rule covered-stack asks. At most one shared half waits on the
    /// local queue this way: the next chunk's look finds it there if no
    /// searcher has taken it, and shares nothing more. The loom models run
    /// this look inside a join's first half against the other worker's
    /// search and park (worker_loom_tests.rs, `a_half_a_loop_shares_*`).
    #[inline]
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) fn offer_work(&self) -> bool {
        let stack = self.join_stack();
        let searchers = self.registry.sleep.has_searchers();
        let asked = stack.take_request();
        if asked || (searchers && !stack.is_empty() && self.local.is_empty()) {
            self.share_oldest_half();
        }
        searchers && stack.is_empty() && self.local.is_empty()
    }

    /// A push made the join stack non-empty. With the local queue empty
    /// too (and the caller willing: fork.rs, `Place`), the half is the
    /// outermost of the running task's joins, the largest in divide and
    /// conquer: it goes to the local queue at once, where a thief takes it
    /// without asking, for the owner may be in a first half that joins no
    /// more for a long while (a sequential leaf) and so answers no
    /// request; unless no thief may come for it (`thieves_may_come`).
    /// Otherwise the protocol's notify, as rule covered-stack
    /// asks (the share's `publish` notifies too; a share that finds the
    /// half already taken by force leaves an empty stack, which needs no
    /// notify).
    ///
    /// Inside a future's poll the `next` slot may hold a future that poll
    /// woke: it goes where thieves see it now, as the half's `join` may run
    /// long, and no job goes to the slot while the join stack holds this
    /// half (future/spawn.rs, `schedule`), so `join` need not look again.
    #[cold]
    #[inline(never)]
    fn first_half_pushed(&self, outermost_to_queue: bool) {
        self.flush_next();
        if outermost_to_queue && self.local.is_empty() && self.thieves_may_come() {
            self.share_oldest_half();
        } else {
            self.registry.sleep.notify_work();
        }
    }

    /// Whether another worker may come for the task's outermost half soon:
    /// some worker is idle, or thieves took this seat's last half that left
    /// its join stack. Otherwise every other worker is busy and has not
    /// been taking this seat's halves: the half stays on the join stack,
    /// where taking it back costs no queue operation, and a worker that
    /// comes idle later asks for it or, after a bounded wait, takes it by
    /// force (join_stack.rs). rayon's code through `rayon-core/` pays the
    /// share once a small nested loop otherwise: a `flat_map` of short
    /// inner loops ran at 1.64x rayon's time (docs/RAYON.md, "Session 25").
    /// Under loom, always: the models keep the share path as they ran it
    /// (the other path is the notify of any push that makes the stack
    /// non-empty, which they run too), without one more load to explore.
    #[inline]
    fn thieves_may_come(&self) -> bool {
        cfg!(loom) || self.halves_taken.get() || self.registry.sleep.has_idle()
    }

    /// Records whether a join half of this seat's that did not come back
    /// through the join stack was run by another worker
    /// ([`thieves_may_come`](WorkerThread::thieves_may_come)).
    #[inline]
    pub(crate) fn note_half_taken(&self, taken: bool) {
        self.halves_taken.set(taken);
    }

    /// A searcher asked for work, or searchers are looking (`offer_work`,
    /// `first_half_pushed`): the oldest half of this seat's join stack (the
    /// largest, in divide-and-conquer) moves to the local queue, where
    /// thieves steal it without the heavy barrier of a forced steal.
    #[cold]
    #[inline(never)]
    pub(super) fn share_oldest_half(&self) {
        if let Some(job) = self.join_stack().take_oldest() {
            WorkerCounters::add(&self.stats().halves_shared, 1);
            self.publish(&self.local, job);
        }
    }

    /// After a half was taken from `stack` by force: the halves left behind
    /// are made known anew (sleep.rs, rule covered-stack). The heavy barrier
    /// pairs with the owner's look at `top` after a push: either the owner
    /// saw this steal (and notifies for its next push itself), or this look
    /// sees the push.
    #[cold]
    pub(super) fn forced_out(&self, stack: &JoinStack) {
        barrier::heavy();
        if !stack.is_empty() {
            self.registry.sleep.notify_work();
        }
    }
}
