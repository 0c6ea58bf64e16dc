//! `JoinHandle::abort`: closure tasks that have not started never run and
//! are dropped once, started ones finish; futures are dropped at their next
//! poll (or at once when idle), even when nothing else would wake them; the
//! handle reports `weft::Aborted`, told apart from a panic. No test asserts
//! a duration: each waits for a condition, for 30 s at most.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::{Duration, Instant};

mod common;

use common::eventually;

use weft::{Aborted, JoinHandle, Pool};

const PATIENCE: Duration = Duration::from_secs(30);

fn pool(workers: usize) -> Pool {
    Pool::builder().workers(workers).build().unwrap()
}

/// Joins `handle`, failing (instead of hanging) after [`PATIENCE`].
fn join<T>(handle: JoinHandle<T>) -> thread::Result<T> {
    match handle.join_timeout(PATIENCE) {
        Ok(result) => result,
        Err(_) => panic!("the task did not finish"),
    }
}

fn is_aborted<T>(result: &thread::Result<T>) -> bool {
    matches!(result, Err(payload) if payload.is::<Aborted>())
}

/// Counts its drops.
struct DropCounter(Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn counter() -> Arc<AtomicUsize> {
    Arc::new(AtomicUsize::new(0))
}

/// Holds the only worker of a one-worker pool until the returned sender
/// sends (or is dropped); returns once the worker is held.
fn hold_worker(pool: &Pool) -> mpsc::Sender<()> {
    let (release, held) = mpsc::channel::<()>();
    let (started, on_start) = mpsc::channel();
    pool.spawn(move || {
        started.send(()).unwrap();
        let _ = held.recv();
    });
    on_start.recv_timeout(PATIENCE).expect("the worker is held");
    release
}

/// A future that never wakes itself, but leaves its waker in `slot`, where
/// the test keeps it (so the task is not dropped for want of wakers). Never
/// ready, unless its `gate` says so. Counts its finished polls and its drops.
struct Stuck {
    slot: Arc<Mutex<Option<Waker>>>,
    polls: Arc<AtomicUsize>,
    gate: Option<Gate>,
    _drops: DropCounter,
}

/// Holds a [`Stuck`] future's polls until released: each poll says it
/// started, then waits for the release, then returns `Ready(9)` if `ready`.
struct Gate {
    in_poll: mpsc::Sender<()>,
    release: Mutex<mpsc::Receiver<()>>,
    ready: bool,
}

impl Future for Stuck {
    type Output = u32;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u32> {
        *self.slot.lock().unwrap() = Some(cx.waker().clone());
        let ready = self.gate.as_ref().is_some_and(|gate| {
            let _ = gate.in_poll.send(());
            gate.release.lock().unwrap().recv().unwrap();
            gate.ready
        });
        self.polls.fetch_add(1, Ordering::SeqCst);
        if ready {
            Poll::Ready(9)
        } else {
            Poll::Pending
        }
    }
}

struct StuckProbe {
    slot: Arc<Mutex<Option<Waker>>>,
    polls: Arc<AtomicUsize>,
    drops: Arc<AtomicUsize>,
}

fn stuck() -> (Stuck, StuckProbe) {
    gated(None)
}

fn gated(gate: Option<Gate>) -> (Stuck, StuckProbe) {
    let probe = StuckProbe {
        slot: Arc::new(Mutex::new(None)),
        polls: counter(),
        drops: counter(),
    };
    let future = Stuck {
        slot: Arc::clone(&probe.slot),
        polls: Arc::clone(&probe.polls),
        gate,
        _drops: DropCounter(Arc::clone(&probe.drops)),
    };
    (future, probe)
}

#[test]
fn a_queued_closure_aborted_never_runs_and_is_dropped_once() {
    let pool = pool(1);
    let release = hold_worker(&pool);
    let (ran, drops) = (Arc::new(AtomicBool::new(false)), counter());
    let token = DropCounter(Arc::clone(&drops));
    let handle = {
        let ran = Arc::clone(&ran);
        pool.spawn_with_handle(move || {
            let _token = token;
            ran.store(true, Ordering::SeqCst);
            5
        })
    };
    handle.abort();
    // The only worker is held: nobody has taken the job yet, so the closure
    // is still alive and the handle not finished.
    assert!(!handle.is_finished());
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    handle.abort();
    release.send(()).unwrap();
    assert!(eventually(PATIENCE, || handle.is_finished()));
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert!(is_aborted(&join(handle)));
    assert!(!ran.load(Ordering::SeqCst));
    drop(pool);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn a_running_closure_aborted_completes_with_its_value() {
    let pool = pool(2);
    let (started, on_start) = mpsc::channel();
    let (release, held) = mpsc::channel::<()>();
    let handle = pool.spawn_with_handle(move || {
        started.send(()).unwrap();
        held.recv().unwrap();
        7
    });
    on_start.recv_timeout(PATIENCE).unwrap();
    handle.abort();
    release.send(()).unwrap();
    assert_eq!(abort_finished(handle).unwrap(), 7);
}

/// Waits for `handle`'s task to finish, aborts it (which must do nothing)
/// and joins it.
fn abort_finished<T>(handle: JoinHandle<T>) -> thread::Result<T> {
    assert!(eventually(PATIENCE, || handle.is_finished()));
    handle.abort();
    join(handle)
}

#[test]
fn aborting_a_finished_or_panicked_task_does_nothing() {
    let pool = pool(2);
    assert_eq!(abort_finished(pool.spawn_with_handle(|| 3)).unwrap(), 3);
    let panicked = pool.spawn_with_handle(|| -> u32 { std::panic::panic_any(11u32) });
    let payload = abort_finished(panicked).unwrap_err();
    assert!(!payload.is::<Aborted>());
    assert_eq!(payload.downcast_ref::<u32>(), Some(&11));
    assert_eq!(abort_finished(pool.spawn_future(async { 4 })).unwrap(), 4);
}

#[test]
fn a_pending_future_aborted_is_dropped_though_nothing_wakes_it() {
    let pool = pool(2);
    let (future, probe) = stuck();
    let handle = pool.spawn_future(future);
    assert!(eventually(PATIENCE, || probe
        .slot
        .lock()
        .unwrap()
        .is_some()));
    handle.abort();
    handle.abort();
    assert!(eventually(PATIENCE, || handle.is_finished()));
    assert_eq!(probe.drops.load(Ordering::SeqCst), 1);
    // Dropped instead of being polled again.
    assert_eq!(probe.polls.load(Ordering::SeqCst), 1);
    let result = join(handle);
    assert!(is_aborted(&result), "{result:?}");
    // The waker the test kept outlives the task's future: waking it now
    // does nothing.
    probe.slot.lock().unwrap().take().unwrap().wake();
    assert_eq!(probe.polls.load(Ordering::SeqCst), 1);
}

/// Spawns a gated [`Stuck`] future, waits for its first poll to start and
/// aborts it there; returns its handle, its release and its probe.
fn abort_during_poll(pool: &Pool, ready: bool) -> (JoinHandle<u32>, mpsc::Sender<()>, StuckProbe) {
    let (in_poll, polling) = mpsc::channel();
    let (release, held) = mpsc::channel();
    let (future, probe) = gated(Some(Gate {
        in_poll,
        release: Mutex::new(held),
        ready,
    }));
    let handle = pool.spawn_future(future);
    polling.recv_timeout(PATIENCE).unwrap();
    handle.abort();
    (handle, release, probe)
}

#[test]
fn a_future_aborted_during_its_poll_finishes_it_and_is_dropped_at_the_next() {
    let pool = pool(2);
    let (handle, release, probe) = abort_during_poll(&pool, false);
    // The poll is blocked inside the future: it cannot have been dropped.
    assert_eq!(probe.drops.load(Ordering::SeqCst), 0);
    assert!(!handle.is_finished());
    release.send(()).unwrap();
    assert!(eventually(PATIENCE, || handle.is_finished()));
    assert_eq!(probe.polls.load(Ordering::SeqCst), 1);
    assert_eq!(probe.drops.load(Ordering::SeqCst), 1);
    assert!(is_aborted(&join(handle)));
}

#[test]
fn a_future_aborted_during_a_poll_that_completes_keeps_its_result() {
    let pool = pool(2);
    let (handle, release, probe) = abort_during_poll(&pool, true);
    release.send(()).unwrap();
    assert_eq!(join(handle).unwrap(), 9);
    assert_eq!(probe.polls.load(Ordering::SeqCst), 1);
    assert_eq!(probe.drops.load(Ordering::SeqCst), 1);
}

#[test]
fn aborted_tasks_then_a_dropped_pool_neither_hang_nor_leak() {
    let pool = pool(1);
    let release = hold_worker(&pool);
    let (ran, drops) = (counter(), counter());
    let closures: Vec<_> = (0..16)
        .map(|_| {
            let token = DropCounter(Arc::clone(&drops));
            let ran = Arc::clone(&ran);
            pool.spawn_with_handle(move || {
                let _token = token;
                ran.fetch_add(1, Ordering::SeqCst);
            })
        })
        .collect();
    let (future, aborted_probe) = stuck();
    let aborted_future = pool.spawn_future(future);
    let (future, kept_probe) = stuck();
    let kept_future = pool.spawn_future(future);
    for handle in &closures {
        handle.abort();
    }
    // Still queued behind the held worker, never polled: dropped at the poll.
    aborted_future.abort();
    release.send(()).unwrap();
    let (dropped, on_drop) = mpsc::channel();
    let dropper = thread::spawn(move || {
        drop(pool);
        dropped.send(()).unwrap();
    });
    on_drop
        .recv_timeout(PATIENCE)
        .expect("dropping the pool hung");
    dropper.join().unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(drops.load(Ordering::SeqCst), 16);
    for handle in closures {
        assert!(handle.is_finished());
        assert!(is_aborted(&join(handle)));
    }
    assert_eq!(aborted_probe.polls.load(Ordering::SeqCst), 0);
    assert_eq!(aborted_probe.drops.load(Ordering::SeqCst), 1);
    assert!(is_aborted(&join(aborted_future)));
    // Not aborted: dropped by the pool, with the other payload.
    assert_eq!(kept_probe.polls.load(Ordering::SeqCst), 1);
    assert_eq!(kept_probe.drops.load(Ordering::SeqCst), 1);
    let payload = join(kept_future).unwrap_err();
    assert!(!payload.is::<Aborted>());
    assert!(payload.downcast_ref::<&str>().is_some());
}

/// Records whether its closure ran, or was dropped without running.
struct Outcome {
    ran: Arc<AtomicUsize>,
    dropped_unrun: Arc<AtomicUsize>,
    used: bool,
}

impl Outcome {
    fn run(mut self) {
        self.used = true;
        self.ran.fetch_add(1, Ordering::SeqCst);
    }
}

impl Drop for Outcome {
    fn drop(&mut self) {
        if !self.used {
            self.dropped_unrun.fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[test]
fn an_abort_racing_the_start_either_runs_or_drops_the_closure_once() {
    let pool = pool(64);
    let (to_aborter, aborting) = mpsc::channel::<(JoinHandle<()>, usize)>();
    let (aborted, back) = mpsc::channel();
    let aborter = thread::spawn(move || {
        for (handle, index) in aborting {
            handle.abort();
            aborted.send((handle, index)).unwrap();
        }
    });
    const TASKS: usize = 4_000;
    let counters: Vec<_> = (0..TASKS).map(|_| (counter(), counter())).collect();
    for (index, (ran, dropped_unrun)) in counters.iter().enumerate() {
        let outcome = Outcome {
            ran: Arc::clone(ran),
            dropped_unrun: Arc::clone(dropped_unrun),
            used: false,
        };
        let handle = pool.spawn_with_handle(move || outcome.run());
        to_aborter.send((handle, index)).unwrap();
    }
    drop(to_aborter);
    let (mut runs, mut drops) = (0, 0);
    for (handle, index) in back.iter() {
        let result = join(handle);
        let (ran, dropped_unrun) = &counters[index];
        let (ran, dropped_unrun) = (
            ran.load(Ordering::SeqCst),
            dropped_unrun.load(Ordering::SeqCst),
        );
        assert_eq!(
            ran + dropped_unrun,
            1,
            "task {index}: ran {ran}, dropped {dropped_unrun}"
        );
        if ran == 1 {
            assert!(result.is_ok());
            runs += 1;
        } else {
            assert!(is_aborted(&result));
            drops += 1;
        }
    }
    aborter.join().unwrap();
    assert_eq!(runs + drops, TASKS);
}

/// Panics when dropped.
struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        std::panic::panic_any("bomb");
    }
}

#[test]
fn a_panicking_drop_of_an_aborted_closure_is_contained() {
    let handled = counter();
    let pool = {
        let handled = Arc::clone(&handled);
        Pool::builder()
            .workers(1)
            .panic_handler(move |_| {
                handled.fetch_add(1, Ordering::SeqCst);
            })
            .build()
            .unwrap()
    };
    let release = hold_worker(&pool);
    let bomb = Bomb;
    let handle = pool.spawn_with_handle(move || {
        let _bomb = bomb;
    });
    handle.abort();
    release.send(()).unwrap();
    // The destructor's panic is the handle's result, as any panic would be.
    let payload = join(handle).unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"bomb"));
    // The worker survived it and nothing reached the panic handler.
    assert_eq!(join(pool.spawn_with_handle(|| 1)).unwrap(), 1);
    assert_eq!(handled.load(Ordering::SeqCst), 0);
}

/// A never-ready future that panics when dropped, keeping its waker in `slot`.
struct StuckBomb {
    slot: Arc<Mutex<Option<Waker>>>,
    _bomb: Bomb,
}

impl Future for StuckBomb {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        *self.slot.lock().unwrap() = Some(cx.waker().clone());
        Poll::Pending
    }
}

