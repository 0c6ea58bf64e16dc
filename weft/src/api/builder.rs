//! Configuring and starting a pool: [`Builder`], the errors it reports, and
//! [`ThreadBuilder`], a worker thread for a spawn handler to start.

use std::any::Any;
use std::fmt;
use std::io;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle as ThreadHandle;
use std::time::Duration;

use crate::api::pool::Pool;
use crate::sched::assembly::{assemble, PoolPlan, StartFailed, WorkerStart};
use crate::sched::fiber::FiberSettings;
pub use crate::sched::fiber::{DEFAULT_FIBER_STACK, DEFAULT_MAX_SUSPENDED};
use crate::sched::registry::{Hooks, PanicHandler, ThreadHook};
use crate::sched::threads::ThreadSetup;

/// The environment variable that sets the default number of workers.
pub const WORKERS_ENV: &str = "WEFT_WORKERS";

/// The most workers a pool can have: [`Builder::workers`] above it fails
/// the build with [`BuildError::TooManyWorkers`]. The scheduler's sleep
/// counters hold worker counts in fields of this width; the spare seats of
/// [`Builder::max_blocking`] share the same room.
///
/// ```
/// let error = weft::Pool::builder()
///     .workers(weft::MAX_WORKERS + 1)
///     .build()
///     .unwrap_err();
/// assert!(matches!(error, weft::BuildError::TooManyWorkers { max: weft::MAX_WORKERS, .. }));
/// ```
pub const MAX_WORKERS: usize = crate::sched::sleep::MAX_WORKERS;

/// The smallest worker stack [`Builder::stack_size`] accepts, in bytes.
pub const MIN_STACK_SIZE: usize = 32 * 1024;

/// How long a searching worker looks for work before it parks, unless
/// [`Builder::spin`] says otherwise: zero, that is one sweep of every queue
/// (more only while a sweep loses races for tasks that were there).
///
/// An idle pool then parks at once, and a task that arrives after the sweep
/// costs one wake-up instead of a spinning core: on trickling work that is
/// the cheaper of the two ([the measurements behind it][tuning-spin]).
///
/// [tuning-spin]: https://github.com/weft-rs/weft/blob/main/docs/TUNING.md#default-spin
pub const DEFAULT_SPIN: Duration = Duration::ZERO;

/// Why a pool could not be built.
#[derive(Debug)]
#[non_exhaustive]
pub enum BuildError {
    /// `workers(0)`, or `WEFT_WORKERS=0`.
    ZeroWorkers,
    /// More workers than the scheduler's counters hold.
    TooManyWorkers {
        /// The number asked for.
        requested: usize,
        /// The most workers a pool can have.
        max: usize,
    },
    /// `WEFT_WORKERS` is set but is not a number.
    InvalidWorkersEnv(String),
    /// A stack smaller than [`MIN_STACK_SIZE`].
    StackTooSmall {
        /// The size asked for, in bytes.
        requested: usize,
        /// [`MIN_STACK_SIZE`].
        min: usize,
    },
    /// The operating system refused to start worker `index`, or the
    /// [spawn handler](Builder::spawn_handler) returned an error for it (or
    /// dropped its [`ThreadBuilder`] unrun before returning `Ok`); the
    /// workers already started were stopped and joined.
    ThreadSpawn {
        /// The worker that could not start.
        index: usize,
        /// What the operating system said.
        source: io::Error,
    },
    /// Workers plus [`Builder::max_blocking`] spare seats exceed what the
    /// scheduler's counters hold.
    TooManyBlocking {
        /// The spare seats asked for.
        requested: usize,
        /// The most that fit beside this many workers.
        max: usize,
    },
    /// `build_global` was called after the global pool already existed.
    GlobalAlreadyInitialized,
    /// [`Builder::use_current_thread`] on a thread that already runs a
    /// pool's tasks: a worker (one that holds its pool's first seat this
    /// way included), or a task inside [`blocking`](crate::blocking).
    CurrentThreadInPool,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::ZeroWorkers => write!(f, "a pool needs at least one worker"),
            BuildError::TooManyWorkers { requested, max } => {
                write!(
                    f,
                    "{requested} workers requested; weft supports at most {max}"
                )
            }
            BuildError::InvalidWorkersEnv(value) => {
                write!(f, "{WORKERS_ENV}={value:?} is not a number of workers")
            }
            BuildError::StackTooSmall { requested, min } => write!(
                f,
                "a worker stack of {requested} bytes is too small; the minimum is {min}"
            ),
            BuildError::ThreadSpawn { index, source } => {
                write!(f, "could not start worker thread {index}: {source}")
            }
            BuildError::TooManyBlocking { requested, max } => write!(
                f,
                "{requested} blocking seats requested; with these workers at most {max} fit"
            ),
            BuildError::GlobalAlreadyInitialized => {
                write!(f, "the global pool was already built")
            }
            BuildError::CurrentThreadInPool => write!(
                f,
                "use_current_thread on a thread that already runs a pool's tasks"
            ),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::ThreadSpawn { source, .. } => Some(source),
            _ => None,
        }
    }
}

