//! The owner's side of this seat's join stack (join_stack.rs): leaving a
//! second half on it, taking it back, and handing one to searchers, asked
//! for or, between a loop's chunks, unasked (`offer_work`).

use crate::sched::barrier;
use crate::sched::join_stack::{Half, JoinStack, Room};

use super::*;

impl WorkerThread {
    #[inline(always)]
    pub(super) fn join_stack(&self) -> &JoinStack {
        // SAFETY: the pointer is into `self.registry`'s boxed slice of join
        // stacks, which lives as long as the `Arc` this struct holds.
        unsafe { &*self.join_stack }
    }

    /// Whether this seat's join stack takes another half ([`push_join`]):
    /// `None` when a searcher asked or the stack holds no halves, which
    /// [`join_room_after_looking`](WorkerThread::join_room_after_looking)
    /// settles.
    ///
    /// [`push_join`]: WorkerThread::push_join
    #[inline(always)]
    pub(crate) fn join_room(&self) -> Option<Room> {
        self.join_stack().room()
    }

    /// [`join_room`](WorkerThread::join_room) when it said no: a searcher's
    /// request takes the room away, so it is answered here: the oldest half
    /// goes to the local queue (`share_oldest_half`). `None` when the stack
    /// holds no halves at all (join_stack.rs), where `join` leaves its half
    /// on the local queue.
    #[cold]
    pub(crate) fn join_room_after_looking(&self) -> Option<Room> {
        let stack = self.join_stack();
        if stack.take_request() {
            self.share_oldest_half();
        }
        stack.room_after_looking()
    }

    /// Leaves `join`'s second half on this seat's join stack (join_stack.rs);
    /// [`pop_join`] then says whether it came back. With
    /// `outermost_to_queue`, a half that finds this seat's join stack and
    /// local queue empty moves on to the local queue at once if a thief may
    /// come for it (`thieves_may_come`), and [`pop_join`] then says it did
    /// not come back (fork.rs, `Place`).
    ///
    /// # Safety
    /// As for `JoinStack::push`: `half` stays where it is until
    /// [`pop_join`] returns for it, and `room` came from
    /// [`join_room`](WorkerThread::join_room) or
    /// [`join_room_after_looking`](WorkerThread::join_room_after_looking).
    ///
    /// [`pop_join`]: WorkerThread::pop_join
    #[inline(always)]
    pub(crate) unsafe fn push_join(&self, room: Room, half: &Half, outermost_to_queue: bool) {
        let stack = self.join_stack();
        // SAFETY: forwarded from this function's contract; this is the
        // seat's thread, the stack's owner.
        let alone = unsafe { stack.push(room, half) };
        // A push onto a stack that holds older halves is covered by the
        // notify of the push that made it non-empty (sleep.rs, rule
        // covered-stack).
        if alone {
            self.first_half_pushed(outermost_to_queue);
        }
        // A searcher's request is not looked at here: it takes the room
        // away, so the `join` that meets it comes through
        // `join_room_after_looking`, which answers it.
    }

    /// Takes back `half`, which the caller pushed with [`push_join`].
    /// Returns false if it was taken: stolen, run by a wait of this
    /// worker's, or shared onto the local queue (where
    /// [`WorkerThread::pop`] may still find it).
    ///
    /// [`push_join`]: WorkerThread::push_join
    #[inline(always)]
    pub(crate) fn pop_join(&self, half: &Half) -> bool {
        self.join_stack().pop(half)
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
        // A share that takes nothing met a taker holding the stack's lock,
        // which may be a thief that looked before this push and found
        // nothing: the push is then made known by the notify.
        if !(outermost_to_queue
            && self.local.is_empty()
            && self.thieves_may_come()
            && self.share_oldest_half())
        {
            self.registry.sleep.notify_work();
        }
    }

    /// Whether another worker may come for the task's outermost half soon, and
    /// gain by it: thieves took this seat's last half that left its join stack,
    /// and it ran long; or some worker is idle, unless the last half of this
    /// seat's that a thief ran since the running job started was over sooner
    /// than a hand-over costs (latch.rs, `SHORT_RUN`). Otherwise every other
    /// worker is busy and has not been taking this seat's halves, or the halves
    /// it took were too short to pay: the half stays on the join stack, where
    /// taking it back costs no queue operation, and a worker that comes idle
    /// later asks for it or, after a bounded wait, takes it by force
    /// (join_stack.rs); a half taken that way and run long turns the share on
    /// again. rayon's code through `rayon-core/` pays the share once a small
    /// nested loop otherwise: a `flat_map` of short inner loops ran at 1.64x
    /// rayon's time with every outermost half shared, and at 1.5-2.1x with it
    /// shared while a worker was idle or thieves had taken the last half,
    /// however short, a thief taking the inner loops' halves of a few items
    /// while the owner waited for each (docs/RAYON.md, "Session 25", "Session
    /// 27").
    /// Under loom, always: the models keep the share path as they ran it
    /// (the other path is the notify of any push that makes the stack
    /// non-empty, which they run too), without one more load to explore.
    #[inline]
    fn thieves_may_come(&self) -> bool {
        cfg!(loom)
            || self.halves_taken.get()
            || (!self.halves_short.get() && self.registry.sleep.has_idle())
    }

    /// Records whether a join half of this seat's that did not come back
    /// through the join stack was run by another worker, and if so whether
    /// it ran shorter than its hand-over
    /// ([`thieves_may_come`](WorkerThread::thieves_may_come)). A half that
    /// came back leaves the second answer as it was: it says nothing of
    /// what thieves take.
    #[inline]
    pub(crate) fn note_half_taken(&self, taken: bool, short: bool) {
        self.halves_taken.set(taken && !short);
        if taken {
            self.halves_short.set(short);
        }
    }

