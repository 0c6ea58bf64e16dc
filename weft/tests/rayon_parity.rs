//! rayon-core's free functions and spawn orders under their rayon names:
//! `current_num_threads`, `current_thread_index`, the synchronous
//! `yield_now` / `yield_local`, `broadcast` / `spawn_broadcast`, and
//! `spawn_fifo` with the order the crate docs give ("Task order"). Written
//! from what rayon-core's own tests check (its `broadcast`, `spawn` and
//! `thread_pool` tests), against weft's documented behaviour where the two
//! differ. No assertion is about time; deadlines only turn a hang into a
//! failure.

use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

mod common;

use common::assert_eventually;

use weft::{Pool, Yield};

const HANG: Duration = Duration::from_secs(60);

/// The fairness pick's period (worker.rs, `FAIRNESS_INTERVAL`), as the crate
/// docs state it.
const FAIRNESS_INTERVAL: usize = 61;

fn pool(workers: usize) -> Pool {
    Pool::builder().workers(workers).build().expect("pool")
}

/// A pool whose panic handler counts the panics it gets.
fn pool_counting_panics(workers: usize) -> (Pool, Arc<AtomicUsize>) {
    let panics = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&panics);
    let pool = Pool::builder()
        .workers(workers)
        .panic_handler(move |_| {
            seen.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .expect("pool");
    (pool, panics)
}

/// The next `count` messages, failing rather than hanging.
fn receive<T>(receiver: &Receiver<T>, count: usize) -> Vec<T> {
    (0..count)
        .map(|received| {
            receiver
                .recv_timeout(HANG)
                .unwrap_or_else(|_| panic!("only {received} of {count} messages came"))
        })
        .collect()
}

fn sorted(mut values: Vec<usize>) -> Vec<usize> {
    values.sort_unstable();
    values
}

// ---------------------------------------------------------------------------
// current_num_threads, current_thread_index

#[test]
fn outside_any_pool_the_counts_are_the_global_pools() {
    assert_eq!(weft::current_thread_index(), None);
    assert_eq!(weft::current_worker_index(), None);
    // Both act on the global pool: it has one result per worker.
    assert_eq!(weft::current_num_threads(), weft::broadcast(|_| ()).len());
}

#[test]
fn on_a_worker_the_counts_are_its_pools_and_the_index_its_own() {
    let pool = pool(3);
    assert_eq!(pool.install(weft::current_num_threads), 3);
    let seen = pool.broadcast(|index| {
        (
            index,
            weft::current_thread_index(),
            weft::current_worker_index(),
            weft::current_num_threads(),
        )
    });
    let expected: Vec<_> = (0..3).map(|i| (i, Some(i), Some(i), 3)).collect();
    assert_eq!(seen, expected);
}

#[test]
fn nested_pools_each_report_their_own_size() {
    let outer = pool(2);
    let inner = pool(5);
    let (in_inner, back_in_outer) = outer.install(|| {
        let in_inner = inner.install(weft::current_num_threads);
        (in_inner, weft::current_num_threads())
    });
    assert_eq!((in_inner, back_in_outer), (5, 2));
}

#[test]
fn inside_blocking_the_pool_counts_but_the_thread_is_no_worker() {
    let pool = pool(3);
    let seen = pool
        .install(|| weft::blocking(|| (weft::current_num_threads(), weft::current_thread_index())));
    assert_eq!(seen, (3, None));
}

// ---------------------------------------------------------------------------
// yield_now, yield_local

#[test]
fn yielding_off_any_worker_does_nothing() {
    assert_eq!(weft::yield_now(), None);
    assert_eq!(weft::yield_local(), None);
    let pool = pool(1);
    let inside_blocking =
        pool.install(|| weft::blocking(|| (weft::yield_now(), weft::yield_local())));
    assert_eq!(inside_blocking, (None, None));
}

/// rayon's `yield_now_to_spawn` and `yield_local_to_spawn`: a task queued on
/// the only worker runs because the task occupying it yields.
#[test]
fn a_yield_runs_the_task_queued_behind_the_caller() {
    for local_only in [false, true] {
        let pool = pool(1);
        let yield_once = || {
            if local_only {
                weft::yield_local()
            } else {
                weft::yield_now()
            }
        };
        let (first, ran, second) = pool.install(|| {
            let ran = Arc::new(AtomicBool::new(false));
            let flag = Arc::clone(&ran);
            weft::spawn(move || flag.store(true, Ordering::SeqCst));
            let first = yield_once();
            let ran = ran.load(Ordering::SeqCst);
            (first, ran, yield_once())
        });
        assert_eq!(first, Some(Yield::Executed), "local_only: {local_only}");
        assert!(ran, "local_only: {local_only}");
        assert_eq!(second, Some(Yield::Idle), "local_only: {local_only}");
    }
}

/// rayon's `yield_now_to_spawn` as written there: a task spawned from
/// outside has started once a worker of its pool has yielded (here, with
/// other tests sharing the global pool, it may have started anyway).
#[test]
fn a_task_spawned_from_outside_is_reached_by_yields() {
    let (sender, receiver) = mpsc::channel();
    weft::spawn(move || sender.send(22).unwrap());
    weft::join(
        || while weft::yield_now() == Some(Yield::Executed) {},
        || (),
    );
    assert_eq!(receiver.recv_timeout(HANG), Ok(22));
}

#[test]
fn yield_local_leaves_the_global_queue_to_yield_now() {
    let pool = pool(1);
    let handle = pool.handle();
    let outcome = pool.install(|| {
        let ran = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&ran);
        // From another thread, so the task goes to the global queue while
        // the only worker is busy here.
        thread::spawn(move || {
            handle
                .spawn(move || flag.store(true, Ordering::SeqCst))
                .unwrap()
        })
        .join()
        .unwrap();
        let local = weft::yield_local();
        let ran_after_local = ran.load(Ordering::SeqCst);
        let now = weft::yield_now();
        (local, ran_after_local, now, ran.load(Ordering::SeqCst))
    });
    assert_eq!(
        outcome,
        (Some(Yield::Idle), false, Some(Yield::Executed), true)
    );
}

