//! The entry points rayon's drop-in needed, raced against the rest.

use super::*;

// ---------------------------------------------------------------------------
// The entry points rayon's drop-in needed: a shutdown that does not wait, a
// spawn handler that borrows, a pool made global after it was built.

/// `shutdown_background` while tasks wait suspended on a gate, some throw a
/// [`Bomb`], and a thread spawns through a handle: it returns at once, and
/// after the gate opens every accepted task runs once, every started
/// thread runs its stop hook, and spawns after it are refused.
pub(super) fn shutdown_background_races() {
    for round in 0..20 {
        let workers = 1 + round % 4;
        let started = counter();
        let stopped = counter();
        let pool = Pool::builder()
            .workers(workers)
            .on_thread_start({
                let started = Arc::clone(&started);
                move |_| bump(&started)
            })
            .on_thread_stop({
                let stopped = Arc::clone(&stopped);
                move |_| bump(&stopped)
            })
            .panic_handler(std::mem::forget)
            .build()
            .unwrap();
        let gate = Event::new(EventMode::Manual);
        let ran = counter();
        let accepted = counter();
        for i in 0..48 {
            let (gate, ran) = (gate.clone(), Arc::clone(&ran));
            accepted.fetch_add(1, SeqCst);
            pool.spawn(move || {
                gate.wait();
                ran.fetch_add(1, SeqCst);
                if i % 8 == 0 {
                    throw_bomb();
                }
            });
        }
        let handle = pool.handle();
        let spawner = {
            let (gate, ran, accepted) = (gate.clone(), Arc::clone(&ran), Arc::clone(&accepted));
            thread::spawn(move || {
                let mut refused = false;
                for _ in 0..64 {
                    let (gate, ran) = (gate.clone(), Arc::clone(&ran));
                    let spawned = handle.spawn(move || {
                        gate.wait();
                        ran.fetch_add(1, SeqCst);
                    });
                    match spawned {
                        Ok(()) => {
                            assert!(!refused, "a spawn accepted after one was refused");
                            accepted.fetch_add(1, SeqCst);
                        }
                        Err(_) => refused = true,
                    }
                    thread::yield_now();
                }
            })
        };
        pool.shutdown_background();
        spawner.join().unwrap();
        gate.signal();
        assert!(
            eventually(WAIT, || ran.load(SeqCst) == accepted.load(SeqCst)),
            "round {round}: {} of {} accepted tasks ran",
            ran.load(SeqCst),
            accepted.load(SeqCst)
        );
        assert!(
            eventually(WAIT, || stopped.load(SeqCst) == started.load(SeqCst)),
            "round {round}: {} of {} threads ran their stop hook",
            stopped.load(SeqCst),
            started.load(SeqCst)
        );
    }
}

#[derive(Clone, Copy, Debug)]
pub(super) enum HandlerFailure {
    Error,
    Panic,
    Dropped,
}

/// `build_with_spawn_handler` with a handler that borrows the caller's
/// list and fails at one worker (an error, a panic, a `ThreadBuilder`
/// dropped unrun): the build reports it (the panic goes on to the caller),
/// and every thread the handler had started returns from `run`.
pub(super) fn borrowing_spawn_handler_fails_midway() {
    use HandlerFailure::{Dropped, Error, Panic};
    for failure in [Error, Panic, Dropped] {
        for fail_at in 0..4 {
            let mut threads = Vec::new();
            let built = panic::catch_unwind(AssertUnwindSafe(|| {
                Pool::builder()
                    .workers(4)
                    .build_with_spawn_handler(|thread| {
                        if thread.index() == fail_at {
                            match failure {
                                Error => return Err(std::io::Error::other("refused by the test")),
                                Panic => panic!("spawn handler panics at {fail_at}"),
                                Dropped => return Ok(()),
                            }
                        }
                        threads.push(thread::spawn(move || thread.run()));
                        Ok(())
                    })
            }));
            match (failure, built) {
                (Panic, Err(payload)) => drop(payload),
                (Error | Dropped, Ok(Err(weft::BuildError::ThreadSpawn { index, .. }))) => {
                    assert_eq!(index, fail_at, "{failure:?}");
                }
                (failure, Err(_)) => panic!("{failure:?} at {fail_at}: the build panicked"),
                (failure, Ok(Err(error))) => panic!("{failure:?} at {fail_at}: {error:?}"),
                (failure, Ok(Ok(_))) => panic!("{failure:?} at {fail_at}: the build succeeded"),
            }
            assert_eq!(threads.len(), fail_at, "{failure:?} at {fail_at}");
            for thread in threads {
                thread.join().expect("a started worker's thread");
            }
        }
    }
}

