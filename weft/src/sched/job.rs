//! Tasks as the queues hold them: the job's data and the function that runs
//! it. A closure job (`spawn`) holds a closure of up to [`INLINE_BYTES`] in
//! the data itself, and boxes a larger one; stack jobs live in the frame of
//! a caller that waits for them (`join`, `install`), and future tasks are
//! queued as their own `Arc`, so neither needs an allocation.
//!
//! # Layout, and why this size
//!
//! A [`JobRef`] is [`INLINE_WORDS`] words of data and one function
//! pointer: 48 bytes on a 64-bit target. The closures programs spawn
//! capture a few things (a counter and a latch, an `Arc` to shared state
//! and an index, a channel's sender), and each of them boxed is an
//! allocation on the submitting thread and a free on the worker's, which
//! with one thread submitting and others running cost more than the
//! scheduling itself (`spawn/*` and `marl/empty boxed` in weft-bench,
//! docs/TUNING.md). Five words hold every such closure of up to 32 bytes
//! whichever way it is spawned: `spawn` stores the caller's closure as it
//! is (40 bytes fit), while a scope's spawn and `spawn_with_handle` add a
//! pointer of their own (the scope, the handle's packet) beside it. Four
//! words measured fastest of 1, 2, 4 and 8 on small closures, and the
//! fifth measured no slower than four on `join`, on small spawns and on
//! 24-byte scope spawns, while it halves the cost of a 32-byte scope spawn
//! (docs/TUNING.md); a wider job makes every queue slot, and every copy in
//! and out of a queue, larger for closures that are rare.
//! Stack jobs and future tasks use the first word only, as a pointer.
//!
//! This is the crate's main use of `unsafe`: a [`JobRef`] outlives the borrow
//! checker's view of what it points to. Each constructor states the contract that
//! keeps the pointer valid until the job runs, and every job runs exactly once.

use std::any::Any;
use std::cell::UnsafeCell;
use std::mem::{self, MaybeUninit};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

use crate::sched::latch::{Latch, OwnerLatch, SHORT_RUN};

/// Words of a job's data: what a closure may capture and still need no box.
pub(crate) const INLINE_WORDS: usize = 5;

/// [`INLINE_WORDS`] in bytes.
pub(crate) const INLINE_BYTES: usize = INLINE_WORDS * mem::size_of::<usize>();

/// A job's data: a pointer to the job in its first word, or a small
/// closure's own bytes (any of which may be uninitialised padding, hence
/// `MaybeUninit`; the words a pointer leaves unused stay uninitialised).
#[derive(Clone, Copy)]
struct Data([MaybeUninit<*const ()>; INLINE_WORDS]);

impl Data {
    #[inline(always)]
    fn uninit() -> Data {
        Data([MaybeUninit::uninit(); INLINE_WORDS])
    }

    /// Data that is `pointer`.
    #[inline(always)]
    fn pointer(pointer: *const ()) -> Data {
        let mut data = Data::uninit();
        data.0[0] = MaybeUninit::new(pointer);
        data
    }

    /// The pointer of [`Data::pointer`].
    ///
    /// # Safety
    /// `self` must have been made by [`Data::pointer`].
    #[inline(always)]
    unsafe fn assume_pointer(self) -> *const () {
        // SAFETY: the first word was initialised by `Data::pointer`.
        unsafe { self.0[0].assume_init() }
    }

    /// Where a closure's bytes go: the start of the data, aligned as a
    /// pointer.
    #[inline(always)]
    fn bytes_mut(&mut self) -> *mut u8 {
        self.0.as_mut_ptr().cast()
    }

    #[inline(always)]
    fn bytes(&self) -> *const u8 {
        self.0.as_ptr().cast()
    }
}

/// A job in a queue. Running it consumes it; a `JobRef` is never copied.
pub(crate) struct JobRef {
    data: Data,
    /// Runs the job and says whether it is counted in the pool's drain books
    /// (see `Registry::is_drained`).
    run: unsafe fn(Data) -> bool,
}

// SAFETY: a JobRef is only built from jobs whose closures are `Send` (see the
// constructors), so moving the reference to another thread moves nothing that
// may not cross threads.
unsafe impl Send for JobRef {}

impl JobRef {
    /// Runs the job. Returns whether it is counted in the pool's drain books:
    /// every job is, except the stack jobs of `join`, whose owner is a running
    /// job that cannot finish before them (so they never decide whether the
    /// pool has drained, and `join` stays free of the bookkeeping). A job that
    /// unwinds out of here is a counted one: stack jobs catch their panics.
    ///
    /// # Safety
    /// Must be called at most once per job, while the contract of the constructor
    /// that made it still holds.
    pub(crate) unsafe fn run(self) -> bool {
        // SAFETY: forwarded from this function's contract.
        unsafe { (self.run)(self.data) }
    }

