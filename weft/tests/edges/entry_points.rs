//! Every entry point at every moment of a pool's life.

use super::*;

// --- more: every entry point x every lifecycle moment ------------------------------------

/// Calls weft from its destructor: `weft::spawn` (reported through `ran`) and
/// a spawn through `handle` (its outcome sent back).
pub(super) struct SpawnsOnDrop {
    pub(super) handle: weft::Handle,
    pub(super) ran: mpsc::Sender<&'static str>,
    pub(super) outcome: mpsc::Sender<bool>,
}

impl Drop for SpawnsOnDrop {
    fn drop(&mut self) {
        let ran = self.ran.clone();
        weft::spawn(move || ran.send("weft::spawn").unwrap());
        let ran = self.ran.clone();
        let accepted = self
            .handle
            .spawn(move || ran.send("handle.spawn").unwrap())
            .is_ok();
        assert_eq!(weft::join(|| 1, || 2), (1, 2));
        self.outcome.send(accepted).unwrap();
    }
}

/// `Handle` after the drop: spawns fail and give the task back (from any
/// thread, pinned or not), and a refused task whose captures spawn on drop
/// does not wedge anything.
pub(super) fn handle_after_drop() {
    let pool = Pool::builder().workers(2).build().unwrap();
    let handle = pool.handle();
    assert!(!handle.is_closed());
    assert_eq!(handle.workers(), 2);
    let (sender, receiver) = mpsc::channel();
    let early = sender.clone();
    handle.spawn(move || early.send("before").unwrap()).unwrap();
    assert_eq!(
        recv(&receiver, "a task spawned through the handle"),
        "before"
    );
    drop(pool);
    assert!(handle.is_closed());

    let late = sender.clone();
    let refused = handle
        .spawn(move || late.send("refused").unwrap())
        .unwrap_err();
    (refused.into_inner())();
    assert_eq!(recv(&receiver, "the refused task, run by hand"), "refused");
    let late = sender.clone();
    let refused = handle
        .spawn_on(1, move || late.send("pinned").unwrap())
        .unwrap_err();
    (refused.into_inner())();
    assert_eq!(recv(&receiver, "the refused pinned task"), "pinned");
    let other = handle.clone();
    assert!(thread::spawn(move || other.spawn(|| ()).is_err())
        .join()
        .unwrap());

    // A refused task whose captures call weft when they are dropped.
    let (ran_tx, ran_rx) = mpsc::channel();
    let (outcome_tx, outcome_rx) = mpsc::channel();
    let guard = SpawnsOnDrop {
        handle: handle.clone(),
        ran: ran_tx,
        outcome: outcome_tx,
    };
    let refused = handle
        .spawn(move || {
            let _guard = guard;
        })
        .unwrap_err();
    drop(refused);
    assert!(!recv(&outcome_rx, "the refused task's destructor"));
    assert_eq!(
        recv(&ran_rx, "weft::spawn from a destructor"),
        "weft::spawn"
    );
}

/// Tasks that spawn more tasks (chains, trees, futures) while the pool is
/// dropped: the drop runs all of them, each once.
pub(super) fn drop_drains_spawn_chains() {
    fn chain(left: usize, ran: Arc<AtomicUsize>) {
        ran.fetch_add(1, SeqCst);
        if left > 0 {
            weft::spawn(move || chain(left - 1, ran));
        }
    }
    fn tree(depth: u32, ran: Arc<AtomicUsize>) {
        ran.fetch_add(1, SeqCst);
        if depth > 0 {
            let other = Arc::clone(&ran);
            weft::spawn(move || tree(depth - 1, other));
            weft::spawn(move || tree(depth - 1, ran));
        }
    }
    fn future_chain(
        left: usize,
        ran: Arc<AtomicUsize>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
        Box::pin(async move {
            ran.fetch_add(1, SeqCst);
            weft::yield_async().await;
            if left > 0 {
                drop(weft::spawn_future(future_chain(left - 1, ran)));
            }
        })
    }
    for round in 0..20 {
        let pool = Pool::builder().workers(2 + round % 7).build().unwrap();
        let ran = counter();
        for _ in 0..4 {
            let ran = Arc::clone(&ran);
            pool.spawn(move || chain(499, ran));
        }
        {
            let ran = Arc::clone(&ran);
            pool.spawn(move || tree(9, ran)); // 1023 tasks
        }
        for _ in 0..2 {
            drop(pool.spawn_future(future_chain(99, Arc::clone(&ran))));
        }
        drop(pool);
        assert_eq!(
            ran.load(SeqCst),
            4 * 500 + 1023 + 2 * 100,
            "round {round}: the drop returned before the spawned work ran"
        );
    }
}

