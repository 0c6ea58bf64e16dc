//! Fire-and-forget tasks and [`JoinHandle`], the way to get a spawned task's
//! result back.

use std::fmt;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::{Duration, Instant};

use crate::facade::lock;
use crate::sched::job::{ClosureJob, JobRef};
use crate::sched::registry::Registry;
use crate::sched::unwind::{drop_caught, drop_payload, Payload};
use crate::sched::waiter::{block_until, Waiter};
use crate::sched::worker::WorkerThread;

/// Queues `task` on `registry`: on the calling worker's own queue if it belongs
/// to that pool, else on the global queue. Gives the task back if the pool is
/// closed.
pub(crate) fn spawn_in<F>(registry: &Arc<Registry>, task: F) -> Result<(), F>
where
    F: FnOnce() + Send + 'static,
{
    spawn_with(registry, task, WorkerThread::push)
}

/// As [`spawn_in`], onto the calling worker's first-in first-out queue.
pub(crate) fn spawn_fifo_in<F>(registry: &Arc<Registry>, task: F) -> Result<(), F>
where
    F: FnOnce() + Send + 'static,
{
    spawn_with(registry, task, WorkerThread::push_yielded)
}

fn spawn_with<F>(
    registry: &Arc<Registry>,
    task: F,
    push: impl FnOnce(&WorkerThread, JobRef),
) -> Result<(), F>
where
    F: FnOnce() + Send + 'static,
{
    if let Some(worker) = crate::context::worker_of(registry) {
        if registry.is_closed() {
            return Err(task);
        }
        // SAFETY: `F: 'static`, so the job borrows nothing.
        push(worker, unsafe { ClosureJob::new_ref(task) });
        return Ok(());
    }
    // SAFETY: as above.
    registry.inject(task, |task| unsafe { ClosureJob::new_ref(task) })
}

/// Queues `task` for worker `index` alone.
pub(crate) fn spawn_pinned<F>(registry: &Arc<Registry>, index: usize, task: F) -> Result<(), F>
where
    F: FnOnce() + Send + 'static,
{
    // SAFETY: `F: 'static`, so the job borrows nothing.
    registry.inject_pinned(index, task, |task| unsafe { ClosureJob::new_ref(task) })
}

/// Wraps `task` so that its result lands in a [`JoinHandle`]. The job
/// decides, against [`JoinHandle::abort`], whether `task` runs at all; an
/// aborted job still runs as a job (it drops `task` instead of calling it),
/// so the pool's books count it like any other.
pub(crate) fn with_handle<F, T>(task: F) -> (JoinHandle<T>, impl FnOnce() + Send + 'static)
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let (handle, packet) = packet();
    let job = move || {
        if packet.start() {
            let result = panic::catch_unwind(AssertUnwindSafe(task));
            packet.complete(result);
        } else {
            packet.abandon(task, aborted);
        }
    };
    (handle, job)
}

/// A fresh result slot and the handle that reads it.
pub(crate) fn packet<T>() -> (JoinHandle<T>, Arc<Packet<T>>) {
    let packet = Arc::new(Packet {
        done: AtomicBool::new(false),
        claim: AtomicU8::new(UNCLAIMED),
        inner: Mutex::new(PacketInner {
            result: None,
            waiter: None,
            waker: None,
            stopper: None,
        }),
    });
    let handle = JoinHandle {
        packet: Arc::clone(&packet),
    };
    (handle, packet)
}

/// The payload of a task stopped by [`JoinHandle::abort`].
fn aborted() -> Payload {
    Box::new(Aborted)
}

/// Neither a start nor an abort yet.
const UNCLAIMED: u8 = 0;
/// A closure task started: an abort comes too late.
const STARTED: u8 = 1;
/// An abort came first: the closure never runs, a future is not polled again.
const ABORTED: u8 = 2;

/// A task that an abort can stop between its steps (a future's task, which
/// lives in an extension: the API reaches it only through this).
pub(crate) trait Stop: Send + Sync {
    /// The handle was aborted: stop the task as soon as it may be stopped.
    fn stop(self: Arc<Self>);
}

/// Where a task leaves its result for its [`JoinHandle`].
pub(crate) struct Packet<T> {
    /// Set once `inner.result` holds the result. Release/Acquire pairs the
    /// result's write with the joiner's read.
    done: AtomicBool,
    /// Who came first, a closure's start or an abort: `UNCLAIMED`, `STARTED`
    /// or `ABORTED`. Futures never start in this sense: for them `ABORTED`
    /// is a request their next poll honours.
    claim: AtomicU8,
    inner: Mutex<PacketInner<T>>,
}

