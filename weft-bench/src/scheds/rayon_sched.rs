//! rayon adapter: `ThreadPool::spawn` for tasks, `current_thread_index` for
//! worker identity; rayon has no wait group, event or ticket queue, so the
//! std Mutex + Condvar equivalents stand in. Nor has it a stand-in for a
//! worker that blocks: blocking calls are made directly in the task.
//! `rayon::join` inside `ThreadPool::install`. Parallel iterators: rayon's
//! own `rayon::prelude`, on the global pool (scenarios/par.rs).

use super::blocking::{self, CondvarEvent, CondvarTicketQueue, CondvarWaitGroup};
use super::{installed_fork_join, BlockingCall, BlockingPrims, Cap, Lacking, Peer, Sched, Support};

pub struct RayonSched(rayon::ThreadPool);

impl Peer for RayonSched {
    type Tasks = Self;
    type Waits = Self;
    type Calls = Self;
    type Futures = Lacking;
    type Joins = Self;

    fn support(cap: Cap) -> Support {
        if cap == Cap::ParIter {
            return Support::Has(
                "rayon::prelude on the global pool (ThreadPoolBuilder::num_threads(n)\
                 .build_global()), called from the main thread",
            );
        }
        if cap == Cap::ScopeSpawn {
            return Support::Has("ThreadPool::scope, Scope::spawn");
        }
        let join = Support::Has("rayon::join inside ThreadPool::install");
        blocking::closure_pool(cap, "ThreadPool::spawn", join)
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

installed_fork_join!(RayonSched, rayon::ThreadPool, rayon::join);

impl BlockingPrims for RayonSched {
    type Event = CondvarEvent;
    type Tickets = CondvarTicketQueue;
}