/// A future parked when its pool is dropped, whose captures call weft in
/// their destructor (`weft::spawn`, a spawn through the dead pool's handle,
/// `weft::join`): the drop returns, the destructor gets through, and a spawn
/// that was accepted runs.
pub(super) fn parked_future_destructor_uses_weft() {
    for _ in 0..10 {
        let pool = Pool::builder().workers(2).build().unwrap();
        let (ran_tx, ran_rx) = mpsc::channel();
        let (outcome_tx, outcome_rx) = mpsc::channel();
        let guard = SpawnsOnDrop {
            handle: pool.handle(),
            ran: ran_tx,
            outcome: outcome_tx,
        };
        let never = Event::new(EventMode::Manual);
        let parked = {
            let never = never.clone();
            pool.spawn_future(async move {
                let _guard = guard;
                never.wait_async().await;
            })
        };
        thread::sleep(Duration::from_millis(2));
        drop(pool);
        assert!(forget_panic(join_within(
            parked,
            "a future parked at the drop"
        )));
        let accepted = recv(&outcome_rx, "the parked future's destructor");
        let mut ran = vec![recv(&ran_rx, "weft::spawn from a destructor")];
        if accepted {
            ran.push(recv(&ran_rx, "a spawn accepted during the drop"));
        }
        ran.sort_unstable();
        let mut expected = vec!["weft::spawn"];
        if accepted {
            expected.push("handle.spawn");
            expected.sort_unstable();
        }
        assert_eq!(ran, expected);
        drop(never);
    }
}

/// Panics in its destructor: plainly, or with a bomb.
pub(super) struct PanicsOnDrop {
    pub(super) bomb: bool,
}

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        if thread::panicking() {
            return;
        }
        if self.bomb {
            throw_bomb();
        } else {
            panic!("a future's destructor panicked");
        }
    }
}

/// Parked futures whose destructors panic when the pool drops them: no
/// abort, the drop returns (or hands a panic on), and every parked future's
/// handle completes with `Err`.
pub(super) fn future_destructor_panics() {
    for round in 0..5 {
        let pool = Pool::builder().workers(2).build().unwrap();
        let never = Event::new(EventMode::Manual);
        let handles: Vec<JoinHandle<()>> = (0..8)
            .map(|i| {
                let never = never.clone();
                let guard = (i % 4 == 1).then(|| PanicsOnDrop { bomb: i % 8 == 5 });
                pool.spawn_future(async move {
                    let _guard = guard;
                    never.wait_async().await;
                })
            })
            .collect();
        thread::sleep(Duration::from_millis(2));
        let dropped = panic::catch_unwind(AssertUnwindSafe(move || drop(pool)));
        forget_panic(dropped);
        for (i, handle) in handles.into_iter().enumerate() {
            assert!(
                forget_panic(join_within(handle, "a parked future of a dropped pool")),
                "round {round}: future {i} reported Ok"
            );
        }
        drop(never);
    }
    let pool = Pool::builder().workers(2).build().unwrap();
    pool_still_works(&pool);
}

/// `on_thread_start` panics on worker 0: either the build hands the panic on
/// and leaves no thread behind, or the pool it returns works in full
/// (including tasks pinned to worker 0) and drops.
pub(super) fn panicking_start_hook() {
    for bomb in [false, true] {
        let before = thread_count();
        let built = panic::catch_unwind(move || {
            Pool::builder()
                .workers(4)
                .on_thread_start(move |i| {
                    if i == 0 {
                        if bomb {
                            throw_bomb();
                        }
                        panic!("on_thread_start panicked");
                    }
                })
                .build()
        });
        match built {
            Err(payload) => {
                std::mem::forget(payload);
                assert!(eventually(Duration::from_secs(5), || thread_count() <= before));
            }
            Ok(Err(error)) => panic!("build failed: {error}"),
            Ok(Ok(pool)) => {
                pool_still_works(&pool);
                assert_eq!(pool.broadcast(|i| i), vec![0, 1, 2, 3]);
                let wg = WaitGroup::with_count(64);
                for _ in 0..64 {
                    let wg = wg.clone();
                    pool.spawn(move || {
                        wg.done();
                    });
                }
                assert!(wg.wait_timeout(WAIT));
                drop(pool);
            }
        }
    }
}

/// `on_thread_stop` panics on half the workers: no abort, the drop returns
/// (or hands a panic on), and the other workers' stop hooks still ran.
pub(super) fn panicking_stop_hook() {
    for bomb in [false, true] {
        let stopped = counter();
        let pool = {
            let stopped = Arc::clone(&stopped);
            Pool::builder()
                .workers(4)
                .on_thread_stop(move |i| {
                    if i % 2 == 0 {
                        if bomb {
                            throw_bomb();
                        }
                        panic!("on_thread_stop panicked");
                    }
                    stopped.fetch_add(1, SeqCst);
                })
                .build()
                .unwrap()
        };
        pool_still_works(&pool);
        let dropped = panic::catch_unwind(AssertUnwindSafe(move || drop(pool)));
        forget_panic(dropped);
        assert_eq!(stopped.load(SeqCst), 2, "the other workers' stop hooks ran");
    }
    let pool = Pool::builder().workers(2).build().unwrap();
    pool_still_works(&pool);
}