type NameFn = Box<dyn Fn(usize) -> String + Send + Sync>;

/// The user's spawn handler; in a `Mutex` only so that `Builder` stays `Sync`.
type SpawnFn = Mutex<Box<dyn FnMut(ThreadBuilder) -> io::Result<()> + Send>>;

/// How `build` starts one worker thread: the handle of a thread it started
/// itself, or `None` for one a spawn handler started.
type StartThread<'a> = dyn FnMut(ThreadBuilder) -> io::Result<Option<ThreadHandle<()>>> + 'a;

/// Spare seats for [`crate::blocking`] when [`Builder::max_blocking`] is not
/// set: blocking calls beyond this many at once run without a stand-in. A
/// seat costs a few hundred bytes up front (its counters and parking
/// slot); its queues and join stack, a few kilobytes, are made with its
/// thread, on first use.
pub const DEFAULT_MAX_BLOCKING: usize = 64;

/// Configures a [`Pool`]. Every setting has a default; see each method.
///
/// ```
/// let pool = weft::Pool::builder()
///     .workers(4)
///     .thread_name(|i| format!("render-{i}"))
///     .build()
///     .expect("pool");
/// assert_eq!(pool.workers(), 4);
/// ```
#[must_use]
#[derive(Default)]
pub struct Builder {
    workers: Option<usize>,
    max_spinning: Option<usize>,
    max_blocking: Option<usize>,
    spin: Option<Duration>,
    thread_name: Option<NameFn>,
    stack_size: Option<usize>,
    fibers: Option<bool>,
    max_suspended: Option<usize>,
    on_thread_start: Option<ThreadHook>,
    on_thread_stop: Option<ThreadHook>,
    panic_handler: Option<PanicHandler>,
    pin_workers: bool,
    batch_scheduling: Option<bool>,
    spawn_handler: Option<SpawnFn>,
    use_current_thread: bool,
    #[cfg(feature = "trace")]
    trace: Option<usize>,
}

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("workers", &self.workers)
            .field("max_spinning", &self.max_spinning)
            .field("max_blocking", &self.max_blocking)
            .field("spin", &self.spin)
            .field("stack_size", &self.stack_size)
            .field("fibers", &self.fibers)
            .field("max_suspended", &self.max_suspended)
            .field("pin_workers", &self.pin_workers)
            .field("batch_scheduling", &self.batch_scheduling)
            .field("spawn_handler", &self.spawn_handler.is_some())
            .field("use_current_thread", &self.use_current_thread)
            .field("trace", &self.trace_setting())
            .finish_non_exhaustive()
    }
}

impl Builder {
    /// A builder with every setting at its default (as [`Pool::builder`]).
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Number of worker threads. Default: `WEFT_WORKERS` if set, else
    /// [`std::thread::available_parallelism`].
    pub fn workers(mut self, workers: usize) -> Self {
        self.workers = Some(workers);
        self
    }

    /// How many workers may search for work at once. Default: half the
    /// workers, at least one. Workers woken for a specific new task search
    /// beyond this bound; only workers looking around on their own count.
    pub fn max_spinning(mut self, searchers: usize) -> Self {
        self.max_spinning = Some(searchers);
        self
    }

    /// How many [`blocking`](crate::blocking) calls at once get a spare thread
    /// to stand in for their worker. Default: [`DEFAULT_MAX_BLOCKING`] (fewer if
    /// the workers leave less room in the counters). `0` turns stand-ins off.
    /// Spare threads start on first use and live as long as the pool.
    pub fn max_blocking(mut self, seats: usize) -> Self {
        self.max_blocking = Some(seats);
        self
    }

