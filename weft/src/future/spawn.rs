//! Futures as pool tasks: [`spawn_future`] runs a future on the same workers,
//! through the same queues and wake protocol, as closures ([`block_on`] and
//! [`yield_async`] live in block_on.rs).
//!
//! A spawned future lives in a `Task`: an `Arc` shared by its wakers, by its
//! queued poll (the queue holds one reference to the task itself, so a poll
//! costs no allocation) and by its handles. The future and the handle's
//! result slot are stored in the task itself, so a spawn allocates once. The
//! task's [`TaskState`] (task_state.rs, loom-checked) decides who queues the
//! next poll: only a wake of an idle task does, so a future is never queued
//! twice nor polled by two workers at once, and a wake during its poll
//! queues it once more after the poll.
//!
//! Wakers and queued polls hold a [`PollRef`]: an `Arc` of the task that
//! also counts in the task's [`Pollers`], so that the handles, which share
//! the allocation, do not keep alive a future nothing can poll
//! (task_state.rs, "Who can still poll"). The waker is written by hand for
//! that (a `RawWakerVTable` over a `PollRef`); the one a poll hands its
//! future borrows the poll's own reference, so a poll that nobody clones
//! the waker of touches no count, and a wake by value hands the waker's
//! reference to the poll it queues.
//!
//! Where a poll is queued: a wake from a poll on a worker of the task's pool
//! goes to that worker's `next` slot (it runs right after the poll), unless
//! the poll is inside a `join` whose second half is on the join stack (that
//! half may run long first: the local queue then); a wake from a closure
//! task on such a worker, to its local queue; a future that
//! woke itself during its poll (as `yield_async` does), to the worker's yield
//! queue, behind its other work; a wake from anywhere else, to the global queue.
//!
//! A future nobody can wake any more is dropped with its last waker (its
//! handle then reports `Err`): the last `PollRef` to go cancels the task if
//! it is idle, as the sweep below does. One that keeps its own waker alive (say, it
//! owns both ends of a channel) is dropped when its pool is dropped: every
//! future that went pending is listed, weakly, in its pool's parked list (parked.rs)
//! for that sweep.
//!
//! An abort ([`JoinHandle::abort`]) marks the task's packet and then acts
//! through the state machine's existing transitions: an IDLE task is
//! cancelled on the spot (as the sweep cancels it), any other is woken, so
//! its next poll (queued by that wake, or after the poll under way) sees
//! the mark and drops the future instead of polling it.
//!
//! [`block_on`]: crate::future::block_on
//! [`yield_async`]: crate::yield_async

use crate::future::task_state::{Pollers, TaskState};
use std::cell::UnsafeCell;
use std::fmt;
use std::future::Future;
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};
use std::thread;

use crate::api::task::{AbortTask, JoinHandle, Packet, TaskCell};
use crate::sched::job::{arc_job_ref, ArcJob, JobRef};
use crate::sched::parked::Parked;
use crate::sched::registry::Registry;
use crate::sched::unwind::{drop_payload, Payload};
use crate::sched::worker::WorkerThread;

/// A spawned future and everything needed to poll it and report its result.
struct Task<F: Future> {
    state: TaskState,
    /// Its wakers and its queued or running poll: the [`PollRef`]s.
    pollers: Pollers,
    /// The future, `None` once it finished or was dropped. Only the party
    /// that moved `state` to RUNNING or (from IDLE or SCHEDULED) to DONE
    /// touches it (task_state.rs; its loom models check that no two parties
    /// ever hold those at once), and the state's transitions are
    /// Acquire/Release, which orders one party's use before the next's: so
    /// no lock. Pinned where it is: the task is an `Arc`'s, which never
    /// moves, and the future leaves the slot only by being dropped in place
    /// ([`drop_in_slot`]).
    future: UnsafeCell<Option<F>>,
    /// The handle's result slot.
    packet: Packet<F::Output>,
    registry: Arc<Registry>,
    /// Whether the task is listed in its pool's parked list (parked.rs).
    listed: AtomicBool,
}

