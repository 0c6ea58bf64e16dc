//! Scoped tasks: tasks that may borrow from the stack of the caller, who waits
//! for all of them before the borrows end (like `std::thread::scope`).

use std::any::Any;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use crate::api::on_workers::SendPtr;
use crate::facade::lock;
use crate::sched::job::{ClosureJob, JobRef};
use crate::sched::latch::{CountLatch, Latch};
use crate::sched::registry::Registry;
use crate::sched::unwind::drop_payload;
use crate::sched::worker::WorkerThread;

/// A scope in which to spawn tasks that borrow data living at least `'scope`.
/// Made by [`scope`], [`in_place_scope`], [`Pool::scope`](crate::Pool::scope)
/// and [`Pool::in_place_scope`](crate::Pool::in_place_scope), or, as a FIFO
/// scope whose [`Scope::spawn`] queues first-in first-out, by [`scope_fifo`],
/// [`in_place_scope_fifo`] and their `Pool` methods.
pub struct Scope<'scope> {
    registry: Arc<Registry>,
    pending: CountLatch,
    /// The first panic of a task in this scope, raised when the scope ends.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// Whether [`Scope::spawn`] queues as [`Scope::spawn_fifo`] does (a
    /// scope made by one of the `*_fifo` functions).
    fifo: bool,
    /// Invariant in `'scope`, as `std::thread::Scope` is: a shorter lifetime
    /// would let tasks outlive what they borrow.
    _marker: PhantomData<&'scope mut &'scope ()>,
}

/// rayon's name for the scope of [`scope_fifo`] and [`in_place_scope_fifo`]:
/// in weft the same type as [`Scope`], whose [`Scope::spawn`] is first-in
/// first-out in such a scope, and whose [`Scope::spawn_fifo`] always is.
pub type ScopeFifo<'scope> = Scope<'scope>;

/// Creates a scope on the current worker's pool (or the global pool outside
/// any pool), runs `op` in it, and waits until every task spawned in the scope
/// has finished. A panic in `op` or in any task is raised here after that.
///
/// Outside any pool, `op` itself runs on a worker of the global pool (the
/// caller blocks meanwhile); [`in_place_scope`] runs it on the caller.
///
/// ```
/// let mut words = vec!["a", "b", "c"];
/// let mut lengths = vec![0; 3];
/// weft::scope(|s| {
///     for (word, length) in words.iter().zip(lengths.iter_mut()) {
///         s.spawn(move |_| *length = word.len());
///     }
/// });
/// words.push("d"); // the borrows ended with the scope
/// assert_eq!(lengths, [1, 1, 1]);
/// ```
pub fn scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    scope_on_a_worker(false, op)
}

/// As [`scope`], but the scope is a FIFO one: its [`Scope::spawn`] queues as
/// [`Scope::spawn_fifo`] does, so that the tasks spawned on one worker run
/// oldest-first relative to each other (see the crate docs, "Task order"),
/// and so do the tasks they spawn in the scope. rayon's `scope_fifo`.
///
/// ```
/// let pool = weft::Pool::builder().workers(1).build().unwrap();
/// let order = std::sync::Mutex::new(Vec::new());
/// pool.install(|| {
///     weft::scope_fifo(|s| {
///         for i in 0..4 {
///             let order = &order;
///             s.spawn(move |_| order.lock().unwrap().push(i));
///         }
///     })
/// });
/// assert_eq!(order.into_inner().unwrap(), [0, 1, 2, 3]);
/// ```
pub fn scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
    R: Send,
{
    scope_on_a_worker(true, op)
}

/// As [`scope`], but `op` runs on the calling thread even outside any pool:
/// the tasks spawned in the scope go to the current worker's pool (else the
/// global pool, or inside [`blocking`](crate::blocking) the pool of the
/// worker the call stands aside for), and a caller off the pool blocks,
/// without running tasks, until they have all finished. Since `op` does not
/// move, it need not be `Send`. rayon's `in_place_scope`.
///
/// ```
/// use std::cell::Cell;
///
/// // `Cell` is not `Sync`: the body may use it, the tasks may not.
/// let spawned = Cell::new(0);
/// let mut squares = vec![0; 4];
/// weft::in_place_scope(|s| {
///     for (i, square) in squares.iter_mut().enumerate() {
///         s.spawn(move |_| *square = i * i);
///         spawned.set(spawned.get() + 1);
///     }
/// });
/// assert_eq!((spawned.get(), squares), (4, vec![0, 1, 4, 9]));
/// ```
pub fn in_place_scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    in_place(false, op)
}