    /// The two words of a stack job's reference, as pointers, for a queue
    /// that keeps them in atomics (join_stack.rs).
    ///
    /// # Safety
    /// `self` must come from [`StackJob::as_job_ref`] or
    /// [`StackJob::as_counted_job_ref`], whose data word is an initialised
    /// pointer.
    #[inline(always)]
    pub(crate) unsafe fn into_stack_words(self) -> (*mut (), *mut ()) {
        // SAFETY: forwarded from this function's contract.
        let data = unsafe { self.data.assume_pointer() };
        (data as *mut (), self.run as *mut ())
    }

    /// Rebuilds a reference from [`JobRef::into_stack_words`]'s words.
    ///
    /// # Safety
    /// The words must be exactly those returned by one call of
    /// `into_stack_words`, and rebuilt once (a `JobRef` is never copied).
    #[inline(always)]
    pub(crate) unsafe fn from_stack_words(data: *mut (), run: *mut ()) -> JobRef {
        JobRef {
            data: Data::pointer(data as *const ()),
            // SAFETY: `run` was cast from a function pointer of exactly this
            // type by `into_stack_words` (the contract), and a function
            // pointer survives the round trip through a data pointer on every
            // target Rust supports with threads.
            run: unsafe { mem::transmute::<*mut (), unsafe fn(Data) -> bool>(run) },
        }
    }
}

/// A closure run once by whichever worker takes it.
pub(crate) struct ClosureJob<F> {
    func: F,
}

impl<F: FnOnce() + Send> ClosureJob<F> {
    /// Whether `F` fits in a job's data, so needs no box.
    const FITS_INLINE: bool =
        mem::size_of::<F>() <= INLINE_BYTES && mem::align_of::<F>() <= mem::align_of::<Data>();

    /// Makes `func` a job: in the job's data itself if it fits (a closure
    /// that captures up to [`INLINE_BYTES`]: a few references, `Arc`s,
    /// indices), boxed otherwise.
    ///
    /// # Safety
    /// Everything `func` borrows must outlive the job's run: either `F: 'static`,
    /// or the caller waits for the job (as `Scope` does) before the borrow ends.
    #[inline]
    pub(crate) unsafe fn new_ref(func: F) -> JobRef {
        if Self::FITS_INLINE {
            let mut data = Data::uninit();
            // SAFETY: `F` is no larger and no more aligned than the data
            // (`FITS_INLINE`); the bytes written, provenance included, travel
            // inside `MaybeUninit` until `run_inline_closure` reads them back.
            unsafe { data.bytes_mut().cast::<F>().write(func) };
            JobRef {
                data,
                run: Self::run_inline_closure,
            }
        } else {
            let job = Box::into_raw(Box::new(ClosureJob { func }));
            JobRef {
                data: Data::pointer(job as *const ()),
                run: Self::run_boxed,
            }
        }
    }

    unsafe fn run_inline_closure(data: Data) -> bool {
        // SAFETY: `data` holds the `F` written by `new_ref` (the `FITS_INLINE`
        // branch, the only one that uses this function), moved out exactly
        // once by `JobRef::run`'s contract.
        let func = unsafe { data.bytes().cast::<F>().read() };
        func();
        true
    }

    unsafe fn run_boxed(data: Data) -> bool {
        // SAFETY: `data` holds the pointer from `Box::into_raw` in `new_ref`
        // and, by `JobRef::run`'s contract, is run (and so freed) exactly once.
        let job = unsafe { Box::from_raw(data.assume_pointer() as *mut ClosureJob<F>) };
        (job.func)();
        true
    }
}

/// A job that is shared state already reference-counted, such as a future's
/// task: the queue holds one strong reference, which running the job gives up.
/// Queuing it again costs no allocation, and its run needs no closure
/// around it.
pub(crate) trait ArcJob: Send + Sync + 'static {
    fn run_job(self: Arc<Self>);
}

/// Queues one strong reference to `job`.
pub(crate) fn arc_job_ref<T: ArcJob>(job: Arc<T>) -> JobRef {
    JobRef {
        data: Data::pointer(Arc::into_raw(job) as *const ()),
        run: run_arc::<T>,
    }
}