    /// How long a searching worker sweeps the queues before it parks.
    /// Default: [`DEFAULT_SPIN`] (one sweep). A longer spin trades CPU for
    /// lower latency when tasks arrive in gaps shorter than a wake-up. Any
    /// duration is accepted, `Duration::MAX` included; a pool that is being
    /// dropped stops spinning at once.
    pub fn spin(mut self, spin: Duration) -> Self {
        self.spin = Some(spin);
        self
    }

    /// Names worker threads. Default: `weft-worker-{index}`, and
    /// `weft-spare-{index}` for the spare threads of [`blocking`](crate::blocking),
    /// whose indexes follow the workers'. If the closure panics in
    /// [`build`](Builder::build), the workers already started are stopped and
    /// joined before the panic reaches the caller; if it panics naming a
    /// spare, the spare gets the default name and the panic goes to the
    /// panic handler.
    pub fn thread_name(mut self, name: impl Fn(usize) -> String + Send + Sync + 'static) -> Self {
        self.thread_name = Some(Box::new(name));
        self
    }

    /// Stack size in bytes of each task stack (fiber) and of each worker
    /// thread. Tasks run on their worker's fibers (crate docs, "Waiting
    /// inside a task"), each a stack of this size: reserved up front,
    /// committed by the operating system only as it is touched, with a guard
    /// page below it. Default: [`DEFAULT_FIBER_STACK`] (2 MiB, what the
    /// standard library gives a thread) for fibers, the standard library's
    /// default for the threads.
    ///
    /// Overflowing a fiber's stack faults on its guard page. On Linux the
    /// process then writes "thread '`name`' (`id`) has overflowed its
    /// stack" and this setting's name, and aborts, as the standard library
    /// does for a thread's stack: the process's first fiber stack puts a
    /// `SIGSEGV` handler in front of the one installed before it, and
    /// passes that one every other signal (sched/fiber_overflow.rs). On
    /// other Unix systems the overflow is a bare segmentation fault.
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }

    /// Whether a task that waits on weft (a [`WaitGroup`], [`Event`],
    /// [`Ticket`], [`Condvar`], [`JoinHandle::join`], a `join` half another
    /// worker runs, a `scope`) suspends, its worker going on with other
    /// tasks. Default: true where fibers are supported (x86_64 and AArch64;
    /// not under loom or Miri). With `false`, or where they are not
    /// supported, a waiting worker runs other queued tasks on top of the
    /// waiting one instead (crate docs, "Waiting inside a task"), which
    /// deadlocks if one of those waits for the task beneath it.
    ///
    /// [`WaitGroup`]: crate::WaitGroup
    /// [`Event`]: crate::Event
    /// [`Ticket`]: crate::Ticket
    /// [`Condvar`]: crate::Condvar
    /// [`JoinHandle::join`]: crate::JoinHandle::join
    pub fn fibers(mut self, suspend: bool) -> Self {
        self.fibers = Some(suspend);
        self
    }

    /// The most tasks of this pool suspended in a wait at once. Default:
    /// [`DEFAULT_MAX_SUSPENDED`] (each suspended task holds a stack of
    /// [`stack_size`](Builder::stack_size) bytes reserved, of which it
    /// commits what it touched). A wait beyond the cap does not suspend: its
    /// worker runs other tasks on top of it until it ends, as with
    /// [`fibers(false)`](Builder::fibers). Whatever the cap, the stacks of
    /// every pool in the process come from one budget (on Linux seven
    /// eighths of `vm.max_map_count`, two mappings a stack: 28,669 stacks at
    /// the default 65,530), and a wait that finds it spent helps too
    /// (crate docs, "Waiting inside a task").
    pub fn max_suspended(mut self, tasks: usize) -> Self {
        self.max_suspended = Some(tasks);
        self
    }

    /// Runs on each worker thread, with its index, before it takes any task
    /// (and on each spare thread of [`blocking`](crate::blocking) as it
    /// starts, with its seat's index, which follows the workers'). Tasks the
    /// hook spawns run even if the pool is dropped at once: the pool does not
    /// finish draining before every start hook has returned. A panic in the
    /// hook goes to the [panic handler](Builder::panic_handler).
    pub fn on_thread_start(mut self, hook: impl Fn(usize) + Send + Sync + 'static) -> Self {
        self.on_thread_start = Some(Box::new(hook));
        self
    }

    /// Runs on each worker thread (and spare thread), with its index, as the
    /// dropped pool winds down: after every queued task has run, before the
    /// threads exit. The hook runs as a task of the pool would: what it
    /// spawns (`weft::spawn`, `weft::spawn_future`) and the futures it wakes
    /// still run, on the workers, before the pool's drop returns. A panic in
    /// the hook goes to the [panic handler](Builder::panic_handler).
    ///
    /// One limit: by the time the hooks run, the spare threads of
    /// [`blocking`](crate::blocking) have stopped, so a `weft::blocking` call
    /// in the hook runs without a stand-in. A call that waits there for a
    /// task of the same pool (a channel another task sends on, a `join`)
    /// waits for ever when every worker does the same: wait for such tasks
    /// without `blocking` (a plain `WaitGroup::wait` helps run them).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    ///
    /// let flushed = Arc::new(AtomicUsize::new(0));
    /// let counter = Arc::clone(&flushed);
    /// let pool = weft::Pool::builder()
    ///     .workers(2)
    ///     .on_thread_stop(move |_| {
    ///         let counter = Arc::clone(&counter);
    ///         weft::spawn(move || {
    ///             counter.fetch_add(1, Ordering::SeqCst);
    ///         });
    ///     })
    ///     .build()
    ///     .unwrap();
    /// drop(pool);
    /// assert_eq!(flushed.load(Ordering::SeqCst), 2);
    /// ```
    pub fn on_thread_stop(mut self, hook: impl Fn(usize) + Send + Sync + 'static) -> Self {
        self.on_thread_stop = Some(Box::new(hook));
        self
    }

    /// Receives the payload of every panic that escapes a fire-and-forget task
    /// (`spawn`, `spawn_on`). Default: the panic is reported by the standard
    /// panic hook and the worker carries on.
    pub fn panic_handler(
        mut self,
        handler: impl Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    ) -> Self {
        self.panic_handler = Some(Box::new(handler));
        self
    }

    /// Pins worker `i` to core `i mod cores`. Default: off. Where the operating
    /// system refuses, the worker runs unpinned.
    pub fn pin_workers(mut self, pin: bool) -> Self {
        self.pin_workers = pin;
        self
    }

    /// Whether the pool's threads run under Linux's `SCHED_BATCH` policy.
    /// Default: on for a pool of more workers than the process has cores,
    /// off otherwise. Such a thread, woken onto a core where another
    /// thread runs, waits for that thread's time slice to end or for it to
    /// sleep rather than preempting it; woken where a core is idle, it runs
    /// at once, as any thread. (Which core a woken thread goes to is the
    /// kernel's choice: some virtual machines' kernels put it on its
    /// waker's core even while another is idle, and it then waits for the
    /// waker to sleep.) In a pool of more workers than cores the
    /// threads it would preempt are mostly its own: a worker woken to take
    /// a piece of a loop would throw the worker that holds the rest of the
    /// loop off its core. Where other programs keep every core busy, the
    /// policy delays a woken worker by up to a time slice (a millisecond or
    /// so), which is why a pool that fits the cores does not use it unless
    /// asked. Only threads under the normal policy are moved (a spawn
    /// handler's real-time thread keeps its own), and a thread gets its
    /// policy back when it leaves the pool. No effect on other systems, or
    /// where the system refuses.
    ///
    /// ```
    /// let pool = weft::Pool::builder()
    ///     .workers(2)
    ///     .batch_scheduling(true)
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(pool.install(|| 1 + 1), 2);
    /// ```
    pub fn batch_scheduling(mut self, batch: bool) -> Self {
        self.batch_scheduling = Some(batch);
        self
    }

    /// The policy for a pool of `workers` on `cores`: the user's, else the
    /// default rule of sched/threads.rs.
    fn batch_scheduling_setting(&self, workers: usize, cores: usize) -> bool {
        self.batch_scheduling
            .unwrap_or_else(|| crate::sched::threads::batch_by_default(workers, cores))
    }

    /// Records what each worker does — tasks run (with their names, see
    /// [`Pool::spawn_named`]), searches, parks and wake-ups, steals and
    /// injections — in a ring of the last `events_per_worker` events per
    /// worker, for [`Pool::trace`]. Default: off. Only with the cargo feature
    /// `trace`; without it no recording code is compiled in.
    ///
    /// ```
    /// # #[cfg(feature = "trace")] {
    /// let pool = weft::Pool::builder().workers(2).trace(10_000).build().unwrap();
    /// pool.spawn_named("hello", || println!("hello"));
    /// # }
    /// ```
    #[cfg(feature = "trace")]
    #[cfg_attr(docsrs, doc(cfg(feature = "trace")))]
    pub fn trace(mut self, events_per_worker: usize) -> Self {
        self.trace = Some(events_per_worker);
        self
    }

    #[cfg(feature = "trace")]
    fn trace_setting(&self) -> Option<usize> {
        self.trace
    }

    #[cfg(not(feature = "trace"))]
    fn trace_setting(&self) -> Option<usize> {
        None
    }

    /// Has `spawn` start each worker thread instead of `build` (rayon's
    /// `ThreadPoolBuilder::spawn_handler`). `build` calls it once per worker,
    /// in index order, with a [`ThreadBuilder`] whose
    /// [`run`](ThreadBuilder::run) is that worker's whole life: the handler
    /// starts a thread of its choosing (named and sized as it likes, see
    /// [`ThreadBuilder::name`] and [`ThreadBuilder::stack_size`]) that calls
    /// `run`, and returns `Ok(())`. An `Err` (or a panic) fails the build:
    /// the workers already started are stopped and waited for, and `build`
    /// returns [`BuildError::ThreadSpawn`] with the error (or goes on
    /// panicking). A handler that fails should let its `ThreadBuilder` drop
    /// (as returning does): one it keeps is waited for until it is run or
    /// dropped.
    ///
    /// The contract, which weft cannot check for a thread it did not start:
    /// after `Ok(())`, `run` must be called, on a thread of its own, not on
    /// the thread calling `build` (which would run the worker there and never
    /// return) and not on a thread already running a pool's tasks (`run`
    /// panics there). A `ThreadBuilder` dropped unrun before the handler
    /// returns `Ok` fails the build as an `Err` would; one dropped unrun
    /// later leaves the pool a worker short (the tasks pinned to that worker,
    /// and every [`Pool::broadcast`], never finish). Dropping the pool waits
    /// for every `run` to return, as it joins the threads it starts itself.
    ///
    /// Only the workers go through the handler: the spare threads of
    /// [`blocking`](crate::blocking) are started by weft, as `build` starts
    /// threads (with [`thread_name`](Builder::thread_name) and
    /// [`stack_size`](Builder::stack_size)), so a task that relies on what
    /// the handler sets up in its threads (a thread-local, say) must not
    /// count on it inside `blocking`'s stand-ins. For threads that borrow
    /// from the caller's stack (`std::thread::scope`), use
    /// [`build_scoped`](Builder::build_scoped): this handler is `'static`.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    ///
    /// let threads = Arc::new(Mutex::new(Vec::new()));
    /// let started = Arc::clone(&threads);
    /// let pool = weft::Pool::builder()
    ///     .workers(2)
    ///     .thread_name(|i| format!("custom-{i}"))
    ///     .spawn_handler(move |thread| {
    ///         let mut builder = std::thread::Builder::new();
    ///         if let Some(name) = thread.name() {
    ///             builder = builder.name(name.to_owned());
    ///         }
    ///         if let Some(bytes) = thread.stack_size() {
    ///             builder = builder.stack_size(bytes);
    ///         }
    ///         started.lock().unwrap().push(builder.spawn(|| thread.run())?);
    ///         Ok(())
    ///     })
    ///     .build()
    ///     .unwrap();
    /// let name = pool.install(|| std::thread::current().name().map(str::to_owned));
    /// assert!(name.unwrap().starts_with("custom-"));
    /// drop(pool); // every `run` has returned
    /// for thread in threads.lock().unwrap().drain(..) {
    ///     thread.join().unwrap();
    /// }
    /// ```
    pub fn spawn_handler<F>(mut self, spawn: F) -> Self
    where
        F: FnMut(ThreadBuilder) -> io::Result<()> + Send + 'static,
    {
        self.spawn_handler = Some(Mutex::new(Box::new(spawn)));
        self
    }

    /// Makes the thread that calls `build` the pool's worker 0, so that the
    /// pool starts one thread fewer (rayon's
    /// `ThreadPoolBuilder::use_current_thread`). From `build` until it
    /// drops the pool, that thread is the worker with index 0:
    /// [`current_thread_index`](crate::current_thread_index) is `Some(0)`,
    /// the free functions (`weft::spawn`, `join`, `scope`, parallel loops)
    /// act on this pool, [`Pool::install`] runs in place, and what the
    /// thread spawns goes onto its own queue, where the other workers take
    /// it. The pool neither starts, names, pins nor hands to a spawn
    /// handler a thread for index 0, and runs neither thread hook on it.
    ///
    /// The thread does not run the worker loop between its calls into
    /// weft, so a task queued for worker 0 alone (`spawn_on(0, ..)`, its
    /// part of a broadcast) runs only when the thread waits in the pool (a
    /// `join`, a scope, a [`JoinHandle::join`](crate::JoinHandle::join)...)
    /// or drops it. Its waits run other tasks meanwhile, as a worker's do,
    /// but do not suspend: the thread's stack is its own program's.
    ///
    /// Drop the pool on that thread, outside its tasks: the thread then
    /// runs what is left as worker 0, the pool shuts down as any pool does
    /// (see [`Pool`]), and the thread is no worker any more. Dropped
    /// anywhere else (on another thread, or inside one of its tasks), the
    /// pool cannot stop a thread it did not start: it closes, and goes on
    /// running what that thread queues, with its other threads, for the
    /// life of the process. The thread's worker state is freed when the
    /// thread exits.
    ///
    /// `build` returns [`BuildError::CurrentThreadInPool`] on a thread that
    /// already runs a pool's tasks.
    ///
    /// ```
    /// let pool = weft::Pool::builder()
    ///     .workers(2)
    ///     .use_current_thread()
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(weft::current_thread_index(), Some(0));
    /// let (a, b) = weft::join(|| 1 + 1, || 2 + 2); // on this pool
    /// assert_eq!((a, b), (2, 4));
    /// drop(pool);
    /// assert_eq!(weft::current_thread_index(), None);
    /// ```
    pub fn use_current_thread(mut self) -> Self {
        self.use_current_thread = true;
        self
    }

    /// Builds a pool whose worker threads are scoped threads of
    /// [`std::thread::scope`], runs `with_pool` with it, then drops the pool
    /// and returns what `with_pool` returned, once every thread has ended
    /// (rayon's `ThreadPoolBuilder::build_scoped`). Each worker thread calls
    /// `wrapper` with its [`ThreadBuilder`]; `wrapper` may borrow from the
    /// caller (set a scoped thread-local, say) and must call
    /// [`ThreadBuilder::run`], as a [spawn handler](Builder::spawn_handler)'s
    /// thread must. The threads are named and sized as `build` names and
    /// sizes its own; a spawn handler set on this builder is not used.
    ///
    /// `with_pool` gets the pool by reference: the pool cannot outlive the
    /// scope. The spare threads of [`blocking`](crate::blocking) are not
    /// scoped and do not run `wrapper` (see `spawn_handler`).
    ///
    /// ```
    /// use std::cell::Cell;
    ///
    /// thread_local!(static SEEN: Cell<usize> = const { Cell::new(0) });
    ///
    /// let table = vec![1, 2, 3]; // borrowed by every worker thread
    /// let sums = weft::Pool::builder()
    ///     .workers(2)
    ///     .build_scoped(
    ///         |thread| {
    ///             SEEN.with(|seen| seen.set(table.iter().sum()));
    ///             thread.run()
    ///         },
    ///         |pool| pool.broadcast(|_| SEEN.with(Cell::get)),
    ///     )
    ///     .unwrap();
    /// assert_eq!(sums, [6, 6]);
    /// drop(table); // no thread borrows it any more
    /// ```
    pub fn build_scoped<W, F, R>(mut self, wrapper: W, with_pool: F) -> Result<R, BuildError>
    where
        W: Fn(ThreadBuilder) + Sync,
        F: FnOnce(&Pool) -> R,
    {
        self.spawn_handler = None;
        std::thread::scope(|scope| {
            let wrapper = &wrapper;
            let pool = self.build_with(&mut |thread: ThreadBuilder| {
                thread
                    .std_builder()
                    .spawn_scoped(scope, move || wrapper(thread))?;
                Ok(None)
            })?;
            Ok(with_pool(&pool))
        })
    }

    /// Starts the pool.
    pub fn build(mut self) -> Result<Pool, BuildError> {
        match self.spawn_handler.take() {
            Some(handler) => {
                let mut handler = handler.into_inner().unwrap_or_else(PoisonError::into_inner);
                self.build_with(&mut |thread| handler(thread).map(|()| None))
            }
            None => self.build_with(&mut |thread| {
                thread.std_builder().spawn(move || thread.run()).map(Some)
            }),
        }
    }

    /// Starts the pool with `spawn` as its [spawn handler](Builder::spawn_handler),
    /// under that method's contract, for a handler that need not be `'static`
    /// nor `Send`: it is called only here, on this thread, before this
    /// returns, so it may borrow from the caller (a counter, a list of the
    /// threads it starts). The threads it starts still must not borrow what
    /// the pool may outlive; for threads that borrow, see
    /// [`build_scoped`](Builder::build_scoped). A handler set with
    /// `spawn_handler` is not used.
    ///
    /// ```
    /// let mut threads = Vec::new(); // borrowed by the handler
    /// let pool = weft::Pool::builder()
    ///     .workers(2)
    ///     .build_with_spawn_handler(|thread| {
    ///         threads.push(std::thread::spawn(|| thread.run()));
    ///         Ok(())
    ///     })
    ///     .unwrap();
    /// assert_eq!(pool.install(weft::current_num_threads), 2);
    /// drop(pool); // every `run` has returned
    /// for thread in threads {
    ///     thread.join().unwrap();
    /// }
    /// ```
    pub fn build_with_spawn_handler<F>(mut self, mut spawn: F) -> Result<Pool, BuildError>
    where
        F: FnMut(ThreadBuilder) -> io::Result<()>,
    {
        self.spawn_handler = None;
        self.build_with(&mut |thread| spawn(thread).map(|()| None))
    }

    /// `build`, with `start` starting each worker thread.
    fn build_with(self, start: &mut StartThread<'_>) -> Result<Pool, BuildError> {
        // Read once for the whole build: the read is system calls, tens of
        // microseconds (sched/registry.rs, `cores`).
        let cores = crate::sched::registry::cores();
        let workers = match self.workers {
            Some(workers) => workers,
            None => default_workers(cores)?,
        };
        let batch_scheduling = self.batch_scheduling_setting(workers, cores);
        if workers == 0 {
            return Err(BuildError::ZeroWorkers);
        }
        if self.use_current_thread && crate::sched::context::runs_pool_tasks() {
            return Err(BuildError::CurrentThreadInPool);
        }
        if workers > MAX_WORKERS {
            return Err(BuildError::TooManyWorkers {
                requested: workers,
                max: MAX_WORKERS,
            });
        }
        if let Some(requested) = self.stack_size {
            if requested < MIN_STACK_SIZE {
                return Err(BuildError::StackTooSmall {
                    requested,
                    min: MIN_STACK_SIZE,
                });
            }
        }
        let room = MAX_WORKERS - workers;
        let max_blocking = match self.max_blocking {
            Some(requested) if requested > room => {
                return Err(BuildError::TooManyBlocking {
                    requested,
                    max: room,
                })
            }
            Some(requested) => requested,
            None => DEFAULT_MAX_BLOCKING.min(room),
        };
        let max_spinning = self.max_spinning.unwrap_or(workers / 2).max(1);
        let hooks = Hooks {
            spin: self.spin.unwrap_or(DEFAULT_SPIN),
            panic_handler: self.panic_handler,
            on_thread_start: self.on_thread_start,
            on_thread_stop: self.on_thread_stop,
            fibers: FiberSettings {
                enabled: self.fibers.unwrap_or(true),
                stack_size: self.stack_size.unwrap_or(DEFAULT_FIBER_STACK),
                max_suspended: self.max_suspended.unwrap_or(DEFAULT_MAX_SUSPENDED),
            },
            #[cfg(feature = "trace")]
            trace: self
                .trace
                .map(|events| crate::sched::recorder::Tracer::new(workers, max_blocking, events)),
        };
        let plan = PoolPlan {
            workers,
            max_blocking,
            max_spinning,
            hooks,
            setup: ThreadSetup {
                name: self.thread_name.map(Arc::from),
                stack_size: self.stack_size,
                workers,
                batch_scheduling,
            },
            pin_workers: self.pin_workers,
            adopt_seat_0: self.use_current_thread,
            cores,
        };
        let stack_size = self.stack_size;
        let assembled = assemble(plan, &mut |index, name, worker| {
            start(ThreadBuilder {
                index,
                name,
                stack_size,
                start: Some(worker),
            })
        });
        match assembled {
            Ok(pool) => Ok(Pool::from_parts(
                pool.registry,
                pool.threads,
                pool.exits,
                pool.adopted,
            )),
            Err(StartFailed { index, source }) => Err(BuildError::ThreadSpawn { index, source }),
        }
    }

    /// Builds the pool that free functions (`weft::spawn`, `weft::join`, ...)
    /// use outside any pool. Fails if it already exists (it is built lazily
    /// with defaults on first use).
    pub fn build_global(self) -> Result<(), BuildError> {
        crate::api::global::install_builder(self)
    }
}

