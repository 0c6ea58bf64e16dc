//! Futures as pool tasks: [`spawn_future`] runs a future on the same workers,
//! through the same queues and wake protocol, as closures; [`block_on`] runs
//! one to completion on the calling thread (helping, on a worker); and
//! [`yield_now`] lets other tasks run.
//!
//! A spawned future lives in a `Task`: an `Arc` shared by its wakers and by
//! the queued job that polls it. Each poll is one heap job. A small state
//! machine decides who queues the next poll:
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
//! A future nobody can wake any more is dropped with its last waker (its
//! handle then reports `Err`). One that keeps its own waker alive (say, it
//! owns both ends of a channel) is dropped when its pool is dropped: every
//! future that went pending is listed, weakly, in `PARKED` for that sweep.
//!
//! The transitions live in [`TaskState`], which loom checks (`loom_tests`
//! below, run with `RUSTFLAGS="--cfg loom" cargo test -p weft --lib --release`).

#[cfg(loom)]
use loom::sync::atomic::AtomicU8;
#[cfg(not(loom))]
use std::sync::atomic::AtomicU8;
use std::sync::atomic::Ordering as StateOrdering;

#[cfg(not(loom))]
pub use self::tasks::{block_on, spawn_future, yield_now, YieldNow};
#[cfg(not(loom))]
pub(crate) use self::tasks::{drop_parked, spawn_in};

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
    /// owns the future, to drop it).
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