// SAFETY: the future is moved to the task's first poller and used by one
// thread at a time (the `future` field's doc), so `F: Send` suffices for
// sharing the task; everything else in it is `Sync`.
unsafe impl<F: Future + Send> Sync for Task<F> where F::Output: Send {}

/// Drops the future in `slot` where it lies (it is pinned) and leaves the
/// slot empty, catching a panic of its destructor.
fn drop_in_slot<F>(slot: &mut Option<F>) -> thread::Result<()> {
    let Some(future) = slot.as_mut() else {
        return Ok(());
    };
    let future: *mut F = future;
    // SAFETY: the future is dropped once, here: whether or not its
    // destructor unwinds, the slot is overwritten with `None` below
    // without dropping its old contents again.
    let dropped = panic::catch_unwind(AssertUnwindSafe(|| unsafe { ptr::drop_in_place(future) }));
    // SAFETY: `slot` is a valid `&mut`; its old value was dropped above.
    unsafe { ptr::write(slot, None) };
    dropped
}

/// The payload a [`JoinHandle`] reports for a future dropped before it
/// finished, unless it was aborted (then it is [`Aborted`](crate::Aborted)).
const DROPPED: &str = "weft: the future was dropped before it finished (its pool shut down, or nothing could wake it any more)";

impl<F> Task<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    /// The future's slot, for the party that holds the task's state.
    ///
    /// # Safety
    /// The caller moved `state` to RUNNING, or to DONE from IDLE or
    /// SCHEDULED, and uses the slot only until it lets go of that state.
    #[allow(clippy::mut_from_ref)]
    unsafe fn slot(&self) -> &mut Option<F> {
        // SAFETY: forwarded from this function's contract: no one else
        // touches the slot meanwhile (the `future` field's doc).
        unsafe { &mut *self.future.get() }
    }

    /// Polls the future once. The body of every job that polls a task.
    fn run(poll: PollRef<F>) {
        poll.state.start();
        if poll.packet.abort_requested() {
            poll.state.finish();
            poll.abandon();
            return;
        }
        // SAFETY: the waker borrows `poll`'s reference, which outlives it
        // (it is never dropped, so it gives back no count it did not take);
        // a future that keeps the waker clones it, which takes a count and
        // a reference of its own.
        let waker = ManuallyDrop::new(unsafe { Waker::from_raw(poll.borrowed_raw_waker()) });
        let mut cx = Context::from_waker(&waker);
        // SAFETY: `start` moved the state to RUNNING; the slot is used
        // until `after_pending` or `finish` below.
        let slot = unsafe { poll.slot() };
        let Some(future) = slot.as_mut() else {
            // Unreachable by the state machine; harmless if it were.
            poll.state.finish();
            return;
        };
        // SAFETY: the future is never moved out of its slot in the task's
        // `Arc` (the `future` field's doc).
        let mut future = unsafe { Pin::new_unchecked(future) };
        let outcome = {
            let _polling = WorkerThread::current().map(WorkerThread::enter_poll);
            panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut cx)))
        };
        let result = match outcome {
            Ok(Poll::Pending) => {
                Self::after_pending(poll);
                return;
            }
            Ok(Poll::Ready(value)) => Ok(value),
            Err(payload) => Err(payload),
        };
        // This poll moves the state to DONE, so the slot stays its own.
        poll.state.finish();
        let dropped = drop_in_slot(slot);
        let result = match (dropped, result) {
            (Ok(()), result) => result,
            // A destructor that panics after `Ready` still counts as a panic.
            (Err(payload), Ok(value)) => {
                // The output is dropped too, and its destructor may panic as
                // well: the future's panic is the one reported.
                crate::sched::unwind::drop_contained(value);
                Err(payload)
            }
            // The poll's own panic is the one reported.
            (Err(payload), Err(first)) => {
                drop_payload(payload);
                Err(first)
            }
        };
        poll.packet.complete(result);
    }

    /// After a poll returned `Pending`: back to IDLE, or queued once more if a
    /// wake came during the poll. A task gone IDLE lets go of the poll's
    /// count here; if it was the last, nothing can wake the future again
    /// and it is dropped now.
    fn after_pending(poll: PollRef<F>) {
        if poll.state.pending() {
            requeue(poll);
        } else {
            poll.0.list_parked();
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
        self.registry.parked.list(weak);
    }

    /// Drops the future and reports it as dropped (or aborted). The caller
    /// moved the state to DONE itself, so no one else touches the future.
    fn abandon(&self) {
        // SAFETY: the caller moved the state to DONE (this function's doc),
        // and DONE is never left.
        let dropped_now = drop_in_slot(unsafe { self.slot() });
        self.packet.abandon_dropped(dropped_now, dropped);
    }
}

