//! The state one pool's workers share: the queues, the sleep protocol, the
//! counters that tell when a closed pool has drained, and the user's hooks.
//!
//! # Shutdown
//!
//! A pool ends in four phases, each entered once and never left:
//!
//! 1. **Running.** Everything is accepted.
//! 2. **Closed** (`Pool::drop` called [`Registry::close`]). Pushes from
//!    outside the pool are refused and hand their task back: `Handle::spawn`
//!    and `spawn_on` return `Err`, `install`/`broadcast` panic (they cannot be
//!    reached without a live `Pool`), and a future woken from a thread outside
//!    the pool is dropped, its handle reporting `Err`. Pushes made on behalf
//!    of a job still running in the pool are accepted, because that job keeps
//!    the pool from draining: `weft::spawn`, `join`, scope spawns (from any
//!    thread), wakes of futures from the pool's workers, and calls from a
//!    thread inside `weft::blocking` for one of the pool's workers. Queued
//!    work and whatever it spawns keeps running.
//! 3. **Stopping**, entered once the closed pool has *drained* (nothing queued
//!    or running, see [`Registry::is_drained`]). Every thread of the pool,
//!    workers and spare threads, runs its `on_thread_stop` hook, in the
//!    thread's own worker context: the hook's `weft::spawn`, `spawn_future`
//!    and wakes are accepted and run, on the workers still in the loop. No
//!    spare is lent any more (the spare threads run their own stop hooks and
//!    leave), so `weft::blocking` in a hook runs without a stand-in.
//! 4. **Terminating**, entered once every stop hook has returned and the pool
//!    has drained again. Workers leave the loop; the last worker out drops
//!    the futures still waiting for a wake (nothing can poll them any more:
//!    their handles report `Err`), whether `Pool::drop` runs outside the pool
//!    (it then joins every thread) or inside one of its own tasks (the
//!    threads then finish detached).
//!
//! **Dropping unstarted tasks.** `Pool::shutdown_timeout`, once its time is
//! up, sets [`Registry::discard_unstarted`]: from then on the closure tasks
//! queued through the API's spawns (api/task.rs) drop their closure instead
//! of calling it when a worker takes them. They still leave the queues the
//! way every job does, run as jobs and are counted as executed, so the drain
//! books and the phases above are the same as for any shutdown.
//!
//! `on_thread_start` hooks count as queued work from before the thread is
//! started until the hook returns, so a pool dropped right after `build` still
//! runs what the hooks spawn.
//!
//! **Why the last worker cannot park on unbalanced books.** Every event that
//! can make the books balance is followed, on the same thread, by the check
//! ([`Registry::terminate_if_drained`]): a job's end (its worker goes back to
//! the loop, whose every park starts with the check), a start hook's end
//! (likewise), a stop hook's end (likewise, or the spare leaving checks), and
//! a refused external push, which counts itself as pushed before it sees the
//! pool closed, and as refused after: between the two, a worker's check finds
//! the books one short, so the refusing thread makes the check itself once
//! its refusal is counted. Once closed and drained, nothing but a stop hook
//! can push again, so the check's answer cannot go stale.

use std::any::Any;
use std::sync::OnceLock;
use std::time::Duration;

use crossbeam_utils::CachePadded;

use crate::facade::{fence, lock, AtomicBool, AtomicU64, AtomicUsize, Mutex, Ordering};
use crate::sched::barrier;
use crate::sched::counters::WorkerCounters;
use crate::sched::deque::{Injector, Stealer};
use crate::sched::fiber::{FiberSettings, Resumable, SuspendBudget};
use crate::sched::job::JobRef;
use crate::sched::join_stack::JoinStack;
use crate::sched::parked::ParkedTasks;
use crate::sched::sleep::{Sleep, Wakes};
use crate::sched::spares::Spares;
use crate::sched::unwind::drop_payload;
use crate::sched::worker::SeatQueues;

pub(crate) type PanicHandler = Box<dyn Fn(Box<dyn Any + Send>) + Send + Sync>;
pub(crate) type ThreadHook = Box<dyn Fn(usize) + Send + Sync>;

/// Settings the workers read while running.
pub(crate) struct Hooks {
    pub(crate) spin: Duration,
    pub(crate) panic_handler: Option<PanicHandler>,
    pub(crate) on_thread_start: Option<ThreadHook>,
    pub(crate) on_thread_stop: Option<ThreadHook>,
    /// Whether and how waits suspend (fiber.rs).
    pub(crate) fibers: FiberSettings,
    /// The event recorder, when `Builder::trace` turned tracing on.
    #[cfg(feature = "trace")]
    pub(crate) trace: Option<crate::sched::recorder::Tracer>,
}

/// Counts of jobs pushed by and run on one worker. Each field has one writer
/// (the worker), so increments are plain load-then-store, not read-modify-writes.
#[derive(Default)]
pub(crate) struct JobCounters {
    pub(crate) pushed: AtomicU64,
    pub(crate) executed: AtomicU64,
}

impl JobCounters {
    /// Release: a drain check that sees this count also sees the jobs the
    /// counted work pushed before it (see [`Registry::is_drained`]).
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.store(counter.load(Ordering::Relaxed) + 1, Ordering::Release);
    }
}

/// One of the queues others may take from (see [`Registry::shared_queues`]).
pub(crate) enum SharedQueue<'a> {
    /// Worker `index`'s queue for `spawn_on`: only that worker takes from it.
    Pinned(&'a Injector<JobRef>),
    /// The global queue, for pushes from outside the pool.
    Global(&'a Injector<JobRef>),
    /// A seat's local queue (newest first for its owner), from the far end.
    Local {
        seat: usize,
        queue: &'a Stealer<JobRef>,
    },
    /// A seat's yield queue (`worker::SeatQueues::yielded`).
    Yielded {
        seat: usize,
        queue: &'a Stealer<JobRef>,
    },
    /// A seat's join stack: second halves of its `join`s, which a searcher
    /// asks the owner to share or, failing that, steals (join_stack.rs).
    Join { seat: usize, stack: &'a JoinStack },
}

impl SharedQueue<'_> {
    /// Whether the queue looks empty. Checked before any steal: a steal from
    /// a seat's queue pins crossbeam's epoch, which costs far more than two
    /// loads, and with many workers most queues a searcher passes are empty.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        match self {
            SharedQueue::Pinned(queue) | SharedQueue::Global(queue) => queue.is_empty(),
            SharedQueue::Local { queue, .. } | SharedQueue::Yielded { queue, .. } => {
                queue.is_empty()
            }
            SharedQueue::Join { stack, .. } => stack.is_empty(),
        }
    }
}

