//! Configuring and building pools: [`ThreadPoolBuilder`], the
//! [`ThreadBuilder`] a spawn handler starts, [`ThreadPoolBuildError`], and
//! the deprecated [`Configuration`] and [`initialize`].

use std::any::Any;
use std::error::Error;
use std::fmt;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::pool::ThreadPool;

type PanicHandler = dyn Fn(Box<dyn Any + Send>) + Send + Sync;
type ThreadHook = dyn Fn(usize) + Send + Sync;
type ThreadName = dyn FnMut(usize) -> String;

/// How a builder starts its threads: the standard library's threads
/// ([`ThreadPoolBuilder`]'s default), or the user's
/// [`spawn_handler`](ThreadPoolBuilder::spawn_handler). Public only to
/// appear in the builder's signatures; it cannot be named or implemented
/// outside this crate.
pub trait SpawnThreads: sealed::Sealed {
    /// Starts a thread that runs `thread`.
    #[doc(hidden)]
    fn spawn(&mut self, thread: ThreadBuilder) -> io::Result<()>;
}

mod sealed {
    pub trait Sealed {}
}

/// The default way to start threads: a standard library thread named and
/// sized as the [`ThreadBuilder`] says.
#[derive(Debug, Default)]
pub struct StdThreads;

impl sealed::Sealed for StdThreads {}

impl SpawnThreads for StdThreads {
    fn spawn(&mut self, thread: ThreadBuilder) -> io::Result<()> {
        // weft's own name for the thread (`weft-worker-{index}`) when the
        // user gave none: rayon's threads would be unnamed, but the name is
        // how a user sees that the patch took effect.
        let name = thread
            .name
            .clone()
            .unwrap_or_else(|| thread.inner.name().unwrap_or_default().to_owned());
        let mut builder = std::thread::Builder::new().name(name);
        if let Some(bytes) = thread.stack_size() {
            builder = builder.stack_size(bytes);
        }
        builder.spawn(move || thread.run())?;
        Ok(())
    }
}

/// The user's [`spawn_handler`](ThreadPoolBuilder::spawn_handler).
pub struct SpawnWith<F>(F);

impl<F> sealed::Sealed for SpawnWith<F> {}

impl<F> SpawnThreads for SpawnWith<F>
where
    F: FnMut(ThreadBuilder) -> io::Result<()>,
{
    fn spawn(&mut self, thread: ThreadBuilder) -> io::Result<()> {
        (self.0)(thread)
    }
}

impl<F> fmt::Debug for SpawnWith<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SpawnWith(<closure>)")
    }
}

/// Configures a [`ThreadPool`], or the global pool
/// ([`build_global`](ThreadPoolBuilder::build_global)). Every setting has
/// a default; see each method.
///
/// ```
/// let pool = rayon_core::ThreadPoolBuilder::new()
///     .num_threads(4)
///     .thread_name(|i| format!("render-{i}"))
///     .build()
///     .unwrap();
/// assert_eq!(pool.current_num_threads(), 4);
/// ```
pub struct ThreadPoolBuilder<S = StdThreads> {
    num_threads: usize,
    use_current_thread: bool,
    panic_handler: Option<Box<PanicHandler>>,
    thread_name: Option<Box<ThreadName>>,
    stack_size: Option<usize>,
    start_handler: Option<Box<ThreadHook>>,
    exit_handler: Option<Box<ThreadHook>>,
    spawn: S,
    breadth_first: bool,
}

impl Default for ThreadPoolBuilder {
    fn default() -> Self {
        ThreadPoolBuilder {
            num_threads: 0,
            use_current_thread: false,
            panic_handler: None,
            thread_name: None,
            stack_size: None,
            start_handler: None,
            exit_handler: None,
            spawn: StdThreads,
            breadth_first: false,
        }
    }
}

