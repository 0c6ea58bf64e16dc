//! Scheduler adapters. Scenarios are written once against [`Sched`] (submit a
//! task, wait for a group) and [`BlockingPrims`] (events and ordered sections
//! that block the worker); every method is generic, so each scheduler's own
//! spawn is called directly, monomorphised, with no extra boxing layered on top.
//! Schedulers that cannot submit independent tasks (chili, std threads) have
//! only the entry points the scenarios that fit them use.

pub mod blocking;
pub mod chili;
pub mod rayon;
pub mod std;
pub mod threadpool;
pub mod tokio;
pub mod weft;

use ::std::sync::atomic::{AtomicUsize, Ordering};

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
    Threadpool,
    Chili,
    Std,
}

impl SchedKind {
    pub const ALL: [SchedKind; 6] = [
        SchedKind::Weft,
        SchedKind::Rayon,
        SchedKind::Tokio,
        SchedKind::Threadpool,
        SchedKind::Chili,
        SchedKind::Std,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SchedKind::Weft => "weft",
            SchedKind::Rayon => "rayon",
            SchedKind::Tokio => "tokio",
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
