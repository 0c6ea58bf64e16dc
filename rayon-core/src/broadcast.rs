//! Running one closure on every thread of a pool: [`broadcast`],
//! [`spawn_broadcast`] and the [`BroadcastContext`] each call gets.

use std::fmt;
use std::marker::PhantomData;

/// What one call of a broadcast closure learns about where it runs: the
/// index of its thread, and how many threads the pool has (one call runs
/// on each).
pub struct BroadcastContext<'a> {
    index: usize,
    /// Tied to the call it is given to, and neither `Send` nor `Sync`: it
    /// describes the thread it was made on.
    _call: PhantomData<&'a mut *mut ()>,
}

impl BroadcastContext<'_> {
    /// On the worker running call `index`.
    pub(crate) fn new(index: usize) -> Self {
        BroadcastContext {
            index,
            _call: PhantomData,
        }
    }

    /// The index of the thread this call runs on, the same as
    /// [`current_thread_index`](crate::current_thread_index) there.
    #[inline]
    pub fn index(&self) -> usize {
        self.index
    }

    /// How many threads the pool has, hence how many calls the broadcast
    /// makes.
    #[inline]
    pub fn num_threads(&self) -> usize {
        // The call runs on one of the pool's workers, so weft's "current
        // pool" is the broadcasting pool.
        weft::current_num_threads()
    }
}

impl fmt::Debug for BroadcastContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BroadcastContext")
            .field("index", &self.index())
            .field("num_threads", &self.num_threads())
            .finish()
    }
}

/// Runs `op` once on each thread of the caller's pool (the global pool
/// outside any pool), in parallel, and returns the results in thread
/// index order. Each call waits for its thread to be free: a thread busy
/// with a long task delays the whole broadcast. If a call panics, the
/// others still run and the panic then reaches the caller.
///
/// ```
/// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
/// let indexes = pool.install(|| rayon_core::broadcast(|ctx| ctx.index()));
/// assert_eq!(indexes, [0, 1, 2]);
/// ```
pub fn broadcast<OP, R>(op: OP) -> Vec<R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
    R: Send,
{
    crate::ensure_global();
    weft::broadcast(|index| op(BroadcastContext::new(index)))
}

/// [`broadcast`] without waiting: `op` is queued for each thread of the
/// caller's pool and this returns at once. A panic in a call goes to the
/// pool's panic handler, and aborts the process if it has none.
///
/// ```
/// let (send, recv) = std::sync::mpsc::channel();
/// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// pool.install(|| {
///     let send = std::sync::Mutex::new(send);
///     rayon_core::spawn_broadcast(move |ctx| send.lock().unwrap().send(ctx.index()).unwrap());
/// });
/// let mut seen: Vec<usize> = recv.iter().take(2).collect();
/// seen.sort();
/// assert_eq!(seen, [0, 1]);
/// ```
pub fn spawn_broadcast<OP>(op: OP)
where
    OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
{
    crate::ensure_global();
    weft::spawn_broadcast(move |index| op(BroadcastContext::new(index)));
}