impl ThreadPoolBuilder {
    /// A builder with every setting at its default.
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds a pool whose threads are scoped threads of
    /// [`std::thread::scope`], calls `with_pool` with it, and returns what
    /// that returned once the pool is dropped and every thread has ended.
    /// Each thread calls `wrapper` with its [`ThreadBuilder`]; `wrapper`
    /// may borrow from the caller (to set up a thread-local, say) and must
    /// call [`ThreadBuilder::run`].
    ///
    /// ```
    /// use std::cell::Cell;
    ///
    /// thread_local!(static LIMIT: Cell<usize> = const { Cell::new(0) });
    ///
    /// let limit = 7; // borrowed by every thread
    /// let seen = rayon_core::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .build_scoped(
    ///         |thread| {
    ///             LIMIT.with(|l| l.set(limit));
    ///             thread.run()
    ///         },
    ///         |pool| pool.broadcast(|_| LIMIT.with(Cell::get)),
    ///     )
    ///     .unwrap();
    /// assert_eq!(seen, [7, 7]);
    /// ```
    pub fn build_scoped<W, F, R>(self, wrapper: W, with_pool: F) -> Result<R, ThreadPoolBuildError>
    where
        W: Fn(ThreadBuilder) + Sync,
        F: FnOnce(&ThreadPool) -> R,
    {
        std::thread::scope(|scope| {
            let wrapper = &wrapper;
            let pool = self
                .spawn_handler(|thread| {
                    let mut builder = std::thread::Builder::new();
                    if let Some(name) = thread.name() {
                        builder = builder.name(name.to_owned());
                    }
                    if let Some(bytes) = thread.stack_size() {
                        builder = builder.stack_size(bytes);
                    }
                    builder.spawn_scoped(scope, move || wrapper(thread))?;
                    Ok(())
                })
                .build()?;
            // The pool's drop lets its threads finish on their own; the
            // scope then waits for them, so nothing they borrow is gone.
            Ok(with_pool(&pool))
        })
    }
}

impl<S: SpawnThreads> ThreadPoolBuilder<S> {
    /// Builds the pool: its threads are started before this returns.
    ///
    /// Fails if a thread cannot be started (the threads already started
    /// then end), or with [`use_current_thread`](Self::use_current_thread)
    /// on a thread that is already one of a pool's.
    pub fn build(self) -> Result<ThreadPool, ThreadPoolBuildError> {
        self.build_weft().map(ThreadPool::from_weft)
    }

    /// Builds the global pool, the one the free functions ([`join`](crate::join),
    /// [`spawn`](crate::spawn), [`scope`](crate::scope)...) use outside any pool,
    /// with these settings. Fails if the global pool already exists: built
    /// by an earlier `build_global`, or with the defaults by the first free
    /// function called outside any pool (or by weft's own API, as both
    /// share it).
    ///
    /// ```
    /// rayon_core::ThreadPoolBuilder::new().num_threads(2).build_global().unwrap();
    /// assert_eq!(rayon_core::current_num_threads(), 2);
    /// assert!(rayon_core::ThreadPoolBuilder::new().build_global().is_err());
    /// ```
    pub fn build_global(self) -> Result<(), ThreadPoolBuildError> {
        let _only_one = GLOBAL_LOCK.lock().unwrap_or_else(PoisonError::into_inner);
        if GLOBAL_SET.load(Ordering::Acquire) {
            return Err(ThreadPoolBuildError::new(
                ErrorKind::GlobalPoolAlreadyInitialized,
            ));
        }
        let pool = self.build_weft()?;
        let installed = pool.into_global();
        // Whatever the outcome, the global pool exists now: the free
        // functions have nothing left to check.
        GLOBAL_SET.store(true, Ordering::Release);
        DEFAULTS_GIVEN.store(true, Ordering::Release);
        installed.map_err(|pool| {
            // weft's own API built the global pool first: this one goes,
            // without waiting for its threads.
            pool.shutdown_background();
            ThreadPoolBuildError::new(ErrorKind::GlobalPoolAlreadyInitialized)
        })
    }