/// The queues of [`Registry::shared_queues`], in order.
pub(crate) struct SharedQueues<'a> {
    registry: &'a Registry,
    index: usize,
    stage: Stage,
    /// Seats whose queues are visited after the pinned and global ones.
    seat_count: usize,
    first: usize,
    skip: Option<usize>,
}

#[derive(Clone, Copy)]
enum Stage {
    Pinned,
    Global,
    /// The `offset`-th seat from `first`: its local queue, its yield queue,
    /// then its join stack.
    Seat {
        offset: usize,
        part: SeatPart,
    },
}

#[derive(Clone, Copy)]
enum SeatPart {
    Local,
    Yielded,
    Join,
}

impl<'a> Iterator for SharedQueues<'a> {
    type Item = SharedQueue<'a>;

    #[inline]
    fn next(&mut self) -> Option<SharedQueue<'a>> {
        let registry = self.registry;
        loop {
            match self.stage {
                Stage::Pinned => {
                    self.stage = Stage::Global;
                    if let Some(pinned) = registry.pinned.get(self.index) {
                        return Some(SharedQueue::Pinned(pinned));
                    }
                }
                Stage::Global => {
                    self.stage = Stage::Seat {
                        offset: 0,
                        part: SeatPart::Local,
                    };
                    return Some(SharedQueue::Global(&registry.injector));
                }
                Stage::Seat { offset, part } => {
                    if offset >= self.seat_count {
                        return None;
                    }
                    let seat = (self.first + offset) % self.seat_count;
                    let next_seat = Stage::Seat {
                        offset: offset + 1,
                        part: SeatPart::Local,
                    };
                    if Some(seat) == self.skip {
                        self.stage = next_seat;
                        continue;
                    }
                    let (next, queue) = match part {
                        SeatPart::Local => (
                            SeatPart::Yielded,
                            SharedQueue::Local {
                                seat,
                                queue: registry.stealer(seat),
                            },
                        ),
                        SeatPart::Yielded => (
                            SeatPart::Join,
                            SharedQueue::Yielded {
                                seat,
                                queue: registry.yield_stealer(seat),
                            },
                        ),
                        SeatPart::Join => {
                            self.stage = next_seat;
                            return Some(SharedQueue::Join {
                                seat,
                                stack: registry.join_stack(seat),
                            });
                        }
                    };
                    self.stage = Stage::Seat { offset, part: next };
                    return Some(queue);
                }
            }
        }
    }
}

/// What the registry keeps of one spare seat: what [`Registry`] keeps per
/// worker's seat. Made when the seat's thread first starts (spares.rs,
/// `start_spare`), not with the pool: a pool has
/// [`DEFAULT_MAX_BLOCKING`](crate::DEFAULT_MAX_BLOCKING) spare seats
/// unless told otherwise, most programs never start one, and making all
/// of them with the pool was 190 of a build's 211 page faults and about
/// 500 us of it on the 2-core VM (docs/TUNING.md, "What a pool's build
/// costs").
pub(crate) struct SpareSeat {
    stealer: Stealer<JobRef>,
    yield_stealer: Stealer<JobRef>,
    join_stack: JoinStack,
    resumable: Resumable,
}

/// Which seats' queues [`Registry::shared_queues`] visits after the pinned
/// and global ones.
#[derive(Clone, Copy)]
pub(crate) enum Seats {
    /// None: the seat's own queues it reads through their owner ends.
    None,
    /// Every seat in use but the caller's, from `first` round.
    Others { first: usize },
    /// Every seat in use, the caller's too.
    All,
}

/// The queues, counters and parking slots are per *seat*: the `workers`
/// workers' seats first, then the spare seats of `weft::blocking`
/// (spares.rs), which only threads standing in for a blocked worker use.
/// A seat's queues, join stack and resumable fibers are reached through
/// [`Registry::stealer`] and its siblings, which find a spare seat's in
/// its [`SpareSeat`].
pub(crate) struct Registry {
    pub(crate) injector: Injector<JobRef>,
    /// One per worker's seat: the seats' `local` queues...
    stealers: Box<[Stealer<JobRef>]>,
    /// ...and their `yielded` queues (see `worker::SeatQueues`)...
    yield_stealers: Box<[Stealer<JobRef>]>,
    /// ...and their join stacks, which the seat's thread owns...
    join_stacks: Box<[JoinStack]>,
    /// ...and their suspended fibers whose wait is over (fiber.rs), which
    /// wakers on any thread queue there.
    resumable: Box<[Resumable]>,
    /// The same four for each spare seat, made as the seat's thread first
    /// starts ([`Registry::make_spare_seat`]).
    spare_seats: Box<[OnceLock<Box<SpareSeat>>]>,
    /// Tasks suspended right now, against `Builder::max_suspended`.
    pub(crate) suspend_budget: SuspendBudget,
    /// One queue per worker for `spawn_on`: only its owner takes from it.
    pinned: Box<[Injector<JobRef>]>,
    pub(crate) spares: Spares,
    pub(crate) sleep: Sleep,
    pub(crate) counters: Box<[CachePadded<JobCounters>]>,
    pub(crate) stats: Box<[CachePadded<WorkerCounters>]>,
    /// Jobs pushed from threads outside the pool, and those refused after closing.
    external_pushed: CachePadded<AtomicU64>,
    external_refused: AtomicU64,
    /// Start hooks that returned (see [`Registry::count_start_hook`]).
    start_hooks_done: AtomicU64,
    closed: AtomicBool,
    stopping: AtomicBool,
    terminating: AtomicBool,
    /// Taken by whoever moves the pool to stopping (see the module docs).
    stop_decision: Mutex<()>,
    /// Stop hooks to run before the pool may terminate: one per thread of the
    /// pool, set as the pool enters stopping.
    stop_hooks_expected: AtomicUsize,
    stop_hooks_done: AtomicUsize,
    /// Worker threads that started their loop, and those that left: the last one
    /// out sweeps the parked futures.
    workers_started: AtomicUsize,
    workers_exited: AtomicUsize,
    /// Set by [`Registry::discard_unstarted`]; read by the API's closure
    /// tasks as they start (module docs, "Dropping unstarted tasks").
    discarding: AtomicBool,
    /// How many of those tasks dropped their closure instead of running it.
    discarded: AtomicU64,
    pub(crate) hooks: Hooks,
    /// Until when searchers keep searching past the spin time because a
    /// parallel loop just ran here (`Registry::linger`), as nanoseconds
    /// since `epoch`; 0 when no loop asked.
    linger_until: AtomicU64,
    /// Whether every worker can have a core of its own: only then does a
    /// `join` the pool took part in open a linger window
    /// (`linger_after_call`), and only then does a notifier make every wake
    /// itself (sleep.rs, invariant 2).
    workers_fit_cores: bool,
    /// How a thread outside the pool waits for its call
    /// (api/on_workers.rs, `wait_for_call`): see [`caller_wait`].
    caller_wait: CallerWait,
    epoch: std::time::Instant,
    /// This pool's futures that went pending, for the sweep when it is dropped.
    pub(crate) parked: ParkedTasks,
}

