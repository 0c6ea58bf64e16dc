//! [`JoinSet`], a group of tasks whose results come back in the order they
//! finish, and [`JoinError`], why a task of one gave no value.

use std::any::Any;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::panic;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::api::pool::Pool;
use crate::api::task::{self, AbortHandle, Aborted, Completion, JoinHandle};
use crate::facade::lock;
use crate::sched::waiter::{block_until, Waiter};

/// A group of tasks, joined one at a time in the order they finish: tokio's
/// `JoinSet`, for closures and futures on weft's pools.
///
/// Tasks go in with [`spawn`](JoinSet::spawn) (the pool rule of
/// [`weft::spawn`](crate::spawn): the calling worker's pool, else the
/// global one) or [`spawn_on`](JoinSet::spawn_on) (a given pool), and
/// futures with [`spawn_future`](JoinSet::spawn_future) and
/// [`spawn_future_on`](JoinSet::spawn_future_on), each giving back an
/// [`AbortHandle`]. From async code, [`join_next_async`](JoinSet::join_next_async)
/// is `join_next` as a future. [`join_next`](JoinSet::join_next) waits
/// for whichever task finishes first and returns its result, removing it
/// from the set; its wait is a weft wait, so inside a pool's task it
/// suspends the task and its worker runs others (crate docs, "Waiting inside
/// a task").
///
/// [`abort_all`](JoinSet::abort_all) aborts every task of the set, as
/// [`JoinHandle::abort`] does: a task that has not started never runs (its
/// closure is dropped, by the worker that takes it off its queue), and one
/// that has started runs to its end. The aborted tasks stay in the set
/// until `join_next` returns them, as `Err` with
/// [`is_aborted`](JoinError::is_aborted) true (or `Ok`, for a task that had
/// started).
///
/// Dropping the set aborts its tasks in the same way, as tokio's does: the
/// ones not yet started never run; the ones running finish, their results
/// dropped. [`detach_all`](JoinSet::detach_all) empties the set without
/// aborting anything.
///
/// ```
/// let pool = weft::Pool::builder().workers(4).build().unwrap();
/// let mut set = weft::JoinSet::new();
/// for i in 0..10u64 {
///     set.spawn_on(&pool, move || i * i);
/// }
/// assert_eq!(set.len(), 10);
/// let mut squares = Vec::new();
/// while let Some(result) = set.join_next() {
///     squares.push(result.unwrap());
/// }
/// squares.sort();
/// assert_eq!(squares, [0, 1, 4, 9, 16, 25, 36, 49, 64, 81]);
/// assert!(set.is_empty() && set.join_next().is_none());
/// ```
pub struct JoinSet<T> {
    /// The tasks still in the set, by the number they were given.
    tasks: HashMap<u64, JoinHandle<T>>,
    next_id: u64,
    finished: Arc<Finished>,
}

/// The numbers of the set's tasks that have finished and not been joined,
/// in the order they finished.
struct Finished {
    /// `order.len()`, for the wait to read without the lock.
    ready: AtomicUsize,
    inner: Mutex<FinishedInner>,
}

struct FinishedInner {
    order: VecDeque<u64>,
    /// The `join_next` waiting, if one is.
    waiter: Option<Waiter>,
    /// The `join_next_async` waiting, if one is.
    waker: Option<std::task::Waker>,
}

impl Completion for Finished {
    fn completed(&self, id: u64) {
        let waiter = {
            let mut inner = lock(&self.inner);
            inner.order.push_back(id);
            // Release: pairs with the wait's Acquire; the number itself is
            // read under the lock.
            self.ready.fetch_add(1, Ordering::Release);
            (inner.waiter.take(), inner.waker.take())
        };
        if let Some(waiter) = waiter.0 {
            waiter.wake();
        }
        if let Some(waker) = waiter.1 {
            waker.wake();
        }
    }
}

impl Finished {
    fn new() -> Finished {
        Finished {
            ready: AtomicUsize::new(0),
            inner: Mutex::new(FinishedInner {
                order: VecDeque::new(),
                waiter: None,
                waker: None,
            }),
        }
    }

    /// The oldest finished task's number, if any.
    fn pop(&self) -> Option<u64> {
        let mut inner = lock(&self.inner);
        let id = inner.order.pop_front()?;
        self.ready.fetch_sub(1, Ordering::Relaxed);
        Some(id)
    }

