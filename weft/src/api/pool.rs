//! [`Pool`], the owner of a set of workers: its methods, its shutdown
//! ([`ShutdownReport`], the threads' exits) and its drop. [`Handle`] is in
//! handle.rs; running a closure on its workers, in on_workers.rs.

use std::fmt;
use std::sync::Arc;
use std::thread::JoinHandle as ThreadHandle;
use std::time::Duration;

use crate::api::builder::{BuildError, Builder};
use crate::api::handle::{check_index, Handle};
use crate::api::on_workers::{broadcast, install, spawn_broadcast_in};
use crate::api::scope::{Scope, ScopeFifo};
use crate::api::task::{self, JoinHandle};
use crate::sched::assembly::ThreadExits;
use crate::sched::registry::Registry;
use crate::sched::waiter::block_until;
use crate::sched::worker::WorkerThread;

/// A pool of worker threads that run tasks, stealing from each other when idle
/// and parking (using no CPU) when there is nothing to do.
///
/// Dropping a `Pool` shuts it down in this order:
///
/// 1. Intake from outside stops: [`Handle::spawn`] and
///    [`Handle::spawn_on`] give their task back in an error, and a future
///    woken from outside the pool is dropped (its handle reports `Err`).
///    Work already in the pool keeps going and may still spawn: every task
///    already queued runs, and so does whatever those tasks spawn.
/// 2. Once nothing is queued or running, each thread of the pool runs its
///    [`on_thread_stop`](Builder::on_thread_stop) hook; what the hooks spawn
///    runs too.
/// 3. The futures still waiting for a wake that can no longer come are
///    dropped (their handles report `Err`), and the threads exit.
///
/// `drop` returns after all of that, with every thread joined (for a pool
/// whose threads a [`spawn_handler`](Builder::spawn_handler) started: once
/// every thread has returned from [`ThreadBuilder::run`](crate::ThreadBuilder::run)).
/// A pool dropped from inside one of its own tasks cannot wait for itself:
/// `drop` returns at once, and the threads go through the same steps,
/// detached. A pool whose worker 0 is the thread that built it
/// ([`Builder::use_current_thread`]) is dropped on that thread, which runs
/// the steps as worker 0; dropped elsewhere, it closes and keeps running
/// for that thread. [`Pool::shutdown_timeout`] is the same with a bound on how long
/// queued tasks may keep starting; [`Pool::shutdown_background`] starts the
/// same steps and returns without waiting for them.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// let pool = weft::Pool::builder().workers(4).build().unwrap();
/// let sum = AtomicUsize::new(0);
/// pool.scope(|s| {
///     for i in 1..=100 {
///         let sum = &sum;
///         s.spawn(move |_| {
///             sum.fetch_add(i, Ordering::Relaxed);
///         });
///     }
/// });
/// assert_eq!(sum.into_inner(), 5050);
/// ```
pub struct Pool {
    registry: Arc<Registry>,
    /// The threads `build` started itself (none for a spawn handler's).
    threads: Vec<ThreadHandle<()>>,
    /// Every worker thread, however started, until it leaves its loop.
    exits: Arc<ThreadExits>,
    /// Whether the thread that built the pool holds its seat 0
    /// ([`Builder::use_current_thread`], sched/adopted.rs).
    adopted: bool,
    /// Whether dropping waits for the shutdown to finish: false after
    /// [`Pool::shutdown_background`].
    wait_on_drop: bool,
}

/// Where a shutdown is called from, which decides what it may wait for.
enum Caller<'a> {
    /// Outside the pool: it waits for every thread.
    Outside,
    /// The thread holding the pool's seat 0, between jobs: it runs the rest
    /// as that worker, then waits as from outside.
    Holder(&'a WorkerThread),
    /// Inside one of the pool's tasks, or away from the thread that holds
    /// seat 0: the pool cannot finish while the caller (or the holder)
    /// runs, so nothing is waited for and the threads finish detached.
    CannotWait,
}

impl fmt::Debug for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("workers", &self.workers())
            .finish_non_exhaustive()
    }
}

impl Pool {
    /// A builder with every setting at its default.
    pub fn builder() -> Builder {
        Builder::new()
    }