/// The payload of a future dropped unfinished without an abort.
fn dropped() -> Payload {
    Box::new(DROPPED)
}

/// A reference to a task that can lead to a poll: a waker's, or a queued or
/// running poll's. An `Arc` of the task that also counts in its
/// [`Pollers`]; the last to go cancels the task if it is idle (task_state.rs,
/// "Who can still poll").
struct PollRef<F>(ManuallyDrop<Arc<Task<F>>>)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static;

impl<F> PollRef<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    /// A new poller of `task`.
    fn new(task: Arc<Task<F>>) -> Self {
        task.pollers.add();
        PollRef(ManuallyDrop::new(task))
    }

    /// Takes over a reference that is counted already (a queued poll's).
    fn adopt(task: Arc<Task<F>>) -> Self {
        PollRef(ManuallyDrop::new(task))
    }

    /// The reference, still counted (for a queued poll to [`adopt`] again).
    ///
    /// [`adopt`]: PollRef::adopt
    fn into_counted(self) -> Arc<Task<F>> {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped, so the `Arc` is taken out once.
        unsafe { ManuallyDrop::take(&mut this.0) }
    }

    /// Wakes the task: queues its next poll if it was idle.
    fn wake_by_ref(&self) {
        if self.state.wake() {
            schedule(PollRef::new(Arc::clone(&self.0)));
        }
    }

    /// A waker that borrows this reference (the vtable's data pointer is the
    /// `Arc`'s). Dropping a waker made of it would give back a count it
    /// never took: see [`Task::run`].
    fn borrowed_raw_waker(&self) -> RawWaker {
        RawWaker::new(Arc::as_ptr(&self.0).cast(), Self::VTABLE)
    }

    const VTABLE: &'static RawWakerVTable = &RawWakerVTable::new(
        Self::clone_waker,
        Self::wake_waker,
        Self::wake_waker_by_ref,
        Self::drop_waker,
    );

    /// # Safety (of the four vtable functions)
    /// `data` comes from `Arc::into_raw` or `Arc::as_ptr` of a live
    /// `Arc<Task<F>>` whose reference is a poller's: a waker's own (made by
    /// `clone_waker`), or the running poll's, which a borrowed waker uses
    /// and never drops.
    unsafe fn clone_waker(data: *const ()) -> RawWaker {
        let task = data.cast::<Task<F>>();
        // SAFETY: the task is alive (the caller's reference); the new
        // reference belongs to the new waker, and so does the count.
        unsafe { Arc::increment_strong_count(task) };
        // SAFETY: as above.
        unsafe { (*task).pollers.add() };
        RawWaker::new(data, Self::VTABLE)
    }

    unsafe fn wake_waker(data: *const ()) {
        // SAFETY: the waker's own counted reference, consumed by this call.
        let poll = PollRef::adopt(unsafe { Arc::from_raw(data.cast::<Task<F>>()) });
        // The waker's reference becomes the queued poll's: no count moves.
        if poll.state.wake() {
            schedule(poll);
        }
    }

    unsafe fn wake_waker_by_ref(data: *const ()) {
        // SAFETY: the waker's reference, borrowed: never dropped here.
        let poll = ManuallyDrop::new(PollRef::adopt(unsafe {
            Arc::from_raw(data.cast::<Task<F>>())
        }));
        poll.wake_by_ref();
    }

    unsafe fn drop_waker(data: *const ()) {
        // SAFETY: the waker's own counted reference, given back here.
        drop(PollRef::adopt(unsafe {
            Arc::from_raw(data.cast::<Task<F>>())
        }));
    }
}

