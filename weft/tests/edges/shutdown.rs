//! Shutdown racing spawns, aborts, wake-ups and the waits of callers outside the pool.

use super::*;

// --- 1. shutdown racing spawns and wake-ups -------------------------------

/// Which `Handle` call the spawning threads of [`shutdown_races_spawns`] use.
#[derive(Clone, Copy, Debug)]
pub(super) enum Via {
    Spawn,
    SpawnOn,
    SpawnFifo,
    /// Each accepted call runs once on every worker.
    SpawnBroadcast,
    /// Each accepted task joins: an outer `join` (its half goes to the
    /// local queue at once), a nested one on the join stack whose first
    /// half throws a payload that panics on drop, so halves are shared,
    /// stolen and their latches set while the pool drops.
    SpawnJoining,
}

/// The task of [`Via::SpawnJoining`]: bumps `ran` three times.
fn joining_task(ran: &AtomicUsize) {
    weft::join(
        || {
            let result =
                panic::catch_unwind(AssertUnwindSafe(|| weft::join(throw_bomb, || bump(ran))));
            assert!(
                forget_panic(result),
                "the nested join's bomb reached its caller"
            );
        },
        || bump(ran),
    );
    bump(ran);
}

/// Threads spawn through a `Handle` as fast as they can while the pool is
/// dropped: every drop returns, every spawn after it fails, and every spawn
/// that was accepted ran exactly once (a broadcast once per worker).
pub(super) fn shutdown_races_spawns(via: Via, worker_counts: &[usize]) {
    let started = Instant::now();
    let mut round = 0;
    while round < 100 && (round < 10 || started.elapsed() < Duration::from_secs(5)) {
        let workers = worker_counts[round % worker_counts.len()];
        let pool = Pool::builder().workers(workers).build().unwrap();
        let spammers = 2 + round % 2;
        let barrier = Arc::new(Barrier::new(spammers + 1));
        let accepted = counter();
        let ran = counter();
        let threads = spawner_threads(spammers, &pool, &barrier, {
            let (accepted, ran) = (Arc::clone(&accepted), Arc::clone(&ran));
            move |handle| {
                loop {
                    let ran = Arc::clone(&ran);
                    let (refused, runs) = match via {
                        Via::Spawn => (handle.spawn(move || bump(&ran)).is_err(), 1),
                        Via::SpawnOn => (handle.spawn_on(0, move || bump(&ran)).is_err(), 1),
                        Via::SpawnFifo => (handle.spawn_fifo(move || bump(&ran)).is_err(), 1),
                        Via::SpawnBroadcast => (
                            handle.spawn_broadcast(move |_| bump(&ran)).is_err(),
                            workers,
                        ),
                        Via::SpawnJoining => (handle.spawn(move || joining_task(&ran)).is_err(), 3),
                    };
                    if refused {
                        break;
                    }
                    accepted.fetch_add(runs, SeqCst);
                }
                assert!(handle.is_closed());
                assert!(handle.spawn(|| ()).is_err(), "a spawn after the drop");
            }
        });
        barrier.wait();
        thread::sleep(Duration::from_micros(100 * (round % 5) as u64));
        drop(pool);
        for spammer in threads {
            spammer.join().expect("spammer thread");
        }
        assert_eq!(
            ran.load(SeqCst),
            accepted.load(SeqCst),
            "round {round}: tasks accepted through {via:?} did not all run by the drop",
        );
        round += 1;
    }
}