    /// The weft pool these settings describe.
    fn build_weft(self) -> Result<weft::Pool, ThreadPoolBuildError> {
        let ThreadPoolBuilder {
            num_threads,
            use_current_thread,
            panic_handler,
            mut thread_name,
            stack_size,
            start_handler,
            exit_handler,
            mut spawn,
            // weft has one task order; the deprecated setting changes nothing.
            breadth_first: _,
        } = self;
        let mut builder = weft::Builder::new();
        if let Some(threads) = thread_count(num_threads) {
            builder = builder.workers(threads);
        }
        if let Some(bytes) = stack_size {
            // weft refuses stacks below its minimum; rayon takes any size,
            // and a larger stack serves the same purpose.
            builder = builder.stack_size(bytes.max(weft::MIN_STACK_SIZE));
        }
        builder = match panic_handler {
            Some(handler) => builder.panic_handler(handler),
            None => builder.panic_handler(abort_on_panic),
        };
        if let Some(hook) = start_handler {
            builder = builder.on_thread_start(hook);
        }
        if let Some(hook) = exit_handler {
            builder = builder.on_thread_stop(hook);
        }
        if use_current_thread {
            builder = builder.use_current_thread();
        }
        // Every pool starts its threads through a handler, even the default
        // one: rayon calls `thread_name` (an `FnMut`, neither `Send` nor
        // `'static`) once per thread as the pool is built, which this does
        // here, on the building thread.
        builder
            .build_with_spawn_handler(|inner| {
                let name = thread_name.as_mut().map(|name| name(inner.index()));
                spawn.spawn(ThreadBuilder { inner, name })
            })
            .map_err(ThreadPoolBuildError::from_weft)
    }
}

/// Serialises the explicit builds of the global pool.
static GLOBAL_LOCK: Mutex<()> = Mutex::new(());
/// Set once the global pool exists as this crate knows it: built by
/// [`ThreadPoolBuilder::build_global`], or by [`make_default_global`].
static GLOBAL_SET: AtomicBool = AtomicBool::new(false);
/// Set once weft knows how to build the global pool with rayon's defaults
/// (or the pool exists): the free functions then have nothing to check.
static DEFAULTS_GIVEN: AtomicBool = AtomicBool::new(false);

/// Tells weft to build the global pool with rayon's defaults
/// ([`make_default_global`]) when a free function first needs it, unless
/// it exists already (see [`crate::ensure_global`]). Builds nothing.
#[cold]
pub(crate) fn give_global_defaults() {
    // An error means the pool exists or is being built (by `build_global`,
    // by weft's own API, or by a maker set before): nothing is left to do.
    let _ = weft::Pool::set_global_maker(make_default_global);
    DEFAULTS_GIVEN.store(true, Ordering::Release);
}

/// Whether [`give_global_defaults`] has still to run (one load).
#[inline]
pub(crate) fn global_defaults_untold() -> bool {
    !DEFAULTS_GIVEN.load(Ordering::Acquire)
}

/// The global pool with the default settings, which weft calls on the
/// pool's first use. It takes no lock: `build_global`, which holds
/// [`GLOBAL_LOCK`], may be waiting for weft to finish this very build.
fn make_default_global() -> weft::Pool {
    let pool = ThreadPoolBuilder::new()
        .build_weft()
        .unwrap_or_else(|error| panic!("rayon-core (weft): cannot build the global pool: {error}"));
    GLOBAL_SET.store(true, Ordering::Release);
    pool
}

/// The panic handler of a pool built without one: as rayon does, a panic
/// nobody can receive ends the process rather than going unnoticed.
fn abort_on_panic(_payload: Box<dyn Any + Send>) {
    eprintln!("rayon-core (weft): a task panicked and the pool has no panic_handler; aborting");
    std::process::abort();
}

