//! Fire-and-forget tasks and [`JoinHandle`], the way to get a spawned task's
//! result back.

use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::job::HeapJob;
use crate::registry::Registry;
use crate::waiter::{block_until, Waiter};
use crate::worker::WorkerThread;

/// Queues `task` on `registry`: on the calling worker's own queue if it belongs
/// to that pool, else on the global queue. Gives the task back if the pool is
/// closed.
pub(crate) fn spawn_in<F>(registry: &Arc<Registry>, task: F) -> Result<(), F>
where
    F: FnOnce() + Send + 'static,
{
    if let Some(worker) = WorkerThread::current() {
        if worker.is_in(registry) {
            if registry.is_closed() {
                return Err(task);
            }
            // SAFETY: `F: 'static`, so the job borrows nothing.
            worker.push(unsafe { HeapJob::new_ref(task) });
            return Ok(());
        }
    }
    // SAFETY: as above.
    registry.inject(task, |task| unsafe { HeapJob::new_ref(task) })
}

/// Queues `task` for worker `index` alone.
pub(crate) fn spawn_pinned<F>(registry: &Arc<Registry>, index: usize, task: F) -> Result<(), F>
where
    F: FnOnce() + Send + 'static,
{
    // SAFETY: `F: 'static`, so the job borrows nothing.
    registry.inject_pinned(index, task, |task| unsafe { HeapJob::new_ref(task) })
}

/// Wraps `task` so that its result lands in a [`JoinHandle`].
pub(crate) fn with_handle<F, T>(task: F) -> (JoinHandle<T>, impl FnOnce() + Send + 'static)
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let packet = Arc::new(Packet {
        done: AtomicBool::new(false),
        inner: Mutex::new(PacketInner {
            result: None,
            waiter: None,
        }),
    });
    let handle = JoinHandle {
        packet: Arc::clone(&packet),
    };
    let job = move || {
        let result = panic::catch_unwind(AssertUnwindSafe(task));
        packet.complete(result);
    };
    (handle, job)
}

struct Packet<T> {
    /// Set once `inner.result` holds the result. Release/Acquire pairs the
    /// result's write with the joiner's read.
    done: AtomicBool,
    inner: Mutex<PacketInner<T>>,
}

struct PacketInner<T> {
    result: Option<thread::Result<T>>,
    waiter: Option<Waiter>,
}

impl<T> Packet<T> {
    fn complete(&self, result: thread::Result<T>) {
        let waiter = {
            let mut inner = lock(&self.inner);
            inner.result = Some(result);
            self.done.store(true, Ordering::Release);
            inner.waiter.take()
        };
        if let Some(waiter) = waiter {
            waiter.wake();
        }
    }

    fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The result of a task started with [`Pool::spawn_with_handle`](crate::Pool::spawn_with_handle).
/// Dropping it detaches the task, which still runs.
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
        if self.wait_deadline(Some(Instant::now() + timeout)) {
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