/// Threads outside the pool make short calls into it (`install`, `join`,
/// `scope`, and an `install` whose closure throws a payload that panics on
/// drop), each waiting for its call's end in the caller's spin, while
/// other threads spawn through a `Handle`, each worker's start hook spawns
/// a task, and the pool's last reference is dropped by whichever thread
/// lets go of it last (a caller right after its last call's wait, or the
/// main thread). Every call returns its value or its panic, every accepted
/// spawn and every start hook's task ran once, and the drop returns. A
/// pool of as many workers as cores lingers after each call (its searchers
/// keep searching while it drops: api/on_workers.rs, `install`); the
/// larger ones do not, and there callers spin too since session 33
/// (`registry::caller_wait`). Half the `install` calls, plain and bomb,
/// run over a millisecond: in a pool that fits the
/// cores the plain one names its worker the favourite that the spawns'
/// and the next calls' wakes from outside look for (sched/registry.rs,
/// `outside_call_ran`), and the bomb's leaves the favourite as it was.
/// Their long part runs in `weft::blocking`, so spare seats are made
/// (sched/registry.rs, `SpareSeat`) and swept while the pool drops, and
/// their threads' start hooks spawn too.
pub(super) fn outside_callers_race_the_drop() {
    let cores = thread::available_parallelism().map_or(1, usize::from);
    let worker_counts = [cores, cores + 1, 8, 64];
    let started = Instant::now();
    let mut round = 0;
    while round < 60 && (round < 6 || started.elapsed() < Duration::from_secs(5)) {
        let workers = worker_counts[round % worker_counts.len()];
        // Spare threads run the start hook too (seats from `workers` on).
        let hooks_started = counter();
        let worker_hooks_started = counter();
        let hook_tasks_ran = counter();
        let pool = {
            let hooks_started = Arc::clone(&hooks_started);
            let worker_hooks_started = Arc::clone(&worker_hooks_started);
            let hook_tasks_ran = Arc::clone(&hook_tasks_ran);
            Arc::new(
                Pool::builder()
                    .workers(workers)
                    .on_thread_start(move |index| {
                        hooks_started.fetch_add(1, SeqCst);
                        if index < workers {
                            worker_hooks_started.fetch_add(1, SeqCst);
                        }
                        let ran = Arc::clone(&hook_tasks_ran);
                        weft::spawn(move || bump(&ran));
                    })
                    .build()
                    .unwrap(),
            )
        };
        let callers = 2 + round % 2;
        let spammers = 2;
        let barrier = Arc::new(Barrier::new(callers + spammers + 1));
        let accepted = counter();
        let ran = counter();
        let calls = 50 + 25 * (round % 4);
        let caller_threads: Vec<_> = (0..callers)
            .map(|caller| {
                let pool = Arc::clone(&pool);
                let barrier = Arc::clone(&barrier);
                thread::spawn(move || {
                    barrier.wait();
                    for call in 0..calls {
                        let value = caller * 10_000 + call;
                        let long = call % 8 < 4;
                        // In `weft::blocking`, which lends the worker a
                        // spare: the pool makes spare seats (their queues
                        // and join stacks) as the race goes on.
                        let run_long = move || {
                            if long {
                                weft::blocking(|| thread::sleep(Duration::from_micros(1_100)));
                            }
                        };
                        match call % 4 {
                            0 => assert_eq!(
                                pool.install(|| {
                                    run_long();
                                    value
                                }),
                                value
                            ),
                            1 => assert_eq!(pool.join(|| value, || call), (value, call)),
                            2 => {
                                let mut seen = 0;
                                pool.scope(|s| s.spawn(|_| seen = value));
                                assert_eq!(seen, value);
                            }
                            _ => {
                                let thrown = panic::catch_unwind(AssertUnwindSafe(|| {
                                    pool.install(|| {
                                        run_long();
                                        throw_bomb()
                                    })
                                }));
                                assert!(forget_panic(thrown), "the bomb's panic was lost");
                            }
                        }
                    }
                    // The last short call, then this thread's reference
                    // goes: the pool may drop here, right after the wait.
                    assert_eq!(pool.install(|| caller), caller);
                    drop(pool);
                })
            })
            .collect();
        let spammer_threads = spawner_threads(spammers, &pool, &barrier, {
            let (accepted, ran) = (Arc::clone(&accepted), Arc::clone(&ran));
            move |handle| {
                spawn_until_refused(&handle, &accepted, || {
                    // At most a few dozen of this round's spawns
                    // outstanding: the callers' calls queue behind
                    // them, and the pool drops only after those.
                    while accepted.load(SeqCst) > ran.load(SeqCst) + 64 {
                        thread::yield_now();
                    }
                    let ran = Arc::clone(&ran);
                    move || bump(&ran)
                });
            }
        });
        barrier.wait();
        thread::sleep(Duration::from_micros(50 * (round % 7) as u64));
        drop(pool);
        for caller in caller_threads {
            caller.join().expect("caller thread");
        }
        for spammer in spammer_threads {
            spammer.join().expect("spammer thread");
        }
        assert_eq!(
            ran.load(SeqCst),
            accepted.load(SeqCst),
            "round {round}: spawns accepted while callers spun did not all run by the drop",
        );
        assert_eq!(worker_hooks_started.load(SeqCst), workers, "round {round}");
        assert_eq!(
            hook_tasks_ran.load(SeqCst),
            hooks_started.load(SeqCst),
            "round {round}: a start hook's task did not run by the drop",
        );
        round += 1;
    }
}