/// The thread count for `num_threads`: `Some(n)` to ask weft for `n`
/// threads, `None` for weft's default (`WEFT_WORKERS`, else the CPUs).
fn thread_count(num_threads: usize) -> Option<usize> {
    let asked = match num_threads {
        0 => ["RAYON_NUM_THREADS", "RAYON_RS_NUM_CPUS"]
            .iter()
            .find_map(|var| std::env::var(var).ok()?.trim().parse::<usize>().ok())
            // 0 in the variable means "the default", as 0 here does.
            .filter(|&threads| threads > 0)?,
        threads => threads,
    };
    Some(asked.min(crate::max_num_threads()))
}

impl<S> ThreadPoolBuilder<S> {
    /// Has `spawn` start each of the pool's threads instead of the standard
    /// library's default, as the pool is built: it is called once per thread,
    /// in index order, on the thread calling `build`, with a
    /// [`ThreadBuilder`] whose [`run`](ThreadBuilder::run) the new thread
    /// must call. An `Err` fails the build. The handler may borrow from the
    /// caller; the threads it starts run for as long as the pool.
    ///
    /// ```
    /// let mut started = Vec::new();
    /// let pool = rayon_core::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .spawn_handler(|thread| {
    ///         started.push(thread.index());
    ///         std::thread::spawn(|| thread.run());
    ///         Ok(())
    ///     })
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(started, [0, 1]);
    /// # drop(pool);
    /// ```
    pub fn spawn_handler<F>(self, spawn: F) -> ThreadPoolBuilder<SpawnWith<F>>
    where
        F: FnMut(ThreadBuilder) -> io::Result<()>,
    {
        ThreadPoolBuilder {
            num_threads: self.num_threads,
            use_current_thread: self.use_current_thread,
            panic_handler: self.panic_handler,
            thread_name: self.thread_name,
            stack_size: self.stack_size,
            start_handler: self.start_handler,
            exit_handler: self.exit_handler,
            spawn: SpawnWith(spawn),
            breadth_first: self.breadth_first,
        }
    }

    /// Names the threads: `closure(index)` is called once per thread while
    /// the pool is built. Default: `weft-worker-{index}` (a spawn handler
    /// sees no name: [`ThreadBuilder::name`] is `None`).
    pub fn thread_name<F>(mut self, closure: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        self.thread_name = Some(Box::new(closure));
        self
    }

    /// The number of threads. `0`, the default, takes the
    /// `RAYON_NUM_THREADS` environment variable if it holds a positive
    /// number (else the deprecated `RAYON_RS_NUM_CPUS`), else weft's
    /// default: `WEFT_WORKERS` if set, else the number of CPUs. A number
    /// above [`max_num_threads`](crate::max_num_threads) is lowered to it.
    pub fn num_threads(mut self, num_threads: usize) -> Self {
        self.num_threads = num_threads;
        self
    }

    /// Makes the thread calling `build` the pool's thread 0 instead of
    /// starting one: [`current_thread_index`](crate::current_thread_index)
    /// is `Some(0)` there and the free functions act on this pool. The
    /// thread runs the pool's tasks only while it waits in the pool (in a
    /// `join`, a scope, an `install`...). weft gives the thread back when it
    /// drops the pool, after running what is left as thread 0; rayon keeps
    /// it for life. Building fails on a thread that is already a pool's.
    pub fn use_current_thread(mut self) -> Self {
        self.use_current_thread = true;
        self
    }