struct PacketInner<T> {
    result: Option<thread::Result<T>>,
    waiter: Option<Waiter>,
    /// The task of a future awaiting the handle.
    waker: Option<Waker>,
    /// The future's task, weakly: the task holds the packet, and a strong
    /// reference back would keep a future nobody can wake alive for ever.
    stopper: Option<Weak<dyn Stop>>,
}

impl<T> Packet<T> {
    /// Stores the result and wakes whoever waits for it. Called at most once.
    pub(crate) fn complete(&self, result: thread::Result<T>) {
        let (waiter, waker) = {
            let mut inner = lock(&self.inner);
            inner.result = Some(result);
            // Release: pairs with `is_done`'s Acquire, which reads without the
            // lock; the result itself is read under it.
            self.done.store(true, Ordering::Release);
            (inner.waiter.take(), inner.waker.take())
        };
        if let Some(waiter) = waiter {
            waiter.wake();
        }
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    pub(crate) fn is_done(&self) -> bool {
        // Acquire: pairs with `complete`'s Release store.
        self.done.load(Ordering::Acquire)
    }

    /// A closure task is about to run. Returns whether it may: false if an
    /// abort came first.
    fn start(&self) -> bool {
        // Relaxed: the claim only has to be decided once, one way; neither
        // side reads anything the other wrote before it.
        self.claim
            .compare_exchange(UNCLAIMED, STARTED, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }

    /// Whether the handle was aborted before the task started (for a
    /// future: at all).
    pub(crate) fn abort_requested(&self) -> bool {
        // Relaxed: a future's poll learns of an abort through the wake that
        // follows it (task_state.rs orders that wake before the poll).
        self.claim.load(Ordering::Relaxed) == ABORTED
    }

    /// Lets an abort reach `task`, the future's task this packet belongs to.
    pub(crate) fn stop_with(&self, task: Weak<dyn Stop>) {
        lock(&self.inner).stopper = Some(task);
    }

    /// Drops `work`, a task's closure or future that will never finish, and
    /// reports it unless the handle has its result already: the payload of
    /// its destructor's panic if it panics (a panic is a panic, aborted or
    /// not), else [`Aborted`] if the handle was aborted, else `unfinished()`.
    pub(crate) fn abandon<W>(&self, work: W, unfinished: fn() -> Payload) {
        let payload = match drop_caught(work) {
            Ok(()) if self.abort_requested() => aborted(),
            Ok(()) => unfinished(),
            Err(payload) => payload,
        };
        if self.is_done() {
            drop_payload(payload);
        } else {
            self.complete(Err(payload));
        }
    }
}

/// The payload a [`JoinHandle`] reports (in `Err`) for a task that
/// [`JoinHandle::abort`] stopped before it finished: a closure that never
/// ran, or a future dropped instead of being polled again. A panic's payload
/// is anything else, so the two are told apart with `downcast_ref` or `is`.
///
/// ```
/// let pool = weft::Pool::builder().workers(1).build().unwrap();
/// let panicked = pool.spawn_with_handle(|| panic!("no"));
/// assert!(!panicked.join().unwrap_err().is::<weft::Aborted>());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Aborted;

impl fmt::Display for Aborted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("weft: the task was aborted before it finished")
    }
}

impl std::error::Error for Aborted {}

/// The result of a task started with [`Pool::spawn_with_handle`](crate::Pool::spawn_with_handle)
/// or [`Pool::spawn_future`](crate::Pool::spawn_future). Dropping it detaches
/// the task, which still runs.
///
/// Besides [`join`](JoinHandle::join), which blocks, the handle is itself a
/// future of the task's result, so async code awaits it without holding a
/// thread:
///
/// ```
/// let pool = weft::Pool::builder().workers(2).build().unwrap();
/// let inner = pool.spawn_with_handle(|| 6 * 7);
/// let outer = pool.spawn_future(async move { inner.await.unwrap() + 1 });
/// assert_eq!(outer.join().unwrap(), 43);
/// ```
pub struct JoinHandle<T> {
    packet: Arc<Packet<T>>,
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("finished", &self.is_finished())
            .finish()
    }
}

impl<T> JoinHandle<T> {
    /// Whether the task has finished.
    pub fn is_finished(&self) -> bool {
        self.packet.is_done()
    }