/// Threads race to make a built pool global and to use the global pool
/// through free functions: at most one `into_global` wins, every loser
/// gets its pool back whole and usable, and the free functions all work.
pub(super) fn into_global_races_first_use() {
    const THREADS: usize = 8;
    let barrier = Arc::new(Barrier::new(THREADS));
    let racers: Vec<_> = (0..THREADS)
        .map(|t| {
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                let pool = (t % 2 == 0).then(|| Pool::builder().workers(3).build().unwrap());
                barrier.wait();
                match pool {
                    Some(pool) => match pool.into_global() {
                        Ok(()) => true,
                        Err(pool) => {
                            assert_eq!(pool.workers(), 3);
                            runs_on(&pool, "a pool into_global handed back");
                            false
                        }
                    },
                    None => {
                        assert_eq!(weft::join(|| 1, || 2), (1, 2));
                        let (sender, receiver) = mpsc::channel();
                        weft::spawn(move || sender.send(()).unwrap());
                        recv(&receiver, "a task on the global pool");
                        false
                    }
                }
            })
        })
        .collect();
    let won = racers
        .into_iter()
        .map(|racer| racer.join().expect("racer thread"))
        .filter(|&won| won)
        .count();
    assert!(won <= 1, "{won} pools were made global");
    let spare = Pool::builder().workers(1).build().unwrap();
    assert!(
        spare.into_global().is_err(),
        "the global pool exists by now"
    );
    let mut hit = false;
    weft::scope(|s| s.spawn(|_| hit = true));
    assert!(hit);
}

/// Waits that can neither suspend (a cap of 4 suspended tasks) nor help
/// deeper (256 KiB fiber stacks, which nested helping fills) block their
/// threads, while the pool drops: start hooks spawn more waiting tasks, a
/// thread spawns through a handle, another opens the gate, and some tasks
/// throw a [`Bomb`] with no panic handler. The drop returns, and every
/// accepted task and every task the hooks spawned ran once.
pub(super) fn stackless_waits_race_the_drop() {
    for round in 0..12 {
        let workers = 1 + round % 3;
        let gate = Event::new(EventMode::Manual);
        let ran = counter();
        let accepted = counter();
        let pool = Pool::builder()
            .workers(workers)
            .max_suspended(4)
            .stack_size(256 << 10)
            .on_thread_start({
                let (gate, ran, accepted) = (gate.clone(), Arc::clone(&ran), Arc::clone(&accepted));
                move |_| {
                    for _ in 0..16 {
                        let (gate, ran) = (gate.clone(), Arc::clone(&ran));
                        accepted.fetch_add(1, SeqCst);
                        weft::spawn(move || {
                            gate.wait();
                            ran.fetch_add(1, SeqCst);
                        });
                    }
                }
            })
            .build()
            .unwrap();
        for i in 0..400 {
            let (gate, ran) = (gate.clone(), Arc::clone(&ran));
            accepted.fetch_add(1, SeqCst);
            pool.spawn(move || {
                gate.wait();
                ran.fetch_add(1, SeqCst);
                if i % 97 == 0 {
                    throw_bomb();
                }
            });
        }
        let handle = pool.handle();
        let spawner = {
            let (gate, ran, accepted) = (gate.clone(), Arc::clone(&ran), Arc::clone(&accepted));
            thread::spawn(move || {
                for _ in 0..64 {
                    let (gate, ran) = (gate.clone(), Arc::clone(&ran));
                    let spawned = handle.spawn(move || {
                        gate.wait();
                        ran.fetch_add(1, SeqCst);
                    });
                    if spawned.is_ok() {
                        accepted.fetch_add(1, SeqCst);
                    }
                    thread::yield_now();
                }
            })
        };
        let opener = after(Duration::from_millis(30), move || gate.signal());
        drop(pool);
        spawner.join().unwrap();
        opener.join().unwrap();
        assert_eq!(ran.load(SeqCst), accepted.load(SeqCst), "round {round}");
    }
}
