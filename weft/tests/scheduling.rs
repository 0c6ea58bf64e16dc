//! Scheduling behaviour, tested with many more workers than cores: tasks that
//! block show fan-out and fairness without needing the cores. Every assertion
//! is about what happened (which workers ran what, who parked), never about
//! how long it took; deadlines are only there to turn a hang into a failure.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

mod common;

use common::eventually;

use weft::Pool;

const HANG: Duration = Duration::from_secs(60);

fn pool(workers: usize) -> Pool {
    Pool::builder().workers(workers).build().expect("pool")
}

/// Waits (polling, with a generous deadline) until every worker is parked.
fn wait_until_parked(pool: &Pool) {
    if !eventually(HANG, || pool.stats().sleeping_now == pool.workers()) {
        panic!("the pool never parked: {}", pool.stats());
    }
}

/// A rendezvous for `parties` tasks that blocks the worker thread itself (it
/// does not help), so the round completes only if `parties` distinct workers
/// run the tasks at the same time.
struct Rendezvous {
    arrived: Mutex<usize>,
    all_here: Condvar,
    parties: usize,
}

impl Rendezvous {
    fn new(parties: usize) -> Arc<Rendezvous> {
        Arc::new(Rendezvous {
            arrived: Mutex::new(0),
            all_here: Condvar::new(),
            parties,
        })
    }

    fn arrive_and_wait(&self) {
        let mut arrived = self.arrived.lock().unwrap();
        *arrived += 1;
        self.all_here.notify_all();
        let (arrived, timeout) = self
            .all_here
            .wait_timeout_while(arrived, HANG, |arrived| *arrived < self.parties)
            .unwrap();
        assert!(
            !timeout.timed_out(),
            "only {} of {} tasks ran at once",
            *arrived,
            self.parties
        );
    }
}

/// marl issue 232's fork-and-join: rounds of one task per worker, submitted to
/// a parked pool. Each round must run on every worker at once.
fn fork_join_rounds_use_every_worker(workers: usize, rounds: usize) {
    let pool = pool(workers);
    for _ in 0..rounds {
        wait_until_parked(&pool);
        let rendezvous = Rendezvous::new(workers);
        let ran_on = Arc::new(Mutex::new(HashSet::new()));
        let finished = weft::WaitGroup::new();
        finished.add(workers);
        for _ in 0..workers {
            let (rendezvous, ran_on, finished) = (
                Arc::clone(&rendezvous),
                Arc::clone(&ran_on),
                finished.clone(),
            );
            pool.spawn(move || {
                ran_on
                    .lock()
                    .unwrap()
                    .insert(weft::current_worker_index().unwrap());
                rendezvous.arrive_and_wait();
                finished.done();
            });
        }
        finished.wait();
        assert_eq!(ran_on.lock().unwrap().len(), workers);
    }
}

#[test]
fn fork_join_fans_out_to_8_parked_workers() {
    fork_join_rounds_use_every_worker(8, 10);
}

#[test]
fn fork_join_fans_out_to_16_parked_workers() {
    fork_join_rounds_use_every_worker(16, 5);
}

#[test]
fn fork_join_fans_out_to_24_parked_workers() {
    fork_join_rounds_use_every_worker(24, 5);
}

#[test]
fn fork_join_fans_out_to_64_parked_workers() {
    fork_join_rounds_use_every_worker(64, 5);
}

#[test]
fn tasks_spawned_inside_a_scope_fan_out_to_every_worker() {
    let workers = 32;
    let pool = pool(workers);
    for _ in 0..3 {
        wait_until_parked(&pool);
        let rendezvous = Rendezvous::new(workers);
        let ran_on = Mutex::new(HashSet::new());
        pool.scope(|s| {
            for _ in 0..workers {
                s.spawn(|_| {
                    ran_on
                        .lock()
                        .unwrap()
                        .insert(weft::current_worker_index().unwrap());
                    rendezvous.arrive_and_wait();
                });
            }
        });
        assert_eq!(ran_on.into_inner().unwrap().len(), workers);
    }
}

