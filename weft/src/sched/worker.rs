//! The worker loop: where a worker looks for its next task, how it searches other
//! queues, and how it falls asleep. It runs on a fiber (fiber.rs): a task that
//! waits for something (`join`, a `WaitGroup`...) suspends its fiber and
//! another fiber goes on with the loop. Where a wait cannot suspend (no
//! fibers on this target or seat, the pool's cap on suspended tasks reached)
//! the same loop serves the waiting task: it runs other tasks on top of it
//! until its condition holds, so workers that wait on queued tasks still do
//! not leave those tasks unrun.

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::sched::deque::{Steal, Stealer, Worker};

use crate::sched::barrier;
use crate::sched::context::WorkerGuard;
use crate::sched::counters::WorkerCounters;
use crate::sched::fiber::Fibers;
use crate::sched::job::JobRef;
use crate::sched::join_stack::JoinStack;
#[cfg(feature = "trace")]
use crate::sched::recorder::{self, EventKind};
use crate::sched::registry::{JobCounters, Registry, Seats, SharedQueue};
use crate::sched::sleep::{Idle, Wake};

/// How often (in tasks) a worker looks at the shared queues and the oldest end
/// of its own queue before its newest task, so that no queue starves under a
/// constant stream of local work. Prime, so it does not beat with task patterns.
/// Part of the documented task order (crate docs, "Task order"; the order
/// tests in tests/rayon_parity.rs model it): a change goes there too.
const FAIRNESS_INTERVAL: u32 = 61;

/// How many jobs in a row a worker may take from its `next` slot before the
/// slot's job goes behind the queued ones: two futures waking each other keep
/// the slot busy, and the queues must not wait on them for ever.
const MAX_NEXT_STREAK: u32 = 32;

/// How long a worker whose `join` half was stolen watches for that half's end
/// before it blocks (see [`WorkerThread::wait_for_stolen_half`]). About one
/// park-and-wake round trip (docs/TUNING.md): watching that long costs at
/// most as much CPU as the park would have cost in latency.
#[cfg(not(loom))]
const STOLEN_HALF_WATCH: Duration = Duration::from_micros(20);
/// Under loom a watch of real time would make the models' runs differ from
/// one exploration to the next; the watch only saves latency.
#[cfg(loom)]
const STOLEN_HALF_WATCH: Duration = Duration::ZERO;

/// How long a searcher asks the owner of a join stack to share its oldest
/// half before it takes the half itself (join_stack.rs). The owner answers
/// at its next `join`, nanoseconds away in fork-join code; a first half that
/// runs this long without joining again is a long one, and its second half
/// is worth the heavy barrier of a forced steal. About one wake-up
/// (docs/TUNING.md): the bound on how long a long first half can hold its
/// second half back from an idle worker.
#[cfg(not(loom))]
const ASK_BEFORE_STEALING: Duration = Duration::from_micros(20);
/// Under loom time barely moves: a searcher asks in its first sweep and
/// forces in the next, so the models explore both paths.
#[cfg(loom)]
const ASK_BEFORE_STEALING: Duration = Duration::ZERO;

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
    /// Jobs taken from `next` in a row (see [`MAX_NEXT_STREAK`]).
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
}

/// Ends a poll's mark on its worker (see [`WorkerThread::enter_poll`]).
pub(crate) struct PollGuard<'a> {
    worker: &'a WorkerThread,
    outer: bool,
}

impl Drop for PollGuard<'_> {
    fn drop(&mut self) {
        self.worker.polling.set(self.outer);
    }
}

/// One sweep's inputs and what it noticed besides the job it returns.
struct Sweep<'a> {
    /// Set when a steal lost a race (work was there).
    contended: &'a mut bool,
    /// Set when a join stack was asked to share (work is there).
    asked: &'a mut bool,
    /// Take one task per queue rather than a batch.
    single: bool,
    /// Steal join halves instead of asking for them.
    force: bool,
}

/// What a search ended with.
enum Search {
    Found(JobRef),
    /// The waiter's condition came true while searching.
    Done,
    /// Nothing found within the spin time.
    GaveUp,
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
        let join_stack: *const JoinStack = &registry.join_stacks[index];
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
        let stack = self.join_stack();
        while let Some(job) = stack.take_oldest() {
            self.publish(&self.local, job);
        }
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

