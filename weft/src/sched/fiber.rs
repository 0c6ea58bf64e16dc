//! Fibers: a task that waits suspends, not its worker.
//!
//! A worker runs its loop on a fiber, a stack of its own (`corosensei`'s
//! stackful coroutines), and tasks run on that stack as plain calls: a task
//! that never waits makes no switch and no allocation. When a task waits for
//! something that has not happened (a latch, a wait group, an event, a
//! ticket, a condition variable, a `join` half stolen by another worker), the
//! fiber it runs on *suspends*: control goes back to the worker thread's own
//! stack (the dispatcher, [`Fibers::run`]), which resumes another fiber to
//! go on running the worker loop: a resumable one first, else an idle one,
//! else a new one. When the wait is over, whoever ended it queues the fiber
//! on its seat's [`Resumable`] list and wakes the seat; the loop, between two
//! tasks, sees the list, gives way (its fiber becomes idle) and the
//! dispatcher resumes the waiting fiber, on the same thread, ahead of new
//! work. A suspended task's frames stay where they are: thread-locals and
//! `!Send` guards held across the wait stay sound.
//!
//! Why a waiting task must not run other tasks on top of itself (what weft
//! did before, and what it still does where fibers are unavailable): the
//! task run on top may wait for something only the task beneath will do
//! after its own wait, and the beneath one cannot return before the one on
//! top. A suspended fiber holds only its own task.
//!
//! Why `corosensei`: it switches in a few instructions with no system call,
//! allocates stacks with a guard page (an overflow faults instead of
//! overwriting memory), and unwinds panics across the switch; it is kept up
//! and covers x86_64 and AArch64 on Linux, macOS and Windows. Elsewhere, and
//! under loom and Miri (which cannot follow a stack switch), the `switch`
//! module below is a stand-in that never suspends, and waits help as before.
//!
//! # The wait's state machine
//!
//! Each fiber has a [`FiberCell`], the handle wakers hold, with one state:
//! `RUNNING` (the fiber runs, or is idle), `WAITING` (it is suspended, or
//! about to be, with no wake since), `NOTIFIED` (a wake came since it last
//! looked at its condition).
//!
//! - The fiber, inside a wait: looks at its condition; if false,
//!   compare-and-swaps `RUNNING -> WAITING` and suspends. If the swap finds
//!   `NOTIFIED` instead, a wake came since the look: it sets `RUNNING` and
//!   looks again rather than suspend. Resumed, it sets `RUNNING` and looks
//!   again (a resume may be spurious: waits always look again).
//! - A waker, after making the condition true: swaps in `NOTIFIED`; if it
//!   took `WAITING`, it queues the fiber on the seat's list, then wakes the
//!   seat's thread in any case (a wait that could not suspend, and helps
//!   instead, waits for that wake).
//!
//! **No lost wake.** The fiber's CAS and the waker's swap are read-modify-
//! writes of one variable, so one comes first. Waker first: the fiber's CAS
//! fails on `NOTIFIED` and it looks again, and the swap's Release pairs with
//! its Acquire, so the look sees the condition. Fiber first: the waker takes
//! `WAITING` and queues it.
//!
//! **Queued once per suspension, and only while suspended.** Only the CAS
//! of a fiber that then suspends with no further check writes `WAITING`,
//! and only the first waker's swap takes it. The fiber is in the
//! dispatcher's table before its id can be popped from the list: the list
//! is popped by the seat's own thread, which runs nothing else until the
//! fiber has switched out (the waker on another thread may queue it
//! earlier; the pop cannot happen earlier).
//!
//! **The seat hears of it.** The list's flag is set before the waker's
//! `wake_worker`, whose fence pairs with the sleeping worker's registration
//! as for any reason of a worker's own (sleep.rs, "Suspended tasks"); the
//! loop's condition includes the flag, and the worker looks at its
//! condition after registering.
//!
//! Timed waits (`wait_timeout`, `wait_deadline`) put their deadline on the
//! worker's timer list; the loop looks at the list between tasks and its
//! parks end at the earliest deadline, so no timer thread exists and an idle
//! pool with no timed wait parks without a timeout. An expired timer is a
//! wake by the seat itself.
//!
//! # Bounds
//!
//! A fiber's stack has [`Builder::stack_size`] bytes (default
//! [`DEFAULT_FIBER_STACK`]), reserved with `mmap` and committed page by page
//! as it is touched; the stacks of all pools draw on one budget for the
//! process (fiber_stack.rs). At most [`Builder::max_suspended`] tasks of a
//! pool are suspended at once; a wait beyond that, or one whose fiber cannot
//! be created, helps instead. Helping nests tasks on the fiber's stack, so a
//! helping wait that finds less than a quarter of its stack left runs no
//! more tasks: it blocks its thread until its condition holds (worker/wait.rs,
//! `wait_without_helping`), which turns what would be a stack overflow into
//! a worker lent to the wait. A worker keeps up to [`MAX_IDLE_FIBERS`] idle
//! fibers for reuse (none while more than half the process's budget of
//! stacks is in use) and frees the rest.
//!
//! [`Builder::stack_size`]: crate::Builder::stack_size
//! [`Builder::max_suspended`]: crate::Builder::max_suspended

