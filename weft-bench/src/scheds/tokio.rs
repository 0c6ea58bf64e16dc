//! tokio adapter: a multi-thread runtime with `workers` worker threads; a task
//! is the closure run inside `Runtime::spawn(async move { .. })`, as a tokio
//! user runs short CPU work. Scenarios whose tasks wait on each other use
//! tokio's own async primitives instead (see scenarios/marl.rs); the
//! submitting thread, outside the runtime, waits with the std condvar group.

use super::blocking::CondvarWaitGroup;
use super::{thread_slot, Sched};

pub struct TokioSched(::tokio::runtime::Runtime);

impl TokioSched {
    pub fn runtime(&self) -> &::tokio::runtime::Runtime {
        &self.0
    }
}

impl Sched for TokioSched {
    type WaitGroup = CondvarWaitGroup;

    fn build(workers: usize) -> Self {
        let rt = ::tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .build()
            .expect("tokio runtime");
        TokioSched(rt)
    }

    fn spawn<F: FnOnce() + Send + 'static>(&self, task: F) {
        // The JoinHandle is dropped: the task runs detached, like the others.
        drop(self.0.spawn(async move { task() }));
    }

    fn worker_index() -> Option<usize> {
        Some(thread_slot())
    }
}
