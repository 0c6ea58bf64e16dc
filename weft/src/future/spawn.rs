//! Futures as pool tasks: [`spawn_future`] runs a future on the same workers,
//! through the same queues and wake protocol, as closures ([`block_on`] and
//! [`yield_async`] live in block_on.rs).
//!
//! A spawned future lives in a `Task`: an `Arc` shared by its wakers and by
//! its queued poll (the queue holds one reference to the task itself, so a
//! poll costs no allocation). The future is stored in the task itself, so
//! a spawn allocates the task and the handle's packet, not a box besides. The task's [`TaskState`] (task_state.rs,
//! loom-checked) decides who queues the next poll: only a wake of an idle
//! task does, so a future is never queued twice nor polled by two workers at
//! once, and a wake during its poll queues it once more after the poll.
//!
//! Where a poll is queued: a wake from a poll on a worker of the task's pool
//! goes to that worker's `next` slot (it runs right after the poll); a wake
//! from a closure task on such a worker, to its local queue; a future that
//! woke itself during its poll (as `yield_async` does), to the worker's yield
//! queue, behind its other work; a wake from anywhere else, to the global queue.
//!
//! A future nobody can wake any more is dropped with its last waker (its
//! handle then reports `Err`). One that keeps its own waker alive (say, it
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

use crate::future::task_state::TaskState;
use std::cell::UnsafeCell;
use std::fmt;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, Wake, Waker};
use std::thread;

use crate::api::task::{self, JoinHandle, Packet, Stop};
use crate::sched::job::{arc_job_ref, ArcJob, JobRef};
use crate::sched::parked::Parked;
use crate::sched::registry::Registry;
use crate::sched::unwind::{drop_payload, Payload};
use crate::sched::worker::WorkerThread;

/// A spawned future and everything needed to poll it and report its result.
struct Task<F: Future> {
    state: TaskState,
    /// The future, `None` once it finished or was dropped. Only the party
    /// that moved `state` to RUNNING or (from IDLE or SCHEDULED) to DONE
    /// touches it (task_state.rs; its loom models check that no two parties
    /// ever hold those at once), and the state's transitions are
    /// Acquire/Release, which orders one party's use before the next's: so
    /// no lock. Pinned where it is: the task is an `Arc`'s, which never
    /// moves, and the future leaves the slot only by being dropped in place
    /// ([`drop_in_slot`]).
    future: UnsafeCell<Option<F>>,
    packet: Arc<Packet<F::Output>>,
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
    fn run(self: Arc<Self>) {
        self.state.start();
        if self.packet.abort_requested() {
            self.state.finish();
            self.abandon();
            return;
        }
        let waker = Waker::from(Arc::clone(&self));
        let mut cx = Context::from_waker(&waker);
        // SAFETY: `start` moved the state to RUNNING; the slot is used
        // until `after_pending` or `finish` below.
        let slot = unsafe { self.slot() };
        let Some(future) = slot.as_mut() else {
            // Unreachable by the state machine; harmless if it were.
            self.state.finish();
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
                self.after_pending();
                return;
            }
            Ok(Poll::Ready(value)) => Ok(value),
            Err(payload) => Err(payload),
        };
        // This poll moves the state to DONE, so the slot stays its own.
        self.state.finish();
        let dropped = drop_in_slot(slot);
        let result = match (dropped, result) {
            (Ok(()), result) => result,
            // A destructor that panics after `Ready` still counts as a panic.
            (Err(payload), Ok(value)) => {
                // The output is dropped too, and its destructor may panic as
                // well: the future's panic is the one reported.
                if let Err(second) = crate::sched::unwind::drop_caught(value) {
                    drop_payload(second);
                }
                Err(payload)
            }
            // The poll's own panic is the one reported.
            (Err(payload), Err(first)) => {
                drop_payload(payload);
                Err(first)
            }
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

impl<F> Wake for Task<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.state.wake() {
            schedule(Arc::clone(self));
        }
    }
}

impl<F> Stop for Task<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn stop(self: Arc<Self>) {
        // An idle future is dropped now; a queued or running one at the poll
        // this wake makes sure comes (the abort mark is set before it).
        if self.state.cancel_if_idle() {
            self.abandon();
        } else {
            self.wake_by_ref();
        }
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
    /// The last waker went away while the future was pending: nothing can
    /// poll it again. Its future is dropped with the task; the handle learns.
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
        self.run();
    }
}

/// The job that polls `task` once: the task itself, no allocation.
fn poll_job<F>(task: Arc<Task<F>>) -> JobRef
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    arc_job_ref(task)
}

/// Queues a poll of `task`, which the caller just moved from IDLE to
/// SCHEDULED: on a worker of the task's pool, in its `next` slot if a poll is
/// running there (the woken future runs right after it), else on its local
/// queue; anywhere else on that pool's global queue. A pool that was closed
/// meanwhile cannot run it any more: the future is dropped here.
fn schedule<F>(task: Arc<Task<F>>)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    if let Some(worker) = crate::context::worker_of(&task.registry) {
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
    inject_or_abandon(task);
}

/// Queues a poll of `task` from outside its pool; a pool that was closed
/// meanwhile can never run it: the future is dropped, its handle told.
fn inject_or_abandon<F>(task: Arc<Task<F>>)
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
fn requeue<F>(task: Arc<Task<F>>)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    match crate::context::worker_of(&task.registry) {
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
    let mut handle = None;
    let task = Arc::new_cyclic(|task: &Weak<Task<F>>| {
        let stopper: Weak<dyn Stop> = task.clone();
        let (join, packet) = task::packet_stopped_by(Some(stopper));
        handle = Some(join);
        Task {
            state: TaskState::scheduled(),
            future: UnsafeCell::new(Some(future)),
            packet,
            registry: Arc::clone(registry),
            listed: AtomicBool::new(false),
        }
    });
    schedule(task);
    handle.expect("new_cyclic ran its closure")
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
