//! `threadpool` crate adapter: `ThreadPool::execute` (one shared channel, a
//! plain mutex + condvar pool that never spins). No wait primitives of its
//! own, so the std Mutex + Condvar equivalents stand in.

use super::blocking::{CondvarEvent, CondvarTicketQueue, CondvarWaitGroup};
use super::{thread_slot, BlockingPrims, Sched};

pub struct ThreadpoolSched(::threadpool::ThreadPool);

impl Sched for ThreadpoolSched {
    type WaitGroup = CondvarWaitGroup;

    fn build(workers: usize) -> Self {
        ThreadpoolSched(::threadpool::ThreadPool::new(workers))
    }

    fn spawn<F: FnOnce() + Send + 'static>(&self, task: F) {
        self.0.execute(task);
    }

    fn worker_index() -> Option<usize> {
        Some(thread_slot())
    }
}

impl BlockingPrims for ThreadpoolSched {
    type Event = CondvarEvent;
    type Tickets = CondvarTicketQueue;
}