/// How long a pool's searchers keep searching after a parallel call from
/// outside it ended, or after a loop on a worker started to split
/// (`Registry::linger`): programs make such calls one after another, and
/// on the 2-core VM a worker woken from its park took 23 us to arrive, as
/// long as a 100k-element sum takes alone. Bounded, and only after such a
/// call: an idle pool still parks.
pub(crate) const LINGER_WINDOW: Duration = Duration::from_micros(50);

/// How long a call from outside must run for the worker that ran it to
/// be the first choice of wakes from outside (`Registry::outside_call_ran`).
pub(crate) const FAVOUR_AFTER_CALLS_OF: Duration = Duration::from_millis(1);

/// How much of a linger window may have run before [`Registry::linger`]
/// moves its end again: a quarter. So a call leaves the window open for
/// at least `LINGER_WINDOW` less this.
pub(crate) const LINGER_SLACK_NS: u64 = LINGER_WINDOW.as_nanos() as u64 / 4;

/// The cores this process may run on; also how many workers may search in
/// a linger window (sleep.rs, invariant 3). The next call needs that many
/// at once when its caller blocks (`join` from outside: rayon's parallel
/// iterators, through the rayon-core stand-in, make one per loop), and
/// where the caller folds beside the pool (weft's loops from outside:
/// iter/plumbing/outside.rs) the searcher beyond its helpers costs it
/// little, as a searcher in the window yields its core between sweeps
/// (worker/search.rs).
///
/// Read afresh at each call: a pool's build reads it once
/// (api/builder.rs) and hands it to all that depends on it, as the read
/// is system calls over the cgroup files (35 us on the 2-core VM, 85 us
/// the first time in a process, when a build read it three times: docs/TUNING.md,
/// "What a pool's build costs"). The first read also seeds
/// [`cores_read_once`].
pub(crate) fn cores() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    // Only the first read of the process is kept; later ones leave it.
    let _ = FIRST_READ_OF_CORES.set(cores);
    cores
}

/// The process's first read of [`cores`], for [`cores_read_once`].
static FIRST_READ_OF_CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

/// Whether every one of a pool's `workers` can have a core of its own,
/// given the process's `cores` ([`cores`]). Where not, a woken worker
/// preempts a running thread, which decides the pool's wakes (sleep.rs,
/// invariant 2), its linger after a `join` (`linger_after_call`) and its
/// threads' default policy (threads.rs, `batch_by_default`).
pub(crate) fn workers_fit_cores(workers: usize, cores: usize) -> bool {
    workers <= cores
}

/// How a thread outside a pool waits for its call (api/on_workers.rs,
/// `wait_for_call`, which also asks that its calls have been short).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CallerWait {
    /// Parks at once: on one core a spin could only delay the worker it
    /// waits for.
    Park,
    /// Spins, then parks: on the core the pool's workers leave it (fewer
    /// workers than cores), or beside workers that park as the call ends
    /// (more workers than cores: no linger window opens).
    Spin,
    /// Spins while its calls are short (api/on_workers.rs,
    /// `pause_before_yielding`), then yields its core between looks, then
    /// parks: the pool has a worker for each core, and after a call one of
    /// them searches on the caller's core in the linger window.
    SpinThenYield,
}

/// How a thread outside a pool of `workers` waits for its call, given the
/// process's `cores` ([`cores`]). A parked caller is woken by a futex
/// wake, which on the VMs this project measures on reaches a halted core
/// 10-25 us late, so on any machine of two cores or more the caller spins
/// first, however many workers the pool has: in a pool of as many workers
/// as cores or more, most of them are parked while a short call runs and
/// their cores halt, and rayon's `any` and `position_any` on weft took
/// 1.4-1.5x rayon's time at 8 workers on 2 cores while callers parked at
/// once there, 0.4-0.5x with the spin (docs/RAYON.md, "Session 33").
///
/// Where a pool has a worker for each core, the caller shares a core with
/// one of them, and a plain spin holds that core from it: rayon's 100k
/// sum on weft at 2 workers on 2 cores took 1.35x rayon's time, its
/// halves ending 14 us into the call and the caller back 16 us later. A
/// caller that parked there waited as long: the worker searching on its
/// core in the linger window kept the core, yielding or not (our reading:
/// the kernel's EEVDF queue puts a woken thread ahead only while its lag
/// is positive, which a caller's short bursts beside a busy thread do
/// not leave it). A caller that yields between looks stays runnable: it
/// gives the core to the worker while the worker has work, and takes it
/// back at the worker's first yield once the call ends (the caller back
/// 1.8 us after the halves; docs/RAYON.md, "Session 35"). In
/// a pool of more workers than cores no window opens, the workers park as
/// the call ends, and yielding made rayon's 1k and 10k sums on weft at 3
/// and 8 workers on 2 cores 1.1-1.3x slower with nothing gained on 100k.
pub(crate) fn caller_wait(workers: usize, cores: usize) -> CallerWait {
    if cores <= 1 {
        CallerWait::Park
    } else if workers == cores {
        CallerWait::SpinThenYield
    } else {
        CallerWait::Spin
    }
}

