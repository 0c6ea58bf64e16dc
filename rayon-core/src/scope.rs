//! Scopes: tasks that may borrow from the caller's stack, which waits for
//! all of them. rayon's [`Scope`] and [`ScopeFifo`] over weft's scope.

use std::fmt;

use crate::broadcast::BroadcastContext;

/// A scope in which tasks that borrow from outside it can be spawned (see
/// [`scope`]); every task spawned in it has ended when the scope returns.
/// Tasks spawned on one worker run newest first.
#[repr(transparent)]
pub struct Scope<'scope> {
    inner: weft::Scope<'scope>,
}

/// [`Scope`] whose tasks, spawned with [`spawn_fifo`](ScopeFifo::spawn_fifo),
/// run oldest first relative to the others the same worker spawned (see
/// [`scope_fifo`]).
#[repr(transparent)]
pub struct ScopeFifo<'scope> {
    inner: weft::ScopeFifo<'scope>,
}

impl<'scope> Scope<'scope> {
    /// The rayon view of a weft scope, for as long as the weft borrow.
    pub(crate) fn wrap<'a>(inner: &'a weft::Scope<'scope>) -> &'a Scope<'scope> {
        // SAFETY: `Scope` is `repr(transparent)` over `weft::Scope`, so both
        // have one layout, and the reference keeps `inner`'s lifetime.
        unsafe { &*(inner as *const weft::Scope<'scope>).cast::<Scope<'scope>>() }
    }

    /// Queues `body` to run in this scope; the scope does not return before
    /// it has run. `body` gets the scope, to spawn more. A panic in `body`
    /// is kept until the scope ends, and then reaches the scope's caller
    /// (the first one, if several panic); the other tasks still run.
    pub fn spawn<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.inner.spawn(move |scope| body(Scope::wrap(scope)));
    }

    /// Queues `body` once for each thread of the scope's pool, on that
    /// thread, as [`broadcast`](crate::broadcast) does, within the scope.
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&Scope<'scope>, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        self.inner.spawn_broadcast(move |scope, index| {
            body(Scope::wrap(scope), BroadcastContext::new(index));
        });
    }
}

impl<'scope> ScopeFifo<'scope> {
    /// The rayon view of a weft FIFO scope, for as long as the weft borrow.
    pub(crate) fn wrap<'a>(inner: &'a weft::ScopeFifo<'scope>) -> &'a ScopeFifo<'scope> {
        // SAFETY: `ScopeFifo` is `repr(transparent)` over `weft::ScopeFifo`,
        // so both have one layout, and the reference keeps `inner`'s
        // lifetime.
        unsafe { &*(inner as *const weft::ScopeFifo<'scope>).cast::<ScopeFifo<'scope>>() }
    }

    /// As [`Scope::spawn`], the task running oldest first relative to the
    /// others its worker spawned this way.
    pub fn spawn_fifo<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&ScopeFifo<'scope>) + Send + 'scope,
    {
        self.inner
            .spawn_fifo(move |scope| body(ScopeFifo::wrap(scope)));
    }

    /// As [`Scope::spawn_broadcast`].
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&ScopeFifo<'scope>, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        self.inner.spawn_broadcast(move |scope, index| {
            body(ScopeFifo::wrap(scope), BroadcastContext::new(index));
        });
    }
}

impl fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope").finish_non_exhaustive()
    }
}

impl fmt::Debug for ScopeFifo<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScopeFifo").finish_non_exhaustive()
    }
}

/// Runs `op` with a [`Scope`] in the caller's pool (the global pool, the
/// caller waiting, outside any pool), then waits until every task spawned
/// in the scope has ended, and returns `op`'s result. The tasks may borrow
/// anything that outlives the call. A panic in `op` or in a task reaches
/// the caller once all of them have ended.
///
/// ```
/// let mut counts = [0; 3];
/// rayon_core::scope(|s| {
///     for (i, count) in counts.iter_mut().enumerate() {
///         s.spawn(move |_| *count = i * 10);
///     }
/// });
/// assert_eq!(counts, [0, 10, 20]);
/// ```
pub fn scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    crate::ensure_global();
    weft::scope(|scope| op(Scope::wrap(scope)))
}

/// [`scope`] with a [`ScopeFifo`].
///
/// ```
/// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
/// let order = std::sync::Mutex::new(Vec::new());
/// pool.install(|| {
///     rayon_core::scope_fifo(|s| {
///         for i in 0..3 {
///             let order = &order;
///             s.spawn_fifo(move |_| order.lock().unwrap().push(i));
///         }
///     })
/// });
/// assert_eq!(order.into_inner().unwrap(), [0, 1, 2]);
/// ```
pub fn scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
    R: Send,
{
    crate::ensure_global();
    weft::scope_fifo(|scope| op(ScopeFifo::wrap(scope)))
}

/// [`scope`], with `op` run on the calling thread even outside any pool
/// (so `op` need not be `Send`); the tasks run in the caller's pool, or the
/// global pool.
///
/// ```
/// let not_send = std::rc::Rc::new(5);
/// let mut out = 0;
/// rayon_core::in_place_scope(|s| {
///     let value = *not_send; // the body runs here, so it may use the `Rc`
///     let out = &mut out;
///     s.spawn(move |_| *out = value * 2);
/// });
/// assert_eq!(out, 10);
/// ```
pub fn in_place_scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    crate::ensure_global();
    weft::in_place_scope(|scope| op(Scope::wrap(scope)))
}

/// [`in_place_scope`] with a [`ScopeFifo`].
///
/// ```
/// let mut out = 0;
/// rayon_core::in_place_scope_fifo(|s| s.spawn_fifo(|_| out = 1));
/// assert_eq!(out, 1);
/// ```
pub fn in_place_scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    crate::ensure_global();
    weft::in_place_scope_fifo(|scope| op(ScopeFifo::wrap(scope)))
}
