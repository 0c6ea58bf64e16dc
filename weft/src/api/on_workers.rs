//! Running a closure on a pool's workers and waiting for it: on one
//! (`install`, under `Pool::install`, `join` and `scope` from outside a
//! pool) or on each (`broadcast`, `spawn_broadcast_in`), and the pointer
//! their jobs carry across threads (`SendPtr`).

use std::cell::Cell;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::api::task;
use crate::sched::job::{ClosureJob, JobRef, StackJob};
use crate::sched::latch::{CountLatch, Latch, OwnerLatch};
use crate::sched::registry::{CallerWait, Registry};

/// Runs `op` on a worker of `registry` and waits for it. Every call into a
/// pool from outside it comes here (`install`, and `join`, `scope` and
/// rayon's loops through the rayon-core stand-in), and programs make such
/// calls one after another: so as `op` ends the pool may linger for the
/// next (`Registry::linger_after_call`), from before the caller learns of
/// the result, since a window opened once the caller has woken would find
/// the workers parked. A 25 us sequential `op` called over and over took
/// 73-95 us a call without the window on the 2-core VM, 51-60 with it
/// (docs/PARALLEL.md, "Session 34"). The job also times `op` (two reads
/// of the clock, beside the two the job makes around its whole run for
/// the caller's spin, against a call's microseconds at least): which
/// worker the wakes from outside take next depends on how long this one
/// ran (`Registry::outside_call_ran`). A call whose `op` panics names no
/// worker and leaves the favourite as it was.
pub(crate) fn install<OP, R>(registry: &Arc<Registry>, op: OP) -> R
where
    OP: FnOnce() -> R + Send,
    R: Send,
{
    if crate::sched::context::worker_of(registry).is_some() {
        return op();
    }
    let job = StackJob::new(
        |_migrated| {
            let started = Instant::now();
            let out = op();
            if let Some(worker) = crate::sched::context::worker_of(registry) {
                registry.outside_call_ran(worker.index(), started.elapsed());
            }
            registry.linger_after_call();
            out
        },
        OwnerLatch::for_current_thread(),
    );
    // SAFETY: `job` stays on this frame until its latch is set: we wait below.
    // Counted: its owner is outside the pool, so nothing running in the pool
    // keeps the pool from looking drained while the job is queued.
    let job_ref = unsafe { job.as_counted_job_ref() };
    if registry.inject(job_ref, |job_ref| job_ref).is_err() {
        panic!("install: the pool has shut down");
    }
    wait_for_call(registry, job.latch());
    // SAFETY: the wait returned: the latch was seen set.
    unsafe { job.into_result() }.into_value()
}

/// How long a thread outside the pool spins for its call's end before it
/// parks. A parked caller is woken by a futex wake, which on the VMs this
/// project measures on reaches a core that went idle 10-25 us later (the
/// core halted: the wake is an interrupt to another virtual CPU): rayon's
/// `position_any` on weft at 1 worker took 3 us a call in some processes
/// and 13-35 us in others, and 3 us in every process pinned to one core,
/// where the wake is a switch on the caller's own (docs/RAYON.md, "Session
/// 31"). A call that ends within this spin pays no wake at all.
const CALLER_SPIN: Duration = Duration::from_micros(20);

/// A caller beside a worker for each core (`CallerWait::SpinThenYield`)
/// spins without yielding only while its calls are shorter than this: a
/// call about as long as the last one then ends within the spin, while
/// the worker sharing the caller's core could not have used it for long.
/// Rayon's sums on weft at 2 workers on 2 cores (us a call, medians of 7
/// interleaved rounds in one process): over 1k items 4.7-5.1 when the
/// caller yields at once, 1.6-1.7 with this; 10k 5.6-5.7 and 3.9-4.0;
/// 100k 17.1-17.4 and 16.7-17.0, where spinning through took 33
/// (docs/RAYON.md, "Session 35").
const SPIN_WHILE_CALLS_UNDER: Duration = Duration::from_micros(8);

/// How long a caller beside a worker for each core spins before it
/// yields between looks, given how long its last call took to end while
/// it spun: twice that while its calls are short.
fn pause_before_yielding(last_call: Duration) -> Duration {
    if last_call < SPIN_WHILE_CALLS_UNDER {
        last_call * 2
    } else {
        Duration::ZERO
    }
}