// Without fibers (loom, Miri, other targets) only the wait's state machine
// is compiled, for loom's models: the rest is unused there.
#![cfg_attr(
    any(loom, miri, not(any(target_arch = "x86_64", target_arch = "aarch64"))),
    allow(dead_code)
)]

use std::collections::VecDeque;
use std::sync::Arc;

use crate::facade::{lock, AtomicBool, AtomicU8, AtomicUsize, Mutex, Ordering};
use crate::sched::registry::Registry;

pub(crate) use switch::Fibers;

/// Stack size of a fiber when the builder sets none: what the standard
/// library gives a thread, since every task runs on a fiber.
pub const DEFAULT_FIBER_STACK: usize = 2 * 1024 * 1024;

/// Tasks of one pool suspended at once, unless the builder says otherwise.
/// Each suspended task holds a fiber, and each fiber is two memory mappings
/// (the stack and its guard page): Linux allows 65,530 mappings per process
/// by default, which this leaves room for beside everything else.
pub const DEFAULT_MAX_SUSPENDED: usize = 16_384;

/// Idle fibers a worker keeps for reuse. Mapping and unmapping a stack
/// costs microseconds: with 16 kept, marl's event chain (512 tasks that all
/// suspend before the first is signalled) paid that on almost every hop,
/// 1.8 us a hop at 1 worker against 0.42 us with all kept (docs/FIBERS.md).
/// An idle fiber holds the pages its last task touched (about one) and its
/// reserved address space.
pub(crate) const MAX_IDLE_FIBERS: usize = 1024;

const RUNNING: u8 = 0;
const WAITING: u8 = 1;
const NOTIFIED: u8 = 2;

/// The user's settings for fibers, as the builder left them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FiberSettings {
    /// Whether waits may suspend at all (`Builder::fibers`).
    pub(crate) enabled: bool,
    pub(crate) stack_size: usize,
    pub(crate) max_suspended: usize,
}

impl Default for FiberSettings {
    fn default() -> FiberSettings {
        FiberSettings {
            enabled: true,
            stack_size: DEFAULT_FIBER_STACK,
            max_suspended: DEFAULT_MAX_SUSPENDED,
        }
    }
}

/// The pool-wide count of suspended tasks, against its cap.
pub(crate) struct SuspendBudget {
    suspended: AtomicUsize,
    max: usize,
}

impl SuspendBudget {
    pub(crate) fn new(max: usize) -> SuspendBudget {
        SuspendBudget {
            suspended: AtomicUsize::new(0),
            max,
        }
    }

