//! The nearest equivalent of marl's WaitGroup, Event and Ticket queue for
//! pools that offer none (rayon, threadpool; tokio's outside waiter): what a
//! user would write with std's Mutex + Condvar, and the notes of the
//! adapters that use them.

use super::{Cap, EventLike, Support, TicketLike, TicketQueueLike, WaitGroupLike};
use std::sync::{Arc, Condvar, Mutex};

/// The note of a pool whose submitter waits on [`CondvarWaitGroup`].
pub const CONDVAR_WAIT_GROUP: &str = "std Mutex+Condvar counter (no wait group of its own)";

/// What a pool of closures with no waits, futures or stand-in of its own
/// (rayon, threadpool) supports, given how it spawns and whether it joins:
/// these equivalents stand in for the waits, which block the worker.
pub fn closure_pool(cap: Cap, spawn: &'static str, fork_join: Support) -> Support {
    use Support::{Has, Lacks};
    match cap {
        Cap::Spawn => Has(spawn),
        Cap::ForkJoin => fork_join,
        Cap::WaitGroup => Has(CONDVAR_WAIT_GROUP),
        Cap::TaskEvent => Has("std Mutex+Condvar auto-reset event, blocking the worker"),
        Cap::TaskTicket => Has("chain of std Mutex+Condvar gates, blocking the worker"),
        Cap::FreeingWaits => Lacks("a wait blocks its worker's thread: no fibers, no futures"),
        Cap::Futures | Cap::YieldNow | Cap::WakeAll => {
            Lacks("no futures: runs closures only (a blocking executor per task is not a peer)")
        }
        Cap::StandIn => Lacks("no stand-in: a blocking call holds its worker"),
        Cap::Floor => Lacks("a scheduler: the std row is the floor"),
        Cap::ParIter => Lacks("no parallel iterators: runs closure tasks only"),
        Cap::ScopeSpawn => Lacks("no scope: every task must be 'static"),
    }
}

#[derive(Clone, Default)]
pub struct CondvarWaitGroup(Arc<(Mutex<usize>, Condvar)>);

impl WaitGroupLike for CondvarWaitGroup {
    fn new() -> Self {
        Self::default()
    }

    fn add(&self, n: usize) {
        *self.0 .0.lock().unwrap() += n;
    }

    fn done(&self) {
        let mut count = self.0 .0.lock().unwrap();
        *count -= 1;
        if *count == 0 {
            self.0 .1.notify_all();
        }
    }

    fn wait(&self) {
        let mut count = self.0 .0.lock().unwrap();
        while *count > 0 {
            count = self.0 .1.wait(count).unwrap();
        }
    }
}

/// Auto-reset event: a flag that `wait` clears.
#[derive(Clone, Default)]
pub struct CondvarEvent(Arc<(Mutex<bool>, Condvar)>);

impl EventLike for CondvarEvent {
    fn new_auto() -> Self {
        Self::default()
    }

    fn signal(&self) {
        *self.0 .0.lock().unwrap() = true;
        self.0 .1.notify_one();
    }

    fn wait(&self) {
        let mut set = self.0 .0.lock().unwrap();
        while !*set {
            set = self.0 .1.wait(set).unwrap();
        }
        *set = false;
    }
}

/// A one-shot gate that stays open once opened.
#[derive(Default)]
struct Gate {
    open: Mutex<bool>,
    cv: Condvar,
}

impl Gate {
    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.cv.notify_all();
    }

    fn wait(&self) {
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.cv.wait(open).unwrap();
        }
    }
}

/// Ticket queue as a chain of gates: a ticket waits on its own gate and its
/// `done` opens the next ticket's, so each hand-over wakes exactly one waiter.
pub struct CondvarTicketQueue {
    tail: Mutex<Arc<Gate>>,
}

pub struct CondvarTicket {
    mine: Arc<Gate>,
    next: Arc<Gate>,
}

impl TicketQueueLike for CondvarTicketQueue {
    type Ticket = CondvarTicket;

    fn new() -> Self {
        let first = Gate::default();
        first.open();
        CondvarTicketQueue {
            tail: Mutex::new(Arc::new(first)),
        }
    }

    fn take(&self) -> CondvarTicket {
        let next = Arc::new(Gate::default());
        let mut tail = self.tail.lock().unwrap();
        let mine = std::mem::replace(&mut *tail, next.clone());
        CondvarTicket { mine, next }
    }
}

impl TicketLike for CondvarTicket {
    fn wait(&self) {
        self.mine.wait();
    }

    fn done(self) {
        self.next.open();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn tickets_are_served_in_order() {
        let q = CondvarTicketQueue::new();
        let order = Arc::new(AtomicUsize::new(0));
        let tickets: Vec<_> = (0..8).map(|_| q.take()).collect();
        std::thread::scope(|s| {
            for (i, t) in tickets.into_iter().enumerate().rev() {
                let order = order.clone();
                s.spawn(move || {
                    t.wait();
                    assert_eq!(order.fetch_add(1, Ordering::SeqCst), i);
                    t.done();
                });
            }
        });
        q.take().wait();
        assert_eq!(order.load(Ordering::SeqCst), 8);
    }
}