/// `builder` with start and stop hooks that each spawn a task counting
/// itself in `start_ran` or `stop_ran`.
pub(super) fn hooks_that_spawn(
    builder: weft::Builder,
    start_ran: &Arc<AtomicUsize>,
    stop_ran: &Arc<AtomicUsize>,
) -> weft::Builder {
    let (start_ran, stop_ran) = (Arc::clone(start_ran), Arc::clone(stop_ran));
    builder
        .on_thread_start(move |_| {
            let ran = Arc::clone(&start_ran);
            weft::spawn(move || {
                ran.fetch_add(1, SeqCst);
            });
        })
        .on_thread_stop(move |_| {
            let ran = Arc::clone(&stop_ran);
            weft::spawn(move || {
                ran.fetch_add(1, SeqCst);
            });
        })
}

/// Pools of 64-256 workers built and dropped in a loop, with tasks spawned
/// from both hooks and from outside: every task runs.
pub(super) fn huge_pools_with_hook_tasks() {
    for workers in [64, 128, 256, 100, 256] {
        let from_start = counter();
        let from_stop = counter();
        let from_outside = counter();
        let pool = hooks_that_spawn(Pool::builder().workers(workers), &from_start, &from_stop)
            .build()
            .unwrap();
        for _ in 0..workers {
            let ran = Arc::clone(&from_outside);
            pool.spawn(move || {
                ran.fetch_add(1, SeqCst);
            });
        }
        drop(pool);
        assert_eq!(
            from_outside.load(SeqCst),
            workers,
            "{workers} workers: outside"
        );
        assert_eq!(
            from_start.load(SeqCst),
            workers,
            "{workers} workers: start hooks"
        );
        assert_eq!(
            from_stop.load(SeqCst),
            workers,
            "{workers} workers: stop hooks"
        );
    }
}

/// Tasks inside `weft::blocking`, spawning from there, while the pool is
/// dropped: the drop waits for them and runs what they spawned.
pub(super) fn blocking_races_drop() {
    let started = Instant::now();
    let mut round = 0;
    while round < 120 && (round < 24 || started.elapsed() < Duration::from_secs(3)) {
        let pool = Pool::builder()
            .workers(1 + round % 3)
            .max_blocking(round % 4)
            .build()
            .unwrap();
        let entered = counter();
        let spawned_ran = counter();
        for _ in 0..8 {
            let entered = Arc::clone(&entered);
            let spawned_ran = Arc::clone(&spawned_ran);
            pool.spawn(move || {
                weft::blocking(move || {
                    entered.fetch_add(1, SeqCst);
                    thread::sleep(Duration::from_millis(1));
                    weft::spawn(move || {
                        spawned_ran.fetch_add(1, SeqCst);
                    });
                });
            });
        }
        if round % 2 == 0 {
            thread::sleep(Duration::from_millis(1));
        }
        drop(pool);
        assert_eq!(entered.load(SeqCst), 8, "round {round}: blocking tasks");
        assert_eq!(
            spawned_ran.load(SeqCst),
            8,
            "round {round}: tasks spawned inside blocking"
        );
        round += 1;
    }
}

/// Pools built and dropped inside each other's tasks: an inner pool built on
/// an outer worker feeds the outer pool through a handle and is dropped
/// there; a pool is dropped from a worker of another pool.
pub(super) fn nested_pools_dropped_in_tasks() {
    for round in 0..10 {
        let outer = Pool::builder().workers(2).build().unwrap();
        let outer_handle = outer.handle();
        let ran = counter();
        {
            let ran = Arc::clone(&ran);
            outer.install(move || {
                let inner = Pool::builder().workers(3).build().unwrap();
                for _ in 0..16 {
                    let outer_handle = outer_handle.clone();
                    let ran = Arc::clone(&ran);
                    inner.spawn(move || {
                        let accepted = outer_handle.spawn(move || {
                            ran.fetch_add(1, SeqCst);
                        });
                        assert!(accepted.is_ok(), "the outer pool is alive");
                    });
                }
                drop(inner);
            });
        }
        drop(outer);
        assert_eq!(ran.load(SeqCst), 16, "round {round}: nested spawns");

        // A pool dropped on a worker of another, while it has work queued.
        let victim = Pool::builder().workers(2).build().unwrap();
        let victim_ran = counter();
        for _ in 0..32 {
            let victim_ran = Arc::clone(&victim_ran);
            victim.spawn(move || {
                victim_ran.fetch_add(1, SeqCst);
            });
        }
        let host = Pool::builder().workers(2).build().unwrap();
        host.install(move || drop(victim));
        assert_eq!(victim_ran.load(SeqCst), 32);
        // And the host dropped from a worker of a third pool, via a task.
        let third = Pool::builder().workers(1).build().unwrap();
        let (sender, receiver) = mpsc::channel();
        third.spawn(move || {
            drop(host);
            sender.send(()).unwrap();
        });
        recv(&receiver, "a pool dropped in a task of another");
        drop(third);
    }
}