    /// Takes one suspension if the cap allows. Relaxed: a count, read by no
    /// one for anything but the cap, which a race can only overshoot by the
    /// number of racing workers before the check below undoes it.
    pub(crate) fn reserve(&self) -> bool {
        if self.suspended.fetch_add(1, Ordering::Relaxed) < self.max {
            return true;
        }
        self.release();
        false
    }

    pub(crate) fn release(&self) {
        self.suspended.fetch_sub(1, Ordering::Relaxed);
    }

    /// Tasks suspended right now (for the stats).
    pub(crate) fn current(&self) -> usize {
        self.suspended.load(Ordering::Relaxed)
    }
}

/// One seat's list of suspended fibers whose wait is over, for the seat's
/// thread to resume. In the registry, where wakers on any thread reach it.
#[derive(Default)]
pub(crate) struct Resumable {
    ids: Mutex<VecDeque<usize>>,
    /// Whether `ids` may be non-empty: the worker loop's look between tasks,
    /// one load of a line written only when a wait ends.
    any: AtomicBool,
}

impl Resumable {
    fn push(&self, id: usize) {
        let mut ids = lock(&self.ids);
        ids.push_back(id);
        // Release: with the lock's, the id is there for whoever sees the
        // flag; the waker's `wake_worker` fences after this store.
        self.any.store(true, Ordering::Release);
    }

    /// Whether a suspended fiber of this seat may resume.
    #[inline]
    pub(crate) fn any(&self) -> bool {
        self.any.load(Ordering::Acquire)
    }

    /// The oldest fiber to resume, first come first resumed.
    pub(crate) fn pop(&self) -> Option<usize> {
        if !self.any() {
            return None;
        }
        let mut ids = lock(&self.ids);
        let id = ids.pop_front();
        if ids.is_empty() {
            // Relaxed: under the lock, which the next push takes.
            self.any.store(false, Ordering::Relaxed);
        }
        id
    }
}

/// The handle of one fiber that wakers hold (module docs, "The wait's state
/// machine"). It outlives the fiber if a waker still holds it: a late wake
/// then only leaves a `NOTIFIED` nobody reads, or a spurious resume of the
/// fiber's next wait, which looks again.
pub(crate) struct FiberCell {
    state: AtomicU8,
    /// The fiber's index among its worker's fibers.
    id: usize,
    seat: usize,
    registry: Arc<Registry>,
}

impl FiberCell {
    pub(crate) fn new(registry: Arc<Registry>, seat: usize, id: usize) -> FiberCell {
        FiberCell {
            state: AtomicU8::new(RUNNING),
            id,
            seat,
            registry,
        }
    }

    /// Ends a wait of the fiber's, after its condition was made true (or its
    /// deadline passed): queues it if it is suspended, then wakes its seat.
    pub(crate) fn wake(&self) {
        self.notify();
        self.registry.sleep.wake_worker(self.seat);
    }

    /// As [`FiberCell::wake`], without the seat's wake-up: for the seat's
    /// own thread, which is awake (an expired timer).
    pub(crate) fn notify(&self) {
        // AcqRel: Release passes the waker's writes (the condition) on to
        // the fiber's Acquire when it sets RUNNING again; Acquire because
        // the queueing below follows the suspension it observed.
        if self.state.swap(NOTIFIED, Ordering::AcqRel) == WAITING {
            self.registry.resumable(self.seat).push(self.id);
        }
    }

    /// The fiber, having found its condition false: whether it may suspend
    /// now (a waker will queue it). False means a wake came since it
    /// looked: it looks again instead.
    pub(crate) fn begin_wait(&self) -> bool {
        // AcqRel on success: ordered with the wakers' swaps (no lost wake).
        match self
            .state
            .compare_exchange(RUNNING, WAITING, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => true,
            Err(_) => {
                self.end_wait();
                false
            }
        }
    }

