//! loom drives the real worker loop (`worker::run`, with the registry, the
//! sleep protocol, the drain books and the shutdown phases as they ship),
//! not a copy of it: run with
//! `RUSTFLAGS="--cfg loom" cargo test -p weft --lib --release`.
//!
//! Everything the loop synchronises through is loom's here (the facade's
//! atomics, mutexes, condition variables, threads and the context's
//! thread-locals), so loom explores every interleaving of those within its
//! preemption bound. Two things are not modelled: crossbeam's deques, whose
//! atomics are std's (each push, pop or steal runs as one step: the models
//! check the protocol around the queues, not the queues), and the
//! statistics counters, which no decision reads.
//!
//! The submitting thread waits for its tasks to have run *before* it closes
//! the pool (closing wakes every worker, which would hide a lost wake-up): a
//! lost wake-up then shows up as every thread blocked with a task queued,
//! which loom reports as a deadlock. A pool that never terminates after the
//! close hangs the join of its workers, likewise; a task run twice fails
//! the count.

use std::sync::Arc;
use std::time::Duration;

use loom::sync::{Condvar, Mutex};
use loom::thread;

use crate::sched::fork::{join_on, Place};
use crate::sched::job::ClosureJob;
use crate::sched::registry::{Hooks, Registry};
use crate::sched::sleep::Wakes;
use crate::sched::spares::Spares;
use crate::sched::threads::ThreadSetup;
use crate::sched::worker::{self, SeatQueues, WorkerThread};

/// A registry as `Builder::build` makes one (no spare seats, one sweep of
/// spin), with the owner ends of its seats' queues: for the models that
/// run workers on it, and for those that only need its shared state
/// (fiber_loom_tests). Its wakes go out in a tree, whatever the host's
/// cores, so that the models check the same protocol on every machine:
/// the tree is the mode with more states (owed wakes, their cancelling);
/// direct wakes have models of their own.
pub(super) fn loom_registry(workers: usize) -> (Arc<Registry>, Vec<SeatQueues>) {
    loom_registry_with(workers, Wakes::Tree)
}

/// [`loom_registry`] with the given wakes.
fn loom_registry_with(workers: usize, wakes: Wakes) -> (Arc<Registry>, Vec<SeatQueues>) {
    let mut locals = Vec::new();
    let mut stealers = Vec::new();
    let mut yield_stealers = Vec::new();
    for _ in 0..workers {
        let (queues, stealer, yield_stealer) = SeatQueues::new();
        locals.push(queues);
        stealers.push(stealer);
        yield_stealers.push(yield_stealer);
    }
    let setup = ThreadSetup {
        name: None,
        stack_size: None,
        workers,
        batch_scheduling: false,
    };
    let hooks = Hooks {
        spin: Duration::ZERO,
        panic_handler: None,
        on_thread_start: None,
        on_thread_stop: None,
        fibers: crate::sched::fiber::FiberSettings::default(),
        #[cfg(feature = "trace")]
        trace: None,
    };
    let mut registry = Registry::new(
        stealers,
        yield_stealers,
        workers,
        Spares::new(workers, 0, setup),
        (workers / 2).max(1),
        hooks,
        crate::sched::registry::cores(),
    );
    registry.sleep.set_wakes(wakes);
    (Arc::new(registry), locals)
}

/// A pool as `Builder::build` makes one (no spare seats, one sweep of spin),
/// with its workers running `worker::run` on loom threads.
struct Model {
    registry: Arc<Registry>,
    workers: Vec<thread::JoinHandle<()>>,
}

impl Model {
    fn start(workers: usize) -> Model {
        Model::start_with(workers, Wakes::Tree)
    }

    fn start_with(workers: usize, wakes: Wakes) -> Model {
        let (registry, locals) = loom_registry_with(workers, wakes);
        let threads = locals
            .into_iter()
            .enumerate()
            .map(|(index, queues)| {
                let registry = Arc::clone(&registry);
                registry.count_start_hook();
                registry.worker_started();
                thread::spawn(move || worker::run(registry, index, queues))
            })
            .collect();
        Model {
            registry,
            workers: threads,
        }
    }

    /// Pushes `task` from outside the pool, as `Handle::spawn` does.
    fn inject(&self, task: impl FnOnce() + Send + 'static) {
        // SAFETY: the closure is 'static: the job borrows nothing.
        let pushed = self
            .registry
            .inject(task, |task| unsafe { ClosureJob::new_ref(task) });
        assert!(pushed.is_ok(), "a running pool accepts pushes");
    }

    /// Drops the pool as `Pool::drop` does from outside: closes it and joins
    /// the workers, which return once it has drained and terminated.
    fn shut_down(self) {
        self.registry.close();
        for worker in self.workers {
            worker.join().unwrap();
        }
        assert!(self.registry.is_terminating());
    }
}

/// Tasks' runs, counted where the submitting thread can wait for them.
#[derive(Default)]
struct Runs {
    count: Mutex<usize>,
    changed: Condvar,
}

impl Runs {
    fn record(&self) {
        *self.count.lock().unwrap() += 1;
        self.changed.notify_all();
    }

