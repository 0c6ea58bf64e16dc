//! The worker loop: where a worker looks for its next task, how it searches other
//! queues, and how it falls asleep. It runs on a fiber (fiber.rs): a task that
//! waits for something (`join`, a `WaitGroup`...) suspends its fiber and
//! another fiber goes on with the loop. Where a wait cannot suspend (no
//! fibers on this target or seat, the pool's cap on suspended tasks reached)
//! the same loop serves the waiting task: it runs other tasks on top of it
//! until its condition holds, so workers that wait on queued tasks still do
//! not leave those tasks unrun.
//!
//! This file holds the worker's state, the loop and running a job; each of
//! the worker's other jobs is a file of its own, an `impl WorkerThread`
//! block apiece:
//!
//! * `own_queues.rs`: pushing where thieves see, and the order a worker
//!   takes its next task from its own queues and the shared ones;
//! * `next_slot.rs`: the futures' slot, a woken future run right after the
//!   poll that woke it;
//! * `join_owner.rs`: the owner's side of the seat's join stack, and what a
//!   running loop hands to searchers between its chunks (`offer_work`);
//! * `wait.rs`: a task's wait, the wait for a stolen half, and sleeping
//!   through the wake/park protocol (sleep.rs);
//! * `search.rs`: sweeping other queues, and when to take a half by force.

mod join_owner;
mod next_slot;
mod own_queues;
mod search;
mod wait;

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::sched::deque::{Stealer, Worker};

use crate::sched::context::WorkerGuard;
use crate::sched::counters::WorkerCounters;
use crate::sched::fiber::Fibers;
use crate::sched::job::JobRef;
use crate::sched::join_stack::JoinStack;
#[cfg(feature = "trace")]
use crate::sched::recorder::{self, EventKind};
use crate::sched::registry::{JobCounters, Registry};

/// The owner ends of one seat's queues.
pub(crate) struct SeatQueues {
    /// Newest first: `join`'s and `spawn`'s jobs.
    pub(crate) local: Worker<JobRef>,
    /// Oldest first: `spawn_fifo`'s tasks, and futures woken while being
    /// polled (by themselves, as `yield_async` does, or by another thread
    /// meanwhile). A separate queue so that they go behind the seat's other
    /// work instead of in front of it, without the contention of the global
    /// queue; thieves take from it like from `local`.
    pub(crate) yielded: Worker<JobRef>,
}

impl SeatQueues {
    /// A seat's queues, with their stealers (`local`'s, then `yielded`'s).
    pub(crate) fn new() -> (SeatQueues, Stealer<JobRef>, Stealer<JobRef>) {
        let queues = SeatQueues {
            local: Worker::new_lifo(),
            yielded: Worker::new_fifo(),
        };
        let (local, yielded) = (queues.local.stealer(), queues.yielded.stealer());
        (queues, local, yielded)
    }
}