/// The runtime side: tasks, wakers, scheduling, `block_on`, `yield_now`.
#[cfg(not(loom))]
mod tasks {
    use super::TaskState;
    use std::any::Any;
    use std::fmt;
    use std::future::Future;
    use std::panic::{self, AssertUnwindSafe};
    use std::pin::Pin;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex, MutexGuard, Weak};
    use std::task::{Context, Poll, Wake, Waker};
    use std::thread;

    use crate::job::{arc_job_ref, ArcJob, JobRef};
    use crate::registry::Registry;
    use crate::task::{self, JoinHandle, Packet};
    use crate::waiter::{block_until, Waiter};
    use crate::worker::WorkerThread;

    type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

    /// A spawned future and everything needed to poll it and report its result.
    struct Task<T> {
        state: TaskState,
        /// The future, `None` once it finished or was dropped. Only the party that
        /// moved `state` to RUNNING or (from IDLE or SCHEDULED) to DONE touches it,
        /// so the lock is never contended; it is there to avoid `unsafe`.
        future: Mutex<Option<BoxFuture<T>>>,
        packet: Arc<Packet<T>>,
        registry: Arc<Registry>,
        /// Whether the task is listed in [`PARKED`].
        listed: AtomicBool,
    }

    /// What the pool-drop sweep needs of a task, whatever its output type.
    trait Parked: Send + Sync {
        fn registry(&self) -> &Arc<Registry>;
        /// Drops the future if it is waiting for a wake (IDLE).
        fn cancel_if_idle(&self);
        fn is_done(&self) -> bool;
    }

    /// Every spawned future that returned `Pending` at least once, weakly, for
    /// [`drop_parked`]. Pruned of finished and freed tasks as it grows.
    static PARKED: Mutex<ParkedList> = Mutex::new(ParkedList {
        tasks: Vec::new(),
        prune_at: 64,
    });

    struct ParkedList {
        tasks: Vec<Weak<dyn Parked>>,
        /// Length at which the next push prunes the list first.
        prune_at: usize,
    }

    fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
        mutex
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The payload a [`JoinHandle`] reports for a future dropped before it finished.
    const DROPPED: &str = "weft: the future was dropped before it finished (its pool shut down, or nothing could wake it any more)";

    impl<T: Send + 'static> Task<T> {
        /// Polls the future once. The body of every job that polls a task.
        fn run(self: Arc<Self>) {
            self.state.start();
            let waker = Waker::from(Arc::clone(&self));
            let mut cx = Context::from_waker(&waker);
            let mut slot = lock(&self.future);
            let Some(future) = slot.as_mut() else {
                // Unreachable by the state machine; harmless if it were.
                self.state.finish();
                return;
            };
            let outcome = {
                let _polling = WorkerThread::current().map(WorkerThread::enter_poll);
                panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut cx)))
            };
            let result = match outcome {
                Ok(Poll::Pending) => {
                    drop(slot);
                    self.after_pending();
                    return;
                }
                Ok(Poll::Ready(value)) => Ok(value),
                Err(payload) => Err(payload),
            };
            self.state.finish();
            let future = slot.take();
            drop(slot);
            let result = match drop_future(future) {
                Ok(()) => result,
                // A destructor that panics after `Ready` still counts as a panic.
                Err(payload) => result.and(Err(payload)),
            };
            self.packet.complete(result);
        }

        /// After a poll returned `Pending`: back to IDLE, or queued once more if a
        /// wake came during the poll.
        fn after_pending(self: Arc<Self>) {
            if self.state.pending() {
                requeue(self);
            } else {
                self.list_parked();
            }
        }

        /// Lists the task for the pool-drop sweep, the first time it goes idle.
        fn list_parked(self: &Arc<Self>) {
            // Relaxed: a flag only this task's pollers (one at a time, ordered by
            // the state machine) read and write.
            if self.listed.swap(true, Ordering::Relaxed) {
                return;
            }
            let weak: Weak<dyn Parked> = Arc::downgrade(&(Arc::clone(self) as Arc<dyn Parked>));
            // Tasks upgraded while pruning are dropped after unlocking: the last
            // reference to one may be ours, and its future's destructor may do
            // anything, including dropping a pool (which takes the list's lock).
            let mut upgraded = Vec::new();
            let mut parked = lock(&PARKED);
            if parked.tasks.len() >= parked.prune_at {
                parked.tasks.retain(|task| match task.upgrade() {
                    Some(task) => {
                        let keep = !task.is_done();
                        upgraded.push(task);
                        keep
                    }
                    None => false,
                });
                parked.prune_at = (parked.tasks.len() * 2).max(64);
            }
            parked.tasks.push(weak);
            drop(parked);
            drop(upgraded);
        }

        /// Drops the future and reports it as dropped. The caller moved the state
        /// to DONE itself, from IDLE or SCHEDULED, so no one else touches the future.
        fn abandon(&self) {
            let future = lock(&self.future).take();
            let payload = match drop_future(future) {
                Ok(()) => Box::new(DROPPED) as Box<dyn Any + Send>,
                Err(payload) => payload,
            };
            if !self.packet.is_done() {
                self.packet.complete(Err(payload));
            }
        }
    }

    /// Drops a future, catching a panic of its destructor.
    fn drop_future<T>(future: Option<T>) -> thread::Result<()> {
        panic::catch_unwind(AssertUnwindSafe(move || drop(future)))
    }

    impl<T: Send + 'static> Wake for Task<T> {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }

        fn wake_by_ref(self: &Arc<Self>) {
            if self.state.wake() {
                schedule(Arc::clone(self));
            }
        }
    }

    impl<T: Send + 'static> Parked for Task<T> {
        fn registry(&self) -> &Arc<Registry> {
            &self.registry
        }

        fn cancel_if_idle(&self) {
            if self.state.cancel_if_idle() {
                self.abandon();
            }
        }

        fn is_done(&self) -> bool {
            self.state.is_done()
        }
    }

    impl<T> Drop for Task<T> {
        /// The last waker went away while the future was pending: nothing can
        /// poll it again. Its future is dropped with the task; the handle learns.
        fn drop(&mut self) {
            let future = self
                .future
                .get_mut()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .take();
            let payload = match drop_future(future) {
                Ok(()) => Box::new(DROPPED) as Box<dyn Any + Send>,
                Err(payload) => payload,
            };
            if !self.packet.is_done() {
                self.packet.complete(Err(payload));
            }
        }
    }

    impl<T> fmt::Debug for Task<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_struct("Task")
                .field("state", &self.state)
                .finish_non_exhaustive()
        }
    }

    impl<T: Send + 'static> ArcJob for Task<T> {
        fn run_job(self: Arc<Self>) {
            self.run();
        }
    }

    /// The job that polls `task` once: the task itself, no allocation.
    fn poll_job<T: Send + 'static>(task: Arc<Task<T>>) -> JobRef {
        arc_job_ref(task)
    }

    /// Queues a poll of `task`, which the caller just moved from IDLE to
    /// SCHEDULED: on the calling worker's own queue if it belongs to the task's
    /// pool, else on that pool's global queue. A pool that was closed meanwhile
    /// cannot run it any more: the future is dropped here.
    fn schedule<T: Send + 'static>(task: Arc<Task<T>>) {
        if let Some(worker) = WorkerThread::current() {
            if worker.is_in(&task.registry) {
                // Even in a closed pool: a running job's push is counted before
                // the job finishes, so the pool runs it before it terminates.
                // Woken by a poll: run it right after that poll, here.
                if worker.is_polling() {
                    worker.push_next(poll_job(task));
                } else {
                    worker.push(poll_job(task));
                }
                return;
            }
        }
        let registry = Arc::clone(&task.registry);
        if let Err(task) = registry.inject(task, poll_job) {
            task.state.finish();
            task.abandon();
        }
    }

    /// Queues a poll of `task` after a poll of it was woken meanwhile (the caller
    /// is a worker of its pool). Behind the worker's other tasks, in its
    /// `yielded` queue, so that a future that wakes itself (as [`yield_now`]
    /// does) does not starve them; thieves take from that queue too.
    fn requeue<T: Send + 'static>(task: Arc<Task<T>>) {
        match WorkerThread::current() {
            // Even in a closed pool: as in `schedule`, the push is counted
            // while the polling job runs.
            Some(worker) if worker.is_in(&task.registry) => worker.push_yielded(poll_job(task)),
            _ => {
                let registry = Arc::clone(&task.registry);
                if let Err(task) = registry.inject(task, poll_job) {
                    task.state.finish();
                    task.abandon();
                }
            }
        }
    }

    /// Spawns `future` on `registry`; its first poll is queued as `spawn` queues
    /// a closure.
    pub(crate) fn spawn_in<F>(registry: &Arc<Registry>, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let (handle, packet) = task::packet();
        let task = Arc::new(Task {
            state: TaskState::scheduled(),
            future: Mutex::new(Some(Box::pin(future))),
            packet,
            registry: Arc::clone(registry),
            listed: AtomicBool::new(false),
        });
        schedule(task);
        handle
    }

    /// Drops every future of `registry` that is waiting for a wake. Called when
    /// its pool is dropped, after its workers have drained the queues and exited:
    /// nothing can poll those futures any more.
    pub(crate) fn drop_parked(registry: &Arc<Registry>) {
        let mut mine = Vec::new();
        let mut others = Vec::new();
        {
            let mut parked = lock(&PARKED);
            parked.tasks.retain(|weak| match weak.upgrade() {
                Some(task) if Arc::ptr_eq(task.registry(), registry) => {
                    mine.push(task);
                    false
                }
                Some(task) => {
                    let keep = !task.is_done();
                    others.push(task);
                    keep
                }
                None => false,
            });
        }
        // Outside the list's lock (tasks are dropped here too): dropping a
        // future may wake or drop others, or a pool, which may take it.
        drop(others);
        for task in mine {
            task.cancel_if_idle();
        }
    }

    /// Spawns `future` on the current worker's pool, or on the global pool outside
    /// any pool, and returns a handle to its output (see [`JoinHandle`]).
    ///
    /// ```
    /// let handle = weft::spawn_future(async { 6 * 7 });
    /// assert_eq!(weft::block_on(handle).unwrap(), 42);
    /// ```
    pub fn spawn_future<F>(future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match WorkerThread::current() {
            Some(worker) => spawn_in(worker.registry_arc(), future),
            None => match crate::blocking::blocked_pool() {
                Some(registry) => spawn_in(&registry, future),
                None => crate::global::pool().spawn_future(future),
            },
        }
    }

    /// Wakes a thread blocked in [`block_on`].
    struct BlockOnWaker {
        woken: AtomicBool,
        waiter: Waiter,
    }

    impl Wake for BlockOnWaker {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }

        fn wake_by_ref(self: &Arc<Self>) {
            // Release: the woken thread's Acquire load sees what was written
            // before the wake.
            self.woken.store(true, Ordering::Release);
            self.waiter.wake();
        }
    }

    /// Runs `future` to completion on the calling thread and returns its output.
    ///
    /// On a pool worker, the worker runs other tasks of its pool while the future
    /// is pending (as every wait in weft does; see the crate docs, "Waiting on a
    /// worker helps", for the limit of that); any other thread parks.
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(2).build().unwrap();
    /// let handle = pool.spawn_future(async { "done" });
    /// assert_eq!(weft::block_on(async { handle.await.unwrap() }), "done");
    /// ```
    pub fn block_on<F: Future>(future: F) -> F::Output {
        let mut future = std::pin::pin!(future);
        let wake = Arc::new(BlockOnWaker {
            woken: AtomicBool::new(false),
            waiter: Waiter::current(),
        });
        let waker = Waker::from(Arc::clone(&wake));
        let mut cx = Context::from_waker(&waker);
        loop {
            if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
                return output;
            }
            block_until(&|| wake.woken.load(Ordering::Acquire), None);
            // Cleared before the next poll: a wake from now on is for that poll
            // or a later one, and is seen by the check above next time round.
            // Relaxed: the Acquire load in `block_until` already synchronised.
            wake.woken.store(false, Ordering::Relaxed);
        }
    }

    /// A future that is pending once, waking itself, so that other tasks get to
    /// run before the awaiting task goes on: a spawned future is queued behind the
    /// pool's other work.
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(1).build().unwrap();
    /// let order = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    /// let log = order.clone();
    /// let handle = pool.spawn_future(async move {
    ///     let other = {
    ///         let log = log.clone();
    ///         weft::spawn_future(async move { log.lock().unwrap().push("other") })
    ///     };
    ///     weft::yield_now().await;
    ///     log.lock().unwrap().push("after yield");
    ///     other.await.unwrap();
    /// });
    /// handle.join().unwrap();
    /// assert_eq!(*order.lock().unwrap(), ["other", "after yield"]);
    /// ```
    pub fn yield_now() -> YieldNow {
        YieldNow { yielded: false }
    }

    /// The future of [`yield_now`].
    #[derive(Debug)]
    #[must_use = "futures do nothing unless awaited"]
    pub struct YieldNow {
        yielded: bool,
    }

    impl Future for YieldNow {
        type Output = ();

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.yielded {
                return Poll::Ready(());
            }
            self.yielded = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
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

    use super::TaskState;

    struct Model {
        state: TaskState,
        queued: Mutex<usize>,
        ready: AtomicBool,
        polls: AtomicUsize,
        wakers_done: AtomicUsize,
    }

    impl Model {
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
            let model = Arc::new(Model {
                state: TaskState::scheduled(),
                queued: Mutex::new(1),
                ready: AtomicBool::new(false),
                polls: AtomicUsize::new(0),
                wakers_done: AtomicUsize::new(0),
            });
            let threads: Vec<_> = (0..wakers)
                .map(|_| {
                    let model = Arc::clone(&model);
                    thread::spawn(move || {
                        model.ready.store(true, Ordering::Relaxed);
                        for _ in 0..wakes {
                            model.wake();
                        }
                        model.wakers_done.fetch_add(1, Ordering::SeqCst);
                    })
                })
                .collect();
            // The worker: runs queued polls until the wakers are gone and
            // nothing is queued.
            loop {
                if model.take() {
                    model.poll();
                } else if model.wakers_done.load(Ordering::SeqCst) == wakers {
                    if !model.take() {
                        break;
                    }
                    model.poll();
                } else {
                    thread::yield_now();
                }
            }
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
}
