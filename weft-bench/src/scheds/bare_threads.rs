//! The `std` row: no scheduler at all, the machine's floor for scenarios made
//! of rounds of tasks handed to idle threads (fork-join, wake-up latency and
//! fan-out); n/a for the rest. `threads` OS threads are started up front, each
//! blocked on its own channel, and the submitter hands each thread its tasks
//! directly: no shared queue, no search, one wake-up per thread. What a pool
//! adds to such a round is its distance above this row.

use super::{Cap, Lacking, Peer, Support};
use std::sync::mpsc;

type Task = Box<dyn FnOnce() + Send>;

/// No role of a scheduler: the scenarios that have a floor row drive
/// [`BareThreads`] themselves.
impl Peer for BareThreads {
    type Tasks = Lacking;
    type Waits = Lacking;
    type Calls = Lacking;
    type Futures = Lacking;
    type Joins = Lacking;

    fn support(cap: Cap) -> Support {
        use Support::{Has, Lacks};
        match cap {
            Cap::Floor => Has(
                "floor, no scheduler: threads started up front, each blocked on its own \
                 channel, handed its tasks by the submitter directly",
            ),
            Cap::ForkJoin => Lacks("one OS thread per join does not fit millions of joins"),
            Cap::Futures | Cap::YieldNow | Cap::WakeAll => Lacks("no futures: no executor"),
            Cap::StandIn => Lacks("no pool: a thread per task has no worker to stand in for"),
            // par/* reaches the std row through Floor, and runs it sequentially.
            Cap::ParIter => Lacks("no pool: par/* runs the std row as sequential std::iter code"),
            Cap::ScopeSpawn => Lacks("no pool: std::thread::scope starts a thread per task"),
            Cap::Spawn | Cap::WaitGroup | Cap::TaskEvent | Cap::TaskTicket | Cap::FreeingWaits => {
                Lacks("no pool: one OS thread per task does not fit this many tasks")
            }
        }
    }
}

/// Pre-started threads, each with its own inbox of tasks.
pub struct BareThreads {
    inboxes: Vec<mpsc::Sender<Task>>,
}

impl BareThreads {
    /// Starts `threads` threads, each blocked on its empty inbox. They end
    /// when this is dropped.
    pub fn start(threads: usize) -> BareThreads {
        let inboxes = (0..threads)
            .map(|_| {
                let (inbox, tasks) = mpsc::channel::<Task>();
                std::thread::spawn(move || tasks.into_iter().for_each(|task| task()));
                inbox
            })
            .collect();
        BareThreads { inboxes }
    }

    /// Hands `task` to thread `thread`, to run after those handed to it before.
    pub fn run_on(&self, thread: usize, task: impl FnOnce() + Send + 'static) {
        self.inboxes[thread]
            .send(Box::new(task))
            .expect("a bare thread ended");
    }

    /// Runs `task` `per_thread` times on every thread (in turn on each) and
    /// waits until all have returned.
    pub fn run_round(&self, per_thread: usize, task: &std::sync::Arc<dyn Fn() + Send + Sync>) {
        let (done, finished) = mpsc::channel::<()>();
        for thread in 0..self.inboxes.len() {
            for _ in 0..per_thread {
                let (task, done) = (task.clone(), done.clone());
                self.run_on(thread, move || {
                    task();
                    done.send(()).unwrap();
                });
            }
        }
        for _ in 0..self.inboxes.len() * per_thread {
            finished.recv().unwrap();
        }
    }
}