    /// Pushes a job onto this worker's own queue, where thieves can take it.
    #[inline]
    pub(crate) fn push(&self, job: JobRef) {
        self.count_push();
        self.publish(&self.local, job);
    }

    /// As [`WorkerThread::push`], for a job not counted in the drain books:
    /// a stack job of `join` (see [`JobRef::run`]).
    #[inline]
    pub(crate) fn push_uncounted(&self, job: JobRef) {
        self.publish(&self.local, job);
    }

    #[inline(always)]
    fn join_stack(&self) -> &JoinStack {
        // SAFETY: the pointer is into `self.registry`'s boxed slice of join
        // stacks, which lives as long as the `Arc` this struct holds.
        unsafe { &*self.join_stack }
    }

    /// Leaves `join`'s second half on this seat's join stack (join_stack.rs),
    /// or, if the stack is full, on the local queue as an uncounted job.
    /// Returns its index on the join stack if it went there; [`pop_join`]
    /// then says whether it came back.
    ///
    /// # Safety
    /// `job` must come from `StackJob::as_job_ref`, with that contract.
    ///
    /// [`pop_join`]: WorkerThread::pop_join
    #[inline(always)]
    pub(crate) unsafe fn push_join(&self, job: JobRef) -> Option<usize> {
        let stack = self.join_stack();
        // SAFETY: forwarded from this function's contract; this is the
        // seat's thread, the stack's owner.
        match unsafe { stack.push(job) } {
            Ok(pushed) => {
                // A push onto a stack that holds older halves is covered
                // by the notify of the push that made it non-empty (sleep.rs,
                // rule covered-stack).
                if pushed.alone {
                    self.registry.sleep.notify_work();
                }
                if stack.take_request() {
                    self.share_oldest_half();
                }
                Some(pushed.index)
            }
            Err(job) => {
                self.push_uncounted(job);
                None
            }
        }
    }

    /// Takes back the half the caller pushed at `index` with [`push_join`].
    /// Returns false if it was taken: stolen, run by a wait of this
    /// worker's, or shared onto the local queue (where
    /// [`WorkerThread::pop`] may still find it).
    ///
    /// [`push_join`]: WorkerThread::push_join
    #[inline(always)]
    pub(crate) fn pop_join(&self, index: usize) -> bool {
        self.join_stack().pop(index)
    }

