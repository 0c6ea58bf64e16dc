//! Fire-and-forget tasks and [`JoinHandle`], the way to get a spawned task's
//! result back, with its [`AbortHandle`]; the tasks that
//! `Pool::shutdown_timeout` may drop unstarted ([`droppable`]).

use std::fmt;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::{Duration, Instant};

use crate::facade::lock;
use crate::sched::job::{ClosureJob, JobRef};
use crate::sched::registry::Registry;
use crate::sched::unwind::{drop_caught, drop_payload, Payload};
use crate::sched::waiter::{block_until, Waiter};
use crate::sched::worker::WorkerThread;

/// Queues `task` on `registry`: on the calling worker's own queue if it belongs
/// to that pool, else on the global queue. Gives the task back if the pool is
/// closed. The task always runs, even under `Pool::shutdown_timeout` (the
/// pool's own API spawns with [`spawn_droppable_in`]).
pub(crate) fn spawn_in<F>(registry: &Arc<Registry>, task: F) -> Result<(), F>
where
    F: FnOnce() + Send + 'static,
{
    spawn_with::<F, false>(registry, task, WorkerThread::push)
}

/// As [`spawn_in`], onto the calling worker's first-in first-out queue.
pub(crate) fn spawn_fifo_in<F>(registry: &Arc<Registry>, task: F) -> Result<(), F>
where
    F: FnOnce() + Send + 'static,
{
    spawn_with::<F, false>(registry, task, WorkerThread::push_yielded)
}

/// As [`spawn_in`], for a task that `Pool::shutdown_timeout` drops if it has
/// not started by the end of its time ([`droppable`]): the pool's and its
/// handle's `spawn`.
pub(crate) fn spawn_droppable_in<F>(registry: &Arc<Registry>, task: F) -> Result<(), F>
where
    F: FnOnce() + Send + 'static,
{
    spawn_with::<F, true>(registry, task, WorkerThread::push)
}

/// As [`spawn_fifo_in`], for a task as in [`spawn_droppable_in`].
pub(crate) fn spawn_droppable_fifo_in<F>(registry: &Arc<Registry>, task: F) -> Result<(), F>
where
    F: FnOnce() + Send + 'static,
{
    spawn_with::<F, true>(registry, task, WorkerThread::push_yielded)
}

fn spawn_with<F, const DROPPABLE: bool>(
    registry: &Arc<Registry>,
    task: F,
    push: impl FnOnce(&WorkerThread, JobRef),
) -> Result<(), F>
where
    F: FnOnce() + Send + 'static,
{
    if let Some(worker) = crate::sched::context::worker_of(registry) {
        if registry.is_closed() {
            return Err(task);
        }
        push(worker, closure_job::<F, DROPPABLE>(task));
        return Ok(());
    }
    registry.inject(task, closure_job::<F, DROPPABLE>)
}

/// Queues `task` for worker `index` alone (a task as in
/// [`spawn_droppable_in`]: only the pool's API pins tasks).
pub(crate) fn spawn_pinned<F>(registry: &Arc<Registry>, index: usize, task: F) -> Result<(), F>
where
    F: FnOnce() + Send + 'static,
{
    registry.inject_pinned(index, task, closure_job::<F, true>)
}

/// `task` as a job, [`droppable`] or not.
fn closure_job<F, const DROPPABLE: bool>(task: F) -> JobRef
where
    F: FnOnce() + Send + 'static,
{
    if DROPPABLE {
        // SAFETY: `F: 'static`, so the job borrows nothing.
        unsafe { ClosureJob::new_ref(droppable(task)) }
    } else {
        // SAFETY: as above.
        unsafe { ClosureJob::new_ref(task) }
    }
}

/// Whether any pool was ever told to drop its unstarted tasks: until then
/// (nearly always) the check of [`discard_here`] is this one load.
static ANY_POOL_DISCARDS: AtomicBool = AtomicBool::new(false);

