//! rayon adapter: `ThreadPool::spawn` for tasks, `current_thread_index` for
//! worker identity; rayon has no wait group, event or ticket queue, so the
//! std Mutex + Condvar equivalents stand in.

use super::blocking::{CondvarEvent, CondvarTicketQueue, CondvarWaitGroup};
use super::{BlockingPrims, Sched};

pub struct RayonSched(::rayon::ThreadPool);

impl RayonSched {
    pub fn pool(&self) -> &::rayon::ThreadPool {
        &self.0
    }
}

impl Sched for RayonSched {
    type WaitGroup = CondvarWaitGroup;

    fn build(workers: usize) -> Self {
        let pool = ::rayon::ThreadPoolBuilder::new()
            .num_threads(workers)
            .build()
            .expect("rayon pool");
        RayonSched(pool)
    }

    fn spawn<F: FnOnce() + Send + 'static>(&self, task: F) {
        self.0.spawn(task);
    }

    fn worker_index() -> Option<usize> {
        ::rayon::current_thread_index()
    }
}

impl BlockingPrims for RayonSched {
    type Event = CondvarEvent;
    type Tickets = CondvarTicketQueue;
}
