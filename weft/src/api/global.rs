//! The global pool that free functions use outside any pool: built lazily with
//! default settings, or once explicitly with [`Builder::build_global`](crate::Builder::build_global).

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::api::builder::{BuildError, Builder};
use crate::api::pool::Pool;
use crate::sched::registry::Registry;
use crate::sched::worker::WorkerThread;

static GLOBAL: OnceLock<Pool> = OnceLock::new();

/// What builds the global pool on its first use, if nobody built it
/// first ([`set_maker`]), and whether that first use has begun: one lock,
/// so that a maker is either set before the lazy build reads it or refused.
static LAZY: Mutex<Lazy> = Mutex::new(Lazy {
    maker: None,
    begun: false,
});

struct Lazy {
    maker: Option<fn() -> Pool>,
    begun: bool,
}

/// Has `make` build the global pool on its first use (`Pool::set_global_maker`).
pub(crate) fn set_maker(make: fn() -> Pool) -> Result<(), BuildError> {
    let mut lazy = LAZY.lock().unwrap_or_else(PoisonError::into_inner);
    if lazy.begun || lazy.maker.is_some() || GLOBAL.get().is_some() {
        return Err(BuildError::GlobalAlreadyInitialized);
    }
    lazy.maker = Some(make);
    Ok(())
}

/// Builds the global pool from `builder`, unless it exists already.
pub(crate) fn install_builder(builder: Builder) -> Result<(), BuildError> {
    if GLOBAL.get().is_some() {
        return Err(BuildError::GlobalAlreadyInitialized);
    }
    let pool = builder.build()?;
    // Lost a race with another `build_global` or a lazy first use: the pool we
    // built is dropped (its workers joined) and the caller told.
    GLOBAL
        .set(pool)
        .map_err(|_| BuildError::GlobalAlreadyInitialized)
}

/// The global pool, built with defaults on first use.
///
/// # Panics
/// If the default pool cannot be built (for example `WEFT_WORKERS=0`).
/// Makes `pool` the global pool, unless one exists: then it comes back.
pub(crate) fn install_pool(pool: Pool) -> Result<(), Pool> {
    GLOBAL.set(pool)
}

pub(crate) fn pool() -> &'static Pool {
    GLOBAL.get_or_init(|| {
        // Only this closure (which `OnceLock` runs once at a time) takes the
        // lock while the global pool is unbuilt, and it never waits for the
        // pool with the lock held, so no build waits on it.
        let maker = {
            let mut lazy = LAZY.lock().unwrap_or_else(PoisonError::into_inner);
            lazy.begun = true;
            lazy.maker
        };
        match maker {
            Some(make) => make(),
            None => Builder::new()
                .build()
                .unwrap_or_else(|error| panic!("weft: cannot build the global pool: {error}")),
        }
    })
}

/// The pool a free function (`weft::spawn`, `join`, `scope`, `spawn_future`)
/// acts on when called off a worker: the pool whose worker this thread
/// stands aside for inside `weft::blocking`, else the global pool. (On a
/// worker, each acts on the worker's own pool, through the worker.)
///
/// The pool returned accepts pushes: the global pool is never dropped, and a
/// pool with a task inside `blocking` has that task still running.
pub(crate) fn free_function_pool() -> Arc<Registry> {
    with_free_function_pool(Arc::clone)
}

/// Calls `f` with [`free_function_pool`]'s pool, borrowed: a loop from
/// outside asks for the worker count on every call, and a clone of the
/// `Arc` is two read-modify-writes on a line every caller shares.
fn with_free_function_pool<R>(f: impl FnOnce(&Arc<Registry>) -> R) -> R {
    match crate::sched::context::blocked_pool() {
        Some(registry) => f(&registry),
        None => f(pool().registry()),
    }
}

/// Calls `f` with the pool the caller is in: the worker's own (a spare's
/// too), else [`free_function_pool`]'s.
pub(crate) fn with_current_pool<R>(f: impl FnOnce(&Arc<Registry>) -> R) -> R {
    match WorkerThread::current() {
        Some(worker) => f(worker.registry_arc()),
        None => with_free_function_pool(f),
    }
}

/// Runs `op` on a worker: in place on the calling worker, else on one of
/// the free-function pool's (as `weft::join` outside any pool), waiting
/// for it. For entry points that then fork many times (parallel
/// iterators), so that only the first step pays the trip into the pool.
pub(crate) fn in_worker<R: Send>(op: impl FnOnce() -> R + Send) -> R {
    match WorkerThread::current() {
        Some(_) => op(),
        None => crate::api::on_workers::install(&free_function_pool(), op),
    }
}

/// After a parallel loop that this thread shared with its pool (the
/// worker's own, or outside any pool the free-function pool): the pool's
/// searchers keep searching for the linger window, so that the next loop
/// finds one awake (`Registry::linger`).
pub(crate) fn linger_after_loop() {
    with_current_pool(|pool| pool.linger());
}

/// After a loop on a worker started to split, or ended with pieces that
/// other workers took: the pool lingers as after a `join` whose half was
/// stolen, only where its workers fit the cores
/// (`Registry::linger_after_call` says why). In a pool of more workers
/// than cores, searchers kept awake share the cores with the loop they
/// wait for: 20,000-item loops in an 8-worker pool on 2 cores took 1.3x
/// the CPU of rayon's loops on the same pool (docs/PARALLEL.md,
/// "Session 38").
pub(crate) fn linger_after_worker_loop() {
    with_current_pool(|pool| pool.linger_after_call());
}

/// Whether the calling thread is a worker (of any pool).
#[inline]
pub(crate) fn on_worker() -> bool {
    WorkerThread::current().is_some()
}

/// Queues `task` on the pool a free function acts on from this thread.
/// `Err` gives the task back if that pool no longer takes tasks.
pub(crate) fn spawn_on_free_function_pool<F>(task: F) -> Result<(), F>
where
    F: FnOnce() + Send + 'static,
{
    crate::api::task::spawn_in(&free_function_pool(), task)
}
