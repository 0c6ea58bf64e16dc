//! loom checks the state machine of a fiber's wait (fiber.rs, "The wait's
//! state machine") as it ships: `FiberCell` and its seat's `Resumable`
//! list, over loom's atomics and mutex. A stack switch is no loom step, so
//! the waiting thread plays both the fiber and its dispatcher: where the
//! fiber would suspend, it waits for its id to come off the seat's list,
//! which is the only way the dispatcher resumes a suspended fiber.
//!
//! A lost wake shows as that thread spinning for ever with the condition
//! true and nothing queued (loom reports the model as not terminating); a
//! fiber queued twice, or queued while it runs, leaves an id on the list
//! at the end.

use std::sync::Arc;

use loom::sync::atomic::{AtomicBool, Ordering};
use loom::thread;

use crate::sched::fiber::FiberCell;
use crate::sched::registry::Registry;
use crate::sched::worker_loom_tests::loom_registry;

/// A fiber's wait on `ready`, as `Fibers::suspend_until` runs it; returns
/// how often it suspended.
fn wait_as_fiber(cell: &FiberCell, registry: &Registry, ready: &AtomicBool) -> usize {
    let mut suspensions = 0;
    loop {
        // Relaxed: the cell's swaps carry the ordering (module docs).
        if ready.load(Ordering::Relaxed) {
            return suspensions;
        }
        if !cell.begin_wait() {
            continue;
        }
        suspensions += 1;
        // Suspended: the dispatcher resumes it when it pops its id.
        loop {
            if let Some(id) = registry.resumable(0).pop() {
                assert_eq!(id, 0, "only this fiber was queued");
                break;
            }
            thread::yield_now();
        }
        cell.end_wait();
    }
}

fn cell_of_seat_zero() -> (Arc<Registry>, Arc<FiberCell>) {
    let (registry, _queues) = loom_registry(1);
    let cell = Arc::new(FiberCell::new(Arc::clone(&registry), 0, 0));
    (registry, cell)
}

/// A thread that makes `ready` true, then wakes the fiber.
fn spawn_waker(cell: &Arc<FiberCell>, ready: &Arc<AtomicBool>) -> thread::JoinHandle<()> {
    let (cell, ready) = (Arc::clone(cell), Arc::clone(ready));
    thread::spawn(move || {
        // Relaxed: the condition is published by the wake's swap.
        ready.store(true, Ordering::Relaxed);
        cell.wake();
    })
}

#[test]
fn a_wake_is_never_lost_and_queues_the_fiber_at_most_once() {
    loom::model(|| {
        let (registry, cell) = cell_of_seat_zero();
        let ready = Arc::new(AtomicBool::new(false));
        let waker = spawn_waker(&cell, &ready);
        let suspensions = wait_as_fiber(&cell, &registry, &ready);
        waker.join().unwrap();
        assert!(suspensions <= 1, "one wake resumes one suspension");
        assert_eq!(registry.resumable(0).pop(), None, "nothing left queued");
    });
}

#[test]
fn a_stale_wake_beside_the_real_one_resumes_at_most_spuriously() {
    loom::model(|| {
        let (registry, cell) = cell_of_seat_zero();
        let ready = Arc::new(AtomicBool::new(false));
        // A waker from an earlier wait of the same fiber, late.
        let stale = {
            let cell = Arc::clone(&cell);
            thread::spawn(move || cell.wake())
        };
        let waker = spawn_waker(&cell, &ready);
        let suspensions = wait_as_fiber(&cell, &registry, &ready);
        stale.join().unwrap();
        waker.join().unwrap();
        assert!(suspensions <= 2, "each wake resumes at most one suspension");
        assert_eq!(registry.resumable(0).pop(), None, "nothing left queued");
    });
}
