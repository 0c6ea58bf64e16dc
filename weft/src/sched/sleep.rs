//! The wake/park protocol: which idle worker searches for work, which one parks,
//! and whom a new task wakes.
//!
//! # Roles
//!
//! A worker is at any moment *working* (running a task or looking only at its own
//! queue), *searching* (sweeping every queue it may take from, for at most the
//! pool's spin time), or *sleeping* (registered in the sleepers list, then blocked on
//! its own slot). One word, `state`, counts five things:
//!
//! * `searching` — searching workers, including those woken to search;
//! * `unclaimed` — searchers that no new task has counted on yet (see fan-out);
//! * `sleeping` — registered sleepers; always equal to `sleepers.len()`, because both
//!   change together under the `sleepers` lock;
//! * `owed` — wakes that notifiers left to woken workers in flight (see fan-out);
//!   never more than `sleeping`, and always 0 with direct wakes;
//! * `in_flight` — workers woken to search that have not yet made those wakes.
//!
//! # How each step moves the counters
//!
//! Every change is one RMW on `state` (`Sleep::update`); a change of
//! `sleeping` happens under the `sleepers` lock, with the list itself.
//! "Clamped" means `unclaimed` is cut to `searching`, or `owed` to
//! `sleeping`, in the same RMW.
//!
//! | step | `searching` | `unclaimed` | `sleeping` | `owed` | `in_flight` |
//! | --- | --- | --- | --- | --- | --- |
//! | `begin_idle_with`, under the bound: starts searching | +1 | +1 | | | |
//! | `begin_idle_with`, at the bound: registers | | | +1 | | |
//! | `notify_work`, an unclaimed searcher: claims it | | -1 | | | |
//! | `notify_work`, none, a woken worker in flight, wakes in a tree: leaves it the wake | | | | +1 | |
//! | `notify_work`, otherwise, if `sleeping > owed`: wakes a sleeper (`wake_one_searcher`) | +1 | | -1 | clamped | +1 |
//! | `end_search` (found work) | -1 | clamped | | | |
//! | `give_up_search` (then registers) | -1 | clamped | +1 | | |
//! | `make_owed_wakes`, work visible: pays one wake | +1 | | -1 | -1, clamped | +1 |
//! | `make_owed_wakes`, done (at once with direct wakes): leaves flight, cancels what no work needs | | | | -cancelled | -1 |
//! | `cancel` (unregisters itself), `wake_worker` (`Wake::Direct`) | | | -1 | clamped | |
//! | `wake_all` (shutdown) | | | -all | clamped | |
//!
//! # Invariants, and why the code keeps them
//!
//! loom checks them twice: on this module with a minimal loop around it
//! (`sleep_loom_tests.rs`, deep interleavings), and as the shipping worker
//! loop, registry and shutdown run it (`worker_loom_tests.rs`).
//!
//! ## 1. No lost wake-up
//!
//! A task made visible in a queue, followed by
//! [`Sleep::notify_work`], is taken by some worker without waiting for an unrelated
//! event, while any worker is idle. The argument is a Dekker pairing of SeqCst
//! fences: the notifier does *push; fence; read `state`*; every worker that stops
//! searching or starts sleeping does *RMW on `state`; fence; look at the queues*.
//! Of the two, at least one sees the other's write. So for each push one of these
//! holds, by what the notifier read:
//! * `unclaimed > 0`: it claims a searcher (an RMW). That searcher, or whichever
//!   searcher is last to stop, sweeps again after its own RMW, which comes later in
//!   the SeqCst order, so it sees the task (rules *give-up* and *last-searcher*).
//! * `sleeping > owed`, no unclaimed searcher: a sleeper is woken for it, as a
//!   searcher: by the notifier, or by a woken worker in flight (fan-out below).
//! * `sleeping <= owed`: every sleeper is already being woken; treat as the
//!   next case: those wakes will be made, or cancelled by a woken worker
//!   that sees no queued task after its RMW (rule *owed-but-taken*), which
//!   then sweeps the queues itself.
//! * `searching > 0` but all claimed, nobody sleeping: the last searcher to stop
//!   sees the task (rules below) and wakes a sleeper for it if one appeared.
//! * nobody searching, nobody sleeping: every worker is working. Each will look at
//!   the queues again before it next sleeps: it becomes a searcher (and sweeps), or
//!   parks at once only because `searching >= max_searching`, i.e. searchers exist
//!   that registered *after* the notifier's read and so sweep after the push.
//!
//! Rule *give-up*: a searcher that found nothing moves itself from `searching` to
//! `sleeping` in one RMW, then sweeps every queue once more before it blocks
//! ([`Sleep::give_up_search`] then [`Sleep::cancel`] or [`Sleep::park`]). A push
//! before that RMW is seen by the sweep; a push after it sees `sleeping > 0`.
//! Rule *last-searcher*: a searcher that found work ([`Sleep::end_search`]) and
//! was the last one checks, after its RMW and a fence, whether more work is visible;
//! if so, someone sleeps and no wake is already owed, it wakes a sleeper to search.
//! A worker that parks without having searched does not sweep again (Go's
//! issue 43997: non-searchers that poll burn CPU); the cases above show no
//! wake-up depends on it.
//!
//! "A queue" is any queue others may take from: the global queue, each
//! seat's local and yield queues (the spare seats of `weft::blocking`
//! included, once started) and the pinned queues. A worker's `next` slot
//! (worker/next_slot.rs) is not one and needs no wake: only its owner takes from it,
//! and the owner is running the poll that filled it and takes it next. A
//! poll that joins may run the join's second half first, for long: the
//! slot is filled only while the join stack is empty (`may_fill_next`),
//! and the push that makes the stack non-empty empties it onto the local
//! queue (worker/join_owner.rs, `first_half_pushed`), as `reclaim_or_wait`
//! does for a half taken off the stack (fork.rs): a publish, which
//! notifies, so the job is made visible before the owner turns away.
//!
//! "Made visible" covers every path that puts a task in such a queue, not
//! only a spawn: a task moved from one queue to another is made visible
//! anew and needs its own [`Sleep::notify_work`]. A batch steal
//! (`steal_batch_and_pop` from the global queue, `steal_oldest_and_batch`
//! from a seat's, into the taker's local queue) is such a move:
//! while the batch is on its way no queue shows it, so a searcher that
//! sweeps then, gives up and parks has seen nothing; the notify after the
//! batch lands (worker/own_queues.rs, `batch_moved`, whenever tasks were left behind)
//! is the push of this argument. Loom's batch model deadlocks without it.
//!
//! Leaving the protocol is the mirror case. The cases above count on a
//! seat that is neither searching nor sleeping to look at the queues
//! before it next sleeps, and on a claimed searcher to sweep after its
//! next RMW. A seat that leaves the worker loop for good or for long (a
//! spare thread of `weft::blocking` going back to idle) would do neither,
//! so it *hands off* (`WorkerThread::hand_off`): after its last RMW on
//! `state`, a fence and one more look at the queues, with a notify for
//! what it sees (spares.rs gives the whole argument). The seat held by
//! the thread that built its pool (`use_current_thread`, adopted.rs)
//! needs no hand-off: it leaves the loop only where any waiting worker
//! does, at the end of a wait (after `end_search`, with rule
//! *last-searcher*), and is then a working seat until its next wait,
//! which is the only place it sleeps.
//!
//! ### Join stacks
//!
//! `join` leaves its second half on its seat's join stack (join_stack.rs),
//! and only the push that makes that stack non-empty is followed by
//! [`Sleep::notify_work`]; a push onto a stack that holds older halves
//! (every nested `join`) makes no notify and no fence at all. Rule
//! *covered-stack*: to the protocol a non-empty join stack is one queue,
//! made visible by the notify of the push that made it non-empty, and made
//! visible anew after every take from its top: a share (the owner moves its
//! oldest half to its local queue with [`Sleep::notify_work`], whose fence
//! also publishes the halves left behind, as a batch steal's notify does)
//! or a forced steal (the thief notifies if halves remain:
//! `WorkerThread::forced_out`). The owner shares at three points, each such
//! a take and notify: answering a searcher's request, `join`'s outermost
//! half (a loop's first split is one: below), and a parallel loop's look
//! between chunks while workers search, asked or not (worker/join_owner.rs,
//! `offer_work`). Halves pushed in between go into a queue already visible:
//! every look sees the whole stack, a look that sees it non-empty keeps its
//! worker asking until it is taken down, and the cases above apply to the
//! stack as to any queue. (One wake per push is what fan-out promises
//! spawned tasks; a join's halves get one per stack and the last-searcher
//! rule's cascade.) When the push that makes the stack non-empty is
//! `join`'s outermost half (the local queue empty too: fork.rs, `Place`),
//! the owner may share it at once instead of notifying, when its hint says
//! a thief may come and gain by it (worker/join_owner.rs,
//! `thieves_may_come`: a relaxed read of the sleep word and two flags of
//! the owner's own, which decide only which of the two paths is taken).
//! Either keeps the rule: the share's own notify makes the half visible on
//! the local queue (or a thief took it by force first, leaving nothing to
//! make visible) and leaves the stack empty, so the next push is again the
//! one that makes it non-empty; the notify covers it on the stack as any
//! first push's does.
//!
//! The one race: a take from the top landing while the owner pushes, so
//! that the stack the owner saw as non-empty is empty and its new half
//! was never made visible. The owner reads `taken` after its push, behind
//! a compiler fence ([`light`]), and a push that finds the stack empty
//! then notifies (or shares, which notifies). A share is the owner's own
//! take. A forced steal pays a process-wide barrier ([`heavy`]) after its
//! CAS, then looks at the stack: either the owner's read of `taken` came
//! after that barrier and saw the steal, or the new half was visible to
//! the thief's look.
//!
//! [`light`]: crate::sched::barrier::light
//! [`heavy`]: crate::sched::barrier::heavy
//!
//! ## 2. Fan-out
//!
//! `k` tasks notified while `w` workers sleep and no searcher is
//! unclaimed wake `min(k, w)` workers (fewer only if the tasks are taken
//! before the wakes are made), promptly: each notify either claims one
//! unclaimed searcher or sees a sleeper woken for it, by its own call or,
//! in a pool of more workers than cores, in a tree.
//!
//! `Registry::new` gives a pool direct wakes where its workers fit the
//! cores (`registry::workers_fit_cores`), and the tree elsewhere.
//!
//! With [`Wakes::Direct`], each notify that claims no searcher wakes a
//! sleeper itself: a woken worker goes to an idle core, the notifier's
//! system call costs a few microseconds and the wake-ups travel side by
//! side. A tree would cost one wake-up's latency per level: on 16 cores,
//! 8 and 16 tasks to as many parked workers started 2.1-2.2x later
//! through it (docs/TUNING.md, "Wakes side by side").
//!
//! With [`Wakes::Tree`], a notify that finds a woken worker in flight adds
//! one to `owed` instead, and a woken worker's first act
//! ([`Sleep::make_owed_wakes`]) is to make up to [`WAKE_FANOUT`] owed wakes, so
//! the number of woken workers grows geometrically instead of one per
//! discovered task, and the submitter makes one system call rather than `k`:
//! there each wake preempts a running thread, and 64 of them from the
//! submitter took ~560 us on the 2-core VM.
//! No owed wake is stranded: a woken worker leaves `in_flight` only in an RMW
//! that sees `owed == 0`, or sees another worker still in flight (who will
//! check `owed` again when it leaves), or cancels the debt because no task
//! is queued any more (rule *owed-but-taken*, [`Sleep::make_owed_wakes`]:
//! short tasks are taken by the workers already awake, and waking more
//! would only burn CPU), and `owed <= sleeping` always. A woken worker
//! starts out claimed.
//!
//! ## 3. Bounded spinning
//!
//! A worker may start searching on its own only while `searching <
//! max_searching` ([`Sleep::begin_idle_with`] decides and registers in one
//! step). Woken workers search beyond the bound, but each was woken for a
//! task it is counted on, so `unclaimed <= max_searching` always holds,
//! and a woken worker whose first sweep finds nothing parks again at once
//! while the bound is exceeded ([`Sleep::too_many_searching`]). So at most
//! `max_searching` workers spin past one sweep.
//!
//! Searchers give up after the spin time (the caller's loop), and only
//! searchers sweep other queues again and again. The one exception is a
//! task's own call to `weft::yield_now`, one sweep by a working worker for
//! one task (worker/own_queues.rs, `yield_once`), which the cases of
//! invariant 1 allow: a worker that takes a task without being counted as
//! a searcher only leaves a claimed searcher less to find.
//!
//! ### The linger window
//!
//! The spin time itself is the pool's (`Builder::spin`), lengthened for
//! 50 us (at least 37.5: a window with that much left is not moved) after
//! a call from outside the pool ended (one of weft's loops, or any
//! `install`, which `join`, `scope` and rayon's loops through the
//! rayon-core stand-in go through), after a loop called on a worker started to
//! split, or after a `join` on a worker whose second half another worker
//! ran (rayon's loops inside `install` end that way; `Registry::linger`,
//! `linger_after_call`: the next such call then finds its workers awake
//! instead of waiting for wake-ups); the worker that ran that half opens
//! it too, as it sets the join's latch (latch.rs), since it would
//! otherwise park before the join's owner ends the loop. Every trigger
//! but weft's loops from outside (`install`'s, a loop's on a worker and
//! the stolen half's) opens a window only where the pool's workers fit
//! the cores (`linger_after_call`; api/global.rs,
//! `linger_after_worker_loop`).
//! During that window the bound is one searcher per core, at least one and at most every seat
//! (`Sleep::with_linger_searching`), instead of `max_searching`: a call
//! whose caller blocks (`join`) needs that many at once, and a searcher
//! past the pool's spin time yields its core between sweeps
//! (worker/search.rs), so where the caller folds beside the pool (weft's
//! loops from outside) the one searcher beyond the loop's helpers takes
//! little from it. In a pool of more than twice as many workers as cores
//! the window's bound is below `max_searching`, on purpose: searchers
//! beyond the cores would spin through the window on cores the loop needs.
//!
//! Still bounded: by the window, which only such a call opens, so an idle
//! pool parks once it has passed. The argument does not depend on the
//! bound's value: invariant 1 counts on a searcher, any number of them,
//! sweeping after its RMW, and `unclaimed` stays at most the larger of the
//! two bounds (a window may open while more searchers than its bound
//! search), at most the number of seats. (The models open the window with
//! every seat as the bound, the largest it can be.)
//!
//! ## 4. Idle is parked
//!
//! A sleeper blocks on its slot's condition variable with no
//! timeout; only a delivered [`Wake`] ends it. Nothing in the protocol ticks.
//! A searcher that asked a join stack's owner for a half keeps sweeping
//! past the spin time, as after a lost race (work is there), but for a
//! bounded ~20 us at most: then it takes the half by force (worker/search.rs,
//! `ASK_BEFORE_STEALING`).
//! One sleeper may take a little while to block: a worker whose `join` half
//! was stolen watches, for a bounded ~20 us and only its own condition and
//! [`Sleep::is_registered`], for that half to end (worker/wait.rs). It watches
//! after the sweep that rule *give-up* asks for, not before, so to the
//! protocol it is a registered sleeper slow to block, which the arguments
//! above allow for: work queued meanwhile finds it registered and wakes a
//! sleeper, and a wake delivered to it ends the watch. Before any of that,
//! such a worker spins on the half's latch for up to ~2 us
//! (`STOLEN_HALF_SPIN`) before its task suspends: it is then a worker
//! running its task, neither searching nor sleeping, which invariant 1
//! asks only to look at the queues before it next sleeps (it does, in the
//! loop it reaches if the spin ends without the half), and its own queues
//! stay open to thieves meanwhile.
//!
//! # Suspended tasks
//!
//! (fiber.rs) A task that waits on a worker's fiber
//! suspends, and the worker goes on with its loop on another fiber. The
//! protocol sees nothing of it: a worker with suspended tasks is working,
//! searching or sleeping like any other, so invariants 1 to 4 hold as they
//! are. What a suspended task needs is that its own worker, and only that
//! one, resumes it once its wait is over, which is a *reason of the
//! worker's own*, as a latch set for a helping `join` or a pinned task is:
//! the waker queues the fiber on the seat's resumable list, sets the list's
//! flag, then calls [`Sleep::wake_worker`], whose SeqCst fence pairs with
//! the worker's registration RMW (*publish reason; fence; check
//! registered* against *register; fence; check reason*): either the waker
//! sees the worker registered and wakes it, or the worker, which looks at
//! its loop's condition after registering (the flag is part of it), sees
//! the flag and stays awake. A worker that is not sleeping looks at the
//! flag between tasks. So a resumed task is not lost, and it never wakes
//! or needs another worker: no search, no notify, fan-out untouched. The
//! loop gives way to it ahead of new work. Timed waits add one thing: a
//! worker parks until the earliest deadline of its suspended timed waits
//! (a timeout of its own, set only while such a wait exists), so an idle
//! pool with none still parks with no timeout (invariant 4). A worker
//! whose suspended task awaits a `join` half running elsewhere watches
//! before it blocks, as a helping one does (invariant 4's watch).
//!
//! # Waits with no stack left to help on
//!
//! (worker/wait.rs, `wait_without_helping`) A wait that can neither suspend nor help
//! deeper (its fiber's stack three quarters used) blocks its thread,
//! polling its condition at most a millisecond apart, and never registers
//! as a sleeper nor searches: to the protocol the worker is running its
//! task, as a task blocked on a foreign lock is. Invariants 1 to 4 count
//! only registered sleepers and searchers, so they hold as they are: a
//! wake finds other sleepers or none, never this worker, and no wake meant
//! for work is spent on a thread that would refuse it. The wake its own
//! condition's setter sends the seat finds no sleeper and is dropped, which
//! the polling makes up for. The worker's queued work stays stealable
//! (tasks pinned to it wait for the wait to end).
//!
//! # One wake per registration
//!
//! A worker is woken at most once per registration: whoever removes it from
//! `sleepers` (under the lock) owns its wake-up and delivers exactly one [`Wake`],
//! and every removal adjusts `sleeping` in the same critical section, so the count
//! cannot drift (the trap of a wake path that bypasses the idle accounting).
//!
//! # Which sleeper a wake takes
//!
//! Any: every count above is of sleepers, never of a particular one, so
//! the choice moves no invariant. It is made for where the kernel will run
//! the woken thread ([`Sleep::take_sleeper`]): each sleeper records the CPU
//! it registered on, and a wake made by a worker (which runs on after it)
//! prefers a sleeper that registered on another CPU than the waker's, one
//! made from outside the pools (which usually blocks next) a sleeper that
//! registered on the waker's, each among the newest few, else the newest.
//! Before its CPU, a wake from outside looks for the pool's favourite, if
//! one is named and sleeps among the newest few: the worker that ran the
//! pool's last call from outside, where that call ran 1 ms or more
//! ([`Sleep::favour_for_outside_wakes`]; the rule is
//! `Registry::outside_call_ran`). It stays the favourite for every wake
//! from outside until the next such call names another or none: calls
//! from outside come one after another, and the worker that ran the last
//! one holds what it left in that thread's caches and allocator arena. In
//! a pool whose workers fit the cores the favourite is taken wherever it
//! sleeps. In a pool of more workers than cores the CPU comes first: each
//! CPU a call ended on has a favourite of its own, and a wake takes the
//! favourite of the waker's CPU only if it registered there, so the
//! favourite only chooses among the sleepers the CPU rule prefers.
//! The records are relaxed hints outside the protocol's state. Loom,
//! which models no CPUs, gives each worker its index for a CPU and steers
//! every wake away from worker 0's, so the models take a sleeper other
//! than the newest too (and never look for a favourite); where the CPU is
//! unknown (Miri, other systems) a wake from outside takes the favourite
//! if it sleeps among the newest few, and any other wake the newest
//! sleeper.