/// One worker thread of a pool being built, for a
/// [spawn handler](Builder::spawn_handler) (or
/// [`build_scoped`](Builder::build_scoped)'s wrapper) to start: the thread
/// calls [`run`](ThreadBuilder::run), which is the worker. rayon's
/// `ThreadBuilder`.
///
/// ```
/// let pool = weft::Pool::builder()
///     .workers(1)
///     .stack_size(1 << 20)
///     .spawn_handler(|thread| {
///         assert_eq!(thread.index(), 0);
///         assert_eq!(thread.name(), Some("weft-worker-0"));
///         assert_eq!(thread.stack_size(), Some(1 << 20));
///         std::thread::spawn(|| thread.run());
///         Ok(())
///     })
///     .build()
///     .unwrap();
/// assert_eq!(pool.install(|| weft::current_thread_index()), Some(0));
/// ```
pub struct ThreadBuilder {
    index: usize,
    name: String,
    stack_size: Option<usize>,
    /// What `run` needs; taken by `run`, so `None` only after it.
    start: Option<WorkerStart>,
}

impl ThreadBuilder {
    /// The worker's index in its pool, below the pool's `workers()`: what
    /// [`current_thread_index`](crate::current_thread_index) returns on it.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The name weft gives this worker's thread: the
    /// [`thread_name`](Builder::thread_name) closure's, else
    /// `weft-worker-{index}`. Always `Some` (an `Option` for rayon's
    /// signature).
    pub fn name(&self) -> Option<&str> {
        Some(&self.name)
    }

