//! The free functions: what `weft::spawn`, `spawn_fifo`, `broadcast`,
//! `spawn_broadcast`, `yield_now`, `yield_local`, `current_worker_index`
//! and rayon's other names for the current pool do, on the calling
//! worker's pool or, outside any pool, on the one `global` names. The crate
//! root re-exports them.

/// Runs `task` on the current worker's pool (its own queue, newest first:
/// see the crate docs, "Task order"), or on the global pool when called
/// outside any pool.
///
/// ```
/// let (sender, receiver) = std::sync::mpsc::channel();
/// weft::spawn(move || sender.send(weft::current_worker_index().is_some()).unwrap());
/// assert!(receiver.recv().unwrap());
/// ```
#[cfg(not(loom))]
pub fn spawn<F>(task: F)
where
    F: FnOnce() + Send + 'static,
{
    spawn_free(task, false);
}

/// The body of [`spawn`] and [`spawn_fifo`]: onto the calling worker's own
/// queue, which accepts the task even in a pool dropped meanwhile (the
/// running caller holds it open), else into the free functions' pool.
#[cfg(not(loom))]
#[inline]
fn spawn_free<F>(task: F, fifo: bool)
where
    F: FnOnce() + Send + 'static,
{
    match crate::sched::worker::WorkerThread::current() {
        Some(worker) => {
            // SAFETY: `F: 'static`, so the job borrows nothing.
            let job = unsafe { crate::sched::job::ClosureJob::new_ref(task) };
            if fifo {
                worker.push_yielded(job);
            } else {
                worker.push(job);
            }
        }
        None => {
            let pool = crate::api::global::free_function_pool();
            let queued = if fifo {
                crate::api::task::spawn_fifo_in(&pool, task)
            } else {
                crate::api::task::spawn_in(&pool, task)
            };
            if queued.is_err() {
                unreachable!("the pool of a free function accepts spawns");
            }
        }
    }
}

/// As [`spawn`], in first-in first-out order: on a worker, the tasks it
/// spawns this way run oldest-first relative to each other, once it has no
/// `spawn` task left; outside any pool, as `spawn`, through the global
/// pool's queue. See the crate docs, "Task order" (and the fairness pick
/// there). rayon's `spawn_fifo`.
///
/// ```
/// let pool = weft::Pool::builder().workers(1).build().unwrap();
/// let (sender, receiver) = std::sync::mpsc::channel();
/// pool.spawn(move || {
///     for i in 0..3 {
///         let sender = sender.clone();
///         weft::spawn_fifo(move || sender.send(i).unwrap());
///     }
/// });
/// assert_eq!(receiver.iter().collect::<Vec<_>>(), [0, 1, 2]);
/// ```
#[cfg(not(loom))]
pub fn spawn_fifo<F>(task: F)
where
    F: FnOnce() + Send + 'static,
{
    spawn_free(task, true);
}

/// The index of the calling thread within its pool, if it is one of the
/// pool's workers: always below the pool's `workers()`, so valid for
/// [`Pool::spawn_on`](crate::Pool::spawn_on). [`current_thread_index`] is the same function under
/// rayon's name.
///
/// `None` elsewhere, including inside [`blocking`](fn@crate::blocking) (the thread is not a
/// worker until the call returns) and on the spare threads that stand in for
/// a blocked worker meanwhile: they run the pool's tasks, but are none of its
/// `workers()` and have no pinned queue.
#[cfg(not(loom))]
#[inline]
pub fn current_worker_index() -> Option<usize> {
    crate::sched::worker::WorkerThread::current()
        .and_then(crate::sched::worker::WorkerThread::worker_index)
}

/// Whether the calling worker has tasks of its own queued that have not
/// started: the ones it spawned or left as a `join` half, which it would
/// run next (thieves may still take them). `None` off the workers, as for
/// [`current_worker_index`]. A snapshot: other threads may take the tasks
/// at any moment. rayon's `current_thread_has_pending_tasks`.
///
/// ```
/// let pool = weft::Pool::builder().workers(1).build().unwrap();
/// assert_eq!(weft::current_thread_has_pending_tasks(), None);
/// pool.install(|| {
///     assert_eq!(weft::current_thread_has_pending_tasks(), Some(false));
///     weft::spawn(|| ());
///     // The only worker is busy here, so nobody took the task.
///     assert_eq!(weft::current_thread_has_pending_tasks(), Some(true));
/// });
/// ```
#[cfg(not(loom))]
pub fn current_thread_has_pending_tasks() -> Option<bool> {
    let worker = crate::sched::worker::WorkerThread::current()?;
    worker.worker_index()?;
    Some(worker.has_local_work())
}

/// rayon's name for [`current_worker_index`], of which it is an alias: the
/// calling thread's index among its pool's workers, or `None` off them.
///
/// ```
/// let pool = weft::Pool::builder().workers(2).build().unwrap();
/// assert_eq!(weft::current_thread_index(), None);
/// let mut seen = pool.broadcast(|_| weft::current_thread_index());
/// seen.sort();
/// assert_eq!(seen, [Some(0), Some(1)]);
/// ```
#[cfg(not(loom))]
#[inline]
pub fn current_thread_index() -> Option<usize> {
    current_worker_index()
}

/// The number of workers of the pool the caller is in, else of the pool a
/// free function acts on: the global pool (building it if need be), or,
/// inside [`blocking`](fn@crate::blocking), the pool of the worker the call stands aside for.
/// rayon's `current_num_threads`.
///
/// ```
/// let pool = weft::Pool::builder().workers(3).build().unwrap();
/// assert_eq!(pool.install(weft::current_num_threads), 3);
/// ```
#[cfg(not(loom))]
pub fn current_num_threads() -> usize {
    crate::api::global::with_current_pool(|registry| registry.num_workers())
}