    /// Waits until a task has finished (possibly one already joined: the
    /// caller looks again).
    fn wait(&self) {
        {
            let mut inner = lock(&self.inner);
            if !inner.order.is_empty() {
                return;
            }
            inner.waiter = Some(Waiter::current());
        }
        // Acquire: pairs with `completed`'s Release.
        block_until(&|| self.ready.load(Ordering::Acquire) > 0, None);
        // A waiter left behind would only be woken for nothing; the set is
        // borrowed mutably, so nobody else registers meanwhile.
        lock(&self.inner).waiter = None;
    }

    /// Whether a task has finished; if not, `waker` is woken when one does.
    fn ready_or_register(&self, waker: &std::task::Waker) -> bool {
        let mut inner = lock(&self.inner);
        if !inner.order.is_empty() {
            return true;
        }
        inner.waker = Some(waker.clone());
        false
    }

    fn clear(&self) {
        let mut inner = lock(&self.inner);
        inner.order.clear();
        self.ready.store(0, Ordering::Relaxed);
    }
}

impl<T> JoinSet<T> {
    /// An empty set.
    ///
    /// ```
    /// let set = weft::JoinSet::<u32>::new();
    /// assert!(set.is_empty());
    /// ```
    pub fn new() -> JoinSet<T> {
        JoinSet {
            tasks: HashMap::new(),
            next_id: 0,
            finished: Arc::new(Finished::new()),
        }
    }

    /// How many tasks are in the set: spawned and not yet returned by
    /// [`join_next`](JoinSet::join_next), finished or not.
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(1).build().unwrap();
    /// let mut set = weft::JoinSet::new();
    /// set.spawn_on(&pool, || 1);
    /// set.spawn_on(&pool, || 2);
    /// assert_eq!(set.len(), 2);
    /// set.join_next();
    /// assert_eq!(set.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Whether the set has no task.
    ///
    /// ```
    /// let mut set = weft::JoinSet::new();
    /// assert!(set.is_empty());
    /// set.spawn(|| ());
    /// assert!(!set.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Waits for the next task of the set to finish and returns its result,
    /// removing it from the set: `Ok` with its value, or `Err` if it
    /// panicked or was aborted before it started. Tasks are returned in the
    /// order they finished. `None` once the set is empty (at once if it
    /// is).
    ///
    /// The wait is a weft wait: in a pool's task it suspends the task, and
    /// its worker runs other tasks meanwhile; elsewhere the thread blocks.
    ///
    /// ```
    /// use std::sync::mpsc;
    ///
    /// let pool = weft::Pool::builder().workers(2).build().unwrap();
    /// let mut set = weft::JoinSet::new();
    /// let (go, gate) = mpsc::channel::<()>();
    /// set.spawn_on(&pool, move || {
    ///     gate.recv().unwrap();
    ///     "slow"
    /// });
    /// set.spawn_on(&pool, || "fast");
    /// assert_eq!(set.join_next().unwrap().unwrap(), "fast");
    /// go.send(()).unwrap();
    /// assert_eq!(set.join_next().unwrap().unwrap(), "slow");
    /// assert!(set.join_next().is_none());
    /// ```
    pub fn join_next(&mut self) -> Option<Result<T, JoinError>> {
        loop {
            if let Some(result) = self.try_join_next() {
                return Some(result);
            }
            if self.tasks.is_empty() {
                return None;
            }
            self.finished.wait();
        }
    }