    /// Receives the payload of each panic that nobody else can receive: in
    /// a [`spawn`](crate::spawn)ed task or a broadcast's spawned call, or in
    /// a start or exit handler. The handler may run on several threads at
    /// once. Without one, such a panic aborts the process.
    pub fn panic_handler<H>(mut self, panic_handler: H) -> Self
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.panic_handler = Some(Box::new(panic_handler));
        self
    }

    /// The stack size of each thread, in bytes, and of each task's stack:
    /// weft runs tasks on stacks of their own (fibers) of this size. Sizes
    /// below weft's [`MIN_STACK_SIZE`](weft::MIN_STACK_SIZE) are raised to
    /// it. Default: the standard library's thread size, and 2 MiB for
    /// tasks.
    pub fn stack_size(mut self, stack_size: usize) -> Self {
        self.stack_size = Some(stack_size);
        self
    }

    /// Accepted and ignored: weft has one task order. Use
    /// [`scope_fifo`](crate::scope_fifo) and [`spawn_fifo`](crate::spawn_fifo)
    /// for tasks that should run oldest first.
    #[deprecated(note = "use `scope_fifo` and `spawn_fifo` for similar effect")]
    pub fn breadth_first(mut self) -> Self {
        self.breadth_first = true;
        self
    }

    /// Runs on each thread the pool starts, with its index, before it runs
    /// any task. A panic in it goes to the
    /// [`panic_handler`](Self::panic_handler).
    pub fn start_handler<H>(mut self, start_handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.start_handler = Some(Box::new(start_handler));
        self
    }

    /// Runs on each thread the pool started, with its index, once the
    /// dropped pool has run all its tasks, before the thread exits. A panic
    /// in it goes to the [`panic_handler`](Self::panic_handler).
    pub fn exit_handler<H>(mut self, exit_handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.exit_handler = Some(Box::new(exit_handler));
        self
    }
}

impl<S> fmt::Debug for ThreadPoolBuilder<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        /// Shows whether a closure is set, not the closure.
        fn set<T: ?Sized>(closure: &Option<Box<T>>) -> Option<&'static str> {
            closure.as_ref().map(|_| "<closure>")
        }
        f.debug_struct("ThreadPoolBuilder")
            .field("num_threads", &self.num_threads)
            .field("use_current_thread", &self.use_current_thread)
            .field("thread_name", &set(&self.thread_name))
            .field("panic_handler", &set(&self.panic_handler))
            .field("stack_size", &self.stack_size)
            .field("start_handler", &set(&self.start_handler))
            .field("exit_handler", &set(&self.exit_handler))
            .field("breadth_first", &self.breadth_first)
            .finish_non_exhaustive()
    }
}

/// One thread of a pool being built, for a
/// [`spawn_handler`](ThreadPoolBuilder::spawn_handler) to start: the new
/// thread calls [`run`](ThreadBuilder::run).
pub struct ThreadBuilder {
    inner: weft::ThreadBuilder,
    /// What the builder's `thread_name` gave, if it has one.
    name: Option<String>,
}

impl ThreadBuilder {
    /// The thread's index in its pool.
    pub fn index(&self) -> usize {
        self.inner.index()
    }

    /// The name the builder's [`thread_name`](ThreadPoolBuilder::thread_name)
    /// gave this thread; `None` without one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The builder's [`stack_size`](ThreadPoolBuilder::stack_size), if set.
    pub fn stack_size(&self) -> Option<usize> {
        self.inner.stack_size()
    }

    /// Runs the pool's thread on the calling thread until the pool is
    /// dropped and has finished its work. Call it on a new thread, once.
    pub fn run(self) {
        self.inner.run();
    }
}

impl fmt::Debug for ThreadBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadBuilder")
            .field("index", &self.index())
            .field("name", &self.name())
            .field("stack_size", &self.stack_size())
            .finish_non_exhaustive()
    }
}

/// Why a pool could not be built.
#[derive(Debug)]
pub struct ThreadPoolBuildError {
    kind: ErrorKind,
}

#[derive(Debug)]
enum ErrorKind {
    GlobalPoolAlreadyInitialized,
    CurrentThreadAlreadyInPool,
    /// Starting a thread failed.
    Io(io::Error),
    /// weft refused the settings (an invalid `WEFT_WORKERS`, say).
    Weft(weft::BuildError),
}

impl ThreadPoolBuildError {
    fn new(kind: ErrorKind) -> Self {
        ThreadPoolBuildError { kind }
    }

