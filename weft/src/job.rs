//! Tasks as the queues hold them: a type-erased pointer plus the function that
//! runs it. Heap jobs own a boxed closure (`spawn`); stack jobs live in the frame
//! of a caller that waits for them (`join`, `install`), so no allocation is needed.
//!
//! This is the crate's main use of `unsafe`: a [`JobRef`] outlives the borrow
//! checker's view of what it points to. Each constructor states the contract that
//! keeps the pointer valid until the job runs, and every job runs exactly once.

use std::any::Any;
use std::cell::UnsafeCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

use crate::latch::Latch;

/// A job in a queue. Running it consumes it; a `JobRef` is never copied.
///
/// Two words, so that the queues move it in two stores: whether the job is
/// counted in the pool's pushed/executed books (see `Registry::is_drained`)
/// rides in the lowest bit of `data`, which every job type keeps clear by
/// being aligned to 2 bytes at least (checked at compile time where each kind
/// of job is made). Stack jobs are not counted: their owner is a running job
/// that cannot finish before them, so they never decide whether the pool has
/// drained, and `join` stays free of the bookkeeping.
pub(crate) struct JobRef {
    data: *const (),
    run: unsafe fn(*const ()),
}

/// The bit of [`JobRef::data`] that marks a counted job.
const COUNTED: usize = 1;

// SAFETY: a JobRef is only built from jobs whose closures are `Send` (see the
// constructors), so moving the reference to another thread moves nothing that
// may not cross threads.
unsafe impl Send for JobRef {}

impl JobRef {
    /// `data` must be aligned to 2 at least (each caller asserts its type's
    /// alignment), so its lowest bit is free for the counted mark.
    fn new(data: *const (), run: unsafe fn(*const ()), counted: bool) -> JobRef {
        debug_assert_eq!(data as usize & COUNTED, 0, "job data aligned to 1");
        let data = if counted {
            data.wrapping_byte_add(COUNTED)
        } else {
            data
        };
        JobRef { data, run }
    }

    /// The job's own address, without the counted mark.
    #[inline]
    fn address(&self) -> *const () {
        self.data.wrapping_byte_sub(self.data as usize & COUNTED)
    }

    /// Runs the job.
    ///
    /// # Safety
    /// Must be called at most once per job, while the contract of the constructor
    /// that made it still holds.
    pub(crate) unsafe fn run(self) {
        // SAFETY: forwarded from this function's contract; `address` is the
        // pointer the constructor was given.
        unsafe { (self.run)(self.address()) }
    }

    /// The same job, counted in the drain books: for stack jobs pushed from
    /// outside the pool (`install`), whose owner is not a running job.
    pub(crate) fn counted(self) -> JobRef {
        JobRef::new(self.address(), self.run, true)
    }

    /// Whether this job is counted in the drain books.
    #[inline]
    pub(crate) fn is_counted(&self) -> bool {
        self.data as usize & COUNTED != 0
    }

    /// Whether this reference points at `job` (used by `join` to recognise its own
    /// job when it pops it back).
    #[inline]
    pub(crate) fn points_to<T>(&self, job: *const T) -> bool {
        std::ptr::eq(self.address(), job.cast())
    }
}

/// A boxed closure run once by whichever worker takes it. Aligned to 2 for
/// [`JobRef`]'s mark, even when the closure captures nothing (a zero-sized
/// box's address is its alignment).
#[repr(align(2))]
pub(crate) struct HeapJob<F> {
    func: F,
}

impl<F: FnOnce() + Send> HeapJob<F> {
    /// Boxes `func` as a job.
    ///
    /// # Safety
    /// Everything `func` borrows must outlive the job's run: either `F: 'static`,
    /// or the caller waits for the job (as `Scope` does) before the borrow ends.
    pub(crate) unsafe fn new_ref(func: F) -> JobRef {
        let data = Box::into_raw(Box::new(HeapJob { func }));
        JobRef::new(data as *const (), Self::run_boxed, true)
    }

    unsafe fn run_boxed(data: *const ()) {
        // SAFETY: `data` came from `Box::into_raw` in `new_ref` and, by `JobRef::run`'s
        // contract, is run (and so freed) exactly once.
        let job = unsafe { Box::from_raw(data as *mut HeapJob<F>) };
        (job.func)();
    }
}