#[test]
fn marl_sleeping_rounds_three_tasks_per_worker_keep_every_worker_busy() {
    // marl issue 232 with three sleeping tasks per worker per round: every
    // worker must take part in every round (a worker left asleep would show
    // here). A task sleeps 10 ms, and longer while some worker has not yet
    // taken one, up to a deadline far past any wake-up: on a loaded machine
    // a woken worker may wait that long for a core, and the round must not
    // end without it unless it was never woken.
    let workers = 24;
    let pool = pool(workers);
    for _ in 0..3 {
        wait_until_parked(&pool);
        let ran_on = Mutex::new(HashSet::new());
        let deadline = Instant::now() + Duration::from_secs(20);
        pool.scope(|s| {
            for _ in 0..3 * workers {
                s.spawn(|_| {
                    ran_on
                        .lock()
                        .unwrap()
                        .insert(weft::current_worker_index().unwrap());
                    std::thread::sleep(Duration::from_millis(10));
                    while ran_on.lock().unwrap().len() < workers && Instant::now() < deadline {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                });
            }
        });
        assert_eq!(ran_on.into_inner().unwrap().len(), workers);
    }
}

#[test]
fn an_idle_pool_parks_every_worker_and_stays_parked() {
    let pool = pool(16);
    pool.scope(|s| {
        for _ in 0..1000 {
            s.spawn(|_| std::hint::black_box(()));
        }
    });
    wait_until_parked(&pool);
    let before = pool.stats().total();
    std::thread::sleep(Duration::from_millis(300));
    let after = pool.stats();
    assert_eq!(
        after.sleeping_now, 16,
        "a worker woke up while idle: {after}"
    );
    let after = after.total();
    assert_eq!(
        after.parks, before.parks,
        "workers woke and re-parked while idle"
    );
    assert_eq!(after.wakeups, before.wakeups, "idle workers were woken");
}

#[test]
fn a_join_waiting_on_a_long_stolen_half_parks() {
    // The worker whose second half was stolen watches for the half's end only
    // briefly: while the half runs on (here, until released) it must park,
    // not spin. The half's own worker is inside the half, so at that point
    // exactly one worker of the two sleeps, and it is the waiter.
    let pool = pool(2);
    let stolen = AtomicBool::new(false);
    let parked_while_waiting = AtomicBool::new(false);
    pool.install(|| {
        weft::join(
            || {
                // Keep the first half busy until the second was stolen.
                let deadline = Instant::now() + HANG;
                while !stolen.load(Ordering::Acquire) {
                    assert!(
                        Instant::now() < deadline,
                        "the second half was never stolen"
                    );
                    std::thread::yield_now();
                }
            },
            || {
                stolen.store(true, Ordering::Release);
                let deadline = Instant::now() + HANG;
                while pool.stats().sleeping_now != 1 {
                    assert!(Instant::now() < deadline, "the waiter never parked");
                    std::thread::sleep(Duration::from_millis(1));
                }
                parked_while_waiting.store(true, Ordering::Relaxed);
            },
        );
    });
    assert!(parked_while_waiting.load(Ordering::Relaxed));
}

#[test]
fn searchers_are_bounded_by_max_spinning() {
    // Searchers here would spin for an hour: only the bound stops them. Bursts
    // wake sleepers beyond the bound (fan-out); each woken worker may search
    // past its first sweep only while the bound allows, so once a burst is done
    // the number of searchers must fall back to the bound, long before any
    // spin time runs out.
    let bound = 2;
    let pool = Pool::builder()
        .workers(32)
        .max_spinning(bound)
        .spin(Duration::from_secs(3600))
        .build()
        .unwrap();
    for round in 0..20 {
        let burst = weft::WaitGroup::new();
        let tasks = 1 + round % 12;
        burst.add(tasks);
        for _ in 0..tasks {
            let burst = burst.clone();
            pool.spawn(move || {
                std::thread::sleep(Duration::from_micros(300));
                burst.done();
            });
        }
        burst.wait();
        let deadline = Instant::now() + HANG;
        loop {
            let stats = pool.stats();
            if stats.searching_now <= bound {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "searchers never fell back to {bound}: {stats}"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

#[test]
fn local_work_cannot_starve_the_global_queue() {
    // One worker runs a chain that re-spawns itself onto its own queue for as
    // long as the outside task has not run. Without the fairness check the
    // chain would run forever.
    let pool = pool(1);
    let outside_ran = Arc::new(AtomicBool::new(false));
    fn chain(outside_ran: Arc<AtomicBool>, links: Arc<AtomicUsize>) {
        links.fetch_add(1, Ordering::Relaxed);
        if !outside_ran.load(Ordering::SeqCst) {
            weft::spawn(move || chain(outside_ran, links));
        }
    }
    let links = Arc::new(AtomicUsize::new(0));
    let (o, l) = (Arc::clone(&outside_ran), Arc::clone(&links));
    pool.spawn(move || chain(o, l));
    let (sender, receiver) = std::sync::mpsc::channel();
    let flag = Arc::clone(&outside_ran);
    pool.spawn(move || {
        flag.store(true, Ordering::SeqCst);
        sender.send(()).unwrap();
    });
    receiver
        .recv_timeout(HANG)
        .expect("the outside task starved");
    drop(pool);
    assert!(links.load(Ordering::Relaxed) >= 1);
}

#[test]
fn pinned_tasks_are_not_starved_by_local_work() {
    let pool = pool(2);
    let pinned_ran = Arc::new(AtomicBool::new(false));
    fn chain(stop: Arc<AtomicBool>) {
        if !stop.load(Ordering::SeqCst) {
            weft::spawn(move || chain(stop));
        }
    }
    let stop = Arc::clone(&pinned_ran);
    pool.spawn_on(0, move || chain(stop));
    let (sender, receiver) = std::sync::mpsc::channel();
    let flag = Arc::clone(&pinned_ran);
    pool.spawn_on(0, move || {
        flag.store(true, Ordering::SeqCst);
        sender.send(weft::current_worker_index()).unwrap();
    });
    assert_eq!(
        receiver.recv_timeout(HANG).expect("pinned task starved"),
        Some(0)
    );
}

/// Bursts with random gaps drive workers through working, searching and
/// parked states; every task must run exactly once.
#[test]
fn torture_bursts_with_random_gaps_run_every_task_exactly_once() {
    const TASKS: usize = 1 << 20;
    let runs: Arc<Vec<AtomicU8>> = Arc::new((0..TASKS).map(|_| AtomicU8::new(0)).collect());
    let pool = Pool::builder().workers(8).build().unwrap();
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut submitted = 0;
    while submitted < TASKS {
        let burst = (next() % 4096) as usize + 1;
        let burst = burst.min(TASKS - submitted);
        let first = submitted;
        match next() % 3 {
            // From outside, one task each.
            0 => {
                for id in first..first + burst {
                    let runs = Arc::clone(&runs);
                    pool.spawn(move || {
                        runs[id].fetch_add(1, Ordering::Relaxed);
                    });
                }
            }
            // From inside: one task fans the burst out from a worker.
            1 => {
                let runs = Arc::clone(&runs);
                pool.spawn(move || {
                    for id in first..first + burst {
                        let runs = Arc::clone(&runs);
                        weft::spawn(move || {
                            runs[id].fetch_add(1, Ordering::Relaxed);
                        });
                    }
                });
            }
            // Recursive joins.
            _ => {
                let runs = Arc::clone(&runs);
                pool.spawn(move || split(&runs, first, first + burst));
            }
        }
        submitted += burst;
        match next() % 4 {
            0 => {}
            1 => std::thread::yield_now(),
            _ => std::thread::sleep(Duration::from_micros(next() % 2000)),
        }
    }
    drop(pool);
    let wrong: Vec<_> = (0..TASKS)
        .filter(|&id| runs[id].load(Ordering::Relaxed) != 1)
        .take(5)
        .collect();
    assert!(wrong.is_empty(), "tasks not run exactly once: {wrong:?}");
}

fn split(runs: &[AtomicU8], from: usize, to: usize) {
    if to - from == 1 {
        runs[from].fetch_add(1, Ordering::Relaxed);
        return;
    }
    let mid = (from + to) / 2;
    weft::join(|| split(runs, from, mid), || split(runs, mid, to));
}

#[test]
fn many_more_workers_than_cores_share_a_deep_join_tree() {
    let pool = pool(256);
    fn count(depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        let (a, b) = weft::join(|| count(depth - 1), || count(depth - 1));
        a + b
    }
    assert_eq!(pool.install(|| count(16)), 1 << 16);
    // Join halves are stack jobs and not counted as tasks; the install is. A
    // worker counts a task just after it signalled its result, so the count
    // may land a moment after `install` returned.
    let deadline = Instant::now() + HANG;
    while pool.stats().total().tasks_run != 1 {
        let stats = pool.stats();
        assert!(Instant::now() < deadline, "expected 1 task: {stats}");
        assert!(stats.total().tasks_run < 1, "too many tasks: {stats}");
        std::thread::sleep(Duration::from_millis(1));
    }
}