use crate::facade::{fence, lock, wait, AtomicBool, AtomicU64, Condvar, Mutex, Ordering};
use crossbeam_utils::CachePadded;
// std's even under loom: the slot's CPU record is a hint the models need
// not explore (`Slot::parked_on`).
use std::sync::atomic::{AtomicU32, AtomicUsize};

/// Workers per pool the counters in `state` can hold.
pub(crate) const MAX_WORKERS: usize = (1 << FIELD_BITS) - 1;

const FIELD_BITS: u32 = 12;
const FIELD_MASK: u64 = (1 << FIELD_BITS) - 1;
/// `unclaimed`'s and `sleeping`'s bits in `state` (see [`Counts::pack`]).
const UNCLAIMED_BITS: u64 = FIELD_MASK << FIELD_BITS;
const SLEEPING_BITS: u64 = FIELD_MASK << (2 * FIELD_BITS);

/// How many sleepers a woken worker wakes on behalf of notifiers before it
/// looks for its own task (more if it is the last one in flight), with
/// [`Wakes::Tree`].
const WAKE_FANOUT: u64 = 2;

/// How many of the newest sleepers a wake looks at for the favourite or
/// for one that registered on the CPU it prefers ([`Sleep::take_sleeper`]):
/// the look is under the sleepers' lock, so it stays short however many
/// workers sleep.
const SLEEPERS_LOOKED_AT: usize = 8;