/// [`cores`] as first read in this process (by a pool's build, or here),
/// for a caller on a hot path (a loop from outside a pool asks at every
/// call, and the read is system calls); a pool reads [`cores`] afresh
/// when it is built.
#[cfg_attr(loom, allow(dead_code))]
pub(crate) fn cores_read_once() -> usize {
    // Two threads that both find it unset both read; the first to store wins.
    match FIRST_READ_OF_CORES.get() {
        Some(&cores) => cores,
        None => cores(),
    }
}

impl Registry {
    /// `stealers` and `yield_stealers` have one entry per worker's seat
    /// (`workers` of them); `spares` has the spare seats, made as their
    /// threads start. `cores` is [`cores`] as the build read it.
    pub(crate) fn new(
        stealers: Vec<Stealer<JobRef>>,
        yield_stealers: Vec<Stealer<JobRef>>,
        workers: usize,
        spares: Spares,
        max_searching: usize,
        hooks: Hooks,
        cores: usize,
    ) -> Registry {
        // Once a build: a seat past the workers' arrays is a spare's.
        assert_eq!(stealers.len(), workers);
        assert_eq!(yield_stealers.len(), workers);
        let seats = workers + spares.seats();
        let workers_fit_cores = workers_fit_cores(workers, cores);
        let mut sleep = Sleep::new(seats, max_searching).with_linger_searching(cores);
        // Invariant 2 of sleep.rs: wakes go out in a tree only where woken
        // workers would preempt running ones.
        sleep.set_wakes(if workers_fit_cores {
            Wakes::Direct
        } else {
            Wakes::Tree
        });
        // Where a woken worker may run before the caller's next turn only
        // on the CPU the caller blocks on (`outside_call_ran`).
        if !workers_fit_cores {
            sleep.favour_by_cpu();
        }
        // Before any thread of the pool starts (see barrier.rs).
        barrier::init();
        Registry {
            injector: Injector::new(),
            stealers: stealers.into_boxed_slice(),
            yield_stealers: yield_stealers.into_boxed_slice(),
            join_stacks: (0..workers).map(|_| JoinStack::new()).collect(),
            resumable: (0..workers).map(|_| Resumable::default()).collect(),
            spare_seats: (0..spares.seats()).map(|_| OnceLock::new()).collect(),
            suspend_budget: SuspendBudget::new(hooks.fibers.max_suspended),
            pinned: (0..workers).map(|_| Injector::new()).collect(),
            spares,
            sleep,
            counters: (0..seats).map(|_| CachePadded::default()).collect(),
            stats: (0..seats).map(|_| CachePadded::default()).collect(),
            external_pushed: CachePadded::new(AtomicU64::new(0)),
            external_refused: AtomicU64::new(0),
            start_hooks_done: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            stopping: AtomicBool::new(false),
            terminating: AtomicBool::new(false),
            stop_decision: Mutex::new(()),
            stop_hooks_expected: AtomicUsize::new(0),
            stop_hooks_done: AtomicUsize::new(0),
            workers_started: AtomicUsize::new(0),
            workers_exited: AtomicUsize::new(0),
            discarding: AtomicBool::new(false),
            discarded: AtomicU64::new(0),
            hooks,
            linger_until: AtomicU64::new(0),
            workers_fit_cores,
            caller_wait: caller_wait(workers, cores),
            epoch: std::time::Instant::now(),
            parked: ParkedTasks::default(),
        }
    }

    pub(crate) fn num_workers(&self) -> usize {
        self.pinned.len()
    }

    /// Seat `seat`'s `local` queue, as thieves see it.
    #[inline]
    pub(crate) fn stealer(&self, seat: usize) -> &Stealer<JobRef> {
        match self.stealers.get(seat) {
            Some(stealer) => stealer,
            None => &self.spare_seat(seat).stealer,
        }
    }

    /// Seat `seat`'s `yielded` queue, as thieves see it.
    #[inline]
    pub(crate) fn yield_stealer(&self, seat: usize) -> &Stealer<JobRef> {
        match self.yield_stealers.get(seat) {
            Some(stealer) => stealer,
            None => &self.spare_seat(seat).yield_stealer,
        }
    }

    /// Seat `seat`'s join stack.
    #[inline]
    pub(crate) fn join_stack(&self, seat: usize) -> &JoinStack {
        match self.join_stacks.get(seat) {
            Some(stack) => stack,
            None => &self.spare_seat(seat).join_stack,
        }
    }

    /// Seat `seat`'s suspended fibers whose wait is over (fiber.rs).
    #[inline]
    pub(crate) fn resumable(&self, seat: usize) -> &Resumable {
        match self.resumable.get(seat) {
            Some(resumable) => resumable,
            None => &self.spare_seat(seat).resumable,
        }
    }

    /// A spare seat made already: one below [`seats_in_use`], or one whose
    /// thread reached it (a seat is made before it counts as started,
    /// spares.rs, `start_spare`).
    ///
    /// [`seats_in_use`]: Registry::seats_in_use
    #[cold]
    fn spare_seat(&self, seat: usize) -> &SpareSeat {
        self.spare_seats[seat - self.num_workers()]
            .get()
            .expect("a spare seat is made before it counts as started")
    }

    /// Makes spare seat `seat` (`seat - num_workers()` must be the count of
    /// spare seats started so far, under the spares' lock) and returns the
    /// owner ends of its queues for its thread. What reads the seat's
    /// parts comes after: thieves see the seat only once `Spares::started`
    /// counts it (the Release there, after this), and its own thread
    /// starts after that.
    pub(crate) fn make_spare_seat(&self, seat: usize) -> SeatQueues {
        let (queues, stealer, yield_stealer) = SeatQueues::new();
        let made = self.spare_seats[seat - self.num_workers()].set(Box::new(SpareSeat {
            stealer,
            yield_stealer,
            join_stack: JoinStack::new(),
            resumable: Resumable::default(),
        }));
        assert!(made.is_ok(), "spare seat {seat} made twice");
        queues
    }

