//! async-executor adapter (smol's executor): one `Executor` shared by
//! `workers` threads, each running `block_on(executor.run(shutdown))`, the
//! multi-threaded pattern its docs show. async-executor has no threads of its
//! own, so this adapter owns them; `shutdown` is the receiving end of an
//! async-channel that is closed (never sent on) when the adapter is dropped,
//! which ends every `run`.
//!
//! It is an async-only peer: the async/* scenarios use its futures, and the
//! closure-task scenarios list it as n/a (its `support` below). The `Sched`
//! impl exists so that the shared warm-up can start its threads' loops
//! before anything is timed.

use super::blocking::CondvarWaitGroup;
use super::{thread_slot, AsyncSched, Cap, GateLike, Lacking, Peer, Sched, Support};
use async_executor::Executor;
use std::future::Future;
use std::sync::Arc;
use std::thread::JoinHandle;

pub struct AsyncExecutorSched {
    executor: Arc<Executor<'static>>,
    /// Dropping it closes the channel every runner thread waits on.
    shutdown: Option<::async_channel::Sender<()>>,
    threads: Vec<JoinHandle<()>>,
}

impl Drop for AsyncExecutorSched {
    fn drop(&mut self) {
        drop(self.shutdown.take());
        // The bench leaks its pools, so this runs only where an adapter is
        // dropped from outside its own threads (a thread cannot join itself).
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

impl Peer for AsyncExecutorSched {
    type Tasks = Self;
    type Waits = Lacking;
    type Calls = Lacking;
    type Futures = Self;
    type Joins = Lacking;

    fn support(cap: Cap) -> Support {
        use Support::{Has, Lacks};
        match cap {
            Cap::Futures => Has("Executor::spawn + detach, futures_lite::future::block_on"),
            Cap::YieldNow => Has("futures_lite::future::yield_now"),
            Cap::WakeAll => Has("event_listener::Event listen, notify(all)"),
            Cap::ForkJoin => Lacks("no fork-join: runs futures only"),
            Cap::StandIn => Lacks(
                "no stand-in API: runs futures only; blocking calls go to another \
                 thread pool (blocking::unblock), not a stand-in for the worker",
            ),
            Cap::Floor => Lacks("a scheduler: the std row is the floor"),
            Cap::ParIter => Lacks("no parallel iterators: runs futures only"),
            Cap::ScopeSpawn => Lacks("no scope of closure tasks: runs futures only"),
            Cap::Spawn | Cap::WaitGroup | Cap::TaskEvent | Cap::TaskTicket | Cap::FreeingWaits => {
                Lacks("async only: runs futures, compared on the async/* scenarios")
            }
        }
    }
}

impl Sched for AsyncExecutorSched {
    type WaitGroup = CondvarWaitGroup;

    fn build(workers: usize) -> Self {
        let executor = Arc::new(Executor::new());
        let (shutdown, stop) = ::async_channel::bounded::<()>(1);
        let threads = (0..workers)
            .map(|i| {
                let (executor, stop) = (executor.clone(), stop.clone());
                std::thread::Builder::new()
                    .name(format!("async-executor-{i}"))
                    .spawn(move || {
                        // `recv` fails once the sender is dropped: that is the
                        // shutdown signal, so its result is not looked at.
                        let _ = ::futures_lite::future::block_on(executor.run(stop.recv()));
                    })
                    .expect("async-executor runner thread")
            })
            .collect();
        AsyncExecutorSched {
            executor,
            shutdown: Some(shutdown),
            threads,
        }
    }

    fn spawn<F: FnOnce() + Send + 'static>(&self, task: F) {
        self.executor.spawn(async move { task() }).detach();
    }

    fn worker_index() -> Option<usize> {
        Some(thread_slot())
    }
}

impl AsyncSched for AsyncExecutorSched {
    type Gate = Arc<::event_listener::Event>;

    fn spawn_detached<F: Future<Output = ()> + Send + 'static>(&self, future: F) {
        // A dropped `Task` cancels its future; `detach` lets it run, as a
        // dropped JoinHandle does on tokio and weft.
        self.executor.spawn(future).detach();
    }

    fn block_on<F: Future>(&self, future: F) -> F::Output {
        ::futures_lite::future::block_on(future)
    }

    fn yield_now() -> impl Future<Output = ()> + Send + 'static {
        ::futures_lite::future::yield_now()
    }
}

/// smol's own wake-many primitive (async-executor uses it inside): a listener
/// created before `notify` is released by it, polled or not.
impl GateLike for Arc<::event_listener::Event> {
    fn new() -> Self {
        Arc::new(::event_listener::Event::new())
    }

    fn wait(&self) -> impl Future<Output = ()> + Send + 'static {
        self.listen()
    }

    fn release(&self) {
        self.notify(usize::MAX);
    }
}