/// A worker's private state, living on its thread's stack for the thread's life.
pub(crate) struct WorkerThread {
    local: Worker<JobRef>,
    yielded: Worker<JobRef>,
    /// A future woken by a poll running on this worker: it runs as soon as
    /// that poll returns, with no wake-up of another worker and no queue in
    /// between (a message passed from one future to the next). Only polls may
    /// fill it, because a poll returns promptly by the contract of `Future`;
    /// a task that may run long wakes into the queues, where thieves see it.
    next: Cell<Option<JobRef>>,
    /// Whether the job running on this worker right now is a future's poll.
    polling: Cell<bool>,
    /// Jobs taken from `next` in a row (see `MAX_NEXT_STREAK`, next_slot.rs).
    next_streak: Cell<u32>,
    index: usize,
    registry: Arc<Registry>,
    /// This seat's join stack, inside `registry` (which this struct keeps
    /// alive): cached, as `join` reaches it on every call.
    join_stack: *const JoinStack,
    tick: Cell<u32>,
    rng: Cell<u64>,
    /// The fibers this worker's loop and tasks run on.
    fibers: Fibers,
    /// Whether a fiber of this worker has started the stop hook: the loop
    /// may move from fiber to fiber, the hook runs once.
    stop_hook_started: Cell<bool>,
    /// Jobs this worker is running now, nested (a wait inside a job runs
    /// others): zero while the thread is between jobs, which is where the
    /// thread holding an adopted seat may shut its pool down (adopted.rs).
    /// Read only there: on a seat with fibers a suspended job stays counted.
    running: Cell<u32>,
    /// Whether a thread outside the loop holds this seat (adopted.rs).
    adopted: bool,
    /// Whether that thread still holds the pool's drain books open.
    holds_books: Cell<bool>,
    /// Whether the last join half of this seat's that did not come back
    /// through the join stack was run by another worker, and ran long
    /// (fork.rs, `reclaim_or_wait`): evidence that thieves take this seat's
    /// halves and gain by it, so the task's outermost half is shared at
    /// once even while no worker is idle (join_owner.rs,
    /// `thieves_may_come`).
    halves_taken: Cell<bool>,
    /// Whether the last join half of this seat's that another worker ran, since
    /// the job running now started, was over sooner than its hand-over costs
    /// (latch.rs, `SHORT_RUN`): the outermost half then stays on the join stack
    /// even while a worker is idle. Cleared as each job starts (`execute`; a
    /// job a wait runs inside a task clears it for the rest of that task too),
    /// so that a task is judged by its own halves: rayon's 1,000-item sums
    /// called one after another from outside, each its own task, took 1.4x
    /// rayon's time while the flag outlived them: the root half of each
    /// stayed on the join stack instead of going to the idle worker.
    halves_short: Cell<bool>,
}

impl WorkerThread {
    /// Seat `index`'s private state, for the thread about to hold it: one that
    /// runs the loop ([`run_seat`]), or the thread that built the pool and
    /// holds the seat outside the loop (`adopted`, adopted.rs).
    pub(crate) fn new(
        registry: Arc<Registry>,
        index: usize,
        queues: SeatQueues,
        adopted: bool,
    ) -> WorkerThread {
        let join_stack: *const JoinStack = registry.join_stack(index);
        // Spare seats (weft::blocking's stand-ins) come and go with their
        // loan, and a suspended fiber would tie one to its thread: their
        // tasks' waits help. So do an adopted seat's: its thread's stack is
        // its own program's, not a fiber of the loop.
        let fibers = Fibers::new(
            registry.hooks.fibers.enabled && index < registry.num_workers() && !adopted,
            registry.hooks.fibers.stack_size,
        );
        WorkerThread {
            local: queues.local,
            yielded: queues.yielded,
            next: Cell::new(None),
            polling: Cell::new(false),
            next_streak: Cell::new(0),
            index,
            join_stack,
            registry,
            tick: Cell::new(0),
            rng: Cell::new(
                0x9E37_79B9_7F4A_7C15 ^ (index as u64 + 1).wrapping_mul(0xBF58_476D_1CE4_E5B9),
            ),
            fibers,
            stop_hook_started: Cell::new(false),
            running: Cell::new(0),
            adopted,
            holds_books: Cell::new(adopted),
            halves_taken: Cell::new(false),
            halves_short: Cell::new(false),
        }
    }

    /// Whether a job is running on this worker now (see `running`).
    pub(crate) fn is_running_a_job(&self) -> bool {
        self.running.get() > 0
    }

    /// Whether a thread outside the loop holds this seat (adopted.rs).
    pub(crate) fn is_adopted(&self) -> bool {
        self.adopted
    }

    /// Ends an adopted seat's hold on the drain books; true the first time.
    pub(crate) fn release_hold(&self) -> bool {
        self.holds_books.replace(false)
    }

    /// Marks the stop hook as started on this seat; true the first time.
    pub(crate) fn start_stop_hook(&self) -> bool {
        !self.stop_hook_started.replace(true)
    }