    /// The fiber, resumed or about to look again: back to `RUNNING`.
    /// AcqRel: a read-modify-write reads the last waker's `NOTIFIED`, so the
    /// fiber's next look sees that waker's condition.
    pub(crate) fn end_wait(&self) {
        self.state.swap(RUNNING, Ordering::AcqRel);
    }
}

#[cfg(all(
    not(loom),
    not(miri),
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod switch {
    //! The real fibers, over `corosensei`.

    use std::cell::{Cell, RefCell};
    use std::ptr;
    use std::sync::Arc;
    use std::time::Instant;

    use corosensei::stack::Stack as _;
    use corosensei::{Coroutine, CoroutineResult, Yielder};

    use super::{FiberCell, MAX_IDLE_FIBERS};
    use crate::sched::counters::WorkerCounters;
    use crate::sched::fiber_stack::{self, FiberStack};
    use crate::sched::worker::WorkerThread;

    /// What the dispatcher tells a fiber it resumes.
    enum Resume {
        Run,
        /// Return: the worker is leaving, or has idle fibers to spare.
        Exit,
    }

    /// What a fiber tells the dispatcher when it switches out.
    enum Switch {
        /// It gave way to a resumable fiber, and is idle in the worker loop.
        Idle,
        /// Its task waits (the fiber is in the wait's state machine).
        Suspended,
    }

    type Stack = Coroutine<Resume, Switch, (), FiberStack>;

    struct Fiber {
        stack: Stack,
        id: usize,
    }

    /// The worker loop a fiber runs: returns true when the worker is done
    /// for good, false when it gave way to a resumable fiber.
    pub(crate) type Phases = fn(&WorkerThread) -> bool;

    /// One worker's fibers, owned by its thread.
    pub(crate) struct Fibers {
        enabled: bool,
        stack_size: usize,
        /// The running fiber's yielder, null on the thread's own stack.
        yielder: Cell<*const Yielder<Resume, Switch>>,
        /// The running fiber's cell, null on the thread's own stack: read by
        /// every `join` (its latch names the fiber to wake).
        current: Cell<*const FiberCell>,
        /// Every fiber's cell, by id.
        cells: RefCell<Vec<Arc<FiberCell>>>,
        /// The lowest address of each fiber's stack, by id.
        floors: RefCell<Vec<usize>>,
        /// The running fiber's floor, 0 on the thread's own stack.
        floor: Cell<usize>,
        /// Suspended fibers by id (`None`: running, idle or freed).
        suspended: RefCell<Vec<Option<Fiber>>>,
        idle: RefCell<Vec<Fiber>>,
        /// Ids whose fiber was freed, for reuse with their cell.
        free_ids: RefCell<Vec<usize>>,
        /// Deadlines of suspended timed waits, with their fiber's id.
        timers: RefCell<Vec<(Instant, usize)>>,
        /// Suspended waits for a `join` half running on another worker.
        awaiting_halves: Cell<usize>,
        phases: Cell<Option<Phases>>,
    }

    impl Fibers {
        pub(crate) fn new(enabled: bool, stack_size: usize) -> Fibers {
            Fibers {
                enabled,
                stack_size,
                yielder: Cell::new(ptr::null()),
                current: Cell::new(ptr::null()),
                cells: RefCell::default(),
                floors: RefCell::default(),
                floor: Cell::new(0),
                suspended: RefCell::default(),
                idle: RefCell::default(),
                free_ids: RefCell::default(),
                timers: RefCell::default(),
                awaiting_halves: Cell::new(0),
                phases: Cell::new(None),
            }
        }

        /// Runs `phases` on fibers until it returns true. Returns false,
        /// without running it, if fibers are off or the first cannot be
        /// made: the caller then runs it on the thread's stack.
        pub(crate) fn run(&self, worker: &WorkerThread, phases: Phases) -> bool {
            if !self.enabled {
                return false;
            }
            self.phases.set(Some(phases));
            let Some(mut fiber) = self.new_fiber(worker) else {
                return false;
            };
            loop {
                match fiber.stack.resume(Resume::Run) {
                    CoroutineResult::Return(()) => break,
                    CoroutineResult::Yield(Switch::Idle) => self.keep_idle(fiber),
                    CoroutineResult::Yield(Switch::Suspended) => {
                        let id = fiber.id;
                        self.suspended.borrow_mut()[id] = Some(fiber);
                    }
                }
                fiber = self.next_to_run(worker);
            }
            // The pool has terminated, so no task is suspended (a suspended
            // task has not finished, and the pool drains first).
            for fiber in self.idle.take() {
                exit(fiber);
            }
            true
        }

        /// The fiber to resume next: a resumable one, else an idle one
        /// (whoever switched out left one: `ensure_idle`).
        fn next_to_run(&self, worker: &WorkerThread) -> Fiber {
            let resumable = worker.registry_arc().resumable(worker.index());
            while let Some(id) = resumable.pop() {
                if let Some(fiber) = self.suspended.borrow_mut()[id].take() {
                    return fiber;
                }
                debug_assert!(false, "fiber {id} queued while not suspended");
            }
            self.idle
                .borrow_mut()
                .pop()
                .expect("a fiber that switches out leaves an idle one")
        }

        fn keep_idle(&self, fiber: Fiber) {
            let mut idle = self.idle.borrow_mut();
            if idle.len() < MAX_IDLE_FIBERS && !fiber_stack::stacks_scarce() {
                idle.push(fiber);
                return;
            }
            drop(idle);
            self.free_ids.borrow_mut().push(fiber.id);
            exit(fiber);
        }

        /// A new fiber running the worker loop, or `None` if its stack
        /// cannot be mapped (the process's budget of stacks is spent, or
        /// the kernel refused: fiber_stack.rs).
        fn new_fiber(&self, worker: &WorkerThread) -> Option<Fiber> {
            let phases = self.phases.get()?;
            let stack = fiber_stack::new_stack(self.stack_size)?;
            let floor = stack.limit().get();
            WorkerCounters::add(&worker.stats().fibers_created, 1);
            let id = match self.free_ids.borrow_mut().pop() {
                Some(id) => {
                    self.floors.borrow_mut()[id] = floor;
                    id
                }
                None => {
                    let mut cells = self.cells.borrow_mut();
                    let id = cells.len();
                    let registry = Arc::clone(worker.registry_arc());
                    cells.push(Arc::new(FiberCell::new(registry, worker.index(), id)));
                    self.floors.borrow_mut().push(floor);
                    self.suspended.borrow_mut().push(None);
                    id
                }
            };
            let worker: *const WorkerThread = worker;
            let body = move |yielder: &Yielder<Resume, Switch>, _first: Resume| {
                // SAFETY: the worker lives on its thread's own stack in
                // `run_seat`, below the dispatcher that resumes this fiber,
                // which returns only after every fiber has finished.
                let worker = unsafe { &*worker };
                let fibers = worker.fibers();
                fibers.enter(yielder, id);
                loop {
                    if phases(worker) {
                        fibers.leave();
                        return;
                    }
                    fibers.leave();
                    match yielder.suspend(Switch::Idle) {
                        Resume::Run => fibers.enter(yielder, id),
                        Resume::Exit => return,
                    }
                }
            };
            Some(Fiber {
                stack: Coroutine::with_stack(stack, body),
                id,
            })
        }

        fn enter(&self, yielder: &Yielder<Resume, Switch>, id: usize) {
            self.yielder.set(yielder);
            self.current.set(Arc::as_ptr(&self.cells.borrow()[id]));
            let floor = self.floors.borrow()[id];
            self.floor.set(floor);
            // Where an overflow into its guard page is reported.
            #[cfg(target_os = "linux")]
            crate::sched::fiber_overflow::note_running_floor(floor);
        }

        fn leave(&self) {
            self.yielder.set(ptr::null());
            self.current.set(ptr::null());
            self.floor.set(0);
            #[cfg(target_os = "linux")]
            crate::sched::fiber_overflow::note_running_floor(0);
        }

        /// Whether the running fiber has used so much of its stack that a
        /// wait must not run another task on top of it (module docs,
        /// "Bounds"): less than a quarter of it is left. False on the
        /// thread's own stack, whose bounds weft does not track.
        pub(crate) fn stack_nearly_full(&self) -> bool {
            let floor = self.floor.get();
            if floor == 0 {
                return false;
            }
            let here = 0u8;
            let sp = ptr::addr_of!(here) as usize;
            sp.saturating_sub(floor) < self.stack_size / 4
        }

        /// The running fiber's cell, null off a fiber: for a latch that
        /// names its waiter (latch.rs). Valid while the fiber lives, which
        /// is as long as it waits.
        #[inline(always)]
        pub(crate) fn current_cell(&self) -> *const FiberCell {
            self.current.get()
        }

        /// The running fiber's cell, to hand to a waker.
        pub(crate) fn current_handle(&self) -> Option<Arc<FiberCell>> {
            let current = self.current.get();
            if current.is_null() {
                return None;
            }
            // SAFETY: a non-null `current` came from `Arc::as_ptr` of a cell
            // in `cells`, which holds it for the thread's life.
            unsafe {
                Arc::increment_strong_count(current);
                Some(Arc::from_raw(current))
            }
        }

        /// Whether a wait on this thread may suspend rather than help: it
        /// runs on a fiber, and is not part of an unwind (std's panic count
        /// is the thread's, and would follow the worker to other tasks).
        #[inline]
        pub(crate) fn can_suspend(&self) -> bool {
            !self.yielder.get().is_null() && !std::thread::panicking()
        }

        /// Suspends the running task until `done()` holds or `deadline`
        /// passes (module docs). Returns whether `done()` held, or `None`
        /// if this wait cannot suspend: the caller then helps. The caller
        /// registered the fiber's cell (or a latch naming it) with whatever
        /// makes `done()` true.
        pub(crate) fn suspend_until(
            &self,
            worker: &WorkerThread,
            done: &dyn Fn() -> bool,
            deadline: Option<Instant>,
            awaiting_half: bool,
        ) -> Option<bool> {
            if !self.can_suspend() {
                return None;
            }
            let budget = &worker.registry_arc().suspend_budget;
            if !budget.reserve() {
                return None;
            }
            // SAFETY: non-null (`can_suspend`): the yielder of the fiber
            // running this code, set by `enter` when it was last resumed,
            // and valid for as long as that fiber runs, which includes this
            // whole call (the fiber cannot finish inside one of its waits).
            let yielder = unsafe { &*self.yielder.get() };
            let cell = self.current.get();
            // SAFETY: non-null (`can_suspend`): the running fiber's cell,
            // held by `cells` for the thread's life.
            let cell = unsafe { &*cell };
            let id = cell.id;
            let outcome = loop {
                if done() {
                    break Some(true);
                }
                if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                    break Some(done());
                }
                if !self.ensure_idle(worker) {
                    break None;
                }
                if !cell.begin_wait() {
                    continue;
                }
                let polling = worker.before_suspend();
                if let Some(deadline) = deadline {
                    self.timers.borrow_mut().push((deadline, id));
                }
                if awaiting_half {
                    self.awaiting_halves.set(self.awaiting_halves.get() + 1);
                }
                self.leave();
                let resumed = yielder.suspend(Switch::Suspended);
                debug_assert!(
                    matches!(resumed, Resume::Run),
                    "a suspended task is resumed"
                );
                self.enter(yielder, id);
                cell.end_wait();
                if awaiting_half {
                    self.awaiting_halves.set(self.awaiting_halves.get() - 1);
                }
                if deadline.is_some() {
                    self.timers.borrow_mut().retain(|&(_, timer)| timer != id);
                }
                worker.after_resume(polling);
            };
            budget.release();
            outcome
        }

        /// Leaves an idle fiber for the dispatcher to run when this one
        /// suspends; false if none can be made.
        fn ensure_idle(&self, worker: &WorkerThread) -> bool {
            if !self.idle.borrow().is_empty() {
                return true;
            }
            match self.new_fiber(worker) {
                Some(fiber) => {
                    self.idle.borrow_mut().push(fiber);
                    true
                }
                None => false,
            }
        }

        /// The worker loop's look between tasks: expires due timers, then
        /// says whether a suspended fiber may resume (the loop then gives
        /// way).
        #[inline]
        pub(crate) fn should_give_way(&self, worker: &WorkerThread) -> bool {
            if self.yielder.get().is_null() {
                return false;
            }
            if !self.timers.borrow().is_empty() {
                self.expire_timers();
            }
            worker.registry_arc().resumable(worker.index()).any()
        }

        #[cold]
        fn expire_timers(&self) {
            let now = Instant::now();
            let cells = self.cells.borrow();
            self.timers.borrow_mut().retain(|&(deadline, id)| {
                if deadline > now {
                    return true;
                }
                cells[id].notify();
                false
            });
        }

        /// The earliest deadline of a suspended timed wait: a park ends there.
        pub(crate) fn next_timer(&self) -> Option<Instant> {
            self.timers
                .borrow()
                .iter()
                .map(|&(deadline, _)| deadline)
                .min()
        }

        /// Whether a suspended task waits for a `join` half running on
        /// another worker (the loop then watches before it parks).
        pub(crate) fn awaiting_halves(&self) -> bool {
            self.awaiting_halves.get() > 0
        }
    }

    /// Lets an idle fiber return, which frees its stack.
    fn exit(mut fiber: Fiber) {
        match fiber.stack.resume(Resume::Exit) {
            CoroutineResult::Return(()) => {}
            CoroutineResult::Yield(_) => unreachable!("an idle fiber told to exit returns"),
        }
    }
}

