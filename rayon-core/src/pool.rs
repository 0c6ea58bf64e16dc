//! [`ThreadPool`]: a pool of its own, beside the global one, over a
//! `weft::Pool`.

use std::error::Error;
use std::fmt;

use crate::broadcast::BroadcastContext;
use crate::scope::{Scope, ScopeFifo};
use crate::Yield;

/// A pool of threads that run tasks, built by [`ThreadPoolBuilder`](crate::ThreadPoolBuilder).
/// Its methods run work on its threads; inside that work, the free
/// functions ([`join`](crate::join), [`scope`](crate::scope),
/// [`spawn`](crate::spawn)...) act on this pool too.
///
/// Dropping the pool does not wait: the tasks already queued in it, and
/// what they spawn, still run, on its threads, which then run their exit
/// handlers and end on their own. A task that must be done before the
/// program goes on has to say so itself (a channel, say).
///
/// ```
/// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// let (send, recv) = std::sync::mpsc::channel();
/// pool.spawn(move || send.send(pool_sum()).unwrap());
/// drop(pool); // the spawned task still runs
/// assert_eq!(recv.recv().unwrap(), 6);
///
/// fn pool_sum() -> i32 {
///     let (a, b) = rayon_core::join(|| 1 + 2, || 3);
///     a + b
/// }
/// ```
pub struct ThreadPool {
    /// `None` only while dropping, which hands the pool to weft's
    /// background shutdown.
    pool: Option<weft::Pool>,
}

impl ThreadPool {
    pub(crate) fn from_weft(pool: weft::Pool) -> ThreadPool {
        ThreadPool { pool: Some(pool) }
    }

    fn weft(&self) -> &weft::Pool {
        match &self.pool {
            Some(pool) => pool,
            None => unreachable!("a ThreadPool holds its weft pool until dropped"),
        }
    }

    /// Builds a pool from a [`Configuration`](crate::Configuration).
    #[deprecated(note = "Use `ThreadPoolBuilder::build`")]
    #[allow(deprecated)]
    pub fn new(configuration: crate::Configuration) -> Result<ThreadPool, Box<dyn Error>> {
        configuration.build()
    }

    /// Runs `op` on one of this pool's threads and returns its result,
    /// the caller waiting (a caller that is a thread of another pool keeps
    /// running that pool's tasks meanwhile). Inside `op`, the free
    /// functions act on this pool. A panic in `op` reaches the caller.
    ///
    /// ```
    /// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// assert_eq!(pool.install(|| rayon_core::current_num_threads()), 2);
    /// ```
    pub fn install<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce() -> R + Send,
        R: Send,
    {
        self.weft().install(op)
    }

    /// Runs `op` once on each of this pool's threads and returns the
    /// results in thread index order (see [`broadcast`](crate::broadcast)).
    ///
    /// ```
    /// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    /// assert_eq!(pool.broadcast(|ctx| ctx.num_threads()), [3, 3, 3]);
    /// ```
    pub fn broadcast<OP, R>(&self, op: OP) -> Vec<R>
    where
        OP: Fn(BroadcastContext<'_>) -> R + Sync,
        R: Send,
    {
        self.weft()
            .broadcast(|index| op(BroadcastContext::new(index)))
    }

    /// The number of threads of this pool, fixed for its life.
    pub fn current_num_threads(&self) -> usize {
        self.weft().workers()
    }

    /// The calling thread's index in this pool, or `None` if it is not one
    /// of this pool's threads.
    ///
    /// ```
    /// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    /// assert_eq!(pool.current_thread_index(), None);
    /// assert_eq!(pool.install(|| pool.current_thread_index()), Some(0));
    /// ```
    pub fn current_thread_index(&self) -> Option<usize> {
        self.weft().current_worker_index()
    }

    /// [`current_thread_has_pending_tasks`](crate::current_thread_has_pending_tasks)
    /// on one of this pool's threads; `None` elsewhere.
    pub fn current_thread_has_pending_tasks(&self) -> Option<bool> {
        self.current_thread_index()?;
        weft::current_thread_has_pending_tasks()
    }

    /// [`join`](crate::join), in this pool.
    pub fn join<A, B, RA, RB>(&self, oper_a: A, oper_b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.weft().join(oper_a, oper_b)
    }

    /// [`scope`](crate::scope), in this pool.
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.weft().scope(|scope| op(Scope::wrap(scope)))
    }

    /// [`scope_fifo`](crate::scope_fifo), in this pool.
    pub fn scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
        R: Send,
    {
        self.weft().scope_fifo(|scope| op(ScopeFifo::wrap(scope)))
    }

    /// [`in_place_scope`](crate::in_place_scope), its tasks in this pool.
    pub fn in_place_scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R,
    {
        self.weft().in_place_scope(|scope| op(Scope::wrap(scope)))
    }

    /// [`in_place_scope_fifo`](crate::in_place_scope_fifo), its tasks in
    /// this pool.
    pub fn in_place_scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R,
    {
        self.weft()
            .in_place_scope_fifo(|scope| op(ScopeFifo::wrap(scope)))
    }

    /// Runs `op` on one of this pool's threads without waiting for it (see
    /// [`spawn`](crate::spawn)). It runs even if the pool is dropped first.
    pub fn spawn<OP>(&self, op: OP)
    where
        OP: FnOnce() + Send + 'static,
    {
        self.weft().spawn(op);
    }

    /// [`spawn_fifo`](crate::spawn_fifo), in this pool.
    pub fn spawn_fifo<OP>(&self, op: OP)
    where
        OP: FnOnce() + Send + 'static,
    {
        self.weft().spawn_fifo(op);
    }

    /// [`spawn_broadcast`](crate::spawn_broadcast), in this pool.
    pub fn spawn_broadcast<OP>(&self, op: OP)
    where
        OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
    {
        self.weft()
            .spawn_broadcast(move |index| op(BroadcastContext::new(index)));
    }

    /// [`yield_now`](crate::yield_now) on one of this pool's threads;
    /// `None` elsewhere.
    pub fn yield_now(&self) -> Option<Yield> {
        self.current_thread_index()?;
        weft::yield_now()
    }

    /// [`yield_local`](crate::yield_local) on one of this pool's threads;
    /// `None` elsewhere.
    pub fn yield_local(&self) -> Option<Yield> {
        self.current_thread_index()?;
        weft::yield_local()
    }
}

impl Drop for ThreadPool {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.take() {
            pool.shutdown_background();
        }
    }
}

impl fmt::Debug for ThreadPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadPool")
            .field("num_threads", &self.current_num_threads())
            .finish_non_exhaustive()
    }
}