/// Runs `op` once on every worker of the pool the caller is in (else of the
/// global pool), in parallel, and returns the results in worker order: as
/// [`Pool::broadcast`](crate::Pool::broadcast), which see. rayon's `broadcast`.
///
/// Called inside [`blocking`](fn@crate::blocking) for one of the pool's workers, it waits for
/// that worker too, which is busy with the blocking call: it deadlocks, as
/// `Pool::broadcast` does there.
///
/// ```
/// let pool = weft::Pool::builder().workers(3).build().unwrap();
/// let indexes = pool.install(|| weft::broadcast(|index| index));
/// assert_eq!(indexes, [0, 1, 2]);
/// ```
#[cfg(not(loom))]
pub fn broadcast<OP, R>(op: OP) -> Vec<R>
where
    OP: Fn(usize) -> R + Sync,
    R: Send,
{
    crate::api::global::with_current_pool(|registry| {
        crate::api::on_workers::broadcast(registry, &op)
    })
}

/// Runs `op` once on every worker of the pool the caller is in (else of the
/// global pool), without waiting: as [`Pool::spawn_broadcast`](crate::Pool::spawn_broadcast), which see.
/// rayon's `spawn_broadcast`.
///
/// ```
/// let pool = weft::Pool::builder().workers(2).build().unwrap();
/// let (sender, receiver) = std::sync::mpsc::channel();
/// pool.spawn(move || weft::spawn_broadcast(move |index| sender.send(index).unwrap()));
/// let mut seen: Vec<usize> = receiver.iter().take(2).collect();
/// seen.sort();
/// assert_eq!(seen, [0, 1]);
/// ```
#[cfg(not(loom))]
pub fn spawn_broadcast<OP>(op: OP)
where
    OP: Fn(usize) + Send + Sync + 'static,
{
    crate::api::global::with_current_pool(|registry| {
        crate::api::on_workers::spawn_broadcast_in(registry, op)
    });
}

/// What [`yield_now`] and [`yield_local`] did on a worker. rayon's `Yield`.
#[cfg(not(loom))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Yield {
    /// A pending task was found and run to its end.
    Executed,
    /// No pending task was found; nothing ran.
    Idle,
}

/// Lets the pool run one pending task on the calling thread, if it is one of
/// a pool's threads: the synchronous yield, for closure tasks (rayon's
/// `yield_now`); futures yield with [`yield_async`](crate::yield_async)`().await` instead.
///
/// The task is the one the worker would take next, from its own queues
/// first, then (as an idle worker would) from the pool's other queues; it
/// runs to its end before this returns, with its panic going to the pool's
/// panic handler like any task's. The task may itself be a second half of
/// one of the caller's own pending `join`s. Returns
/// `Some(Yield::Executed)` if a task ran, `Some(Yield::Idle)` if none was
/// found, and `None` on a thread that runs no pool's tasks (including inside
/// [`blocking`](fn@crate::blocking)). A polling loop that gets `Idle` may want to yield to the
/// OS too ([`std::thread::yield_now`]).
///
/// ```
/// let pool = weft::Pool::builder().workers(1).build().unwrap();
/// assert_eq!(weft::yield_now(), None); // not on a worker
/// pool.install(|| {
///     let (sender, receiver) = std::sync::mpsc::channel();
///     weft::spawn(move || sender.send("ran").unwrap());
///     // The only worker is busy here: the task runs because we yield.
///     assert_eq!(weft::yield_now(), Some(weft::Yield::Executed));
///     assert_eq!(receiver.try_recv(), Ok("ran"));
///     assert_eq!(weft::yield_now(), Some(weft::Yield::Idle));
/// });
/// ```
#[cfg(not(loom))]
pub fn yield_now() -> Option<Yield> {
    yield_on_worker(false)
}

/// As [`yield_now`], from the calling worker's own queues only (rayon's
/// `yield_local`): its spawned tasks, its pending `join` halves, futures
/// woken on it, and tasks pinned to it ([`Pool::spawn_on`](crate::Pool::spawn_on), broadcasts);
/// never the global queue or another worker's.
///
/// ```
/// let pool = weft::Pool::builder().workers(1).build().unwrap();
/// pool.install(|| {
///     let (sender, receiver) = std::sync::mpsc::channel();
///     weft::spawn(move || sender.send(1).unwrap());
///     assert_eq!(weft::yield_local(), Some(weft::Yield::Executed));
///     assert_eq!(receiver.try_recv(), Ok(1));
///     assert_eq!(weft::yield_local(), Some(weft::Yield::Idle));
/// });
/// ```
#[cfg(not(loom))]
pub fn yield_local() -> Option<Yield> {
    yield_on_worker(true)
}

#[cfg(not(loom))]
fn yield_on_worker(local_only: bool) -> Option<Yield> {
    let worker = crate::sched::worker::WorkerThread::current()?;
    Some(if worker.yield_once(local_only) {
        Yield::Executed
    } else {
        Yield::Idle
    })
}

/// Names the task running on the calling worker in its pool's trace (cargo
/// feature `trace`, with `Builder::trace` on): the way to name a task spawned
/// in a [`Scope`](crate::Scope) or through `weft::spawn`. The name goes on the innermost task
/// still running; elsewhere, or without tracing, this does nothing.
///
/// ```
/// let pool = weft::Pool::builder().workers(2).build().unwrap();
/// pool.scope(|s| {
///     s.spawn(|_| {
///         weft::name_current_task("render");
///     });
/// });
/// ```
#[cfg(not(loom))]
#[inline]
pub fn name_current_task(name: &'static str) {
    #[cfg(feature = "trace")]
    crate::sched::recorder::name_current_task(name);
    #[cfg(not(feature = "trace"))]
    let _ = name;
}
