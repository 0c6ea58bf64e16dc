//! How a pool is put together, and taken apart again when one of its
//! threads fails to start: the seats' queues, the registry over them, the
//! spare seats, one [`WorkerStart`] per worker for whoever starts its
//! thread, and the threads' exits that a pool's drop waits on.
//!
//! The API's builder validates what the user asked for and hands over a
//! [`PoolPlan`]; [`assemble`] does the rest. Starting a worker's thread is
//! the caller's (`std::thread`, or a user's spawn handler through the API's
//! `ThreadBuilder`): it gets each worker's [`WorkerStart`], which the thread
//! runs ([`WorkerStart::run`]) or which is given up unrun
//! ([`WorkerStart::abandon`]).
//!
//! Rollback: a start that fails (an error, a panic in the user's naming
//! closure or spawn handler, or a `WorkerStart` given up unrun although the
//! start reported success) closes the registry, waits for every worker
//! already started to leave its loop and joins the threads weft started,
//! spares included, before the error (or the panic) goes on to the caller:
//! a pool that failed to build leaves no thread behind. Its workers never
//! held a task, so closing drains at once.

use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle as ThreadHandle;
use std::time::Instant;

use crate::facade::{lock, wait};
use crate::sched::registry::{Hooks, Registry};
use crate::sched::spares::Spares;
use crate::sched::threads::ThreadSetup;
use crate::sched::worker::SeatQueues;

/// A pool as the builder validated it.
pub(crate) struct PoolPlan {
    pub(crate) workers: usize,
    /// Spare seats for `weft::blocking`, beyond the workers'.
    pub(crate) max_blocking: usize,
    pub(crate) max_spinning: usize,
    pub(crate) hooks: Hooks,
    pub(crate) setup: ThreadSetup,
    /// Whether each worker is pinned to a core (round robin).
    pub(crate) pin_workers: bool,
    /// Whether seat 0 is the calling thread's (`use_current_thread`).
    pub(crate) adopt_seat_0: bool,
    /// The process's cores as the build read them (registry.rs, `cores`).
    pub(crate) cores: usize,
}

/// A pool whose workers all started.
pub(crate) struct Assembled {
    pub(crate) registry: Arc<Registry>,
    /// The threads weft started itself (a spawn handler's are its own).
    pub(crate) threads: Vec<ThreadHandle<()>>,
    pub(crate) exits: Arc<ThreadExits>,
    /// Whether the calling thread holds seat 0.
    pub(crate) adopted: bool,
}

/// Why a worker did not start.
pub(crate) struct StartFailed {
    pub(crate) index: usize,
    pub(crate) source: io::Error,
}

/// What one worker's thread needs: run it there, or give it up unrun.
pub(crate) struct WorkerStart {
    registry: Arc<Registry>,
    index: usize,
    queues: SeatQueues,
    core: Option<core_affinity::CoreId>,
    /// The pool's thread setup, for the operating system's policy.
    setup: ThreadSetup,
    exits: Arc<ThreadExits>,
    /// Set if this was given up unrun, for `assemble` to tell.
    abandoned: Arc<AtomicBool>,
}

impl WorkerStart {
    /// Runs the worker on the calling thread until the pool has shut down.
    pub(crate) fn run(self) {
        struct Leave(Arc<ThreadExits>);
        impl Drop for Leave {
            fn drop(&mut self) {
                self.0.leave();
            }
        }
        let _leave = Leave(self.exits);
        // Counted here, not in `assemble`, so that a worker never run is
        // never counted: the pool cannot drain before this worker's start
        // hook has run (its count was taken before the thread could start),
        // so every start is counted before the pool can stop (registry.rs).
        self.registry.worker_started();
        if let Some(core) = self.core {
            core_affinity::set_for_current(core);
        }
        let _policy = self.setup.enter_policy();
        crate::sched::worker::run(self.registry, self.index, self.queues);
    }

    /// The worker never starts: its start hook's count is ended (the pool
    /// can then drain without it) and the pool no longer waits for it.
    pub(crate) fn abandon(self) {
        // Release: pairs with the Acquire in `assemble`, on the thread that
        // handed this out.
        self.abandoned.store(true, Ordering::Release);
        self.registry.start_hook_refused();
        // The books may balance now, with every worker parked: check, as a
        // refused push does (registry.rs, "Shutdown").
        self.registry.terminate_if_drained();
        self.exits.leave();
    }
}

