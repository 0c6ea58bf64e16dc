//! Futures on the pool: `spawn_future`, `block_on`, `yield_async`, the wake
//! state machine, dropping pending futures with the pool, the async waits of
//! the primitives, and real async code from the `futures` crate.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::Duration;

use futures::channel::{mpsc as async_mpsc, oneshot};
use futures::{FutureExt, SinkExt, StreamExt};
use weft::{Event, EventMode, Pool, TicketQueue, WaitGroup};

fn pool(workers: usize) -> Pool {
    Pool::builder().workers(workers).build().unwrap()
}

/// Runs `test` on a plain thread and fails (instead of hanging) if it does not
/// finish in a generous time: a lost wake-up shows as a failure, not a hang.
fn guarded<T: Send + 'static>(test: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    let runner = thread::spawn(move || sender.send(test()).unwrap());
    match receiver.recv_timeout(Duration::from_secs(60)) {
        Ok(value) => {
            runner.join().unwrap();
            value
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            std::panic::resume_unwind(runner.join().unwrap_err())
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("test hung (a lost wake-up?)"),
    }
}

/// Counts its drops.
struct DropCounter(Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A future that is ready once `flag` is set, leaving its waker in `slot`
/// for whoever sets the flag.
struct Flagged {
    flag: Arc<AtomicBool>,
    slot: Arc<Mutex<Option<Waker>>>,
}

impl Future for Flagged {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        *self.slot.lock().unwrap() = Some(cx.waker().clone());
        if self.flag.load(Ordering::SeqCst) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

#[test]
fn spawn_future_returns_its_output() {
    guarded(|| {
        let pool = pool(2);
        let handle = pool.spawn_future(async { 6 * 7 });
        assert_eq!(handle.join().unwrap(), 42);
        let handles: Vec<_> = (0..100)
            .map(|i| pool.spawn_future(async move { i }))
            .collect();
        let sum: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
        assert_eq!(sum, 4950);
    });
}

#[test]
fn free_spawn_future_uses_the_current_pool_or_the_global_one() {
    guarded(|| {
        let pool = pool(2);
        // Spawned from a worker: onto that worker's pool.
        let inner = pool
            .spawn_with_handle(|| weft::spawn_future(async { weft::current_worker_index() }))
            .join()
            .unwrap();
        assert!(inner.join().unwrap().is_some());
        let global = weft::spawn_future(async { weft::current_worker_index().is_some() });
        assert!(global.join().unwrap());
    });
}

#[test]
fn a_panicking_future_is_contained_and_its_handle_reports_err() {
    guarded(|| {
        let pool = pool(2);
        let handle = pool.spawn_future(async {
            weft::yield_async().await;
            panic!("boom in a future");
        });
        let payload = handle.join().unwrap_err();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom in a future"));
        // The pool goes on.
        assert_eq!(pool.spawn_future(async { 1 }).join().unwrap(), 1);
    });
}

#[test]
fn join_handles_are_awaited_inside_futures() {
    guarded(|| {
        let pool = pool(2);
        let closure = pool.spawn_with_handle(|| 40);
        let future = pool.spawn_future(async {
            weft::yield_async().await;
            2
        });
        let sum = pool.spawn_future(async move { closure.await.unwrap() + future.await.unwrap() });
        assert_eq!(sum.join().unwrap(), 42);
        let failing = pool.spawn_future(async { panic!("inner") });
        let outer = pool.spawn_future(async move { failing.await.is_err() });
        assert!(outer.join().unwrap());
    });
}

#[test]
fn is_finished_and_detached_handles() {
    guarded(|| {
        let pool = pool(2);
        let flag = Arc::new(AtomicBool::new(false));
        let slot = Arc::new(Mutex::new(None));
        let handle = pool.spawn_future(Flagged {
            flag: Arc::clone(&flag),
            slot: Arc::clone(&slot),
        });
        assert!(!handle.is_finished());
        // Dropping a handle detaches: the task still runs.
        let (sender, receiver) = mpsc::channel();
        drop(pool.spawn_future(async move {
            weft::yield_async().await;
            sender.send("ran").unwrap();
        }));
        assert_eq!(receiver.recv().unwrap(), "ran");
        while slot.lock().unwrap().is_none() {
            thread::yield_now();
        }
        flag.store(true, Ordering::SeqCst);
        slot.lock().unwrap().take().unwrap().wake();
        let mut handle = handle;
        weft::block_on(&mut handle).unwrap();
        assert!(handle.is_finished());
    });
}

#[test]
fn block_on_from_a_plain_thread() {
    guarded(|| {
        let pool = pool(2);
        let handle = pool.spawn_future(async { "from the pool" });
        assert_eq!(weft::block_on(handle).unwrap(), "from the pool");
        // A future that borrows from the stack and is woken by another thread.
        let local = String::from("borrowed");
        let (sender, receiver) = oneshot::channel();
        thread::spawn(move || sender.send(5).unwrap());
        let len = weft::block_on(async { receiver.await.unwrap() + local.len() });
        assert_eq!(len, 13);
    });
}

#[test]
fn pool_block_on_runs_on_a_worker_and_spawns_into_that_pool() {
    guarded(|| {
        let pool = pool(2);
        let (on_worker, spawned_on_worker) = pool.block_on(async {
            let inner = weft::spawn_future(async { weft::current_worker_index().is_some() });
            (weft::current_worker_index().is_some(), inner.await.unwrap())
        });
        assert!(on_worker);
        assert!(spawned_on_worker);
    });
}

#[test]
fn block_on_on_the_only_worker_runs_other_tasks_while_pending() {
    guarded(|| {
        let pool = pool(1);
        let outer = pool.spawn_with_handle(|| {
            // Queued behind us, on the only worker: only runs if block_on helps.
            let inner = weft::spawn_future(async { 7 });
            weft::block_on(inner).unwrap()
        });
        assert_eq!(outer.join().unwrap(), 7);
    });
}

#[test]
fn yield_async_lets_other_tasks_run() {
    guarded(|| {
        let pool = pool(1);
        let flag = Arc::new(AtomicBool::new(false));
        let setter = Arc::clone(&flag);
        let spinner = pool.spawn_future(async move {
            // Queued on the only worker; it runs only while we yield.
            weft::spawn(move || setter.store(true, Ordering::SeqCst));
            let mut yields = 0;
            while !flag.load(Ordering::SeqCst) {
                weft::yield_async().await;
                yields += 1;
            }
            yields
        });
        assert!(spinner.join().unwrap() >= 1);
    });
}

/// Two futures that wake each other run back to back on one worker (a woken
/// future runs right after the poll that woke it), but not for ever: a task
/// queued meanwhile still gets the worker.
#[test]
fn futures_waking_each_other_do_not_starve_queued_tasks() {
    guarded(|| {
        let pool = pool(1);
        let stop = Arc::new(AtomicBool::new(false));
        let (ping, pong) = (
            weft::Event::new(weft::EventMode::Auto),
            weft::Event::new(weft::EventMode::Auto),
        );
        let player = |mine: weft::Event, theirs: weft::Event, stop: Arc<AtomicBool>| async move {
            let mut passes = 0u64;
            while !stop.load(Ordering::SeqCst) {
                theirs.signal();
                mine.wait_async().await;
                passes += 1;
            }
            // Let the other player see the stop too.
            theirs.signal();
            passes
        };
        let a = pool.spawn_future(player(ping.clone(), pong.clone(), stop.clone()));
        let b = pool.spawn_future(player(pong, ping, stop.clone()));
        let setter = stop.clone();
        pool.spawn(move || setter.store(true, Ordering::SeqCst));
        let passes = a.join().unwrap() + b.join().unwrap();
        assert!(passes >= 1, "the players never ran");
    });
}

#[test]
fn a_future_woken_from_a_plain_thread_completes() {
    guarded(|| {
        let pool = pool(2);
        let flag = Arc::new(AtomicBool::new(false));
        let slot = Arc::new(Mutex::new(None::<Waker>));
        let handle = pool.spawn_future(Flagged {
            flag: Arc::clone(&flag),
            slot: Arc::clone(&slot),
        });
        let waker = thread::spawn(move || {
            while slot.lock().unwrap().is_none() {
                thread::yield_now();
            }
            flag.store(true, Ordering::SeqCst);
            slot.lock().unwrap().take().unwrap().wake();
        });
        handle.join().unwrap();
        waker.join().unwrap();
    });
}

/// On its first poll, has another thread wake it `wakes` times and waits for
/// those wakes before returning `Pending`; ready on its second poll.
struct WokenDuringPoll {
    polls: Arc<AtomicUsize>,
    wakes: usize,
}

impl Future for WokenDuringPoll {
    type Output = usize;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        let polls = self.polls.fetch_add(1, Ordering::SeqCst) + 1;
        if polls > 1 {
            return Poll::Ready(polls);
        }
        let waker = cx.waker().clone();
        let wakes = self.wakes;
        thread::spawn(move || {
            for _ in 0..wakes {
                waker.wake_by_ref();
            }
        })
        .join()
        .unwrap();
        Poll::Pending
    }
}

#[test]
fn a_wake_during_a_poll_polls_exactly_once_more() {
    guarded(|| {
        for wakes in [1, 2, 5] {
            let pool = pool(2);
            let polls = Arc::new(AtomicUsize::new(0));
            let handle = pool.spawn_future(WokenDuringPoll {
                polls: Arc::clone(&polls),
                wakes,
            });
            assert_eq!(handle.join().unwrap(), 2);
            // Every queued poll has run once the pool is dropped: a second
            // queued poll would show in the count.
            drop(pool);
            assert_eq!(polls.load(Ordering::SeqCst), 2, "{wakes} wakes");
        }
    });
}

#[test]
fn a_wake_while_scheduled_or_after_completion_does_nothing() {
    guarded(|| {
        let pool = pool(2);
        let polls = Arc::new(AtomicUsize::new(0));
        let slot = Arc::new(Mutex::new(None::<Waker>));
        let (counted, stored) = (Arc::clone(&polls), Arc::clone(&slot));
        let handle = pool.spawn_future(futures::future::poll_fn(move |cx| {
            *stored.lock().unwrap() = Some(cx.waker().clone());
            if counted.fetch_add(1, Ordering::SeqCst) == 0 {
                // Two wakes for one pending poll: queued once.
                cx.waker().wake_by_ref();
                cx.waker().wake_by_ref();
                Poll::Pending
            } else {
                Poll::Ready(())
            }
        }));
        handle.join().unwrap();
        // Waking a finished task queues nothing.
        slot.lock().unwrap().take().unwrap().wake();
        drop(pool);
        assert_eq!(polls.load(Ordering::SeqCst), 2);
    });
}

#[test]
fn dropping_the_pool_drops_pending_futures_and_runs_queued_ones() {
    guarded(|| {
        let pool = pool(2);
        let drops = Arc::new(AtomicUsize::new(0));
        // Owns both ends of a channel, so it holds its own waker: only the
        // pool's drop can drop it.
        let guard = DropCounter(Arc::clone(&drops));
        let (started, started_rx) = mpsc::channel();
        let cyclic = pool.spawn_future(async move {
            let _guard = guard;
            let (sender, receiver) = oneshot::channel::<()>();
            let _sender = sender;
            started.send(()).unwrap();
            let _ = receiver.await;
        });
        // Keeps no waker at all.
        let guard = DropCounter(Arc::clone(&drops));
        let forgotten = pool.spawn_future(async move {
            let _guard = guard;
            std::future::pending::<()>().await;
        });
        started_rx.recv().unwrap();
        // Queued work still runs when the pool is dropped.
        let ran = Arc::new(AtomicUsize::new(0));
        for _ in 0..50 {
            let ran = Arc::clone(&ran);
            drop(pool.spawn_future(async move {
                weft::yield_async().await;
                ran.fetch_add(1, Ordering::SeqCst);
            }));
        }
        drop(pool);
        assert_eq!(ran.load(Ordering::SeqCst), 50);
        assert_eq!(drops.load(Ordering::SeqCst), 2);
        assert!(cyclic.join().is_err());
        assert!(forgotten.join().is_err());
    });
}

#[test]
fn a_wake_after_the_pool_is_dropped_drops_the_future() {
    guarded(|| {
        let pool = pool(1);
        let drops = Arc::new(AtomicUsize::new(0));
        let guard = DropCounter(Arc::clone(&drops));
        let (sender, receiver) = oneshot::channel::<u32>();
        let (started, started_rx) = mpsc::channel();
        let handle = pool.spawn_future(async move {
            let _guard = guard;
            started.send(()).unwrap();
            receiver.await
        });
        started_rx.recv().unwrap();
        drop(pool);
        // Dropped by the pool's sweep already, or by this wake at the latest.
        let _ = sender.send(1);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        assert!(handle.join().is_err());
    });
}

#[test]
fn wait_group_wait_async() {
    guarded(|| {
        let pool = pool(1);
        let wg = WaitGroup::with_count(4);
        // More waiting futures than workers: a pending wait holds no worker.
        let waiting: Vec<_> = (0..4).map(|_| pool.spawn_future(wg.wait_async())).collect();
        for _ in 0..4 {
            let wg = wg.clone();
            pool.spawn(move || {
                wg.done();
            });
        }
        for handle in waiting {
            handle.join().unwrap();
        }
        // Ready at once when the count is zero.
        weft::block_on(wg.wait_async());
        // A dropped pending wait is withdrawn.
        let wg = WaitGroup::with_count(1);
        let mut wait = Box::pin(wg.wait_async());
        assert!(wait.as_mut().now_or_never().is_none());
        assert!(format!("{wg:?}").contains("waiters: 1"));
        drop(wait);
        assert!(format!("{wg:?}").contains("waiters: 0"));
    });
}

#[test]
fn event_wait_async_manual_and_auto() {
    guarded(|| {
        let pool = pool(1);
        let manual = Event::new(EventMode::Manual);
        let waiting: Vec<_> = (0..3)
            .map(|_| pool.spawn_future(manual.wait_async()))
            .collect();
        let signaller = manual.clone();
        pool.spawn(move || signaller.signal());
        for handle in waiting {
            handle.join().unwrap();
        }
        assert!(manual.is_signalled());

        let auto = Event::new(EventMode::Auto);
        let done = Arc::new(AtomicUsize::new(0));
        let waiting: Vec<_> = (0..3)
            .map(|_| {
                let (auto, done) = (auto.clone(), Arc::clone(&done));
                pool.spawn_future(async move {
                    auto.wait_async().await;
                    done.fetch_add(1, Ordering::SeqCst);
                })
            })
            .collect();
        for released in 1..=3 {
            // Each signal releases one wait (or stays set for the next one).
            // Signals are not counted, so the next comes once this one is used.
            auto.signal();
            while done.load(Ordering::SeqCst) < released {
                thread::yield_now();
            }
        }
        for handle in waiting {
            handle.join().unwrap();
        }
        assert_eq!(done.load(Ordering::SeqCst), 3);
        assert!(!auto.is_signalled());
    });
}

#[test]
fn an_auto_signal_handed_to_a_dropped_wait_is_passed_on() {
    guarded(|| {
        let auto = Event::new(EventMode::Auto);
        let mut first = Box::pin(auto.wait_async());
        let mut second = Box::pin(auto.wait_async());
        assert!(first.as_mut().now_or_never().is_none());
        assert!(second.as_mut().now_or_never().is_none());
        auto.signal(); // released to `first`, the oldest
        drop(first); // never saw it: it goes to `second`
        assert!(second.as_mut().now_or_never().is_some());
        assert!(!auto.is_signalled());

        let mut only = Box::pin(auto.wait_async());
        assert!(only.as_mut().now_or_never().is_none());
        auto.signal();
        drop(only); // no other wait: the event stays signalled
        assert!(auto.test());
    });
}

#[test]
fn ticket_wait_async_runs_in_ticket_order_on_one_worker() {
    guarded(|| {
        let pool = pool(1);
        let queue = TicketQueue::new();
        let order = Arc::new(Mutex::new(Vec::new()));
        let tickets: Vec<_> = (0..5).map(|_| queue.take()).collect();
        // Spawned in reverse: every wait but the last is on a later ticket
        // than one still to come, which a blocking wait on one worker could
        // not survive.
        let handles: Vec<_> = tickets
            .into_iter()
            .enumerate()
            .rev()
            .map(|(i, ticket)| {
                let order = Arc::clone(&order);
                pool.spawn_future(async move {
                    ticket.wait_async().await;
                    order.lock().unwrap().push(i);
                    ticket.done();
                })
            })
            .collect();
        for handle in handles {
            handle.join().unwrap();
        }
        assert_eq!(*order.lock().unwrap(), [0, 1, 2, 3, 4]);

        // A dropped wait is withdrawn and the ticket still works.
        let first = queue.take();
        let second = queue.take();
        let mut wait = Box::pin(second.wait_async());
        assert!(wait.as_mut().now_or_never().is_none());
        drop(wait);
        first.done();
        weft::block_on(second.wait_async());
    });
}

#[test]
fn futures_mpsc_between_spawned_futures() {
    guarded(|| {
        let pool = pool(2);
        let (mut sender, receiver) = async_mpsc::channel::<u32>(4);
        let producer = pool.spawn_future(async move {
            for i in 1..=100 {
                sender.send(i).await.unwrap();
            }
        });
        let consumer = pool.spawn_future(receiver.fold(0, |sum, i| async move { sum + i }));
        producer.join().unwrap();
        assert_eq!(consumer.join().unwrap(), 5050);
    });
}

#[test]
fn futures_oneshot_ping_pong() {
    guarded(|| {
        let pool = pool(2);
        let (ping_tx, mut ping_rx) = async_mpsc::unbounded::<oneshot::Sender<u32>>();
        let ponger = pool.spawn_future(async move {
            let mut served = 0;
            while let Some(reply) = ping_rx.next().await {
                served += 1;
                reply.send(served).unwrap();
            }
            served
        });
        let pinger = pool.spawn_future(async move {
            for i in 1..=50 {
                let (reply, answer) = oneshot::channel();
                ping_tx.unbounded_send(reply).unwrap();
                assert_eq!(answer.await.unwrap(), i);
            }
        });
        pinger.join().unwrap();
        assert_eq!(ponger.join().unwrap(), 50);
    });
}

#[test]
fn futures_join_and_select() {
    guarded(|| {
        let pool = pool(2);
        let joined = pool.spawn_future(async {
            let a = weft::spawn_future(async { 1 });
            let b = async {
                weft::yield_async().await;
                2
            };
            let (a, b) = futures::join!(a, b);
            a.unwrap() + b
        });
        assert_eq!(joined.join().unwrap(), 3);

        let (sender, receiver) = oneshot::channel::<&str>();
        let selected = pool.spawn_future(async move {
            let mut never = std::future::pending::<&str>().fuse();
            let mut message = receiver.fuse();
            futures::select! {
                _ = never => "never",
                m = message => m.unwrap(),
            }
        });
        thread::spawn(move || sender.send("selected").unwrap());
        assert_eq!(selected.join().unwrap(), "selected");
    });
}

/// A future that parks until `gate` is opened (storing its waker in `slot`),
/// then runs `then` once and completes.
struct Gate {
    open: Arc<AtomicBool>,
    slot: Arc<Mutex<Option<Waker>>>,
    then: Option<Box<dyn FnOnce() + Send>>,
}

impl Future for Gate {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.open.load(Ordering::SeqCst) {
            if let Some(then) = self.then.take() {
                then();
            }
            return Poll::Ready(());
        }
        *self.slot.lock().unwrap() = Some(cx.waker().clone());
        Poll::Pending
    }
}

