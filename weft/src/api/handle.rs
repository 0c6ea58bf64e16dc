//! [`Handle`](crate::Handle), a shareable way to give a pool tasks that
//! survives the pool's shutdown with a clear error ([`SpawnError`](crate::SpawnError)).

use std::fmt;
use std::sync::Arc;

use crate::api::on_workers::spawn_broadcast_in;
use crate::api::task;
use crate::sched::job::ClosureJob;
use crate::sched::registry::Registry;

/// A cheap, cloneable, `Send + Sync` handle to a [`Pool`](crate::Pool). Unlike the pool's
/// own methods, spawning through a handle can fail: once the pool is dropped,
/// the task is handed back in the error.
///
/// ```
/// let pool = weft::Pool::builder().workers(1).build().unwrap();
/// let handle = pool.handle();
/// assert!(handle.spawn(|| ()).is_ok());
/// drop(pool);
/// let (sender, receiver) = std::sync::mpsc::channel();
/// let refused = handle.spawn(move || sender.send("ran").unwrap()).unwrap_err();
/// let task = refused.into_inner(); // the task comes back; run it elsewhere
/// task();
/// assert_eq!(receiver.recv().unwrap(), "ran");
/// ```
#[derive(Clone)]
pub struct Handle {
    pub(crate) registry: Arc<Registry>,
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle")
            .field("workers", &self.registry.num_workers())
            .field("closed", &self.registry.is_closed())
            .finish()
    }
}

impl Handle {
    /// Spawns `task` on the pool, or gives it back if the pool was dropped.
    pub fn spawn<F>(&self, task: F) -> Result<(), SpawnError<F>>
    where
        F: FnOnce() + Send + 'static,
    {
        task::spawn_droppable_in(&self.registry, task).map_err(SpawnError::closed)
    }

    /// As [`Pool::spawn_fifo`](crate::Pool::spawn_fifo), or gives `task` back if the pool was dropped.
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(1).build().unwrap();
    /// let handle = pool.handle();
    /// let (sender, receiver) = std::sync::mpsc::channel();
    /// assert!(handle.spawn_fifo(move || sender.send("ran").unwrap()).is_ok());
    /// assert_eq!(receiver.recv().unwrap(), "ran");
    /// drop(pool);
    /// assert!(handle.spawn_fifo(|| ()).unwrap_err().is_closed());
    /// ```
    pub fn spawn_fifo<F>(&self, task: F) -> Result<(), SpawnError<F>>
    where
        F: FnOnce() + Send + 'static,
    {
        task::spawn_droppable_fifo_in(&self.registry, task).map_err(SpawnError::closed)
    }

    /// As [`Pool::spawn_broadcast`](crate::Pool::spawn_broadcast), or gives `op` back if the pool was
    /// dropped: either every worker gets its call, or none does.
    ///
    /// Called on one of the pool's workers, each call is queued at once, as
    /// `Pool::spawn_broadcast` does; from outside, one job goes through the
    /// pool's global queue and queues the calls when a worker runs it, so
    /// they are queued behind whatever was pinned to the workers by then
    /// (including a [`Handle::spawn_on`] made after this returns).
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(2).build().unwrap();
    /// let handle = pool.handle();
    /// let (sender, receiver) = std::sync::mpsc::channel();
    /// handle.spawn_broadcast(move |index| sender.send(index).unwrap()).unwrap();
    /// let mut seen: Vec<usize> = receiver.iter().take(2).collect();
    /// seen.sort();
    /// assert_eq!(seen, [0, 1]);
    /// drop(pool);
    /// assert!(handle.spawn_broadcast(|_| ()).unwrap_err().is_closed());
    /// ```
    pub fn spawn_broadcast<OP>(&self, op: OP) -> Result<(), SpawnError<OP>>
    where
        OP: Fn(usize) + Send + Sync + 'static,
    {
        if crate::sched::context::worker_of(&self.registry).is_some() {
            // A worker's own task keeps the pool from draining meanwhile, but
            // a dropped pool refuses spawns through a handle, as `spawn` does.
            if self.registry.is_closed() {
                return Err(SpawnError::closed(op));
            }
            spawn_broadcast_in(&self.registry, op);
            return Ok(());
        }
        // Queued as one job, so that a pool dropped meanwhile refuses all of
        // it: the job runs on a worker, which then queues every call.
        let registry = Arc::clone(&self.registry);
        self.registry
            .inject(op, move |op| {
                let queue_calls = move || spawn_broadcast_in(&registry, op);
                // SAFETY: the job owns what it uses (`OP: 'static`).
                unsafe { ClosureJob::new_ref(queue_calls) }
            })
            .map_err(SpawnError::closed)
    }

    /// As [`Pool::spawn_on`](crate::Pool::spawn_on), or gives `task` back: if the pool was dropped,
    /// or if `index` is not one of its workers ([`SpawnError::is_closed`]
    /// tells the two apart).
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(2).build().unwrap();
    /// let handle = pool.handle();
    /// assert!(handle.spawn_on(1, || ()).is_ok());
    /// let refused = handle.spawn_on(2, || ()).unwrap_err();
    /// assert!(!refused.is_closed());
    /// ```
    pub fn spawn_on<F>(&self, index: usize, task: F) -> Result<(), SpawnError<F>>
    where
        F: FnOnce() + Send + 'static,
    {
        let workers = self.registry.num_workers();
        if index >= workers {
            return Err(SpawnError {
                task,
                reason: Refusal::NoSuchWorker { index, workers },
            });
        }
        task::spawn_pinned(&self.registry, index, task).map_err(SpawnError::closed)
    }

    /// Number of worker threads.
    pub fn workers(&self) -> usize {
        self.registry.num_workers()
    }

    /// Whether the pool was dropped (spawns now fail).
    pub fn is_closed(&self) -> bool {
        self.registry.is_closed()
    }
}

/// A task a [`Handle`] refused: its pool was dropped, or (`spawn_on`) the
/// worker index is out of range. [`SpawnError::into_inner`] gives the task
/// back.
pub struct SpawnError<F> {
    task: F,
    reason: Refusal,
}

impl<F> SpawnError<F> {
    fn closed(task: F) -> SpawnError<F> {
        SpawnError {
            task,
            reason: Refusal::Closed,
        }
    }

    /// The task that was not run.
    pub fn into_inner(self) -> F {
        self.task
    }

    /// Whether the task was refused because the pool shut down (otherwise,
    /// `spawn_on` was given an index that is none of the pool's workers).
    pub fn is_closed(&self) -> bool {
        matches!(self.reason, Refusal::Closed)
    }
}

impl<F> fmt::Debug for SpawnError<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.reason {
            Refusal::Closed => f.write_str("SpawnError(pool shut down)"),
            Refusal::NoSuchWorker { index, workers } => {
                write!(f, "SpawnError(no worker {index} in a pool of {workers})")
            }
        }
    }
}

impl<F> fmt::Display for SpawnError<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.reason {
            Refusal::Closed => f.write_str("the pool has shut down; the task was not run"),
            Refusal::NoSuchWorker { index, workers } => write!(
                f,
                "spawn_on: worker index {index} out of range for a pool of {workers} workers; the task was not run"
            ),
        }
    }
}

impl<F> std::error::Error for SpawnError<F> {}

pub(crate) fn check_index(registry: &Registry, index: usize) {
    let workers = registry.num_workers();
    assert!(
        index < workers,
        "spawn_on: worker index {index} out of range for a pool of {workers} workers"
    );
}

#[derive(Clone, Copy, Debug)]
enum Refusal {
    Closed,
    NoSuchWorker { index: usize, workers: usize },
}