/// Makes the tasks of `registry` that are [`droppable`] drop their closure
/// from now on instead of running it (`Pool::shutdown_timeout`).
pub(crate) fn discard_unstarted(registry: &Registry) {
    // Relaxed, as the registry's flag (registry.rs): a task that misses
    // either store runs, as one that started a moment earlier would.
    ANY_POOL_DISCARDS.store(true, Ordering::Relaxed);
    registry.discard_unstarted();
}

/// Whether the job about to start belongs to a pool that drops its
/// unstarted tasks now; if so it is counted as dropped. Jobs run on their
/// pool's threads only, so the calling thread's worker tells the pool.
#[inline]
fn discard_here() -> bool {
    // Relaxed: see `discard_unstarted`.
    ANY_POOL_DISCARDS.load(Ordering::Relaxed) && discard_here_slow()
}

#[cold]
#[inline(never)]
fn discard_here_slow() -> bool {
    match WorkerThread::current() {
        Some(worker) if worker.registry_arc().discards_unstarted() => {
            worker.registry_arc().count_discarded();
            true
        }
        _ => false,
    }
}

/// Wraps `task` so that it is dropped instead of run if, when a worker takes
/// it, its pool has been told to drop unstarted tasks
/// (`Pool::shutdown_timeout`). A panic in the drop is the task's panic. The
/// wrapper captures only `task`, so a closure that fits in a job still needs no
/// allocation.
pub(crate) fn droppable<F>(task: F) -> impl FnOnce() + Send + 'static
where
    F: FnOnce() + Send + 'static,
{
    move || {
        if discard_here() {
            drop(task);
        } else {
            task();
        }
    }
}

/// Runs `task` as [`crate::spawn`] would from here (on the calling worker's
/// queue even if its pool is closed, since this task keeps it open; else on
/// the free functions' pool); the handle gives its result. The task is
/// [`droppable`] as `Pool::spawn_with_handle`'s are, reporting [`Aborted`].
pub(crate) fn spawn_here_with_handle<F, T>(task: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let (handle, job) = with_handle(task);
    match WorkerThread::current() {
        // SAFETY: the job owns what it uses (`F: 'static`).
        Some(worker) => worker.push(unsafe { ClosureJob::new_ref(job) }),
        None => {
            if spawn_in(&crate::api::global::free_function_pool(), job).is_err() {
                unreachable!("the pool of a free function accepts spawns");
            }
        }
    }
    handle
}

/// Wraps `task` so that its result lands in a [`JoinHandle`]. The job
/// decides, against [`JoinHandle::abort`], whether `task` runs at all; an
/// aborted job still runs as a job (it drops `task` instead of calling it),
/// so the pool's books count it like any other. The job is [`droppable`]
/// itself (spawn it with [`spawn_in`], never wrapped again, or the handle
/// would never finish): one dropped so reports [`Aborted`].
pub(crate) fn with_handle<F, T>(task: F) -> (JoinHandle<T>, impl FnOnce() + Send + 'static)
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let (handle, packet) = packet();
    let job = move || {
        // An aborted task is not counted as dropped by the shutdown.
        if !packet.abort_requested() && discard_here() {
            packet.abandon(task, aborted);
        } else if packet.start() {
            let result = panic::catch_unwind(AssertUnwindSafe(task));
            packet.complete(result);
        } else {
            packet.abandon(task, aborted);
        }
    };
    (handle, job)
}

/// A fresh result slot of its own and the handle that reads it (a closure
/// task's; a future's task holds its slot itself, future/spawn.rs).
pub(crate) fn packet<T: Send + 'static>() -> (JoinHandle<T>, Arc<Packet<T>>) {
    let packet = Arc::new(Packet::new());
    let handle = JoinHandle::from_cell(Arc::clone(&packet) as Arc<dyn TaskCell<T>>);
    (handle, packet)
}

/// The payload of a task stopped by [`JoinHandle::abort`].
fn aborted() -> Payload {
    Box::new(Aborted)
}

