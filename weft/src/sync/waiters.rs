//! The list of threads blocked on one primitive, shared by every primitive of
//! this module: registering a wait, handing a release to exactly one (or to
//! every) registered wait, blocking (a task on a worker suspends), and
//! withdrawing a wait that timed out.
//!
//! A release is handed to a particular registration (its [`Slot`]) rather than
//! published as "some waiter may go now": a woken waiter then never has to
//! race other waiters to consume it, and the check it repeats while blocked is
//! a plain flag that stays true (`block_until` may evaluate it more than once).

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use crate::sched::waiter::{block_until, Waiter};

/// Locks a mutex of this module, or a user's mutex handed to a `Condvar`.
///
/// Poisoning is ignored: the primitives' own state is only changed by code that
/// cannot panic half-way, and a `Condvar` hands the guard back to its caller
/// just as `wait` received it (the caller's data is the caller's to judge).
pub(super) use crate::facade::lock;

/// One registered wait.
pub(super) struct Slot {
    /// Set, under the lock that guards the owning list, when this wait is
    /// released; never cleared.
    released: AtomicBool,
    waiter: SlotWaiter,
}

/// Who a registered wait belongs to.
enum SlotWaiter {
    /// A thread blocked in [`block_on`].
    Thread(Waiter),
    /// A future (a `wait_async`): the waker of its latest poll. Replaced under
    /// the lock guarding the owning list; read (cloned) when released.
    Task(Mutex<Waker>),
}

impl Slot {
    /// Whether this wait was released. Acquire pairs with the releaser's store,
    /// so the state it changed before releasing is visible to the waiter.
    pub(super) fn is_released(&self) -> bool {
        self.released.load(Ordering::Acquire)
    }

    /// For a future's wait, polled again: the waker to wake on release is now
    /// `waker`. Call under the lock guarding the owning list, after checking
    /// [`Slot::is_released`] under it, so that a release either comes later
    /// (and wakes `waker`) or was seen.
    pub(super) fn set_waker(&self, waker: &Waker) {
        if let SlotWaiter::Task(current) = &self.waiter {
            let mut current = lock(current);
            if !current.will_wake(waker) {
                *current = waker.clone();
            }
        }
    }

    fn wake(&self) {
        match &self.waiter {
            SlotWaiter::Thread(waiter) => waiter.wake(),
            SlotWaiter::Task(waker) => {
                // Cloned out first: the woken task may poll (and so lock this
                // slot to re-register) before `wake` returns.
                let waker = lock(waker).clone();
                waker.wake();
            }
        }
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
        self.push(SlotWaiter::Thread(Waiter::current()))
    }

    /// Registers a future's wait, woken through `waker` (see
    /// [`Slot::set_waker`] for later polls). Same condition as
    /// [`WaiterList::register`].
    pub(super) fn register_task(&mut self, waker: &Waker) -> Arc<Slot> {
        self.push(SlotWaiter::Task(Mutex::new(waker.clone())))
    }

