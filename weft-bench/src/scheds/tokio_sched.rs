//! tokio adapter: a multi-thread runtime with `workers` worker threads; a task
//! is the closure run inside `Runtime::spawn(async move { .. })`, as a tokio
//! user runs short CPU work. Scenarios whose tasks wait on each other use
//! tokio's own async primitives instead (see scenarios/marl.rs); the
//! submitting thread, outside the runtime, waits with the std condvar group.
//! Blocking calls go through `tokio::task::block_in_place`.

use super::blocking::{CondvarWaitGroup, CONDVAR_WAIT_GROUP};
use super::{thread_slot, AsyncSched, BlockingCall, Cap, GateLike, Lacking, Peer, Sched, Support};
use std::future::Future;
use std::sync::Arc;
use tokio::sync::Notify;

pub struct TokioSched(tokio::runtime::Runtime);

impl TokioSched {
    pub fn runtime(&self) -> &tokio::runtime::Runtime {
        &self.0
    }
}

/// Its tasks' waits (marl's event and ticket shapes) are tokio's own async
/// primitives, written out in scenarios/marl.rs: there is no `Waits` role.
impl Peer for TokioSched {
    type Tasks = Self;
    type Waits = Lacking;
    type Calls = Self;
    type Futures = Self;
    type Joins = Lacking;

    fn support(cap: Cap) -> Support {
        use Support::{Has, Lacks};
        match cap {
            Cap::Spawn => Has("Runtime::spawn"),
            Cap::WaitGroup => Has(CONDVAR_WAIT_GROUP),
            Cap::TaskEvent => Has("tokio::sync::Notify, awaited in async tasks"),
            Cap::TaskTicket => Has("chain of tokio::sync::oneshot, awaited in async tasks"),
            Cap::FreeingWaits => Has("an awaiting task holds no worker"),
            Cap::ForkJoin => Lacks("no fork-join: tokio::join! is not parallel"),
            Cap::Futures => Has("Runtime::spawn, Runtime::block_on"),
            Cap::YieldNow => Has("tokio::task::yield_now"),
            Cap::WakeAll => Has("tokio::sync::Notify notified, notify_waiters"),
            Cap::StandIn => Has("tokio::task::block_in_place"),
            Cap::Floor => Lacks("a scheduler: the std row is the floor"),
            Cap::ParIter => Lacks("no parallel iterators: an async runtime"),
            Cap::ScopeSpawn => Lacks("no scoped tasks: Runtime::spawn takes 'static futures"),
        }
    }
}

impl Sched for TokioSched {
    type WaitGroup = CondvarWaitGroup;

    fn build(workers: usize) -> Self {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .build()
            .expect("tokio runtime");
        TokioSched(rt)
    }

    fn spawn<F: FnOnce() + Send + 'static>(&self, task: F) {
        // The JoinHandle is dropped: the task runs detached, like the others.
        drop(self.0.spawn(async move { task() }));
    }

    fn worker_index() -> Option<usize> {
        Some(thread_slot())
    }
}

impl BlockingCall for TokioSched {
    /// Hands the worker's core (its queue) to a blocking-pool thread for the
    /// call and takes it back afterwards if that thread has not claimed it
    /// yet; otherwise that thread stays the worker and the caller leaves the
    /// runtime once its task ends.
    /// Valid here: tasks run in `Runtime::spawn` on a multi-thread runtime.
    fn call_blocking<R>(call: impl FnOnce() -> R) -> R {
        tokio::task::block_in_place(call)
    }
}

impl AsyncSched for TokioSched {
    type Gate = Arc<Notify>;

    fn spawn_detached<F: Future<Output = ()> + Send + 'static>(&self, future: F) {
        // A dropped JoinHandle detaches the task.
        drop(self.0.spawn(future));
    }

    fn block_on<F: Future>(&self, future: F) -> F::Output {
        // On the calling thread, as tokio's own benchmarks wait.
        self.0.block_on(future)
    }

    fn yield_now() -> impl Future<Output = ()> + Send + 'static {
        tokio::task::yield_now()
    }
}

/// `notify_waiters` releases every `Notified` created before it; the waiting
/// future creates its `Notified` on its first poll, which the fan-out
/// scenario sees happen before it releases.
impl GateLike for Arc<Notify> {
    fn new() -> Self {
        Arc::new(Notify::new())
    }

    fn wait(&self) -> impl Future<Output = ()> + Send + 'static {
        let notify = Arc::clone(self);
        async move { notify.notified().await }
    }

    fn release(&self) {
        self.notify_waiters();
    }
}