/// The scope's own closure panics (plainly, or with a bomb) while its tasks
/// still run: the scope waits for them before the panic reaches the caller.
pub(super) fn scope_op_panics_with_tasks_running() {
    let pool = Pool::builder().workers(3).build().unwrap();
    for round in 0..10 {
        let done = AtomicUsize::new(0);
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.scope(|s| {
                for _ in 0..8 {
                    s.spawn(|_| {
                        thread::sleep(Duration::from_millis(2));
                        done.fetch_add(1, SeqCst);
                    });
                }
                if round % 2 == 0 {
                    throw_bomb();
                }
                panic!("the scope's closure panicked");
            })
        }));
        assert!(forget_panic(result));
        assert_eq!(
            done.load(SeqCst),
            8,
            "round {round}: the scope returned early"
        );
    }
    pool_still_works(&pool);
}

/// Futures queued on tickets when the pool is dropped, the first ticket still
/// held by the main thread and released after: no hang, no abort, every
/// handle completes.
pub(super) fn ticket_futures_on_pool_drop() {
    for _ in 0..10 {
        let pool = Pool::builder().workers(2).build().unwrap();
        let queue = TicketQueue::new();
        let first = queue.take();
        let handles: Vec<JoinHandle<()>> = (0..8)
            .map(|_| {
                let ticket = queue.take();
                pool.spawn_future(async move {
                    ticket.wait_async().await;
                    ticket.done();
                })
            })
            .collect();
        thread::sleep(Duration::from_millis(2));
        drop(pool);
        first.done();
        for handle in handles {
            forget_panic(join_within(handle, "a ticket future of a dropped pool"));
        }
        let last = queue.take();
        assert!(
            eventually(Duration::from_secs(5), || last.is_called()),
            "the queue moved on past the dropped futures"
        );
    }
}

/// Futures that hand their wakers out and stay pending: the wakers outlive
/// the pool and are woken, cloned and dropped on other threads afterwards.
pub(super) fn wakers_outlive_the_pool() {
    for round in 0..10 {
        let pool = Pool::builder().workers(2 + round % 3).build().unwrap();
        let saved: Arc<Mutex<Vec<Waker>>> = Arc::new(Mutex::new(Vec::new()));
        let handles: Vec<JoinHandle<()>> = (0..8)
            .map(|_| {
                let saved = Arc::clone(&saved);
                pool.spawn_future(std::future::poll_fn(move |cx| {
                    let mut saved = saved.lock().unwrap();
                    if saved.len() < 64 {
                        saved.push(cx.waker().clone());
                    }
                    Poll::Pending
                }))
            })
            .collect();
        assert!(eventually(WAIT, || saved.lock().unwrap().len() >= 8));
        // Some wakes land just before the drop.
        for waker in saved.lock().unwrap().iter().take(4) {
            waker.wake_by_ref();
        }
        drop(pool);
        for (i, handle) in handles.into_iter().enumerate() {
            assert!(
                forget_panic(join_within(handle, "a pending future after the drop")),
                "round {round}: future {i} reported Ok"
            );
        }
        let wakers = std::mem::take(&mut *saved.lock().unwrap());
        let threads: Vec<_> = wakers
            .chunks(8)
            .map(|chunk| {
                let chunk = chunk.to_vec();
                thread::spawn(move || {
                    for waker in &chunk {
                        waker.wake_by_ref();
                        // A clone that outlives this iteration, woken later.
                        let copy = waker.clone();
                        thread::yield_now();
                        copy.wake();
                    }
                    for waker in chunk {
                        waker.wake();
                    }
                })
            })
            .collect();
        drop(wakers);
        for waker_thread in threads {
            waker_thread.join().expect("waking after the drop");
        }
    }
}

/// Wakes a stored waker when dropped: its own task's, or a neighbour's.
pub(super) struct WakeOnDrop {
    pub(super) slot: Arc<Mutex<Option<Waker>>>,
}

