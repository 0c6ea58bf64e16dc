//! [`Condvar`]: a condition variable for `std::sync::Mutex` whose waits
//! suspend the waiting task on pool workers, after marl's
//! `ConditionVariable`.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

use super::waiters::{block_on, lock, WaiterList};

/// A condition variable used with a [`std::sync::Mutex`]. Clones share one
/// condition variable.
///
/// Unlike `std::sync::Condvar`, a wait in a pool task suspends the task, with
/// the mutex released, and its worker runs other tasks meanwhile (see the
/// crate docs, "Waiting inside a task"), so a task may wait for a condition
/// that a task queued behind it will make true.
///
/// How it differs from `std::sync::Condvar`:
///
/// * a wait in a pool task lets its worker run other tasks meanwhile (above);
/// * stable Rust cannot recover the mutex from a `MutexGuard`, so every wait
///   takes the mutex as well as its guard; passing a guard of another mutex
///   panics;
/// * it is `Clone` (clones share one condition variable) and may be used
///   with several mutexes over its life;
/// * waits return the guard, not a `LockResult`: poisoning is ignored (below);
/// * besides `wait_timeout`, it has `wait_deadline` and
///   `wait_deadline_while`, and any `Duration` is accepted (see the crate docs,
///   "Waits with a time limit").
///
/// No notification is lost: a wait is registered before the mutex is
/// released, so any [`notify_one`](Condvar::notify_one) or
/// [`notify_all`](Condvar::notify_all) made after the waiter released the mutex
/// (typically by a thread that changed the data under it) reaches it.
/// `notify_one` releases exactly one registered wait, the oldest. Waits may
/// still return without a notification (a timeout, or in `wait_while` a
/// condition that holds), so check the data in a loop or use
/// [`wait_while`](Condvar::wait_while).
///
/// Poisoning: a poisoned mutex is locked anyway (`PoisonError::into_inner`),
/// so a panic in another holder does not panic the waiter; check your data's
/// invariants if that matters.
///
/// ```
/// use std::sync::{Arc, Mutex};
///
/// let pool = weft::Pool::builder().workers(2).build().unwrap();
/// let queue = Arc::new((Mutex::new(Vec::new()), weft::Condvar::new()));
/// let producer = Arc::clone(&queue);
/// pool.spawn(move || {
///     let (items, condvar) = &*producer;
///     for i in 0..10 {
///         items.lock().unwrap().push(i);
///         condvar.notify_one();
///     }
/// });
/// let (items, condvar) = &*queue;
/// let mut received = 0;
/// let mut guard = items.lock().unwrap();
/// while received < 10 {
///     guard = condvar.wait_while(items, guard, |items| items.is_empty());
///     received += guard.drain(..).count();
/// }
/// assert_eq!(received, 10);
/// ```
#[derive(Clone, Default)]
pub struct Condvar {
    waiters: Arc<Mutex<WaiterList>>,
}

impl fmt::Debug for Condvar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Condvar")
            .field("waiters", &lock(&self.waiters).len())
            .finish()
    }
}

impl Condvar {
    /// A condition variable with no waits.
    pub fn new() -> Condvar {
        Condvar::default()
    }