    /// A point where the running task can give work away (a parallel loop
    /// between two chunks of its items): answers a searcher's request for
    /// a join half as the next `join` would (join_stack.rs), so the
    /// searcher need not take it by force, and returns whether workers are
    /// searching with nothing of this worker's to take, in which case the
    /// caller may split off more.
    #[inline]
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) fn offer_work(&self) -> bool {
        let stack = self.join_stack();
        if stack.take_request() {
            self.share_oldest_half();
        }
        stack.is_empty() && self.local.is_empty() && self.registry.sleep.has_searchers()
    }

    /// A searcher asked for work: the oldest half of this seat's join stack
    /// (the largest, in divide-and-conquer) moves to the local queue, where
    /// thieves steal it without the heavy barrier of a forced steal.
    #[cold]
    #[inline(never)]
    fn share_oldest_half(&self) {
        if let Some(job) = self.join_stack().take_oldest() {
            WorkerCounters::add(&self.stats().halves_shared, 1);
            self.publish(&self.local, job);
        }
    }

    /// The one way this worker puts a job into one of its queues that others
    /// take from (`local` or `yielded`): the push, then the notify that the
    /// protocol pairs with every push (sleep.rs, invariant 1).
    #[inline(always)]
    fn publish(&self, queue: &Worker<JobRef>, job: JobRef) {
        queue.push(job);
        self.registry.sleep.notify_work();
    }

    /// Counts a job this worker queues in the drain books.
    #[inline]
    fn count_push(&self) {
        JobCounters::bump(&self.registry.counters[self.index].pushed);
    }

    /// Queues a job behind this worker's other work, oldest first among such
    /// jobs (see [`SeatQueues::yielded`]).
    pub(crate) fn push_yielded(&self, job: JobRef) {
        self.count_push();
        self.publish(&self.yielded, job);
    }

    /// Whether a job woken now may go to the `next` slot: a future's poll is
    /// running on this worker.
    pub(crate) fn is_polling(&self) -> bool {
        self.polling.get()
    }

    /// Marks the running job as a future's poll until the guard drops.
    pub(crate) fn enter_poll(&self) -> PollGuard<'_> {
        PollGuard {
            worker: self,
            outer: self.polling.replace(true),
        }
    }

    /// Puts a job woken by the running poll in the `next` slot. A job already
    /// there goes to the local queue, where thieves can take it.
    pub(crate) fn push_next(&self, job: JobRef) {
        self.count_push();
        if let Some(previous) = self.next.replace(Some(job)) {
            self.publish(&self.local, previous);
        }
    }

    /// Moves the `next` slot's job to the local queue, where thieves can take
    /// it: before this worker stops taking jobs for a while (a helping wait
    /// returns to its task, a blocking call begins).
    #[inline]
    pub(crate) fn flush_next(&self) {
        if let Some(job) = self.next.take() {
            self.publish(&self.local, job);
        }
    }

    /// Whether this seat holds work that only it takes without stealing:
    /// the `next` slot, its join stack, its local and yield queues (for
    /// `weft::current_thread_has_pending_tasks`). The queues' own emptiness
    /// checks, so a thief may empty one just after.
    pub(crate) fn has_local_work(&self) -> bool {
        let next = self.next.take();
        let has_next = next.is_some();
        self.next.set(next);
        has_next
            || !self.join_stack().is_empty()
            || !self.local.is_empty()
            || !self.yielded.is_empty()
    }

    /// Pops the newest job of this worker's own queue.
    #[inline]
    pub(crate) fn pop(&self) -> Option<JobRef> {
        self.local.pop()
    }

    /// Runs one job, sending a panic that escapes it to the pool's handler.
    pub(crate) fn execute(&self, job: JobRef) {
        // A job is not a poll until it says so (`enter_poll`); restored after,
        // for a job run by a wait inside a poll.
        let outer_polling = self.polling.replace(false);
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

    /// Runs tasks until `done()` holds. Used for the worker's whole life (with
    /// "the pool terminates" as the condition) and by every wait on a worker.
    pub(crate) fn wait_until(&self, done: &dyn Fn() -> bool) {
        self.wait_until_deadline(done, None);
    }

    /// As [`WorkerThread::wait_until`], for a `join` whose second half was
    /// stolen: that half is running on another worker right now, and its end
    /// is what this worker waits for. When this worker would park, it first
    /// watches for that end for up to [`STOLEN_HALF_WATCH`] (see
    /// [`WorkerThread::sleep_unless`]): at the tail of a fork-join tree two
    /// workers hand the work back and forth, and a park per hand-off would put
    /// a wake-up on the critical path each time.
    pub(crate) fn wait_for_stolen_half(&self, done: &dyn Fn() -> bool) {
        if self.fibers.suspend_until(self, done, None, true).is_none() {
            self.wait_loop(done, None, STOLEN_HALF_WATCH);
        }
    }

    /// As [`WorkerThread::wait_until`], giving up at `deadline`. Returns whether
    /// `done()` held.
    pub(crate) fn wait_until_deadline(
        &self,
        done: &dyn Fn() -> bool,
        deadline: Option<Instant>,
    ) -> bool {
        match self.fibers.suspend_until(self, done, deadline, false) {
            Some(held) => held,
            None => self.wait_loop(done, deadline, Duration::ZERO),
        }
    }

    /// The loop of every wait: own work first, then a search (if the protocol
    /// lets this worker search), then sleep; `watch` as in `sleep_unless`.
    fn wait_loop(
        &self,
        done: &dyn Fn() -> bool,
        deadline: Option<Instant>,
        watch: Duration,
    ) -> bool {
        if self.fibers.stack_nearly_full() {
            return self.wait_without_helping(done, deadline);
        }
        let sleep = &self.registry.sleep;
        let expired = || deadline.is_some_and(|deadline| Instant::now() >= deadline);
        // Whether this worker is counted in the protocol's `searching`.
        let mut searching = false;
        // Whether it was woken for a task it has not found yet (for the stats).
        let mut woken_for_work = false;
        loop {
            if done() || expired() {
                if searching {
                    sleep.end_search(|| self.registry.has_work_for(self.index));
                }
                // The caller goes back to its own task, which may run long.
                self.flush_next();
                return done();
            }
            if !searching {
                if let Some(job) = self.find_own_work() {
                    self.execute(job);
                    continue;
                }
                match sleep.begin_idle_with(self.index, self.registry.is_lingering()) {
                    Idle::Search => searching = true,
                    Idle::Registered => {
                        // Reasons of our own are checked after registering: their
                        // setters wake us only if they see us registered.
                        searching =
                            self.sleep_unless(done, deadline, watch, |this| this.has_pinned_work());
                        woken_for_work = searching;
                        continue;
                    }
                }
            }
            match self.search(done, deadline, woken_for_work) {
                Search::Found(job) => {
                    searching = false;
                    woken_for_work = false;
                    sleep.end_search(|| self.registry.has_work_for(self.index));
                    self.execute(job);
                }
                Search::Done => continue,
                Search::GaveUp => {
                    if woken_for_work {
                        WorkerCounters::add(&self.stats().wakeups_without_work, 1);
                    }
                    sleep.give_up_search(self.index);
                    // Rule give-up of the protocol: one more sweep after the RMW.
                    searching = self.sleep_unless(done, deadline, watch, |this| {
                        this.registry.has_work_for(this.index)
                    });
                    woken_for_work = searching;
                }
            }
        }
    }

    /// A wait whose fiber has too little stack left to run another task on
    /// top of it (fiber.rs, "Bounds"): the thread blocks until `done` or the
    /// deadline, looking at its condition at most a millisecond apart.
    ///
    /// It takes no part in the wake protocol meanwhile: to the protocol the
    /// worker is busy with the task it runs, as with any task that blocks its
    /// thread, so no wake is ever delivered to it for work it would refuse.
    /// Its condition is set by another thread, whose wake of this seat finds
    /// no sleeper and is lost; hence the polling, which only this rare state
    /// (fibers used up and helping nested deep) pays.
    #[cold]
    fn wait_without_helping(&self, done: &dyn Fn() -> bool, deadline: Option<Instant>) -> bool {
        self.flush_next();
        let mut pause = Duration::from_micros(20);
        loop {
            if done() {
                return true;
            }
            let now = Instant::now();
            if deadline.is_some_and(|deadline| now >= deadline) {
                return done();
            }
            let until_deadline = deadline.map_or(pause, |deadline| deadline - now);
            std::thread::park_timeout(pause.min(until_deadline));
            pause = (pause * 2).min(Duration::from_millis(1));
        }
    }

    /// Called registered as a sleeper: parks unless `done`, the deadline, the
    /// pool's end or `has_work` says not to. Returns whether the worker is now
    /// counted as a searcher.
    ///
    /// With a nonzero `watch`, a worker that finds no reason to stay awake
    /// first watches `done` for up to that long, still registered: a wake-up
    /// delivered meanwhile ends the watch at once (the park below then returns
    /// without blocking), so the protocol sees a sleeper that is merely slow
    /// to block. The look at the queues that the protocol's give-up rule asks
    /// for (`has_work`) comes before the watch, so work queued before the
    /// registration never waits for it; work queued after finds a registered
    /// sleeper and wakes one. The watch polls no queue, only its own
    /// condition and its own slot.
    fn sleep_unless(
        &self,
        done: &dyn Fn() -> bool,
        deadline: Option<Instant>,
        watch: Duration,
        has_work: impl FnOnce(&Self) -> bool,
    ) -> bool {
        let sleep = &self.registry.sleep;
        self.registry.terminate_if_drained();
        let expired = || deadline.is_some_and(|deadline| Instant::now() >= deadline);
        let stay_awake = done() || self.registry.is_terminating() || expired() || has_work(self);
        // A suspended task waits for a join half another worker runs: the
        // same watch as a helping `wait_for_stolen_half`'s (the loop's
        // condition includes the suspended fibers' resumption).
        let watch = if self.fibers.awaiting_halves() {
            watch.max(STOLEN_HALF_WATCH)
        } else {
            watch
        };
        // The park also ends at the earliest deadline of a suspended timed
        // wait, which the loop then expires (fiber.rs).
        let park_deadline = match (deadline, self.fibers.next_timer()) {
            (Some(own), Some(timer)) => Some(own.min(timer)),
            (own, timer) => own.or(timer),
        };
        if !stay_awake && !watch.is_zero() {
            self.watch_while_registered(done, watch);
        }
        let wake = if stay_awake || done() || expired() {
            sleep.cancel(self.index, &|| self.registry.has_work_for(self.index))
        } else {
            let stats = self.stats();
            WorkerCounters::add(&stats.parks, 1);
            trace_hook!(self.trace(EventKind::Park));
            let parked_at = Instant::now();
            let more_work = || self.registry.has_work_for(self.index);
            let wake = match park_deadline {
                None => Some(sleep.park(self.index, &more_work)),
                Some(deadline) => sleep.park_until(self.index, deadline, &more_work),
            };
            WorkerCounters::add(&stats.parked_ns, elapsed_ns(parked_at));
            trace_hook!(self.trace(EventKind::Wake));
            wake
        };
        if wake == Some(Wake::Searching) {
            WorkerCounters::add(&self.stats().wakeups, 1);
        }
        wake == Some(Wake::Searching)
    }

    /// Spins until `done` holds, a wake-up is delivered, or `watch` passes.
    fn watch_while_registered(&self, done: &dyn Fn() -> bool, watch: Duration) {
        let sleep = &self.registry.sleep;
        let started = Instant::now();
        while !done() && sleep.is_registered(self.index) && started.elapsed() < watch {
            // Yield rather than spin: with more workers than cores, the
            // worker running the awaited half may need this core. (A yield
            // may give the core away for a while, so the clock is read
            // every round.)
            crate::facade::thread::yield_now();
        }
    }

    /// Work this worker takes without searching: its own queues and the global one.
    fn find_own_work(&self) -> Option<JobRef> {
        if let Some(job) = self.take_next() {
            return Some(job);
        }
        let tick = self.tick.get().wrapping_add(1);
        self.tick.set(tick);
        if tick % FAIRNESS_INTERVAL == 0 {
            if let Some(job) = self.take_oldest_first() {
                return Some(job);
            }
        }
        self.take_seat_queues()
            .or_else(|| self.take_pinned_or_global())
    }

    /// The `next` slot's job, unless it has had its streak (then it goes
    /// behind the queued work).
    #[inline(always)]
    fn take_next(&self) -> Option<JobRef> {
        match self.next.take() {
            Some(job) if self.next_streak.get() < MAX_NEXT_STREAK => {
                self.next_streak.set(self.next_streak.get() + 1);
                return Some(job);
            }
            Some(job) => {
                self.next_streak.set(0);
                self.publish(&self.yielded, job);
            }
            None => self.next_streak.set(0),
        }
        None
    }

    /// The queues of this seat that others reach only by stealing: its join
    /// stack, its local queue, its yield queue.
    #[inline(always)]
    fn take_seat_queues(&self) -> Option<JobRef> {
        // A wait inside a `join`'s first half: the newest half is most
        // likely what it waits for (and on one worker, nobody else runs it).
        if let Some(job) = self.join_stack().pop_newest() {
            return Some(job);
        }
        if let Some(job) = self.local.pop() {
            return Some(job);
        }
        self.yielded.pop()
    }

    /// Runs one pending task, if this seat finds one, through [`execute`]
    /// like any other: for `weft::yield_now` (`local_only` false: the seat's
    /// own work in its usual order, then one sweep of the pool's other
    /// queues) and `weft::yield_local` (`local_only` true: the `next` slot,
    /// the seat's own queues and its pinned queue, never the global queue or
    /// another seat's). Returns whether it ran one.
    ///
    /// [`execute`]: WorkerThread::execute
    pub(crate) fn yield_once(&self, local_only: bool) -> bool {
        let job = if local_only {
            self.take_next()
                .or_else(|| self.take_seat_queues())
                .or_else(|| {
                    let pinned = self.registry.pinned_queue(self.index)?;
                    steal_from(|| pinned.steal())
                })
        } else {
            self.find_own_work().or_else(|| self.sweep_for_yield())
        };
        match job {
            Some(job) => {
                self.execute(job);
                true
            }
            None => false,
        }
    }

    /// One sweep of the other queues for a yield, taking one task, again
    /// only after a lost race (work was there). It never forces a join half
    /// out: a polling loop of yields would pay the heavy barrier every round,
    /// while asking gets the half shared at its owner's next `join`, where a
    /// later yield finds it.
    fn sweep_for_yield(&self) -> Option<JobRef> {
        loop {
            let mut contended = false;
            let mut asked = false;
            let found = self.sweep(Sweep {
                contended: &mut contended,
                asked: &mut asked,
                single: true,
                force: false,
            });
            if found.is_some() || !contended {
                return found;
            }
            std::hint::spin_loop();
        }
    }

    /// The shared queues a worker takes from without searching: its pinned
    /// queue, then a batch of the global queue.
    #[inline]
    fn take_pinned_or_global(&self) -> Option<JobRef> {
        for queue in self.registry.shared_queues(self.index, Seats::None) {
            let found = match queue {
                _ if queue.is_empty() => None,
                SharedQueue::Pinned(pinned) => steal_from(|| pinned.steal()),
                SharedQueue::Global(global) => {
                    self.batch_moved(steal_from(|| global.steal_batch_and_pop(&self.local)))
                }
                SharedQueue::Local { .. }
                | SharedQueue::Yielded { .. }
                | SharedQueue::Join { .. } => {
                    unreachable!("no seat's queues are visited with Seats::None")
                }
            };
            if found.is_some() {
                return found;
            }
        }
        None
    }

    /// After a batch of tasks was moved into this worker's local queue (one
    /// of them, `taken`, to run now): the rest landed in a queue others take
    /// from, which is a push like any other and needs its notify (invariant
    /// 1 of the protocol). While the batch was on its way no queue showed it,
    /// so a searcher may have given up in the meantime.
    #[inline]
    fn batch_moved(&self, taken: Option<JobRef>) -> Option<JobRef> {
        if taken.is_some() && !self.local.is_empty() {
            self.registry.sleep.notify_work();
        }
        taken
    }

    /// The fairness path: pinned, global, then the oldest job of our own queue.
    fn take_oldest_first(&self) -> Option<JobRef> {
        self.take_pinned_or_global()
            .or_else(|| self.yielded.pop())
            .or_else(|| steal_from(|| self.registry.stealers[self.index].steal()))
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

    /// After a half was taken from `stack` by force: the halves left behind
    /// are made known anew (sleep.rs, rule covered-stack). The heavy barrier
    /// pairs with the owner's look at `top` after a push: either the owner
    /// saw this steal (and notifies for its next push itself), or this look
    /// sees the push.
    #[cold]
    fn forced_out(&self, stack: &JoinStack) {
        barrier::heavy();
        if !stack.is_empty() {
            self.registry.sleep.notify_work();
        }
    }

    fn has_pinned_work(&self) -> bool {
        self.registry.pinned_queue(self.index).is_some()
    }

    /// Sweeps every queue this worker may take from until it finds a job, `done`
    /// holds, or the spin time passes with nothing found. A sweep that lost a
    /// race for a job (`Steal::Retry`) does not count towards giving up: work was
    /// there, so a thief beat us to it, and more may follow (marl's race).
    fn search(&self, done: &dyn Fn() -> bool, deadline: Option<Instant>, woken: bool) -> Search {
        trace_hook!(self.trace(EventKind::SearchStart));
        let started = Instant::now();
        let outcome = self.search_from(started, done, deadline, woken);
        WorkerCounters::add(&self.stats().searching_ns, elapsed_ns(started));
        trace_hook!(self.trace(EventKind::SearchEnd {
            found: matches!(outcome, Search::Found(_))
        }));
        outcome
    }

    fn search_from(
        &self,
        started: Instant,
        done: &dyn Fn() -> bool,
        deadline: Option<Instant>,
        woken: bool,
    ) -> Search {
        let spin = self.registry.spin_for(started);
        let mut first_sweep = true;
        // Whether this search has asked long enough (ASK_BEFORE_STEALING).
        let mut force = false;
        loop {
            let mut contended = false;
            let mut asked = false;
            let sweep = Sweep {
                contended: &mut contended,
                asked: &mut asked,
                single: woken && first_sweep,
                force,
            };
            if let Some(job) = self.sweep(sweep) {
                return Search::Found(job);
            }
            if done() {
                return Search::Done;
            }
            let now = Instant::now();
            if deadline.is_some_and(|deadline| now >= deadline) {
                return Search::Done;
            }
            let searched = now.duration_since(started);
            force = searched >= ASK_BEFORE_STEALING;
            // A closing pool is not worth spinning for: the searcher gives
            // up so that the drain check runs (a spin of an hour would
            // otherwise hold up the pool's drop for an hour). A search that
            // asked for a join half waits for the answer, or takes the half
            // (work is there, as with a lost race).
            let closed = self.registry.is_closed();
            let waits_for_half = asked && !closed;
            if !contended && !waits_for_half && (searched >= spin || closed) {
                return Search::GaveUp;
            }
            // A worker woken for a task that someone else took spins on only
            // within the bound on searchers (invariant 3 of the protocol).
            if woken
                && first_sweep
                && self
                    .registry
                    .sleep
                    .too_many_searching(self.registry.is_lingering())
            {
                return Search::GaveUp;
            }
            first_sweep = false;
            if waits_for_half {
                // The owner answers at its next join, which it reaches
                // sooner with this core if the two share one (more
                // workers than cores). std's yield even under loom: it has
                // no memory effect, and as a loom step it made the models
                // explore half as long again for nothing.
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
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

    /// One pass over the pinned queue, the global queue and every other worker's
    /// queue, starting at a random victim so thieves spread out.
    ///
    /// A worker woken for one task (`single`) takes one task per queue rather
    /// than half of it: during a fan-out the other woken workers are about to
    /// look in the same queue, and a batch moved here would only make them
    /// search further (and pin more epochs) to find it.
    fn sweep(&self, sweep: Sweep<'_>) -> Option<JobRef> {
        let Sweep {
            contended,
            asked,
            single,
            force,
        } = sweep;
        let mut attempt = |steal: Steal<JobRef>| match steal {
            Steal::Success(job) => Some(job),
            Steal::Retry => {
                *contended = true;
                None
            }
            Steal::Empty => None,
        };
        // Worker seats and the spare seats in use (see spares.rs).
        let first = self.next_random() as usize;
        let mut failed = 0;
        let mut found = None;
        for queue in self
            .registry
            .shared_queues(self.index, Seats::Others { first })
        {
            if queue.is_empty() {
                continue;
            }
            let (_victim, stealer) = match queue {
                SharedQueue::Pinned(pinned) => {
                    found = attempt(pinned.steal());
                    if found.is_some() {
                        break;
                    }
                    continue;
                }
                SharedQueue::Global(global) => {
                    found = if single {
                        attempt(global.steal())
                    } else {
                        self.batch_moved(attempt(global.steal_batch_and_pop(&self.local)))
                    };
                    if found.is_some() {
                        break;
                    }
                    continue;
                }
                SharedQueue::Join {
                    seat: _victim,
                    stack,
                } => {
                    if !force {
                        stack.request();
                        *asked = true;
                        continue;
                    }
                    found = attempt(stack.steal());
                    if found.is_some() {
                        self.forced_out(stack);
                        WorkerCounters::add(&self.stats().halves_forced, 1);
                        WorkerCounters::add(&self.stats().stolen, 1);
                        trace_hook!(self.trace(EventKind::Steal { from: _victim }));
                        break;
                    }
                    failed += 1;
                    continue;
                }
                SharedQueue::Local { seat, queue } | SharedQueue::Yielded { seat, queue } => {
                    (seat, queue)
                }
            };
            found = if single {
                attempt(stealer.steal())
            } else {
                self.batch_moved(attempt(stealer.steal_batch_and_pop(&self.local)))
            };
            if found.is_some() {
                WorkerCounters::add(&self.stats().stolen, 1);
                trace_hook!(self.trace(EventKind::Steal { from: _victim }));
                break;
            }
            failed += 1;
        }
        if failed > 0 {
            WorkerCounters::add(&self.stats().failed_steals, failed);
        }
        found
    }

    /// xorshift64*: cheap, private to the worker, good enough to pick victims.
    fn next_random(&self) -> u64 {
        let mut x = self.rng.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng.set(x);
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn elapsed_ns(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Retries a steal until it succeeds or finds the queue empty.
fn steal_from(mut steal: impl FnMut() -> Steal<JobRef>) -> Option<JobRef> {
    loop {
        match steal() {
            Steal::Success(job) => return Some(job),
            Steal::Empty => return None,
            Steal::Retry => std::hint::spin_loop(),
        }
    }
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