/// As [`in_place_scope`], with a FIFO scope as [`scope_fifo`]'s. rayon's
/// `in_place_scope_fifo`.
///
/// ```
/// let order = std::sync::Mutex::new(Vec::new());
/// let caller = std::thread::current().id();
/// let ran_here = weft::in_place_scope_fifo(|s| {
///     s.spawn(|_| order.lock().unwrap().push("task"));
///     std::thread::current().id() == caller
/// });
/// assert!(ran_here);
/// assert_eq!(order.into_inner().unwrap(), ["task"]);
/// ```
pub fn in_place_scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    in_place(true, op)
}

/// The body of [`scope`] and [`scope_fifo`]: in place on a worker, else on a
/// worker of the free functions' pool.
fn scope_on_a_worker<'scope, OP, R>(fifo: bool, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    if WorkerThread::current().is_some() {
        in_place(fifo, op)
    } else {
        crate::api::on_workers::install(&crate::api::global::free_function_pool(), || {
            in_place(fifo, op)
        })
    }
}

/// A scope of the pool the caller is in, run on the caller.
fn in_place<'scope, OP, R>(fifo: bool, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    crate::api::global::with_current_pool(|registry| run_scope(registry, fifo, op))
}

/// Runs `op` on the calling thread in a new scope of `registry`, then waits
/// for the scope's tasks. The caller is a running job of `registry`'s pool
/// (a worker's, or one a thread inside `blocking` stands aside for), or that
/// pool is one that accepts pushes meanwhile: the global pool, or a `Pool`
/// the caller borrows. Either keeps the pool from draining while tasks are
/// spawned into it from outside (see [`Scope::spawn`]'s queueing).
pub(crate) fn run_scope<'scope, OP, R>(registry: &Arc<Registry>, fifo: bool, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    let scope = Scope {
        registry: Arc::clone(registry),
        pending: CountLatch::for_current_thread(),
        panic: Mutex::new(None),
        fifo,
        _marker: PhantomData,
    };
    let result = panic::catch_unwind(AssertUnwindSafe(|| op(&scope)));
    // SAFETY: releases the count the body held; `scope` lives in this frame.
    unsafe { CountLatch::set(&scope.pending) };
    scope.pending.wait();
    // A task's panic wins over the body's, whose payload is then dropped
    // here (its destructor may panic too: see unwind.rs).
    match (scope.take_panic(), result) {
        (Some(payload), body) => {
            if let Err(body_payload) = body {
                drop_payload(body_payload);
            }
            panic::resume_unwind(payload)
        }
        (None, Ok(value)) => value,
        (None, Err(payload)) => panic::resume_unwind(payload),
    }
}

impl std::fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope").finish_non_exhaustive()
    }
}

impl<'scope> Scope<'scope> {
    /// Spawns `task` in this scope. It may borrow anything that outlives the
    /// scope, and gets the scope to spawn more tasks. Spawned on a worker,
    /// such tasks run newest-first there; in a FIFO scope ([`scope_fifo`],
    /// [`in_place_scope_fifo`]) oldest-first, as [`Scope::spawn_fifo`]'s
    /// (see the crate docs, "Task order").
    ///
    /// A closure that captures up to 32 bytes (four words on a 64-bit
    /// target) and is no more aligned than a pointer is queued without any
    /// allocation; a larger one is boxed.
    pub fn spawn<F>(&self, task: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        if self.fifo {
            self.spawn_fifo(task);
        } else {
            self.spawn_onto(task, WorkerThread::push);
        }
    }