/// The CPU the calling thread runs on, or `u32::MAX` where it is not known.
/// On Linux `sched_getcpu` reads it without a system call (the vDSO or the
/// thread's rseq area). Miri cannot call it: there it is unknown, and
/// wakes take the favourite or the newest sleeper. Loom models no CPUs:
/// see [`registration_cpu`] and [`Steer::for_caller`].
fn current_cpu() -> u32 {
    #[cfg(all(target_os = "linux", not(miri), not(loom)))]
    {
        // SAFETY: `sched_getcpu` takes no arguments and touches no memory of
        // ours; it returns -1 on failure, which the conversion turns into
        // "unknown".
        let cpu = unsafe { libc::sched_getcpu() };
        u32::try_from(cpu).unwrap_or(u32::MAX)
    }
    #[cfg(not(all(target_os = "linux", not(miri), not(loom))))]
    {
        u32::MAX
    }
}

/// The CPU worker `index` records as it registers (`Slot::parked_on`):
/// the one it runs on. Under loom, which models no CPUs, its own index, so
/// that the models' wakes ([`Steer::for_caller`]) choose among sleepers on
/// different "CPUs" and run both of [`Sleep::take_sleeper`]'s paths.
fn registration_cpu(index: usize) -> u32 {
    #[cfg(loom)]
    {
        u32::try_from(index).unwrap_or(u32::MAX)
    }
    #[cfg(not(loom))]
    {
        let _ = index;
        current_cpu()
    }
}

/// How many CPUs' favourites a pool of more workers than cores keeps
/// ([`Sleep::favour_by_cpu`]): 64 bytes of entries. A caller's calls
/// end on a few CPUs (on the 2-vCPU VMs, its own and its waker's, in
/// turn); more CPUs share entries.
const FAVOURITE_CPUS: usize = 8;

/// Where a wake made now would like its sleeper to run, by the CPU each
/// sleeper registered on ([`Sleep::take_sleeper`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Steer {
    /// The waker's CPU (`u32::MAX`: unknown, no preference).
    waker_cpu: u32,
    /// Away from the waker's CPU, or onto it.
    away: bool,
}

impl Steer {
    /// The preference for a wake made by the calling thread. A worker goes
    /// on running after its wake (the rest of its task, or its search), so
    /// a sleeper queued beside it would wait: away. A thread outside the
    /// pools usually blocks right after it hands work in (`install`, a wait
    /// for a task's result), and a sleeper queued on its CPU then runs at
    /// once, sooner than one on an idle CPU (whose wake-up took 30-44 us on
    /// these VMs: docs/TUNING.md): onto it.
    ///
    /// Under loom every wake steers away from "CPU" 0, worker 0's
    /// ([`registration_cpu`]): it takes the newest sleeper unless that is
    /// worker 0 and another sleeps, then the newest of the others.
    fn for_caller() -> Steer {
        #[cfg(not(loom))]
        {
            Steer {
                waker_cpu: current_cpu(),
                away: crate::sched::context::current_worker().is_some(),
            }
        }
        #[cfg(loom)]
        {
            Steer {
                waker_cpu: 0,
                away: true,
            }
        }
    }

    /// Whether a sleeper that registered on `cpu` is one this wake prefers.
    fn prefers(self, cpu: u32) -> bool {
        (cpu != self.waker_cpu) == self.away
    }
}

/// The counters packed in `state`, unpacked for reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) searching: u64,
    pub(crate) unclaimed: u64,
    pub(crate) sleeping: u64,
    /// Wakes owed to notified tasks, to be made by woken workers in flight.
    pub(crate) owed: u64,
    /// Workers woken to search that have not yet made the wakes they owe.
    pub(crate) in_flight: u64,
}

impl Counts {
    fn unpack(word: u64) -> Counts {
        let field = |n: u32| (word >> (n * FIELD_BITS)) & FIELD_MASK;
        Counts {
            searching: field(0),
            unclaimed: field(1),
            sleeping: field(2),
            owed: field(3),
            in_flight: field(4),
        }
    }

    fn pack(self) -> u64 {
        self.searching
            | (self.unclaimed << FIELD_BITS)
            | (self.sleeping << (2 * FIELD_BITS))
            | (self.owed << (3 * FIELD_BITS))
            | (self.in_flight << (4 * FIELD_BITS))
    }

    /// The counts after one searcher stops: claims beyond the remaining searchers
    /// are dropped, since a claim can only be honoured by a searcher that exists.
    fn one_searcher_fewer(mut self) -> Counts {
        debug_assert!(
            self.searching > 0,
            "a searcher stopped that was not counted"
        );
        self.searching -= 1;
        self.unclaimed = self.unclaimed.min(self.searching);
        self
    }

    /// The counts after one sleeper left the list: wakes owed beyond the
    /// remaining sleepers can no longer be made (and are not needed: see
    /// invariant 1, case "nobody sleeping").
    fn one_sleeper_fewer(mut self) -> Counts {
        debug_assert!(self.sleeping > 0, "a sleeper left that was not counted");
        self.sleeping -= 1;
        self.owed = self.owed.min(self.sleeping);
        self
    }

    /// The counts after a sleeper was woken to search.
    fn woken_to_search(self) -> Counts {
        let mut after = self.one_sleeper_fewer();
        after.searching += 1;
        after.in_flight += 1;
        after
    }
}

/// What an idle worker was told to do by [`Sleep::begin_idle_with`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Idle {
    /// Counted as a searcher: sweep the queues.
    Search,
    /// Registered as a sleeper: check your own exit conditions, then park.
    Registered,
}