/// A yield that finds nothing of its own takes a task from another worker's
/// queue, as an idle worker would; `yield_local` never does.
#[test]
fn yield_now_takes_from_another_workers_queue() {
    let pool = pool(2);
    // Both workers block their threads (no helping) while the task is
    // queued, so only a yield can run it.
    let (started_sender, started) = mpsc::channel();
    let (queued_sender, queued) = mpsc::channel();
    let (outcome_sender, outcome) = mpsc::channel();
    let (done_sender, done) = mpsc::channel::<()>();
    pool.spawn_on(1, move || {
        started_sender.send(()).unwrap();
        queued.recv_timeout(HANG).unwrap();
        let local = weft::yield_local();
        let deadline = Instant::now() + HANG;
        // A steal may lose a race even with nobody else; it is retried.
        while weft::yield_now() != Some(Yield::Executed) {
            assert!(Instant::now() < deadline, "the queued task was never found");
        }
        outcome_sender.send(local).unwrap();
    });
    started.recv_timeout(HANG).unwrap();
    let stolen_before = pool.stats().workers[1].tasks_stolen;
    let (ran_on_sender, ran_on) = mpsc::channel();
    pool.spawn_on(0, move || {
        weft::spawn(move || ran_on_sender.send(weft::current_thread_index()).unwrap());
        queued_sender.send(()).unwrap();
        done.recv_timeout(HANG).unwrap();
    });
    assert_eq!(outcome.recv_timeout(HANG), Ok(Some(Yield::Idle)));
    assert_eq!(ran_on.recv_timeout(HANG), Ok(Some(1)));
    done_sender.send(()).unwrap();
    assert_eq!(pool.stats().workers[1].tasks_stolen, stolen_before + 1);
}

/// The task a yield runs goes through the same path as any task: its panic
/// reaches the pool's handler (not the yielding caller), and it is counted.
#[test]
fn a_yielded_to_task_that_panics_goes_to_the_panic_handler() {
    let (pool, panics) = pool_counting_panics(1);
    let (outcome, runs) = pool.install(|| {
        let before = pool.stats().workers[0].tasks_run;
        weft::spawn(|| panic!("a yielded-to task panics"));
        let outcome = weft::yield_local();
        (outcome, pool.stats().workers[0].tasks_run - before)
    });
    assert_eq!(outcome, Some(Yield::Executed));
    assert_eq!(runs, 1);
    assert_eq!(panics.load(Ordering::SeqCst), 1);
}

/// Inside a `join`'s first half, the pending second half is the worker's own
/// work, and a yield may run it.
#[test]
fn a_yield_may_run_the_second_half_of_the_callers_join() {
    let pool = pool(1);
    let (yielded, b_ran_first) = pool.install(|| {
        let b_ran = AtomicBool::new(false);
        let (outcome, ()) = weft::join(
            || {
                let outcome = weft::yield_local();
                (outcome, b_ran.load(Ordering::SeqCst))
            },
            || b_ran.store(true, Ordering::SeqCst),
        );
        outcome
    });
    assert_eq!((yielded, b_ran_first), (Some(Yield::Executed), true));
}

// ---------------------------------------------------------------------------
// broadcast, spawn_broadcast

#[test]
fn broadcast_outside_any_pool_covers_the_global_pool() {
    assert_eq!(
        weft::broadcast(|index| index),
        (0..weft::current_num_threads()).collect::<Vec<_>>()
    );
}

#[test]
fn broadcast_on_a_worker_covers_that_workers_pool() {
    let pool = pool(7);
    let from_install = pool.install(|| weft::broadcast(|index| index));
    let from_task = pool
        .spawn_with_handle(|| weft::broadcast(|index| index))
        .join()
        .unwrap();
    assert_eq!(from_install, (0..7).collect::<Vec<_>>());
    assert_eq!(from_task, (0..7).collect::<Vec<_>>());
}

/// rayon's `broadcast_mutual`: broadcasts into each other's pools, each
/// waiting on the other, finish.
#[test]
fn broadcasts_across_two_pools_waiting_on_each_other_finish() {
    let count = AtomicUsize::new(0);
    let small = pool(3);
    let large = pool(7);
    small.install(|| {
        large.broadcast(|_| {
            small.broadcast(|_| {
                count.fetch_add(1, Ordering::Relaxed);
            })
        })
    });
    assert_eq!(count.into_inner(), 3 * 7);
}

#[test]
fn a_panic_in_broadcast_reaches_the_caller_after_every_worker_ran() {
    let pool = pool(7);
    let ran = AtomicUsize::new(0);
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.install(|| {
            weft::broadcast(|index| {
                ran.fetch_add(1, Ordering::SeqCst);
                if index % 2 == 0 {
                    panic!("broadcast panic on {index}");
                }
            })
        })
    }));
    assert!(result.is_err());
    assert_eq!(ran.into_inner(), 7);
}