unsafe fn run_arc<T: ArcJob>(data: Data) -> bool {
    // SAFETY: `data` holds the pointer from `Arc::into_raw` in `arc_job_ref`,
    // and by `JobRef::run`'s contract this runs once: the strong reference the
    // queue held is taken back exactly once.
    let job = unsafe { Arc::from_raw(data.assume_pointer() as *const T) };
    job.run_job();
    true
}

/// What a stack job left behind.
pub(crate) enum JobResult<R> {
    Done(R),
    Panicked(Box<dyn Any + Send>),
}

impl<R> JobResult<R> {
    /// The value, or the job's panic resumed in the caller.
    pub(crate) fn into_value(self) -> R {
        match self {
            JobResult::Done(value) => value,
            JobResult::Panicked(payload) => panic::resume_unwind(payload),
        }
    }
}

/// Stops the process if dropped, that is, unless forgotten at the end of the
/// code it guards: that code unwound.
struct AbortOnUnwind;

impl Drop for AbortOnUnwind {
    fn drop(&mut self) {
        eprintln!("weft: internal error: a stack job unwound outside its closure");
        std::process::abort();
    }
}

/// A job that lives in its waiting owner's stack frame and signals `latch` when done.
/// Its closure learns whether it ran as a job taken from a queue (`true`:
/// by a thief, or by a wait) or inline in its owner (`join_context`).
pub(crate) struct StackJob<L, F, R> {
    latch: L,
    func: UnsafeCell<Option<F>>,
    /// Written once, by the job run from a queue, before its latch is set;
    /// never written when the owner runs the job inline, which is why it
    /// starts uninitialised: marking it empty would be a store on every
    /// `join`. Never dropped with the job: [`StackJob::into_result`] is its
    /// only reader, and every job run from a queue has its result taken.
    result: UnsafeCell<MaybeUninit<JobResult<R>>>,
}

