//! Model checks of the wake/park protocol with `loom` (run with
//! `RUSTFLAGS="--cfg loom" cargo test -p weft --lib --release`).
//!
//! The queues are modelled by counters of available tasks, one for the
//! global queue and one per worker's local queue: the protocol only needs
//! "push makes a task visible, then notify" and "take or see empty". A lost
//! wake-up shows up as every thread blocked with a task still queued, which
//! loom reports as a deadlock; a task run twice or never fails the final
//! count.
//!
//! The batch models move two tasks at once out of the global queue, as
//! `steal_batch_and_pop` does: one to run, one into the taker's local queue,
//! in a second step, so that for a moment no queue shows it. The task that
//! runs then waits for the moved one to have run on another worker (a long
//! task with work queued behind it), so a searcher that gave up during the
//! move and was never woken afterwards leaves every thread blocked.

use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;

use crate::sched::sleep::{Idle, Sleep, Wake, Wakes};

struct Model {
    sleep: Sleep,
    /// The global queue.
    queued: AtomicUsize,
    /// Each worker's local queue.
    local: Vec<AtomicUsize>,
    /// Whether a worker's own look at the global queue takes a batch.
    batch: bool,
    /// Whether the workers are in a linger window, where every idle
    /// worker may search (sleep.rs, invariant 3).
    lingering: bool,
    /// Whether the first task to run waits until another task has run.
    gated: bool,
    first_started: AtomicBool,
    gate: Mutex<bool>,
    gate_opened: Condvar,
    executed: AtomicUsize,
    /// Tasks that, when run, push one more task (a local push from a worker).
    spawning: AtomicUsize,
    total: usize,
    stop: AtomicBool,
}

impl Model {
    fn new(workers: usize, total: usize, spawning: usize) -> Arc<Model> {
        Model::with_batches(workers, total, spawning, false)
    }

    fn with_batches(workers: usize, total: usize, spawning: usize, batch: bool) -> Arc<Model> {
        Arc::new(Model {
            sleep: Sleep::new(workers, (workers / 2).max(1)),
            queued: AtomicUsize::new(0),
            local: (0..workers).map(|_| AtomicUsize::new(0)).collect(),
            batch,
            lingering: false,
            gated: batch,
            first_started: AtomicBool::new(false),
            gate: Mutex::new(false),
            gate_opened: Condvar::new(),
            executed: AtomicUsize::new(0),
            spawning: AtomicUsize::new(spawning),
            total,
            stop: AtomicBool::new(false),
        })
    }

    fn push(&self) {
        self.queued.fetch_add(1, Ordering::SeqCst);
        self.sleep.notify_work();
    }

    /// Takes up to `most` tasks from `queue`; returns how many.
    fn take_from(queue: &AtomicUsize, most: usize) -> usize {
        let mut queued = queue.load(Ordering::SeqCst);
        while queued > 0 {
            let taken = queued.min(most);
            match queue.compare_exchange(queued, queued - taken, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return taken,
                Err(actual) => queued = actual,
            }
        }
        0
    }

    /// A worker's look at its own queue, then the global one (worker/own_queues.rs,
    /// `find_own_work`), moving a batch where the model says so.
    fn take_own(&self, index: usize) -> bool {
        if Model::take_from(&self.local[index], 1) == 1 {
            return true;
        }
        let most = if self.batch { 2 } else { 1 };
        match Model::take_from(&self.queued, most) {
            0 => false,
            1 => true,
            _ => {
                // The second task lands in the local queue a step later;
                // meanwhile no queue shows it. Then the notify that every
                // move between queues makes (`batch_moved`).
                self.local[index].fetch_add(1, Ordering::SeqCst);
                self.sleep.notify_work();
                true
            }
        }
    }

    /// A searcher's sweep: the global queue, then every other local queue.
    fn take_any(&self, index: usize) -> bool {
        if Model::take_from(&self.queued, 1) == 1 {
            return true;
        }
        self.local
            .iter()
            .enumerate()
            .any(|(victim, queue)| victim != index && Model::take_from(queue, 1) == 1)
    }

    fn has_work(&self) -> bool {
        self.queued.load(Ordering::SeqCst) > 0
            || self
                .local
                .iter()
                .any(|queue| queue.load(Ordering::SeqCst) > 0)
    }

