//! The spare seats of a pool: threads that stand in for a worker while it is
//! inside `weft::blocking` (blocking.rs lends them; this module keeps them).
//!
//! # How a blocking call keeps the pool's capacity
//!
//! Besides its `workers` seats, a pool has `max_blocking` *spare seats*:
//! counters and a parking slot each, allocated at build time, and queues,
//! a join stack and resumable fibers (the registry's `SpareSeat`), made
//! when the seat gets its thread, the first time it is needed.
//! `weft::blocking` on a worker lends the calling worker a spare: the spare
//! thread runs the ordinary worker loop on its own seat — its own queue first,
//! then stealing from every other queue, including the blocked worker's — and
//! takes part in the wake protocol exactly like a worker, so work arriving
//! while the caller blocks wakes it or is found by it. When the call returns,
//! the caller marks the spare *retiring* and wakes it if it sleeps; the caller
//! goes on at once with its own seat (it never gave it away), and the spare
//! leaves the worker loop when it next stands between tasks, then waits,
//! parked and off the protocol, to be lent again. A blocking call that starts
//! before a retiring spare has left takes it over instead (one CAS decides
//! between the two), so back-to-back calls keep their stand-in.
//!
//! Why a second seat rather than handing the caller's own queue to the spare:
//! the caller would then have to wait for the spare to hand it back, and the
//! spare may be inside a task that waits for what the caller does next.
//! With a seat of its own, nobody waits for anybody.
//!
//! # What it keeps of the protocol's invariants
//!
//! The protocol (`sleep.rs`) never asks *which* thread holds a seat, only that
//! each registered seat is parked on its own slot and that a working seat will
//! look at the queues before it sleeps. A spare seat not in use is neither
//! working nor registered, so no wake can be owed to it; a seat in use is a
//! worker like the others. Leaving happens only at the top of the worker loop
//! (after `end_search` if it was searching), where a worker stands between
//! tasks with nothing owed, and the leaving spare then *hands off*
//! ([`WorkerThread::hand_off`]): it looks at the queues once more and
//! notifies for what it sees. A worker whose wait ends goes back to its
//! task and looks at the queues again before it next sleeps; a spare that
//! leaves never does, yet notifiers counted on it as on a working seat, or
//! claimed it as a searcher (its wait may end between the claim and its
//! sweep). Its look comes after its last RMW on the protocol's state and a
//! fence, so by the Dekker argument of invariant 1 it sees every task whose
//! notifier read the state before that RMW. A notifier that reads it after
//! finds the spare neither searching nor sleeping, the case "every worker is
//! working" of invariant 1, which still holds: the spare's borrower is back
//! at work by then (it retires the spare before the spare can leave), and
//! looks at the queues before it next sleeps. While a worker blocks, its pinned queue (`spawn_on`)
//! waits for it: pinned tasks are by definition never run elsewhere.
//!

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

use crate::facade::thread::JoinHandle as ThreadHandle;
use crate::facade::{AtomicU8, AtomicUsize, Condvar, Mutex, Ordering};

use crate::facade::{lock, wait};
use crate::sched::registry::Registry;
use crate::sched::threads::ThreadSetup;
use crate::sched::unwind::Payload;
use crate::sched::worker::SeatQueues;

/// What a spare thread is told to do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Order {
    /// Wait to be lent.
    Wait,
    /// Run the worker loop on your seat until `retire` is set.
    Work,
    /// The pool has ended: leave.
    Exit,
}

/// Where a lent spare stands (`SpareSlot::duty`).
const WORKING: u8 = 0;
/// Its borrower's call returned; another borrower may still take it over.
const RETIRING: u8 = 1;
/// It committed to leave the worker loop; it will be idle shortly.
const LEAVING: u8 = 2;

/// One spare thread's mailbox.
struct SpareSlot {
    seat: usize,
    order: Mutex<Order>,
    condvar: Condvar,
    /// WORKING, RETIRING or LEAVING while lent. SeqCst: RETIRING is paired with
    /// the spare's registration as a sleeper (see `Lent::retire`); the
    /// takeover and leave CASes decide one winner between borrower and spare.
    duty: AtomicU8,
}

