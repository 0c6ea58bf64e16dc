//! Panics whose payloads panic on drop, and a panic handler that panics.

use super::*;

// --- 4. panics whose payload panics on drop ---------------------------------

/// A fire-and-forget task panics with a payload that panics on drop, on a
/// one-worker pool: the worker survives (unpinned and pinned tasks still run),
/// the drop returns, and no thread is left believing it is a worker.
pub(super) fn bomb_in_task(dropping_handler: bool) {
    let handled = counter();
    let mut builder = Pool::builder().workers(1);
    if dropping_handler {
        let handled = Arc::clone(&handled);
        builder = builder.panic_handler(move |payload| {
            handled.fetch_add(1, SeqCst);
            drop(payload);
        });
    }
    let pool = builder.build().unwrap();
    for _ in 0..3 {
        pool.spawn(throw_bomb);
        pool.spawn_on(0, throw_bomb);
    }
    pool_still_works(&pool);
    if dropping_handler {
        assert_eq!(handled.load(SeqCst), 6, "the handler saw every panic");
    }
    drop(pool);
    assert_eq!(weft::current_worker_index(), None);
    assert_eq!(
        thread::spawn(weft::current_worker_index).join().unwrap(),
        None
    );
}

/// Two scope tasks panic with bombs: the scope hands a panic to its caller
/// instead of hanging, and the pool goes on.
pub(super) fn bomb_in_scope() {
    for workers in [1, 2, 4] {
        let pool = Pool::builder().workers(workers).build().unwrap();
        for _ in 0..5 {
            let result = panic::catch_unwind(AssertUnwindSafe(|| {
                pool.scope(|s| {
                    s.spawn(|_| throw_bomb());
                    s.spawn(|_| throw_bomb());
                    s.spawn(|_| ());
                });
            }));
            assert!(
                forget_panic(result),
                "the scope swallowed its tasks' panics"
            );
        }
        // Outside any pool, through the global one.
        let result = panic::catch_unwind(|| {
            weft::scope(|s| {
                s.spawn(|_| throw_bomb());
                s.spawn(|_| throw_bomb());
            });
        });
        assert!(forget_panic(result));
        pool_still_works(&pool);
        drop(pool);
    }
}

/// Both halves of a join panic with bombs: the join hands a panic on.
pub(super) fn bomb_in_join() {
    let pool = Pool::builder().workers(2).build().unwrap();
    for _ in 0..5 {
        let result = panic::catch_unwind(AssertUnwindSafe(|| pool.join(throw_bomb, throw_bomb)));
        assert!(forget_panic(result));
        let result = panic::catch_unwind(AssertUnwindSafe(|| pool.join(throw_bomb, || 1)));
        assert!(forget_panic(result));
        let result = panic::catch_unwind(AssertUnwindSafe(|| pool.join(|| 1, throw_bomb)));
        assert!(forget_panic(result));
        // Nested, on a worker.
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| weft::join(throw_bomb, throw_bomb))
        }));
        assert!(forget_panic(result));
    }
    let result = panic::catch_unwind(|| weft::join(throw_bomb, throw_bomb));
    assert!(forget_panic(result));
    // The second half taken by another worker (the first waits for it to
    // start and never joins again), both halves throwing bombs: the stolen
    // half's payload is dropped safely. Outermost, the half is taken from
    // the local queue; one join deeper it sits on the join stack (the
    // outer half holds the local queue) and is forced off it.
    for nested in [false, true] {
        for _ in 0..5 {
            let started = AtomicBool::new(false);
            let first = || {
                assert!(eventually(WAIT, || started.load(SeqCst)), "b never started");
                throw_bomb()
            };
            let second = || {
                started.store(true, SeqCst);
                throw_bomb()
            };
            let result = panic::catch_unwind(AssertUnwindSafe(|| {
                if nested {
                    pool.join(|| weft::join(first, second), || ());
                } else {
                    pool.join(first, second);
                }
            }));
            assert!(forget_panic(result));
        }
    }
    pool_still_works(&pool);
    drop(pool);
}

/// Bombs through `spawn_with_handle`, `spawn_future` and `install`: each
/// handle reports the panic, and the pool goes on.
pub(super) fn bomb_through_join_handles() {
    let pool = Pool::builder().workers(2).build().unwrap();
    for _ in 0..5 {
        let handle = pool.spawn_with_handle(throw_bomb);
        assert!(forget_panic(join_within(
            handle,
            "a task that threw a bomb"
        )));
        let handle = pool.spawn_future(async { throw_bomb() });
        assert!(forget_panic(join_within(
            handle,
            "a future that threw a bomb"
        )));
        let result = panic::catch_unwind(AssertUnwindSafe(|| pool.install(throw_bomb)));
        assert!(forget_panic(result));
        // Detached handles, dropped before their tasks finish: nobody ever
        // takes the bomb out, so the pool's side drops it.
        let (gate, gated) = mpsc::channel::<()>();
        let gated = Arc::new(Mutex::new(gated));
        let wait = move || {
            let _ = gated.lock().unwrap().recv_timeout(WAIT);
        };
        let first = wait.clone();
        drop(pool.spawn_with_handle(move || {
            first();
            throw_bomb();
        }));
        drop(pool.spawn_future(async move {
            wait();
            throw_bomb();
        }));
        gate.send(()).unwrap();
        gate.send(()).unwrap();
    }
    pool_still_works(&pool);
    drop(pool);
}

/// A panic handler that itself panics (plainly, and with a bomb): the worker
/// of a one-worker pool survives and the drop returns.
pub(super) fn panic_handler_panics() {
    for bomb in [false, true] {
        let pool = Pool::builder()
            .workers(1)
            .panic_handler(move |payload| {
                std::mem::forget(payload);
                if bomb {
                    throw_bomb();
                } else {
                    panic!("the panic handler panicked");
                }
            })
            .build()
            .unwrap();
        for _ in 0..3 {
            pool.spawn(|| panic!("a task panicked"));
            pool.spawn_on(0, throw_bomb);
        }
        pool_still_works(&pool);
        drop(pool);
    }
}