    /// Seats whose queues may hold tasks: every worker's, and the spare seats
    /// that have had a thread.
    pub(crate) fn seats_in_use(&self) -> usize {
        self.num_workers() + self.spares.started()
    }

    /// Worker `index`'s pinned queue, if it has one (spare seats do not) and
    /// it is not empty.
    pub(crate) fn pinned_queue(&self, index: usize) -> Option<&Injector<JobRef>> {
        self.pinned.get(index).filter(|queue| !queue.is_empty())
    }

    /// Pushes a job from outside the pool onto the global queue, unless the pool
    /// was closed; then the caller gets `item` back.
    pub(crate) fn inject<T>(&self, item: T, make_job: impl FnOnce(T) -> JobRef) -> Result<(), T> {
        if !self.reserve_external() {
            return Err(item);
        }
        self.push_global(make_job(item));
        Ok(())
    }

    /// Pushes a job from outside the pool on behalf of a job that is running
    /// in it (a scope's owner): accepted even once the pool is closed, since
    /// while that job runs the pool cannot have drained.
    pub(crate) fn inject_for_running_job(&self, job: JobRef) {
        // SeqCst: ordered against `is_drained` like `reserve_external`.
        self.external_pushed.fetch_add(1, Ordering::SeqCst);
        self.push_global(job);
    }

    /// The global-queue push of an external job already counted.
    fn push_global(&self, job: JobRef) {
        trace_hook!(crate::sched::recorder::record_inject(self, None));
        self.injector.push(job);
        self.sleep.notify_work();
    }

    /// Pushes a job that only worker `index` may run.
    pub(crate) fn inject_pinned<T>(
        &self,
        index: usize,
        item: T,
        make_job: impl FnOnce(T) -> JobRef,
    ) -> Result<(), T> {
        if !self.reserve_external() {
            return Err(item);
        }
        self.push_pinned(index, make_job(item));
        Ok(())
    }

    /// As [`Registry::inject_pinned`], on behalf of a job that is running in
    /// the pool (a broadcast from one of its threads): accepted even once the
    /// pool is closed, for the reason of [`Registry::inject_for_running_job`].
    pub(crate) fn inject_pinned_for_running_job(&self, index: usize, job: JobRef) {
        // SeqCst: ordered against `is_drained` like `reserve_external`.
        self.external_pushed.fetch_add(1, Ordering::SeqCst);
        self.push_pinned(index, job);
    }

    /// The pinned-queue push of an external job already counted.
    fn push_pinned(&self, index: usize, job: JobRef) {
        trace_hook!(crate::sched::recorder::record_inject(self, Some(index)));
        self.pinned[index].push(job);
        self.sleep.wake_worker(index);
    }

    /// Counts an external push before the closed check, so a drain check that
    /// misses the push also finds the pool closed for it (see `is_drained`).
    /// A thread inside `weft::blocking` for one of this pool's workers is let
    /// through: its task still runs, so the pool cannot have drained.
    /// Returns false, with the push counted as refused, once the pool is closed.
    fn reserve_external(&self) -> bool {
        // SeqCst on both: the count and the closed flag must be ordered against
        // `close` and `is_drained`, which use SeqCst too.
        self.external_pushed.fetch_add(1, Ordering::SeqCst);
        if self.closed.load(Ordering::SeqCst) && !crate::sched::context::is_blocked_in(self) {
            self.external_refused.fetch_add(1, Ordering::SeqCst);
            // A worker's drain check between our two counts found the books
            // one short and may have parked for good: now that they balance
            // again, check for it (module docs, "why the last worker...").
            self.terminate_if_drained();
            return false;
        }
        true
    }

    /// Counts a thread's `on_thread_start` hook as queued work, before the
    /// thread is started: the pool cannot drain before the hook has run (and
    /// counted whatever it spawned). The thread ends the count with
    /// [`Registry::start_hook_done`]; a thread that fails to start, with
    /// [`Registry::start_hook_refused`].
    pub(crate) fn count_start_hook(&self) {
        // SeqCst: ordered against `is_drained` like `reserve_external`.
        self.external_pushed.fetch_add(1, Ordering::SeqCst);
    }

    /// Ends the count of [`Registry::count_start_hook`], after the hook
    /// returned. (Not in the seat's `executed`, which the stats show as tasks.)
    pub(crate) fn start_hook_done(&self) {
        // SeqCst: ordered against `is_drained` like `external_refused`.
        self.start_hooks_done.fetch_add(1, Ordering::SeqCst);
    }

    /// Ends the count of [`Registry::count_start_hook`] for a thread that
    /// could not be started. No drain check follows, nor is one needed: a
    /// spare starts inside a running blocking call, which keeps the books
    /// open, and `build` closes the pool after this, which wakes every worker
    /// to check. (A spawn handler's worker given up after `build` returned,
    /// its `ThreadBuilder` dropped unrun, makes the check itself.)
    pub(crate) fn start_hook_refused(&self) {
        self.external_refused.fetch_add(1, Ordering::SeqCst);
    }

    /// Records that one more worker thread started its loop (counted by the
    /// thread itself, before its start hook, whose count was taken before
    /// the thread could start: so every start is counted before the pool
    /// can drain).
    pub(crate) fn worker_started(&self) {
        self.workers_started.fetch_add(1, Ordering::SeqCst);
    }

    /// Whether no worker thread has started its loop yet: the pool was
    /// built moments ago (or a spawn handler holds its threads back), and
    /// no call into it can begin. A hint for a caller's wait
    /// (api/on_workers.rs, `wait_for_call`), hence Relaxed: a stale count
    /// only makes it wait the other way.
    pub(crate) fn no_worker_started_yet(&self) -> bool {
        self.workers_started.load(Ordering::Relaxed) == 0
    }

    /// Records that a worker thread left its loop; true for the last one.
    pub(crate) fn worker_exited(&self) -> bool {
        // SeqCst: every start was counted before the pool could drain, hence
        // before any exit.
        self.workers_exited.fetch_add(1, Ordering::SeqCst) + 1
            == self.workers_started.load(Ordering::SeqCst)
    }