/// How long at most a thread outside the pool yields its core, looking
/// for its call's end, while none of the pool's workers has started
/// (`Registry::no_worker_started_yet`): a program's first call into a
/// pool it has just built, which cannot begin before a worker thread has
/// started (50-250 us on the VMs this project measures on). Parked
/// instead, after its spin ([`CALLER_SPIN`]) ran out in that time, the
/// caller paid a futex wake-up at the call's end; yielding costs its core
/// for one worker's start, once a pool, after which it waits as for any
/// call. rayon's first loop through rayon-core/ at 1 worker took 120 us
/// against 137 for the build before, its CPU 1.13x rayon's against 1.44x
/// (41 paired rounds); at 2 workers the time was the same and the CPU
/// 1.20x against 1.07x, within a spread of 0.3-2.9x (docs/RAYON.md,
/// "Session 45"). The bound is for a pool whose spawn handler holds its
/// threads back.
const STARTING_POOL_SPIN: Duration = Duration::from_millis(1);

/// After a call that did not end within [`CALLER_SPIN`], the thread's
/// next calls park at once, except every this many, which spin to find out
/// whether the calls got short again.
const SPIN_AGAIN_EVERY: u32 = 8;

thread_local! {
    /// Calls from this thread since the last one that ended while it spun
    /// (0: the last one did).
    static CALLS_SINCE_A_SHORT_ONE: Cell<u32> = const { Cell::new(0) };
    /// How long this thread's last call that it spun for took to end
    /// while it spun, or the whole spin where it did not.
    static LAST_CALL: Cell<Duration> = const { Cell::new(Duration::ZERO) };
}

