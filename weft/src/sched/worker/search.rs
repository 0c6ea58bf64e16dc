//! Searching other queues for work: the sweep over every queue this
//! worker may take from, asking join stacks' owners before taking a half by
//! force, and how long a search lasts.

use std::time::{Duration, Instant};

use crate::sched::deque::{steal_oldest_and_batch, Steal};
use crate::sched::job::JobRef;
#[cfg(feature = "trace")]
use crate::sched::recorder::EventKind;
use crate::sched::registry::{Seats, SharedQueue};

use super::*;

/// How long a searcher asks the owner of a join stack to share its oldest
/// half before it takes the half itself (join_stack.rs). The owner answers
/// at its next `join`, nanoseconds away in fork-join code; a first half that
/// runs this long without joining again is a long one, and its second half
/// is worth the heavy barrier of a forced steal. About one wake-up
/// (docs/TUNING.md): the bound on how long a long first half can hold its
/// second half back from an idle worker.
#[cfg(not(loom))]
const ASK_BEFORE_STEALING: Duration = Duration::from_micros(20);

/// Under loom time barely moves: a searcher asks in its first sweep and
/// forces in the next, so the models explore both paths.
#[cfg(loom)]
const ASK_BEFORE_STEALING: Duration = Duration::ZERO;

/// One sweep's inputs and what it noticed besides the job it returns.
pub(super) struct Sweep<'a> {
    /// Set when a steal lost a race (work was there).
    pub(super) contended: &'a mut bool,
    /// Set when a join stack was asked to share (work is there).
    pub(super) asked: &'a mut bool,
    /// Take one task per queue rather than a batch.
    pub(super) single: bool,
    /// Steal join halves instead of asking for them.
    pub(super) force: bool,
}

/// What a search ended with.
pub(super) enum Search {
    Found(JobRef),
    /// The waiter's condition came true while searching.
    Done,
    /// Nothing found within the spin time.
    GaveUp,
}

/// Retries a steal until it succeeds or finds the queue empty.
pub(super) fn steal_from(mut steal: impl FnMut() -> Steal<JobRef>) -> Option<JobRef> {
    loop {
        match steal() {
            Steal::Success(job) => return Some(job),
            Steal::Empty => return None,
            Steal::Retry => std::hint::spin_loop(),
        }
    }
}

impl WorkerThread {
    /// Sweeps every queue this worker may take from until it finds a job, `done`
    /// holds, or the spin time passes with nothing found. A sweep that lost a
    /// race for a job (`Steal::Retry`) does not count towards giving up: work was
    /// there, so a thief beat us to it, and more may follow (marl's race).
    pub(super) fn search(
        &self,
        done: &dyn Fn() -> bool,
        deadline: Option<Instant>,
        woken: bool,
    ) -> Search {
        trace_hook!(self.trace(EventKind::SearchStart));
        let started = Instant::now();
        let outcome = self.search_from(started, done, deadline, woken);
        WorkerCounters::add(&self.stats().searching_ns, elapsed_ns(started));
        trace_hook!(self.trace(EventKind::SearchEnd {
            found: matches!(outcome, Search::Found(_))
        }));
        outcome
    }