#[test]
fn spawn_broadcast_runs_once_on_every_worker() {
    let pool = pool(7);
    let (sender, receiver) = mpsc::channel();
    pool.spawn_broadcast(move |index| sender.send(index).unwrap());
    assert_eq!(sorted(receive(&receiver, 7)), (0..7).collect::<Vec<_>>());
}

#[test]
fn spawn_broadcast_outside_any_pool_covers_the_global_pool() {
    let (sender, receiver) = mpsc::channel();
    weft::spawn_broadcast(move |index| sender.send(index).unwrap());
    let workers = weft::current_num_threads();
    assert_eq!(
        sorted(receive(&receiver, workers)),
        (0..workers).collect::<Vec<_>>()
    );
}

#[test]
fn spawn_broadcast_from_a_task_covers_the_tasks_pool() {
    let pool = pool(7);
    let (sender, receiver) = mpsc::channel();
    pool.spawn(move || weft::spawn_broadcast(move |index| sender.send(index).unwrap()));
    assert_eq!(sorted(receive(&receiver, 7)), (0..7).collect::<Vec<_>>());
}

/// rayon's `spawn_broadcast_mutual`: every worker of one pool broadcasts
/// into the other.
#[test]
fn spawn_broadcasts_nest_across_pools() {
    let small = Arc::new(pool(3));
    let large = pool(7);
    let (sender, receiver) = mpsc::channel();
    let target = Arc::clone(&small);
    large.spawn_broadcast(move |_| {
        let sender = sender.clone();
        target.spawn_broadcast(move |_| sender.send(()).unwrap());
    });
    receive(&receiver, 3 * 7);
    // Once its pool is gone, the outer broadcast's closure (and its clone of
    // the small pool) is too.
    drop(large);
    let small = Arc::try_unwrap(small).expect("the outer broadcast was dropped");
    drop(small);
    assert!(receiver.try_recv().is_err(), "more than 21 calls");
}

#[test]
fn spawn_broadcast_panics_go_to_the_panic_handler_one_each() {
    let (pool, panics) = pool_counting_panics(7);
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&ran);
    pool.spawn_broadcast(move |index| {
        counter.fetch_add(1, Ordering::SeqCst);
        if index % 2 == 0 {
            panic!("spawn_broadcast panic on {index}");
        }
    });
    // Dropping the pool waits for everything queued.
    drop(pool);
    assert_eq!(ran.load(Ordering::SeqCst), 7);
    assert_eq!(panics.load(Ordering::SeqCst), 4);
}

/// rayon's `broadcast_after_spawn_broadcast`: each worker takes its
/// broadcast jobs in the order they were queued, so a broadcast that has
/// returned had every worker run the earlier `spawn_broadcast` first.
#[test]
fn a_broadcast_comes_after_an_earlier_spawn_broadcast_on_every_worker() {
    let pool = pool(4);
    let (sender, receiver) = mpsc::channel();
    pool.spawn_broadcast(move |index| sender.send(index).unwrap());
    pool.broadcast(|_| ());
    assert_eq!(
        sorted(receiver.try_iter().collect()),
        (0..4).collect::<Vec<_>>()
    );
}

/// A pool dropped while its task still runs takes that task's broadcasts,
/// as it takes its `weft::spawn`s: the task holds the pool open.
#[test]
fn a_task_of_a_dropped_pool_still_broadcasts() {
    let pool = pool(3);
    let handle = pool.handle();
    let (gate_sender, gate) = mpsc::channel::<()>();
    let (waited_sender, waited) = mpsc::channel();
    let (sender, receiver) = mpsc::channel();
    pool.spawn(move || {
        gate.recv_timeout(HANG).unwrap();
        waited_sender.send(weft::broadcast(|index| index)).unwrap();
        weft::spawn_broadcast(move |index| sender.send(index).unwrap());
    });
    let opener = thread::spawn(move || {
        assert_eventually(HANG, "the pool closes", || handle.is_closed());
        gate_sender.send(()).unwrap();
    });
    drop(pool);
    opener.join().unwrap();
    assert_eq!(waited.try_recv(), Ok(vec![0, 1, 2]));
    assert_eq!(sorted(receiver.try_iter().collect()), [0, 1, 2]);
}

// ---------------------------------------------------------------------------
// spawn_fifo and the documented order
//
// The order tests run on one worker and predict its order from the rule of
// the crate docs: the newest `spawn` task first, then the oldest
// `spawn_fifo` task, except that every 61st take first looks at the oldest
// `spawn_fifo` task, then at the oldest `spawn` task. Where in that period
// the worker is when the test starts is unknown (it counts every take of its
// life), so a run must match the rule for one of the 61 phases.

#[derive(Clone, Copy, Debug)]
enum Kind {
    Spawn,
    Fifo,
}

/// A task of an order test: the label it reports when it runs, then the
/// tasks it spawns, in that order.
#[derive(Clone, Debug)]
struct Plan {
    label: i32,
    children: Vec<(Kind, Plan)>,
}

fn leaf(label: i32) -> Plan {
    Plan {
        label,
        children: Vec::new(),
    }
}