impl Drop for WakeOnDrop {
    fn drop(&mut self) {
        let waker = self.slot.lock().unwrap().take();
        if let Some(waker) = waker {
            waker.wake_by_ref();
            waker.wake();
        }
    }
}

/// Parked futures whose destructors wake themselves, or the next future in
/// line, while the pool drops them: the drop returns and every handle
/// completes with `Err`.
pub(super) fn futures_wake_in_their_destructors() {
    for round in 0..10 {
        let pool = Pool::builder().workers(2).build().unwrap();
        let slots: Vec<Arc<Mutex<Option<Waker>>>> =
            (0..8).map(|_| Arc::new(Mutex::new(None))).collect();
        let polled = counter();
        let handles: Vec<JoinHandle<()>> = (0..8)
            .map(|i| {
                let mine = Arc::clone(&slots[i]);
                // Even futures wake themselves; odd ones wake their neighbour.
                let woken = if i % 2 == 0 {
                    Arc::clone(&slots[i])
                } else {
                    Arc::clone(&slots[(i + 1) % 8])
                };
                let polled = Arc::clone(&polled);
                pool.spawn_future(async move {
                    let _guard = WakeOnDrop { slot: woken };
                    let mut first = true;
                    std::future::poll_fn(move |cx| {
                        *mine.lock().unwrap() = Some(cx.waker().clone());
                        if first {
                            first = false;
                            polled.fetch_add(1, SeqCst);
                        }
                        Poll::<()>::Pending
                    })
                    .await;
                })
            })
            .collect();
        assert!(eventually(WAIT, || polled.load(SeqCst) == 8));
        drop(pool);
        for (i, handle) in handles.into_iter().enumerate() {
            assert!(
                forget_panic(join_within(
                    handle,
                    "a future that woke itself as it was dropped"
                )),
                "round {round}: future {i} reported Ok"
            );
        }
    }
}

/// Handles of futures parked in a pool that is dropped, awaited by a future
/// on another pool and by `weft::block_on` on a plain thread: both get the
/// `Err` report instead of waiting forever.
pub(super) fn join_handles_awaited_across_a_drop() {
    for _ in 0..10 {
        let doomed = Pool::builder().workers(2).build().unwrap();
        let survivor = Pool::builder().workers(2).build().unwrap();
        let never = Event::new(EventMode::Manual);
        let awaited = doomed.spawn_future(never.wait_async());
        let blocked_on = doomed.spawn_future(never.wait_async());
        let awaiting = survivor.spawn_future(async move { awaited.await.is_err() });
        let blocker = thread::spawn(move || weft::block_on(blocked_on).is_err());
        thread::sleep(Duration::from_millis(2));
        drop(doomed);
        assert!(
            join_within(awaiting, "a future awaiting a handle of a dropped pool").unwrap(),
            "the awaited handle reported Ok"
        );
        assert!(
            blocker.join().unwrap(),
            "block_on of the handle reported Ok"
        );
        pool_still_works(&survivor);
        drop(never);
    }
}

/// `build_global` from several threads at once, racing the first use of the
/// global pool from others: at most one build wins, the rest are refused,
/// and every use returns.
pub(super) fn build_global_races_first_use() {
    const THREADS: usize = 8;
    let barrier = Arc::new(Barrier::new(THREADS));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                barrier.wait();
                if t % 2 == 0 {
                    Some(Pool::builder().workers(2).build_global())
                } else {
                    assert_eq!(weft::join(|| 1, || 2), (1, 2));
                    let (sender, receiver) = mpsc::channel();
                    weft::spawn(move || sender.send(()).unwrap());
                    recv(&receiver, "a task on the global pool");
                    None
                }
            })
        })
        .collect();
    let mut built = 0;
    for racer in threads {
        match racer.join().expect("racer thread") {
            Some(Ok(())) => built += 1,
            Some(Err(error)) => assert!(
                matches!(error, weft::BuildError::GlobalAlreadyInitialized),
                "unexpected build error {error:?}"
            ),
            None => {}
        }
    }
    assert!(built <= 1, "{built} global pools were built");
    assert!(matches!(
        Pool::builder().workers(2).build_global(),
        Err(weft::BuildError::GlobalAlreadyInitialized)
    ));
    let mut hit = false;
    weft::scope(|s| s.spawn(|_| hit = true));
    assert!(hit);
}

