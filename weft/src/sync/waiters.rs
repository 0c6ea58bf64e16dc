//! The list of threads blocked on one primitive, shared by every primitive of
//! this module: registering a wait, handing a release to exactly one (or to
//! every) registered wait, blocking (helping on a worker), and withdrawing a
//! wait that timed out.
//!
//! A release is handed to a particular registration (its [`Slot`]) rather than
//! published as "some waiter may go now": a woken waiter then never has to
//! race other waiters to consume it, and the check it repeats while blocked is
//! a plain flag that stays true (`block_until` may evaluate it more than once).

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use crate::waiter::{block_until, Waiter};

/// Locks a mutex of this module, or a user's mutex handed to a `Condvar`.
///
/// Poisoning is ignored: the primitives' own state is only changed by code that
/// cannot panic half-way, and a `Condvar` hands the guard back to its caller
/// just as `wait` received it (the caller's data is the caller's to judge).
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One registered wait.
pub(super) struct Slot {
    /// Set, under the lock that guards the owning list, when this wait is
    /// released; never cleared.
    released: AtomicBool,
    waiter: Waiter,
}

impl Slot {
    /// Whether this wait was released. Acquire pairs with the releaser's store,
    /// so the state it changed before releasing is visible to the waiter.
    pub(super) fn is_released(&self) -> bool {
        self.released.load(Ordering::Acquire)
    }
}

/// The waits registered on one primitive, oldest first.
#[derive(Default)]
pub(super) struct WaiterList {
    slots: VecDeque<Arc<Slot>>,
}

impl fmt::Debug for WaiterList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WaiterList")
            .field("len", &self.slots.len())
            .finish()
    }
}

impl WaiterList {
    /// Registers the calling thread. Call with the primitive's condition checked
    /// false under the same lock that guards this list.
    pub(super) fn register(&mut self) -> Arc<Slot> {
        let slot = Arc::new(Slot {
            released: AtomicBool::new(false),
            waiter: Waiter::current(),
        });
        self.slots.push_back(Arc::clone(&slot));
        slot
    }

    pub(super) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Releases the oldest wait, if any. The returned value must be woken after
    /// the lock guarding this list is released.
    pub(super) fn release_one(&mut self) -> Released {
        let mut released = Released::default();
        if let Some(slot) = self.slots.pop_front() {
            released.push(slot);
        }
        released
    }

    /// Releases every registered wait; wake the result after unlocking.
    pub(super) fn release_all(&mut self) -> Released {
        let mut released = Released::default();
        for slot in self.slots.drain(..) {
            released.push(slot);
        }
        released
    }

    /// After a wait timed out: removes `slot` unless it was released meanwhile.
    /// Returns whether it was released (then the release belongs to this wait,
    /// which must act as if it had not timed out, or the release would be lost).
    pub(super) fn withdraw(&mut self, slot: &Arc<Slot>) -> bool {
        debug_assert!(
            slot.waiter.same_as(&Waiter::current()),
            "a wait is withdrawn only by the thread that registered it"
        );
        // `released` only changes under the lock the caller holds, so this
        // reading and the removal below cannot be overtaken by a release.
        if slot.is_released() {
            return true;
        }
        if let Some(position) = self.slots.iter().position(|s| Arc::ptr_eq(s, slot)) {
            self.slots.remove(position);
        }
        false
    }
}

/// Waits released under a lock, to be woken once the lock is dropped (so the
/// woken thread does not immediately block on it).
#[must_use = "released waiters must be woken with `wake`"]
#[derive(Default)]
pub(super) struct Released {
    slots: Vec<Arc<Slot>>,
}

impl Released {
    fn push(&mut self, slot: Arc<Slot>) {
        slot.released.store(true, Ordering::Release);
        self.slots.push(slot);
    }

    pub(super) fn append(&mut self, other: Released) {
        self.slots.extend(other.slots);
    }

    pub(super) fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Wakes every released waiter. Their `released` flags were stored before,
    /// so a waiter that misses this wake (it was not parked yet) sees the flag.
    pub(super) fn wake(self) {
        for slot in self.slots {
            slot.waiter.wake();
        }
    }
}

/// Blocks the calling thread (helping, on a worker) until `slot` is released or
/// `deadline` passes; returns whether it was released. `list` finds the list
/// `slot` is registered in, inside the state `mutex` guards, to withdraw it on
/// timeout. Call without holding `mutex`.
pub(super) fn block_on<S>(
    mutex: &Mutex<S>,
    slot: &Arc<Slot>,
    deadline: Option<Instant>,
    list: impl FnOnce(&mut S) -> &mut WaiterList,
) -> bool {
    if block_until(&|| slot.is_released(), deadline) {
        return true;
    }
    let mut state = lock(mutex);
    list(&mut state).withdraw(slot)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_one_goes_to_the_oldest_registration() {
        let mut list = WaiterList::default();
        let first = list.register();
        let second = list.register();
        list.release_one().wake();
        assert!(first.is_released());
        assert!(!second.is_released());
        assert_eq!(list.len(), 1);
    }

    #[test]
    fn withdraw_reports_a_release_that_won_the_race() {
        let mut list = WaiterList::default();
        let slot = list.register();
        list.release_all().wake();
        assert!(list.withdraw(&slot));
        let slot = list.register();
        assert!(!list.withdraw(&slot));
        assert_eq!(list.len(), 0);
    }
}