/// The halves [`joins_in_a_row`] ran, and the bombs it caught.
#[derive(Default)]
struct Halves {
    first: AtomicUsize,
    second: AtomicUsize,
    nested: AtomicUsize,
    bombs: AtomicUsize,
}

/// What `joins` joins of [`joins_in_a_row`] leave in [`Halves`]: first,
/// second and nested halves, and bombs.
fn halves_of(joins: usize) -> [usize; 4] {
    [joins, joins, 2 * joins.div_ceil(5), joins.div_ceil(97)]
}

/// `joins` joins in a row: some first halves throw a payload that panics
/// on drop, some second halves join again.
fn joins_in_a_row(joins: usize, halves: &Halves) {
    for i in 0..joins {
        let throws = i % 97 == 0;
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            weft::join(
                || {
                    bump(&halves.first);
                    if throws {
                        throw_bomb();
                    }
                },
                || {
                    bump(&halves.second);
                    if i % 5 == 0 {
                        weft::join(|| bump(&halves.nested), || bump(&halves.nested));
                    }
                },
            )
        }));
        assert_eq!(forget_panic(result), throws, "join {i}: the panic");
        if throws {
            bump(&halves.bombs);
        }
    }
}

/// Every worker runs a task that joins in a loop, so no worker is idle and
/// each join's half, the task's outermost, stays on its worker's join stack
/// (sched/fork.rs: it goes to the local queue only when a thief may come
/// for it), while the pool is dropped. In odd rounds one task stops early:
/// its worker goes idle, and the others' halves are shared or stolen while
/// the drop waits. Meanwhile start and stop hooks queue joining tasks of
/// their own, and a thread spawns more through a `Handle` until the pool
/// refuses. The drop returns, and every half of every accepted task ran
/// exactly once.
pub(super) fn outermost_halves_kept_while_the_pool_drops() {
    const JOINS: usize = 2_000;
    const HOOK_JOINS: usize = 300;
    const HANDLE_JOINS: usize = 100;
    let started = Instant::now();
    let mut round = 0;
    while round < 60 && (round < 10 || started.elapsed() < Duration::from_secs(5)) {
        let workers = [2, 3, 8][round % 3];
        let halves = Arc::new(Halves::default());
        let hook = |halves: &Arc<Halves>| {
            let halves = Arc::clone(halves);
            move |_| {
                let halves = Arc::clone(&halves);
                weft::spawn(move || joins_in_a_row(HOOK_JOINS, &halves));
            }
        };
        let pool = Pool::builder()
            .workers(workers)
            .on_thread_start(hook(&halves))
            .on_thread_stop(hook(&halves))
            .build()
            .unwrap();
        // Each task holds its worker until every task has one, so that no
        // worker is idle when the joins start.
        let all_running = Arc::new(Barrier::new(workers + 1));
        let mut want = [0; 4];
        let mut expect = |joins: usize, times: usize| {
            for (total, each) in want.iter_mut().zip(halves_of(joins)) {
                *total += each * times;
            }
        };
        // Every worker runs each hook once.
        expect(HOOK_JOINS, 2 * workers);
        for task in 0..workers {
            let joins = if round % 2 == 1 && task == 0 {
                50
            } else {
                JOINS
            };
            expect(joins, 1);
            let (all_running, halves) = (Arc::clone(&all_running), Arc::clone(&halves));
            pool.spawn(move || {
                all_running.wait();
                joins_in_a_row(joins, &halves);
            });
        }
        all_running.wait();
        let spammer = {
            let (handle, halves) = (pool.handle(), Arc::clone(&halves));
            thread::spawn(move || {
                let mut accepted = 0;
                loop {
                    let halves = Arc::clone(&halves);
                    if handle
                        .spawn(move || joins_in_a_row(HANDLE_JOINS, &halves))
                        .is_err()
                    {
                        return accepted;
                    }
                    accepted += 1;
                }
            })
        };
        thread::sleep(Duration::from_micros(50 * (round % 4) as u64));
        drop(pool);
        expect(HANDLE_JOINS, spammer.join().expect("spammer thread"));
        let ran = [
            halves.first.load(SeqCst),
            halves.second.load(SeqCst),
            halves.nested.load(SeqCst),
            halves.bombs.load(SeqCst),
        ];
        assert_eq!(
            ran, want,
            "round {round}, {workers} workers: first, second, nested halves, bombs"
        );
        round += 1;
    }
}

