//! rayon adapter: `ThreadPool::spawn` for tasks, `current_thread_index` for
//! worker identity; rayon has no wait group, event or ticket queue, so the
//! std Mutex + Condvar equivalents stand in. Nor has it a stand-in for a
//! worker that blocks: blocking calls are made directly in the task.

use super::blocking::{CondvarEvent, CondvarTicketQueue, CondvarWaitGroup};
use super::{BlockingCall, BlockingPrims, Sched};

pub struct RayonSched(rayon::ThreadPool);

impl RayonSched {
    pub fn pool(&self) -> &rayon::ThreadPool {
        &self.0
    }
}

impl Sched for RayonSched {
    type WaitGroup = CondvarWaitGroup;

    fn build(workers: usize) -> Self {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(workers)
            .build()
            .expect("rayon pool");
        RayonSched(pool)
    }

    fn spawn<F: FnOnce() + Send + 'static>(&self, task: F) {
        self.0.spawn(task);
    }

    fn worker_index() -> Option<usize> {
        rayon::current_thread_index()
    }
}

/// rayon has no stand-in for a worker that blocks: the call holds the
/// worker until it returns, as a rayon user's task would.
impl BlockingCall for RayonSched {
    fn call_blocking<R>(call: impl FnOnce() -> R) -> R {
        call()
    }
}

impl BlockingPrims for RayonSched {
    type Event = CondvarEvent;
    type Tickets = CondvarTicketQueue;
}
