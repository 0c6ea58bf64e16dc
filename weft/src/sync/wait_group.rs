//! [`WaitGroup`]: waiting until a counted number of jobs have finished.

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::waiters::{block_on, lock, AsyncWaitable, Released, Slot, WaitFuture, WaiterList};

/// A counter of outstanding work that threads can wait to reach zero, after
/// marl's `WaitGroup` (and Go's `sync.WaitGroup`).
///
/// [`add`](WaitGroup::add) raises the count, [`done`](WaitGroup::done) lowers
/// it by one, and [`wait`](WaitGroup::wait) blocks until it is zero. Clones
/// share one counter. In a pool task, `wait` suspends the task and its worker
/// runs other tasks meanwhile, so waiting on tasks queued behind the waiter
/// cannot deadlock (see the crate docs, "Waiting inside a task").
///
/// Every wait blocked when the count reaches zero returns, even if the count is
/// raised again before it gets to run.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
///
/// let pool = weft::Pool::builder().workers(2).build().unwrap();
/// let finished = Arc::new(AtomicUsize::new(0));
/// let wg = weft::WaitGroup::new();
/// for _ in 0..10 {
///     wg.add(1);
///     let (wg, finished) = (wg.clone(), Arc::clone(&finished));
///     pool.spawn(move || {
///         finished.fetch_add(1, Ordering::Relaxed);
///         wg.done();
///     });
/// }
/// wg.wait();
/// assert_eq!(finished.load(Ordering::Relaxed), 10);
/// ```
#[derive(Clone, Default)]
pub struct WaitGroup {
    shared: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    count: usize,
    waiters: WaiterList,
}

impl fmt::Debug for WaitGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = lock(&self.shared);
        f.debug_struct("WaitGroup")
            .field("count", &state.count)
            .field("waiters", &state.waiters.len())
            .finish()
    }
}

impl WaitGroup {
    /// A wait group with a count of zero.
    pub fn new() -> WaitGroup {
        WaitGroup::default()
    }

    /// A wait group with a count of `count`.
    pub fn with_count(count: usize) -> WaitGroup {
        let wg = WaitGroup::new();
        wg.add(count);
        wg
    }

    /// Raises the count by `n`.
    ///
    /// # Panics
    /// If the count would overflow `usize`.
    pub fn add(&self, n: usize) {
        let mut state = lock(&self.shared);
        let Some(count) = state.count.checked_add(n) else {
            drop(state);
            panic!("WaitGroup::add: count overflow");
        };
        state.count = count;
    }

    /// Lowers the count by one; returns whether it reached zero (then every
    /// blocked [`wait`](WaitGroup::wait) returns).
    ///
    /// # Panics
    /// If the count is already zero, i.e. `done` was called more times than
    /// [`add`](WaitGroup::add) counted.
    pub fn done(&self) -> bool {
        let mut state = lock(&self.shared);
        if state.count == 0 {
            // Unlock first: a panic under the lock would poison it for no reason.
            drop(state);
            panic!("WaitGroup::done called more times than WaitGroup::add counted");
        }
        state.count -= 1;
        if state.count > 0 {
            return false;
        }
        let released = state.waiters.release_all();
        drop(state);
        released.wake();
        true
    }

    /// The current count.
    pub fn count(&self) -> usize {
        lock(&self.shared).count
    }

    timed_waits!(
        WaitGroup,
        until: "the count is zero",
        returns: "the count reached zero"
    );

    /// A future ready once the count is zero: the async form of
    /// [`wait`](WaitGroup::wait). While it is pending it holds no thread; it
    /// checks the count on its first poll. Dropping it withdraws the wait.
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(2).build().unwrap();
    /// let wg = weft::WaitGroup::with_count(3);
    /// let waiting = pool.spawn_future(wg.wait_async());
    /// for _ in 0..3 {
    ///     let wg = wg.clone();
    ///     pool.spawn(move || {
    ///         wg.done();
    ///     });
    /// }
    /// waiting.join().unwrap();
    /// assert_eq!(wg.count(), 0);
    /// ```
    pub fn wait_async(&self) -> impl Future<Output = ()> + Send + 'static {
        WaitFuture::new(Arc::clone(&self.shared))
    }

    fn wait_until(&self, deadline: Option<Instant>) -> bool {
        let slot = {
            let mut state = lock(&self.shared);
            if state.count == 0 {
                return true;
            }
            state.waiters.register()
        };
        block_on(&self.shared, &slot, deadline, |state| &mut state.waiters)
    }
}

impl AsyncWaitable for Arc<Mutex<State>> {
    type State = State;

    fn state(&self) -> &Mutex<State> {
        self
    }

    fn ready(&self, state: &mut State) -> bool {
        state.count == 0
    }

    fn list<'a>(&self, state: &'a mut State) -> &'a mut WaiterList {
        &mut state.waiters
    }

    fn withdraw(&self, state: &mut State, slot: &Arc<Slot>) -> Released {
        // A release that came meanwhile released every wait; nothing to
        // pass on.
        state.waiters.withdraw(slot);
        Released::default()
    }
}