    fn from_weft(error: weft::BuildError) -> Self {
        ThreadPoolBuildError::new(match error {
            weft::BuildError::GlobalAlreadyInitialized => ErrorKind::GlobalPoolAlreadyInitialized,
            weft::BuildError::CurrentThreadInPool => ErrorKind::CurrentThreadAlreadyInPool,
            weft::BuildError::ThreadSpawn { source, .. } => ErrorKind::Io(source),
            other => ErrorKind::Weft(other),
        })
    }
}

impl fmt::Display for ThreadPoolBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The first two are rayon's words: programs and tests compare them.
        match &self.kind {
            ErrorKind::GlobalPoolAlreadyInitialized => {
                f.write_str("The global thread pool has already been initialized.")
            }
            ErrorKind::CurrentThreadAlreadyInPool => {
                f.write_str("The current thread is already part of another thread pool.")
            }
            ErrorKind::Io(error) => error.fmt(f),
            ErrorKind::Weft(error) => error.fmt(f),
        }
    }
}

impl Error for ThreadPoolBuildError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match &self.kind {
            ErrorKind::Io(error) => Some(error),
            ErrorKind::Weft(error) => Some(error),
            ErrorKind::GlobalPoolAlreadyInitialized | ErrorKind::CurrentThreadAlreadyInPool => None,
        }
    }
}

/// The settings of a pool, before [`ThreadPoolBuilder`] replaced it.
#[deprecated(note = "Use `ThreadPoolBuilder`")]
#[derive(Default)]
pub struct Configuration {
    builder: ThreadPoolBuilder,
}

#[allow(deprecated)]
impl Configuration {
    /// Every setting at its default.
    pub fn new() -> Configuration {
        Configuration::default()
    }

    /// [`ThreadPoolBuilder::build`], with a boxed error.
    pub fn build(self) -> Result<ThreadPool, Box<dyn Error + 'static>> {
        Ok(self.builder.build()?)
    }

    /// [`ThreadPoolBuilder::thread_name`].
    pub fn thread_name<F>(self, closure: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        self.with(|b| b.thread_name(closure))
    }

    /// [`ThreadPoolBuilder::num_threads`].
    pub fn num_threads(self, num_threads: usize) -> Configuration {
        self.with(|b| b.num_threads(num_threads))
    }

    /// [`ThreadPoolBuilder::panic_handler`].
    pub fn panic_handler<H>(self, panic_handler: H) -> Configuration
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.with(|b| b.panic_handler(panic_handler))
    }

    /// [`ThreadPoolBuilder::stack_size`].
    pub fn stack_size(self, stack_size: usize) -> Self {
        self.with(|b| b.stack_size(stack_size))
    }

    /// [`ThreadPoolBuilder::breadth_first`]: ignored.
    pub fn breadth_first(self) -> Self {
        self.with(|b| b.breadth_first())
    }

    /// [`ThreadPoolBuilder::start_handler`].
    pub fn start_handler<H>(self, start_handler: H) -> Configuration
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.with(|b| b.start_handler(start_handler))
    }

    /// [`ThreadPoolBuilder::exit_handler`].
    pub fn exit_handler<H>(self, exit_handler: H) -> Configuration
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.with(|b| b.exit_handler(exit_handler))
    }

    fn with(self, change: impl FnOnce(ThreadPoolBuilder) -> ThreadPoolBuilder) -> Self {
        Configuration {
            builder: change(self.builder),
        }
    }

    pub(crate) fn into_builder(self) -> ThreadPoolBuilder {
        self.builder
    }
}

#[allow(deprecated)]
impl fmt::Debug for Configuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.builder.fmt(f)
    }
}

/// [`ThreadPoolBuilder::build_global`] with a [`Configuration`], and a
/// boxed error.
#[deprecated(note = "use `ThreadPoolBuilder::build_global`")]
#[allow(deprecated)]
pub fn initialize(config: Configuration) -> Result<(), Box<dyn Error>> {
    Ok(config.into_builder().build_global()?)
}
