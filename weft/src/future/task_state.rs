//! The state machine of a spawned future's task: who queues its next poll.
//! It lives on its own so that loom can check it (`loom_tests` below, run with
//! `RUSTFLAGS="--cfg loom" cargo test -p weft --lib --release`).
//!
//! A spawned future lives in a `Task` (future.rs): an `Arc` shared by its
//! wakers and by its queued poll (the queue holds one reference to the task).
//! A small state machine decides who queues the next poll:
//!
//! ```text
//!              wake                      a worker takes the job
//!   IDLE ───────────────▶ SCHEDULED ───────────────────────────▶ RUNNING
//!    ▲                       ▲  (wakes: nothing to do)        │  │  │
//!    │   poll → Pending      │                                │  │  │ wake
//!    └────────────────────────┼───────────────────────────────┘  │  ▼
//!                            │  poll → Pending: queue once more  │ RUNNING_NOTIFIED
//!                            └───────────────────────────────────┼──┘ (wakes: nothing)
//!                                      poll → Ready / panic      ▼
//!                                                              DONE (wakes: nothing)
//! ```
//!
//! Only the transition out of IDLE queues a job, so a future is queued at most
//! once at a time and never polled by two workers at once; a wake during a poll
//! (RUNNING → RUNNING_NOTIFIED) is not lost: the poller sees it when it tries
//! to go back to IDLE and queues the task again instead.
//!
//! Stopping a task uses these transitions and adds none. The pool-drop
//! sweep and an abort (`JoinHandle::abort`) cancel an IDLE task (IDLE →
//! DONE, [`TaskState::cancel_if_idle`]), which makes the canceller the owner
//! of the future, exactly as a wake that moves it out of IDLE makes the
//! waker the one to queue it: of the two, one wins. An abort that finds the
//! task anything but IDLE sets its mark first and then wakes the task; the
//! wake is either absorbed by a queued or running poll, whose next `start`
//! acquires it (so that poll sees the mark and drops the future instead of
//! polling it), or moves a task that just went IDLE to SCHEDULED, or finds
//! it DONE. So an aborted task is never left IDLE: it ends DONE, its future
//! dropped once (loom checks this too).
//!
//! # Who can still poll: [`Pollers`]
//!
//! The task's memory is shared by more than those who can poll it: its
//! `JoinHandle` and abort handles hold the same allocation (the handle's
//! result slot lives in the task, so a spawn allocates once). A future that
//! nothing can wake any more must still be dropped then, not when the last
//! handle goes. So the task counts, apart from its `Arc`, the references
//! that can lead to a poll: each waker, and the queued poll (which becomes
//! the running poll's). Whoever takes that count to zero cancels the task if
//! it is IDLE, as the pool-drop sweep does, and drops the future if that
//! wins. Why that is enough:
//!
//! 1. At zero the task is IDLE or DONE: a SCHEDULED task has its queued
//!    poll, and a RUNNING one its running poll, each counted.
//! 2. The count can rise from zero only through an abort, which holds the
//!    task's memory through its handle and wakes a task it could not cancel
//!    (a counted queued poll, made by the transition out of IDLE). If the
//!    task was IDLE, the state machine lets exactly one of that wake and the
//!    last poller's cancel own it (as between any wake and cancel); if the
//!    wake won, its poll sees the abort mark and drops the future.
//! 3. A future that holds a waker of its own task keeps the count above
//!    zero until it is dropped (by the pool-drop sweep), so the drop of a
//!    future never takes the count to zero beneath its own dropping.
//!
//! So the future is dropped once, by the owner the state machine names, and
//! never while a poll may run (loom checks the race of the last waker's drop
//! with an abort and the worker's polls, below).

#[cfg(loom)]
use loom::sync::atomic::{AtomicU8, AtomicUsize};
use std::sync::atomic::Ordering as StateOrdering;
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU8, AtomicUsize};