/// Waits for the latch of a call made from outside `registry`'s pool. A
/// thread outside any pool spins for [`CALLER_SPIN`] first, on a machine
/// of more than one core and if its calls have been short: the last one
/// ended while it spun, or this is one of the calls that tries again
/// ([`SPIN_AGAIN_EVERY`]). Where the pool has a worker for each core, it
/// yields its core between looks, at once or, while its calls are short,
/// after twice the last one's length ([`pause_before_yielding`];
/// `registry::caller_wait`, the rule in one place). Calls come one after
/// another (each of rayon's parallel loops is one, through the rayon-core
/// stand-in), so the last call's length predicts the next one's, and a
/// thread whose calls last longer spins in one call of eight, for at most
/// 20 us. A call that finds none of the pool's workers started yet
/// first yields until one has ([`STARTING_POOL_SPIN`]). A worker of
/// another pool helps there while it waits
/// (`OwnerLatch::wait`). Under loom and Miri the caller parks at once: the
/// spin is a clock and a flag's load, with nothing for either to check,
/// and Miri, which runs one thread at a time, interprets every turn of it
/// while the worker waits its turn.
fn wait_for_call(registry: &Registry, latch: &OwnerLatch) {
    let wait = registry.caller_wait();
    if cfg!(loom) || cfg!(miri) || latch.is_a_workers() || wait == CallerWait::Park {
        latch.wait();
        return;
    }
    // A call that ended while the pool's first worker started says
    // nothing of the next ones' length: the thread's record is left as it
    // was.
    if yield_until_a_worker_starts(registry, latch) {
        return;
    }
    let since_short = CALLS_SINCE_A_SHORT_ONE.get();
    let mut ended_while_spinning = false;
    if since_short % SPIN_AGAIN_EVERY == 0 {
        let started = Instant::now();
        // Beside fewer or more workers than cores the caller never yields:
        // its pause outlasts the spin.
        let pause = match wait {
            CallerWait::SpinThenYield => pause_before_yielding(LAST_CALL.get()),
            CallerWait::Spin | CallerWait::Park => CALLER_SPIN,
        };
        loop {
            if latch.probe() {
                ended_while_spinning = true;
                LAST_CALL.set(started.elapsed());
                break;
            }
            let spun = started.elapsed();
            if spun >= CALLER_SPIN {
                LAST_CALL.set(spun);
                break;
            }
            if spun >= pause {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }
    if ended_while_spinning {
        CALLS_SINCE_A_SHORT_ONE.set(0);
    } else {
        latch.wait();
        CALLS_SINCE_A_SHORT_ONE.set(since_short.wrapping_add(1).max(1));
    }
}

/// Yields the calling thread's core between looks at `latch` while none
/// of `registry`'s workers has started, for at most
/// [`STARTING_POOL_SPIN`]; returns whether the call ended meanwhile.
fn yield_until_a_worker_starts(registry: &Registry, latch: &OwnerLatch) -> bool {
    // Looked at first: a pool with a worker started, every call but a
    // program's first, reads no clock here.
    if !registry.no_worker_started_yet() {
        return false;
    }
    let started = Instant::now();
    loop {
        if latch.probe() {
            return true;
        }
        if !registry.no_worker_started_yet() || started.elapsed() >= STARTING_POOL_SPIN {
            return false;
        }
        std::thread::yield_now();
    }
}

/// Queues one job of a broadcast for worker `index`. From a thread running
/// in the pool (a worker or a spare, even of a pool dropped meanwhile, or a
/// stop hook) the caller's own job keeps the pool from draining, so the job
/// is accepted as `weft::spawn`'s are; from outside, only a live pool takes
/// it, which a `Pool` or the global pool always is.
fn inject_broadcast_job(registry: &Arc<Registry>, index: usize, job: JobRef) {
    if crate::sched::context::worker_of(registry).is_some() {
        registry.inject_pinned_for_running_job(index, job);
    } else if registry.inject_pinned(index, job, |job| job).is_err() {
        panic!("broadcast: the pool has shut down");
    }
}

/// Queues `op` once for every worker of `registry` and returns at once.
pub(crate) fn spawn_broadcast_in<OP>(registry: &Arc<Registry>, op: OP)
where
    OP: Fn(usize) + Send + Sync + 'static,
{
    let op = Arc::new(op);
    for index in 0..registry.num_workers() {
        let op = Arc::clone(&op);
        // Each worker's call is a task that `Pool::shutdown_timeout` may drop.
        let call = task::droppable(move || op(index));
        // SAFETY: the closure owns what it uses (`OP: 'static`).
        let job = unsafe { ClosureJob::new_ref(call) };
        inject_broadcast_job(registry, index, job);
    }
}

/// Runs `op` once on every worker of `registry` and waits for all of them.
pub(crate) fn broadcast<OP, R>(registry: &Arc<Registry>, op: &OP) -> Vec<R>
where
    OP: Fn(usize) -> R + Sync,
    R: Send,
{
    let workers = registry.num_workers();
    let mut results: Vec<Option<std::thread::Result<R>>> = (0..workers).map(|_| None).collect();
    let latch = CountLatch::for_current_thread();
    {
        let latch_ptr = SendPtr(&latch as *const CountLatch);
        let results_ptr = SendPtr(results.as_mut_ptr() as *const Option<std::thread::Result<R>>);
        let op_ptr = SendPtr(op as *const OP);
        for index in 0..workers {
            latch.increment();
            let job = move || {
                // SAFETY: `broadcast` waits on the latch before `op`, `results` or
                // the latch go away, and each job writes only its own slot.
                unsafe {
                    let op = &*op_ptr.get();
                    let result =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| op(index)));
                    *(results_ptr.get() as *mut Option<std::thread::Result<R>>).add(index) =
                        Some(result);
                    CountLatch::set(latch_ptr.get());
                }
            };
            // SAFETY: the job borrows `op`, `results` and `latch`, all of which
            // outlive it because we wait for the latch below.
            let job_ref = unsafe { ClosureJob::new_ref(job) };
            inject_broadcast_job(registry, index, job_ref);
        }
        // SAFETY: drops the count held by this function itself.
        unsafe { CountLatch::set(&latch) };
        latch.wait();
    }
    let mut values = Vec::with_capacity(workers);
    let mut first_panic = None;
    for result in results {
        match result.expect("every broadcast job ran") {
            Ok(value) => values.push(value),
            Err(payload) if first_panic.is_none() => first_panic = Some(payload),
            // Only the first panic is raised; a later payload's destructor
            // must not unwind from here (unwind.rs).
            Err(payload) => crate::sched::unwind::drop_payload(payload),
        }
    }
    match first_panic {
        Some(payload) => {
            // The other workers' values go before the panic leaves; their
            // destructors are the user's, like the results of any call.
            drop(values);
            std::panic::resume_unwind(payload)
        }
        None => values,
    }
}

/// A raw pointer that may cross threads, for jobs whose owner waits for them.
pub(crate) struct SendPtr<T>(*const T);

// SAFETY: only used for pointers whose pointee the owning frame keeps alive,
// and whose accesses are made exclusive or shared-immutable by construction.
unsafe impl<T> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SendPtr<T> {}

impl<T> SendPtr<T> {
    pub(crate) fn new(ptr: *const T) -> Self {
        SendPtr(ptr)
    }
    pub(crate) fn get(&self) -> *const T {
        self.0
    }
}

impl<T> Clone for SendPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for SendPtr<T> {}

// Not under loom: pools are built there only inside the models.
#[cfg(all(test, not(loom)))]
mod tests {
    use std::time::Duration;