/// Neither a start nor an abort yet.
const UNCLAIMED: u8 = 0;
/// A closure task started: an abort comes too late.
const STARTED: u8 = 1;
/// An abort came first: the closure never runs, a future is not polled again.
const ABORTED: u8 = 2;

/// Told when a task's result is in, with the number it was registered with
/// ([`JoinHandle::on_completion`]): a [`JoinSet`](crate::JoinSet)'s queue of
/// finished tasks.
pub(crate) trait Completion: Send + Sync {
    /// The task registered as `id` has finished; its handle has the result.
    /// Called with the task's packet locked: must not reach that packet.
    fn completed(&self, id: u64);
}

/// What a [`JoinHandle`] holds: the allocation its result slot lives in. A
/// closure task's slot is a [`Packet`] of its own; a future's task holds its
/// slot in itself (future/spawn.rs), so that a spawn allocates once, and is
/// reached only through this trait (it lives in an extension).
pub(crate) trait TaskCell<T>: AbortTask {
    /// The task's result slot.
    fn packet(&self) -> &Packet<T>;
}

impl<T: Send> TaskCell<T> for Packet<T> {
    fn packet(&self) -> &Packet<T> {
        self
    }
}

/// Where a task leaves its result for its [`JoinHandle`].
pub(crate) struct Packet<T> {
    /// Set once `inner.result` holds the result. Release/Acquire pairs the
    /// result's write with the joiner's read.
    done: AtomicBool,
    /// Who came first, a closure's start or an abort: `UNCLAIMED`, `STARTED`
    /// or `ABORTED`. Futures never start in this sense: for them `ABORTED`
    /// is a request their next poll honours.
    claim: AtomicU8,
    inner: Mutex<PacketInner<T>>,
}

struct PacketInner<T> {
    result: Option<thread::Result<T>>,
    waiter: Option<Waiter>,
    /// The task of a future awaiting the handle.
    waker: Option<Waker>,
    /// Told after the result is stored ([`JoinHandle::on_completion`]).
    completion: Option<(Arc<dyn Completion>, u64)>,
}

impl<T> Packet<T> {
    /// An empty slot: no result, nobody waiting, neither started nor aborted.
    pub(crate) fn new() -> Packet<T> {
        Packet {
            done: AtomicBool::new(false),
            claim: AtomicU8::new(UNCLAIMED),
            inner: Mutex::new(PacketInner {
                result: None,
                waiter: None,
                waker: None,
                completion: None,
            }),
        }
    }

