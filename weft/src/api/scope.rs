//! Scoped tasks: tasks that may borrow from the stack of the caller, who waits
//! for all of them before the borrows end (like `std::thread::scope`).

use std::any::Any;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use crate::api::pool::SendPtr;
use crate::facade::lock;
use crate::sched::job::{ClosureJob, JobRef};
use crate::sched::latch::{CountLatch, Latch};
use crate::sched::registry::Registry;
use crate::sched::unwind::drop_payload;
use crate::sched::worker::WorkerThread;

/// A scope in which to spawn tasks that borrow data living at least `'scope`.
/// Made by [`scope`] or [`Pool::scope`](crate::Pool::scope).
pub struct Scope<'scope> {
    registry: Arc<Registry>,
    pending: CountLatch,
    /// The first panic of a task in this scope, raised when the scope ends.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// Invariant in `'scope`, as `std::thread::Scope` is: a shorter lifetime
    /// would let tasks outlive what they borrow.
    _marker: PhantomData<&'scope mut &'scope ()>,
}

/// Creates a scope on the current worker's pool (or the global pool outside
/// any pool), runs `op` in it, and waits until every task spawned in the scope
/// has finished. A panic in `op` or in any task is raised here after that.
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
    match WorkerThread::current() {
        Some(worker) => scope_on(worker, op),
        None => crate::api::pool::install(&crate::api::global::free_function_pool(), || scope(op)),
    }
}

fn scope_on<'scope, OP, R>(worker: &WorkerThread, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    let scope = Scope {
        registry: Arc::clone(worker.registry_arc()),
        pending: CountLatch::for_current_thread(),
        panic: Mutex::new(None),
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
    /// such tasks run newest-first there (see the crate docs, "Task order").
    pub fn spawn<F>(&self, task: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.spawn_onto(task, WorkerThread::push);
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

    /// Spawns `task`, queued by `push` on one of the pool's workers.
    fn spawn_onto<F>(&self, task: F, push: impl FnOnce(&WorkerThread, JobRef))
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
        let job_ref = unsafe { ClosureJob::new_ref(job) };
        match crate::context::worker_of(&self.registry) {
            Some(worker) => push(worker, job_ref),
            // From a thread outside the pool (say, a `std::thread::scope`
            // inside this scope): the scope's owner is a running job of the
            // pool and waits for this task, so the push is accepted even if
            // the pool was dropped meanwhile, and the pool drains it.
            _ => self.registry.inject_for_running_job(job_ref),
        }
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