    /// The loop's waits, for the thread holding an adopted seat as it
    /// shuts its pool down (adopted.rs): tasks until `done` or `deadline`,
    /// never suspending. Returns whether `done()` held.
    pub(crate) fn run_loop_until(
        &self,
        done: &dyn Fn() -> bool,
        deadline: Option<Instant>,
    ) -> bool {
        self.wait_loop(done, deadline, Duration::ZERO)
    }

    /// The worker running on this thread, if this thread is a worker (see
    /// context.rs).
    #[inline]
    pub(crate) fn current<'a>() -> Option<&'a WorkerThread> {
        crate::sched::context::current_worker()
    }

    /// This seat's index: a worker's (below `workers`) or a spare's.
    #[inline]
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    /// The index users see (`current_worker_index`): the worker's, or `None`
    /// on a spare thread of `weft::blocking`, which is no worker of its own
    /// (indexes stay below `workers()`, valid for `spawn_on`).
    #[inline]
    pub(crate) fn worker_index(&self) -> Option<usize> {
        (self.index < self.registry.num_workers()).then_some(self.index)
    }

    #[inline]
    pub(crate) fn registry_arc(&self) -> &Arc<Registry> {
        &self.registry
    }

    #[inline(always)]
    pub(crate) fn fibers(&self) -> &Fibers {
        &self.fibers
    }

    /// Before this worker's running task suspends (fiber.rs): its `join`
    /// halves still on the join stack move to the local queue, since the
    /// next fiber's joins push onto the same stack and must find it empty
    /// (join_stack.rs, invariant 3: the frames on a stack are nested), and
    /// the task's poll mark is put aside for the loop. Returns the mark, for
    /// [`WorkerThread::after_resume`].
    pub(crate) fn before_suspend(&self) -> bool {
        self.join_stack()
            .take_all(|job| self.publish(&self.local, job));
        WorkerCounters::add(&self.stats().suspensions, 1);
        self.polling.replace(false)
    }

    /// The suspended task resumes: its poll mark comes back.
    pub(crate) fn after_resume(&self, polling: bool) {
        self.polling.set(polling);
    }

    /// Whether this worker belongs to `registry`.
    pub(crate) fn is_in(&self, registry: &Registry) -> bool {
        ptr::eq(Arc::as_ptr(&self.registry), registry)
    }

    /// Runs one job, sending a panic that escapes it to the pool's handler.
    pub(crate) fn execute(&self, job: JobRef) {
        // A job is not a poll until it says so (`enter_poll`); restored after,
        // for a job run by a wait inside a poll.
        let outer_polling = self.polling.replace(false);
        // A new task's joins are judged by its own stolen halves.
        self.halves_short.set(false);
        self.running.set(self.running.get() + 1);
        trace_hook!(self.trace(EventKind::TaskStart { name: None }));
        // SAFETY: the job was just taken out of a queue or the `next` slot (or
        // popped back by its owner), so this is its only run.
        let counted = match panic::catch_unwind(AssertUnwindSafe(|| unsafe { job.run() })) {
            Ok(counted) => counted,
            Err(payload) => {
                self.registry.handle_panic(payload);
                // Only counted jobs unwind: stack jobs catch their closure's
                // panic and abort on any other (job.rs, `run_on_worker`).
                true
            }
        };
        self.polling.set(outer_polling);
        self.running.set(self.running.get() - 1);
        // Before the count, so a task counted in the stats has its end traced.
        trace_hook!(self.trace(EventKind::TaskEnd));
        if counted {
            JobCounters::bump(&self.registry.counters[self.index].executed);
        }
    }

    /// Called by a seat that leaves the worker loop for good, or for a long
    /// while (a spare going back to idle): it is no longer one of the working
    /// seats that notifiers count on to look at the queues before they sleep,
    /// so it makes that look now and passes on what it sees as a push would
    /// (spares.rs, "What it keeps of the protocol's invariants").
    pub(crate) fn hand_off(&self) {
        // Orders the look after this seat's last RMW on the protocol's state
        // (its give-up, cancel or end of search): the Dekker pairing of
        // invariant 1, with this look as the sweep.
        crate::facade::fence(crate::facade::Ordering::SeqCst);
        if self.registry.has_work_for(self.index) {
            self.registry.sleep.notify_work();
        }
    }