#[cfg(not(all(
    not(loom),
    not(miri),
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
mod switch {
    //! No fibers here (loom, Miri, or a target `corosensei` does not
    //! cover): nothing suspends, and every wait helps.

    use std::sync::Arc;
    use std::time::Instant;

    use super::FiberCell;
    use crate::sched::worker::WorkerThread;

    pub(crate) type Phases = fn(&WorkerThread) -> bool;

    pub(crate) struct Fibers;

    impl Fibers {
        pub(crate) fn new(_enabled: bool, _stack_size: usize) -> Fibers {
            Fibers
        }

        pub(crate) fn run(&self, _worker: &WorkerThread, _phases: Phases) -> bool {
            false
        }

        #[inline(always)]
        pub(crate) fn current_cell(&self) -> *const FiberCell {
            std::ptr::null()
        }

        pub(crate) fn current_handle(&self) -> Option<Arc<FiberCell>> {
            None
        }

        #[inline(always)]
        pub(crate) fn can_suspend(&self) -> bool {
            false
        }

        pub(crate) fn suspend_until(
            &self,
            _worker: &WorkerThread,
            _done: &dyn Fn() -> bool,
            _deadline: Option<Instant>,
            _awaiting_half: bool,
        ) -> Option<bool> {
            None
        }

        #[inline(always)]
        pub(crate) fn should_give_way(&self, _worker: &WorkerThread) -> bool {
            false
        }

        pub(crate) fn stack_nearly_full(&self) -> bool {
            false
        }

        pub(crate) fn next_timer(&self) -> Option<Instant> {
            None
        }

        pub(crate) fn awaiting_halves(&self) -> bool {
            false
        }
    }
}