    /// As [`join_next`](JoinSet::join_next), as a future: it is ready with
    /// the next task to finish (or `None` once the set is empty), and while
    /// it is pending it holds no thread. tokio's `join_next().await`.
    ///
    /// ```
    /// let mut set = weft::JoinSet::new();
    /// for i in 0..4u32 {
    ///     set.spawn_future(async move { i * 10 });
    /// }
    /// let total = weft::block_on(async {
    ///     let mut total = 0;
    ///     while let Some(result) = set.join_next_async().await {
    ///         total += result.unwrap();
    ///     }
    ///     total
    /// });
    /// assert_eq!(total, 60);
    /// ```
    pub fn join_next_async(
        &mut self,
    ) -> impl std::future::Future<Output = Option<Result<T, JoinError>>> + '_ {
        std::future::poll_fn(move |context| loop {
            if let Some(result) = self.try_join_next() {
                return std::task::Poll::Ready(Some(result));
            }
            if self.tasks.is_empty() {
                return std::task::Poll::Ready(None);
            }
            if !self.finished.ready_or_register(context.waker()) {
                return std::task::Poll::Pending;
            }
        })
    }

    /// As [`join_next`](JoinSet::join_next), without waiting: the result of
    /// a task of the set that has finished, if one has; `None` if none has
    /// (or the set is empty). A task whose [`AbortHandle::is_finished`] has
    /// returned true is one this finds.
    ///
    /// ```
    /// let mut set = weft::JoinSet::<()>::new();
    /// assert!(set.try_join_next().is_none());
    /// set.spawn(|| ());
    /// let result = loop {
    ///     if let Some(result) = set.try_join_next() {
    ///         break result;
    ///     }
    ///     std::thread::yield_now();
    /// };
    /// assert!(result.is_ok());
    /// ```
    pub fn try_join_next(&mut self) -> Option<Result<T, JoinError>> {
        while let Some(id) = self.finished.pop() {
            // A number without a task is one detached since.
            if let Some(handle) = self.tasks.remove(&id) {
                return Some(handle.join().map_err(JoinError::new));
            }
        }
        None
    }

    /// Waits for every task of the set and returns their values, in the
    /// order they finished (tokio's `JoinSet::join_all`).
    ///
    /// # Panics
    /// If a task panicked, with that panic, once it is joined; if one was
    /// aborted, with a message. The set is then dropped, which aborts the
    /// tasks not joined yet. Loop over [`join_next`](JoinSet::join_next)
    /// to handle each result instead.
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(2).build().unwrap();
    /// let mut set = weft::JoinSet::new();
    /// for i in 1..=4 {
    ///     set.spawn_on(&pool, move || i * 10);
    /// }
    /// let mut values = set.join_all();
    /// values.sort();
    /// assert_eq!(values, [10, 20, 30, 40]);
    /// ```
    pub fn join_all(mut self) -> Vec<T> {
        let mut values = Vec::with_capacity(self.len());
        while let Some(result) = self.join_next() {
            match result {
                Ok(value) => values.push(value),
                Err(error) => match error.try_into_panic() {
                    Ok(payload) => panic::resume_unwind(payload),
                    Err(error) => panic!("JoinSet::join_all: {error}"),
                },
            }
        }
        values
    }

    /// Aborts every task of the set, as [`JoinHandle::abort`] does: one that
    /// has not started never runs, one that has runs to its end. The tasks
    /// stay in the set: [`join_next`](JoinSet::join_next) returns each
    /// aborted one as `Err` with [`JoinError::is_aborted`], once a worker
    /// has taken it off its queue and dropped it (and a started one with
    /// its result).
    ///
    /// ```
    /// use std::sync::mpsc;
    ///
    /// let pool = weft::Pool::builder().workers(1).build().unwrap();
    /// let mut set = weft::JoinSet::new();
    /// let (started, running) = mpsc::channel();
    /// let (release, held) = mpsc::channel::<()>();
    /// set.spawn_on(&pool, move || {
    ///     started.send(()).unwrap();
    ///     held.recv().unwrap();
    ///     "ran"
    /// });
    /// running.recv().unwrap(); // the only worker is in the first task
    /// for _ in 0..3 {
    ///     set.spawn_on(&pool, || "never runs");
    /// }
    /// set.abort_all();
    /// assert_eq!(set.len(), 4);
    /// release.send(()).unwrap();
    /// let (mut ran, mut aborted) = (0, 0);
    /// while let Some(result) = set.join_next() {
    ///     match result {
    ///         Ok(value) => {
    ///             assert_eq!(value, "ran");
    ///             ran += 1;
    ///         }
    ///         Err(error) => {
    ///             assert!(error.is_aborted());
    ///             aborted += 1;
    ///         }
    ///     }
    /// }
    /// assert_eq!((ran, aborted), (1, 3));
    /// ```
    pub fn abort_all(&mut self) {
        for handle in self.tasks.values() {
            handle.abort();
        }
    }

    /// Removes every task from the set without aborting any: they run on,
    /// as tasks whose [`JoinHandle`] was dropped do. tokio's
    /// `JoinSet::detach_all`.
    ///
    /// ```
    /// let (sender, receiver) = std::sync::mpsc::channel();
    /// let mut set = weft::JoinSet::new();
    /// set.spawn(move || sender.send("still ran").unwrap());
    /// set.detach_all();
    /// assert!(set.is_empty());
    /// assert_eq!(receiver.recv().unwrap(), "still ran");
    /// ```
    pub fn detach_all(&mut self) {
        for (_, handle) in self.tasks.drain() {
            handle.forget_completion();
        }
        // Every number queued is a detached task's now.
        self.finished.clear();
    }

    /// Aborts every task and waits for all of them, dropping their results:
    /// [`abort_all`](JoinSet::abort_all), then
    /// [`join_next`](JoinSet::join_next) until the set is empty. tokio's
    /// `JoinSet::shutdown`.
    ///
    /// ```
    /// let mut set = weft::JoinSet::new();
    /// for i in 0..8 {
    ///     set.spawn(move || i);
    /// }
    /// set.shutdown();
    /// assert!(set.is_empty());
    /// ```
    pub fn shutdown(&mut self) {
        self.abort_all();
        while self.join_next().is_some() {}
    }

    /// Adds `handle` to the set, as the task of the next number.
    pub(crate) fn insert(&mut self, handle: JoinHandle<T>) -> AbortHandle
    where
        T: Send + 'static,
    {
        let id = self.next_id;
        self.next_id += 1;
        let abort = handle.abort_handle();
        let handle = self.tasks.entry(id).or_insert(handle);
        handle.on_completion(Arc::clone(&self.finished) as Arc<dyn Completion>, id);
        abort
    }
}

