//! Fire-and-forget tasks and [`JoinHandle`], the way to get a spawned task's
//! result back.

use std::fmt;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::{Duration, Instant};

use crate::facade::lock;
use crate::sched::job::{ClosureJob, JobRef};
use crate::sched::registry::Registry;
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

/// Wraps `task` so that its result lands in a [`JoinHandle`].
pub(crate) fn with_handle<F, T>(task: F) -> (JoinHandle<T>, impl FnOnce() + Send + 'static)
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let (handle, packet) = packet();
    let job = move || {
        let result = panic::catch_unwind(AssertUnwindSafe(task));
        packet.complete(result);
    };
    (handle, job)
}

/// A fresh result slot and the handle that reads it.
pub(crate) fn packet<T>() -> (JoinHandle<T>, Arc<Packet<T>>) {
    let packet = Arc::new(Packet {
        done: AtomicBool::new(false),
        inner: Mutex::new(PacketInner {
            result: None,
            waiter: None,
            waker: None,
        }),
    });
    let handle = JoinHandle {
        packet: Arc::clone(&packet),
    };
    (handle, packet)
}

/// Where a task leaves its result for its [`JoinHandle`].
pub(crate) struct Packet<T> {
    /// Set once `inner.result` holds the result. Release/Acquire pairs the
    /// result's write with the joiner's read.
    done: AtomicBool,
    inner: Mutex<PacketInner<T>>,
}

struct PacketInner<T> {
    result: Option<thread::Result<T>>,
    waiter: Option<Waiter>,
    /// The task of a future awaiting the handle.
    waker: Option<Waker>,
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
}

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