    /// Stores the result and wakes whoever waits for it. Called at most once.
    pub(crate) fn complete(&self, result: thread::Result<T>) {
        let (waiter, waker) = {
            let mut inner = lock(&self.inner);
            inner.result = Some(result);
            // Told before `done` is set, so that whoever sees the task done
            // (`is_finished`) finds it in its set's queue too. Under the lock:
            // a set's queue takes its own lock, never this one (join_set.rs).
            if let Some((completion, id)) = inner.completion.take() {
                completion.completed(id);
            }
            // Release: pairs with `is_done`'s Acquire, which reads without the
            // lock; the result itself is read under it.
            self.done.store(true, Ordering::Release);
            (inner.waiter.take(), inner.waker.take())
        };
        if let Some(waiter) = waiter {
            waiter.wake();
        }
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Marks the task aborted, for [`JoinHandle::abort`] and
    /// [`AbortHandle::abort`]. Returns whether this call did: false if the
    /// task finished, started (a closure) or was aborted already. A closure
    /// task needs nothing more (its start sees the mark); a future's task
    /// then stops itself (future/spawn.rs).
    pub(crate) fn claim_abort(&self) -> bool {
        if self.is_done() {
            return false;
        }
        // Relaxed: decides the race with a closure's start, which is all a
        // closure needs; a future's poll sees the abort through the wake
        // its task makes after it.
        self.claim
            .compare_exchange(UNCLAIMED, ABORTED, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }

    pub(crate) fn is_done(&self) -> bool {
        // Acquire: pairs with `complete`'s Release store.
        self.done.load(Ordering::Acquire)
    }

    /// A closure task is about to run. Returns whether it may: false if an
    /// abort came first.
    fn start(&self) -> bool {
        // Relaxed: the claim only has to be decided once, one way; neither
        // side reads anything the other wrote before it.
        self.claim
            .compare_exchange(UNCLAIMED, STARTED, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }

    /// Whether the handle was aborted before the task started (for a
    /// future: at all).
    pub(crate) fn abort_requested(&self) -> bool {
        // Relaxed: a future's poll learns of an abort through the wake that
        // follows it (task_state.rs orders that wake before the poll).
        self.claim.load(Ordering::Relaxed) == ABORTED
    }

    /// Drops `work`, a task's closure or future that will never finish, and
    /// reports it unless the handle has its result already: the payload of
    /// its destructor's panic if it panics (a panic is a panic, aborted or
    /// not), else [`Aborted`] if the handle was aborted, else `unfinished()`.
    pub(crate) fn abandon<W>(&self, work: W, unfinished: fn() -> Payload) {
        self.abandon_dropped(drop_caught(work), unfinished);
    }

    /// As [`Packet::abandon`], for work the caller has dropped itself (a
    /// pinned future, dropped where it lies), with what its drop gave.
    pub(crate) fn abandon_dropped(
        &self,
        dropped: std::thread::Result<()>,
        unfinished: fn() -> Payload,
    ) {
        let payload = match dropped {
            // Nothing to report, and no payload to make for nobody: the
            // common end of a future that finished.
            Ok(()) if self.is_done() => return,
            Ok(()) if self.abort_requested() => aborted(),
            Ok(()) => unfinished(),
            Err(payload) => payload,
        };
        if self.is_done() {
            drop_payload(payload);
        } else {
            self.complete(Err(payload));
        }
    }
}

/// The payload a [`JoinHandle`] reports (in `Err`) for a task that
/// [`JoinHandle::abort`] stopped before it finished: a closure that never
/// ran, or a future dropped instead of being polled again. A panic's payload
/// is anything else, so the two are told apart with `downcast_ref` or `is`.
///
/// ```
/// let pool = weft::Pool::builder().workers(1).build().unwrap();
/// let panicked = pool.spawn_with_handle(|| panic!("no"));
/// assert!(!panicked.join().unwrap_err().is::<weft::Aborted>());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Aborted;

impl fmt::Display for Aborted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("weft: the task was aborted before it finished")
    }
}

impl std::error::Error for Aborted {}

/// The result of a task started with [`Pool::spawn_with_handle`](crate::Pool::spawn_with_handle)
/// or [`Pool::spawn_future`](crate::Pool::spawn_future). Dropping it detaches
/// the task, which still runs.
///
/// Besides [`join`](JoinHandle::join), which blocks, the handle is itself a
/// future of the task's result, so async code awaits it without holding a
/// thread:
///
/// ```
/// let pool = weft::Pool::builder().workers(2).build().unwrap();
/// let inner = pool.spawn_with_handle(|| 6 * 7);
/// let outer = pool.spawn_future(async move { inner.await.unwrap() + 1 });
/// assert_eq!(outer.join().unwrap(), 43);
/// ```
pub struct JoinHandle<T> {
    cell: Arc<dyn TaskCell<T>>,
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("finished", &self.is_finished())
            .finish()
    }
}

impl<T> JoinHandle<T> {
    /// The handle of the task whose result slot `cell` holds.
    pub(crate) fn from_cell(cell: Arc<dyn TaskCell<T>>) -> JoinHandle<T> {
        JoinHandle { cell }
    }

    fn packet(&self) -> &Packet<T> {
        self.cell.packet()
    }

    /// Whether the task has finished.
    pub fn is_finished(&self) -> bool {
        self.packet().is_done()
    }