    /// A parallel call from outside the pool is ending here (a loop, or a
    /// `join`, which is how rayon's loops reach the pool), or a loop
    /// called on a worker has started to split (iter/plumbing/mod.rs, "On
    /// a worker"): programs make such calls one after another, and a
    /// worker that is still searching when the next one arrives takes it
    /// without the wake-up it would otherwise wait for. So for
    /// [`LINGER_WINDOW`] (at least three quarters of it, when a window
    /// already open had that much left) searchers keep searching past the
    /// spin time, and
    /// as many idle workers may search as there are cores (sleep.rs,
    /// invariant 3: for a bounded time, and only after such a call).
    pub(crate) fn linger(&self) {
        // Under loom no window opens (`is_lingering`): the models explore
        // the protocol with the bound that binds least, and the clock would
        // make their runs differ.
        if cfg!(loom) {
            return;
        }
        let until = self.epoch.elapsed().saturating_add(LINGER_WINDOW);
        let until = u64::try_from(until.as_nanos()).unwrap_or(u64::MAX);
        // Relaxed: a hint about how long to spin; no data rides on it. A
        // window that still has three quarters to run is left as it is:
        // joins whose halves were stolen end thousands of times a second
        // in fork-join code, and each read-modify-write would take the
        // line from every other worker's reads.
        if self.linger_until.load(Ordering::Relaxed) >= until - until.min(LINGER_SLACK_NS) {
            return;
        }
        self.linger_until.fetch_max(until, Ordering::Relaxed);
    }

    /// A call the pool took part in is ending: one from outside the pool
    /// (api/on_workers.rs, `install`, which `join`, `scope` and rayon's
    /// loops called from outside go through; its caller blocked on it), or
    /// a `join` on a worker whose
    /// second half another worker ran (sched/fork.rs), where the worker
    /// that ran the half calls this too as it hands the result back
    /// (latch.rs): it finishes before the join's owner does, and a window
    /// opened only by the owner would find it parked already (rayon's
    /// loop over 4 outer items of 100k at 2 workers on weft then started
    /// its second item 16-19 us into each call, 2-3 us after;
    /// docs/RAYON.md, "Session 30"); weft's own loops' pieces are such
    /// halves too (iter/plumbing, "On a worker"), and their loops open the
    /// window by this rule as well (api/global.rs, `linger_after_worker_loop`).
    /// Programs make such
    /// calls one after another: each of rayon's parallel loops is one
    /// (through the rayon-core stand-in: from outside a pool, or inside
    /// `install`, where a loop's pieces come back by stolen halves), so
    /// the pool lingers ([`Registry::linger`]) if its workers fit the
    /// cores, and the next loop's halves find a searcher instead of a
    /// parked worker to wake. In a pool of more workers than cores it does
    /// not: there the searchers that stay take part in the next call at
    /// once, the fan-out of its steals wakes the rest, and the call's
    /// threads share the cores; an early-exit search (rayon's `find_any` at
    /// 8 workers on 2 cores) then saw 2.1M items a call instead of 340k,
    /// for 4x the time (docs/RAYON.md).
    pub(crate) fn linger_after_call(&self) {
        if self.workers_fit_cores {
            self.linger();
        }
    }

    /// A call from outside ran on `worker` for `took`: where the call ran
    /// at least [`FAVOUR_AFTER_CALLS_OF`], wakes from outside (the next
    /// call's, and any spawn's or loop's from outside until then) take that
    /// worker first while it sleeps (sleep.rs, "Which sleeper a wake
    /// takes"); a shorter call clears the favourite, and they go by CPU
    /// alone until a call names one again. In a pool of more workers than
    /// cores both hold per CPU: a call names or clears the favourite of
    /// the CPU it ended on, and the others stay as their last calls left
    /// them.
    ///
    /// Why the length: the favourite may sleep on a CPU that halted, and
    /// such a CPU took 30-38 us at the median to run a thread woken there
    /// (docs/TUNING.md, "Which sleeper a wake takes"), where a worker on
    /// the caller's CPU runs as soon as the caller blocks. Against a call
    /// of a millisecond or more that median start is 4% at most, and what
    /// the favourite kept warm weighs more. That probe's tail (p99 1.8-2.3
    /// ms) did not show in the paired rows of long calls, whose spread
    /// narrowed with the favourite (docs/RAYON.md, "Session 41").
    ///
    /// In a pool of more workers than cores the CPU decides whether the
    /// woken worker runs at all before the caller's next turn, so there
    /// the favourite is kept per CPU and taken only on the caller's
    /// (`Sleep::favour_by_cpu`; where the CPU is unknown, as under Miri or
    /// off Linux, one favourite is kept and taken wherever it sleeps, as
    /// in a pool that fits the cores): a favourite taken anywhere made rayon's
    /// `find_any` at 8 workers on 2 cores 1.25-1.32x rayon's time against
    /// 1.12-1.15x, and none at all left `filter` + `collect` at 1.25-1.28x
    /// where the favourite per CPU reads 1.01x (docs/RAYON.md, "Session
    /// 45").
    pub(crate) fn outside_call_ran(&self, worker: usize, took: Duration) {
        let favourite = (took >= FAVOUR_AFTER_CALLS_OF).then_some(worker);
        self.sleep.favour_for_outside_wakes(favourite);
    }

    /// How a caller waits from outside ([`caller_wait`], for this pool
    /// on its machine).
    pub(crate) fn caller_wait(&self) -> CallerWait {
        self.caller_wait
    }