/// Not queued, not running: waiting for a wake.
const IDLE: u8 = 0;
/// A job that will poll the future is queued.
const SCHEDULED: u8 = 1;
/// A worker is polling the future.
const RUNNING: u8 = 2;
/// A worker is polling the future and it was woken meanwhile.
const RUNNING_NOTIFIED: u8 = 3;
/// Finished, panicked or dropped: wakes do nothing.
const DONE: u8 = 4;

/// The state machine of a spawned future (see the module docs), on its own so
/// that loom can check it (`sleep` is checked the same way).
pub(crate) struct TaskState(AtomicU8);

impl TaskState {
    /// A task whose first poll is about to be queued.
    pub(crate) fn scheduled() -> TaskState {
        TaskState(AtomicU8::new(SCHEDULED))
    }

    /// A wake. Returns whether the caller must queue a poll (the task was
    /// IDLE); otherwise the wake is absorbed: the task is queued already, will
    /// be queued again after its running poll ([`TaskState::pending`]), or is done.
    pub(crate) fn wake(&self) -> bool {
        // Relaxed: only picks the transition to try; the CAS carries the ordering.
        let mut state = self.0.load(StateOrdering::Relaxed);
        loop {
            let next = match state {
                IDLE => SCHEDULED,
                RUNNING => RUNNING_NOTIFIED,
                // Absorbed, but still written (to the same value) below, so
                // that this wake is ordered before the poll to come.
                SCHEDULED | RUNNING_NOTIFIED => state,
                _ => return false,
            };
            // AcqRel: Release makes what the waking side wrote before the wake
            // visible to the next poll, which acquires the state in `start` or
            // (after RUNNING_NOTIFIED) in `pending`'s failed CAS. An absorbed
            // wake must write too: a plain load would publish nothing, and the
            // poll already queued might miss what this wake announces (loom
            // finds that). Acquire from IDLE pairs with `pending`'s Release, so
            // the next poll comes after the last one's writes.
            match self.0.compare_exchange(
                state,
                next,
                StateOrdering::AcqRel,
                StateOrdering::Relaxed,
            ) {
                Ok(_) => return state == IDLE,
                Err(actual) => state = actual,
            }
        }
    }

    /// A worker took the queued poll and is about to poll.
    pub(crate) fn start(&self) {
        // Acquire: pairs with the Release of whoever made the task SCHEDULED
        // (a queue orders that anyway) and of every wake absorbed since (they
        // write the state too). Nothing else changes the state while it is
        // SCHEDULED (wakes leave it as it is, cancels only act on IDLE), so a
        // plain swap suffices.
        let previous = self.0.swap(RUNNING, StateOrdering::Acquire);
        debug_assert_eq!(previous, SCHEDULED, "a future polled while not scheduled");
    }

    /// The poll returned `Pending`. Returns whether the caller must queue the
    /// task again (it was woken during the poll); otherwise it is IDLE.
    pub(crate) fn pending(&self) -> bool {
        // AcqRel: Release publishes the poll's writes to the waker that next
        // moves the task out of IDLE (and so to the next poll); Acquire on
        // failure sees what the waker that set RUNNING_NOTIFIED wrote before
        // waking, for the poll that follows.
        match self
            .0
            .compare_exchange(RUNNING, IDLE, StateOrdering::AcqRel, StateOrdering::Acquire)
        {
            Ok(_) => false,
            Err(state) => {
                debug_assert_eq!(state, RUNNING_NOTIFIED);
                // A swap, not a store: a wake absorbed between the CAS above
                // and this write (it rewrites RUNNING_NOTIFIED) must stay in
                // the release sequence the next poll's `start` acquires, and a
                // plain store from this thread would end that sequence.
                // AcqRel: acquires such a wake here already; releases to
                // `start` through the queue.
                let previous = self.0.swap(SCHEDULED, StateOrdering::AcqRel);
                debug_assert_eq!(previous, RUNNING_NOTIFIED);
                true
            }
        }
    }