    /// Releases `mutex` (whose `guard` is passed in), blocks until notified,
    /// and locks `mutex` again. On a worker, runs other tasks meanwhile.
    ///
    /// # Panics
    /// If `guard` does not belong to `mutex`.
    pub fn wait<'a, T>(&self, mutex: &'a Mutex<T>, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        self.wait_until(mutex, guard, None).0
    }

    /// Waits while `condition` returns true for the data, checking it first
    /// and after every wake-up; returns with the mutex locked and `condition`
    /// false.
    ///
    /// # Panics
    /// If `guard` does not belong to `mutex`.
    pub fn wait_while<'a, T, F>(
        &self,
        mutex: &'a Mutex<T>,
        mut guard: MutexGuard<'a, T>,
        mut condition: F,
    ) -> MutexGuard<'a, T>
    where
        F: FnMut(&mut T) -> bool,
    {
        while condition(&mut *guard) {
            guard = self.wait(mutex, guard);
        }
        guard
    }

    /// As [`wait`](Condvar::wait), giving up after `timeout`. Returns the
    /// guard and whether the wait timed out (no notification reached it).
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use std::time::Duration;
    ///
    /// let (mutex, condvar) = (Mutex::new(()), weft::Condvar::new());
    /// let (_guard, result) = condvar.wait_timeout(&mutex, mutex.lock().unwrap(), Duration::ZERO);
    /// assert!(result.timed_out());
    /// ```
    ///
    /// # Panics
    /// If `guard` does not belong to `mutex`.
    pub fn wait_timeout<'a, T>(
        &self,
        mutex: &'a Mutex<T>,
        guard: MutexGuard<'a, T>,
        timeout: Duration,
    ) -> (MutexGuard<'a, T>, WaitTimeoutResult) {
        self.wait_until(mutex, guard, crate::sched::waiter::deadline_after(timeout))
    }

    /// As [`wait_timeout`](Condvar::wait_timeout), giving up at `deadline`.
    ///
    /// # Panics
    /// If `guard` does not belong to `mutex`.
    pub fn wait_deadline<'a, T>(
        &self,
        mutex: &'a Mutex<T>,
        guard: MutexGuard<'a, T>,
        deadline: Instant,
    ) -> (MutexGuard<'a, T>, WaitTimeoutResult) {
        self.wait_until(mutex, guard, Some(deadline))
    }

    /// As [`wait_while`](Condvar::wait_while), giving up after `timeout` in
    /// all. Returns the guard and whether it timed out with `condition` still
    /// true.
    ///
    /// # Panics
    /// If `guard` does not belong to `mutex`.
    pub fn wait_timeout_while<'a, T, F>(
        &self,
        mutex: &'a Mutex<T>,
        guard: MutexGuard<'a, T>,
        timeout: Duration,
        condition: F,
    ) -> (MutexGuard<'a, T>, WaitTimeoutResult)
    where
        F: FnMut(&mut T) -> bool,
    {
        self.wait_until_while(
            mutex,
            guard,
            crate::sched::waiter::deadline_after(timeout),
            condition,
        )
    }

    /// As [`wait_timeout_while`](Condvar::wait_timeout_while), giving up at
    /// `deadline`.
    ///
    /// # Panics
    /// If `guard` does not belong to `mutex`.
    pub fn wait_deadline_while<'a, T, F>(
        &self,
        mutex: &'a Mutex<T>,
        guard: MutexGuard<'a, T>,
        deadline: Instant,
        condition: F,
    ) -> (MutexGuard<'a, T>, WaitTimeoutResult)
    where
        F: FnMut(&mut T) -> bool,
    {
        self.wait_until_while(mutex, guard, Some(deadline), condition)
    }

    fn wait_until_while<'a, T, F>(
        &self,
        mutex: &'a Mutex<T>,
        mut guard: MutexGuard<'a, T>,
        deadline: Option<Instant>,
        mut condition: F,
    ) -> (MutexGuard<'a, T>, WaitTimeoutResult)
    where
        F: FnMut(&mut T) -> bool,
    {
        while condition(&mut *guard) {
            let result;
            (guard, result) = self.wait_until(mutex, guard, deadline);
            if result.timed_out() {
                let still = condition(&mut *guard);
                return (guard, WaitTimeoutResult(still));
            }
        }
        (guard, WaitTimeoutResult(false))
    }

    /// Releases the oldest waiting thread, if any.
    pub fn notify_one(&self) {
        let released = lock(&self.waiters).release_one();
        released.wake();
    }

    /// Releases every waiting thread.
    pub fn notify_all(&self) {
        let released = lock(&self.waiters).release_all();
        released.wake();
    }

    fn wait_until<'a, T>(
        &self,
        mutex: &'a Mutex<T>,
        guard: MutexGuard<'a, T>,
        deadline: Option<Instant>,
    ) -> (MutexGuard<'a, T>, WaitTimeoutResult) {
        // The guard's mutex is locked, by us; any other mutex that `try_lock`
        // gets proves the guard is not `mutex`'s. (A mutex locked elsewhere
        // cannot be told apart, but nothing is lost by not catching that.)
        // The guard `try_lock` may get is dropped at the end of this statement,
        // before the panic below, so that the panic does not poison `mutex`.
        let foreign = !matches!(mutex.try_lock(), Err(TryLockError::WouldBlock));
        if foreign {
            drop(guard);
            panic!("Condvar: the guard passed in does not belong to the mutex passed in");
        }
        // Registered while the caller's mutex is still held: whoever changes
        // the data next (under that mutex) and then notifies finds us.
        let slot = lock(&self.waiters).register();
        drop(guard);
        let notified = block_on(&self.waiters, &slot, deadline, |list| list);
        (lock(mutex), WaitTimeoutResult(!notified))
    }
}

/// Whether a [`Condvar`] wait with a time limit gave up, as
/// `std::sync::WaitTimeoutResult` says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitTimeoutResult(bool);

impl WaitTimeoutResult {
    /// Whether the wait ended because its time ran out: no notification
    /// reached it (or, for the `_while` forms, the condition still held).
    pub fn timed_out(&self) -> bool {
        self.0
    }
}