fn open(open: &AtomicBool, slot: &Mutex<Option<Waker>>) {
    open.store(true, Ordering::SeqCst);
    if let Some(waker) = slot.lock().unwrap().take() {
        waker.wake();
    }
}

/// A poll run by `join` while it reclaims its second half fills the `next`
/// slot; the slot is flushed before the joining task goes on, so an idle
/// worker runs the woken future.
#[test]
fn next_slot_filled_in_join_reclaim_is_never_flushed() {
    let pool = weft::Pool::builder().workers(2).build().unwrap();
    let flag = Arc::new(AtomicBool::new(false));
    let (open2, slot2) = (Arc::new(AtomicBool::new(false)), Arc::new(Mutex::new(None)));
    let (open1, slot1) = (Arc::new(AtomicBool::new(false)), Arc::new(Mutex::new(None)));
    // F2: sets `flag` once woken.
    let f = flag.clone();
    let _h2 = pool.spawn_future(Gate {
        open: open2.clone(),
        slot: slot2.clone(),
        then: Some(Box::new(move || f.store(true, Ordering::SeqCst))),
    });
    // F1: once woken, wakes F2 from inside its poll (-> F2 goes to `next`).
    let (o2, s2) = (open2.clone(), slot2.clone());
    let _h1 = pool.spawn_future(Gate {
        open: open1.clone(),
        slot: slot1.clone(),
        then: Some(Box::new(move || open(&o2, &s2))),
    });
    while slot1.lock().unwrap().is_none() || slot2.lock().unwrap().is_none() {
        std::thread::sleep(Duration::from_millis(1));
    }
    // Occupy the other worker so it cannot steal `join`'s second job.
    let (started_tx, started_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    pool.spawn(move || {
        started_tx.send(()).unwrap();
        release_rx.recv().unwrap();
    });
    started_rx.recv().unwrap();
    let waited = pool.install(move || {
        // `a` wakes F1 from a closure: its poll goes to the local queue; the
        // reclaim loop pops and runs it (F2 -> `next`), then pops `b` back.
        weft::join(|| open(&open1, &slot1), || ());
        // Free the other worker: it goes idle while F2 sits in `next`.
        release_tx.send(()).unwrap();
        let start = std::time::Instant::now();
        while !flag.load(Ordering::SeqCst) && start.elapsed() < Duration::from_secs(2) {
            std::hint::spin_loop();
        }
        flag.load(Ordering::SeqCst)
    });
    assert!(
        waited,
        "F2 sat in the `next` slot for 2 s while a worker was idle"
    );
}

/// A poll that wakes a future and then joins, its second half running long
/// (it waits for that future): the woken future must not sit in the `next`
/// slot meanwhile, whether the wake came before the `join` or inside its
/// first half, with the half on the join stack (a nested `join`) or on the
/// local queue (an outermost one). The other worker is idle and runs it.
#[test]
fn a_future_woken_by_a_poll_that_joins_runs_while_the_join_goes_on() {
    guarded(|| {
        for case in ["wake, then join", "wake in a join", "wake in a nested join"] {
            let pool = pool(2);
            let flag = Arc::new(AtomicBool::new(false));
            let (open2, slot2) = (Arc::new(AtomicBool::new(false)), Arc::new(Mutex::new(None)));
            let f = flag.clone();
            let _woken = pool.spawn_future(Gate {
                open: open2.clone(),
                slot: slot2.clone(),
                then: Some(Box::new(move || f.store(true, Ordering::SeqCst))),
            });
            while slot2.lock().unwrap().is_none() {
                std::thread::sleep(Duration::from_millis(1));
            }
            let joining = pool.spawn_future(async move {
                let wake = || open(&open2, &slot2);
                let wait_for_woken = || {
                    let start = std::time::Instant::now();
                    while !flag.load(Ordering::SeqCst) && start.elapsed() < Duration::from_secs(2) {
                        std::hint::spin_loop();
                    }
                    flag.load(Ordering::SeqCst)
                };
                match case {
                    "wake, then join" => {
                        wake();
                        weft::join(|| (), wait_for_woken).1
                    }
                    "wake in a join" => weft::join(wake, wait_for_woken).1,
                    _ => weft::join(|| weft::join(wake, wait_for_woken).1, || ()).0,
                }
            });
            assert!(
                joining.join().unwrap(),
                "{case}: the woken future sat in the `next` slot for 2 s while a worker was idle"
            );
        }
    });
}

/// Many more workers than cores: futures whose wakers are cloned, handed to
/// closure tasks and plain threads, woken by value and by reference and
/// dropped in no set order, while some handles abort and others are
/// dropped unjoined. A spawned future's task is one allocation shared by
/// its handle and its wakers (future/spawn.rs), so this checks that every
/// future still ends once: each is dropped exactly once, every joined
/// handle finishes (`Ok` when its gate opened before anything stopped it,
/// `Err` otherwise), and every reference is given back (the witness's
/// count returns to one once the pool is gone).
#[test]
fn wakers_scattered_across_many_workers_end_every_future_once() {
    guarded(|| {
        for (workers, futures) in [(64, 2_000), (256, 600)] {
            let witness = Arc::new(());
            let drops = Arc::new(AtomicUsize::new(0));
            let pool = pool(workers);
            let (mut handles, mut stranded) = (Vec::new(), Vec::new());
            for i in 0..futures {
                let flag = Arc::new(AtomicBool::new(false));
                let slot = Arc::new(Mutex::new(None::<Waker>));
                let counter = DropCounter(Arc::clone(&drops));
                let captured = Arc::clone(&witness);
                let future = Flagged {
                    flag: Arc::clone(&flag),
                    slot: Arc::clone(&slot),
                };
                let handle = pool.spawn_future(async move {
                    let _kept = (counter, captured);
                    future.await;
                    i
                });
                // Who opens the gate, and how the waker travels there.
                let open = move || {
                    flag.store(true, Ordering::SeqCst);
                    let waker = slot.lock().unwrap().take();
                    if let Some(waker) = waker {
                        let twin = waker.clone();
                        if i % 2 == 0 {
                            twin.wake_by_ref();
                            waker.wake();
                        } else {
                            waker.wake_by_ref();
                            drop(waker);
                            twin.wake();
                        }
                    }
                };
                match i % 5 {
                    0 => pool.spawn(open),
                    1 => drop(thread::spawn(open)),
                    2 => open(),
                    // Never opened: only an abort or the pool's drop ends it.
                    _ => drop(open),
                }
                if i % 7 == 3 {
                    handle.abort();
                }
                if i % 3 == 0 {
                    drop(handle);
                } else if i % 5 < 3 || i % 7 == 3 {
                    handles.push((i, handle));
                } else {
                    // Its waker sits in a slot the future itself holds: only
                    // the pool's drop can end it.
                    stranded.push(handle);
                }
            }
            for (i, handle) in handles {
                match handle.join() {
                    Ok(value) => assert_eq!(value, i),
                    Err(payload) => assert!(
                        i % 7 == 3 && payload.is::<weft::Aborted>(),
                        "future {i} failed"
                    ),
                }
            }
            drop(pool);
            for handle in stranded {
                assert!(handle.join().is_err());
            }
            assert_eq!(drops.load(Ordering::SeqCst), futures, "{workers} workers");
            assert_eq!(Arc::strong_count(&witness), 1, "{workers} workers");
        }
    });
}
