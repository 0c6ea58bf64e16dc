//! `threadpool` crate adapter: `ThreadPool::execute` (one shared channel, a
//! plain mutex + condvar pool that never spins). No wait primitives of its
//! own, so the std Mutex + Condvar equivalents stand in; no stand-in for a
//! worker that blocks either, so blocking calls are made directly in the task.

use super::blocking::{CondvarEvent, CondvarTicketQueue, CondvarWaitGroup};
use super::{thread_slot, BlockingCall, BlockingPrims, Sched};

pub struct ThreadpoolSched(threadpool::ThreadPool);

impl Sched for ThreadpoolSched {
    type WaitGroup = CondvarWaitGroup;

    fn build(workers: usize) -> Self {
        ThreadpoolSched(threadpool::ThreadPool::new(workers))
    }

    fn spawn<F: FnOnce() + Send + 'static>(&self, task: F) {
        self.0.execute(task);
    }

    fn worker_index() -> Option<usize> {
        Some(thread_slot())
    }
}

/// threadpool has no stand-in for a worker that blocks: the call holds the
/// worker until it returns, as a threadpool user's task would.
impl BlockingCall for ThreadpoolSched {
    fn call_blocking<R>(call: impl FnOnce() -> R) -> R {
        call()
    }
}

impl BlockingPrims for ThreadpoolSched {
    type Event = CondvarEvent;
    type Tickets = CondvarTicketQueue;
}