    /// Stops the task if it can still be stopped; [`join`](JoinHandle::join)
    /// (or awaiting the handle) then gives `Err` with an [`Aborted`] payload.
    ///
    /// * A closure task ([`Pool::spawn_with_handle`](crate::Pool::spawn_with_handle))
    ///   that has not started never runs. Its closure is dropped by the
    ///   worker that takes it off the queue (as soon as one gets to it, at
    ///   the latest when the pool is dropped, which runs its queued tasks
    ///   first), and the handle finishes then, not at the abort. One that
    ///   has started runs to its end (a closure cannot be interrupted) and
    ///   its result is kept.
    /// * A future task ([`Pool::spawn_future`](crate::Pool::spawn_future))
    ///   that is pending, neither queued nor being polled, is dropped right
    ///   here, on the calling thread. Otherwise it is dropped when its next
    ///   poll would start, instead of being polled: a poll under way
    ///   finishes (and if it returns `Ready`, the result is kept), and the
    ///   abort queues the next poll itself, so a future that nothing else
    ///   would wake is still dropped.
    ///
    /// If the destructor of the dropped closure or future panics, the panic
    /// is caught and its payload is what `join` reports, as for any panic.
    /// Aborting twice, aborting a finished task (one that panicked
    /// included) and aborting a started closure do nothing.
    ///
    /// ```
    /// use std::sync::mpsc;
    ///
    /// let pool = weft::Pool::builder().workers(1).build().unwrap();
    /// let (release, held) = mpsc::channel::<()>();
    /// pool.spawn(move || held.recv().unwrap()); // keeps the only worker busy
    /// let queued = pool.spawn_with_handle(|| "never runs");
    /// queued.abort();
    /// release.send(()).unwrap();
    /// assert!(queued.join().unwrap_err().is::<weft::Aborted>());
    ///
    /// // Waits for an event nobody signals; the event keeps its waker.
    /// let never = weft::Event::new(weft::EventMode::Manual);
    /// let waiting = pool.spawn_future(never.wait_async());
    /// waiting.abort();
    /// assert!(waiting.join().unwrap_err().is::<weft::Aborted>());
    /// ```
    pub fn abort(&self) {
        Arc::clone(&self.cell).abort();
    }

    /// Has `completion` told, with `id`, once the task's result is in (before
    /// [`is_finished`](JoinHandle::is_finished) says so): at once, on this
    /// thread, if it is in already. One registration at a time; a later one
    /// replaces it.
    pub(crate) fn on_completion(&self, completion: Arc<dyn Completion>, id: u64) {
        {
            let mut inner = lock(&self.packet().inner);
            if inner.result.is_none() && !self.packet().is_done() {
                inner.completion = Some((completion, id));
                return;
            }
        }
        completion.completed(id);
    }

    /// Withdraws the registration of [`JoinHandle::on_completion`], if it has
    /// not been told yet.
    pub(crate) fn forget_completion(&self) {
        lock(&self.packet().inner).completion = None;
    }

    /// Waits for the task and returns its result, or the payload of its panic.
    /// On a worker thread, runs other tasks while it waits.
    pub fn join(self) -> thread::Result<T> {
        self.wait_deadline(None);
        self.take()
    }

    /// As [`JoinHandle::join`], giving up after `timeout`; then the handle is
    /// returned so the caller can wait again.
    pub fn join_timeout(self, timeout: Duration) -> Result<thread::Result<T>, JoinHandle<T>> {
        // A deadline past what `Instant` can hold is no deadline at all.
        self.join_until(crate::sched::waiter::deadline_after(timeout))
    }

    /// As [`JoinHandle::join`], giving up at `deadline`; then the handle is
    /// returned so the caller can wait again.
    pub fn join_deadline(self, deadline: Instant) -> Result<thread::Result<T>, JoinHandle<T>> {
        self.join_until(Some(deadline))
    }

    fn join_until(self, deadline: Option<Instant>) -> Result<thread::Result<T>, JoinHandle<T>> {
        if self.wait_deadline(deadline) {
            Ok(self.take())
        } else {
            Err(self)
        }
    }