    /// A searcher asked for work, or searchers are looking (`offer_work`,
    /// `first_half_pushed`): the oldest half of this seat's join stack (the
    /// largest, in divide-and-conquer) moves to the local queue, where
    /// thieves steal it without the heavy barrier of a forced steal.
    #[cold]
    #[inline(never)]
    pub(super) fn share_oldest_half(&self) -> bool {
        match self.join_stack().take_oldest() {
            Some(job) => {
                WorkerCounters::add(&self.stats().halves_shared, 1);
                self.publish(&self.local, job);
                true
            }
            None => false,
        }
    }

    /// After a half was taken from `stack` by force: the halves left behind
    /// are made known anew (sleep.rs, rule covered-stack). The heavy barrier
    /// pairs with the owner's look at `taken` after a push: either the owner
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

// Not under loom: pools are built there only inside the models.
#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    use crate::sched::worker::WorkerThread;
    use crate::Pool;

    /// A `join` whose first half spins until the second has started, so
    /// that the second runs on the other worker; the second does `then`.
    fn join_with_a_stolen_half(then: impl FnOnce() + Send) {
        let started = AtomicBool::new(false);
        crate::join(
            || {
                while !started.load(Ordering::SeqCst) {
                    std::hint::spin_loop();
                }
            },
            || {
                started.store(true, Ordering::SeqCst);
                then();
            },
        );
    }

    /// Joins until `worker` notes a stolen half that ran short. A thief may
    /// be preempted inside a half of a store (which then runs long), so it
    /// tries up to 1,000 times.
    fn note_a_short_stolen_half(worker: &WorkerThread) {
        let ran_short = (0..1_000).any(|_| {
            join_with_a_stolen_half(|| ());
            worker.halves_short.get()
        });
        assert!(
            ran_short,
            "1,000 stolen halves of one store, none noted short"
        );
    }

    /// A stolen half that ran long turns the outermost half's share on;
    /// one over sooner than a hand-over turns it off, even with the other
    /// worker idle. The long half sleeps, and cannot run short.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "interpreted, no half runs shorter than a microsecond: covered natively"
    )]
    fn halves_thieves_ran_long_turn_the_share_on_and_short_ones_off() {
        let pool = Pool::builder().workers(2).build().unwrap();
        pool.install(|| {
            let worker = WorkerThread::current().expect("install runs on a worker");
            join_with_a_stolen_half(|| std::thread::sleep(Duration::from_millis(2)));
            assert!(worker.halves_taken.get(), "a long stolen half not noted");
            assert!(!worker.halves_short.get(), "a 2 ms half noted short");
            assert!(worker.thieves_may_come());

            note_a_short_stolen_half(worker);
            assert!(!worker.halves_taken.get());
            assert!(
                !worker.thieves_may_come(),
                "the outermost half would still go to the local queue after a short steal"
            );

            join_with_a_stolen_half(|| std::thread::sleep(Duration::from_millis(2)));
            assert!(
                worker.thieves_may_come(),
                "a long stolen half did not turn the share on again"
            );
        });
    }

    /// A searcher's request lowers the room bound; the owner's next `join`
    /// meets it in its cold path and answers: the oldest half (the outer
    /// join's second) moves to the local queue, from where the owner, alone
    /// in a pool of one worker, takes it back when the outer join ends. The
    /// inner join's own half finds room and comes back unstolen.
    #[test]
    fn the_next_join_answers_a_request_with_the_oldest_half() {
        let pool = Pool::builder().workers(1).build().unwrap();
        let shared = || {
            let worker = WorkerThread::current().expect("runs on a worker");
            worker.stats().halves_shared.load(Ordering::Relaxed)
        };
        let (shared, outer_b) = pool.install(|| {
            let before = shared();
            let (after, outer_b) = crate::join(
                || {
                    // The first half runs where `join` was called.
                    let worker = WorkerThread::current().expect("runs on a worker");
                    assert!(
                        !worker.join_stack().is_empty(),
                        "the outer half was not pushed"
                    );
                    // What a searcher does when it finds the stack non-empty.
                    worker.join_stack().request();
                    assert!(worker.join_room().is_none(), "the request left room");
                    assert_eq!(crate::join(|| 1, || 2), (1, 2));
                    assert!(
                        worker.join_stack().is_empty() && !worker.local.is_empty(),
                        "the outer half did not move to the local queue"
                    );
                    assert!(worker.join_room().is_some(), "the answer left no room");
                    shared()
                },
                || 3,
            );
            (after - before, outer_b)
        });
        assert_eq!((shared, outer_b), (1, 3));
    }

    /// A short stolen half is the running task's evidence only: the next
    /// task on the same worker starts without it.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "interpreted, no half runs shorter than a microsecond: covered natively"
    )]
    fn a_short_stolen_half_is_forgotten_when_the_next_task_starts() {
        let pool = Pool::builder().workers(2).build().unwrap();
        let index = pool.install(|| {
            let worker = WorkerThread::current().expect("install runs on a worker");
            note_a_short_stolen_half(worker);
            worker.index()
        });
        let (sender, receiver) = std::sync::mpsc::channel();
        pool.spawn_on(index, move || {
            let worker = WorkerThread::current().expect("a task runs on a worker");
            sender.send(worker.halves_short.get()).unwrap();
        });
        assert!(
            !receiver.recv().unwrap(),
            "a new task started with the last task's short halves noted"
        );
    }
}