impl<F> Deref for PollRef<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    type Target = Task<F>;

    fn deref(&self) -> &Task<F> {
        &self.0
    }
}

impl<F> Drop for PollRef<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn drop(&mut self) {
        // SAFETY: the `Arc` is taken out once, here, and `self` is gone after.
        let task = unsafe { ManuallyDrop::take(&mut self.0) };
        // Nothing can poll the future again: dropped now if it is idle. A
        // task that finished (the common last poller: the poll that
        // completed it) was dropped already, and a load says so without
        // the cancel's failing read-modify-write.
        if task.pollers.release() && !task.state.is_done() {
            task.abandon_if_waiting();
        }
    }
}

impl<F> AbortTask for Task<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn abort(self: Arc<Self>) {
        if !self.packet.claim_abort() {
            return;
        }
        // An idle future is dropped now; a queued or running one at the poll
        // this wake makes sure comes (the abort mark is set before it).
        if self.state.cancel_if_idle() {
            self.abandon();
        } else if self.state.wake() {
            schedule(PollRef::new(self));
        }
    }

    fn is_finished(&self) -> bool {
        self.packet.is_done()
    }
}

impl<F> TaskCell<F::Output> for Task<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn packet(&self) -> &Packet<F::Output> {
        &self.packet
    }
}

impl<F> Parked for Task<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn abandon_if_waiting(&self) {
        if self.state.cancel_if_idle() {
            self.abandon();
        }
    }

    fn is_done(&self) -> bool {
        self.state.is_done()
    }
}

impl<F: Future> Drop for Task<F> {
    /// The last reference went: the future was dropped when its last poller
    /// went (`PollRef`), so this finds the slot empty; kept so that a task
    /// never outlives its future whatever the path.
    fn drop(&mut self) {
        let dropped_now = drop_in_slot(self.future.get_mut());
        self.packet.abandon_dropped(dropped_now, dropped);
    }
}

impl<F: Future> fmt::Debug for Task<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Task")
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl<F> ArcJob for Task<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn run_job(self: Arc<Self>) {
        // A queued poll's reference is counted (`poll_job`).
        Task::run(PollRef::adopt(self));
    }
}

/// The job that polls the task once: the task itself, no allocation; the
/// queue holds the poller's reference, still counted.
fn poll_job<F>(poll: PollRef<F>) -> JobRef
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    arc_job_ref(poll.into_counted())
}

/// Queues a poll of `task`, which the caller just moved from IDLE to
/// SCHEDULED: on a worker of the task's pool, in its `next` slot if a poll is
/// running there outside a `join`'s first half (the woken future runs right
/// after it: `WorkerThread::may_fill_next`), else on its local queue;
/// anywhere else on that pool's global queue. A pool that was closed
/// meanwhile cannot run it any more: the future is dropped here.
fn schedule<F>(task: PollRef<F>)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    if let Some(worker) = crate::sched::context::worker_of(&task.registry) {
        // Even in a closed pool: a running job's push is counted before
        // the job finishes, so the pool runs it before it terminates.
        // Woken by a poll: run it right after that poll, here.
        if worker.may_fill_next() {
            worker.push_next(poll_job(task));
        } else {
            worker.push(poll_job(task));
        }
        return;
    }
    inject_or_abandon(task);
}

/// Queues a poll of `task` from outside its pool; a pool that was closed
/// meanwhile can never run it: the future is dropped, its handle told.
fn inject_or_abandon<F>(task: PollRef<F>)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let registry = Arc::clone(&task.registry);
    if let Err(task) = registry.inject(task, poll_job) {
        task.state.finish();
        task.abandon();
    }
}

/// Queues a poll of `task` after a poll of it was woken meanwhile, by itself
/// or another thread (the caller is a worker of its pool). Behind the
/// worker's other tasks, in its `yielded` queue, so that a future that wakes
/// itself (as [`yield_async`] does) does not starve them; thieves take from
/// that queue too.
fn requeue<F>(task: PollRef<F>)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    match crate::sched::context::worker_of(&task.registry) {
        // Even in a closed pool: as in `schedule`, the push is counted
        // while the polling job runs.
        Some(worker) => worker.push_yielded(poll_job(task)),
        None => inject_or_abandon(task),
    }
}