/// The labels in the order one worker runs `spawned` (spawned in that order
/// from one of its tasks), with the fairness pick at take numbers
/// `phase + 61 k`, or with none.
fn predict(spawned: &[(Kind, Plan)], phase: Option<usize>) -> Vec<i32> {
    let mut local = VecDeque::new();
    let mut fifo = VecDeque::new();
    enqueue(spawned, &mut local, &mut fifo);
    let mut order = Vec::new();
    for take in 0.. {
        let fairness = phase.is_some_and(|phase| (take + phase) % FAIRNESS_INTERVAL == 0);
        let picked = if fairness {
            fifo.pop_front().or_else(|| local.pop_front())
        } else {
            None
        };
        let Some(plan) = picked
            .or_else(|| local.pop_back())
            .or_else(|| fifo.pop_front())
        else {
            break;
        };
        order.push(plan.label);
        enqueue(&plan.children, &mut local, &mut fifo);
    }
    order
}

/// What spawning `children` does to the worker's two queues: `spawn` onto
/// the local one (its back is the newest), `spawn_fifo` onto the FIFO one.
fn enqueue<'a>(
    children: &'a [(Kind, Plan)],
    local: &mut VecDeque<&'a Plan>,
    fifo: &mut VecDeque<&'a Plan>,
) {
    for (kind, plan) in children {
        match kind {
            Kind::Spawn => local.push_back(plan),
            Kind::Fifo => fifo.push_back(plan),
        }
    }
}

/// Every order the rule allows, one per phase (repeats removed).
fn allowed_orders(spawned: &[(Kind, Plan)]) -> Vec<Vec<i32>> {
    let mut orders: Vec<Vec<i32>> = Vec::new();
    for phase in 0..FAIRNESS_INTERVAL {
        let order = predict(spawned, Some(phase));
        if !orders.contains(&order) {
            orders.push(order);
        }
    }
    orders
}

fn count_tasks(spawned: &[(Kind, Plan)]) -> usize {
    spawned
        .iter()
        .map(|(_, plan)| 1 + count_tasks(&plan.children))
        .sum()
}

fn spawn_plan(kind: Kind, plan: Plan, sender: Sender<i32>) {
    let task = move || {
        sender.send(plan.label).unwrap();
        for (kind, child) in plan.children {
            spawn_plan(kind, child, sender.clone());
        }
    };
    match kind {
        Kind::Spawn => weft::spawn(task),
        Kind::Fifo => weft::spawn_fifo(task),
    }
}

/// Spawns `spawned` from one task of a one-worker pool and returns the
/// order the tasks ran in, checked against the rule.
fn run_on_one_worker(spawned: Vec<(Kind, Plan)>) -> Vec<i32> {
    let tasks = count_tasks(&spawned);
    let allowed = allowed_orders(&spawned);
    let pool = pool(1);
    let (sender, receiver) = mpsc::channel();
    pool.spawn(move || {
        for (kind, plan) in spawned {
            spawn_plan(kind, plan, sender.clone());
        }
    });
    let order = receive(&receiver, tasks);
    assert!(
        allowed.contains(&order),
        "ran in {order:?}; without a fairness pick the rule gives {:?}",
        allowed[0]
    );
    order
}

fn leaves(kind: Kind, count: i32) -> Vec<(Kind, Plan)> {
    (0..count).map(|label| (kind, leaf(label))).collect()
}

/// rayon's `spawn_lifo_order`.
#[test]
fn spawned_tasks_run_newest_first_on_their_worker() {
    let spawned = leaves(Kind::Spawn, 10);
    assert_eq!(predict(&spawned, None), (0..10).rev().collect::<Vec<_>>());
    run_on_one_worker(spawned);
}

/// rayon's `spawn_fifo_order`: here the fairness pick takes the oldest
/// `spawn_fifo` task too, so there is one order only.
#[test]
fn spawn_fifo_tasks_run_oldest_first_on_their_worker() {
    let spawned = leaves(Kind::Fifo, 10);
    assert_eq!(allowed_orders(&spawned), [(0..10).collect::<Vec<_>>()]);
    assert_eq!(run_on_one_worker(spawned), (0..10).collect::<Vec<_>>());
}

/// A long run shows the fairness pick itself: with 200 tasks every phase
/// has three picks or more, each running the oldest pending task early.
#[test]
fn every_61st_take_runs_the_oldest_spawned_task() {
    let spawned = leaves(Kind::Spawn, 200);
    let order = run_on_one_worker(spawned);
    assert_ne!(order, (0..200).rev().collect::<Vec<_>>());
}

/// rayon's `lifo_order`, `fifo_order`, `lifo_fifo_order` and
/// `fifo_lifo_order`: ten tasks spawning ten each. Without the fairness pick
/// weft's order is rayon's in all four.
#[test]
fn nested_spawns_follow_the_rule_in_all_four_combinations() {
    use Kind::{Fifo, Spawn};
    for (outer, inner) in [(Spawn, Spawn), (Fifo, Fifo), (Spawn, Fifo), (Fifo, Spawn)] {
        let spawned: Vec<(Kind, Plan)> = (0..10)
            .map(|i| {
                let children = (0..10).map(|j| (inner, leaf(i * 10 + j))).collect();
                (
                    outer,
                    Plan {
                        label: -1 - i,
                        children,
                    },
                )
            })
            .collect();
        let inner_order = |order: Vec<i32>| -> Vec<i32> {
            order.into_iter().filter(|label| *label >= 0).collect()
        };
        let rayons: Vec<i32> = match (outer, inner) {
            (Spawn, Spawn) => (0..100).rev().collect(),
            (Fifo, Fifo) => (0..100).collect(),
            (Spawn, Fifo) => (0..10)
                .rev()
                .flat_map(|i| (0..10).map(move |j| i * 10 + j))
                .collect(),
            (Fifo, Spawn) => (0..10)
                .flat_map(|i| (0..10).rev().map(move |j| i * 10 + j))
                .collect(),
        };
        assert_eq!(
            inner_order(predict(&spawned, None)),
            rayons,
            "{outer:?} then {inner:?}"
        );
        run_on_one_worker(spawned);
    }
}