impl<T: Send + 'static> JoinSet<T> {
    /// Runs `task` in the set on the pool [`weft::spawn`](crate::spawn)
    /// would use from here: on the calling worker's own queue if this is a
    /// pool's worker, else on the global pool (or, inside
    /// [`blocking`](crate::blocking), the pool of the worker it stands in
    /// for). The handle aborts the task alone.
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(2).build().unwrap();
    /// let inner = pool.install(|| {
    ///     let mut set = weft::JoinSet::new();
    ///     set.spawn(|| weft::current_num_threads());
    ///     set.join_next().unwrap().unwrap()
    /// });
    /// assert_eq!(inner, 2); // spawned on the pool it was called in
    /// ```
    pub fn spawn<F>(&mut self, task: F) -> AbortHandle
    where
        F: FnOnce() -> T + Send + 'static,
    {
        self.insert(task::spawn_here_with_handle(task))
    }

    /// Runs `task` in the set on `pool`, as
    /// [`Pool::spawn_with_handle`] does (on the calling worker's queue if it
    /// is one of `pool`'s, else on `pool`'s global queue). The handle aborts
    /// the task alone.
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(3).build().unwrap();
    /// let mut set = weft::JoinSet::new();
    /// for _ in 0..6 {
    ///     set.spawn_on(&pool, || weft::current_thread_index().is_some());
    /// }
    /// assert!(set.join_all().into_iter().all(|on_worker| on_worker));
    /// ```
    pub fn spawn_on<F>(&mut self, pool: &Pool, task: F) -> AbortHandle
    where
        F: FnOnce() -> T + Send + 'static,
    {
        self.insert(pool.spawn_with_handle(task))
    }
}

impl<T> Default for JoinSet<T> {
    fn default() -> JoinSet<T> {
        JoinSet::new()
    }
}

impl<T> fmt::Debug for JoinSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinSet")
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

impl<T> Drop for JoinSet<T> {
    /// Aborts every task still in the set (see [`JoinSet::abort_all`]).
    fn drop(&mut self) {
        self.abort_all();
    }
}

/// Spawns each closure as [`JoinSet::spawn`] does.
///
/// ```
/// let mut set: weft::JoinSet<usize> = (0..4).map(|i| move || i).collect();
/// set.extend((4..8).map(|i| move || i));
/// let mut values = set.join_all();
/// values.sort();
/// assert_eq!(values, [0, 1, 2, 3, 4, 5, 6, 7]);
/// ```
impl<T, F> FromIterator<F> for JoinSet<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    fn from_iter<I: IntoIterator<Item = F>>(tasks: I) -> JoinSet<T> {
        let mut set = JoinSet::new();
        set.extend(tasks);
        set
    }
}

