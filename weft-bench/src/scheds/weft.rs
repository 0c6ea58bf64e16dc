//! weft adapter: `Pool::spawn` for tasks, `current_worker_index` for worker
//! identity, and weft's own WaitGroup, Event (auto mode) and TicketQueue.

use super::{BlockingPrims, EventLike, Sched, TicketLike, TicketQueueLike, WaitGroupLike};

pub struct WeftSched(::weft::Pool);

impl WeftSched {
    pub fn pool(&self) -> &::weft::Pool {
        &self.0
    }
}

impl Sched for WeftSched {
    type WaitGroup = ::weft::WaitGroup;

    fn build(workers: usize) -> Self {
        let pool = ::weft::Pool::builder()
            .workers(workers)
            .build()
            .expect("weft pool");
        WeftSched(pool)
    }

    fn spawn<F: FnOnce() + Send + 'static>(&self, task: F) {
        self.0.spawn(task);
    }

    fn worker_index() -> Option<usize> {
        ::weft::current_worker_index()
    }
}

impl BlockingPrims for WeftSched {
    type Event = ::weft::Event;
    type Tickets = ::weft::TicketQueue;
}

impl WaitGroupLike for ::weft::WaitGroup {
    fn new() -> Self {
        ::weft::WaitGroup::new()
    }

    fn add(&self, n: usize) {
        ::weft::WaitGroup::add(self, n as _);
    }

    fn done(&self) {
        ::weft::WaitGroup::done(self);
    }

    fn wait(&self) {
        ::weft::WaitGroup::wait(self);
    }
}

impl EventLike for ::weft::Event {
    fn new_auto() -> Self {
        ::weft::Event::new(::weft::EventMode::Auto)
    }

    fn signal(&self) {
        ::weft::Event::signal(self);
    }

    fn wait(&self) {
        ::weft::Event::wait(self);
    }
}

impl TicketQueueLike for ::weft::TicketQueue {
    type Ticket = ::weft::Ticket;

    fn new() -> Self {
        ::weft::TicketQueue::new()
    }

    fn take(&self) -> ::weft::Ticket {
        ::weft::TicketQueue::take(self)
    }
}

impl TicketLike for ::weft::Ticket {
    fn wait(&self) {
        ::weft::Ticket::wait(self);
    }

    fn done(self) {
        ::weft::Ticket::done(&self);
    }
}