pub(super) fn bump(count: &AtomicUsize) {
    count.fetch_add(1, SeqCst);
}

/// Spawns the tasks `next` makes through `handle` until the pool refuses
/// one (it was dropped), counting each accepted spawn in `accepted`.
pub(super) fn spawn_until_refused<F>(
    handle: &weft::Handle,
    accepted: &AtomicUsize,
    mut next: impl FnMut() -> F,
) where
    F: FnOnce() + Send + 'static,
{
    while handle.spawn(next()).is_ok() {
        bump(accepted);
    }
}

/// `count` threads that each wait at `barrier`, then run `body` with a
/// handle of `pool`'s: the spawners the shutdown races run beside a drop.
pub(super) fn spawner_threads<B>(
    count: usize,
    pool: &Pool,
    barrier: &Arc<Barrier>,
    body: B,
) -> Vec<thread::JoinHandle<()>>
where
    B: Fn(weft::Handle) + Clone + Send + 'static,
{
    (0..count)
        .map(|_| {
            let (handle, barrier, body) = (pool.handle(), Arc::clone(barrier), body.clone());
            thread::spawn(move || {
                barrier.wait();
                body(handle);
            })
        })
        .collect()
}

/// A closure that records whether it ran, and whether it was dropped unrun.
pub(super) struct Tally {
    pub(super) ran: Arc<AtomicUsize>,
    pub(super) dropped_unrun: Arc<AtomicUsize>,
    pub(super) done: bool,
}

impl Tally {
    fn run(mut self) {
        self.done = true;
        bump(&self.ran);
    }
}

impl Drop for Tally {
    fn drop(&mut self) {
        if !self.done {
            bump(&self.dropped_unrun);
        }
    }
}

/// One thread aborts tasks while their pool is dropped and its workers
/// start them: every task either ran or was dropped unrun, exactly once,
/// and every handle reports which (`Aborted` only for an unrun one).
pub(super) fn shutdown_races_aborts() {
    for round in 0..40 {
        let pool = Pool::builder().workers(2 + round % 3).build().unwrap();
        let ran = counter();
        let dropped_unrun = counter();
        let handles: Vec<JoinHandle<()>> = (0..64)
            .map(|_| {
                let tally = Tally {
                    ran: Arc::clone(&ran),
                    dropped_unrun: Arc::clone(&dropped_unrun),
                    done: false,
                };
                pool.spawn_with_handle(move || tally.run())
            })
            .collect();
        let handles = Arc::new(handles);
        let aborter = {
            let handles = Arc::clone(&handles);
            thread::spawn(move || {
                for handle in handles.iter().rev() {
                    handle.abort();
                }
            })
        };
        drop(pool);
        aborter.join().expect("aborting thread");
        assert_eq!(
            ran.load(SeqCst) + dropped_unrun.load(SeqCst),
            64,
            "round {round}: a task neither ran nor was dropped, or both"
        );
        let handles = Arc::try_unwrap(handles).expect("the aborter is done");
        let aborted = handles
            .into_iter()
            .map(|handle| join_within(handle, "a task of a dropped pool"))
            .filter(|result| {
                result
                    .as_ref()
                    .is_err_and(|payload| payload.is::<weft::Aborted>())
            })
            .count();
        assert_eq!(aborted, dropped_unrun.load(SeqCst), "round {round}");
    }
}

/// Counts its drop.
pub(super) struct CountsDrop(Arc<AtomicUsize>);

impl Drop for CountsDrop {
    fn drop(&mut self) {
        bump(&self.0);
    }
}