/// rayon's `mixed_lifo_fifo_order` and `mixed_fifo_lifo_order`, where weft
/// differs as its docs say: a worker's `spawn` tasks all go before its
/// `spawn_fifo` tasks, whatever order they were spawned in.
#[test]
fn interleaved_spawns_run_spawn_first_then_spawn_fifo() {
    use Kind::{Fifo, Spawn};
    for (positive, negative) in [(Spawn, Fifo), (Fifo, Spawn)] {
        let spawned = vec![
            (positive, leaf(0)),
            (negative, leaf(-1)),
            (positive, leaf(1)),
            (negative, leaf(-2)),
            (positive, leaf(2)),
            (negative, leaf(-3)),
            (positive, leaf(3)),
        ];
        let expected = match positive {
            Spawn => vec![3, 2, 1, 0, -1, -2, -3],
            Fifo => vec![-3, -2, -1, 0, 1, 2, 3],
        };
        assert_eq!(predict(&spawned, None), expected);
        run_on_one_worker(spawned);
    }
}

/// rayon's `scope_lifo_order`, and the FIFO order of `Scope::spawn_fifo`
/// (rayon's `scope_fifo_order`, on its `ScopeFifo`).
#[test]
fn scope_spawns_follow_the_same_rule() {
    for kind in [Kind::Spawn, Kind::Fifo] {
        let pool = pool(1);
        let order = Mutex::new(Vec::new());
        pool.scope(|s| {
            for label in 0..10 {
                let order = &order;
                let task = move |_: &weft::Scope<'_>| order.lock().unwrap().push(label);
                match kind {
                    Kind::Spawn => s.spawn(task),
                    Kind::Fifo => s.spawn_fifo(task),
                }
            }
        });
        let order = order.into_inner().unwrap();
        assert!(
            allowed_orders(&leaves(kind, 10)).contains(&order),
            "{kind:?}: {order:?}"
        );
    }
}

#[test]
fn scope_spawn_fifo_from_a_thread_outside_the_pool_runs() {
    let pool = pool(2);
    let ran = AtomicBool::new(false);
    pool.scope(|s| {
        thread::scope(|threads| {
            threads.spawn(|| s.spawn_fifo(|_| ran.store(true, Ordering::SeqCst)));
        });
    });
    assert!(ran.into_inner());
}

#[test]
fn spawn_fifo_from_outside_runs_in_the_global_pool_and_the_pool() {
    let (sender, receiver) = mpsc::channel();
    let global = sender.clone();
    weft::spawn_fifo(move || global.send(weft::current_thread_index().is_some()).unwrap());
    let pool = pool(2);
    pool.spawn_fifo(move || sender.send(weft::current_thread_index().is_some()).unwrap());
    assert_eq!(receive(&receiver, 2), [true, true]);
}

/// Whether `order` is `0..n` or `0..n` with one run of it moved ahead of the
/// run just before it: what one fairness pick does to tasks a worker takes
/// from the global queue in batches (the crate docs, "Task order").
fn is_in_order_but_for_one_pick(order: &[i32]) -> bool {
    let n = order.len() as i32;
    let Some(start) = (0..n).find(|&i| order[i as usize] != i) else {
        return true;
    };
    let jumped = order[start as usize];
    let run = order[start as usize..]
        .iter()
        .zip(jumped..)
        .take_while(|(label, expected)| *label == expected)
        .count() as i32;
    let expected: Vec<i32> = (0..start)
        .chain(jumped..jumped + run)
        .chain(start..jumped)
        .chain(jumped + run..n)
        .collect();
    order == expected
}

/// From outside the pool both spawns go through the global queue, oldest
/// first; forty tasks see at most one fairness pick.
#[test]
fn tasks_spawned_from_outside_run_oldest_first() {
    let pool = pool(1);
    let (started_sender, started) = mpsc::channel();
    let (gate_sender, gate) = mpsc::channel::<()>();
    pool.spawn(move || {
        started_sender.send(()).unwrap();
        // Blocks the only worker (no helping) while the tasks queue up.
        gate.recv_timeout(HANG).unwrap();
    });
    started.recv_timeout(HANG).unwrap();
    let (sender, receiver) = mpsc::channel();
    for label in 0..40 {
        let sender = sender.clone();
        let task = move || sender.send(label).unwrap();
        if label % 2 == 0 {
            pool.spawn(task);
        } else {
            pool.spawn_fifo(task);
        }
    }
    gate_sender.send(()).unwrap();
    let order = receive(&receiver, 40);
    assert!(is_in_order_but_for_one_pick(&order), "{order:?}");
}

#[test]
fn the_one_pick_check_accepts_only_one_moved_run() {
    assert!(is_in_order_but_for_one_pick(&[0, 1, 2, 3]));
    assert!(is_in_order_but_for_one_pick(&[0, 3, 4, 1, 2, 5]));
    assert!(is_in_order_but_for_one_pick(&[2, 0, 1]));
    assert!(!is_in_order_but_for_one_pick(&[1, 0, 3, 2]));
    assert!(!is_in_order_but_for_one_pick(&[3, 2, 1, 0]));
}