    fn run_task(&self) {
        if self.gated {
            // The first task waits for another one to run; the others open
            // the gate.
            let first = !self.first_started.swap(true, Ordering::SeqCst);
            let mut open = self.gate.lock().unwrap();
            if first {
                while !*open {
                    open = self.gate_opened.wait(open).unwrap();
                }
            } else {
                *open = true;
                self.gate_opened.notify_all();
            }
        }
        if self
            .spawning
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            self.push();
        }
        if self.executed.fetch_add(1, Ordering::SeqCst) + 1 == self.total {
            self.stop.store(true, Ordering::SeqCst);
            self.sleep.wake_all();
        }
    }

    /// The worker loop of `worker/`, with a spin time of one sweep.
    fn worker(&self, index: usize) {
        let mut searching = false;
        loop {
            if self.stop.load(Ordering::SeqCst) {
                if searching {
                    self.sleep.end_search(|| self.has_work());
                }
                return;
            }
            if !searching {
                if self.take_own(index) {
                    self.run_task();
                    continue;
                }
                match self.sleep.begin_idle_with(index, self.lingering) {
                    // Searching from here on: both paths below set the
                    // flag for what follows.
                    Idle::Search => {}
                    Idle::Registered => {
                        searching = self.sleep_unless(index, false);
                        continue;
                    }
                }
            }
            if self.take_any(index) {
                searching = false;
                self.sleep.end_search(|| self.has_work());
                self.run_task();
                continue;
            }
            self.sleep.give_up_search(index);
            searching = self.sleep_unless(index, true);
        }
    }

    fn sleep_unless(&self, index: usize, recheck_queues: bool) -> bool {
        let wake = if self.stop.load(Ordering::SeqCst) || (recheck_queues && self.has_work()) {
            self.sleep.cancel(index, &|| self.has_work())
        } else {
            Some(self.sleep.park(index, &|| self.has_work()))
        };
        wake == Some(Wake::Searching)
    }
}

fn run_model(workers: usize, external_pushes: usize, spawning: usize) {
    run_model_of(
        Model::new(workers, external_pushes + spawning, spawning),
        external_pushes,
    );
}

fn run_model_of(model: Arc<Model>, external_pushes: usize) {
    let total = model.total;
    let workers = model.local.len();
    let threads: Vec<_> = (0..workers)
        .map(|index| {
            let model = Arc::clone(&model);
            thread::spawn(move || model.worker(index))
        })
        .collect();
    for _ in 0..external_pushes {
        model.push();
    }
    for thread in threads {
        thread.join().unwrap();
    }
    assert_eq!(model.executed.load(Ordering::SeqCst), total);
    assert!(!model.has_work());
    assert_eq!(model.sleep.counts().sleeping, 0);
}

#[test]
fn one_worker_one_external_push() {
    loom::model(|| run_model(1, 1, 0));
}

#[test]
fn two_workers_two_external_pushes() {
    loom::model(|| run_model(2, 2, 0));
}

#[test]
fn two_workers_local_push_from_a_running_task() {
    // The first task, pushed from outside, pushes the second from its worker:
    // the other worker may be searching, parking or parked at that moment.
    loom::model(|| run_model(2, 1, 1));
}

#[test]
fn three_workers_one_push_bounded_searchers() {
    // One searcher allowed for three workers: the other two park directly.
    loom::model(|| run_model(3, 1, 0));
}

#[test]
fn three_workers_three_pushes_with_owed_wakes() {
    // Enough tasks that some wakes are owed by woken workers in flight.
    loom::model(|| run_model(3, 3, 0));
}

#[test]
fn two_workers_two_pushes_with_direct_wakes() {
    // The second push may find the first one's woken worker in flight and
    // the other asleep: its notifier wakes that one itself (a pool whose
    // workers fit the cores) where the tree would owe the wake.
    loom::model(|| {
        let mut model = Model::new(2, 2, 0);
        Arc::get_mut(&mut model)
            .expect("not shared yet")
            .sleep
            .set_wakes(Wakes::Direct);
        run_model_of(model, 2);
    });
}

#[test]
fn two_workers_two_pushes_in_a_linger_window() {
    // Both workers may search at once (the linger bound at its largest,
    // every seat, as on a machine with more cores than seats), so a push
    // may find two unclaimed searchers and claim one of them.
    loom::model(|| {
        let mut model = Model::new(2, 2, 0);
        Arc::get_mut(&mut model).expect("not shared yet").lingering = true;
        run_model_of(model, 2);
    });
}

#[test]
fn two_workers_a_batch_moved_behind_a_long_task() {
    // Two tasks pushed from outside; a worker may take both at once, run one
    // that waits for the other, and move the other into its own queue while
    // the second worker searches, gives up or parks.
    loom::model(|| run_model_of(Model::with_batches(2, 2, 0, true), 2));
}

#[test]
fn a_waiter_woken_by_its_own_reason_is_never_lost() {
    // A worker waits for a flag (as `join` waits for a stolen job's latch); a
    // plain thread sets it and wakes the worker.
    loom::model(|| {
        let sleep = Arc::new(Sleep::new(1, 1));
        let flag = Arc::new(AtomicBool::new(false));
        let waiter = {
            let (sleep, flag) = (Arc::clone(&sleep), Arc::clone(&flag));
            thread::spawn(move || {
                let mut searching = false;
                // Acquire/Release on `flag`: a latch's done flag, as in latch.rs.
                while !flag.load(Ordering::Acquire) {
                    if searching {
                        sleep.give_up_search(0);
                    } else if sleep.begin_idle(0) == Idle::Search {
                        searching = true;
                        continue;
                    }
                    let wake = if flag.load(Ordering::Acquire) {
                        sleep.cancel(0, &|| false)
                    } else {
                        Some(sleep.park(0, &|| false))
                    };
                    searching = wake == Some(Wake::Searching);
                }
                if searching {
                    sleep.end_search(|| false);
                }
            })
        };
        flag.store(true, Ordering::Release);
        sleep.wake_worker(0);
        waiter.join().unwrap();
        assert_eq!(sleep.counts().sleeping, 0);
    });
}
