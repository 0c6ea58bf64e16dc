//! Futures as pool tasks: [`spawn_future`] runs a future on the same workers,
//! through the same queues and wake protocol, as closures ([`block_on`] and
//! [`yield_async`] live in block_on.rs).
//!
//! A spawned future lives in a `Task`: an `Arc` shared by its wakers and by
//! its queued poll (the queue holds one reference to the task itself, so a
//! poll costs no allocation). The task's [`TaskState`] (task_state.rs,
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
use std::fmt;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Wake, Waker};
use std::thread;

use crate::api::task::{self, JoinHandle, Packet, Stop};
use crate::facade::lock;
use crate::sched::job::{arc_job_ref, ArcJob, JobRef};
use crate::sched::parked::Parked;
use crate::sched::registry::Registry;
use crate::sched::unwind::{drop_payload, Payload};
use crate::sched::worker::WorkerThread;

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
    /// Whether the task is listed in its pool's parked list (parked.rs).
    listed: AtomicBool,
}

/// The payload a [`JoinHandle`] reports for a future dropped before it
/// finished, unless it was aborted (then it is [`Aborted`](crate::Aborted)).
const DROPPED: &str = "weft: the future was dropped before it finished (its pool shut down, or nothing could wake it any more)";

impl<T: Send + 'static> Task<T> {
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
        let result = match (drop_future(future), result) {
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
        let future = lock(&self.future).take();
        self.packet.abandon(future, dropped);
    }
}

/// The payload of a future dropped unfinished without an abort.
fn dropped() -> Payload {
    Box::new(DROPPED)
}

/// Drops a future, catching a panic of its destructor.
fn drop_future<T>(future: Option<T>) -> thread::Result<()> {
    crate::sched::unwind::drop_caught(future)
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

impl<T: Send + 'static> Stop for Task<T> {
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

impl<T: Send + 'static> Parked for Task<T> {
    fn abandon_if_waiting(&self) {
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
        self.packet.abandon(future, dropped);
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
/// SCHEDULED: on a worker of the task's pool, in its `next` slot if a poll is
/// running there (the woken future runs right after it), else on its local
/// queue; anywhere else on that pool's global queue. A pool that was closed
/// meanwhile cannot run it any more: the future is dropped here.
fn schedule<T: Send + 'static>(task: Arc<Task<T>>) {
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
fn inject_or_abandon<T: Send + 'static>(task: Arc<Task<T>>) {
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
fn requeue<T: Send + 'static>(task: Arc<Task<T>>) {
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
    let (handle, packet) = task::packet();
    let task = Arc::new(Task {
        state: TaskState::scheduled(),
        future: Mutex::new(Some(Box::pin(future))),
        packet,
        registry: Arc::clone(registry),
        listed: AtomicBool::new(false),
    });
    let stopper: Weak<Task<F::Output>> = Arc::downgrade(&task);
    task.packet.stop_with(stopper);
    schedule(task);
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