// ---------------------------------------------------------------------------
// in_place_scope, scope_fifo, in_place_scope_fifo, Scope::spawn_broadcast,
// Handle::spawn_fifo, Handle::spawn_broadcast
//
// Written from what rayon-core's `scope` and `broadcast` tests check: where
// an in-place scope's body runs, that the scope waits for everything spawned
// in it (nested too) and raises a task's panic after that, FIFO order in a
// FIFO scope, and one broadcast call per worker.

/// These tests' limit for any wait: it turns a hang into a failure.
const DEADLINE: Duration = Duration::from_secs(30);

/// The next `count` messages, each within [`DEADLINE`].
fn next_within<T>(receiver: &Receiver<T>, count: usize) -> Vec<T> {
    (0..count)
        .map(|_| receiver.recv_timeout(DEADLINE).expect("a message came"))
        .collect()
}

/// Spawns, in scope `s`, a task that counts itself and then spawns `fanout`
/// children one level deeper, down to `depth`.
fn spawn_tree<'scope>(
    s: &weft::Scope<'scope>,
    depth: u32,
    fanout: u32,
    count: &'scope AtomicUsize,
) {
    s.spawn(move |s| {
        count.fetch_add(1, Ordering::SeqCst);
        if depth > 0 {
            for _ in 0..fanout {
                spawn_tree(s, depth - 1, fanout, count);
            }
        }
    });
}

/// Tasks in a tree of `depth` levels below its root, `fanout` children each.
fn tree_size(depth: u32, fanout: u32) -> usize {
    (0..=depth).map(|level| (fanout as usize).pow(level)).sum()
}

#[test]
fn in_place_scope_runs_its_body_on_the_caller_and_its_tasks_in_the_global_pool() {
    let caller = thread::current().id();
    let in_pool = Mutex::new(Vec::new());
    let body = weft::in_place_scope(|s| {
        for _ in 0..8 {
            s.spawn(|_| {
                in_pool
                    .lock()
                    .unwrap()
                    .push(weft::current_thread_index().is_some())
            });
        }
        (thread::current().id(), weft::current_thread_index())
    });
    assert_eq!(body, (caller, None));
    assert_eq!(in_pool.into_inner().unwrap(), [true; 8]);
}

#[test]
fn in_place_scope_on_a_worker_spawns_into_that_workers_pool() {
    let pool = pool(3);
    let (body, sizes) = pool.install(|| {
        let sizes = Mutex::new(Vec::new());
        let body = weft::in_place_scope(|s| {
            for _ in 0..4 {
                s.spawn(|_| sizes.lock().unwrap().push(weft::current_num_threads()));
            }
            weft::current_thread_index().is_some()
        });
        (body, sizes.into_inner().unwrap())
    });
    assert!(body);
    assert_eq!(sizes, [3; 4]);
}

/// rayon's `scope_divide_and_conquer`, in place: the scope ends only after
/// every task of the tree, however deep, has run.
#[test]
fn an_in_place_scope_waits_for_tasks_spawned_by_its_tasks() {
    for fifo in [false, true] {
        let count = AtomicUsize::new(0);
        if fifo {
            weft::in_place_scope_fifo(|s| spawn_tree(s, 4, 4, &count));
        } else {
            weft::in_place_scope(|s| spawn_tree(s, 4, 4, &count));
        }
        assert_eq!(count.into_inner(), tree_size(4, 4), "fifo: {fifo}");
    }
}

/// rayon's `in_place_scope_no_deadlock`: the body of an in-place scope runs
/// outside the pool, so it may block on its own task even when that task
/// needs the pool's only worker.
#[test]
fn an_in_place_scope_body_may_block_on_its_task_in_a_one_worker_pool() {
    let pool = pool(1);
    let (sender, receiver) = mpsc::channel();
    let got = pool.in_place_scope(|s| {
        s.spawn(move |_| sender.send(weft::current_thread_index()).unwrap());
        receiver.recv_timeout(DEADLINE).expect("the task ran")
    });
    assert_eq!(got, Some(0));
    let (sender, receiver) = mpsc::channel();
    let got = pool.in_place_scope_fifo(|s| {
        s.spawn(move |_| sender.send(weft::current_thread_index()).unwrap());
        receiver.recv_timeout(DEADLINE).expect("the task ran")
    });
    assert_eq!(got, Some(0));
}

/// The body of an in-place scope need not be `Send`, nor its result.
#[test]
fn an_in_place_scope_body_may_hold_what_is_not_send() {
    let local = std::rc::Rc::new(std::cell::Cell::new(0));
    let shared = AtomicUsize::new(0);
    let result = weft::in_place_scope(|s| {
        for _ in 0..3 {
            s.spawn(|_| {
                shared.fetch_add(1, Ordering::SeqCst);
            });
            local.set(local.get() + 1);
        }
        std::rc::Rc::clone(&local)
    });
    assert_eq!((result.get(), shared.into_inner()), (3, 3));
}

/// Spawns a task that panics, then ten that count themselves in `ran`.
fn spawn_a_panic_and_ten<'scope>(s: &weft::Scope<'scope>, ran: &'scope AtomicUsize) {
    s.spawn(|_| panic!("the task's panic"));
    for _ in 0..10 {
        s.spawn(|_| {
            ran.fetch_add(1, Ordering::SeqCst);
        });
    }
}