/// A future's task is one allocation shared by its handle, its wakers and
/// its queued poll, and whoever lets go of the last waker or poll drops a
/// pending future. Raced here against the pool's drop: one thread aborts
/// futures, another takes the wakers they left out and wakes or drops them,
/// some futures' destructors panic (one with a payload that panics when
/// dropped). Every future is dropped exactly once, the drop returns (or
/// hands a destructor's panic on), and every handle completes with `Err`.
pub(super) fn shutdown_races_future_aborts() {
    const FUTURES: usize = 32;
    for round in 0..30 {
        let pool = Pool::builder().workers(2 + round % 3).build().unwrap();
        let dropped = counter();
        let slots: Arc<Vec<Mutex<Option<Waker>>>> =
            Arc::new((0..FUTURES).map(|_| Mutex::new(None)).collect());
        let handles: Vec<JoinHandle<()>> = (0..FUTURES)
            .map(|i| {
                let slots = Arc::clone(&slots);
                let guard = (
                    CountsDrop(Arc::clone(&dropped)),
                    (i % 8 == 3).then(|| PanicsOnDrop { bomb: i % 16 == 11 }),
                );
                pool.spawn_future(async move {
                    let _guard = guard;
                    std::future::poll_fn(|cx| {
                        *slots[i].lock().unwrap() = Some(cx.waker().clone());
                        Poll::<()>::Pending
                    })
                    .await;
                })
            })
            .collect();
        let handles = Arc::new(handles);
        let aborter = {
            let handles = Arc::clone(&handles);
            thread::spawn(move || {
                for handle in handles.iter().rev().step_by(2) {
                    handle.abort();
                }
            })
        };
        let waker_user = {
            let slots = Arc::clone(&slots);
            thread::spawn(move || {
                for _ in 0..4 {
                    for (i, slot) in slots.iter().enumerate() {
                        let waker = slot.lock().unwrap().take();
                        match waker {
                            Some(waker) if i % 3 == 0 => drop(waker),
                            Some(waker) => waker.wake(),
                            None => {}
                        }
                    }
                    thread::yield_now();
                }
            })
        };
        thread::sleep(Duration::from_micros(100 * (round % 4) as u64));
        forget_panic(panic::catch_unwind(AssertUnwindSafe(move || drop(pool))));
        aborter.join().expect("the aborting thread");
        waker_user.join().expect("the waking thread");
        let handles = Arc::try_unwrap(handles).expect("the aborter is done");
        for (i, handle) in handles.into_iter().enumerate() {
            assert!(
                forget_panic(join_within(handle, "a future of a dropped pool")),
                "round {round}: future {i}, which never finishes, reported Ok"
            );
        }
        // Wakers still left out belong to futures the pool's drop dropped.
        drop(slots);
        assert_eq!(
            dropped.load(SeqCst),
            FUTURES,
            "round {round}: a future was not dropped, or dropped twice"
        );
    }
}

/// Foreign threads keep waking futures parked on `Event`s while the pool is
/// dropped: the drop returns, and every future's handle completes (`Err` for
/// the ones that could never finish).
pub(super) fn shutdown_races_wakes() {
    let started = Instant::now();
    let mut round = 0;
    while round < 60 && (round < 10 || started.elapsed() < Duration::from_secs(5)) {
        let pool = Pool::builder().workers(2 + round % 3).build().unwrap();
        let never = Arc::new(AtomicBool::new(false));
        let auto: Vec<Event> = (0..8).map(|_| Event::new(EventMode::Auto)).collect();
        let manual: Vec<Event> = (0..8).map(|_| Event::new(EventMode::Manual)).collect();
        // Futures that wait again after every wake: they never finish.
        let forever: Vec<JoinHandle<()>> = auto
            .iter()
            .map(|event| {
                let event = event.clone();
                let never = Arc::clone(&never);
                pool.spawn_future(async move {
                    while !never.load(SeqCst) {
                        event.wait_async().await;
                    }
                })
            })
            .collect();
        let once: Vec<JoinHandle<usize>> = manual
            .iter()
            .enumerate()
            .map(|(i, event)| {
                let event = event.clone();
                pool.spawn_future(async move {
                    event.wait_async().await;
                    i
                })
            })
            .collect();
        let stop = Arc::new(AtomicBool::new(false));
        let signallers: Vec<_> = (0..2)
            .map(|t| {
                let events: Vec<Event> = auto.iter().chain(manual.iter()).cloned().collect();
                let stop = Arc::clone(&stop);
                thread::spawn(move || {
                    while !stop.load(SeqCst) {
                        for event in events.iter().skip(t) {
                            event.signal();
                        }
                        thread::yield_now();
                    }
                })
            })
            .collect();
        thread::sleep(Duration::from_micros(200 * (round % 5) as u64));
        drop(pool);
        // The signals go on: a wake after the drop must not revive anything.
        for (i, handle) in forever.into_iter().enumerate() {
            let result = join_within(handle, "a parked future after the drop");
            assert!(
                forget_panic(result),
                "round {round}: future {i} that never finishes reported Ok"
            );
        }
        for (i, handle) in once.into_iter().enumerate() {
            if let Ok(value) = join_within(handle, "a woken future after the drop") {
                assert_eq!(value, i);
            }
        }
        stop.store(true, SeqCst);
        for signaller in signallers {
            signaller.join().expect("signaller thread");
        }
        round += 1;
    }
}
