//! Thread-local destructors that use weft, and a pool kept in a thread-local.

use super::*;

// --- 3. thread-local destructors that use weft ------------------------------

#[derive(Debug, PartialEq)]
pub(super) struct DtorReport {
    pub(super) spawned: bool,
    pub(super) joined: (i32, i32),
    pub(super) scoped: bool,
    pub(super) future: Option<i32>,
}

/// Uses weft's free functions from its destructor and reports what it got.
pub(super) struct UsesWeft {
    pub(super) reports: Arc<Mutex<Vec<DtorReport>>>,
}

impl Drop for UsesWeft {
    fn drop(&mut self) {
        let (sender, receiver) = mpsc::channel();
        weft::spawn(move || {
            let _ = sender.send(());
        });
        let spawned = receiver.recv_timeout(WAIT).is_ok();
        let joined = weft::join(|| 1, || 2);
        let mut scoped = false;
        weft::scope(|s| s.spawn(|_| scoped = true));
        let future = match weft::spawn_future(async { 3 }).join_timeout(WAIT) {
            Ok(Ok(value)) => Some(value),
            _ => None,
        };
        self.reports.lock().unwrap().push(DtorReport {
            spawned,
            joined,
            scoped,
            future,
        });
    }
}

thread_local! {
    static USES_WEFT: RefCell<Option<UsesWeft>> = const { RefCell::new(None) };
    static POOL: RefCell<Option<Pool>> = const { RefCell::new(None) };
}

pub(super) const GOOD_REPORT: DtorReport = DtorReport {
    spawned: true,
    joined: (1, 2),
    scoped: true,
    future: Some(3),
};

/// A thread-local whose destructor spawns, joins, scopes and spawns a future
/// on a plain thread: no abort, and each call does its job. Once with the
/// thread-local set before the thread first touches weft (so it is destroyed
/// after weft's own thread-locals), once after.
pub(super) fn tls_destructor_uses_weft() {
    let reports = Arc::new(Mutex::new(Vec::new()));
    for set_first in [true, false, true, false] {
        let reports_for_thread = Arc::clone(&reports);
        thread::spawn(move || {
            let set = || {
                USES_WEFT.with(|slot| {
                    *slot.borrow_mut() = Some(UsesWeft {
                        reports: reports_for_thread.clone(),
                    })
                });
            };
            if set_first {
                set();
            }
            assert_eq!(weft::join(|| 1, || 2), (1, 2));
            let pool = Pool::builder().workers(2).build().unwrap();
            assert_eq!(pool.install(|| weft::join(|| 1, || 2)), (1, 2));
            weft::block_on(weft::spawn_future(async {})).unwrap();
            drop(pool);
            if !set_first {
                set();
            }
        })
        .join()
        .expect("the thread exits cleanly");
    }
    let reports = reports.lock().unwrap();
    assert_eq!(reports.len(), 4, "every destructor ran to its end");
    for report in reports.iter() {
        assert_eq!(*report, GOOD_REPORT);
    }
}

/// The same destructor on worker threads (set by `on_thread_start`), which
/// runs as each worker exits.
pub(super) fn tls_destructor_on_worker() {
    for _ in 0..5 {
        let reports = Arc::new(Mutex::new(Vec::new()));
        let pool = {
            let reports = Arc::clone(&reports);
            Pool::builder()
                .workers(3)
                .on_thread_start(move |_| {
                    let reports = Arc::clone(&reports);
                    USES_WEFT.with(|slot| *slot.borrow_mut() = Some(UsesWeft { reports }));
                })
                .build()
                .unwrap()
        };
        assert_eq!(pool.join(|| 1, || 2), (1, 2));
        drop(pool);
        // Joined workers have run their thread-local destructors.
        let reports = reports.lock().unwrap();
        assert_eq!(reports.len(), 3, "every worker's destructor ran to its end");
        for report in reports.iter() {
            assert_eq!(*report, GOOD_REPORT);
        }
    }
}

/// A pool stored in a thread-local, with tasks queued and a parked future,
/// dropped as its thread exits: no abort, the tasks ran, the future reports
/// `Err`.
pub(super) fn pool_in_thread_local() {
    for _ in 0..5 {
        let ran = counter();
        let (sender, receiver) = mpsc::channel();
        let never = Event::new(EventMode::Manual);
        {
            let ran = Arc::clone(&ran);
            let never = never.clone();
            thread::spawn(move || {
                let pool = Pool::builder().workers(2).build().unwrap();
                for _ in 0..16 {
                    let ran = Arc::clone(&ran);
                    pool.spawn(move || {
                        thread::sleep(Duration::from_millis(1));
                        ran.fetch_add(1, SeqCst);
                    });
                }
                sender.send(pool.spawn_future(never.wait_async())).unwrap();
                POOL.with(|slot| *slot.borrow_mut() = Some(pool));
            })
            .join()
            .expect("the thread exits cleanly");
        }
        assert_eq!(
            ran.load(SeqCst),
            16,
            "queued tasks ran before the pool went"
        );
        let parked = recv(&receiver, "the parked future's handle");
        assert!(forget_panic(join_within(
            parked,
            "a future parked in a dropped pool"
        )));
        drop(never);
    }
}
