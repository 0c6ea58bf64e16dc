//! The worker's own queues: pushing a task where thieves see it, and the
//! order in which a worker takes its next task from its own queues, its
//! seat's yield queue, the pinned and the global queue (the fairness tick).

use crate::sched::deque::Worker;
use crate::sched::job::JobRef;
use crate::sched::registry::{JobCounters, Seats, SharedQueue};

use super::search::{steal_from, Sweep};
use super::*;

/// How often (in tasks) a worker looks at the shared queues and the oldest end
/// of its own queue before its newest task, so that no queue starves under a
/// constant stream of local work. Prime, so it does not beat with task patterns.
/// Part of the documented task order (crate docs, "Task order"; the order
/// tests in tests/rayon_parity.rs model it): a change goes there too.
const FAIRNESS_INTERVAL: u32 = 61;

impl WorkerThread {
    /// Pushes a job onto this worker's own queue, where thieves can take it.
    #[inline]
    pub(crate) fn push(&self, job: JobRef) {
        self.count_push();
        self.publish(&self.local, job);
    }

    /// As [`WorkerThread::push`], for a job not counted in the drain books:
    /// a stack job of `join` (see [`JobRef::run`]).
    #[inline]
    pub(crate) fn push_uncounted(&self, job: JobRef) {
        self.publish(&self.local, job);
    }

    /// The one way this worker puts a job into one of its queues that others
    /// take from (`local` or `yielded`): the push, then the notify that the
    /// protocol pairs with every push (sleep.rs, invariant 1).
    #[inline(always)]
    pub(super) fn publish(&self, queue: &Worker<JobRef>, job: JobRef) {
        queue.push(job);
        self.registry.sleep.notify_work();
    }

    /// Counts a job this worker queues in the drain books.
    #[inline]
    pub(super) fn count_push(&self) {
        JobCounters::bump(&self.registry.counters[self.index].pushed);
    }

    /// Queues a job behind this worker's other work, oldest first among such
    /// jobs (see [`SeatQueues::yielded`]).
    pub(crate) fn push_yielded(&self, job: JobRef) {
        self.count_push();
        self.publish(&self.yielded, job);
    }

    /// Whether this seat holds work that only it takes without stealing:
    /// the `next` slot, its join stack, its local and yield queues (for
    /// `weft::current_thread_has_pending_tasks`). The queues' own emptiness
    /// checks, so a thief may empty one just after.
    pub(crate) fn has_local_work(&self) -> bool {
        let next = self.next.take();
        let has_next = next.is_some();
        self.next.set(next);
        has_next
            || !self.join_stack().is_empty()
            || !self.local.is_empty()
            || !self.yielded.is_empty()
    }

    /// Pops the newest job of this worker's own queue.
    #[inline]
    pub(crate) fn pop(&self) -> Option<JobRef> {
        self.local.pop()
    }

    /// Work this worker takes without searching: its own queues and the global one.
    pub(super) fn find_own_work(&self) -> Option<JobRef> {
        if let Some(job) = self.take_next() {
            return Some(job);
        }
        let tick = self.tick.get().wrapping_add(1);
        self.tick.set(tick);
        if tick % FAIRNESS_INTERVAL == 0 {
            if let Some(job) = self.take_oldest_first() {
                return Some(job);
            }
        }
        self.take_seat_queues()
            .or_else(|| self.take_pinned_or_global())
    }

    /// The queues of this seat that others reach only by stealing: its join
    /// stack, its local queue, its yield queue.
    #[inline(always)]
    pub(super) fn take_seat_queues(&self) -> Option<JobRef> {
        // A wait inside a `join`'s first half: the newest half is most
        // likely what it waits for (and on one worker, nobody else runs it).
        if let Some(job) = self.join_stack().pop_newest() {
            return Some(job);
        }
        if let Some(job) = self.local.pop() {
            return Some(job);
        }
        self.yielded.pop()
    }

    /// Runs one pending task, if this seat finds one, through [`execute`]
    /// like any other: for `weft::yield_now` (`local_only` false: the seat's
    /// own work in its usual order, then one sweep of the pool's other
    /// queues) and `weft::yield_local` (`local_only` true: the `next` slot,
    /// the seat's own queues and its pinned queue, never the global queue or
    /// another seat's). Returns whether it ran one.
    ///
    /// [`execute`]: WorkerThread::execute
    pub(crate) fn yield_once(&self, local_only: bool) -> bool {
        let job = if local_only {
            self.take_next()
                .or_else(|| self.take_seat_queues())
                .or_else(|| {
                    let pinned = self.registry.pinned_queue(self.index)?;
                    steal_from(|| pinned.steal())
                })
        } else {
            self.find_own_work().or_else(|| self.sweep_for_yield())
        };
        match job {
            Some(job) => {
                self.execute(job);
                true
            }
            None => false,
        }
    }

    /// One sweep of the other queues for a yield, taking one task, again
    /// only after a lost race (work was there). It never forces a join half
    /// out: a polling loop of yields would pay the heavy barrier every round,
    /// while asking gets the half shared at its owner's next `join`, where a
    /// later yield finds it.
    pub(super) fn sweep_for_yield(&self) -> Option<JobRef> {
        loop {
            let mut contended = false;
            let mut asked = false;
            let found = self.sweep(Sweep {
                contended: &mut contended,
                asked: &mut asked,
                single: true,
                force: false,
            });
            if found.is_some() || !contended {
                return found;
            }
            std::hint::spin_loop();
        }
    }

    /// The shared queues a worker takes from without searching: its pinned
    /// queue, then a batch of the global queue.
    #[inline]
    pub(super) fn take_pinned_or_global(&self) -> Option<JobRef> {
        for queue in self.registry.shared_queues(self.index, Seats::None) {
            let found = match queue {
                _ if queue.is_empty() => None,
                SharedQueue::Pinned(pinned) => steal_from(|| pinned.steal()),
                SharedQueue::Global(global) => {
                    self.batch_moved(steal_from(|| global.steal_batch_and_pop(&self.local)))
                }
                SharedQueue::Local { .. }
                | SharedQueue::Yielded { .. }
                | SharedQueue::Join { .. } => {
                    unreachable!("no seat's queues are visited with Seats::None")
                }
            };
            if found.is_some() {
                return found;
            }
        }
        None
    }

    /// After a batch of tasks was moved into this worker's local queue (one
    /// of them, `taken`, to run now): the rest landed in a queue others take
    /// from, which is a push like any other and needs its notify (invariant
    /// 1 of the protocol). While the batch was on its way no queue showed it,
    /// so a searcher may have given up in the meantime.
    #[inline]
    pub(super) fn batch_moved(&self, taken: Option<JobRef>) -> Option<JobRef> {
        if taken.is_some() && !self.local.is_empty() {
            self.registry.sleep.notify_work();
        }
        taken
    }

    /// The fairness path: pinned, global, then the oldest job of our own queue.
    pub(super) fn take_oldest_first(&self) -> Option<JobRef> {
        self.take_pinned_or_global()
            .or_else(|| self.yielded.pop())
            .or_else(|| steal_from(|| self.registry.stealer(self.index).steal()))
    }

    pub(super) fn has_pinned_work(&self) -> bool {
        self.registry.pinned_queue(self.index).is_some()
    }
}