    pub(crate) fn from_parts(
        registry: Arc<Registry>,
        threads: Vec<ThreadHandle<()>>,
        exits: Arc<ThreadExits>,
        adopted: bool,
    ) -> Pool {
        Pool {
            registry,
            threads,
            exits,
            adopted,
            wait_on_drop: true,
        }
    }

    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// Number of worker threads.
    pub fn workers(&self) -> usize {
        self.registry.num_workers()
    }

    /// The index of the calling thread if it is one of this pool's workers
    /// (see [`weft::current_worker_index`](crate::current_worker_index)).
    pub fn current_worker_index(&self) -> Option<usize> {
        crate::sched::context::worker_of(&self.registry).and_then(WorkerThread::worker_index)
    }

    /// Runs `task` on some worker, without waiting for it. A panic in `task`
    /// goes to the pool's panic handler. Called on one of this pool's
    /// workers, the task goes onto that worker's own queue, where it runs
    /// newest-first (see the crate docs, "Task order").
    ///
    /// A closure that captures up to 40 bytes (five words on a 64-bit
    /// target: a few references, `Arc`s, indices) and is no more aligned
    /// than a pointer is queued without any allocation; a larger one is
    /// boxed. (A scope's spawn and [`spawn_with_handle`](Pool::spawn_with_handle)
    /// keep a word of the job for themselves: up to 32 bytes there.)
    pub fn spawn<F>(&self, task: F)
    where
        F: FnOnce() + Send + 'static,
    {
        if task::spawn_droppable_in(&self.registry, task).is_err() {
            unreachable!("a live Pool is never closed");
        }
    }

    /// As [`Pool::spawn`], naming the task in the pool's trace (see
    /// `Builder::trace`, cargo feature `trace`). Without the feature this is
    /// simply `spawn`.
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(2).build().unwrap();
    /// pool.spawn_named("compress", || ());
    /// ```
    pub fn spawn_named<F>(&self, name: &'static str, task: F)
    where
        F: FnOnce() + Send + 'static,
    {
        #[cfg(feature = "trace")]
        let task = move || {
            crate::sched::recorder::name_current_task(name);
            task();
        };
        #[cfg(not(feature = "trace"))]
        let _ = name;
        self.spawn(task);
    }

    /// As [`Pool::spawn`], in first-in first-out order: called on one of
    /// this pool's workers, the tasks it spawns this way run oldest-first
    /// relative to each other, after the worker's `spawn`ed tasks (see the
    /// crate docs, "Task order"); from outside the pool, as `spawn`, through
    /// the global queue. rayon's `ThreadPool::spawn_fifo`.
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(1).build().unwrap();
    /// let (sender, receiver) = std::sync::mpsc::channel();
    /// pool.install(|| {
    ///     for i in 0..4 {
    ///         let sender = sender.clone();
    ///         pool.spawn_fifo(move || sender.send(i).unwrap());
    ///     }
    /// });
    /// drop(sender);
    /// // One worker, and the tasks were spawned on it: oldest first.
    /// assert_eq!(receiver.iter().collect::<Vec<_>>(), [0, 1, 2, 3]);
    /// ```
    pub fn spawn_fifo<F>(&self, task: F)
    where
        F: FnOnce() + Send + 'static,
    {
        if task::spawn_droppable_fifo_in(&self.registry, task).is_err() {
            unreachable!("a live Pool is never closed");
        }
    }

    /// Runs `task` on some worker; the handle gives its result (or its panic).
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(2).build().unwrap();
    /// let handle = pool.spawn_with_handle(|| 6 * 7);
    /// assert_eq!(handle.join().unwrap(), 42);
    /// ```
    pub fn spawn_with_handle<F, T>(&self, task: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let (handle, job) = task::with_handle(task);
        // Not `spawn`: the job is droppable itself, and reports it.
        if task::spawn_in(&self.registry, job).is_err() {
            unreachable!("a live Pool is never closed");
        }
        handle
    }

    /// Runs `task` on worker `index` only; it is never stolen.
    ///
    /// # Panics
    /// If `index >= self.workers()`, with the message
    /// `"spawn_on: worker index {index} out of range for a pool of {n} workers"`.
    pub fn spawn_on<F>(&self, index: usize, task: F)
    where
        F: FnOnce() + Send + 'static,
    {
        check_index(&self.registry, index);
        if task::spawn_pinned(&self.registry, index, task).is_err() {
            unreachable!("a live Pool is never closed");
        }
    }

    /// Runs `op` on a worker of this pool and returns its result; the calling
    /// thread blocks meanwhile (running tasks of its own pool if it is a worker
    /// of another one). On one of this pool's workers, `op` runs in place.
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(2).build().unwrap();
    /// let inside = pool.install(|| weft::current_worker_index().is_some());
    /// assert!(inside);
    /// ```
    pub fn install<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce() -> R + Send,
        R: Send,
    {
        install(&self.registry, op)
    }

    /// Runs `a` and `b`, possibly in parallel, and returns both results. If
    /// either panics, the panic is raised here once both have finished.
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.install(|| crate::api::join::join(a, b))
    }