    use super::{
        pause_before_yielding, CALLER_SPIN, CALLS_SINCE_A_SHORT_ONE, LAST_CALL, SPIN_AGAIN_EVERY,
        SPIN_WHILE_CALLS_UNDER, STARTING_POOL_SPIN,
    };
    use crate::sched::registry::{caller_wait, cores, CallerWait, LINGER_SLACK_NS, LINGER_WINDOW};
    use crate::Pool;

    /// An `install` from outside leaves a pool whose workers fit the cores
    /// (one worker fits any machine) lingering for the next call, the window
    /// opened before the call returns; one of more workers than cores does
    /// not linger. The closure does no parallel work of its own: the call
    /// alone opens the window.
    #[test]
    #[cfg_attr(miri, ignore = "pools of real threads: covered natively")]
    fn an_install_from_outside_leaves_a_pool_that_fits_the_cores_lingering() {
        let window = u64::try_from(LINGER_WINDOW.as_nanos()).unwrap();
        let fits = Pool::builder().workers(1).build().unwrap();
        let (_, before) = fits.registry().linger_end_and_now();
        assert_eq!(fits.install(|| 6 * 7), 42);
        let (end, _) = fits.registry().linger_end_and_now();
        assert!(
            end >= before + window - LINGER_SLACK_NS,
            "1 worker: the window ends at {end} ns, before the call's start ({before} ns) plus the window less its slack"
        );
        let crowded = Pool::builder()
            .workers((cores() + 1).min(crate::MAX_WORKERS))
            .build()
            .unwrap();
        assert_eq!(crowded.install(|| 6 * 7), 42);
        assert_eq!(
            crowded.registry().linger_end_and_now().0,
            0,
            "{} workers on {} cores opened a window",
            (cores() + 1).min(crate::MAX_WORKERS),
            cores()
        );
    }

    /// Each test runs on a thread of its own, so that the count starts at
    /// zero whatever else the test harness ran on this thread.
    fn on_a_fresh_thread(test: impl FnOnce() + Send) {
        std::thread::scope(|s| s.spawn(test).join().unwrap());
    }

    /// A pool of `workers` with one of them started, so that its calls
    /// wait as calls into a running pool do, not as a program's first
    /// call (`yield_until_a_worker_starts`), whose caller keeps no count.
    fn started_pool(workers: usize) -> Pool {
        let pool = Pool::builder().workers(workers).build().unwrap();
        while pool.registry().no_worker_started_yet() {
            std::thread::yield_now();
        }
        pool
    }

    /// A call into a pool whose only worker has not started (its spawn
    /// handler holds the thread back for five times the caller's yielding)
    /// ends once the worker starts: past its yielding the caller waits as
    /// after any spin. (How it waited is not asserted: a caller stopped
    /// for longer than the hold would find the worker started.)
    #[test]
    #[cfg_attr(miri, ignore = "sleeps in real time: covered natively")]
    fn a_call_into_a_pool_still_starting_ends_once_its_worker_starts() {
        on_a_fresh_thread(|| {
            let (send, receive) = std::sync::mpsc::channel();
            let pool = Pool::builder()
                .workers(1)
                .build_with_spawn_handler(move |thread| {
                    send.send(thread).unwrap();
                    Ok(())
                })
                .unwrap();
            assert!(pool.registry().no_worker_started_yet());
            let thread = receive.recv().unwrap();
            let starter = std::thread::spawn(move || {
                std::thread::sleep(STARTING_POOL_SPIN * 5);
                thread.run();
            });
            assert_eq!(pool.install(|| 6 * 7), 42);
            assert!(!pool.registry().no_worker_started_yet());
            drop(pool);
            starter.join().unwrap();
        });
    }

    /// A call that outlasts the spin (it sleeps for a hundred times as
    /// long) stops the caller's spin: the count of calls since a short one
    /// goes up by one a call, through the calls that try again too. In a
    /// pool of one worker, and in one of more workers than cores, where
    /// the caller spins too (a caller that may not spin keeps no count:
    /// the next test).
    #[test]
    #[cfg_attr(miri, ignore = "sleeps in real time: covered natively")]
    fn calls_longer_than_the_spin_are_counted_and_the_count_goes_on() {
        if cores() == 1 {
            return;
        }
        for workers in [1, (cores() + 1).min(crate::MAX_WORKERS)] {
            on_a_fresh_thread(|| {
                let pool = started_pool(workers);
                assert_ne!(pool.registry().caller_wait(), CallerWait::Park);
                assert_eq!(CALLS_SINCE_A_SHORT_ONE.get(), 0);
                for call in 1..=SPIN_AGAIN_EVERY + 1 {
                    let value = pool.install(|| {
                        std::thread::sleep(Duration::from_millis(2));
                        call
                    });
                    assert_eq!(value, call);
                    assert_eq!(CALLS_SINCE_A_SHORT_ONE.get(), call);
                }
            });
        }
    }