/// Spawns each closure as [`JoinSet::spawn`] does.
impl<T, F> Extend<F> for JoinSet<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    fn extend<I: IntoIterator<Item = F>>(&mut self, tasks: I) {
        for task in tasks {
            self.spawn(task);
        }
    }
}

/// Why a task of a [`JoinSet`] gave no value: it panicked, or it was aborted
/// before it started (by [`JoinSet::abort_all`], an [`AbortHandle`], the
/// set's drop, or [`Pool::shutdown_timeout`]). tokio's `JoinError`.
///
/// `Send` and `Sync`, so it converts into `Box<dyn Error + Send + Sync>`.
///
/// ```
/// let mut set = weft::JoinSet::<()>::new();
/// set.spawn(|| panic!("boom"));
/// let error = set.join_next().unwrap().unwrap_err();
/// assert!(error.is_panic() && !error.is_aborted());
/// assert_eq!(error.to_string(), "task panicked: boom");
/// let payload = error.into_panic();
/// assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
/// ```
pub struct JoinError {
    /// The panic's payload, or an [`Aborted`]. Never reached through a
    /// shared reference (see the `Sync` impl): what `&self` methods need is
    /// in the fields below, read out when the error was made.
    payload: Box<dyn Any + Send>,
    aborted: bool,
    /// The panic's message, if its payload was a string.
    message: Option<String>,
}

// SAFETY: the only field that is not `Sync` is `payload`, and no method
// reaches it through `&self`: it is only moved out of an owned `JoinError`
// (`into_panic`, `try_into_panic`, `into_payload`). So sharing a
// `&JoinError` between threads shares nothing but a `bool` and a `String`.
unsafe impl Sync for JoinError {}

impl JoinError {
    /// The error for a task's `Err` payload (as [`JoinHandle::join`] gives
    /// it).
    fn new(payload: Box<dyn Any + Send>) -> JoinError {
        let aborted = payload.is::<Aborted>();
        let message = if aborted {
            None
        } else if let Some(message) = payload.downcast_ref::<&str>() {
            Some((*message).to_owned())
        } else {
            payload.downcast_ref::<String>().cloned()
        };
        JoinError {
            payload,
            aborted,
            message,
        }
    }

    /// Whether the task was aborted before it started (a weft
    /// [`Aborted`] payload).
    pub fn is_aborted(&self) -> bool {
        self.aborted
    }

    /// tokio's name for [`is_aborted`](JoinError::is_aborted).
    pub fn is_cancelled(&self) -> bool {
        self.aborted
    }

    /// Whether the task panicked (including a panic in the destructor of an
    /// aborted task's closure, which is reported instead of the abort).
    pub fn is_panic(&self) -> bool {
        !self.aborted
    }

    /// The panic's payload, to go on with [`std::panic::resume_unwind`].
    ///
    /// # Panics
    /// If the task was aborted rather than panicking.
    pub fn into_panic(self) -> Box<dyn Any + Send> {
        match self.try_into_panic() {
            Ok(payload) => payload,
            Err(error) => panic!("JoinError::into_panic: {error}, it did not panic"),
        }
    }

    /// The panic's payload, or the error back if the task was aborted.
    pub fn try_into_panic(self) -> Result<Box<dyn Any + Send>, JoinError> {
        if self.aborted {
            Err(self)
        } else {
            Ok(self.payload)
        }
    }

    /// The payload as [`JoinHandle::join`] would have given it: the panic's,
    /// or an [`Aborted`].
    pub fn into_payload(self) -> Box<dyn Any + Send> {
        self.payload
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.message, self.aborted) {
            (_, true) => f.write_str("JoinError::Aborted"),
            (Some(message), false) => f.debug_tuple("JoinError::Panic").field(message).finish(),
            (None, false) => f.write_str("JoinError::Panic(..)"),
        }
    }
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.message, self.aborted) {
            (_, true) => f.write_str("task was aborted"),
            (Some(message), false) => write!(f, "task panicked: {message}"),
            (None, false) => f.write_str("task panicked"),
        }
    }
}

impl std::error::Error for JoinError {}