    fn push(&mut self, waiter: SlotWaiter) -> Arc<Slot> {
        let slot = Arc::new(Slot {
            released: AtomicBool::new(false),
            waiter,
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

    /// After a wait timed out (or a future waiting was dropped): removes
    /// `slot` unless it was released meanwhile. Returns whether it was released
    /// (then the release belongs to this wait, which must act as if it had not
    /// timed out, or pass the release on, or the release would be lost).
    pub(super) fn withdraw(&mut self, slot: &Arc<Slot>) -> bool {
        debug_assert!(
            match &slot.waiter {
                SlotWaiter::Thread(waiter) => waiter.same_as(&Waiter::current()),
                SlotWaiter::Task(_) => true,
            },
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
        // Release: pairs with `is_released`'s Acquire (see there).
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
            slot.wake();
        }
    }
}

/// The registration of a future waiting on a primitive (a `wait_async`):
/// registered on its first pending poll, its waker replaced on each later one.
/// The primitive's future withdraws it when dropped (see
/// [`AsyncWait::take_registration`]).
#[derive(Default)]
pub(super) struct AsyncWait {
    slot: Option<Arc<Slot>>,
    finished: bool,
}

impl AsyncWait {
    /// One poll of the wait. Under `mutex`: on the first poll, `ready` checks
    /// (and consumes, if the primitive consumes) the condition, and if it does
    /// not hold, the wait registers in the list `list` finds; on later polls,
    /// the wait is over once its registration was released.
    pub(super) fn poll<S>(
        &mut self,
        cx: &mut Context<'_>,
        mutex: &Mutex<S>,
        ready: impl FnOnce(&mut S) -> bool,
        list: impl FnOnce(&mut S) -> &mut WaiterList,
    ) -> Poll<()> {
        if self.finished {
            return Poll::Ready(());
        }
        if let Some(slot) = &self.slot {
            if !slot.is_released() {
                let _state = lock(mutex);
                // Checked again under the lock releases are made under: a
                // release either was made (seen here) or is made later and
                // wakes the waker set here.
                if !slot.is_released() {
                    slot.set_waker(cx.waker());
                    return Poll::Pending;
                }
            }
        } else {
            let mut state = lock(mutex);
            if !ready(&mut state) {
                self.slot = Some(list(&mut state).register_task(cx.waker()));
                return Poll::Pending;
            }
        }
        self.slot = None;
        self.finished = true;
        Poll::Ready(())
    }

    /// For the future's `Drop`: its registration if the wait has not
    /// finished. Withdraw it under the primitive's lock; if
    /// [`WaiterList::withdraw`] says it was released, the release is this
    /// wait's to pass on.
    pub(super) fn take_registration(&mut self) -> Option<Arc<Slot>> {
        self.slot.take()
    }
}

/// What [`WaitFuture`] needs of a primitive to await it: the lock its
/// state is under, the condition (checked, and consumed where the primitive
/// consumes it, on the first poll), the list a wait registers in, and what a
/// dropped future that was registered leaves behind.
pub(super) trait AsyncWaitable: Send + Sync + 'static {
    type State;
    fn state(&self) -> &Mutex<Self::State>;
    /// Under the lock: whether the wait is over without registering.
    fn ready(&self, state: &mut Self::State) -> bool;
    /// Under the lock: the list a wait registers in.
    fn list<'a>(&self, state: &'a mut Self::State) -> &'a mut WaiterList;
    /// Under the lock, for a future dropped while registered: withdraws
    /// `slot`; if it had been released, passes on what it was given (what
    /// is returned is woken after unlocking).
    fn withdraw(&self, state: &mut Self::State, slot: &Arc<Slot>) -> Released;
}

/// The future of every `wait_async`: holds no thread while it waits, checks
/// the primitive on its first poll, and withdraws its wait when dropped.
pub(super) struct WaitFuture<P: AsyncWaitable> {
    primitive: P,
    wait: AsyncWait,
}

impl<P: AsyncWaitable> WaitFuture<P> {
    pub(super) fn new(primitive: P) -> Self {
        WaitFuture {
            primitive,
            wait: AsyncWait::default(),
        }
    }
}

impl<P: AsyncWaitable> std::future::Future for WaitFuture<P> {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        let primitive = &this.primitive;
        this.wait.poll(
            cx,
            primitive.state(),
            |state| primitive.ready(state),
            |state| primitive.list(state),
        )
    }
}

// The future's fields are never pinned: moving it is always fine.
impl<P: AsyncWaitable> Unpin for WaitFuture<P> {}

impl<P: AsyncWaitable> Drop for WaitFuture<P> {
    fn drop(&mut self) {
        let Some(slot) = self.wait.take_registration() else {
            return;
        };
        let mut state = lock(self.primitive.state());
        let released = self.primitive.withdraw(&mut state, &slot);
        drop(state);
        released.wake();
    }
}

impl fmt::Debug for AsyncWait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncWait")
            .field("registered", &self.slot.is_some())
            .field("finished", &self.finished)
            .finish()
    }
}

/// Blocks the calling task or thread (a task on a worker suspends) until `slot` is released or
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
