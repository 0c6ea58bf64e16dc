//! The futures' slot (`next`): a future woken by a poll on this worker
//! runs as soon as that poll returns, with no queue in between, within a
//! bounded streak.

use crate::sched::job::JobRef;

use super::*;

/// How many jobs in a row a worker may take from its `next` slot before the
/// slot's job goes behind the queued ones: two futures waking each other keep
/// the slot busy, and the queues must not wait on them for ever.
const MAX_NEXT_STREAK: u32 = 32;

/// Ends a poll's mark on its worker (see [`WorkerThread::enter_poll`]).
pub(crate) struct PollGuard<'a> {
    worker: &'a WorkerThread,
    outer: bool,
}

impl Drop for PollGuard<'_> {
    fn drop(&mut self) {
        self.worker.polling.set(self.outer);
    }
}

impl WorkerThread {
    /// Whether a job woken now may go to the `next` slot: a future's poll is
    /// running on this worker, and it is not inside a `join` whose second
    /// half is on the join stack (that `join` may run the half for long once
    /// the first returns, and pops it back without a look at the slot:
    /// fork.rs).
    pub(crate) fn may_fill_next(&self) -> bool {
        self.polling.get() && self.join_stack().is_empty()
    }

    /// Marks the running job as a future's poll until the guard drops.
    pub(crate) fn enter_poll(&self) -> PollGuard<'_> {
        PollGuard {
            worker: self,
            outer: self.polling.replace(true),
        }
    }

    /// Puts a job woken by the running poll in the `next` slot. A job already
    /// there goes to the local queue, where thieves can take it.
    pub(crate) fn push_next(&self, job: JobRef) {
        self.count_push();
        if let Some(previous) = self.next.replace(Some(job)) {
            self.publish(&self.local, previous);
        }
    }

    /// Moves the `next` slot's job to the local queue, where thieves can take
    /// it: before this worker stops taking jobs for a while (a helping wait
    /// returns to its task, a blocking call begins).
    #[inline]
    pub(crate) fn flush_next(&self) {
        if let Some(job) = self.next.take() {
            self.publish(&self.local, job);
        }
    }

    /// The `next` slot's job, unless it has had its streak (then it goes
    /// behind the queued work).
    #[inline(always)]
    pub(super) fn take_next(&self) -> Option<JobRef> {
        match self.next.take() {
            Some(job) if self.next_streak.get() < MAX_NEXT_STREAK => {
                self.next_streak.set(self.next_streak.get() + 1);
                return Some(job);
            }
            Some(job) => {
                self.next_streak.set(0);
                self.publish(&self.yielded, job);
            }
            None => self.next_streak.set(0),
        }
        None
    }
}