    /// Blocks until `expected` runs were recorded; returns the count then.
    fn wait_for(&self, expected: usize) -> usize {
        let mut count = self.count.lock().unwrap();
        while *count < expected {
            count = self.changed.wait(count).unwrap();
        }
        *count
    }
}

/// A task that records its run.
fn counted(runs: &Arc<Runs>) -> impl FnOnce() + Send + 'static {
    let runs = Arc::clone(runs);
    move || runs.record()
}

/// A task that pushes a counted task onto its worker's own queue, then
/// records its own run.
fn spawning(runs: &Arc<Runs>) -> impl FnOnce() + Send + 'static {
    let inner = counted(runs);
    let runs = Arc::clone(runs);
    move || {
        let worker = WorkerThread::current().expect("a task runs on a worker");
        // SAFETY: the closure is 'static: the job borrows nothing.
        worker.push(unsafe { ClosureJob::new_ref(inner) });
        runs.record();
    }
}

#[test]
fn one_worker_runs_an_injected_task_and_shuts_down() {
    loom::model(|| {
        let runs = Arc::new(Runs::default());
        let pool = Model::start(1);
        pool.inject(counted(&runs));
        assert_eq!(runs.wait_for(1), 1);
        pool.shut_down();
    });
}

#[test]
fn two_workers_run_two_injected_tasks_and_shut_down() {
    loom::model(|| {
        let runs = Arc::new(Runs::default());
        let pool = Model::start(2);
        pool.inject(counted(&runs));
        pool.inject(counted(&runs));
        assert_eq!(runs.wait_for(2), 2);
        pool.shut_down();
    });
}

#[test]
fn two_workers_with_direct_wakes_run_two_injected_tasks_and_shut_down() {
    // The second push may find the first one's woken worker in flight and
    // the other worker asleep: its notifier wakes that one itself.
    loom::model(|| {
        let runs = Arc::new(Runs::default());
        let pool = Model::start_with(2, Wakes::Direct);
        pool.inject(counted(&runs));
        pool.inject(counted(&runs));
        assert_eq!(runs.wait_for(2), 2);
        pool.shut_down();
    });
}

#[test]
fn a_task_pushed_by_a_running_task_is_taken_by_the_other_worker_or_its_own() {
    // The second task is pushed onto a worker's own queue while the other
    // worker may be searching, parking or parked.
    loom::model(|| {
        let runs = Arc::new(Runs::default());
        let pool = Model::start(2);
        pool.inject(spawning(&runs));
        assert_eq!(runs.wait_for(2), 2);
        pool.shut_down();
    });
}

#[test]
fn a_pool_closed_while_its_task_runs_drains_it_and_terminates() {
    // The close races the task's run and its push of a second task: the
    // drain books keep the pool open for both, then every worker leaves.
    loom::model(|| {
        let runs = Arc::new(Runs::default());
        let pool = Model::start(2);
        pool.inject(spawning(&runs));
        pool.shut_down();
        assert_eq!(runs.wait_for(2), 2);
    });
}

#[test]
fn a_batch_moved_behind_a_long_task_is_still_taken_by_the_other_worker() {
    // Two tasks pushed from outside; one waits until the other has run, so
    // the two must end up on different workers whatever the order of pushes,
    // batch steals (which the stand-in deque makes two steps), searches and
    // parks. (The batch's own window needs more preemptions than CI's bound
    // to reach here; `sleep_loom_tests` checks it on the protocol alone.)
    loom::model(|| {
        let runs = Arc::new(Runs::default());
        let pool = Model::start(2);
        let waiting_runs = Arc::clone(&runs);
        pool.inject(move || {
            waiting_runs.wait_for(1);
            waiting_runs.record();
        });
        pool.inject(counted(&runs));
        assert_eq!(runs.wait_for(2), 2);
        pool.shut_down();
    });
}

/// A task that joins `a` and `b` on its worker, `b` placed by `place`
/// (fork.rs), then records its own run.
fn joining(
    runs: &Arc<Runs>,
    a: impl FnOnce() + Send + 'static,
    b: impl FnOnce() + Send + 'static,
    place: Place,
) -> impl FnOnce() + Send + 'static {
    let runs = Arc::clone(runs);
    move || {
        let worker = WorkerThread::current().expect("a task runs on a worker");
        join_on(worker, |_| a(), |_| b(), false, place);
        runs.record();
    }
}

/// The model of a join of two counted halves, the second placed by
/// `place`, racing the other worker's search, give-up and park: each half
/// runs once, the task after them, and nobody is left blocked.
fn each_half_runs_once(place: Place) {
    loom::model(move || {
        let runs = Arc::new(Runs::default());
        let pool = Model::start(2);
        pool.inject(joining(&runs, counted(&runs), counted(&runs), place));
        assert_eq!(runs.wait_for(3), 3);
        pool.shut_down();
    });
}

#[test]
fn a_join_pushed_while_the_other_worker_parks_runs_each_half_once() {
    // The light push (no fence) races the other worker: it either sees the
    // half and takes it (asking, then by force), or parks, and the owner
    // pops the half back.
    each_half_runs_once(Place::JoinStackOnly);
}