/// A job that is shared state already reference-counted, such as a future's
/// task: the queue holds one strong reference, which running the job gives up.
/// Queuing it again costs no allocation (a heap job would box a closure per
/// run).
pub(crate) trait ArcJob: Send + Sync + 'static {
    fn run_job(self: Arc<Self>);
}

/// Queues one strong reference to `job`.
pub(crate) fn arc_job_ref<T: ArcJob>(job: Arc<T>) -> JobRef {
    // `Arc::into_raw` points at the `T`, so `T`'s alignment is what counts.
    const {
        assert!(
            std::mem::align_of::<T>() >= 2,
            "JobRef needs data aligned to 2"
        )
    };
    JobRef::new(Arc::into_raw(job) as *const (), run_arc::<T>, true)
}

unsafe fn run_arc<T: ArcJob>(data: *const ()) {
    // SAFETY: `data` came from `Arc::into_raw` in `arc_job_ref`, and by
    // `JobRef::run`'s contract this runs once: the strong reference the queue
    // held is taken back exactly once.
    let job = unsafe { Arc::from_raw(data as *const T) };
    job.run_job();
}

/// What a stack job left behind.
pub(crate) enum JobResult<R> {
    Pending,
    Done(R),
    Panicked(Box<dyn Any + Send>),
}

impl<R> JobResult<R> {
    /// The value, or the job's panic resumed in the caller.
    pub(crate) fn into_value(self) -> R {
        match self {
            JobResult::Done(value) => value,
            JobResult::Panicked(payload) => panic::resume_unwind(payload),
            JobResult::Pending => unreachable!("a stack job's result was read before it ran"),
        }
    }
}

/// A job that lives in its waiting owner's stack frame and signals `latch` when done.
/// Aligned to 2 for [`JobRef`]'s mark.
#[repr(align(2))]
pub(crate) struct StackJob<L, F, R> {
    latch: L,
    func: UnsafeCell<Option<F>>,
    result: UnsafeCell<JobResult<R>>,
}

impl<L: Latch, F: FnOnce() -> R + Send, R: Send> StackJob<L, F, R> {
    pub(crate) fn new(func: F, latch: L) -> Self {
        StackJob {
            latch,
            func: UnsafeCell::new(Some(func)),
            result: UnsafeCell::new(JobResult::Pending),
        }
    }

    pub(crate) fn latch(&self) -> &L {
        &self.latch
    }

    /// A queue reference to this job. It is not counted in the drain books,
    /// except through [`JobRef::counted`] for jobs injected from outside.
    ///
    /// # Safety
    /// The job must stay in place and alive until its latch is set, and the
    /// reference must be run at most once (or the owner reclaims the job itself
    /// with [`StackJob::run_inline`] after popping the reference back unrun).
    pub(crate) unsafe fn as_job_ref(&self) -> JobRef {
        JobRef::new(self as *const Self as *const (), Self::run_on_worker, false)
    }

    unsafe fn run_on_worker(data: *const ()) {
        // SAFETY: by `as_job_ref`'s contract the job is alive until its latch is
        // set below, and this runs once, so nobody else touches `func`/`result`.
        unsafe {
            let this = &*(data as *const Self);
            let func = (*this.func.get()).take().expect("stack job run twice");
            *this.result.get() = match panic::catch_unwind(AssertUnwindSafe(func)) {
                Ok(value) => JobResult::Done(value),
                Err(payload) => JobResult::Panicked(payload),
            };
            // After this call the owner may return and free `this`.
            Latch::set(&this.latch);
        }
    }

    /// Runs the job in its owner, which popped its reference back before anyone
    /// stole it. Panics propagate directly.
    ///
    /// Always inlined: left to itself the compiler outlines it from `join`'s
    /// recursion, and the job is then copied into the call (14 instructions of
    /// ~165 per `join` on fib, by callgrind).
    #[inline(always)]
    pub(crate) fn run_inline(self) -> R {
        let func = self.func.into_inner().expect("stack job already taken");
        func()
    }

    /// The result after the latch was set.
    pub(crate) fn into_result(self) -> JobResult<R> {
        self.result.into_inner()
    }
}
