//! `threadpool` crate adapter: `ThreadPool::execute` (one shared channel, a
//! plain mutex + condvar pool that never spins). No wait primitives of its
//! own, so the std Mutex + Condvar equivalents stand in; no stand-in for a
//! worker that blocks either, so blocking calls are made directly in the task.

use super::blocking::{self, CondvarEvent, CondvarTicketQueue, CondvarWaitGroup};
use super::{thread_slot, BlockingCall, BlockingPrims, Cap, Lacking, Peer, Sched, Support};

pub struct ThreadpoolSched(threadpool::ThreadPool);

impl Peer for ThreadpoolSched {
    type Tasks = Self;
    type Waits = Self;
    type Calls = Self;
    type Futures = Lacking;
    type Joins = Lacking;

    fn support(cap: Cap) -> Support {
        // A join would block a worker on a half that may sit in the queue
        // behind it.
        let join = Support::Lacks("no fork-join: a blocking join would deadlock");
        blocking::closure_pool(cap, "ThreadPool::execute", join)
    }
}

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