/// Workers still inside slow start hooks (or already in slow stop hooks)
/// when the pool is dropped: every queued task runs, pinned ones included.
pub(super) fn slow_hooks_then_drop() {
    for round in 0..5 {
        let workers = 4;
        let ran = counter();
        let pinned = counter();
        let pool = Pool::builder()
            .workers(workers)
            .on_thread_start(|_| thread::sleep(Duration::from_millis(15)))
            .on_thread_stop(|_| thread::sleep(Duration::from_millis(5)))
            .build()
            .unwrap();
        for _ in 0..100 {
            let ran = Arc::clone(&ran);
            pool.spawn(move || {
                ran.fetch_add(1, SeqCst);
            });
        }
        for index in 0..workers {
            let pinned = Arc::clone(&pinned);
            pool.spawn_on(index, move || {
                assert_eq!(weft::current_worker_index(), Some(index));
                pinned.fetch_add(1, SeqCst);
            });
        }
        drop(pool);
        assert_eq!(ran.load(SeqCst), 100, "round {round}: tasks");
        assert_eq!(pinned.load(SeqCst), workers, "round {round}: pinned tasks");
    }
}

/// A panic handler that spawns a task for every panic, while the pool is
/// being dropped: the drop runs all of them.
pub(super) fn panic_handler_spawns_during_drop() {
    for round in 0..10 {
        let handled = counter();
        let ran = counter();
        let pool = {
            let handled = Arc::clone(&handled);
            let ran = Arc::clone(&ran);
            Pool::builder()
                .workers(1 + round % 3)
                .panic_handler(move |payload| {
                    drop(payload);
                    handled.fetch_add(1, SeqCst);
                    let ran = Arc::clone(&ran);
                    weft::spawn(move || {
                        ran.fetch_add(1, SeqCst);
                    });
                })
                .build()
                .unwrap()
        };
        for _ in 0..50 {
            pool.spawn(|| panic!("a task panicked"));
        }
        drop(pool);
        assert_eq!(handled.load(SeqCst), 50, "round {round}: panics handled");
        assert_eq!(
            ran.load(SeqCst),
            50,
            "round {round}: tasks from the handler"
        );
    }
}

