//! Waiting: a task's wait on a worker (helping, or blocking its thread
//! when it has no stack left to help on), the wait for a stolen join half,
//! and the worker's own sleep, through the wake/park protocol (sleep.rs).

use std::time::{Duration, Instant};

#[cfg(feature = "trace")]
use crate::sched::recorder::EventKind;
use crate::sched::sleep::{Idle, Wake};

use super::search::Search;
use super::*;

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

/// How long a worker whose `join` half was stolen spins on that half's
/// latch before its task suspends (or, where it cannot, before it helps):
/// about what the suspension costs (a switch to another fiber that runs
/// the worker loop, its look at the queues, a switch back), so the spin
/// costs at most that, and a half of a few hundred nanoseconds (a piece
/// of a small parallel loop) ends within it. docs/TUNING.md has the
/// measurement.
#[cfg(not(loom))]
const STOLEN_HALF_SPIN: Duration = Duration::from_micros(2);

/// Under loom, as `STOLEN_HALF_WATCH`: real time would make the models'
/// runs differ, and the spin only saves time.
#[cfg(loom)]
const STOLEN_HALF_SPIN: Duration = Duration::ZERO;

/// Rounds of the spin between two reads of the clock.
const SPINS_PER_CLOCK_READ: u32 = 16;

impl WorkerThread {
    /// Runs tasks until `done()` holds. Used for the worker's whole life (with
    /// "the pool terminates" as the condition) and by every wait on a worker.
    pub(crate) fn wait_until(&self, done: &dyn Fn() -> bool) {
        self.wait_until_deadline(done, None);
    }

    /// As [`WorkerThread::wait_until`], for a `join` whose second half was
    /// stolen: that half is running on another worker right now, and its end
    /// is what this worker waits for. It first spins on that end for up to
    /// [`STOLEN_HALF_SPIN`], while to the wake protocol it is still a
    /// worker running its task (it neither searches nor sleeps, and its
    /// queues stay open to thieves). When this worker would park, it first
    /// watches for that end for up to [`STOLEN_HALF_WATCH`] (see
    /// [`WorkerThread::sleep_unless`]): at the tail of a fork-join tree two
    /// workers hand the work back and forth, and a park per hand-off would put
    /// a wake-up on the critical path each time.
    pub(crate) fn wait_for_stolen_half(&self, done: &dyn Fn() -> bool) {
        if spin_until(done, STOLEN_HALF_SPIN) {
            // Back to the joining task, which may run long: a poll run
            // before the wait may have filled the `next` slot.
            self.flush_next();
            return;
        }
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
    pub(super) fn wait_loop(
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
        let mut state = LoopState::Working;
        loop {
            if done() || expired() {
                if state != LoopState::Working {
                    sleep.end_search(|| self.registry.has_work_for(self.index));
                }
                // The caller goes back to its own task, which may run long.
                self.flush_next();
                return done();
            }
            if state == LoopState::Working {
                if let Some(job) = self.find_own_work() {
                    self.execute(job);
                    continue;
                }
                match sleep.begin_idle_with(self.index, self.registry.is_lingering()) {
                    Idle::Search => state = LoopState::Searching { woken: false },
                    Idle::Registered => {
                        // Reasons of our own are checked after registering: their
                        // setters wake us only if they see us registered.
                        state = LoopState::after_sleep(self.sleep_unless(
                            done,
                            deadline,
                            watch,
                            |this| this.has_pinned_work(),
                        ));
                        continue;
                    }
                }
            }
            let woken = state == LoopState::Searching { woken: true };
            match self.search(done, deadline, woken) {
                Search::Found(job) => {
                    state = LoopState::Working;
                    sleep.end_search(|| self.registry.has_work_for(self.index));
                    self.execute(job);
                }
                Search::Done => continue,
                Search::GaveUp => {
                    if woken {
                        WorkerCounters::add(&self.stats().wakeups_without_work, 1);
                    }
                    sleep.give_up_search(self.index);
                    // Rule give-up of the protocol: one more sweep after the RMW.
                    state =
                        LoopState::after_sleep(self.sleep_unless(done, deadline, watch, |this| {
                            this.registry.has_work_for(this.index)
                        }));
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
    pub(super) fn wait_without_helping(
        &self,
        done: &dyn Fn() -> bool,
        deadline: Option<Instant>,
    ) -> bool {
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
    pub(super) fn sleep_unless(
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
    pub(super) fn watch_while_registered(&self, done: &dyn Fn() -> bool, watch: Duration) {
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
}

/// Where a waiting worker's loop stands in the wake protocol (sleep.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LoopState {
    /// Running tasks or looking at its own queues: not counted anywhere.
    Working,
    /// Counted in `searching`; `woken` if a wake sent it searching for a
    /// task it has not found yet (for the stats, and a searcher woken for
    /// a task someone else took gives up sooner: worker/search.rs).
    Searching { woken: bool },
}

impl LoopState {
    /// The state after `sleep_unless`, which says whether the worker is now
    /// counted as a searcher: only a wake that sent it searching does that
    /// (else its condition, a reason of its own or work it saw before
    /// blocking ended the sleep, and it is back to work).
    fn after_sleep(woken_to_search: bool) -> LoopState {
        if woken_to_search {
            LoopState::Searching { woken: true }
        } else {
            LoopState::Working
        }
    }
}

/// Spins until `done` holds or `limit` passes; returns whether `done` held.
/// A zero `limit` looks at nothing (under loom, not even one step more);
/// a half that ended already costs no clock read.
fn spin_until(done: &dyn Fn() -> bool, limit: Duration) -> bool {
    if limit.is_zero() {
        return false;
    }
    if done() {
        return true;
    }
    let started = Instant::now();
    let mut spins = 0u32;
    loop {
        std::hint::spin_loop();
        if done() {
            return true;
        }
        spins = spins.wrapping_add(1);
        if spins % SPINS_PER_CLOCK_READ == 0 && started.elapsed() >= limit {
            return false;
        }
    }
}