    /// The task finished, panicked or is dropped by the party that owns the
    /// future right now (the poller, or whoever moved it out of IDLE and
    /// could not queue it). Later wakes do nothing.
    pub(crate) fn finish(&self) {
        // A swap for the same reason as in `pending`: racing wakes rewrite
        // the state, and DONE must come after them in its order (else a wake
        // ordered after DONE could leave RUNNING_NOTIFIED behind it). AcqRel:
        // DONE only has to stop later wakes; the result itself is published
        // through the join handle's packet.
        self.0.swap(DONE, StateOrdering::AcqRel);
    }

    /// Moves an IDLE task to DONE; returns whether it did (then the caller
    /// owns the future, to drop it): the pool-drop sweep and an abort.
    pub(crate) fn cancel_if_idle(&self) -> bool {
        // AcqRel: the cancelling thread sees the last poll's writes (it drops
        // the future they left).
        self.0
            .compare_exchange(IDLE, DONE, StateOrdering::AcqRel, StateOrdering::Relaxed)
            .is_ok()
    }

    pub(crate) fn is_done(&self) -> bool {
        // Acquire: a caller that sees DONE also sees the writes before `finish`.
        self.0.load(StateOrdering::Acquire) == DONE
    }
}

impl std::fmt::Debug for TaskState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Relaxed: a snapshot for display only.
        let name = match self.0.load(StateOrdering::Relaxed) {
            IDLE => "idle",
            SCHEDULED => "scheduled",
            RUNNING => "running",
            RUNNING_NOTIFIED => "running, notified",
            _ => "done",
        };
        f.write_str(name)
    }
}

/// How many wakers and queued or running polls a task has (the module
/// docs, "Who can still poll").
pub(crate) struct Pollers(AtomicUsize);

impl Pollers {
    /// A task whose first poll is about to be queued: that poll is counted.
    pub(crate) fn first_poll() -> Pollers {
        Pollers(AtomicUsize::new(1))
    }

    /// One more waker or queued poll.
    pub(crate) fn add(&self) {
        // Relaxed, as an `Arc`'s clone: the caller holds the task's memory,
        // and who may poll is decided by the state machine, not this count.
        self.0.fetch_add(1, StateOrdering::Relaxed);
    }