    /// Creates a scope in which tasks may borrow from the caller's stack; waits
    /// for all of them. See [`Scope`].
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.install(|| crate::api::scope::scope(op))
    }

    /// As [`Pool::scope`], with a FIFO scope: its [`Scope::spawn`] queues as
    /// [`Scope::spawn_fifo`] does (see [`scope_fifo`](crate::scope_fifo)).
    /// rayon's `ThreadPool::scope_fifo`.
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(1).build().unwrap();
    /// let order = std::sync::Mutex::new(Vec::new());
    /// pool.scope_fifo(|s| {
    ///     for i in 0..4 {
    ///         let order = &order;
    ///         s.spawn(move |_| order.lock().unwrap().push(i));
    ///     }
    /// });
    /// assert_eq!(order.into_inner().unwrap(), [0, 1, 2, 3]);
    /// ```
    pub fn scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
        R: Send,
    {
        self.install(|| crate::api::scope::scope_fifo(op))
    }

    /// As [`Pool::scope`], but `op` runs on the calling thread, wherever it
    /// is; the scope's tasks go to this pool (see
    /// [`in_place_scope`](crate::in_place_scope)). rayon's
    /// `ThreadPool::in_place_scope`.
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(2).build().unwrap();
    /// let mut in_pool = [false; 3];
    /// let body_in_pool = pool.in_place_scope(|s| {
    ///     for flag in in_pool.iter_mut() {
    ///         s.spawn(move |_| *flag = weft::current_worker_index().is_some());
    ///     }
    ///     weft::current_worker_index().is_some()
    /// });
    /// assert_eq!((body_in_pool, in_pool), (false, [true; 3]));
    /// ```
    pub fn in_place_scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R,
    {
        // The caller borrows `self`, so the pool stays open for the scope.
        crate::api::scope::run_scope(&self.registry, false, op)
    }

    /// As [`Pool::in_place_scope`], with a FIFO scope. rayon's
    /// `ThreadPool::in_place_scope_fifo`.
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(1).build().unwrap();
    /// let order = std::sync::Mutex::new(Vec::new());
    /// pool.in_place_scope_fifo(|s| {
    ///     // One task that spawns the rest: spawned on the worker, in order.
    ///     s.spawn(|s| {
    ///         for i in 0..4 {
    ///             let order = &order;
    ///             s.spawn(move |_| order.lock().unwrap().push(i));
    ///         }
    ///     });
    /// });
    /// assert_eq!(order.into_inner().unwrap(), [0, 1, 2, 3]);
    /// ```
    pub fn in_place_scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R,
    {
        crate::api::scope::run_scope(&self.registry, true, op)
    }

    /// Runs `op` once on every worker, in parallel, and returns the results in
    /// worker order. `op` gets the index of the worker it runs on (what
    /// rayon's `BroadcastContext::index` gives). If calls panic, the first
    /// panic is raised here once every call has returned.
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(3).build().unwrap();
    /// assert_eq!(pool.broadcast(|i| i * 10), vec![0, 10, 20]);
    /// ```
    pub fn broadcast<OP, R>(&self, op: OP) -> Vec<R>
    where
        OP: Fn(usize) -> R + Sync,
        R: Send,
    {
        broadcast(&self.registry, &op)
    }

    /// Runs `op` once on every worker, as [`Pool::broadcast`] does, but
    /// without waiting: each worker's call is queued for that worker alone,
    /// behind the jobs already pinned to it (`spawn_on`, earlier broadcasts),
    /// and a panic in one goes to the pool's panic handler. rayon's
    /// `ThreadPool::spawn_broadcast`.
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(3).build().unwrap();
    /// let (sender, receiver) = std::sync::mpsc::channel();
    /// pool.spawn_broadcast(move |index| sender.send(index).unwrap());
    /// let mut seen: Vec<usize> = receiver.iter().take(3).collect();
    /// seen.sort();
    /// assert_eq!(seen, [0, 1, 2]);
    /// ```
    pub fn spawn_broadcast<OP>(&self, op: OP)
    where
        OP: Fn(usize) + Send + Sync + 'static,
    {
        spawn_broadcast_in(&self.registry, op);
    }

    /// Makes this pool the global pool, the one free functions (`weft::spawn`,
    /// `weft::join`, parallel loops...) use outside any pool, for the rest
    /// of the process, as [`Builder::build_global`] does for a pool it
    /// builds: for a pool built another way ([`Builder::build_with_spawn_handler`],
    /// say). Fails if the global pool already exists (built by an earlier
    /// call, or lazily by a free function), handing this pool back.
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(2).build().unwrap();
    /// pool.into_global().unwrap();
    /// assert_eq!(weft::current_num_threads(), 2);
    ///
    /// let another = weft::Pool::builder().workers(1).build().unwrap();
    /// let another = another.into_global().unwrap_err(); // the global pool exists
    /// assert_eq!(another.workers(), 1);
    /// ```
    pub fn into_global(self) -> Result<(), Pool> {
        crate::api::global::install_pool(self)
    }

    /// Has `make` build the global pool when a free function first needs
    /// it, in place of the default settings (`WEFT_WORKERS`, else one
    /// worker per core), unless [`Builder::build_global`] or
    /// [`into_global`](Pool::into_global) installs one first. Nothing is
    /// built now: a program that never uses the global pool never starts
    /// its threads. For a library that wants its own defaults for the
    /// global pool (a different worker count, a panic handler) without
    /// building it eagerly or checking on every call.
    ///
    /// Fails with [`BuildError::GlobalAlreadyInitialized`] if the global
    /// pool exists or is being built, or a maker was set before. A `make`
    /// that panics panics the free function that needed the pool, and the
    /// next one to need it calls `make` again. `make` must not use the
    /// global pool itself (a free function called outside any pool): that
    /// would wait for the build it is in.
    ///
    /// ```
    /// fn three_workers() -> weft::Pool {
    ///     weft::Pool::builder().workers(3).build().unwrap()
    /// }
    /// weft::Pool::set_global_maker(three_workers).unwrap();
    /// assert!(weft::Pool::set_global_maker(three_workers).is_err());
    /// assert_eq!(weft::current_num_threads(), 3); // built now, by `three_workers`
    /// ```
    pub fn set_global_maker(make: fn() -> Pool) -> Result<(), BuildError> {
        crate::api::global::set_maker(make)
    }

    /// A cloneable handle for giving this pool tasks from anywhere.
    pub fn handle(&self) -> Handle {
        Handle {
            registry: Arc::clone(&self.registry),
        }
    }

    /// Shuts the pool down as dropping it does (see [`Pool`]), letting the
    /// queued tasks start for at most `timeout`; then drops the ones that
    /// have not started, and reports how many. The shape of tokio's
    /// `Runtime::shutdown_timeout`, with weft's rule for what is dropped:
    ///
    /// 1. Intake from outside stops at once, as in `drop`.
    /// 2. For up to `timeout`, the pool goes on as in `drop`: queued tasks
    ///    run, and so does what they spawn. If the pool finishes shutting
    ///    down within that time (every step of `drop`, the stop hooks
    ///    included), this returns then, with nothing dropped.
    /// 3. Otherwise, from the end of `timeout` on, each task queued through
    ///    this pool's own API that has not started is dropped, not run, when
    ///    a worker takes it: the closures of [`Pool::spawn`],
    ///    [`spawn_named`](Pool::spawn_named), [`spawn_fifo`](Pool::spawn_fifo),
    ///    [`spawn_on`](Pool::spawn_on) and
    ///    [`spawn_with_handle`](Pool::spawn_with_handle) (whose handle then
    ///    reports `Err` with an [`Aborted`](crate::Aborted) payload), the
    ///    same spawns through a [`Handle`], each worker's call of a
    ///    [`spawn_broadcast`](Pool::spawn_broadcast) (the pool's, a
    ///    handle's, or [`weft::spawn_broadcast`](crate::spawn_broadcast)'s
    ///    on this pool), and the tasks of a [`JoinSet`](crate::JoinSet) in
    ///    this pool (its `spawn_on` this pool, or its `spawn` from one of
    ///    the pool's tasks; reported as aborted).
    ///    [`ShutdownReport::dropped`] counts them. A task that has started
    ///    runs to its end: a closure cannot be interrupted.
    /// 4. It then waits as `drop` does, for the running tasks, the stop hooks
    ///    and the threads; so a task that never returns keeps it waiting past
    ///    `timeout`.
    ///
    /// What is not dropped still runs in step 3: the tasks that running
    /// tasks queue through the free functions (`weft::spawn`, `spawn_fifo`,
    /// `join`, scopes, `broadcast`), whose callers may be waiting for them,
    /// tasks a [`Ticket`](crate::Ticket) schedules, and futures
    /// ([`Pool::spawn_future`]), which are polled until they finish or are
    /// left waiting for a wake at the end, when `drop`'s step 3 drops them.
    /// A task whose worker had not yet seen the end of `timeout` as it
    /// started runs too.
    ///
    /// Called from inside one of the pool's own tasks (or from inside
    /// [`blocking`](crate::blocking) there), where the pool cannot finish
    /// while the caller runs, it waits out `timeout` as any weft wait does
    /// (a task suspends and its worker runs others), starts dropping, and
    /// returns without joining, as `drop` does there: the report then has
    /// [`joined`](ShutdownReport::joined) false and counts only the tasks
    /// dropped so far. A `timeout` too large for an [`Instant`](std::time::Instant) is no
    /// timeout: outside, the call is `drop`; inside, it returns at once,
    /// dropping nothing.
    ///
    /// ```
    /// use std::sync::mpsc;
    /// use std::time::Duration;
    ///
    /// let pool = weft::Pool::builder().workers(1).build().unwrap();
    /// let (started, running) = mpsc::channel();
    /// let (release, held) = mpsc::channel::<()>();
    /// pool.spawn(move || {
    ///     started.send(()).unwrap();
    ///     held.recv().unwrap(); // the only worker is busy until released
    /// });
    /// running.recv().unwrap();
    /// let queued: Vec<_> = (0..10).map(|i| pool.spawn_with_handle(move || i)).collect();
    /// std::thread::spawn(move || {
    ///     std::thread::sleep(Duration::from_millis(20));
    ///     release.send(()).unwrap();
    /// });
    /// // No time at all: the running task finishes, the queued ones are dropped.
    /// let report = pool.shutdown_timeout(Duration::ZERO);
    /// assert!(report.timed_out() && report.joined());
    /// assert_eq!(report.dropped(), 10);
    /// for handle in queued {
    ///     assert!(handle.join().unwrap_err().is::<weft::Aborted>());
    /// }
    ///
    /// // Time enough: everything runs, nothing is dropped.
    /// let pool = weft::Pool::builder().workers(2).build().unwrap();
    /// let done: Vec<_> = (0..10).map(|i| pool.spawn_with_handle(move || i)).collect();
    /// let report = pool.shutdown_timeout(Duration::from_secs(60));
    /// assert_eq!((report.timed_out(), report.dropped()), (false, 0));
    /// assert_eq!(done.into_iter().map(|h| h.join().unwrap()).sum::<i32>(), 45);
    /// ```
    pub fn shutdown_timeout(mut self, timeout: Duration) -> ShutdownReport {
        let registry = Arc::clone(&self.registry);
        registry.close();
        let deadline = crate::sched::waiter::deadline_after(timeout);
        let caller = self.caller();
        let joined = !matches!(caller, Caller::CannotWait);
        let mut seat_left = false;
        let finished = match (caller, deadline) {
            // Nothing to wait for: the caller holds the pool open.
            (Caller::CannotWait, None) => true,
            (Caller::CannotWait, Some(deadline)) => {
                block_until(&|| false, Some(deadline));
                false
            }
            (Caller::Holder(worker), deadline) => {
                seat_left = crate::sched::adopted::shut_down(worker, deadline);
                seat_left && self.exits.wait(deadline)
            }
            (Caller::Outside, deadline) => self.exits.wait(deadline),
        };
        if seat_left {
            // No thread holds seat 0 any more: `drop` waits as outside.
            self.adopted = false;
        }
        if !finished {
            task::discard_unstarted(&registry);
        }
        drop(self);
        ShutdownReport {
            dropped: usize::try_from(registry.discarded()).unwrap_or(usize::MAX),
            timed_out: !finished,
            joined,
        }
    }

    /// Shuts the pool down as dropping it does (see [`Pool`]), without
    /// waiting for it: intake from outside stops at once, and the queued
    /// tasks, what they spawn, the stop hooks and the threads' exit all
    /// follow on the pool's own threads after this returns, as when a pool
    /// is dropped from inside one of its tasks. The shape of tokio's
    /// `Runtime::shutdown_background`; rayon's `ThreadPool` drop.
    ///
    /// The threads are detached, not joined, so nothing here tells when
    /// they have exited: a task that must finish before the program goes on
    /// signals it itself (a channel, a [`WaitGroup`](crate::WaitGroup)).
    /// On the thread that holds the pool's worker 0
    /// ([`Builder::use_current_thread`]), outside the pool's tasks, that
    /// thread first runs the pool's remaining work as worker 0, as `drop`
    /// does there: it cannot leave its seat before the pool is done with it.
    ///
    /// ```
    /// use std::sync::mpsc;
    ///
    /// let pool = weft::Pool::builder().workers(1).build().unwrap();
    /// let (release, held) = mpsc::channel::<()>();
    /// let (done, finished) = mpsc::channel();
    /// pool.spawn(move || {
    ///     held.recv().unwrap(); // busy until released
    ///     done.send("ran").unwrap();
    /// });
    /// pool.shutdown_background(); // returns with the task still running
    /// release.send(()).unwrap();
    /// assert_eq!(finished.recv().unwrap(), "ran");
    /// ```
    pub fn shutdown_background(mut self) {
        self.wait_on_drop = false;
    }

    /// Where a shutdown of this pool is called from. Inside: one of its
    /// tasks, or a task inside `weft::blocking`, whose thread is then not
    /// counted as a worker.
    fn caller(&self) -> Caller<'_> {
        if let Some(worker) = crate::sched::adopted::holder_between_jobs(&self.registry) {
            return Caller::Holder(worker);
        }
        let inside = crate::sched::context::worker_of(&self.registry).is_some()
            || crate::sched::context::is_blocked_in(&self.registry);
        if inside || self.adopted {
            Caller::CannotWait
        } else {
            Caller::Outside
        }
    }
}