    /// On more than one core, a caller yields its core between looks only
    /// where the pool has a worker for each core, and spins without
    /// yielding beside fewer or more workers; a call that outlasts the
    /// spin parks either way, and a pool of each kind answers every call.
    #[test]
    #[cfg_attr(miri, ignore = "sleeps in real time: covered natively")]
    fn a_caller_yields_its_core_only_beside_a_worker_for_each_core() {
        assert_eq!(caller_wait(1, 2), CallerWait::Spin);
        assert_eq!(caller_wait(3, 4), CallerWait::Spin);
        assert_eq!(caller_wait(2, 2), CallerWait::SpinThenYield);
        assert_eq!(caller_wait(16, 16), CallerWait::SpinThenYield);
        assert_eq!(caller_wait(3, 2), CallerWait::Spin);
        assert_eq!(caller_wait(8, 2), CallerWait::Spin);
        if cores() == 1 {
            return;
        }
        for (workers, wait) in [
            (cores() - 1, CallerWait::Spin),
            (cores(), CallerWait::SpinThenYield),
            ((cores() + 1).min(crate::MAX_WORKERS), CallerWait::Spin),
        ] {
            on_a_fresh_thread(|| {
                let pool = started_pool(workers);
                assert_eq!(pool.registry().caller_wait(), wait, "{workers} workers");
                for call in 0..3 * SPIN_AGAIN_EVERY {
                    assert_eq!(pool.install(|| call * 2), call * 2);
                }
                // A caller that yields can lose its core for longer than the
                // call on a loaded machine, and find it ended within its
                // spin: one long call of many outlasts the spin.
                for _ in 0..1_000 {
                    pool.install(|| std::thread::sleep(Duration::from_millis(2)));
                    if CALLS_SINCE_A_SHORT_ONE.get() >= 1 {
                        break;
                    }
                }
                assert!(CALLS_SINCE_A_SHORT_ONE.get() >= 1);
            });
        }
    }

    /// A caller beside a worker for each core spins without yielding for
    /// twice its last call while its calls are short, and yields at once
    /// after a long one; a call that outlasts the spin counts as long.
    #[test]
    #[cfg_attr(miri, ignore = "sleeps in real time: covered natively")]
    fn a_caller_yields_at_once_after_a_long_call() {
        let us = Duration::from_micros;
        assert_eq!(pause_before_yielding(Duration::ZERO), Duration::ZERO);
        assert_eq!(pause_before_yielding(us(3)), us(6));
        assert_eq!(
            pause_before_yielding(SPIN_WHILE_CALLS_UNDER),
            Duration::ZERO
        );
        assert_eq!(pause_before_yielding(CALLER_SPIN), Duration::ZERO);
        if cores() == 1 {
            return;
        }
        on_a_fresh_thread(|| {
            let pool = started_pool(cores());
            pool.install(|| std::thread::sleep(Duration::from_millis(2)));
            assert!(LAST_CALL.get() >= CALLER_SPIN, "{:?}", LAST_CALL.get());
        });
    }

    /// On a machine of one core the caller parks at once (its spin could
    /// only delay the worker it waits for), and keeps no count.
    #[test]
    #[cfg_attr(miri, ignore = "sleeps in real time: covered natively")]
    fn a_caller_on_one_core_never_spins() {
        for workers in [1, 2, 8] {
            assert_eq!(caller_wait(workers, 1), CallerWait::Park);
        }
        if cores() > 1 {
            return;
        }
        on_a_fresh_thread(|| {
            let pool = Pool::builder().workers(1).build().unwrap();
            assert_eq!(pool.registry().caller_wait(), CallerWait::Park);
            for _ in 0..3 {
                pool.install(|| std::thread::sleep(Duration::from_millis(2)));
                assert_eq!(CALLS_SINCE_A_SHORT_ONE.get(), 0);
            }
        });
    }

    /// Short calls from several threads outside the pool, each with its
    /// own count, all get their results, spinning or not.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "no spin under Miri (`wait_for_call`): covered natively"
    )]
    fn short_calls_from_threads_outside_the_pool_all_return() {
        let pool = Pool::builder().workers(1).build().unwrap();
        std::thread::scope(|s| {
            for thread in 0..4usize {
                let pool = &pool;
                s.spawn(move || {
                    for call in 0..200 {
                        assert_eq!(
                            pool.install(|| thread * 1_000 + call),
                            thread * 1_000 + call
                        );
                    }
                });
            }
        });
    }
}