    /// As [`Scope::spawn`], in first-in first-out order: spawned on a worker,
    /// such tasks run oldest-first relative to each other, after that
    /// worker's other pending tasks (see the crate docs, "Task order").
    /// (rayon offers this on the `ScopeFifo` of its `scope_fifo`.)
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(1).build().unwrap();
    /// let order = std::sync::Mutex::new(Vec::new());
    /// pool.scope(|s| {
    ///     for i in 0..4 {
    ///         let order = &order;
    ///         s.spawn_fifo(move |_| order.lock().unwrap().push(i));
    ///     }
    /// });
    /// assert_eq!(order.into_inner().unwrap(), [0, 1, 2, 3]);
    /// ```
    pub fn spawn_fifo<F>(&self, task: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.spawn_onto(task, WorkerThread::push_yielded);
    }

    /// Spawns `body` once for every worker of the scope's pool, as
    /// [`Pool::spawn_broadcast`](crate::Pool::spawn_broadcast) does (each
    /// call queued for its worker alone, behind the jobs already pinned to
    /// it), but as tasks of this scope: `body` may borrow what outlives the
    /// scope, gets the scope and the worker's index, and the scope waits for
    /// every call; a panic in one is raised when the scope ends. rayon's
    /// `Scope::spawn_broadcast`.
    ///
    /// Spawned from inside [`blocking`](crate::blocking) for one of the
    /// pool's workers, the call for that worker waits until the blocking
    /// call returns.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let pool = weft::Pool::builder().workers(3).build().unwrap();
    /// let calls = AtomicUsize::new(0);
    /// let indexes = std::sync::Mutex::new(Vec::new());
    /// pool.scope(|s| {
    ///     s.spawn_broadcast(|_, index| {
    ///         calls.fetch_add(1, Ordering::Relaxed);
    ///         indexes.lock().unwrap().push(index);
    ///     });
    /// });
    /// let mut indexes = indexes.into_inner().unwrap();
    /// indexes.sort();
    /// assert_eq!((calls.into_inner(), indexes), (3, vec![0, 1, 2]));
    /// ```
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&Scope<'scope>, usize) + Send + Sync + 'scope,
    {
        let body = Arc::new(body);
        for index in 0..self.registry.num_workers() {
            let body = Arc::clone(&body);
            let job = self.counted_job(move |scope| body(scope, index));
            // Accepted even if the pool was dropped meanwhile, for the reason
            // given in `spawn_onto`.
            self.registry.inject_pinned_for_running_job(index, job);
        }
    }

    /// Spawns `task`, queued by `push` on one of the pool's workers.
    fn spawn_onto<F>(&self, task: F, push: impl FnOnce(&WorkerThread, JobRef))
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        let job_ref = self.counted_job(task);
        match crate::sched::context::worker_of(&self.registry) {
            Some(worker) => push(worker, job_ref),
            // From a thread outside the pool (say, a `std::thread::scope`
            // inside this scope, or the body of an in-place scope): the
            // scope's owner keeps the pool open (see `run_scope`) and waits
            // for this task, so the push is accepted even if the pool was
            // dropped meanwhile, and the pool drains it.
            _ => self.registry.inject_for_running_job(job_ref),
        }
    }

    /// `task` as a job of this scope: counted in `pending` from now until the
    /// job's end, its panic kept for the scope's owner.
    fn counted_job<F>(&self, task: F) -> JobRef
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.pending.increment();
        let scope = SendPtr::new(self as *const Scope<'scope>);
        let job = move || {
            // SAFETY: the scope's owner waits for `pending` to reach zero before
            // the scope is dropped, and this job holds one count until its end.
            unsafe {
                let scope_ref = &*scope.get();
                if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| task(scope_ref))) {
                    scope_ref.record_panic(payload);
                }
                CountLatch::set(&scope_ref.pending);
            }
        };
        // SAFETY: the job borrows only data outliving `'scope`, and the scope's
        // owner waits for it (above) before `'scope` ends.
        unsafe { ClosureJob::new_ref(job) }
    }

    /// Keeps the first panic of the scope's tasks; later ones are dropped,
    /// after the lock, containing a panic of their destructors, so that the
    /// task still releases its count.
    fn record_panic(&self, payload: Box<dyn Any + Send>) {
        let mut first = lock(&self.panic);
        let later = match *first {
            None => {
                *first = Some(payload);
                None
            }
            Some(_) => Some(payload),
        };
        drop(first);
        if let Some(later) = later {
            drop_payload(later);
        }
    }

    fn take_panic(&self) -> Option<Box<dyn Any + Send>> {
        lock(&self.panic).take()
    }
}