    pub(super) fn search_from(
        &self,
        started: Instant,
        done: &dyn Fn() -> bool,
        deadline: Option<Instant>,
        woken: bool,
    ) -> Search {
        let spin = self.registry.spin_for(started);
        let mut first_sweep = true;
        // Whether this search has asked long enough (ASK_BEFORE_STEALING).
        let mut force = false;
        loop {
            let mut contended = false;
            let mut asked = false;
            let sweep = Sweep {
                contended: &mut contended,
                asked: &mut asked,
                single: woken && first_sweep,
                force,
            };
            if let Some(job) = self.sweep(sweep) {
                return Search::Found(job);
            }
            if done() {
                return Search::Done;
            }
            let now = Instant::now();
            if deadline.is_some_and(|deadline| now >= deadline) {
                return Search::Done;
            }
            let searched = now.duration_since(started);
            force = searched >= ASK_BEFORE_STEALING;
            // A closing pool is not worth spinning for: the searcher gives
            // up so that the drain check runs (a spin of an hour would
            // otherwise hold up the pool's drop for an hour). A search that
            // asked for a join half waits for the answer, or takes the half
            // (work is there, as with a lost race).
            let closed = self.registry.is_closed();
            let waits_for_half = asked && !closed;
            if !contended && !waits_for_half && (searched >= spin || closed) {
                return Search::GaveUp;
            }
            // A worker woken for a task that someone else took spins on only
            // within the bound on searchers (invariant 3 of the protocol).
            if woken
                && first_sweep
                && self
                    .registry
                    .sleep
                    .too_many_searching(self.registry.is_lingering())
            {
                return Search::GaveUp;
            }
            first_sweep = false;
            if waits_for_half || (!contended && searched >= self.registry.hooks.spin) {
                // The owner answers at its next join, which it reaches
                // sooner with this core if the two share one (more
                // workers than cores). Past the pool's spin time a search
                // that lost no race goes on only in a linger window
                // (`Registry::linger`), whose bound lets a searcher stay
                // for every core: the thread that makes the next call, or
                // folds its front, may need this one. std's yield even
                // under loom: it has no memory effect, and as a loom step
                // it made the models explore half as long again for
                // nothing.
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// One pass over the pinned queue, the global queue and every other worker's
    /// queue, starting at a random victim so thieves spread out.
    ///
    /// A worker woken for one task (`single`) takes one task per queue rather
    /// than half of it: during a fan-out the other woken workers are about to
    /// look in the same queue, and a batch moved here would only make them
    /// search further (and pin more epochs) to find it.
    pub(super) fn sweep(&self, sweep: Sweep<'_>) -> Option<JobRef> {
        let Sweep {
            contended,
            asked,
            single,
            force,
        } = sweep;
        let mut attempt = |steal: Steal<JobRef>| match steal {
            Steal::Success(job) => Some(job),
            Steal::Retry => {
                *contended = true;
                None
            }
            Steal::Empty => None,
        };
        // Worker seats and the spare seats in use (see spares.rs).
        let first = self.next_random() as usize;
        let mut failed = 0;
        let mut found = None;
        for queue in self
            .registry
            .shared_queues(self.index, Seats::Others { first })
        {
            if queue.is_empty() {
                continue;
            }
            let (_victim, stealer) = match queue {
                SharedQueue::Pinned(pinned) => {
                    found = attempt(pinned.steal());
                    if found.is_some() {
                        break;
                    }
                    continue;
                }
                SharedQueue::Global(global) => {
                    found = if single {
                        attempt(global.steal())
                    } else {
                        self.batch_moved(attempt(global.steal_batch_and_pop(&self.local)))
                    };
                    if found.is_some() {
                        break;
                    }
                    continue;
                }
                SharedQueue::Join {
                    seat: _victim,
                    stack,
                } => {
                    if !force {
                        stack.request();
                        *asked = true;
                        continue;
                    }
                    found = attempt(stack.steal());
                    if found.is_some() {
                        self.forced_out(stack);
                        WorkerCounters::add(&self.stats().halves_forced, 1);
                        WorkerCounters::add(&self.stats().stolen, 1);
                        trace_hook!(self.trace(EventKind::Steal { from: _victim }));
                        break;
                    }
                    failed += 1;
                    continue;
                }
                SharedQueue::Local { seat, queue } | SharedQueue::Yielded { seat, queue } => {
                    (seat, queue)
                }
            };
            found = if single {
                attempt(stealer.steal())
            } else {
                self.batch_moved(attempt(steal_oldest_and_batch(stealer, &self.local)))
            };
            if found.is_some() {
                WorkerCounters::add(&self.stats().stolen, 1);
                trace_hook!(self.trace(EventKind::Steal { from: _victim }));
                break;
            }
            failed += 1;
        }
        if failed > 0 {
            WorkerCounters::add(&self.stats().failed_steals, failed);
        }
        found
    }

    /// xorshift64*: cheap, private to the worker, good enough to pick victims.
    pub(super) fn next_random(&self) -> u64 {
        let mut x = self.rng.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng.set(x);
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}
