//! Limits of time and depth: a long spin does not hold up a drop, deep `Event::any` chains, extreme durations.

use super::*;

// --- 5. a long spin does not block drop --------------------------------------

pub(super) fn long_spin_does_not_block_drop() {
    let builders = [
        Pool::builder().workers(1).spin(Duration::from_secs(3600)),
        Pool::builder()
            .workers(2)
            .max_spinning(2)
            .spin(Duration::MAX),
        Pool::builder()
            .workers(16)
            .max_spinning(16)
            .spin(Duration::MAX),
    ];
    for builder in builders {
        let started = Instant::now();
        let pool = builder.build().unwrap();
        runs_on(&pool, "a task on a spinning pool");
        assert_eq!(pool.install(|| 6 * 7), 42);
        pool.spawn(|| ());
        drop(pool);
        let elapsed = started.elapsed();
        assert!(
            elapsed < Duration::from_secs(10),
            "a pool with a long spin took {elapsed:?} to drop"
        );
    }
}

// --- 6. deep recursion ---------------------------------------------------------

/// A chain of `depth` `Event::any` events over one first event and one job
/// each: returns the first, the last, and the jobs.
pub(super) fn any_chain(depth: usize) -> (Event, Event, Vec<Event>) {
    let first = Event::new(EventMode::Manual);
    let mut acc = first.clone();
    let mut jobs = Vec::with_capacity(depth);
    for _ in 0..depth {
        let job = Event::new(EventMode::Manual);
        acc = Event::any(EventMode::Manual, &[acc, job.clone()]);
        jobs.push(job);
    }
    (first, acc, jobs)
}

pub(super) const SMALL_STACK: usize = 256 * 1024;

/// Signalling the root of a 20,000-deep `Event::any` chain, from a worker with
/// a small stack and from plain threads, reaches the last event without
/// overflowing any stack; so does dropping the chain there.
pub(super) fn deep_any_chain_signal() {
    const DEPTH: usize = 20_000;
    let pool = Pool::builder()
        .workers(2)
        .stack_size(SMALL_STACK)
        .build()
        .unwrap();

    // The root, from a worker; the chain is dropped there too.
    let (first, last, jobs) = any_chain(DEPTH);
    let reached = pool.install(move || {
        first.signal();
        let reached = last.is_signalled();
        drop((last, first, jobs));
        reached
    });
    assert!(
        reached,
        "a signal from a worker did not reach the end of the chain"
    );

    // A job near the bottom, from a worker.
    let (first, last, jobs) = any_chain(DEPTH);
    pool.install(|| jobs[0].signal());
    assert!(last.is_signalled());
    drop((first, last, jobs));

    // The root, from the test thread.
    let (first, last, jobs) = any_chain(DEPTH);
    first.signal();
    assert!(last.is_signalled());
    drop((first, last, jobs));

    // The root, from a plain thread with a small stack.
    let (first, last, jobs) = any_chain(DEPTH);
    let reached = thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(move || {
            first.signal();
            let reached = last.is_signalled();
            drop((last, first, jobs));
            reached
        })
        .unwrap()
        .join()
        .expect("no stack overflow on a small stack");
    assert!(reached);

    // A future waiting at the end of the chain is released.
    let (first, last, jobs) = any_chain(DEPTH);
    let waiting = pool.spawn_future(last.wait_async());
    pool.spawn(move || first.signal());
    assert!(!forget_panic(join_within(
        waiting,
        "a future at the end of a deep chain"
    )));
    drop(pool);
    drop((last, jobs));
}

/// A 1,000,000-long chain of `Event::any` events dropped on a thread with a
/// small stack: no overflow.
pub(super) fn deep_any_chain_drop() {
    thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(|| {
            let mut acc = Event::new(EventMode::Manual);
            for _ in 0..1_000_000 {
                acc = Event::any(EventMode::Manual, &[acc]);
            }
            drop(acc);
        })
        .unwrap()
        .join()
        .expect("no stack overflow dropping a long chain");
}

// --- 7. extreme durations --------------------------------------------------------

pub(super) fn after(
    delay: Duration,
    action: impl FnOnce() + Send + 'static,
) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        thread::sleep(delay);
        action();
    })
}