    /// Stops the task if it can still be stopped; [`join`](JoinHandle::join)
    /// (or awaiting the handle) then gives `Err` with an [`Aborted`] payload.
    ///
    /// * A closure task ([`Pool::spawn_with_handle`](crate::Pool::spawn_with_handle))
    ///   that has not started never runs. Its closure is dropped by the
    ///   worker that takes it off the queue (as soon as one gets to it, at
    ///   the latest when the pool is dropped, which runs its queued tasks
    ///   first), and the handle finishes then, not at the abort. One that
    ///   has started runs to its end (a closure cannot be interrupted) and
    ///   its result is kept.
    /// * A future task ([`Pool::spawn_future`](crate::Pool::spawn_future))
    ///   that is pending, neither queued nor being polled, is dropped right
    ///   here, on the calling thread. Otherwise it is dropped when its next
    ///   poll would start, instead of being polled: a poll under way
    ///   finishes (and if it returns `Ready`, the result is kept), and the
    ///   abort queues the next poll itself, so a future that nothing else
    ///   would wake is still dropped.
    ///
    /// If the destructor of the dropped closure or future panics, the panic
    /// is caught and its payload is what `join` reports, as for any panic.
    /// Aborting twice, aborting a finished task (one that panicked
    /// included) and aborting a started closure do nothing.
    ///
    /// ```
    /// use std::sync::mpsc;
    ///
    /// let pool = weft::Pool::builder().workers(1).build().unwrap();
    /// let (release, held) = mpsc::channel::<()>();
    /// pool.spawn(move || held.recv().unwrap()); // keeps the only worker busy
    /// let queued = pool.spawn_with_handle(|| "never runs");
    /// queued.abort();
    /// release.send(()).unwrap();
    /// assert!(queued.join().unwrap_err().is::<weft::Aborted>());
    ///
    /// // Waits for an event nobody signals; the event keeps its waker.
    /// let never = weft::Event::new(weft::EventMode::Manual);
    /// let waiting = pool.spawn_future(never.wait_async());
    /// waiting.abort();
    /// assert!(waiting.join().unwrap_err().is::<weft::Aborted>());
    /// ```
    pub fn abort(&self) {
        if self.packet.is_done() {
            return;
        }
        // Relaxed: decides the race with a closure's start, which is all a
        // closure needs; a future's poll sees the abort through the wake
        // `stop` makes after it.
        if self
            .packet
            .claim
            .compare_exchange(UNCLAIMED, ABORTED, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return;
        }
        // Upgraded outside the lock: `stop` may drop the future, which runs
        // user code and completes this very packet.
        let stopper = lock(&self.packet.inner)
            .stopper
            .as_ref()
            .and_then(Weak::upgrade);
        if let Some(task) = stopper {
            task.stop();
        }
    }

    /// Waits for the task and returns its result, or the payload of its panic.
    /// On a worker thread, runs other tasks while it waits.
    pub fn join(self) -> thread::Result<T> {
        self.wait_deadline(None);
        self.take()
    }

    /// As [`JoinHandle::join`], giving up after `timeout`; then the handle is
    /// returned so the caller can wait again.
    pub fn join_timeout(self, timeout: Duration) -> Result<thread::Result<T>, JoinHandle<T>> {
        // A deadline past what `Instant` can hold is no deadline at all.
        self.join_until(Instant::now().checked_add(timeout))
    }

    /// As [`JoinHandle::join`], giving up at `deadline`; then the handle is
    /// returned so the caller can wait again.
    pub fn join_deadline(self, deadline: Instant) -> Result<thread::Result<T>, JoinHandle<T>> {
        self.join_until(Some(deadline))
    }

    fn join_until(self, deadline: Option<Instant>) -> Result<thread::Result<T>, JoinHandle<T>> {
        if self.wait_deadline(deadline) {
            Ok(self.take())
        } else {
            Err(self)
        }
    }

    fn wait_deadline(&self, deadline: Option<Instant>) -> bool {
        if self.packet.is_done() {
            return true;
        }
        {
            let mut inner = lock(&self.packet.inner);
            if inner.result.is_some() {
                return true;
            }
            inner.waiter = Some(Waiter::current());
        }
        block_until(&|| self.packet.is_done(), deadline)
    }

    fn take(&self) -> thread::Result<T> {
        lock(&self.packet.inner)
            .result
            .take()
            .expect("a finished task leaves its result")
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = thread::Result<T>;

    /// Ready with the task's result, or the payload of its panic.
    ///
    /// # Panics
    /// If polled again after it returned `Ready`.
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut inner = lock(&self.packet.inner);
        if let Some(result) = inner.result.take() {
            return Poll::Ready(result);
        }
        assert!(
            !self.packet.is_done(),
            "JoinHandle polled after it returned its result"
        );
        match &mut inner.waker {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            slot => *slot = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}