    /// Where the latest linger window ends, as nanoseconds since `epoch`
    /// (0: none opened yet), and how far `epoch` is behind now: for tests
    /// that a window opened, which cannot use `is_lingering` (a window
    /// ends on its own, and a loaded machine may let it end before the
    /// test looks).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn linger_end_and_now(&self) -> (u64, u64) {
        let now = u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX);
        (self.linger_until.load(Ordering::Relaxed), now)
    }

    /// Whether a linger window (`Registry::linger`) is open now: then the
    /// linger bound of searchers applies (sleep.rs, invariant 3). A clock
    /// read only in a pool that has run a parallel call from outside or a
    /// loop that split.
    pub(crate) fn is_lingering(&self) -> bool {
        // Under loom nothing opens a window (`linger` returns at once
        // there), and the load would be one more branch point of the models
        // on every idle step, enough to push the deepest past loom's limit.
        if cfg!(loom) {
            return false;
        }
        // Relaxed: as in `linger`.
        let until = self.linger_until.load(Ordering::Relaxed);
        until != 0 && u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX) < until
    }

    /// How long a search that started at `started` may spin: the pool's
    /// spin time, or until the end of a linger window (`Registry::linger`).
    pub(crate) fn spin_for(&self, started: std::time::Instant) -> Duration {
        let spin = self.hooks.spin;
        // Relaxed: as in `linger`.
        let until = self.linger_until.load(Ordering::Relaxed);
        if until == 0 {
            return spin;
        }
        let until = self.epoch + Duration::from_nanos(until);
        spin.max(until.saturating_duration_since(started))
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Stops intake from outside and makes sleeping workers look for the end.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.sleep.wake_all();
    }

    /// From now on, the API's closure tasks that have not started drop their
    /// closure instead of running it (module docs, "Dropping unstarted
    /// tasks"). Relaxed, with the loads: nothing is published through the
    /// flag, and a task that starts before its worker sees it simply runs.
    pub(crate) fn discard_unstarted(&self) {
        self.discarding.store(true, Ordering::Relaxed);
    }

    /// Whether [`Registry::discard_unstarted`] was called.
    #[inline]
    pub(crate) fn discards_unstarted(&self) -> bool {
        self.discarding.load(Ordering::Relaxed)
    }

    /// Counts a task that dropped its closure because of
    /// [`Registry::discard_unstarted`]. Relaxed: the count is read after the
    /// pool's threads are joined, which orders every increment before it.
    pub(crate) fn count_discarded(&self) {
        self.discarded.fetch_add(1, Ordering::Relaxed);
    }

    /// The count of [`Registry::count_discarded`].
    pub(crate) fn discarded(&self) -> u64 {
        self.discarded.load(Ordering::Relaxed)
    }

    pub(crate) fn is_terminating(&self) -> bool {
        // Acquire/Release suffice: a worker that misses the flag is about to
        // park, and `terminate_if_drained` sets it before `wake_all`, whose
        // sleepers lock every parking worker also takes (so a worker that
        // registers after `wake_all` sees the flag in `sleep_unless`).
        self.terminating.load(Ordering::Acquire)
    }

    /// Whether the pool has drained once after closing: its threads run their
    /// stop hooks (see the module docs). Acquire/Release as `is_terminating`,
    /// whose argument applies word for word.
    pub(crate) fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }

    /// Counts a stop hook that has returned (see the module docs). The caller
    /// then makes the drain check, through the worker loop or directly.
    pub(crate) fn stop_hook_done(&self) {
        // SeqCst: read by `terminate_if_drained` before the drain books, so
        // that everything the hook pushed is counted in what it reads.
        self.stop_hooks_done.fetch_add(1, Ordering::SeqCst);
    }

    /// The check that moves a closed pool on: called by a worker about to
    /// sleep, by a spare leaving the worker loop, and by a refused push. If
    /// no job is queued or running anywhere, a closed pool starts stopping;
    /// a stopping one whose stop hooks have all returned terminates.
    pub(crate) fn terminate_if_drained(&self) {
        if !self.is_closed() || self.is_terminating() {
            return;
        }
        if !self.is_stopping() {
            if self.is_drained() {
                self.begin_stopping();
            }
            return;
        }
        let hooks_done = self.stop_hooks_done.load(Ordering::SeqCst)
            == self.stop_hooks_expected.load(Ordering::SeqCst);
        if hooks_done && self.is_drained() {
            self.terminating.store(true, Ordering::Release);
            self.sleep.wake_all();
        }
    }

    /// Moves a closed, drained pool to stopping: no spare is lent any more,
    /// and every thread of the pool is told to run its stop hook.
    fn begin_stopping(&self) {
        let decided = lock(&self.stop_decision);
        if self.is_stopping() {
            return;
        }
        // After this no spare thread starts, so the count is final.
        let spare_threads = self.spares.shut_down();
        let workers = self.workers_started.load(Ordering::SeqCst);
        // SeqCst, and before `stopping`: whoever sees the pool stopping
        // compares against the final number.
        self.stop_hooks_expected
            .store(workers + spare_threads, Ordering::SeqCst);
        self.stopping.store(true, Ordering::Release);
        drop(decided);
        self.sleep.wake_all();
    }

    /// Whether every job ever pushed has finished. Executed counts are read
    /// first, pushed counts second; both only grow, and a job's push is counted
    /// before it can run, so equal sums mean that at some instant between the
    /// two passes nothing was queued or running. After that nothing can push
    /// again: pushes come from running jobs or from outside, refused once
    /// closed, or from stop hooks, which `terminate_if_drained` waits for.
    /// Stack jobs of `join` are left out of the books: they are pushed by a
    /// running counted job that cannot finish before them, so while one exists
    /// the books cannot balance anyway.
    fn is_drained(&self) -> bool {
        // The checker's half of a store-buffering pairing with whoever made
        // the books balance just before (a job's end, a refusal, a stop
        // hook's end): each bumps its count and then makes this check
        // itself. Of two such checks, the one whose fence comes second in the
        // SeqCst order sees the other's count, so the last event to balance
        // the books is seen by somebody's check. Only closed pools get here.
        fence(Ordering::SeqCst);
        let mut executed = self.external_refused.load(Ordering::SeqCst)
            + self.start_hooks_done.load(Ordering::SeqCst);
        for counters in self.counters.iter() {
            executed += counters.executed.load(Ordering::Acquire);
        }
        // Keeps the second pass after the first.
        fence(Ordering::SeqCst);
        let mut pushed = self.external_pushed.load(Ordering::SeqCst);
        for counters in self.counters.iter() {
            pushed += counters.pushed.load(Ordering::Acquire);
        }
        executed == pushed
    }

    /// The one definition of the queues seat `index` may take from that
    /// others may take from too (the protocol's "a queue", sleep.rs
    /// invariant 1), in the order a seat looks at them: its pinned queue (a
    /// worker's only), the global queue, then the local and yield queue of
    /// each seat in use (`seats`). The worker's own order, its search sweep
    /// and [`Registry::has_work_for`] all go through here, so none of them
    /// can leave out a queue that the others count on.
    #[inline]
    pub(crate) fn shared_queues(&self, index: usize, seats: Seats) -> SharedQueues<'_> {
        let in_use = self.seats_in_use();
        let (first, skip) = match seats {
            Seats::None => (0, None),
            Seats::Others { first } => (first % in_use, Some(index)),
            Seats::All => (0, None),
        };
        SharedQueues {
            registry: self,
            index,
            stage: Stage::Pinned,
            seat_count: if matches!(seats, Seats::None) {
                0
            } else {
                in_use
            },
            first,
            skip,
        }
    }

    /// Whether a job is visible anywhere worker `index` may take one from.
    pub(crate) fn has_work_for(&self, index: usize) -> bool {
        self.shared_queues(index, Seats::All)
            .any(|queue| !queue.is_empty())
    }

    pub(crate) fn handle_panic(&self, payload: Box<dyn Any + Send>) {
        match &self.hooks.panic_handler {
            Some(handler) => {
                // A panicking handler must not take the worker down with it.
                if let Err(nested) =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(payload)))
                {
                    eprintln!("weft: the panic handler panicked; the panic is dropped");
                    drop_payload(nested);
                }
            }
            None => {
                // The default: the panic message was already printed by the panic
                // hook; the worker lives on, even if the payload's destructor
                // panics too.
                drop_payload(payload);
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{Seats, SharedQueue};

    /// What `shared_queues` visits, as (kind, seat) pairs.
    fn visited(pool: &crate::Pool, index: usize, seats: Seats) -> Vec<(&'static str, usize)> {
        pool.registry()
            .shared_queues(index, seats)
            .map(|queue| match queue {
                SharedQueue::Pinned(_) => ("pinned", index),
                SharedQueue::Global(_) => ("global", 0),
                SharedQueue::Local { seat, .. } => ("local", seat),
                SharedQueue::Yielded { seat, .. } => ("yielded", seat),
                SharedQueue::Join { seat, .. } => ("join", seat),
            })
            .collect()
    }

    #[test]
    fn the_shared_queues_are_each_visited_once_in_the_documented_order() {
        let pool = crate::Pool::builder()
            .workers(3)
            .max_blocking(0)
            .build()
            .unwrap();
        assert_eq!(
            visited(&pool, 1, Seats::None),
            [("pinned", 1), ("global", 0)]
        );
        // A sweep from worker 1 starting at seat 5 % 3 = 2 skips its own seat.
        assert_eq!(
            visited(&pool, 1, Seats::Others { first: 5 }),
            [
                ("pinned", 1),
                ("global", 0),
                ("local", 2),
                ("yielded", 2),
                ("join", 2),
                ("local", 0),
                ("yielded", 0),
                ("join", 0),
            ]
        );
        let all = visited(&pool, 0, Seats::All);
        assert_eq!(all.len(), 2 + 3 * 3);
        for seat in 0..3 {
            for kind in ["local", "yielded", "join"] {
                assert!(all.contains(&(kind, seat)));
            }
        }
    }

    /// A pool makes no spare seat until a blocking call starts its thread;
    /// then that seat alone is made, and sweeps visit its queues.
    #[test]
    fn a_spare_seat_is_made_when_its_thread_first_starts() {
        let pool = crate::Pool::builder()
            .workers(1)
            .max_blocking(2)
            .build()
            .unwrap();
        let registry = std::sync::Arc::clone(pool.registry());
        let made = move || {
            let made: Vec<bool> = registry
                .spare_seats
                .iter()
                .map(|seat| seat.get().is_some())
                .collect();
            (made, registry.seats_in_use())
        };
        assert_eq!(made(), (vec![false, false], 1));
        let (made_while_blocking, swept) = pool.install(|| crate::blocking(&made));
        assert_eq!(made_while_blocking, [true, false]);
        assert_eq!(swept, 2);
        let all = visited(&pool, 0, Seats::All);
        for kind in ["local", "yielded", "join"] {
            assert!(all.contains(&(kind, 1)), "{kind} of spare seat 1: {all:?}");
        }
        assert!(!all.iter().any(|&(_, seat)| seat == 2));
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "pools of real threads and a thousand calls: covered natively"
    )]
    fn a_long_call_from_outside_makes_its_worker_the_favourite() {
        let pool = crate::Pool::builder()
            .workers(super::cores().min(2))
            .build()
            .unwrap();
        let favourite = || pool.registry().sleep.outside_favourites();
        assert_eq!(favourite(), []);
        let ran_on = pool.install(|| {
            std::thread::sleep(super::FAVOUR_AFTER_CALLS_OF);
            crate::current_thread_index()
        });
        let ran_on = ran_on.expect("install runs on a worker");
        assert_eq!(favourite(), [ran_on], "the worker that ran the call");
        // A short call names none. An empty call could still be stopped
        // for a millisecond on a loaded machine: one of many is short.
        for _ in 0..1_000 {
            pool.install(|| ());
            if favourite().is_empty() {
                break;
            }
        }
        assert_eq!(favourite(), []);
        // More workers than cores: a favourite for the CPU the call ended
        // on, among others' (sleep.rs tests which one a wake takes).
        let crowded = crate::Pool::builder()
            .workers(super::cores() + 1)
            .build()
            .unwrap();
        let ran_on = crowded.install(|| {
            std::thread::sleep(super::FAVOUR_AFTER_CALLS_OF);
            crate::current_thread_index()
        });
        let ran_on = ran_on.expect("install runs on a worker");
        assert!(
            crowded
                .registry()
                .sleep
                .outside_favourites()
                .contains(&ran_on),
            "the worker that ran the call is a favourite"
        );
    }

    #[test]
    fn has_work_for_sees_pinned_and_global_tasks() {
        let pool = crate::Pool::builder().workers(1).build().unwrap();
        let registry = pool.registry();
        assert!(!registry.has_work_for(0));
        // A pinned task on a worker that is busy: visible while it waits.
        let (release, gate) = std::sync::mpsc::channel::<()>();
        let (started, running) = std::sync::mpsc::channel();
        pool.spawn(move || {
            started.send(()).unwrap();
            gate.recv().unwrap();
        });
        running.recv().unwrap();
        pool.spawn_on(0, || ());
        assert!(registry.has_work_for(0));
        pool.spawn(|| ());
        assert!(registry.has_work_for(0));
        release.send(()).unwrap();
    }
}