/// Builds the pool `plan` describes, handing each worker but an adopted
/// seat 0 to `start` with its index and thread name; `start` returns the
/// thread's handle if weft is to join it. Rolls back on a failed start
/// (module docs) and returns that failure, or resumes a panic of `start` or
/// of the naming closure once rolled back.
pub(crate) fn assemble(
    plan: PoolPlan,
    start: &mut dyn FnMut(usize, String, WorkerStart) -> io::Result<Option<ThreadHandle<()>>>,
) -> Result<Assembled, StartFailed> {
    let PoolPlan {
        workers,
        max_blocking,
        max_spinning,
        hooks,
        setup,
        pin_workers,
        adopt_seat_0,
        cores,
    } = plan;
    // The workers' seats; the spare seats are made as their threads start
    // (registry.rs, `SpareSeat`).
    let mut locals = Vec::with_capacity(workers);
    let mut stealers = Vec::with_capacity(workers);
    let mut yield_stealers = Vec::with_capacity(workers);
    for _ in 0..workers {
        let (queues, stealer, yield_stealer) = SeatQueues::new();
        locals.push(queues);
        stealers.push(stealer);
        yield_stealers.push(yield_stealer);
    }
    let spares = Spares::new(workers, max_blocking, setup.clone());
    let registry = Arc::new(Registry::new(
        stealers,
        yield_stealers,
        workers,
        spares,
        max_spinning,
        hooks,
        cores,
    ));
    let core_ids = if pin_workers {
        core_affinity::get_core_ids().unwrap_or_default()
    } else {
        Vec::new()
    };
    let mut threads = Vec::with_capacity(workers);
    let exits = Arc::new(ThreadExits::default());
    let mut locals = locals.into_iter().enumerate();
    // Seat 0's queues, for the calling thread once the others started.
    let adopted = if adopt_seat_0 {
        locals.next().map(|(_, queues)| queues)
    } else {
        None
    };
    // The user's naming closure and spawn handler run in this loop: if
    // either panics, the workers already started are stopped and waited for
    // before the panic goes on to the caller, as on a failed start.
    let started = panic::catch_unwind(AssertUnwindSafe(|| {
        for (index, queues) in locals {
            let name = setup.name(index);
            let core = (!core_ids.is_empty()).then(|| core_ids[index % core_ids.len()]);
            let abandoned = Arc::new(AtomicBool::new(false));
            // Counted before the thread can start; a `WorkerStart` given up
            // unrun (a failed start drops it too, a panicking one while
            // unwinding, through the API's `ThreadBuilder`) ends both counts
            // itself.
            exits.enter();
            registry.count_start_hook();
            let worker = WorkerStart {
                registry: Arc::clone(&registry),
                index,
                queues,
                core,
                setup: setup.clone(),
                exits: Arc::clone(&exits),
                abandoned: Arc::clone(&abandoned),
            };
            match start(index, name, worker) {
                // Acquire: pairs with the Release of `abandon` on another
                // thread, which did not run the worker.
                Ok(_) if abandoned.load(Ordering::Acquire) => {
                    return Err(StartFailed {
                        index,
                        source: io::Error::other(
                            "the spawn handler returned Ok but dropped the ThreadBuilder without running it",
                        ),
                    });
                }
                Ok(handle) => threads.extend(handle),
                Err(source) => return Err(StartFailed { index, source }),
            }
        }
        Ok(())
    }));
    let failure = match started {
        Ok(Ok(())) => {
            let holder = adopted.is_some();
            if let Some(queues) = adopted {
                crate::sched::adopted::adopt(&registry, queues);
            }
            return Ok(Assembled {
                registry,
                threads,
                exits,
                adopted: holder,
            });
        }
        Ok(Err(failed)) => Ok(failed),
        Err(payload) => Err(payload),
    };
    // Stop the workers already started: the pool never held a task. Spares
    // a start hook's blocking call started are joined too.
    registry.close();
    exits.wait_all();
    for handle in threads {
        let _ = handle.join();
    }
    registry.spares.join();
    match failure {
        Ok(failed) => Err(failed),
        Err(payload) => panic::resume_unwind(payload),
    }
}

/// The worker threads of one pool still in their loop: a pool's drop and
/// `shutdown_timeout` wait on it, as they cannot join threads a spawn
/// handler started. Counted up before a thread starts, down as it leaves
/// [`WorkerStart::run`] (or as a `WorkerStart` is given up unrun).
#[derive(Default)]
pub(crate) struct ThreadExits {
    running: Mutex<usize>,
    all_out: Condvar,
}

impl ThreadExits {
    /// One more thread is about to start.
    pub(crate) fn enter(&self) {
        *lock(&self.running) += 1;
    }

    /// A thread left its loop (or will never start it).
    pub(crate) fn leave(&self) {
        let mut running = lock(&self.running);
        *running -= 1;
        if *running == 0 {
            self.all_out.notify_all();
        }
    }

    /// Waits until every thread has left.
    pub(crate) fn wait_all(&self) {
        self.wait(None);
    }

    /// Waits until every thread has left, or `deadline`; returns whether
    /// they all have.
    pub(crate) fn wait(&self, deadline: Option<Instant>) -> bool {
        let mut running = lock(&self.running);
        while *running > 0 {
            running = match deadline {
                None => wait(&self.all_out, running),
                Some(deadline) => {
                    let now = Instant::now();
                    if now >= deadline {
                        return false;
                    }
                    self.all_out
                        .wait_timeout(running, deadline - now)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
        }
        true
    }
}