impl SpareSlot {
    /// The spare's exit condition: its borrower is done, and nobody took it
    /// over before it committed to leave.
    fn may_leave(&self) -> bool {
        match self.duty.load(Ordering::SeqCst) {
            LEAVING => true,
            RETIRING => self
                .duty
                .compare_exchange(RETIRING, LEAVING, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok(),
            _ => false,
        }
    }

    /// A new borrower takes over a retiring spare that has not left yet.
    fn take_over(&self) -> bool {
        self.duty
            .compare_exchange(RETIRING, WORKING, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    fn give(&self, order: Order) {
        *lock(&self.order) = order;
        self.condvar.notify_one();
    }

    /// Blocks until lent (true) or told to exit (false).
    fn next_order(&self) -> bool {
        let mut order = lock(&self.order);
        loop {
            match *order {
                Order::Work => {
                    *order = Order::Wait;
                    return true;
                }
                Order::Exit => return false,
                Order::Wait => {
                    order = wait(&self.condvar, order);
                }
            }
        }
    }
}

/// A spare lent to one blocking call.
pub(crate) struct Lent {
    slot: Arc<SpareSlot>,
}

impl Lent {
    /// Tells the spare to stop standing in, waking it if it sleeps. Does not
    /// wait: the spare leaves when it next stands between tasks.
    pub(crate) fn retire(self, registry: &Registry) {
        self.slot.duty.store(RETIRING, Ordering::SeqCst);
        // Pairs with the spare's *register; fence; check `retire`* in the
        // worker loop: either it sees the flag, or we see it registered.
        registry.sleep.wake_worker(self.slot.seat);
    }
}

struct SpareState {
    idle: Vec<Arc<SpareSlot>>,
    /// Spares out on loan (including retiring and leaving ones).
    lent: Vec<Arc<SpareSlot>>,
    threads: Vec<ThreadHandle<()>>,
    shut_down: bool,
}

/// The spare seats of one pool.
pub(crate) struct Spares {
    first_seat: usize,
    /// How many spare seats the pool has.
    seats: usize,
    /// Seats whose thread was started (or failed to start): the registry's
    /// searches look at the queues of `first_seat + started` seats. Written
    /// under `state`'s lock only.
    started: AtomicUsize,
    state: Mutex<SpareState>,
    /// Signalled when a leaving spare is back (see `lend`).
    returned: Condvar,
    threads: ThreadSetup,
}

impl Spares {
    /// `seats` spare seats, numbered from `first_seat`, none made yet.
    pub(crate) fn new(first_seat: usize, seats: usize, threads: ThreadSetup) -> Spares {
        Spares {
            first_seat,
            seats,
            started: AtomicUsize::new(0),
            state: Mutex::new(SpareState {
                idle: Vec::new(),
                lent: Vec::new(),
                threads: Vec::new(),
                shut_down: false,
            }),
            returned: Condvar::new(),
            threads,
        }
    }

    /// How many spare seats the pool has, started or not.
    pub(crate) fn seats(&self) -> usize {
        self.seats
    }

    /// Spare seats that may hold tasks. Acquire: pairs with the Release in
    /// `start_spare`. A search must see a seat before the tasks pushed
    /// there, and it does: the count is raised before the seat's thread
    /// starts, so it happens before any push the searcher is bound to see.
    /// And the seat's parts exist for whoever sees it counted: they were
    /// made before the Release (registry.rs, `make_spare_seat`).
    pub(crate) fn started(&self) -> usize {
        self.started.load(Ordering::Acquire)
    }

    fn lock(&self) -> crate::facade::MutexGuard<'_, SpareState> {
        lock(&self.state)
    }

    /// Lends a spare: an idle one, else a retiring one taken over before it
    /// leaves, else a new one. Waits for one that is leaving right now rather
    /// than go without (back-to-back blocking calls would otherwise miss the
    /// spare the previous call just released). `None` if every seat is busy,
    /// the pool has ended, or a thread failed to start.
    ///
    /// `caller` is the seat of the thread that blocks: a spare that blocks
    /// while retiring must not take itself over.
    pub(crate) fn lend(&self, registry: &Arc<Registry>, caller: usize) -> Option<Lent> {
        // Panics of the user's code run while starting a spare (its name)
        // go to the pool's handler once our lock is released: the handler
        // may itself make a blocking call.
        let mut panics = Vec::new();
        let lent = self.lend_locked(registry, caller, &mut panics);
        for payload in panics {
            registry.handle_panic(payload);
        }
        lent
    }

    fn lend_locked(
        &self,
        registry: &Arc<Registry>,
        caller: usize,
        panics: &mut Vec<Payload>,
    ) -> Option<Lent> {
        let mut state = self.lock();
        loop {
            if state.shut_down {
                return None;
            }
            if let Some(slot) = state.idle.pop() {
                slot.duty.store(WORKING, Ordering::SeqCst);
                state.lent.push(Arc::clone(&slot));
                drop(state);
                slot.give(Order::Work);
                return Some(Lent { slot });
            }
            if let Some(slot) = state
                .lent
                .iter()
                .find(|slot| slot.seat != caller && slot.take_over())
            {
                return Some(Lent {
                    slot: Arc::clone(slot),
                });
            }
            // Relaxed: `started` is written under the lock we hold.
            if self.started.load(Ordering::Relaxed) < self.seats {
                return self.start_spare(&mut state, registry, panics);
            }
            if !state
                .lent
                .iter()
                .any(|slot| slot.duty.load(Ordering::SeqCst) == LEAVING)
            {
                return None;
            }
            state = wait(&self.returned, state);
        }
    }

    fn start_spare(
        &self,
        state: &mut SpareState,
        registry: &Arc<Registry>,
        panics: &mut Vec<Payload>,
    ) -> Option<Lent> {
        // Relaxed: `started` is written under the lock we hold.
        let started = self.started.load(Ordering::Relaxed);
        let seat = self.first_seat + started;
        // The seat's parts first, then the count: whoever sees the seat
        // counted finds them made.
        let local = registry.make_spare_seat(seat);
        // Release pairs with `started`'s Acquire; the count rises before the
        // seat's thread starts, so before anything is pushed to its queues.
        self.started.store(started + 1, Ordering::Release);
        let slot = Arc::new(SpareSlot {
            seat,
            order: Mutex::new(Order::Work),
            condvar: Condvar::new(),
            duty: AtomicU8::new(WORKING),
        });
        // The user's naming closure runs under our lock, inside a blocking
        // call: if it panics, the spare takes the default name and the panic
        // goes to the pool's handler.
        let name = match panic::catch_unwind(AssertUnwindSafe(|| self.threads.name(seat))) {
            Ok(name) => name,
            Err(payload) => {
                panics.push(payload);
                self.threads.default_name(seat)
            }
        };
        let thread = self.threads.builder(name);
        let (thread_registry, thread_slot) = (Arc::clone(registry), Arc::clone(&slot));
        let setup = self.threads.clone();
        registry.count_start_hook();
        // `spawn` panics on some names (an interior NUL): that counts as a
        // thread that could not start, and the panic goes to the handler.
        let spawned = panic::catch_unwind(AssertUnwindSafe(|| {
            thread.spawn(move || {
                let _policy = setup.enter_policy();
                spare_main(thread_registry, thread_slot, local)
            })
        }));
        match spawned {
            Ok(Ok(handle)) => {
                state.threads.push(handle);
                state.lent.push(Arc::clone(&slot));
                Some(Lent { slot })
            }
            // The seat stays counted in `started`, with an empty queue no one
            // pushes to: harmless, and rare enough not to reuse.
            Ok(Err(_)) => {
                registry.start_hook_refused();
                None
            }
            Err(payload) => {
                registry.start_hook_refused();
                panics.push(payload);
                None
            }
        }
    }

    /// A spare that left the worker loop waits to be lent again. Returns false
    /// if the pool ended meanwhile (the thread then leaves).
    fn back_to_idle(&self, slot: &Arc<SpareSlot>) -> bool {
        let mut state = self.lock();
        state.lent.retain(|lent| !Arc::ptr_eq(lent, slot));
        self.returned.notify_all();
        if state.shut_down {
            return false;
        }
        state.idle.push(Arc::clone(slot));
        true
    }

    /// The pool has drained: no spare is lent any more, and idle spares leave
    /// (running their stop hooks on the way out). Returns how many spare
    /// threads were ever started, each of which runs its stop hook once.
    pub(crate) fn shut_down(&self) -> usize {
        let mut state = self.lock();
        state.shut_down = true;
        for slot in state.idle.drain(..) {
            slot.give(Order::Exit);
        }
        state.threads.len()
    }

    /// Waits for every spare thread to leave (after `shut_down`).
    pub(crate) fn join(&self) {
        let threads = std::mem::take(&mut self.lock().threads);
        for thread in threads {
            let _ = thread.join();
        }
    }
}

fn spare_main(registry: Arc<Registry>, slot: Arc<SpareSlot>, local: SeatQueues) {
    let seat = slot.seat;
    crate::sched::worker::run_seat(registry, seat, local, |worker| {
        let registry = worker.registry_arc();
        while slot.next_order() {
            worker.wait_until(&|| slot.may_leave() || registry.is_stopping());
            worker.hand_off();
            // A worker's last act before it sleeps is this check; a spare
            // leaving the loop may have run the pool's last task, so it must
            // make the check too, or a closed pool would never see it drained.
            registry.terminate_if_drained();
            if !registry.spares.back_to_idle(&slot) {
                break;
            }
        }
        // The pool is stopping (registry.rs, "Shutdown"): the spare's stop
        // hook, then the check a leaving spare owes.
        worker.run_stop_hook();
        registry.terminate_if_drained();
    });
}
