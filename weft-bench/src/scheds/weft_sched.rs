//! weft adapter: `Pool::spawn` for tasks, `current_worker_index` for worker
//! identity, and weft's own WaitGroup, Event (auto mode) and TicketQueue,
//! whose blocking waits inside a task suspend it on its fiber;
//! for futures, `Pool::spawn_future`, `weft::block_on`, `weft::yield_async`
//! and a manual-reset Event awaited with `wait_async`; blocking calls go
//! through `weft::blocking`; `weft::join` inside `Pool::install`; parallel
//! iterators through `weft::prelude` on the global pool (scenarios/par.rs).

use super::{
    installed_fork_join, AsyncSched, BlockingCall, BlockingPrims, Cap, EventLike, GateLike, Peer,
    Sched, Support, TicketLike, TicketQueueLike, WaitGroupLike,
};
use std::future::Future;

pub struct WeftSched(weft::Pool);

impl WeftSched {
    pub fn pool(&self) -> &weft::Pool {
        &self.0
    }
}

impl Peer for WeftSched {
    type Tasks = Self;
    type Waits = Self;
    type Calls = Self;
    type Futures = Self;
    type Joins = Self;

    fn support(cap: Cap) -> Support {
        use Support::{Has, Lacks};
        match cap {
            Cap::Spawn => Has("Pool::spawn"),
            Cap::WaitGroup => Has("weft::WaitGroup"),
            // The marl wait shapes run both ways: as plain Pool::spawn tasks
            // whose blocking wait suspends the task on its fiber (the worker
            // runs other tasks meanwhile), and, in their async variant, as
            // Pool::spawn_future tasks awaiting wait_async.
            Cap::TaskEvent => Has(
                "weft::Event (auto) wait in Pool::spawn tasks, suspending the task on its fiber \
                 (async variant: wait_async in Pool::spawn_future tasks, weft::block_on outside \
                 the pool)",
            ),
            Cap::TaskTicket => Has(
                "weft::Ticket wait in Pool::spawn tasks, suspending the task on its fiber \
                 (async variant: wait_async in Pool::spawn_future tasks, weft::block_on outside \
                 the pool)",
            ),
            Cap::FreeingWaits => Has(
                "a blocking wait in a Pool::spawn task suspends it on its fiber and frees the \
                 worker (async variant: a pending wait_async future holds no worker)",
            ),
            Cap::ForkJoin => Has("weft::join inside Pool::install"),
            Cap::Futures => Has("Pool::spawn_future, weft::block_on"),
            Cap::YieldNow => Has("weft::yield_async"),
            Cap::WakeAll => Has("weft::Event (manual) wait_async, signal"),
            Cap::StandIn => Has("weft::blocking"),
            Cap::Floor => Lacks("a scheduler: the std row is the floor"),
            Cap::ParIter => Has(
                "weft::prelude on the global pool (Builder::workers(n).build_global()), \
                 called from the main thread",
            ),
            Cap::ScopeSpawn => Has("Pool::scope, Scope::spawn"),
        }
    }
}

impl Sched for WeftSched {
    type WaitGroup = weft::WaitGroup;

    fn build(workers: usize) -> Self {
        let pool = weft::Pool::builder()
            .workers(workers)
            .build()
            .expect("weft pool");
        WeftSched(pool)
    }

    fn spawn<F: FnOnce() + Send + 'static>(&self, task: F) {
        self.0.spawn(task);
    }

    fn worker_index() -> Option<usize> {
        weft::current_worker_index()
    }
}

installed_fork_join!(WeftSched, weft::Pool, weft::join);

impl BlockingCall for WeftSched {
    fn call_blocking<R>(call: impl FnOnce() -> R) -> R {
        weft::blocking(call)
    }
}

impl AsyncSched for WeftSched {
    type Gate = Gate;

    fn spawn_detached<F: Future<Output = ()> + Send + 'static>(&self, future: F) {
        // A dropped JoinHandle detaches the task.
        drop(self.0.spawn_future(future));
    }

    fn block_on<F: Future>(&self, future: F) -> F::Output {
        // The free function, not `Pool::block_on`: that one moves the wait
        // onto a worker (taking one from the pool being measured), while this
        // parks the calling thread, as the peers' block_on do.
        weft::block_on(future)
    }

    fn yield_now() -> impl Future<Output = ()> + Send + 'static {
        weft::yield_async()
    }
}

/// A manual-reset `weft::Event`: one `signal` releases every waiter. A
/// newtype, because `weft::Event` already stands for the auto-reset event
/// of [`BlockingPrims`].
#[derive(Clone)]
pub struct Gate(weft::Event);

impl GateLike for Gate {
    fn new() -> Self {
        Gate(weft::Event::new(weft::EventMode::Manual))
    }

    fn wait(&self) -> impl Future<Output = ()> + Send + 'static {
        self.0.wait_async()
    }

    fn release(&self) {
        self.0.signal();
    }
}

impl BlockingPrims for WeftSched {
    type Event = weft::Event;
    type Tickets = weft::TicketQueue;
}

impl WaitGroupLike for weft::WaitGroup {
    fn new() -> Self {
        weft::WaitGroup::new()
    }

    fn add(&self, n: usize) {
        weft::WaitGroup::add(self, n as _);
    }

    fn done(&self) {
        weft::WaitGroup::done(self);
    }

    fn wait(&self) {
        weft::WaitGroup::wait(self);
    }
}

impl EventLike for weft::Event {
    fn new_auto() -> Self {
        weft::Event::new(weft::EventMode::Auto)
    }

    fn signal(&self) {
        weft::Event::signal(self);
    }

    fn wait(&self) {
        weft::Event::wait(self);
    }
}

impl TicketQueueLike for weft::TicketQueue {
    type Ticket = weft::Ticket;

    fn new() -> Self {
        weft::TicketQueue::new()
    }

    fn take(&self) -> weft::Ticket {
        weft::TicketQueue::take(self)
    }
}

impl TicketLike for weft::Ticket {
    fn wait(&self) {
        weft::Ticket::wait(self);
    }

    fn done(self) {
        weft::Ticket::done(&self);
    }
}