/// What [`Pool::shutdown_timeout`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ShutdownReport {
    dropped: usize,
    timed_out: bool,
    joined: bool,
}

impl ShutdownReport {
    /// How many tasks were dropped without starting (step 3 of
    /// [`Pool::shutdown_timeout`]). Final when [`joined`](Self::joined).
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    /// Whether the timeout ran out before the pool had finished shutting
    /// down (so unstarted tasks were being dropped). Always true for a call
    /// from inside the pool with a timeout.
    pub fn timed_out(&self) -> bool {
        self.timed_out
    }

    /// Whether the pool's threads were joined before the call returned:
    /// false only for a call from inside the pool.
    pub fn joined(&self) -> bool {
        self.joined
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.registry.close();
        // A pool dropped by one of its own tasks cannot wait for itself: its
        // workers still drain and exit, detached.
        let caller = self.caller();
        if let Caller::Holder(worker) = caller {
            crate::sched::adopted::shut_down(worker, None);
        }
        if !matches!(caller, Caller::CannotWait) && self.wait_on_drop {
            self.exits.wait_all();
            for thread in self.threads.drain(..) {
                let _ = thread.join();
            }
            // The workers left once every task ran; so did the spares. The
            // last worker out dropped the futures still waiting for a wake
            // (registry.rs, "Shutdown"), as it does when the pool is dropped
            // from inside, where nobody waits for it.
            self.registry.spares.join();
        }
    }
}