    /// One waker or poll fewer. Returns whether it was the last: the caller
    /// then cancels the task if it is IDLE.
    pub(crate) fn release(&self) -> bool {
        // AcqRel, as an `Arc`'s drop: the last one sees what the others did
        // before letting go (the state machine's own AcqRel carries the
        // future's writes too; this keeps the count's argument on its own).
        self.0.fetch_sub(1, StateOrdering::AcqRel) == 1
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    //! The state machine against wakes from another thread. The pool's queue
    //! is modelled by a counter of queued polls (a mutex, as real queues
    //! synchronise their push and pop); the future is ready once `ready` is
    //! set, and that flag is read and written Relaxed, so only the state
    //! machine's own orderings can make the poll after a wake see it. A lost
    //! wake leaves the task IDLE with its waker gone; a double queue shows as
    //! a poll too many or a poll of a task that is not SCHEDULED.

    use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use loom::sync::{Arc, Mutex};
    use loom::thread;

    use super::{Pollers, TaskState};

    struct Model {
        state: TaskState,
        queued: Mutex<usize>,
        ready: AtomicBool,
        polls: AtomicUsize,
        wakers_done: AtomicUsize,
    }

    impl Model {
        /// A task whose first poll is queued.
        fn scheduled() -> Model {
            Model {
                state: TaskState::scheduled(),
                queued: Mutex::new(1),
                ready: AtomicBool::new(false),
                polls: AtomicUsize::new(0),
                wakers_done: AtomicUsize::new(0),
            }
        }

        /// The worker: runs queued polls until the `wakers` threads are
        /// gone and nothing is queued.
        fn work(&self, wakers: usize, poll: impl Fn()) {
            loop {
                if self.take() {
                    poll();
                } else if self.wakers_done.load(Ordering::SeqCst) == wakers {
                    if !self.take() {
                        break;
                    }
                    poll();
                } else {
                    thread::yield_now();
                }
            }
        }

        fn wake(&self) {
            if self.state.wake() {
                *self.queued.lock().unwrap() += 1;
            }
        }

        fn take(&self) -> bool {
            let mut queued = self.queued.lock().unwrap();
            if *queued == 0 {
                return false;
            }
            *queued -= 1;
            true
        }

        /// One queued poll, as `Task::run` does it.
        fn poll(&self) {
            self.state.start();
            self.polls.fetch_add(1, Ordering::Relaxed);
            if self.ready.load(Ordering::Relaxed) {
                self.state.finish();
            } else if self.state.pending() {
                *self.queued.lock().unwrap() += 1;
            }
        }
    }

    /// One worker polls; `wakers` threads each make the future ready and wake
    /// it `wakes` times. (Two wakers: correct, but loom needs too long.)
    fn check(wakers: usize, wakes: usize) {
        loom::model(move || {
            let model = Arc::new(Model::scheduled());
            let threads: Vec<_> = (0..wakers)
                .map(|_| {
                    let model = Arc::clone(&model);
                    thread::spawn(move || {
                        // Relaxed on purpose (see the module comment).
                        model.ready.store(true, Ordering::Relaxed);
                        for _ in 0..wakes {
                            model.wake();
                        }
                        model.wakers_done.fetch_add(1, Ordering::SeqCst);
                    })
                })
                .collect();
            model.work(wakers, || model.poll());
            for thread in threads {
                thread.join().unwrap();
            }
            // No lost wake: the future saw `ready`. No double queue: nothing
            // is left queued, and however many wakes came, the poll after the
            // first wake saw `ready` and was the last.
            assert!(
                model.state.is_done(),
                "a wake was lost: {:?}, {} polls, ready {}",
                model.state,
                model.polls.load(Ordering::Relaxed),
                model.ready.load(Ordering::Relaxed)
            );
            assert_eq!(*model.queued.lock().unwrap(), 0);
            let polls = model.polls.load(Ordering::Relaxed);
            assert!((1..=2).contains(&polls), "{polls} polls");
        });
    }

    #[test]
    fn a_wake_from_another_thread_is_never_lost() {
        check(1, 1);
    }

    #[test]
    fn repeated_wakes_queue_one_poll() {
        check(1, 2);
    }

    /// The pool's drop sweep cancelling an idle task while a wake comes:
    /// exactly one of them owns the task afterwards.
    #[test]
    fn a_cancel_and_a_wake_never_both_own_an_idle_task() {
        loom::model(|| {
            let state = Arc::new(TaskState::scheduled());
            state.start();
            assert!(!state.pending());
            let waker = {
                let state = Arc::clone(&state);
                thread::spawn(move || state.wake())
            };
            let cancelled = state.cancel_if_idle();
            let scheduled = waker.join().unwrap();
            assert!(cancelled != scheduled);
        });
    }

    /// An abort (mark, then cancel if idle, else wake, as `Task::stop` does)
    /// racing a wake from another thread and the worker's polls of a future
    /// that is never ready: the future ends dropped exactly once, by the
    /// abort or by a poll that saw the mark, and nothing stays queued. The
    /// mark is Relaxed, so only the state machine can carry it to the poll.
    #[test]
    fn an_abort_racing_a_wake_and_a_poll_drops_the_future_once() {
        loom::model(|| {
            let model = Arc::new(Model::scheduled());
            let aborted = Arc::new(AtomicBool::new(false));
            let drops = Arc::new(AtomicUsize::new(0));
            let aborter = {
                let (model, aborted, drops) =
                    (Arc::clone(&model), Arc::clone(&aborted), Arc::clone(&drops));
                thread::spawn(move || {
                    aborted.store(true, Ordering::Relaxed);
                    if model.state.cancel_if_idle() {
                        drops.fetch_add(1, Ordering::Relaxed);
                    } else {
                        model.wake();
                    }
                    model.wakers_done.fetch_add(1, Ordering::SeqCst);
                })
            };
            let waker = {
                let model = Arc::clone(&model);
                thread::spawn(move || {
                    model.wake();
                    model.wakers_done.fetch_add(1, Ordering::SeqCst);
                })
            };
            let poll = || {
                model.state.start();
                if aborted.load(Ordering::Relaxed) {
                    model.state.finish();
                    drops.fetch_add(1, Ordering::Relaxed);
                } else {
                    model.polls.fetch_add(1, Ordering::Relaxed);
                    if model.state.pending() {
                        *model.queued.lock().unwrap() += 1;
                    }
                }
            };
            model.work(2, poll);
            aborter.join().unwrap();
            waker.join().unwrap();
            assert!(
                model.state.is_done(),
                "an abort was lost: {:?}",
                model.state
            );
            assert_eq!(drops.load(Ordering::Relaxed), 1);
            assert_eq!(*model.queued.lock().unwrap(), 0);
        });
    }

    /// The last waker of a pending future is dropped on one thread while an
    /// abort comes from another (mark, then cancel if idle, else wake: a
    /// wake out of IDLE adds a counted queued poll) and the worker runs what
    /// is queued (a poll that sees the mark drops the future; each poll lets
    /// go of its count when it ends). Whoever takes the count to zero
    /// cancels the task if it is IDLE and then drops the future. The future
    /// ends dropped exactly once, the task DONE, the count at zero.
    #[test]
    fn the_last_waker_and_an_abort_drop_the_future_once() {
        struct Counted {
            model: Model,
            pollers: Pollers,
            aborted: AtomicBool,
            drops: AtomicUsize,
        }
        impl Counted {
            fn release(&self) {
                // As `PollRef`'s drop: a DONE task is skipped by a load.
                if self.pollers.release()
                    && !self.model.state.is_done()
                    && self.model.state.cancel_if_idle()
                {
                    self.drops.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        loom::model(|| {
            // Polled once, pending, with one waker kept: IDLE, one poller.
            let task = Arc::new(Counted {
                model: Model::scheduled(),
                pollers: Pollers::first_poll(),
                aborted: AtomicBool::new(false),
                drops: AtomicUsize::new(0),
            });
            assert!(task.model.take());
            task.model.state.start();
            task.pollers.add(); // the waker the poll kept
            assert!(!task.model.state.pending());
            task.release(); // the poll ends
            let aborter = {
                let task = Arc::clone(&task);
                thread::spawn(move || {
                    task.aborted.store(true, Ordering::Relaxed);
                    if task.model.state.cancel_if_idle() {
                        task.drops.fetch_add(1, Ordering::Relaxed);
                    } else if task.model.state.wake() {
                        task.pollers.add();
                        *task.model.queued.lock().unwrap() += 1;
                    }
                    task.model.wakers_done.fetch_add(1, Ordering::SeqCst);
                })
            };
            let waker = {
                let task = Arc::clone(&task);
                thread::spawn(move || {
                    task.release(); // the last waker is dropped
                    task.model.wakers_done.fetch_add(1, Ordering::SeqCst);
                })
            };
            task.model.work(2, || {
                task.model.state.start();
                if task.aborted.load(Ordering::Relaxed) {
                    task.model.state.finish();
                    task.drops.fetch_add(1, Ordering::Relaxed);
                } else if task.model.state.pending() {
                    task.pollers.add();
                    *task.model.queued.lock().unwrap() += 1;
                }
                task.release();
            });
            aborter.join().unwrap();
            waker.join().unwrap();
            assert!(task.model.state.is_done(), "{:?}", task.model.state);
            assert_eq!(task.drops.load(Ordering::Relaxed), 1);
            assert_eq!(*task.model.queued.lock().unwrap(), 0);
            assert_eq!(task.pollers.0.load(Ordering::Relaxed), 0);
        });
    }
}