#[test]
fn a_panicking_drop_of_an_aborted_future_is_contained() {
    let pool = pool(1);
    let slot = Arc::new(Mutex::new(None));
    let handle = pool.spawn_future(StuckBomb {
        slot: Arc::clone(&slot),
        _bomb: Bomb,
    });
    assert!(eventually(PATIENCE, || slot.lock().unwrap().is_some()));
    handle.abort();
    let payload = join(handle).unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"bomb"));
    assert_eq!(join(pool.spawn_future(async { 2 })).unwrap(), 2);
}

#[test]
fn join_deadline_and_await_report_the_abort() {
    let pool = pool(1);
    let release = hold_worker(&pool);
    let joined = pool.spawn_with_handle(|| 1);
    let awaited = pool.spawn_with_handle(|| 2);
    joined.abort();
    awaited.abort();
    release.send(()).unwrap();
    match joined.join_deadline(Instant::now() + PATIENCE) {
        Ok(result) => assert!(is_aborted(&result)),
        Err(_) => panic!("the aborted task did not finish"),
    }
    assert!(is_aborted(&weft::block_on(awaited)));

    // A future awaiting the handle of an aborted future, on the pool.
    let (future, probe) = stuck();
    let inner = pool.spawn_future(future);
    assert!(eventually(PATIENCE, || probe
        .slot
        .lock()
        .unwrap()
        .is_some()));
    inner.abort();
    let outer =
        pool.spawn_future(async move { inner.await.map_err(|payload| payload.is::<Aborted>()) });
    assert_eq!(join(outer).unwrap(), Err(true));
    assert_eq!(probe.drops.load(Ordering::SeqCst), 1);
}