/// Every wait that takes a duration, with `Duration::MAX` (must wait for the
/// thing and return it, not overflow) and `Duration::ZERO` (must return at
/// once and report that nothing came). `on_worker`: the calls are made on a
/// worker of `pool`, where waits run other tasks meanwhile.
pub(super) fn duration_checks(pool: &Pool, on_worker: bool) {
    let prompt = Duration::from_secs(2);

    // JoinHandle::join_timeout, finished and running.
    let finished = pool.spawn_with_handle(|| 5);
    assert!(eventually(WAIT, || finished.is_finished()));
    match finished.join_timeout(Duration::MAX) {
        Ok(Ok(value)) => assert_eq!(value, 5),
        _ => panic!("join_timeout(MAX) on a finished task"),
    }
    let (gate, gated) = mpsc::channel::<()>();
    let running = pool.spawn_with_handle(move || {
        gated.recv_timeout(WAIT).expect("the gate opens");
        6
    });
    let opener = after(Duration::from_millis(30), move || gate.send(()).unwrap());
    match running.join_timeout(Duration::MAX) {
        Ok(Ok(value)) => assert_eq!(value, 6),
        _ => panic!("join_timeout(MAX) on a running task"),
    }
    opener.join().unwrap();

    // join_timeout(ZERO) on a task that cannot finish yet.
    let (gate, gated) = mpsc::channel::<()>();
    let blocked = pool.spawn_with_handle(move || {
        gated.recv_timeout(WAIT).expect("the gate opens");
        7
    });
    let started = Instant::now();
    let outcome = blocked.join_timeout(Duration::ZERO);
    gate.send(()).unwrap();
    match outcome {
        Err(handle) => {
            assert!(
                started.elapsed() < prompt,
                "join_timeout(ZERO) was not prompt"
            );
            assert_eq!(
                join_within(handle, "a task after join_timeout(ZERO)").unwrap(),
                7
            );
        }
        // A helping worker may have run the task itself.
        Ok(result) if on_worker => assert_eq!(result.unwrap(), 7),
        Ok(_) => panic!("join_timeout(ZERO) reported a task done that was gated"),
    }

    // Event.
    for mode in [EventMode::Manual, EventMode::Auto] {
        let event = Event::new(mode);
        event.signal();
        assert!(
            event.wait_timeout(Duration::MAX),
            "{mode:?}: signalled before"
        );
        let event = Event::new(mode);
        let signaller = {
            let event = event.clone();
            after(Duration::from_millis(20), move || event.signal())
        };
        assert!(
            event.wait_timeout(Duration::MAX),
            "{mode:?}: signalled during"
        );
        signaller.join().unwrap();
        let event = Event::new(mode);
        let started = Instant::now();
        assert!(!event.wait_timeout(Duration::ZERO), "{mode:?}: unsignalled");
        assert!(
            !event.wait_deadline(Instant::now()),
            "{mode:?}: deadline now"
        );
        assert!(started.elapsed() < prompt, "{mode:?}: ZERO was not prompt");
    }

    // WaitGroup.
    let wg = WaitGroup::with_count(2);
    for _ in 0..2 {
        let wg = wg.clone();
        pool.spawn(move || {
            thread::sleep(Duration::from_millis(10));
            wg.done();
        });
    }
    assert!(wg.wait_timeout(Duration::MAX));
    assert!(WaitGroup::new().wait_timeout(Duration::MAX));
    let wg = WaitGroup::with_count(1);
    let started = Instant::now();
    assert!(!wg.wait_timeout(Duration::ZERO));
    assert!(started.elapsed() < prompt);
    wg.done();

    // Condvar.
    let shared = Arc::new((Mutex::new(false), weft::Condvar::new()));
    let notifier = {
        let shared = Arc::clone(&shared);
        after(Duration::from_millis(20), move || {
            *shared.0.lock().unwrap() = true;
            shared.1.notify_one();
        })
    };
    let (mutex, condvar) = &*shared;
    let mut guard = mutex.lock().unwrap();
    while !*guard {
        guard = condvar.wait_timeout(mutex, guard, Duration::MAX).0;
    }
    drop(guard);
    notifier.join().unwrap();
    *mutex.lock().unwrap() = false;
    let notifier = {
        let shared = Arc::clone(&shared);
        after(Duration::from_millis(20), move || {
            *shared.0.lock().unwrap() = true;
            shared.1.notify_all();
        })
    };
    let (guard, timed_out) =
        condvar.wait_timeout_while(mutex, mutex.lock().unwrap(), Duration::MAX, |set| !*set);
    assert!(*guard && !timed_out.timed_out());
    drop(guard);
    notifier.join().unwrap();
    let started = Instant::now();
    let (guard, timed_out) = condvar.wait_timeout(mutex, mutex.lock().unwrap(), Duration::ZERO);
    assert!(
        timed_out.timed_out(),
        "Condvar::wait_timeout(ZERO) without a notification"
    );
    drop(guard);
    let (guard, timed_out) =
        condvar.wait_timeout_while(mutex, mutex.lock().unwrap(), Duration::ZERO, |_| true);
    assert!(timed_out.timed_out());
    drop(guard);
    assert!(started.elapsed() < prompt);
}

pub(super) fn extreme_durations() {
    let pool = Pool::builder().workers(2).build().unwrap();
    duration_checks(&pool, false);
    pool.install(|| duration_checks(&pool, true));
    let spinning = Pool::builder()
        .workers(2)
        .spin(Duration::MAX)
        .build()
        .unwrap();
    duration_checks(&spinning, false);
    drop(spinning);
    drop(pool);
}