/// Spawns `future` on `registry`; its first poll is queued as `spawn` queues
/// a closure.
pub(crate) fn spawn_in<F>(registry: &Arc<Registry>, future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let task = Arc::new(Task {
        state: TaskState::scheduled(),
        pollers: Pollers::first_poll(),
        future: UnsafeCell::new(Some(future)),
        packet: Packet::new(),
        registry: Arc::clone(registry),
        listed: AtomicBool::new(false),
    });
    let handle = JoinHandle::from_cell(Arc::clone(&task) as Arc<dyn TaskCell<F::Output>>);
    // The first poll: counted by `first_poll`.
    schedule(PollRef::adopt(task));
    handle
}

impl crate::Pool {
    /// Runs `future` as a task of this pool: its polls are queued and run like
    /// closures, and a wake queues the next poll on the waking worker (right
    /// after the running poll if the wake came from one, else on its own
    /// queue), or on the pool's global queue from any other thread. A pending
    /// future holds no worker. The handle gives its output, or the payload of
    /// a panic in it; dropping the handle detaches the task.
    ///
    /// A future that can never be polled again is dropped, and its handle
    /// reports `Err`: when the last waker of a pending future goes, and when
    /// the pool is dropped (queued polls still run first). An aborted one
    /// ([`JoinHandle::abort`]) is dropped at the latest when its next poll
    /// would start, and its handle reports [`Aborted`](crate::Aborted).
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(2).build().unwrap();
    /// let handle = pool.spawn_future(async {
    ///     let part = weft::spawn_future(async { 40 });
    ///     part.await.unwrap() + 2
    /// });
    /// assert_eq!(handle.join().unwrap(), 42);
    /// ```
    pub fn spawn_future<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: std::future::Future + Send + 'static,
        F::Output: Send + 'static,
    {
        spawn_in(self.registry(), future)
    }

    /// Runs `future` to completion on a worker of this pool (as
    /// [`install`](crate::Pool::install) runs a closure) and returns its output. While
    /// it is pending, that worker runs other tasks of the pool; tasks it
    /// spawns with [`weft::spawn_future`](crate::spawn_future) go to this pool.
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(2).build().unwrap();
    /// let on_worker = pool.block_on(async {
    ///     weft::yield_async().await;
    ///     weft::current_worker_index().is_some()
    /// });
    /// assert!(on_worker);
    /// ```
    pub fn block_on<F>(&self, future: F) -> F::Output
    where
        F: std::future::Future + Send,
        F::Output: Send,
    {
        self.install(|| super::block_on::block_on(future))
    }
}

impl<T: Send + 'static> crate::JoinSet<T> {
    /// Runs `future` in the set on the pool
    /// [`weft::spawn_future`](crate::spawn_future) would use from here. An
    /// abort drops the future at its next poll at the latest (as
    /// [`JoinHandle::abort`] does); the set then returns it as aborted.
    ///
    /// ```
    /// let mut set = weft::JoinSet::new();
    /// set.spawn_future(async { 1 });
    /// set.spawn(|| 2);
    /// let mut all = set.join_all();
    /// all.sort();
    /// assert_eq!(all, [1, 2]);
    /// ```
    pub fn spawn_future<F>(&mut self, future: F) -> crate::AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
    {
        self.insert(spawn_future(future))
    }

    /// Runs `future` in the set on `pool`, as [`Pool::spawn_future`](crate::Pool::spawn_future) does.
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(2).build().unwrap();
    /// let mut set = weft::JoinSet::new();
    /// set.spawn_future_on(&pool, async { weft::current_thread_index().is_some() });
    /// assert!(set.join_next().unwrap().unwrap());
    /// ```
    pub fn spawn_future_on<F>(&mut self, pool: &crate::Pool, future: F) -> crate::AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
    {
        self.insert(pool.spawn_future(future))
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
        None => spawn_in(&crate::api::global::free_function_pool(), future),
    }
}