/// The model of a join whose first half blocks its thread (no helping)
/// until the second has run, with the second half placed by `place`: the
/// other worker must take it, whatever the order of the push, its search
/// and its park.
fn second_half_taken_under_a_blocked_first_half(place: Place) {
    loom::model(move || {
        let runs = Arc::new(Runs::default());
        let pool = Model::start(2);
        let waiting = Arc::clone(&runs);
        pool.inject(joining(
            &runs,
            move || {
                waiting.wait_for(1);
            },
            counted(&runs),
            place,
        ));
        assert_eq!(runs.wait_for(2), 2);
        pool.shut_down();
    });
}

#[test]
fn a_join_whose_first_half_blocks_has_its_second_half_taken_by_force() {
    // On the join stack, and the first half never joins again to answer a
    // request: the other worker must take the half by force.
    second_half_taken_under_a_blocked_first_half(Place::JoinStackOnly);
}

#[test]
fn both_halves_under_a_blocked_first_half_are_taken_by_the_other_worker() {
    // Nested joins: the inner push lands on a stack that holds the outer
    // half, so it makes no notify of its own (rule covered-stack); the
    // innermost first half blocks until both second halves have run, so the
    // other worker must take the outer half, see the inner one left behind
    // and take it too.
    //
    // The owner answers the searcher's request in its inner join's cold
    // path (join_stack.rs, `request`), so the longest interleavings, in
    // which the blocked first half polls while the other worker takes both
    // halves, run a little past loom's default of 1,000 branches.
    let mut model = loom::model::Builder::new();
    model.max_branches = 1_500;
    model.check(|| {
        let runs = Arc::new(Runs::default());
        let pool = Model::start(2);
        let waiting = Arc::clone(&runs);
        let inner_b = counted(&runs);
        pool.inject(joining(
            &runs,
            move || {
                let worker = WorkerThread::current().expect("a task runs on a worker");
                join_on(
                    worker,
                    |_| waiting.wait_for(2),
                    |_| inner_b(),
                    false,
                    Place::JoinStackOnly,
                );
            },
            counted(&runs),
            Place::JoinStackOnly,
        ));
        assert_eq!(runs.wait_for(3), 3);
        pool.shut_down();
    });
}

#[test]
fn a_queued_join_runs_each_half_once() {
    // The second half goes on the local queue (publish: push, then the
    // protocol's notify) while the other worker searches or parks: it is
    // stolen from the queue, or the owner finds it there on its way back
    // (`reclaim_or_wait`) and runs it inline. Each half runs once.
    each_half_runs_once(Place::LocalQueue);
}

#[test]
fn a_queued_join_whose_first_half_blocks_has_its_second_half_stolen() {
    // The first half blocks its thread until the second has run, and a
    // queued half is never on the join stack, so no request reaches the
    // owner and no forced steal applies: the push's notify alone must get
    // the other worker to take it from the local queue.
    second_half_taken_under_a_blocked_first_half(Place::LocalQueue);
}

#[test]
fn an_outermost_half_moved_to_the_local_queue_is_stolen_under_a_blocked_first_half() {
    // `join`'s own placement: the push finds the join stack and the local
    // queue empty, so the owner takes the half back from the stack's top
    // (the thieves' compare-and-swap) and publishes it on the local queue,
    // while the other worker may already be searching the stack. The
    // first half then blocks until the second has run: whichever end the
    // thief finds it at, it takes it once.
    second_half_taken_under_a_blocked_first_half(Place::JoinStack);
}

#[test]
fn a_half_a_loop_shares_between_chunks_runs_once() {
    // A parallel loop's look between two chunks (`offer_work`): the first
    // half, like a loop's leaf, looks once, and shares the second half from
    // the join stack's top to the local queue if the other worker asked or
    // is counted as searching, while that worker may be asking, taking the
    // half by force, or parking. Wherever the half is when someone takes
    // it, it runs once, and nobody is left blocked.
    loom::model(|| {
        let runs = Arc::new(Runs::default());
        let pool = Model::start(2);
        let first = counted(&runs);
        pool.inject(joining(
            &runs,
            move || {
                let worker = WorkerThread::current().expect("a task runs on a worker");
                worker.offer_work();
                first();
            },
            counted(&runs),
            Place::JoinStackOnly,
        ));
        assert_eq!(runs.wait_for(3), 3);
        pool.shut_down();
    });
}

#[test]
fn a_half_a_loop_shares_is_taken_under_a_first_half_that_then_blocks() {
    // As above, but the first half, after its look, blocks its thread
    // until the second half has run: shared to the local queue or left on
    // the join stack, the other worker must take it.
    loom::model(|| {
        let runs = Arc::new(Runs::default());
        let pool = Model::start(2);
        let waiting = Arc::clone(&runs);
        pool.inject(joining(
            &runs,
            move || {
                let worker = WorkerThread::current().expect("a task runs on a worker");
                worker.offer_work();
                waiting.wait_for(1);
            },
            counted(&runs),
            Place::JoinStackOnly,
        ));
        assert_eq!(runs.wait_for(2), 2);
        pool.shut_down();
    });
}