    fn wait_deadline(&self, deadline: Option<Instant>) -> bool {
        if self.packet().is_done() {
            return true;
        }
        {
            let mut inner = lock(&self.packet().inner);
            if inner.result.is_some() {
                return true;
            }
            inner.waiter = Some(Waiter::current());
        }
        block_until(&|| self.packet().is_done(), deadline)
    }

    fn take(&self) -> thread::Result<T> {
        lock(&self.packet().inner)
            .result
            .take()
            .expect("a finished task leaves its result")
    }
}

impl<T: Send + 'static> JoinHandle<T> {
    /// A handle that can abort this task but not join it, and that can be
    /// cloned and sent anywhere: tokio's `JoinHandle::abort_handle`.
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(1).build().unwrap();
    /// let (release, held) = std::sync::mpsc::channel::<()>();
    /// pool.spawn(move || held.recv().unwrap()); // keeps the only worker busy
    /// let queued = pool.spawn_with_handle(|| "never runs");
    /// let aborter = queued.abort_handle();
    /// std::thread::spawn(move || aborter.abort()).join().unwrap();
    /// release.send(()).unwrap();
    /// assert!(queued.join().unwrap_err().is::<weft::Aborted>());
    /// ```
    pub fn abort_handle(&self) -> AbortHandle {
        AbortHandle {
            task: Arc::clone(&self.cell) as Arc<dyn AbortTask>,
        }
    }
}

/// What an [`AbortHandle`] reaches of its task, whatever the result type.
pub(crate) trait AbortTask: Send + Sync {
    /// The body of [`JoinHandle::abort`] and [`AbortHandle::abort`].
    fn abort(self: Arc<Self>);
    fn is_finished(&self) -> bool;
}

impl<T: Send> AbortTask for Packet<T> {
    fn abort(self: Arc<Self>) {
        self.claim_abort();
    }

    fn is_finished(&self) -> bool {
        self.is_done()
    }
}

/// Aborts a task without owning its result: from
/// [`JoinHandle::abort_handle`], or from [`JoinSet::spawn`](crate::JoinSet::spawn)
/// and its other spawns (tokio's `AbortHandle`). Cloneable, `Send` and
/// `Sync`; dropping it does nothing to the task.
///
/// ```
/// let pool = weft::Pool::builder().workers(1).build().unwrap();
/// let mut set = weft::JoinSet::new();
/// let (release, held) = std::sync::mpsc::channel::<()>();
/// set.spawn_on(&pool, move || held.recv().unwrap()); // keeps the worker busy
/// let second = set.spawn_on(&pool, || ());
/// second.abort();
/// release.send(()).unwrap();
/// let aborted = std::iter::from_fn(|| set.join_next())
///     .filter(|result| matches!(result, Err(error) if error.is_aborted()))
///     .count();
/// assert_eq!(aborted, 1);
/// assert!(second.is_finished());
/// ```
#[derive(Clone)]
pub struct AbortHandle {
    task: Arc<dyn AbortTask>,
}

impl AbortHandle {
    /// As [`JoinHandle::abort`], which see: a closure that has not started
    /// never runs (one that has runs to its end), a future is dropped
    /// instead of being polled again, and the task's handle (or its
    /// [`JoinSet`](crate::JoinSet)) reports it with an [`Aborted`] payload.
    pub fn abort(&self) {
        Arc::clone(&self.task).abort();
    }

    /// Whether the task has finished: run, panicked, or been aborted and
    /// dropped (an abort of a queued closure finishes the task only once a
    /// worker takes it off the queue).
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }
}

impl fmt::Debug for AbortHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AbortHandle")
            .field("finished", &self.is_finished())
            .finish()
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = thread::Result<T>;

    /// Ready with the task's result, or the payload of its panic.
    ///
    /// # Panics
    /// If polled again after it returned `Ready`.
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut inner = lock(&self.packet().inner);
        if let Some(result) = inner.result.take() {
            return Poll::Ready(result);
        }
        assert!(
            !self.packet().is_done(),
            "JoinHandle polled after it returned its result"
        );
        match &mut inner.waker {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            slot => *slot = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}