    /// Runs the pool's stop hook on this thread, as one of its tasks would
    /// run: what it spawns or wakes is queued and run before the pool
    /// terminates (registry.rs, "Shutdown").
    pub(crate) fn run_stop_hook(&self) {
        let registry = &*self.registry;
        run_hook(
            registry,
            registry.hooks.on_thread_stop.as_deref(),
            self.index,
        );
        registry.stop_hook_done();
    }

    pub(crate) fn stats(&self) -> &WorkerCounters {
        &self.registry.stats[self.index]
    }

    /// Records `kind` in this worker's trace ring, if the pool traces.
    #[cfg(feature = "trace")]
    #[inline]
    fn trace(&self, kind: EventKind) {
        recorder::record(&self.registry, self.index, kind);
    }
}

fn elapsed_ns(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// The body of a worker thread: tasks until the closed pool drains, the stop
/// hook, tasks until it drains again (registry.rs, "Shutdown").
pub(crate) fn run(registry: Arc<Registry>, index: usize, queues: SeatQueues) {
    let pool = Arc::clone(&registry);
    run_seat(registry, index, queues, |worker| {
        if !worker.fibers.run(worker, run_phases) {
            run_phases(worker);
        }
    });
    // Outside the worker context, as on the thread that drops a pool: the
    // futures' destructors may use weft.
    if pool.worker_exited() {
        pool.parked.abandon_waiting();
    }
}

/// The worker loop, on whichever fiber runs it (fiber.rs), or on the
/// thread's own stack where there are none: tasks until the closed pool
/// drains, the stop hook (once per worker), tasks until it drains again.
/// Returns true once the pool has terminated, false as soon as a suspended
/// fiber of this worker may resume: the fiber running this gives way to it,
/// and the next fiber to run the loop starts it over from the top, where
/// the phases already passed go by at once.
fn run_phases(worker: &WorkerThread) -> bool {
    let registry = &*worker.registry;
    let give_way = || worker.fibers.should_give_way(worker);
    // The loop's own waits: `wait_loop` rather than `wait_until`, which
    // would suspend.
    worker.wait_loop(
        &|| registry.is_stopping() || give_way(),
        None,
        Duration::ZERO,
    );
    if give_way() {
        return false;
    }
    if worker.start_stop_hook() {
        worker.run_stop_hook();
    }
    worker.wait_loop(
        &|| registry.is_terminating() || give_way(),
        None,
        Duration::ZERO,
    );
    !give_way()
}

/// Makes this thread the holder of seat `index` (a worker's, or a spare's: see
/// spares.rs) for the duration of `body`, after the pool's start hook.
/// `body` runs the stop hook itself ([`WorkerThread::run_stop_hook`]) when the
/// pool stops.
pub(crate) fn run_seat(
    registry: Arc<Registry>,
    index: usize,
    queues: SeatQueues,
    body: impl FnOnce(&WorkerThread),
) {
    let worker = WorkerThread::new(registry, index, queues, false);
    let _current = WorkerGuard::enter(&worker);
    let registry = &*worker.registry;
    run_hook(registry, registry.hooks.on_thread_start.as_deref(), index);
    // What the hook spawned is counted already: the pool may drain now.
    registry.start_hook_done();
    body(&worker);
}

/// Runs a start/stop hook; a panic in it goes to the panic handler rather than
/// killing the worker (a dead worker would strand its pinned tasks).
fn run_hook(registry: &Registry, hook: Option<&(dyn Fn(usize) + Send + Sync)>, index: usize) {
    if let Some(hook) = hook {
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| hook(index))) {
            registry.handle_panic(payload);
        }
    }
}
