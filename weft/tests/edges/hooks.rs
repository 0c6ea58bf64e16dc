//! Start and stop hooks that spawn and signal.

use super::*;

// --- 2. hooks that spawn and signal ----------------------------------------

/// Tasks spawned from `on_thread_start` all run, even when the pool is
/// dropped right after `build()`.
pub(super) fn start_hook_spawns() {
    for round in 0..50 {
        let hooks = counter();
        let ran = counter();
        let pool = {
            let hooks = Arc::clone(&hooks);
            let ran = Arc::clone(&ran);
            Pool::builder()
                .workers(4)
                .on_thread_start(move |_| {
                    hooks.fetch_add(1, SeqCst);
                    let ran = Arc::clone(&ran);
                    weft::spawn(move || {
                        ran.fetch_add(1, SeqCst);
                    });
                })
                .build()
                .unwrap()
        };
        drop(pool);
        assert_eq!(hooks.load(SeqCst), 4, "round {round}: start hooks run");
        assert_eq!(
            ran.load(SeqCst),
            4,
            "round {round}: tasks spawned by start hooks had not all run when drop returned"
        );
    }
}

/// Tasks spawned from `on_thread_stop` have all run when the drop returns.
pub(super) fn stop_hook_spawns() {
    for round in 0..30 {
        let workers = 2 + round % 4;
        let ran = counter();
        let pool = {
            let ran = Arc::clone(&ran);
            Pool::builder()
                .workers(workers)
                .on_thread_stop(move |_| {
                    // Every way of queuing work from a worker: LIFO, FIFO, a
                    // broadcast to every worker (all of them stopping too),
                    // and a join whose second half others may take.
                    let (lifo, fifo, each) = (Arc::clone(&ran), Arc::clone(&ran), Arc::clone(&ran));
                    weft::spawn(move || bump(&lifo));
                    weft::spawn_fifo(move || bump(&fifo));
                    weft::spawn_broadcast(move |_| bump(&each));
                    weft::join(|| bump(&ran), || bump(&ran));
                })
                .build()
                .unwrap()
        };
        if round % 2 == 0 {
            pool.spawn(|| ());
        }
        drop(pool);
        assert_eq!(
            ran.load(SeqCst),
            workers * (4 + workers),
            "round {round}: tasks spawned by stop hooks had not all run when drop returned"
        );
    }
}

/// Futures spawned from `on_thread_stop` all complete with their output.
pub(super) fn stop_hook_spawns_futures() {
    for round in 0..20 {
        let workers = 2 + round % 3;
        let (sender, receiver) = mpsc::channel::<JoinHandle<usize>>();
        let sender = Mutex::new(sender);
        let pool = Pool::builder()
            .workers(workers)
            .on_thread_stop(move |index| {
                let handle = weft::spawn_future(async move { index });
                sender.lock().unwrap().send(handle).unwrap();
            })
            .build()
            .unwrap();
        pool.spawn(|| ());
        drop(pool);
        let handles: Vec<_> = receiver.try_iter().collect();
        assert_eq!(handles.len(), workers, "round {round}: stop hooks run");
        let mut outputs: Vec<usize> = handles
            .into_iter()
            .map(
                |handle| match join_within(handle, "a future spawned by a stop hook") {
                    Ok(index) => index,
                    Err(_) => panic!("round {round}: a future spawned by a stop hook reported Err"),
                },
            )
            .collect();
        outputs.sort_unstable();
        assert_eq!(outputs, (0..workers).collect::<Vec<_>>());
    }
}

/// A future parked on an event that `on_thread_stop` signals completes with
/// its output.
pub(super) fn stop_hook_signals_parked_future() {
    for round in 0..20 {
        let event = Event::new(EventMode::Manual);
        let pool = {
            let event = event.clone();
            Pool::builder()
                .workers(2)
                .on_thread_stop(move |_| event.signal())
                .build()
                .unwrap()
        };
        let waiting = {
            let event = event.clone();
            pool.spawn_future(async move {
                event.wait_async().await;
                7
            })
        };
        thread::sleep(Duration::from_millis(2));
        drop(pool);
        match join_within(waiting, "a future woken by a stop hook") {
            Ok(value) => assert_eq!(value, 7),
            Err(_) => panic!("round {round}: a future woken by a stop hook reported Err"),
        }
    }
}

/// Hooks that fork-join, open scopes and block: each returns its results and
/// the pool drops.
pub(super) fn hooks_join_scope_blocking() {
    for _ in 0..10 {
        let starts = counter();
        let stops = counter();
        let pool = {
            let starts = Arc::clone(&starts);
            let stops = Arc::clone(&stops);
            Pool::builder()
                .workers(3)
                .on_thread_start(move |index| {
                    assert_eq!(weft::join(|| 1, || 2), (1, 2));
                    let mut hit = false;
                    weft::scope(|s| s.spawn(|_| hit = true));
                    assert!(hit);
                    assert_eq!(weft::blocking(|| 5), 5);
                    // Spare threads (indexes past the workers') run the
                    // hooks too: count workers only.
                    if index < 3 {
                        starts.fetch_add(1, SeqCst);
                    }
                })
                .on_thread_stop(move |index| {
                    assert_eq!(weft::join(|| 3, || 4), (3, 4));
                    let mut hit = false;
                    weft::scope(|s| s.spawn(|_| hit = true));
                    assert!(hit);
                    assert_eq!(weft::blocking(|| 6), 6);
                    if index < 3 {
                        stops.fetch_add(1, SeqCst);
                    }
                })
                .build()
                .unwrap()
        };
        assert_eq!(pool.join(|| 1, || 2), (1, 2));
        drop(pool);
        assert_eq!(starts.load(SeqCst), 3);
        assert_eq!(stops.load(SeqCst), 3);
    }
}