/// Why a sleeper was woken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wake {
    /// Woken for a new task; the worker is now counted as a (claimed) searcher.
    Searching,
    /// Woken for a reason of its own (its latch, its pinned queue, shutdown).
    Direct,
}

/// One worker's place to block.
struct Slot {
    /// The CPU the worker registered on ([`current_cpu`]; `u32::MAX`
    /// where unknown), which a wake reads to choose among sleepers
    /// ([`Sleep::take_sleeper`]). A hint, never part of the protocol: any
    /// sleeper serves any wake, so it is std's atomic even under loom, and
    /// relaxed (a stale value only chooses a less good sleeper).
    parked_on: AtomicU32,
    /// In `sleepers`. Written under the `sleepers` lock; read without it by
    /// [`Sleep::wake_worker`]'s fast path, which the fences make sound (see
    /// there), and by [`Sleep::is_registered`], a hint only.
    registered: AtomicBool,
    wake: Mutex<Option<Wake>>,
    condvar: Condvar,
}

/// The protocol's shared state for one pool.
pub(crate) struct Sleep {
    state: CachePadded<AtomicU64>,
    sleepers: Mutex<Vec<usize>>,
    slots: Box<[CachePadded<Slot>]>,
    max_searching: u64,
    /// The bound in a linger window (invariant 3).
    linger_searching: u64,
    /// Who makes the wake a notify needs while a woken worker is in flight.
    wakes: Wakes,
    /// Whether a wake chooses its sleeper by CPU or favourite
    /// ([`Sleep::take_sleeper`]); off only in tests that follow the
    /// sleepers list's order, which a test thread moving between CPUs would
    /// otherwise reorder.
    steer_by_cpu: bool,
    /// The worker a wake from outside takes first if it sleeps among the
    /// newest [`SLEEPERS_LOOKED_AT`] (`usize::MAX`: none), set by
    /// [`Sleep::favour_for_outside_wakes`]: the first entry alone, or with
    /// `favourite_by_cpu` one entry per CPU the naming call ended on
    /// ([`Sleep::favourite_entry`]). A hint, as `Slot::parked_on` is, so
    /// Relaxed suffices for every access: a stale value only makes a wake
    /// take another sleeper, which the protocol allows (any sleeper will
    /// do). std's atomics even under loom, whose wakes never steer onto a
    /// waker's "CPU" and so never read them.
    outside_favourites: [AtomicUsize; FAVOURITE_CPUS],
    /// Whether the favourite is kept per CPU and taken only where it
    /// registered on the waker's CPU (a pool of more workers than cores:
    /// [`Sleep::favour_by_cpu`]), or kept once and taken wherever it sleeps.
    favourite_by_cpu: bool,
}

/// Who makes the wake a notify needs while a woken worker is still in
/// flight (invariant 2 says when each is faster).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wakes {
    /// The notifier leaves it to the woken workers (`owed`): wakes go out
    /// in a tree, the submitter makes one system call.
    Tree,
    /// The notifier makes it itself: wakes travel side by side.
    Direct,
}

impl Sleep {
    pub(crate) fn new(workers: usize, max_searching: usize) -> Sleep {
        assert!(
            workers <= MAX_WORKERS,
            "too many workers for the sleep counters"
        );
        let slots = (0..workers)
            .map(|_| {
                CachePadded::new(Slot {
                    parked_on: AtomicU32::new(u32::MAX),
                    registered: AtomicBool::new(false),
                    wake: Mutex::new(None),
                    condvar: Condvar::new(),
                })
            })
            .collect();
        Sleep {
            state: CachePadded::new(AtomicU64::new(0)),
            sleepers: Mutex::new(Vec::with_capacity(workers)),
            slots,
            max_searching: max_searching.clamp(1, MAX_WORKERS) as u64,
            linger_searching: workers.max(1) as u64,
            wakes: Wakes::Tree,
            steer_by_cpu: true,
            outside_favourites: std::array::from_fn(|_| AtomicUsize::new(usize::MAX)),
            favourite_by_cpu: false,
        }
    }

    /// Makes every wake take the newest sleeper, for tests that follow the
    /// sleepers list's order.
    #[cfg(test)]
    pub(crate) fn newest_sleeper_first(mut self) -> Sleep {
        self.steer_by_cpu = false;
        self
    }

    /// Sets who makes the wakes a burst of notifies needs (invariant 2;
    /// `new` starts with [`Wakes::Tree`]). Before any worker runs.
    pub(crate) fn set_wakes(&mut self, wakes: Wakes) {
        self.wakes = wakes;
    }

    /// Keeps a favourite per CPU, taken only by wakes from a caller on the
    /// CPU it registered on, instead of one taken wherever it sleeps (see
    /// [`Sleep::take_sleeper`]). Before any worker runs.
    pub(crate) fn favour_by_cpu(&mut self) {
        self.favourite_by_cpu = true;
    }