/// The only worker blocks in `weft::blocking`; a task run meanwhile by its
/// spare takes the last `Pool` out of a mutex and drops it before it
/// releases the worker: the drop does not wait for itself, the blocked task
/// finishes, and the pool's threads go away.
pub(super) fn pool_dropped_by_a_task_on_a_spare() {
    let baseline = thread_count();
    for round in 0..5 {
        let slot = Arc::new(Mutex::new(Some(
            Pool::builder().workers(1).build().unwrap(),
        )));
        let (entered_tx, entered_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let blocked = slot
            .lock()
            .unwrap()
            .as_ref()
            .unwrap()
            .spawn_with_handle(move || {
                weft::blocking(move || {
                    entered_tx.send(()).unwrap();
                    release_rx.recv_timeout(WAIT).expect("released");
                });
                "blocked task done"
            });
        recv(&entered_rx, "the worker entered blocking");
        let (dropped_tx, dropped_rx) = mpsc::channel();
        {
            let guard = slot.lock().unwrap();
            let slot = Arc::clone(&slot);
            guard.as_ref().unwrap().spawn(move || {
                let pool = slot.lock().unwrap().take();
                drop(pool);
                dropped_tx.send(()).unwrap();
                release_tx.send(()).unwrap();
            });
        }
        recv(&dropped_rx, "the drop on the spare returned");
        assert_eq!(
            join_within(blocked, "the blocked task").unwrap(),
            "blocked task done"
        );
        assert!(
            eventually(Duration::from_secs(5), || thread_count() <= baseline),
            "round {round}: {} threads of the dropped pool are left",
            thread_count().saturating_sub(baseline)
        );
    }
}

/// `on_thread_stop` spawns through the pool's own `Handle`: refused, or run.
pub(super) fn stop_hook_spawns_through_own_handle() {
    for round in 0..20 {
        let cell: Arc<OnceLock<weft::Handle>> = Arc::new(OnceLock::new());
        let accepted = counter();
        let ran = counter();
        let pool = {
            let cell = Arc::clone(&cell);
            let accepted = Arc::clone(&accepted);
            let ran = Arc::clone(&ran);
            Pool::builder()
                .workers(3)
                .on_thread_stop(move |_| {
                    let Some(handle) = cell.get() else { return };
                    let ran = Arc::clone(&ran);
                    let outcome = handle.spawn(move || {
                        ran.fetch_add(1, SeqCst);
                    });
                    if outcome.is_ok() {
                        accepted.fetch_add(1, SeqCst);
                    }
                })
                .build()
                .unwrap()
        };
        assert!(cell.set(pool.handle()).is_ok());
        pool.spawn(|| ());
        drop(pool);
        assert_eq!(
            ran.load(SeqCst),
            accepted.load(SeqCst),
            "round {round}: a spawn accepted during the drop never ran"
        );
    }
}

/// The last `Arc<Pool>` is dropped by one of the pool's own tasks: every
/// task runs and the detached workers still exit.
pub(super) fn last_pool_reference_dropped_by_own_tasks() {
    let baseline = thread_count();
    for round in 0..20 {
        let pool = Arc::new(Pool::builder().workers(2 + round % 3).build().unwrap());
        let ran = counter();
        for _ in 0..16 {
            let mine = Arc::clone(&pool);
            let ran = Arc::clone(&ran);
            pool.spawn(move || {
                thread::sleep(Duration::from_micros(200));
                ran.fetch_add(1, SeqCst);
                drop(mine);
            });
        }
        drop(pool);
        assert!(
            eventually(WAIT, || ran.load(SeqCst) == 16),
            "round {round}: {} of 16 tasks ran",
            ran.load(SeqCst)
        );
    }
    assert!(
        eventually(Duration::from_secs(5), || thread_count() <= baseline),
        "{} threads of pools dropped by their own tasks are left",
        thread_count().saturating_sub(baseline)
    );
}

/// A gate: the closure blocks (up to [`WAIT`]) until the sender sends once
/// per caller.
pub(super) fn gate() -> (mpsc::Sender<()>, impl Fn() + Clone + Send + 'static) {
    let (open, gated) = mpsc::channel::<()>();
    let gated = Arc::new(Mutex::new(gated));
    let wait = move || {
        let _ = gated.lock().unwrap().recv_timeout(WAIT);
    };
    (open, wait)
}

/// The only worker blocks in `weft::blocking`; the task its spare runs
/// meanwhile uses every way into the pool (`install`, `join`, `scope`,
/// `spawn_with_handle` + `join`, `block_on`, the free functions): each
/// returns while the worker is still blocked.
pub(super) fn pool_entry_points_on_a_spare() {
    let pool = Arc::new(Pool::builder().workers(1).build().unwrap());
    for round in 0..5 {
        let (entered_tx, entered_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let timed_out = Arc::new(AtomicBool::new(false));
        let blocked = {
            let timed_out = Arc::clone(&timed_out);
            pool.spawn_with_handle(move || {
                weft::blocking(move || {
                    entered_tx.send(()).unwrap();
                    // Longer than the main thread waits for the report, so
                    // that a deadlock on the spare is not undone by this.
                    if release_rx.recv_timeout(Duration::from_secs(45)).is_err() {
                        timed_out.store(true, SeqCst);
                    }
                });
            })
        };
        recv(&entered_rx, "the worker entered blocking");
        let (report_tx, report_rx) = mpsc::channel();
        {
            let pool_in_task = Arc::clone(&pool);
            pool.spawn(move || {
                let pool = pool_in_task;
                let mut report = Vec::new();
                report.push(("install", pool.install(|| 5) == 5));
                report.push(("join", pool.join(|| 1, || 2) == (1, 2)));
                let mut hit = false;
                pool.scope(|s| s.spawn(|_| hit = true));
                report.push(("scope", hit));
                report.push(("weft::join", weft::join(|| 3, || 4) == (3, 4)));
                let mut hit = false;
                weft::scope(|s| s.spawn(|_| hit = true));
                report.push(("weft::scope", hit));
                let handle = pool.spawn_with_handle(|| 6);
                report.push((
                    "spawn_with_handle",
                    matches!(handle.join_timeout(WAIT), Ok(Ok(6))),
                ));
                let handle = weft::spawn_future(async { 7 });
                report.push(("spawn_future", weft::block_on(handle).ok() == Some(7)));
                report.push(("Pool::block_on", pool.block_on(async { 8 }) == 8));
                let wg = WaitGroup::with_count(4);
                for _ in 0..4 {
                    let wg = wg.clone();
                    weft::spawn(move || {
                        wg.done();
                    });
                }
                report.push(("WaitGroup", wg.wait_timeout(WAIT)));
                report_tx.send(report).unwrap();
                release_tx.send(()).unwrap();
            });
        }
        let report = recv(
            &report_rx,
            "the spare's task (a wait on the spare deadlocked)",
        );
        assert!(
            !timed_out.load(SeqCst),
            "round {round}: the worker was released by its timeout"
        );
        for (what, ok) in report {
            assert!(ok, "round {round}: {what} on a spare gave a wrong result");
        }
        join_within(blocked, "the blocked task").unwrap();
    }
    pool_still_works(&pool);
}

/// Values (not panics) that panic when dropped: the outputs of detached
/// handles, a `join` half whose other half panicked, `broadcast` results
/// next to a panicking worker. No abort, no hang, and the pool goes on.
pub(super) fn bomb_valued_outputs() {
    let pool = Pool::builder().workers(2).build().unwrap();
    for _ in 0..5 {
        let (open, wait) = gate();
        let first = wait.clone();
        drop(pool.spawn_with_handle(move || {
            first();
            Bomb
        }));
        drop(pool.spawn_future(async move {
            wait();
            Bomb
        }));
        open.send(()).unwrap();
        open.send(()).unwrap();

        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.join(|| Bomb, || panic!("the other half panicked"))
        }));
        forget_panic(result);
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.join(|| panic!("the other half panicked"), || Bomb)
        }));
        forget_panic(result);
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.broadcast(|i| {
                if i == 0 {
                    panic!("worker 0 panicked");
                }
                Bomb
            })
        }));
        forget_panic(result);
        std::mem::forget(pool.install(|| Bomb));
    }
    pool_still_works(&pool);
    drop(pool);
}