/// rayon's `panic_propagate_scope` and `panic_propagate_still_execute_*`, in
/// place: a task's panic reaches the caller once every other task ran.
#[test]
fn a_panic_in_an_in_place_scope_task_reaches_the_caller_after_the_others_ran() {
    for fifo in [false, true] {
        let ran = AtomicUsize::new(0);
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            if fifo {
                weft::in_place_scope_fifo(|s| spawn_a_panic_and_ten(s, &ran))
            } else {
                weft::in_place_scope(|s| spawn_a_panic_and_ten(s, &ran))
            }
        }));
        let payload = outcome.expect_err("the panic came through");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"the task's panic"));
        assert_eq!(ran.into_inner(), 10, "fifo: {fifo}");
    }
}

/// Spawns `plan` in scope `s` with `Scope::spawn` (FIFO in a FIFO scope),
/// its children from its own task in turn, recording the labels run.
fn spawn_plan_in<'scope>(s: &weft::Scope<'scope>, plan: Plan, order: &'scope Mutex<Vec<i32>>) {
    s.spawn(move |s| {
        order.lock().unwrap().push(plan.label);
        for (_, child) in plan.children {
            spawn_plan_in(s, child, order);
        }
    });
}

/// rayon's `scope_fifo_order`, through each way of making a FIFO scope: on
/// one worker, `spawn` in a FIFO scope runs oldest-first, and (all spawns
/// being FIFO) the fairness pick leaves one order only.
#[test]
fn a_fifo_scopes_spawns_run_oldest_first_on_their_worker() {
    let expected: Vec<i32> = (0..10).collect();
    assert_eq!(
        allowed_orders(&leaves(Kind::Fifo, 10)),
        std::slice::from_ref(&expected)
    );
    fn spawn_all<'scope>(s: &weft::ScopeFifo<'scope>, order: &'scope Mutex<Vec<i32>>) {
        for label in 0..10 {
            s.spawn(move |_| order.lock().unwrap().push(label));
        }
    }
    for way in 0..3 {
        let pool = pool(1);
        let order = Mutex::new(Vec::new());
        match way {
            0 => pool.scope_fifo(|s| spawn_all(s, &order)),
            1 => pool.install(|| weft::scope_fifo(|s| spawn_all(s, &order))),
            // From outside, one task spawns them all, on the worker.
            _ => pool.in_place_scope_fifo(|s| s.spawn(|s| spawn_all(s, &order))),
        }
        assert_eq!(order.into_inner().unwrap(), expected, "way {way}");
    }
}

/// rayon's nested `fifo_fifo` order in a FIFO scope: ten tasks spawning ten
/// each, all through `Scope::spawn`, run as the rule's all-FIFO order.
#[test]
fn tasks_of_a_fifo_scope_spawn_fifo_too() {
    let spawned: Vec<(Kind, Plan)> = (0..10)
        .map(|i| {
            let children = (0..10).map(|j| (Kind::Fifo, leaf(i * 10 + j))).collect();
            (
                Kind::Fifo,
                Plan {
                    label: -1 - i,
                    children,
                },
            )
        })
        .collect();
    let allowed = allowed_orders(&spawned);
    assert_eq!(allowed.len(), 1);
    let inner: Vec<i32> = allowed[0].iter().copied().filter(|l| *l >= 0).collect();
    assert_eq!(inner, (0..100).collect::<Vec<_>>());
    let pool = pool(1);
    let order = Mutex::new(Vec::new());
    pool.scope_fifo(|s| {
        for (_, plan) in spawned {
            spawn_plan_in(s, plan, &order);
        }
    });
    assert_eq!(order.into_inner().unwrap(), allowed[0]);
}

/// In a FIFO scope `spawn` and `spawn_fifo` are one order; in a plain scope
/// nested inside it, `spawn` is newest-first again.
#[test]
fn only_the_fifo_scope_itself_spawns_fifo() {
    let pool = pool(1);
    let mixed = Mutex::new(Vec::new());
    let nested = Mutex::new(Vec::new());
    pool.scope_fifo(|s| {
        for label in 0..6 {
            let mixed = &mixed;
            let task = move |_: &weft::ScopeFifo<'_>| mixed.lock().unwrap().push(label);
            if label % 2 == 0 {
                s.spawn(task);
            } else {
                s.spawn_fifo(task);
            }
        }
    });
    pool.scope_fifo(|_| {
        weft::scope(|s| {
            for label in 0..10 {
                let nested = &nested;
                s.spawn(move |_| nested.lock().unwrap().push(label));
            }
        });
    });
    assert_eq!(mixed.into_inner().unwrap(), [0, 1, 2, 3, 4, 5]);
    let nested = nested.into_inner().unwrap();
    assert!(
        allowed_orders(&leaves(Kind::Spawn, 10)).contains(&nested),
        "{nested:?}"
    );
}

/// rayon's `spawn_broadcast` in a scope: one call per worker, on that
/// worker, borrowing the caller's data, and the scope waits for them all.
#[test]
fn scope_spawn_broadcast_runs_once_on_every_worker_before_the_scope_ends() {
    let pool = pool(4);
    let seen = Mutex::new(Vec::new());
    pool.scope(|s| {
        s.spawn_broadcast(|_, index| {
            seen.lock()
                .unwrap()
                .push((index, weft::current_thread_index()));
        });
    });
    let mut seen = seen.into_inner().unwrap();
    seen.sort_unstable();
    let expected: Vec<_> = (0..4).map(|i| (i, Some(i))).collect();
    assert_eq!(seen, expected);
}