    /// The [`stack_size`](Builder::stack_size) set on the builder, if any:
    /// the size to give the thread (`None`: the standard library's default,
    /// as `build` gives its own threads). Each task runs on a fiber stack
    /// of this size (or [`DEFAULT_FIBER_STACK`]) whatever the thread's.
    pub fn stack_size(&self) -> Option<usize> {
        self.stack_size
    }

    /// Runs the worker on the calling thread: takes the pool's tasks until
    /// the pool is dropped and has shut down (see [`Pool`]), then returns.
    /// A thread pinned by [`pin_workers`](Builder::pin_workers) is pinned
    /// here.
    ///
    /// # Panics
    /// On a thread that already runs a pool's tasks (one of its workers, a
    /// task of one, or a [`blocking`](crate::blocking) call inside one); the
    /// worker is then given up as if dropped unrun.
    pub fn run(mut self) {
        assert!(
            !crate::sched::context::runs_pool_tasks(),
            "ThreadBuilder::run: this thread already runs a pool's tasks"
        );
        let Some(start) = self.start.take() else {
            unreachable!("a ThreadBuilder runs at most once");
        };
        start.run();
    }

    /// A `std::thread::Builder` with this worker's name and stack size.
    fn std_builder(&self) -> std::thread::Builder {
        let builder = std::thread::Builder::new().name(self.name.clone());
        match self.stack_size {
            Some(bytes) => builder.stack_size(bytes),
            None => builder,
        }
    }
}

impl Drop for ThreadBuilder {
    /// Unrun: the worker never starts, and the pool no longer counts on it.
    fn drop(&mut self) {
        if let Some(start) = self.start.take() {
            start.abandon();
        }
    }
}

impl fmt::Debug for ThreadBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadBuilder")
            .field("index", &self.index)
            .field("name", &self.name)
            .field("stack_size", &self.stack_size)
            .finish_non_exhaustive()
    }
}

/// The workers of a pool whose builder did not say: [`WORKERS_ENV`] if set,
/// else one per core of the `cores` the build read.
fn default_workers(cores: usize) -> Result<usize, BuildError> {
    match std::env::var(WORKERS_ENV) {
        Ok(value) if !value.trim().is_empty() => value
            .trim()
            .parse()
            .map_err(|_| BuildError::InvalidWorkersEnv(value)),
        _ => Ok(cores),
    }
}