impl<L: Latch, F: FnOnce(bool) -> R + Send, R: Send> StackJob<L, F, R> {
    pub(crate) fn new(func: F, latch: L) -> Self {
        StackJob {
            latch,
            func: UnsafeCell::new(Some(func)),
            result: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    pub(crate) fn latch(&self) -> &L {
        &self.latch
    }

    /// A queue reference to this job, not counted in the drain books (`join`:
    /// the owner is a running job).
    ///
    /// # Safety
    /// The job must stay in place and alive until its latch is set, and the
    /// reference must be run at most once (or the owner reclaims the job itself
    /// with [`StackJob::run_inline`] after popping the reference back unrun).
    pub(crate) unsafe fn as_job_ref(&self) -> JobRef {
        JobRef {
            data: Data::pointer(self as *const Self as *const ()),
            run: Self::run_on_worker::<false>,
        }
    }

    /// As [`StackJob::as_job_ref`], counted in the drain books: for a job
    /// injected from outside the pool (`install`), whose owner is not a job.
    ///
    /// # Safety
    /// As for [`StackJob::as_job_ref`].
    pub(crate) unsafe fn as_counted_job_ref(&self) -> JobRef {
        JobRef {
            data: Data::pointer(self as *const Self as *const ()),
            run: Self::run_on_worker::<true>,
        }
    }

    /// Whether `job` is this job's reference from [`StackJob::as_job_ref`]
    /// (`join` recognising its own job when it pops it back). The function is
    /// compared first, so the data word is read only from a stack job's
    /// reference, where it is an initialised pointer. Should the compiler give
    /// one function two addresses, the owner would not recognise its job and
    /// would run it as a stolen one: slower, still correct. Should it fold two
    /// functions into one address, only another `run_on_worker::<false>` (of a
    /// stack job type with identical code) could share it, and its data word
    /// is a stack job's address too, so the comparison stays defined and only
    /// this job's own reference matches.
    #[inline]
    pub(crate) fn is_referenced_by(&self, job: &JobRef) -> bool {
        let ours: unsafe fn(Data) -> bool = Self::run_on_worker::<false>;
        if job.run as usize != ours as usize {
            return false;
        }
        // SAFETY: a JobRef whose `run` is a stack job's `run_on_worker` was
        // made by `as_job_ref`, which stores an initialised pointer.
        let address = unsafe { job.data.assume_pointer() };
        std::ptr::eq(address, self as *const Self as *const ())
    }

    unsafe fn run_on_worker<const COUNTED: bool>(data: Data) -> bool {
        // `execute` takes a job that unwinds for a counted one. This one
        // catches the closure's panic; anything else unwinding from here is a
        // bug in weft (a job run twice, a broken latch), and the process stops
        // rather than let the drain books go wrong.
        let abort_on_unwind = AbortOnUnwind;
        // SAFETY: by `as_job_ref`'s contract the job is alive until its latch is
        // set below, and this runs once, so nobody else touches `func`/`result`.
        unsafe {
            let this = &*(data.assume_pointer() as *const Self);
            let func = (*this.func.get()).take().expect("stack job run twice");
            let started = (L::TIMED && !cfg!(loom)).then(std::time::Instant::now);
            (*this.result.get()).write(
                match panic::catch_unwind(AssertUnwindSafe(|| func(true))) {
                    Ok(value) => JobResult::Done(value),
                    Err(payload) => JobResult::Panicked(payload),
                },
            );
            if started.is_some_and(|started| started.elapsed() < SHORT_RUN) {
                this.latch.note_ran_short();
            }
            // After this call the owner may return and free `this`.
            Latch::set(&this.latch);
        }
        mem::forget(abort_on_unwind);
        COUNTED
    }

    /// Runs the job in its owner, which popped its reference back before anyone
    /// stole it; `migrated` is what its closure is told. Panics propagate
    /// directly.
    ///
    /// By reference, taking only the closure out: moving the whole job out
    /// of its frame copies it with wide loads of fields just written with
    /// narrow stores, a store-forwarding stall on every `join` (docs/TUNING.md).
    /// The closure is read out without marking its slot empty (a store on
    /// every `join`), so the job must not be dropped after this returns.
    ///
    /// # Safety
    /// The owner popped the job's reference back unrun, and once this
    /// returns it ends the job with [`forget_after_inline`], never its drop
    /// glue (which would drop the closure again). If the closure unwinds,
    /// the slot is marked empty on the way out and the job may be dropped.
    ///
    /// [`forget_after_inline`]: StackJob::forget_after_inline
    #[inline(always)]
    pub(crate) unsafe fn run_inline(&self, migrated: bool) -> R {
        // SAFETY: the owner popped the job's reference back unrun, so no
        // other thread has it, nothing else touches `func`, and the closure
        // `new` stored is still there (a job runs once: `run_on_worker` is
        // the only other taker, and its reference was never run). Unchecked:
        // the check is a test and a branch on every `join`. The read leaves
        // a bitwise copy behind, which the caller's contract and the guard
        // below keep from being dropped.
        let func = unsafe { std::ptr::read((*self.func.get()).as_ref().unwrap_unchecked()) };
        let emptied_on_unwind = EmptyOnUnwind(&self.func);
        let value = func(migrated);
        mem::forget(emptied_on_unwind);
        value
    }
}

impl<F: FnOnce(bool) -> R + Send, R: Send> StackJob<OwnerLatch, F, R> {
    /// Ends a job that ran inline, without its drop glue: its closure was
    /// read out and consumed ([`StackJob::run_inline`]) and its result is
    /// never dropped, so only the latch could hold something, and a
    /// worker's latch holds nothing to drop. The glue is
    /// an out-of-line call with two tests, which `join` would otherwise
    /// pay on every call (docs/TUNING.md, "join on AMD").
    #[inline(always)]
    pub(crate) fn forget_after_inline(self) {
        debug_assert!(self.latch.is_a_workers());
        mem::forget(self);
    }

    /// The result, once the latch was seen set (the job ran from a queue).
    ///
    /// # Safety
    /// The latch was seen set ([`OwnerLatch::probe`] returned true, or its
    /// `wait` returned): the job then ran from a queue, and wrote its result.
    pub(crate) unsafe fn into_result(self) -> JobResult<R> {
        debug_assert!(self.latch.probe());
        // SAFETY: written before the latch was set (`run_on_worker`), which
        // the caller saw with Acquire; read once, as `self` is consumed.
        unsafe { self.result.into_inner().assume_init() }
    }
}

/// Marks a stack job's closure slot empty if dropped, that is, if the
/// closure that [`StackJob::run_inline`] read out of it unwinds: the job is
/// then dropped on the way out, and must not drop the closure a second time.
struct EmptyOnUnwind<'a, F>(&'a UnsafeCell<Option<F>>);

impl<F> Drop for EmptyOnUnwind<'_, F> {
    fn drop(&mut self) {
        // SAFETY: the slot holds a bitwise copy of a closure already moved
        // out and consumed; overwriting it without dropping it is what is
        // wanted, and nothing else touches it (run_inline's contract).
        unsafe { std::ptr::write(self.0.get(), None) };
    }
}