/// Settings the OS or the standard library refuse: names with a NUL byte,
/// stacks no system can give,
/// and searcher bounds at both extremes. A refused build returns an error or
/// hands a panic to its caller, with no thread left behind; an accepted one
/// works.
pub(super) fn hostile_builder_settings() {
    type Make = fn() -> Result<Pool, weft::BuildError>;
    let refused: [(&str, Make); 3] = [
        ("NUL in every name", || {
            Pool::builder()
                .workers(4)
                .thread_name(|i| format!("w\0{i}"))
                .build()
        }),
        ("usize::MAX stack", || {
            Pool::builder().workers(2).stack_size(usize::MAX).build()
        }),
        ("64 TiB stack", || {
            Pool::builder().workers(2).stack_size(1 << 46).build()
        }),
    ];
    let baseline = thread_count();
    for (what, make) in refused {
        match panic::catch_unwind(make) {
            Ok(Ok(pool)) => {
                pool_still_works(&pool);
                drop(pool);
            }
            Ok(Err(_)) => {}
            Err(payload) => drop(payload),
        }
        assert!(
            eventually(Duration::from_secs(5), || thread_count() <= baseline),
            "{what}: {} threads left behind",
            thread_count().saturating_sub(baseline)
        );
    }
    for searchers in [0, 1, usize::MAX] {
        let pool = Pool::builder()
            .workers(3)
            .max_spinning(searchers)
            .build()
            .unwrap();
        pool_still_works(&pool);
        let wg = WaitGroup::with_count(100);
        for _ in 0..100 {
            let wg = wg.clone();
            pool.spawn(move || {
                wg.done();
            });
        }
        assert!(
            wg.wait_timeout(WAIT),
            "max_spinning({searchers}): tasks lost"
        );
        drop(pool);
    }
}

/// `thread_name` gives names with a NUL byte from worker 3 on, so that the
/// standard library's spawn panics after three workers started: the panic
/// (or an error) reaches the caller, the started workers run their stop
/// hooks and are joined.
pub(super) fn nul_thread_name_mid_build() {
    build_fails_naming_a_worker(6, 3, false, |i| {
        if i >= 3 {
            format!("w\0{i}")
        } else {
            format!("w{i}")
        }
    });
}

/// Sends what `weft::join` gave it from its destructor.
pub(super) struct ReportsDrop {
    pub(super) dropped: mpsc::Sender<(i32, i32)>,
}

impl Drop for ReportsDrop {
    fn drop(&mut self) {
        let joined = weft::join(|| 1, || 2);
        let _ = weft::spawn_future(async {}).join_timeout(WAIT);
        let _ = self.dropped.send(joined);
    }
}

/// Futures no one can ever wake: one that drops its waker (dropped at once,
/// its handle reports `Err`), and one that awaits its own `JoinHandle` (a
/// cycle only the pool's drop can break). Their destructors use weft.
pub(super) fn futures_nobody_can_wake() {
    for _ in 0..10 {
        let pool = Pool::builder().workers(2).build().unwrap();

        let (dropped_tx, dropped_rx) = mpsc::channel();
        let guard = ReportsDrop {
            dropped: dropped_tx.clone(),
        };
        let forgotten = pool.spawn_future(async move {
            let _guard = guard;
            std::future::poll_fn(|_| Poll::<()>::Pending).await;
        });
        assert!(forget_panic(join_within(
            forgotten,
            "a future whose waker was dropped"
        )));
        assert_eq!(recv(&dropped_rx, "its destructor"), (1, 2));

        let (handle_tx, handle_rx) = mpsc::channel::<JoinHandle<()>>();
        let guard = ReportsDrop {
            dropped: dropped_tx,
        };
        let own = pool.spawn_future(async move {
            let _guard = guard;
            let me = handle_rx.recv().expect("its own handle");
            let _ = me.await;
        });
        handle_tx.send(own).unwrap();
        thread::sleep(Duration::from_millis(2));
        drop(pool);
        assert_eq!(
            recv(&dropped_rx, "a future awaiting its own handle, at the drop"),
            (1, 2)
        );
    }
}