#[test]
fn scope_spawn_broadcast_calls_may_spawn_more_in_the_scope() {
    let pool = pool(3);
    let count = AtomicUsize::new(0);
    pool.scope_fifo(|s| {
        s.spawn_broadcast(|s, _| spawn_tree(s, 2, 3, &count));
    });
    assert_eq!(count.into_inner(), 3 * tree_size(2, 3));
}

#[test]
fn scope_spawn_broadcast_from_outside_any_pool_covers_the_global_pool() {
    let calls = AtomicUsize::new(0);
    weft::in_place_scope(|s| {
        s.spawn_broadcast(|_, _| {
            calls.fetch_add(1, Ordering::SeqCst);
        });
    });
    assert_eq!(calls.into_inner(), weft::current_num_threads());
}

#[test]
fn a_panic_in_a_scope_broadcast_reaches_the_scope_after_every_call() {
    let pool = pool(4);
    let others = AtomicUsize::new(0);
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.scope(|s| {
            s.spawn_broadcast(|_, index| {
                if index == 2 {
                    panic!("worker two");
                }
                others.fetch_add(1, Ordering::SeqCst);
            });
        })
    }));
    let payload = outcome.expect_err("the panic came through");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"worker two"));
    assert_eq!(others.into_inner(), 3);
}

/// Both run in a live pool (the broadcast once on each worker), and once
/// the pool is dropped both hand their closure back unrun.
#[test]
fn handle_spawn_fifo_and_spawn_broadcast_run_then_are_handed_back_once_dropped() {
    let pool = pool(3);
    let handle = pool.handle();
    let (sender, receiver) = mpsc::channel();
    let fifo_sender = sender.clone();
    handle
        .spawn_fifo(move || fifo_sender.send((9, weft::current_thread_index())).unwrap())
        .expect("a live pool takes it");
    assert_eq!(next_within(&receiver, 1)[0].0, 9);
    let early = sender.clone();
    handle
        .spawn_broadcast(move |index| early.send((index, weft::current_thread_index())).unwrap())
        .expect("a live pool takes it");
    let mut seen: Vec<_> = next_within(&receiver, 3);
    seen.sort_unstable();
    assert_eq!(seen, [(0, Some(0)), (1, Some(1)), (2, Some(2))]);
    drop(pool);
    let fifo_sender = sender.clone();
    let refused = handle
        .spawn_fifo(move || fifo_sender.send((8, None)).unwrap())
        .expect_err("a dropped pool refuses it");
    assert!(refused.is_closed());
    refused.into_inner()();
    let refused = handle
        .spawn_broadcast(move |index| sender.send((index, None)).unwrap())
        .expect_err("a dropped pool refuses it");
    assert!(refused.is_closed());
    refused.into_inner()(7);
    assert_eq!(next_within(&receiver, 2), [(8, None), (7, None)]);
    // No call of the refused spawns ran in the pool.
    assert!(receiver.try_recv().is_err());
}

/// From a task on one of the pool's workers, `Handle::spawn_fifo` keeps
/// the FIFO order `Pool::spawn_fifo` has there, and `Handle::spawn_broadcast`
/// covers every worker.
#[test]
fn handle_spawns_from_a_worker_keep_the_pools_order_and_reach() {
    let pool = pool(2);
    let handle = pool.handle();
    let (sender, receiver) = mpsc::channel();
    pool.spawn(move || {
        let worker = weft::current_thread_index().expect("on a worker");
        for label in 0..10 {
            let sender = sender.clone();
            handle
                .spawn_fifo(move || {
                    // Only the ones the spawning worker runs have an order.
                    if weft::current_thread_index() == Some(worker) {
                        sender.send(label).unwrap();
                    } else {
                        sender.send(-1 - label).unwrap();
                    }
                })
                .expect("a live pool takes it");
        }
        handle
            .spawn_broadcast(move |index| sender.send(100 + index as i32).unwrap())
            .expect("a live pool takes it");
    });
    let seen = next_within(&receiver, 12);
    let in_order: Vec<i32> = seen
        .iter()
        .copied()
        .filter(|l| (0..10).contains(l))
        .collect();
    assert!(in_order.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
    let mut labels: Vec<i32> = seen
        .iter()
        .map(|&l| if l < 0 { -1 - l } else { l })
        .collect();
    labels.sort_unstable();
    let expected: Vec<i32> = (0..10).chain([100, 101]).collect();
    assert_eq!(labels, expected);
}

/// A task of a dropped pool still runs, but a handle refuses its spawns, as
/// `Handle::spawn` does: the refusal is the pool's state, not the caller's.
#[test]
fn a_task_of_a_dropped_pool_is_refused_by_the_handle() {
    let pool = pool(2);
    let handle = pool.handle();
    let opener_handle = pool.handle();
    let (gate_sender, gate) = mpsc::channel::<()>();
    let (sender, receiver) = mpsc::channel();
    pool.spawn(move || {
        gate.recv_timeout(DEADLINE).unwrap();
        let fifo = handle.spawn_fifo(|| ()).map_err(|e| e.is_closed());
        let broadcast = handle.spawn_broadcast(|_| ()).map_err(|e| e.is_closed());
        sender.send((fifo, broadcast)).unwrap();
    });
    let opener = thread::spawn(move || {
        let deadline = Instant::now() + DEADLINE;
        while !opener_handle.is_closed() {
            assert!(Instant::now() < deadline, "the pool never closed");
            thread::sleep(Duration::from_millis(1));
        }
        gate_sender.send(()).unwrap();
    });
    drop(pool);
    opener.join().unwrap();
    assert_eq!(receiver.try_recv(), Ok((Err(true), Err(true))));
}