    /// Bounds the searchers of a linger window (invariant 3) to `searchers`
    /// instead of every seat.
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) fn with_linger_searching(mut self, searchers: usize) -> Sleep {
        self.linger_searching = searchers.clamp(1, self.slots.len().max(1)) as u64;
        self
    }

    /// A snapshot of the counters (for tests and stats; racy by nature).
    pub(crate) fn counts(&self) -> Counts {
        Counts::unpack(self.state.load(Ordering::SeqCst))
    }

    /// Applies `change` to the counters atomically; `None` leaves them as they
    /// are. Returns the counts before and after.
    fn update(&self, mut change: impl FnMut(Counts) -> Option<Counts>) -> (Counts, Counts) {
        // Relaxed load, and Relaxed on a failed CAS: each value read here only
        // proposes the next one; what the protocol relies on is the SeqCst CAS
        // that installs it (which fails if the value was stale). A caller that
        // acts on a read without writing orders it itself: `notify_work`'s
        // slow path (when nothing is to be done) by the fence its fast path
        // made after the push; `begin_idle`'s first try falls back to a
        // locked RMW.
        let mut word = self.state.load(Ordering::Relaxed);
        loop {
            let before = Counts::unpack(word);
            let Some(after) = change(before) else {
                return (before, before);
            };
            match self.state.compare_exchange_weak(
                word,
                after.pack(),
                Ordering::SeqCst,
                Ordering::Relaxed,
            ) {
                Ok(_) => return (before, after),
                Err(actual) => word = actual,
            }
        }
    }

    /// Whether some worker is searching for work right now. Relaxed: a
    /// hint for a running task deciding whether to split work off or share
    /// a join half; a stale answer costs one split or share too many, or
    /// one chunk's delay.
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) fn has_searchers(&self) -> bool {
        Counts::unpack(self.state.load(Ordering::Relaxed)).searching > 0
    }

    /// Whether some worker is idle right now: searching, or asleep. Relaxed:
    /// a hint for a worker deciding whether to hand a join half to the
    /// local queue (worker/join_owner.rs, `first_half_pushed`); a stale
    /// answer costs one share too many, or one request to answer.
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) fn has_idle(&self) -> bool {
        let counts = Counts::unpack(self.state.load(Ordering::Relaxed));
        counts.searching > 0 || counts.sleeping > 0
    }

    /// Whether more workers search than may do so on their own: a woken
    /// worker whose first sweep found nothing then stops instead of spinning.
    pub(crate) fn too_many_searching(&self, lingering: bool) -> bool {
        // Relaxed: a heuristic read; a stale value only costs one more sweep or
        // one earlier park, and parking goes through the full protocol.
        Counts::unpack(self.state.load(Ordering::Relaxed)).searching > self.search_bound(lingering)
    }

    /// How many workers may search on their own (invariant 3).
    fn search_bound(&self, lingering: bool) -> u64 {
        if lingering {
            self.linger_searching
        } else {
            self.max_searching
        }
    }

    /// Whether worker `index` is still registered as a sleeper, i.e. nobody
    /// has taken its wake-up yet. A hint for a worker watching before it
    /// blocks: [`Sleep::park`] and [`Sleep::cancel`] decide under the locks.
    pub(crate) fn is_registered(&self, index: usize) -> bool {
        // Relaxed: a stale answer only ends the watch late or early; the
        // delivered wake-up itself is read under the slot's lock.
        self.slots[index].registered.load(Ordering::Relaxed)
    }

    /// Called after a task was made visible in any queue others can take from.
    /// Claims an unclaimed searcher for it, or sees that a sleeper is woken for
    /// it: by this call, or by a woken worker in flight (the wake is owed).
    /// Returns whether this call woke a worker itself.
    ///
    /// Inlined: every `join` and `spawn` on a worker calls it, and while the
    /// pool is busy (no unclaimed searcher, nobody sleeping) it is a fence and
    /// one load; the rest lives out of line in [`Sleep::notify_work_slow`].
    #[inline]
    pub(crate) fn notify_work(&self) -> bool {
        // The notifier's half of the Dekker pairing (invariant 1): the push before
        // this fence and the read of `state` after it cannot both miss a worker's
        // RMW-then-fence-then-sweep.
        fence(Ordering::SeqCst);
        // Relaxed suffices: the fence above orders this load after the push, and
        // the slow path's CAS re-reads what it acts on. With no unclaimed
        // searcher and nobody sleeping, the slow path would do nothing either.
        let word = self.state.load(Ordering::Relaxed);
        if word & (UNCLAIMED_BITS | SLEEPING_BITS) == 0 {
            return false;
        }
        self.notify_work_slow()
    }

    /// The rest of [`Sleep::notify_work`], after its fence.
    #[cold]
    #[inline(never)]
    fn notify_work_slow(&self) -> bool {
        // Relaxed suffices: `notify_work`'s fence orders the loads in `update`
        // after the push, and the CAS re-reads what it acts on.
        let (before, after) = self.update(|c| {
            let mut next = c;
            if c.unclaimed > 0 {
                next.unclaimed -= 1;
            } else if self.wakes == Wakes::Tree && c.sleeping > c.owed && c.in_flight > 0 {
                next.owed += 1;
            } else {
                return None;
            }
            Some(next)
        });
        if after != before {
            return false;
        }
        if before.sleeping > before.owed {
            // Direct wakes, or nobody in flight to delegate to: wake one
            // ourselves.
            return self.wake_one_searcher();
        }
        false
    }

    /// Wakes one sleeper as a claimed searcher, if any still sleeps.
    fn wake_one_searcher(&self) -> bool {
        let steer = Steer::for_caller();
        let mut sleepers = lock(&self.sleepers);
        let Some(index) = self.take_sleeper(&mut sleepers, steer) else {
            return false;
        };
        self.update(|c| Some(c.woken_to_search()));
        // Relaxed: every reader that acts on `registered` re-reads it under the lock.
        self.slots[index].registered.store(false, Ordering::Relaxed);
        drop(sleepers);
        self.deliver(index, Wake::Searching);
        true
    }

    /// The first thing a worker woken to search does: make the wakes owed to
    /// notifiers, up to [`WAKE_FANOUT`], or all of them if no other woken
    /// worker is still in flight to make them. Then it leaves `in_flight` in
    /// the same RMW that saw nothing left for it to do, so no owed wake is ever
    /// left without a worker in flight to make it. With [`Wakes::Tree`],
    /// sleepers are thus woken in a tree, several at a time, rather than all
    /// by the notifier or one by one. With [`Wakes::Direct`] nothing is ever
    /// owed, and it leaves `in_flight` at once, without the sleepers' lock
    /// or a look at the queues: the notifier may be taking that lock for its
    /// next wake, and the look serves only an owed wake.
    ///
    /// Rule *owed-but-taken*: before each owed wake it looks at the queues
    /// (`more_work`). If nothing is queued, the tasks those wakes were owed to
    /// were taken already (short tasks, taken by the workers woken so far), so
    /// it cancels the whole debt in the RMW that leaves `in_flight`. Nothing is
    /// lost: this worker is itself a searcher, and its sweep comes after that
    /// RMW and a fence, so it sees any task whose notifier added to `owed`
    /// before the RMW (Dekker, as in invariant 1); the last-searcher rule wakes
    /// more workers if more such tasks show up. So as not to leave those to a
    /// one-by-one cascade, it also looks again right after the fence and, while
    /// work is visible, makes up to the cancelled number of wakes itself.
    /// (Loom checks the rule; liveness does not depend on those extra wakes.)
    fn make_owed_wakes(&self, more_work: &dyn Fn() -> bool) {
        if self.wakes == Wakes::Direct {
            self.update(|c| {
                let mut after = c;
                after.in_flight -= 1;
                Some(after)
            });
            return;
        }
        let mut woken = 0;
        let steer = Steer::for_caller();
        loop {
            let work_visible = more_work();
            let mut sleepers = lock(&self.sleepers);
            let mut next_sleeper = None;
            let mut cancelled = 0;
            self.update(|c| {
                cancelled = 0;
                if c.owed > 0 && c.sleeping > 0 && (woken < WAKE_FANOUT || c.in_flight == 1) {
                    if work_visible {
                        // Pay the debt before the sleeper leaves, so the clamp of
                        // `owed` to the remaining sleepers does not count it twice.
                        let mut paid = c;
                        paid.owed -= 1;
                        next_sleeper = Some(());
                        return Some(paid.woken_to_search());
                    }
                    cancelled = c.owed;
                }
                next_sleeper = None;
                let mut after = c;
                after.owed -= cancelled;
                after.in_flight -= 1;
                Some(after)
            });
            if next_sleeper.is_none() {
                drop(sleepers);
                if cancelled > 0 {
                    fence(Ordering::SeqCst);
                    // Tasks pushed between the first look and the RMW: wake
                    // for them as the cancelled wakes would have, while work
                    // stays visible.
                    for _ in 0..cancelled {
                        if !more_work() || !self.wake_one_searcher() {
                            break;
                        }
                    }
                }
                return;
            }
            let index = self
                .take_sleeper(&mut sleepers, steer)
                .expect("`sleeping` counts the sleepers list");
            // Relaxed: as in `wake_one_searcher`.
            self.slots[index].registered.store(false, Ordering::Relaxed);
            drop(sleepers);
            self.deliver(index, Wake::Searching);
            woken += 1;
        }
    }

    /// [`Sleep::begin_idle_with`] outside a linger window, for the models.
    #[cfg(test)]
    pub(crate) fn begin_idle(&self, index: usize) -> Idle {
        self.begin_idle_with(index, false)
    }

    /// An idle worker (its own queue empty, one look at the shared queues found
    /// nothing) asks whether to search or to sleep. Registration as a sleeper
    /// happens here, atomically with the decision, so that the bound on searchers
    /// and the sleepers count are judged on one value of `state`. While
    /// `lingering` (a linger window after a parallel loop, invariant 3) the
    /// bound on searchers is the linger bound (`with_linger_searching`).
    pub(crate) fn begin_idle_with(&self, index: usize, lingering: bool) -> Idle {
        let max = self.search_bound(lingering);
        let start_search = |c: Counts| {
            let mut after = c;
            after.searching += 1;
            after.unclaimed += 1;
            after
        };
        // Without the lock while the worker may search: the common case.
        let (before, after) = self.update(|c| (c.searching < max).then(|| start_search(c)));
        let searching = if after != before {
            true
        } else {
            let mut sleepers = lock(&self.sleepers);
            let mut searching = false;
            self.update(|c| {
                searching = c.searching < max;
                if searching {
                    Some(start_search(c))
                } else {
                    let mut after = c;
                    after.sleeping += 1;
                    Some(after)
                }
            });
            if !searching {
                self.register_locked(&mut sleepers, index);
            }
            searching
        };
        // Half of the Dekker pairing: the sweep that follows, or the check of
        // the worker's own reasons to wake, sees any push whose notifier read
        // `state` before this RMW.
        fence(Ordering::SeqCst);
        if searching {
            Idle::Search
        } else {
            Idle::Registered
        }
    }

    /// A searcher found a task. If it was the last searcher and more work is visible
    /// (`more_work` is asked only then), it wakes a sleeper to take the rest.
    pub(crate) fn end_search(&self, more_work: impl FnOnce() -> bool) {
        let (_, after) = self.update(|c| Some(c.one_searcher_fewer()));
        if after.searching == 0 && after.sleeping > 0 && after.owed == 0 {
            // Rule last-searcher: the fence orders the look at the queues after the
            // RMW, pairing with notifiers that saw this searcher still counted.
            fence(Ordering::SeqCst);
            if more_work() {
                self.wake_one_searcher();
            }
        }
    }

    /// A searcher found nothing within its spin time: it becomes a registered
    /// sleeper in the same RMW. The caller must then sweep every queue once more
    /// and call [`Sleep::cancel`] if it finds work, else [`Sleep::park`].
    pub(crate) fn give_up_search(&self, index: usize) {
        let mut sleepers = lock(&self.sleepers);
        self.update(|c| {
            let mut after = c.one_searcher_fewer();
            after.sleeping += 1;
            Some(after)
        });
        self.register_locked(&mut sleepers, index);
        drop(sleepers);
        // Half of the Dekker pairing for the caller's final sweep (rule give-up).
        fence(Ordering::SeqCst);
    }

    fn register_locked(&self, sleepers: &mut Vec<usize>, index: usize) {
        debug_assert!(
            !sleepers.contains(&index),
            "worker {index} registered twice"
        );
        sleepers.push(index);
        self.slots[index]
            .parked_on
            .store(registration_cpu(index), Ordering::Relaxed);
        // Relaxed: published by the sleepers unlock for locked readers, and by the
        // caller's SeqCst fence for `wake_worker`'s unlocked fast path.
        self.slots[index].registered.store(true, Ordering::Relaxed);
    }

    /// Which worker a wake from outside takes first while it sleeps
    /// ([`Sleep::take_sleeper`]), or none: the registry's rule
    /// (`Registry::outside_call_ran`).
    ///
    /// Called by the worker that ran the call, whose CPU names the entry
    /// where the pool keeps a favourite per CPU.
    pub(crate) fn favour_for_outside_wakes(&self, worker: Option<usize>) {
        let cpu = if self.favourite_by_cpu {
            current_cpu()
        } else {
            u32::MAX
        };
        self.favour_on(cpu, worker);
    }

    /// [`Sleep::favour_for_outside_wakes`] for a call that ended on `cpu`.
    fn favour_on(&self, cpu: u32, worker: Option<usize>) {
        let worker = worker.unwrap_or(usize::MAX);
        let entry = &self.outside_favourites[self.favourite_entry(cpu)];
        // Relaxed: a hint; no data rides on it. Loaded first so that calls
        // from outside that keep one favourite leave its line shared.
        if entry.load(Ordering::Relaxed) != worker {
            entry.store(worker, Ordering::Relaxed);
        }
    }

    /// Where the favourite of calls that end on, or wakes made from, `cpu`
    /// is kept: the first entry, unless the pool keeps one per CPU and the
    /// CPU is known. CPUs past [`FAVOURITE_CPUS`] share entries; a wake
    /// takes the favourite only where it last registered on the waker's
    /// CPU, so one that another CPU named is taken only if it has since
    /// slept on this one.
    fn favourite_entry(&self, cpu: u32) -> usize {
        if self.favourite_by_cpu && cpu != u32::MAX {
            cpu as usize % FAVOURITE_CPUS
        } else {
            0
        }
    }

    /// The workers [`Sleep::favour_for_outside_wakes`] named and no later
    /// call cleared, in entry order. Relaxed: the tests read them after
    /// `install` returned, whose latch (a Release store seen by an Acquire
    /// load) orders the worker's store before.
    #[cfg(test)]
    pub(crate) fn outside_favourites(&self) -> Vec<usize> {
        self.outside_favourites
            .iter()
            .map(|entry| entry.load(Ordering::Relaxed))
            .filter(|&worker| worker != usize::MAX)
            .collect()
    }

    /// Takes a sleeper off the list for a wake that `steer`s: for a wake
    /// from outside, the favourite of [`Sleep::favour_for_outside_wakes`]
    /// if it is among the next few newest (in a pool that keeps one per
    /// CPU, the caller's CPU's, if it registered there); otherwise the newest one (its
    /// cache is the warmest) unless it registered on a CPU the wake does
    /// not prefer and one of the next few newest did, then that one.
    ///
    /// Why the favourite: calls from outside come one after another, and
    /// the worker that ran the last one holds its allocator arena and
    /// caches. Without it, a 2-worker pool ran rayon's `filter` +
    /// `collect` on alternate workers from one call to the next (the
    /// caller's CPU, which the rule below follows, alternated), each call
    /// refilled the other thread's glibc arena, and the process took 1.3-2x
    /// the page faults and up to 1.4x the time (docs/RAYON.md, "Session 41").
    /// In a pool of more workers than cores a favourite taken on another
    /// CPU than the caller's made rayon's `find_any` at 8 workers on 2
    /// cores 1.25-1.32x rayon's time where the CPU rule alone read
    /// 1.12-1.15x; taken only on the caller's CPU, with one favourite per
    /// CPU (the caller's CPU alternates from call to call, and a single
    /// favourite would sleep on the other one every other call), it read
    /// as the CPU rule did, and `filter` + `collect` went from 1.25-1.28x
    /// to 1.01x (docs/RAYON.md, "Session 45").
    ///
    /// Why the CPU: the kernel queues a woken thread on the CPU it last ran
    /// on or on its waker's, and some kernels (these VMs': docs/TUNING.md,
    /// "Where a woken thread runs on these VMs") take the one it last ran
    /// on when that one idles and the waker's otherwise. A worker queued on
    /// the CPU of a waker that goes on running waits behind it, up to
    /// milliseconds under `SCHED_BATCH`, while another CPU idles; one queued
    /// on an idle CPU waits for that CPU to wake. Which sleeper a wake takes
    /// is free in the protocol (every count above is of sleepers, never of
    /// a particular one), so this changes no invariant.
    fn take_sleeper(&self, sleepers: &mut Vec<usize>, steer: Steer) -> Option<usize> {
        let newest = sleepers.len().checked_sub(1)?;
        let oldest_looked_at = newest.saturating_sub(SLEEPERS_LOOKED_AT - 1);
        if self.steer_by_cpu && !steer.away {
            // Relaxed: hints (see the fields).
            let favourite = self.outside_favourites[self.favourite_entry(steer.waker_cpu)]
                .load(Ordering::Relaxed);
            let on_a_preferred_cpu = |worker: usize| {
                !self.favourite_by_cpu
                    || steer.waker_cpu == u32::MAX
                    || steer.prefers(self.slots[worker].parked_on.load(Ordering::Relaxed))
            };
            if favourite != usize::MAX && on_a_preferred_cpu(favourite) {
                if let Some(position) =
                    (oldest_looked_at..=newest).rfind(|&position| sleepers[position] == favourite)
                {
                    // `remove`: the others keep their order, as below.
                    return Some(sleepers.remove(position));
                }
            }
        }
        if self.steer_by_cpu && steer.waker_cpu != u32::MAX {
            for position in (oldest_looked_at..=newest).rev() {
                // Relaxed: a hint (see `Slot::parked_on`).
                let cpu = self.slots[sleepers[position]]
                    .parked_on
                    .load(Ordering::Relaxed);
                if steer.prefers(cpu) {
                    // `remove`, not `swap_remove`: the others keep their order
                    // (newest last), at a shift of fewer than
                    // `SLEEPERS_LOOKED_AT` entries.
                    return Some(sleepers.remove(position));
                }
            }
        }
        sleepers.pop()
    }

    /// Takes `index` off the sleepers list if it is still there (caller holds
    /// the lock); returns whether it was.
    fn unregister_locked(&self, sleepers: &mut Vec<usize>, index: usize) -> bool {
        let Some(position) = sleepers.iter().position(|&i| i == index) else {
            return false;
        };
        sleepers.swap_remove(position);
        self.update(|c| Some(c.one_sleeper_fewer()));
        // Relaxed: as in `wake_one_searcher`.
        self.slots[index].registered.store(false, Ordering::Relaxed);
        true
    }

    /// A registered worker that found a reason not to sleep withdraws. Returns
    /// `None` if it withdrew in time, or the [`Wake`] somebody already chose to
    /// deliver to it (which it then honours exactly as if it had parked).
    pub(crate) fn cancel(&self, index: usize, more_work: &dyn Fn() -> bool) -> Option<Wake> {
        let mut sleepers = lock(&self.sleepers);
        if self.unregister_locked(&mut sleepers, index) {
            return None;
        }
        drop(sleepers);
        Some(self.park(index, more_work))
    }

    /// Blocks a registered worker until its wake-up is delivered. `more_work`
    /// tells whether any queue the worker may take from holds a task (see
    /// [`Sleep::make_owed_wakes`]).
    pub(crate) fn park(&self, index: usize, more_work: &dyn Fn() -> bool) -> Wake {
        let slot = &self.slots[index];
        let mut wake = lock(&slot.wake);
        let reason = loop {
            if let Some(reason) = wake.take() {
                break reason;
            }
            wake = wait(&slot.condvar, wake);
        };
        drop(wake);
        self.woken(reason, more_work)
    }

    /// Every delivered wake passes here once: a worker woken to search first
    /// makes the wakes it owes.
    fn woken(&self, reason: Wake, more_work: &dyn Fn() -> bool) -> Wake {
        if reason == Wake::Searching {
            self.make_owed_wakes(more_work);
        }
        reason
    }

    /// Blocks a registered worker until its wake-up is delivered or `deadline`
    /// passes; on time-out it withdraws (and returns a wake-up that raced in, if any).
    pub(crate) fn park_until(
        &self,
        index: usize,
        deadline: std::time::Instant,
        more_work: &dyn Fn() -> bool,
    ) -> Option<Wake> {
        let slot = &self.slots[index];
        let mut wake = lock(&slot.wake);
        loop {
            if let Some(reason) = wake.take() {
                drop(wake);
                return Some(self.woken(reason, more_work));
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                drop(wake);
                return self.cancel(index, more_work);
            }
            wake = match slot.condvar.wait_timeout(wake, deadline - now) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    /// Wakes worker `index` for a reason of its own (its latch was set, it has a
    /// pinned task), if it is registered as a sleeper. Call after publishing the
    /// reason; the worker checks its reasons after registering.
    pub(crate) fn wake_worker(&self, index: usize) -> bool {
        // Dekker pairing with the worker: it does *register; fence; check reason*,
        // we do *publish reason; fence; check registered*.
        fence(Ordering::SeqCst);
        // Relaxed: ordered by the fence; a stale `true` is re-checked under the lock.
        if !self.slots[index].registered.load(Ordering::Relaxed) {
            return false;
        }
        let mut sleepers = lock(&self.sleepers);
        if !self.unregister_locked(&mut sleepers, index) {
            return false;
        }
        drop(sleepers);
        self.deliver(index, Wake::Direct);
        true
    }

    /// Wakes every sleeper (shutdown). Callers publish their reason first.
    pub(crate) fn wake_all(&self) {
        let mut sleepers = lock(&self.sleepers);
        let woken: Vec<usize> = sleepers.drain(..).collect();
        self.update(|c| {
            let mut after = c;
            after.sleeping -= woken.len() as u64;
            after.owed = after.owed.min(after.sleeping);
            Some(after)
        });
        for &index in &woken {
            // Relaxed: as in `wake_one_searcher`.
            self.slots[index].registered.store(false, Ordering::Relaxed);
        }
        drop(sleepers);
        for index in woken {
            self.deliver(index, Wake::Direct);
        }
    }

    fn deliver(&self, index: usize, reason: Wake) {
        let slot = &self.slots[index];
        let mut wake = lock(&slot.wake);
        debug_assert!(wake.is_none(), "worker {index} woken twice for one sleep");
        *wake = Some(reason);
        drop(wake);
        slot.condvar.notify_one();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn counts_round_trip() {
        let counts = Counts {
            searching: 3,
            unclaimed: 2,
            sleeping: 7,
            owed: 4,
            in_flight: 1,
        };
        assert_eq!(Counts::unpack(counts.pack()), counts);
    }

    #[test]
    fn notify_fast_path_masks_cover_exactly_unclaimed_and_sleeping() {
        let zero = Counts {
            searching: 0,
            unclaimed: 0,
            sleeping: 0,
            owed: 0,
            in_flight: 0,
        };
        let full = MAX_WORKERS as u64;
        let masked = |counts: Counts| counts.pack() & (UNCLAIMED_BITS | SLEEPING_BITS);
        assert_eq!(
            masked(Counts {
                unclaimed: full,
                ..zero
            }),
            UNCLAIMED_BITS
        );
        assert_eq!(
            masked(Counts {
                sleeping: full,
                ..zero
            }),
            SLEEPING_BITS
        );
        let others = Counts {
            searching: full,
            owed: full,
            in_flight: full,
            ..zero
        };
        assert_eq!(masked(others), 0);
        // With nobody sleeping and no unclaimed searcher, the slow path would
        // not act either: the fast path's early return changes nothing.
        let sleep = Sleep::new(2, 1);
        assert_eq!(sleep.begin_idle(0), Idle::Search);
        assert_eq!(sleep.counts().unclaimed, 1);
        assert!(!sleep.notify_work(), "claims the searcher, wakes nobody");
        let claimed = sleep.counts();
        assert!(!sleep.notify_work(), "fast path: nothing to claim or wake");
        assert_eq!(sleep.counts(), claimed);
    }

    #[test]
    fn a_stopping_searcher_drops_claims_it_cannot_honour() {
        let counts = Counts {
            searching: 1,
            unclaimed: 1,
            sleeping: 0,
            owed: 0,
            in_flight: 0,
        };
        let after = counts.one_searcher_fewer();
        assert_eq!((after.searching, after.unclaimed), (0, 0));
    }

    #[test]
    fn searchers_are_bounded_and_the_rest_register() {
        let sleep = Sleep::new(4, 2);
        assert_eq!(sleep.begin_idle(0), Idle::Search);
        assert_eq!(sleep.begin_idle(1), Idle::Search);
        assert_eq!(sleep.begin_idle(2), Idle::Registered);
        assert_eq!(sleep.begin_idle(3), Idle::Registered);
        let counts = sleep.counts();
        assert_eq!(
            (counts.searching, counts.unclaimed, counts.sleeping),
            (2, 2, 2)
        );
    }

    #[test]
    fn notify_claims_unclaimed_searchers_before_waking_sleepers() {
        let sleep = Sleep::new(3, 1).newest_sleeper_first();
        assert_eq!(sleep.begin_idle(0), Idle::Search);
        assert_eq!(sleep.begin_idle(1), Idle::Registered);
        assert_eq!(sleep.begin_idle(2), Idle::Registered);
        assert!(
            !sleep.notify_work(),
            "the unclaimed searcher covers the first task"
        );
        assert!(
            sleep.notify_work(),
            "the second task wakes a sleeper itself"
        );
        assert!(
            !sleep.notify_work(),
            "the third task's wake is owed by the woken one"
        );
        assert!(!sleep.notify_work(), "nobody left to wake");
        let counts = sleep.counts();
        assert_eq!((counts.sleeping, counts.owed, counts.in_flight), (1, 1, 1));
        // The sleepers list is a stack: worker 2 was woken first, and it makes
        // the owed wake (of worker 1) before its park returns.
        assert_eq!(sleep.park(2, &|| true), Wake::Searching);
        assert_eq!(sleep.park(1, &|| true), Wake::Searching);
        let counts = sleep.counts();
        assert_eq!(
            (counts.searching, counts.unclaimed, counts.sleeping),
            (3, 0, 0)
        );
        assert_eq!((counts.owed, counts.in_flight), (0, 0));
    }

    #[test]
    fn direct_wakes_have_every_notify_wake_a_sleeper_itself() {
        let mut sleep = Sleep::new(3, 1);
        sleep.set_wakes(Wakes::Direct);
        assert_eq!(sleep.begin_idle(0), Idle::Search);
        assert_eq!(sleep.begin_idle(1), Idle::Registered);
        assert_eq!(sleep.begin_idle(2), Idle::Registered);
        sleep.give_up_search(0);
        assert!(sleep.notify_work(), "the first task wakes a sleeper");
        assert!(
            sleep.notify_work(),
            "the second one too, with the first woken worker in flight"
        );
        assert!(sleep.notify_work(), "and the third");
        assert!(!sleep.notify_work(), "nobody left to wake");
        let counts = sleep.counts();
        assert_eq!(
            (counts.sleeping, counts.owed, counts.in_flight),
            (0, 0, 3),
            "nothing owed"
        );
        for index in 0..3 {
            assert_eq!(sleep.park(index, &|| true), Wake::Searching);
        }
        let counts = sleep.counts();
        assert_eq!((counts.searching, counts.owed, counts.in_flight), (3, 0, 0));
    }

    #[test]
    fn cancel_withdraws_or_returns_the_wake_that_won() {
        let sleep = Sleep::new(2, 1);
        assert_eq!(sleep.begin_idle(0), Idle::Search);
        sleep.give_up_search(0);
        assert_eq!(sleep.cancel(0, &|| true), None);
        assert_eq!(sleep.counts().sleeping, 0);
        assert_eq!(sleep.begin_idle(0), Idle::Search);
        sleep.give_up_search(0);
        assert!(sleep.notify_work());
        assert_eq!(sleep.cancel(0, &|| true), Some(Wake::Searching));
    }

    #[test]
    fn wake_worker_only_wakes_registered_workers() {
        let sleep = Sleep::new(2, 1);
        assert!(!sleep.wake_worker(1));
        assert_eq!(sleep.begin_idle(0), Idle::Search);
        assert_eq!(sleep.begin_idle(1), Idle::Registered);
        assert!(sleep.wake_worker(1));
        assert_eq!(sleep.park(1, &|| true), Wake::Direct);
        assert_eq!(sleep.counts().sleeping, 0);
    }

    #[test]
    fn last_searcher_wakes_a_sleeper_only_for_visible_work() {
        let sleep = Sleep::new(2, 1);
        assert_eq!(sleep.begin_idle(0), Idle::Search);
        assert_eq!(sleep.begin_idle(1), Idle::Registered);
        sleep.end_search(|| false);
        assert_eq!(sleep.counts().sleeping, 1);
        assert_eq!(sleep.begin_idle(0), Idle::Search);
        sleep.end_search(|| true);
        assert_eq!(sleep.counts().sleeping, 0);
        assert_eq!(sleep.park(1, &|| true), Wake::Searching);
    }

    #[test]
    fn owed_wakes_for_tasks_already_taken_are_cancelled() {
        // As in the owed-wake test: three sleepers, three tasks notified.
        let sleep = Sleep::new(3, 1).newest_sleeper_first();
        for index in 0..3 {
            if sleep.begin_idle(index) == Idle::Search {
                sleep.give_up_search(index);
            }
        }
        assert!(sleep.notify_work());
        assert!(!sleep.notify_work());
        let counts = sleep.counts();
        assert_eq!((counts.sleeping, counts.owed, counts.in_flight), (2, 1, 1));
        // The woken worker finds the queues empty (the tasks were taken): it
        // cancels the owed wake instead of waking a worker for nothing.
        assert_eq!(sleep.park(2, &|| false), Wake::Searching);
        let counts = sleep.counts();
        assert_eq!((counts.sleeping, counts.owed, counts.in_flight), (2, 0, 0));
        // Work that shows up between the first look and the RMW is not lost:
        // the look after the fence wakes a sleeper for it.
        assert!(
            sleep.notify_work(),
            "nobody in flight: the notifier wakes one"
        );
        assert!(!sleep.notify_work());
        let looks = std::cell::Cell::new(0);
        let late_work = || {
            looks.set(looks.get() + 1);
            looks.get() > 1
        };
        assert_eq!(sleep.park(1, &late_work), Wake::Searching);
        let counts = sleep.counts();
        assert_eq!((counts.sleeping, counts.owed, counts.in_flight), (0, 0, 1));
    }

    /// A sleeper list of `cpus.len()` workers, registered in that order
    /// (the last newest), each on the CPU given.
    fn sleepers_on(sleep: &Sleep, cpus: &[u32]) -> Vec<usize> {
        for (index, &cpu) in cpus.iter().enumerate() {
            sleep.slots[index].parked_on.store(cpu, Ordering::Relaxed);
        }
        (0..cpus.len()).collect()
    }

    #[test]
    fn a_worker_wakes_a_sleeper_that_registered_on_another_cpu() {
        let sleep = Sleep::new(4, 1);
        let mut sleepers = sleepers_on(&sleep, &[1, 0, 1, 0]);
        let away_from_0 = Steer {
            waker_cpu: 0,
            away: true,
        };
        assert_eq!(sleep.take_sleeper(&mut sleepers, away_from_0), Some(2));
        assert_eq!(sleepers, [0, 1, 3], "the others keep their order");
        assert_eq!(sleep.take_sleeper(&mut sleepers, away_from_0), Some(0));
        // Only sleepers on the waker's CPU left: the newest.
        assert_eq!(sleep.take_sleeper(&mut sleepers, away_from_0), Some(3));
        assert_eq!(sleep.take_sleeper(&mut sleepers, away_from_0), Some(1));
        assert_eq!(sleep.take_sleeper(&mut sleepers, away_from_0), None);
    }

    #[test]
    fn a_thread_outside_wakes_a_sleeper_that_registered_on_its_cpu() {
        let sleep = Sleep::new(3, 1);
        let mut sleepers = sleepers_on(&sleep, &[0, 1, 1]);
        let onto_0 = Steer {
            waker_cpu: 0,
            away: false,
        };
        assert_eq!(sleep.take_sleeper(&mut sleepers, onto_0), Some(0));
        assert_eq!(sleep.take_sleeper(&mut sleepers, onto_0), Some(2));
    }

    #[test]
    fn a_wake_with_no_known_cpu_takes_the_newest_sleeper() {
        let sleep = Sleep::new(3, 1);
        let mut sleepers = sleepers_on(&sleep, &[1, 2, u32::MAX]);
        let unknown = Steer {
            waker_cpu: u32::MAX,
            away: true,
        };
        assert_eq!(sleep.take_sleeper(&mut sleepers, unknown), Some(2));
        assert_eq!(sleep.take_sleeper(&mut sleepers, unknown), Some(1));
    }

    #[test]
    fn a_wake_looks_at_the_newest_few_sleepers_only() {
        let workers = SLEEPERS_LOOKED_AT + 2;
        let sleep = Sleep::new(workers, 1);
        // The oldest two registered elsewhere, every newer one on CPU 0.
        let mut cpus = vec![0; workers];
        cpus[0] = 1;
        cpus[1] = 1;
        let mut sleepers = sleepers_on(&sleep, &cpus);
        let away_from_0 = Steer {
            waker_cpu: 0,
            away: true,
        };
        assert_eq!(
            sleep.take_sleeper(&mut sleepers, away_from_0),
            Some(workers - 1),
            "no preferred sleeper among the newest {SLEEPERS_LOOKED_AT}"
        );
        assert_eq!(
            sleep.take_sleeper(&mut sleepers, away_from_0),
            Some(1),
            "one now within reach"
        );
    }

    #[test]
    fn a_wake_from_outside_takes_the_favourite_before_its_cpu() {
        let sleep = Sleep::new(3, 1);
        let mut sleepers = sleepers_on(&sleep, &[1, 0, 0]);
        let onto_0 = Steer {
            waker_cpu: 0,
            away: false,
        };
        sleep.favour_for_outside_wakes(Some(0));
        assert_eq!(
            sleep.take_sleeper(&mut sleepers, onto_0),
            Some(0),
            "the favourite, though it registered on another CPU"
        );
        assert_eq!(sleepers, [1, 2], "the others keep their order");
        // The favourite is awake now: the CPU decides.
        assert_eq!(sleep.take_sleeper(&mut sleepers, onto_0), Some(2));
        sleep.favour_for_outside_wakes(None);
        let mut sleepers = sleepers_on(&sleep, &[1, 0, 0]);
        assert_eq!(
            sleep.take_sleeper(&mut sleepers, onto_0),
            Some(2),
            "no favourite: the newest on the waker's CPU"
        );
    }

    #[test]
    fn a_crowded_pool_takes_the_favourite_of_the_callers_cpu_only_there() {
        let mut sleep = Sleep::new(4, 1);
        sleep.favour_by_cpu();
        let onto = |cpu| Steer {
            waker_cpu: cpu,
            away: false,
        };
        // Worker 0 ran the last call that ended on CPU 0, worker 1 the last
        // on CPU 1; workers 2 and 3 are the newest on each CPU.
        sleep.favour_on(0, Some(0));
        sleep.favour_on(1, Some(1));
        let mut sleepers = sleepers_on(&sleep, &[0, 1, 0, 1]);
        assert_eq!(sleep.take_sleeper(&mut sleepers, onto(1)), Some(1));
        assert_eq!(sleep.take_sleeper(&mut sleepers, onto(0)), Some(0));
        assert_eq!(sleepers, [2, 3], "the others keep their order");
        // CPU 0's favourite registered on CPU 1 since: the CPU decides.
        let mut sleepers = sleepers_on(&sleep, &[1, 1, 0, 1]);
        assert_eq!(
            sleep.take_sleeper(&mut sleepers, onto(0)),
            Some(2),
            "the newest on the caller's CPU, not its favourite elsewhere"
        );
        // A CPU that shares CPU 0's entry never takes CPU 0's favourite.
        let shares_0 = u32::try_from(FAVOURITE_CPUS).unwrap();
        let mut sleepers = sleepers_on(&sleep, &[0, 1, shares_0, 1]);
        assert_eq!(sleep.take_sleeper(&mut sleepers, onto(shares_0)), Some(2));
        // A short call on CPU 1 clears CPU 1's alone.
        sleep.favour_on(1, None);
        assert_eq!(sleep.outside_favourites(), [0]);
    }

    #[test]
    fn a_worker_wakes_by_cpu_whatever_the_favourite() {
        let sleep = Sleep::new(3, 1);
        let mut sleepers = sleepers_on(&sleep, &[0, 1, 0]);
        sleep.favour_for_outside_wakes(Some(0));
        let away_from_0 = Steer {
            waker_cpu: 0,
            away: true,
        };
        assert_eq!(sleep.take_sleeper(&mut sleepers, away_from_0), Some(1));
        assert_eq!(sleep.take_sleeper(&mut sleepers, away_from_0), Some(2));
    }

    #[test]
    fn with_no_known_cpu_a_wake_from_outside_still_takes_the_favourite() {
        let sleep = Sleep::new(3, 1);
        let mut sleepers = sleepers_on(&sleep, &[u32::MAX; 3]);
        let from_outside = Steer {
            waker_cpu: u32::MAX,
            away: false,
        };
        sleep.favour_for_outside_wakes(Some(1));
        assert_eq!(sleep.take_sleeper(&mut sleepers, from_outside), Some(1));
        assert_eq!(
            sleep.take_sleeper(&mut sleepers, from_outside),
            Some(2),
            "then the newest"
        );
    }

    #[test]
    fn the_favourite_is_looked_for_among_the_newest_few_only() {
        let workers = SLEEPERS_LOOKED_AT + 2;
        let sleep = Sleep::new(workers, 1);
        let mut sleepers = sleepers_on(&sleep, &vec![0; workers]);
        sleep.favour_for_outside_wakes(Some(1));
        let onto_0 = Steer {
            waker_cpu: 0,
            away: false,
        };
        assert_eq!(
            sleep.take_sleeper(&mut sleepers, onto_0),
            Some(workers - 1),
            "the favourite is not among the newest {SLEEPERS_LOOKED_AT}"
        );
        assert_eq!(
            sleep.take_sleeper(&mut sleepers, onto_0),
            Some(1),
            "now it is"
        );
    }

    #[test]
    fn a_sleeper_records_the_cpu_it_registered_on() {
        let sleep = Sleep::new(2, 1);
        assert_eq!(sleep.begin_idle(0), Idle::Search);
        assert_eq!(sleep.begin_idle(1), Idle::Registered);
        let recorded = sleep.slots[1].parked_on.load(Ordering::Relaxed);
        let now = current_cpu();
        if cfg!(all(target_os = "linux", not(miri))) {
            // The thread may have moved between the two reads; a CPU is
            // recorded either way.
            assert_ne!(recorded, u32::MAX, "a CPU is recorded on Linux");
            assert_ne!(now, u32::MAX);
        } else {
            assert_eq!(recorded, u32::MAX);
        }
    }
}
