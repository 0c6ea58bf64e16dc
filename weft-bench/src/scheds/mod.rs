//! Scheduler adapters. Scenarios are written once against [`Sched`] (submit a
//! task, wait for a group) and [`BlockingPrims`] (events and ordered sections
//! that block the worker); every method is generic, so each scheduler's own
//! spawn is called directly, monomorphised, with no extra boxing layered on top.
//! Schedulers that cannot submit independent tasks (chili; std, the bare-thread
//! floor) have
//! only the entry points the scenarios that fit them use. Runtimes that run
//! futures (weft, tokio, async-executor) also implement [`AsyncSched`], which
//! the async/* scenarios are written against. [`BlockingCall`] says how a
//! task makes a call that blocks its thread (blocking/* scenarios).

pub mod async_executor_sched;
pub mod bare_threads;
pub mod blocking;
pub mod chili_sched;
pub mod rayon_sched;
pub mod threadpool_sched;
pub mod tokio_sched;
pub mod weft_sched;

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum SchedKind {
    Weft,
    Rayon,
    Tokio,
    /// clap spells it "async-executor" already; serde's lowercase would not.
    #[serde(rename = "async-executor")]
    AsyncExecutor,
    Threadpool,
    Chili,
    Std,
}

impl SchedKind {
    pub const ALL: [SchedKind; 7] = [
        SchedKind::Weft,
        SchedKind::Rayon,
        SchedKind::Tokio,
        SchedKind::AsyncExecutor,
        SchedKind::Threadpool,
        SchedKind::Chili,
        SchedKind::Std,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SchedKind::Weft => "weft",
            SchedKind::Rayon => "rayon",
            SchedKind::Tokio => "tokio",
            SchedKind::AsyncExecutor => "async-executor",
            SchedKind::Threadpool => "threadpool",
            SchedKind::Chili => "chili",
            SchedKind::Std => "std",
        }
    }
}

/// A pool that runs independent tasks submitted from any thread, including
/// from its own tasks.
pub trait Sched: Send + Sync + Sized + 'static {
    /// What the submitting thread waits on for a group of tasks.
    type WaitGroup: WaitGroupLike;

    fn build(workers: usize) -> Self;

    fn spawn<F: FnOnce() + Send + 'static>(&self, task: F);

    /// Which worker is running the caller: the scheduler's own index where
    /// it has one, else a per-thread id. Used to see whether a round of
    /// tasks spread over every worker.
    fn worker_index() -> Option<usize>;
}

/// How a task of this pool makes a call that blocks its thread: through the
/// pool's stand-in API where it has one (weft, tokio), else directly, holding
/// the worker for the whole call (rayon, threadpool).
pub trait BlockingCall: Sched {
    /// Runs `call` from inside one of the pool's tasks.
    fn call_blocking<R>(call: impl FnOnce() -> R) -> R;
}

/// A runtime of futures. Spawning goes through the runtime's handle both
/// from the submitting thread and from inside its tasks: on a worker, weft's
/// `Pool::spawn_future` and tokio's `Runtime::spawn` take the same local-queue
/// path as their free functions (`weft::spawn_future`, `tokio::spawn`), and
/// async-executor has no free function at all, so one path serves all three.
pub trait AsyncSched: Sched {
    /// What many futures wait on to be released at once (async/fan-out).
    type Gate: GateLike;

    /// Runs `future` as a detached task (its result is not waited for).
    fn spawn_detached<F: Future<Output = ()> + Send + 'static>(&self, future: F);

    /// Drives `future` to completion on the calling thread, which is never
    /// one of the runtime's workers in the scenarios: it parks while pending.
    fn block_on<F: Future>(&self, future: F) -> F::Output;

    /// The runtime's own `yield_now`.
    fn yield_now() -> impl Future<Output = ()> + Send + 'static;
}

/// A release for many waiting futures at once.
pub trait GateLike: Clone + Send + Sync + 'static {
    fn new() -> Self;
    /// A future that completes once the gate is released, provided it was
    /// polled at least once before the release.
    fn wait(&self) -> impl Future<Output = ()> + Send + 'static;
    fn release(&self);
}

/// Waiting primitives used *inside* tasks, blocking the worker thread.
pub trait BlockingPrims: Sched {
    type Event: EventLike;
    type Tickets: TicketQueueLike;
}

pub trait WaitGroupLike: Clone + Send + Sync + 'static {
    fn new() -> Self;
    fn add(&self, n: usize);
    fn done(&self);
    fn wait(&self);
}

/// An auto-reset event: one `wait` consumes one `signal`.
pub trait EventLike: Clone + Send + Sync + 'static {
    fn new_auto() -> Self;
    fn signal(&self);
    fn wait(&self);
}

/// Ordered sections: tickets are served in the order they were taken.
pub trait TicketQueueLike: Send + Sync + 'static {
    type Ticket: TicketLike;
    fn new() -> Self;
    fn take(&self) -> Self::Ticket;
}

pub trait TicketLike: Send + 'static {
    /// Blocks until every earlier ticket is done.
    fn wait(&self);
    fn done(self);
}

/// A small per-thread id for schedulers with no worker index of their own.
pub fn thread_slot() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SLOT: usize = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    SLOT.with(|s| *s)
}
