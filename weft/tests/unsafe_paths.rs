//! Small runs through every path that uses `unsafe` (stack jobs, closure jobs,
//! join stacks, latches, scoped borrows, broadcast slots, the worker
//! pointer), sized for
//! Miri: `cargo +nightly miri test -p weft --test unsafe_paths`.

use std::sync::atomic::{AtomicUsize, Ordering};

fn pool(workers: usize) -> weft::Pool {
    weft::Pool::builder().workers(workers).build().unwrap()
}

#[test]
fn join_runs_stack_jobs_inline_and_stolen() {
    let pool = pool(2);
    fn tree(depth: u32) -> u32 {
        if depth == 0 {
            return 1;
        }
        let (a, b) = weft::join(|| tree(depth - 1), || tree(depth - 1));
        a + b
    }
    assert_eq!(pool.install(|| tree(5)), 32);
}

/// Waits (yielding, up to a generous deadline) until `flag` is set.
fn wait_for(flag: &std::sync::atomic::AtomicBool) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !flag.load(Ordering::Acquire) {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::yield_now();
    }
    true
}

#[test]
fn join_halves_leave_the_join_stack_every_way() {
    use std::sync::atomic::AtomicBool;
    let pool = pool(2);
    // Taken by force, or shared: the first half never joins again and waits
    // for the second, which another worker must take from the join stack.
    let started = AtomicBool::new(false);
    let (overlapped, ()) = pool.join(
        || wait_for(&started),
        || started.store(true, Ordering::Release),
    );
    assert!(overlapped);
    // Shared: the first half keeps joining, answering the other worker's
    // request with its oldest half.
    let started = AtomicBool::new(false);
    let (overlapped, ()) = pool.join(
        || {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            while !started.load(Ordering::Acquire) && std::time::Instant::now() < deadline {
                weft::join(|| (), || ());
            }
            started.load(Ordering::Acquire)
        },
        || started.store(true, Ordering::Release),
    );
    assert!(overlapped);
    // Run by a wait of the owner's own, on one worker.
    let single = self::pool(1);
    let group = weft::WaitGroup::new();
    group.add(1);
    let done = group.clone();
    single.join(|| group.wait(), || done.done());
    // Spilled: nesting deeper than the join stack holds.
    fn deep(depth: u32) -> u32 {
        if depth == 0 {
            return 0;
        }
        let (a, b) = weft::join(|| deep(depth - 1), || 1);
        a + b
    }
    assert_eq!(single.install(|| deep(300)), 300);
}

#[test]
fn join_with_a_panicking_side_frees_nothing_early() {
    let pool = pool(2);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.join(|| panic!("left"), || vec![1, 2, 3].len())
    }));
    assert!(result.is_err());
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.join(|| vec![1].len(), || panic!("right"))
    }));
    assert!(result.is_err());
}

#[test]
fn scope_tasks_borrow_the_stack() {
    let pool = pool(2);
    let mut values = [0u32; 8];
    let total = AtomicUsize::new(0);
    pool.scope(|s| {
        for (i, value) in values.iter_mut().enumerate() {
            let total = &total;
            s.spawn(move |_| {
                *value = i as u32 * 2;
                total.fetch_add(1, Ordering::Relaxed);
            });
        }
    });
    assert_eq!(values, [0, 2, 4, 6, 8, 10, 12, 14]);
    assert_eq!(total.into_inner(), 8);
}

#[test]
fn install_from_outside_and_from_another_pool() {
    let first = pool(1);
    let second = pool(1);
    let text = String::from("borrowed");
    assert_eq!(first.install(|| text.len()), 8);
    assert_eq!(first.install(|| second.install(|| text.len() + 1)), 9);
}

#[test]
fn broadcast_fills_every_slot() {
    let pool = pool(3);
    let name = String::from("w");
    assert_eq!(
        pool.broadcast(|i| format!("{name}{i}")),
        vec!["w0", "w1", "w2"]
    );
}

#[test]
fn spawned_closure_jobs_run_and_free() {
    let pool = pool(2);
    let handles: Vec<_> = (0..8)
        // A heap allocation inside the task on purpose: Miri checks it is freed.
        .map(|i| pool.spawn_with_handle(move || Vec::from([i; 4]).iter().sum::<i32>()))
        .collect();
    let sums: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(sums, (0..8).map(|i| i * 4).collect::<Vec<_>>());
    // Four words of captures travel beside the handle's packet pointer, in
    // the job; five are boxed. Both read back intact, both dropped once.
    let witness = std::sync::Arc::new(());
    let four = (std::sync::Arc::clone(&witness), 1u64, 2u64, 3u64);
    let five = (std::sync::Arc::clone(&witness), 1u64, 2u64, 3u64, 4u64);
    let inline = pool.spawn_with_handle(move || {
        let (arc, a, b, c) = four;
        drop(arc);
        a + b + c
    });
    let boxed = pool.spawn_with_handle(move || {
        let (arc, a, b, c, d) = five;
        drop(arc);
        a + b + c + d
    });
    assert_eq!((inline.join().unwrap(), boxed.join().unwrap()), (6, 10));
    assert_eq!(std::sync::Arc::strong_count(&witness), 1);
    let wg = weft::WaitGroup::new();
    wg.add(4);
    for _ in 0..4 {
        let wg = wg.clone();
        pool.spawn(move || {
            wg.done();
        });
    }
    wg.wait();
}

static RAN: AtomicUsize = AtomicUsize::new(0);

/// Spawns closures of every shape into a scope, which keeps one word of the
/// job for its own pointer: nothing captured, one byte, one padded word, one
/// reference, one `Arc`, two words, four words (each fits in the job beside
/// the scope's pointer), and larger or more aligned ones, which are boxed.
fn spawn_every_shape<'scope>(
    s: &weft::Scope<'scope>,
    counter: &'scope AtomicUsize,
    witness: &std::sync::Arc<()>,
) {
    s.spawn(|_| {
        RAN.fetch_add(1, Ordering::Relaxed);
    });
    let byte = 7u8;
    s.spawn(move |_| {
        RAN.fetch_add(usize::from(byte), Ordering::Relaxed);
    });
    let padded = (3u8, 40u32); // 8 bytes, 3 of them padding
    s.spawn(move |_| {
        RAN.fetch_add(usize::from(padded.0) + padded.1 as usize, Ordering::Relaxed);
    });
    s.spawn(move |_| {
        counter.fetch_add(100, Ordering::Relaxed);
    });
    let arc = std::sync::Arc::clone(witness);
    s.spawn(move |_| {
        assert!(std::sync::Arc::strong_count(&arc) >= 2);
        drop(arc);
    });
    s.spawn(move |_| {
        counter.fetch_add(usize::from(byte), Ordering::Relaxed); // two words
    });
    let big = [1usize, 2, 3, 4]; // four words: the most that fits
    s.spawn(move |_| {
        RAN.fetch_add(big.iter().sum::<usize>(), Ordering::Relaxed);
    });
    let wide = [1usize, 2, 3, 4, 5]; // five: with the scope's, more than the job holds: boxed
    s.spawn(move |_| {
        RAN.fetch_add(wide.iter().sum::<usize>(), Ordering::Relaxed);
    });
    let aligned = 5u128; // more aligned than the job's words: boxed
    s.spawn(move |_| {
        RAN.fetch_add(aligned as usize, Ordering::Relaxed);
    });
}

#[test]
fn closures_of_every_size_run_once_in_or_out_of_the_job_word() {
    // Closures of up to four words travel inside a scope's job beside its
    // pointer, larger ones are boxed: each shape, from outside the pool and from a worker, runs
    // once, reads what it captured intact (pointer provenance included, for
    // Miri), and drops it once.
    let pool = pool(2);
    let witness = std::sync::Arc::new(());
    let counter = AtomicUsize::new(0);
    pool.scope(|s| {
        spawn_every_shape(s, &counter, &witness);
        let witness = &witness;
        let counter = &counter;
        s.spawn(move |s| spawn_every_shape(s, counter, witness));
    });
    assert_eq!(RAN.load(Ordering::Relaxed), 2 * (1 + 7 + 43 + 10 + 15 + 5));
    assert_eq!(counter.load(Ordering::Relaxed), 2 * (100 + 7));
    assert_eq!(std::sync::Arc::strong_count(&witness), 1);
    // And through `spawn`, which adds a wrapper of no size: each of these
    // fits in the job, the last two with four and all five of its words,
    // and the one after them is boxed.
    static TARGET: AtomicUsize = AtomicUsize::new(0);
    let target: &'static AtomicUsize = &TARGET;
    let before = RAN.load(Ordering::Relaxed);
    let (byte, padded, arc) = (7u8, (3u8, 40u32), std::sync::Arc::clone(&witness));
    pool.spawn(|| {
        RAN.fetch_add(1, Ordering::Relaxed);
    });
    pool.spawn(move || {
        RAN.fetch_add(usize::from(byte), Ordering::Relaxed);
    });
    pool.spawn(move || {
        RAN.fetch_add(usize::from(padded.0) + padded.1 as usize, Ordering::Relaxed);
    });
    pool.spawn(move || {
        drop(arc);
        RAN.fetch_add(1000, Ordering::Relaxed);
    });
    pool.spawn(move || {
        target.fetch_add(1, Ordering::Relaxed);
        RAN.fetch_add(10_000, Ordering::Relaxed);
    });
    let four = (
        std::sync::Arc::clone(&witness),
        target,
        30_000usize,
        70_000usize,
    );
    pool.spawn(move || {
        let (arc, target, a, b) = four;
        assert!(std::sync::Arc::strong_count(&arc) >= 2);
        target.fetch_add(1, Ordering::Relaxed);
        RAN.fetch_add(a + b, Ordering::Relaxed);
    });
    let five = (
        std::sync::Arc::clone(&witness),
        target,
        100_000usize,
        200_000usize,
        400_000usize,
    );
    pool.spawn(move || {
        let (arc, target, a, b, c) = five;
        assert!(std::sync::Arc::strong_count(&arc) >= 2);
        target.fetch_add(1, Ordering::Relaxed);
        RAN.fetch_add(a + b + c, Ordering::Relaxed);
    });
    let six = [1_000_000usize, 2_000_000, 0, 0, 0, 0];
    pool.spawn(move || {
        RAN.fetch_add(six.iter().sum::<usize>(), Ordering::Relaxed);
    });
    let expected = before + 1 + 7 + 43 + 1000 + 10_000 + 100_000 + 700_000 + 3_000_000;
    while RAN.load(Ordering::Relaxed) < expected {
        std::thread::yield_now();
    }
    drop(pool); // joins the workers: everything queued has run
    assert_eq!(RAN.load(Ordering::Relaxed), expected);
    assert_eq!(TARGET.load(Ordering::Relaxed), 3);
    assert_eq!(std::sync::Arc::strong_count(&witness), 1);
}

#[test]
fn every_closure_is_dropped_once_run() {
    // Miri runs with -Zmiri-ignore-leaks (crossbeam-epoch keeps deferred garbage
    // in its global collector), so our own leaks are counted here instead.
    let witness = std::sync::Arc::new(());
    let pool = pool(2);
    for _ in 0..16 {
        let witness = std::sync::Arc::clone(&witness);
        pool.spawn(move || drop(witness));
    }
    let witness_in_scope = std::sync::Arc::clone(&witness);
    pool.scope(|s| {
        for _ in 0..4 {
            let witness = std::sync::Arc::clone(&witness_in_scope);
            s.spawn(move |_| drop(witness));
        }
    });
    drop(witness_in_scope);
    drop(pool);
    assert_eq!(std::sync::Arc::strong_count(&witness), 1);
}

/// The worker pointer set aside and restored around `weft::blocking`, and a
/// spare seat whose thread runs stack jobs of a join inside the call.
#[test]
fn blocking_sets_the_worker_aside_and_back() {
    let pool = weft::Pool::builder()
        .workers(1)
        .max_blocking(1)
        .build()
        .unwrap();
    let (sender, receiver) = std::sync::mpsc::channel();
    let (inside, after, sum) = pool.install(move || {
        weft::spawn(move || {
            let (a, b) = weft::join(|| 20, || 22);
            sender.send(a + b).unwrap();
        });
        let inside = weft::blocking(weft::current_worker_index);
        let sum = weft::blocking(|| receiver.recv().unwrap());
        (inside, weft::current_worker_index(), sum)
    });
    assert_eq!((inside, after, sum), (None, Some(0), 42));
}

/// Inside `weft::blocking` the free functions find the pool through a raw
/// pointer in a thread-local (blocking.rs, `blocked_pool`), turned back into
/// a counted `Arc` per call: each use must take exactly one reference, and
/// give it back.
#[test]
fn free_functions_inside_blocking_reach_the_pool_through_its_pointer() {
    let pool = weft::Pool::builder()
        .workers(1)
        .max_blocking(1)
        .build()
        .unwrap();
    let total = pool.install(|| {
        weft::blocking(|| {
            let (sender, receiver) = std::sync::mpsc::channel();
            weft::spawn(move || sender.send(1).unwrap());
            let (a, b) = weft::join(|| 2, || 3);
            let mut scoped = 0;
            weft::scope(|s| s.spawn(|_| scoped = 4));
            receiver.recv().unwrap() + a + b + scoped
        })
    });
    assert_eq!(total, 10);
}

/// A panic payload whose destructor panics, dropped by the worker (no panic
/// handler) and by a scope that keeps only its first panic: the worker lives
/// on and the scope's count is still released.
#[test]
fn payloads_that_panic_on_drop_are_contained() {
    struct Bomb;
    impl Drop for Bomb {
        fn drop(&mut self) {
            if !std::thread::panicking() {
                panic!("the payload's destructor panics");
            }
        }
    }
    let pool = pool(1);
    pool.spawn(|| std::panic::panic_any(Bomb));
    assert_eq!(pool.install(|| 7), 7);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.scope(|s| {
            s.spawn(|_| std::panic::panic_any(Bomb));
            s.spawn(|_| std::panic::panic_any(Bomb));
        })
    }));
    // The payload that reaches us is a bomb too: keep it from going off.
    std::mem::forget(caught.expect_err("the scope passes a task's panic on"));
}

/// Futures' polls are queued as the task's own `Arc` (no boxed closure): the
/// reference each queued poll holds is taken back exactly once, through the
/// local queue, the `next` slot (a wake from a poll), the yield queue and the
/// global queue (a wake from outside).
#[test]
fn futures_queue_their_task_arc_once_per_poll() {
    let pool = pool(2);
    let event = weft::Event::new(weft::EventMode::Auto);
    let waiter = {
        let event = event.clone();
        pool.spawn_future(async move {
            event.wait_async().await;
            weft::yield_async().await;
            7
        })
    };
    let relay = {
        let event = event.clone();
        pool.spawn_future(async move {
            weft::yield_async().await;
            event.signal();
        })
    };
    relay.join().unwrap();
    assert_eq!(weft::block_on(waiter).unwrap(), 7);
    // From outside the pool: the wake goes through the global queue.
    let event2 = weft::Event::new(weft::EventMode::Auto);
    let waiting = {
        let event2 = event2.clone();
        pool.spawn_future(async move { event2.wait_async().await })
    };
    event2.signal();
    waiting.join().unwrap();
}

/// Counts its drops, to show each moved-out item is dropped exactly once.
struct Dropped<'a>(&'a AtomicUsize, usize);

impl Drop for Dropped<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn vec_items_moved_into_a_parallel_loop_are_dropped_once() {
    use weft::prelude::*;
    let pool = pool(2);
    let drops = AtomicUsize::new(0);
    let make = |n: usize| (0..n).map(|i| Dropped(&drops, i)).collect::<Vec<_>>();
    pool.install(|| {
        // Consumed in full; cut by take and skip; stopped early.
        let kept: Vec<Dropped<'_>> = make(40).into_par_iter().collect();
        assert_eq!(kept.len(), 40);
        drop(kept);
        assert_eq!(make(40).into_par_iter().take(7).count(), 7);
        assert_eq!(make(40).into_par_iter().skip(30).count(), 10);
        assert!(make(40).into_par_iter().any(|item| item.1 == 3));
    });
    assert_eq!(drops.load(Ordering::SeqCst), 160);
}

#[test]
fn an_unindexed_collect_joins_large_pieces_moving_each_item_once() {
    use weft::prelude::*;
    let drops = AtomicUsize::new(0);
    // 8 KiB items: 20 of the 40 kept are over the size at which the pieces
    // are copied into the output by a parallel loop, in blocks that start
    // inside pieces; 40 items split at once, into many pieces.
    let collect = || {
        (0..40usize)
            .into_par_iter()
            .filter(|i| i % 2 == 0)
            .map(|i| (Dropped(&drops, i), [i as u64; 1024]))
            .collect::<Vec<_>>()
    };
    for kept in [collect(), pool(2).install(collect)] {
        assert_eq!(kept.len(), 20);
        for (n, (item, payload)) in kept.iter().enumerate() {
            assert_eq!(item.1, 2 * n);
            assert!(payload.iter().all(|&x| x == 2 * n as u64));
        }
    }
    assert_eq!(drops.load(Ordering::SeqCst), 40);
}

#[test]
fn items_over_a_join_block_are_joined_each_once() {
    use weft::prelude::*;
    // Items of 72 KiB, each over the 64 KiB block of the parallel join: a
    // block of one item each. Every unindexed way into that join: a
    // `par_extend` onto a non-empty `Vec`, a `collect` of several pieces,
    // `partition` and `unzip`.
    type Big<'a> = (Dropped<'a>, [u64; 9 * 1024]);
    let drops = AtomicUsize::new(0);
    let big = |i: usize| -> Big<'_> { (Dropped(&drops, i), [i as u64; 9 * 1024]) };
    let check = |items: &[Big<'_>], ids: &[usize]| {
        assert_eq!(items.iter().map(|(d, _)| d.1).collect::<Vec<_>>(), ids);
        for (d, payload) in items {
            assert!(payload.iter().all(|&x| x == d.1 as u64));
        }
    };
    pool(2).install(|| {
        let mut extended = vec![big(100)];
        extended.par_extend((0..3usize).into_par_iter().filter(|_| true).map(big));
        check(&extended, &[100, 0, 1, 2]);
        let collected: Vec<Big<'_>> = (0..3usize)
            .into_par_iter()
            .with_max_len(1)
            .filter(|_| true)
            .map(big)
            .collect();
        check(&collected, &[0, 1, 2]);
        let (even, odd): (Vec<Big<'_>>, Vec<Big<'_>>) = (0..4usize)
            .into_par_iter()
            .with_max_len(1)
            .map(big)
            .partition(|(d, _)| d.1 % 2 == 0);
        check(&even, &[0, 2]);
        check(&odd, &[1, 3]);
        let (left, right): (Vec<Big<'_>>, Vec<Big<'_>>) = (0..2usize)
            .into_par_iter()
            .filter(|_| true)
            .map(|i| (big(i), big(10 + i)))
            .unzip();
        check(&left, &[0, 1]);
        check(&right, &[10, 11]);
    });
    assert_eq!(drops.load(Ordering::SeqCst), 4 + 3 + 4 + 4);
}

#[test]
fn a_collect_that_panics_midway_drops_what_it_wrote() {
    use weft::prelude::*;
    let drops = AtomicUsize::new(0);
    // From outside any pool (the caller folds chunks itself) and inside one.
    let run = || {
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            (0..64usize)
                .into_par_iter()
                .map(|i| {
                    assert!(i != 50, "item 50");
                    Dropped(&drops, i)
                })
                .collect::<Vec<_>>()
        }));
        assert!(result.is_err());
    };
    run();
    let written_outside = drops.load(Ordering::SeqCst);
    assert!(written_outside <= 63);
    pool(2).install(run);
    assert!(drops.load(Ordering::SeqCst) <= written_outside + 63);
}

#[test]
fn a_parallel_loop_from_outside_hands_its_rest_to_the_pool() {
    use weft::prelude::*;
    // A long loop of slow-ish items from a thread outside any pool: the
    // caller's chunks and the pool task's pieces meet in the middle.
    let total: u64 = (0..200u64)
        .into_par_iter()
        .map(|x| {
            std::thread::yield_now();
            x
        })
        .sum();
    assert_eq!(total, 199 * 200 / 2);
    let squares: Vec<u64> = (0..300u64).into_par_iter().map(|x| x * x).collect();
    assert!(squares
        .iter()
        .enumerate()
        .all(|(i, &s)| s == (i * i) as u64));
}

/// The seat of `use_current_thread` has no guard frame: its state is leaked
/// while held, borrowed by a scope across the pool's drop, forgotten by the
/// context at the drop and freed when the thread exits.
#[test]
fn the_building_threads_seat_is_freed_once_at_thread_exit() {
    std::thread::spawn(|| {
        let pool = weft::Pool::builder()
            .workers(2)
            .use_current_thread()
            .build()
            .unwrap();
        let ran = AtomicUsize::new(0);
        let mut pool = Some(pool);
        weft::scope(|s| {
            for _ in 0..4 {
                s.spawn(|_| {
                    ran.fetch_add(1, Ordering::Relaxed);
                });
            }
            // The scope still borrows the seat as the pool shuts down.
            drop(pool.take());
        });
        assert_eq!(ran.load(Ordering::Relaxed), 4);
        assert_eq!(weft::current_thread_index(), None);
    })
    .join()
    .unwrap();
}

/// A spawned future is stored in its task, pinned there: a future that is
/// not `Unpin` sees its own address unchanged from poll to poll and in its
/// destructor, and is dropped once, in place, whether it finishes, is
/// aborted while waiting, panics, or panics again in its destructor.
#[test]
fn spawned_futures_stay_pinned_in_their_task_and_drop_once_in_place() {
    use std::future::Future;
    use std::marker::PhantomPinned;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    static DROPS: AtomicUsize = AtomicUsize::new(0);

    /// Ready on its third poll (or never, if `forever`), after checking its
    /// address each time; panics on that poll if `bomb`, and in its drop too
    /// if `bomb` and already finished.
    struct Pinned {
        seen_at: Option<usize>,
        polls: u32,
        forever: Option<weft::Event>,
        bomb: bool,
        _pin: PhantomPinned,
    }
    impl Future for Pinned {
        type Output = u32;
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u32> {
            // SAFETY: nothing is moved out; only plain fields are written.
            let this = unsafe { self.get_unchecked_mut() };
            let here = this as *const Pinned as usize;
            assert_eq!(
                *this.seen_at.get_or_insert(here),
                here,
                "moved between polls"
            );
            this.polls += 1;
            if this.forever.is_some() || this.polls < 3 {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            if this.bomb {
                panic!("the future panics");
            }
            Poll::Ready(this.polls)
        }
    }
    impl Drop for Pinned {
        fn drop(&mut self) {
            if let Some(seen_at) = self.seen_at {
                assert_eq!(
                    seen_at, self as *const Pinned as usize,
                    "moved before its drop"
                );
            }
            DROPS.fetch_add(1, Ordering::SeqCst);
            if self.bomb && !std::thread::panicking() {
                panic!("and its destructor panics");
            }
        }
    }
    let pinned = |forever: Option<weft::Event>, bomb| Pinned {
        seen_at: None,
        polls: 0,
        forever,
        bomb,
        _pin: PhantomPinned,
    };
    let pool = pool(2);
    assert_eq!(pool.spawn_future(pinned(None, false)).join().unwrap(), 3);
    assert!(pool.spawn_future(pinned(None, true)).join().is_err());
    let waiting = pool.spawn_future(pinned(Some(weft::Event::new(weft::EventMode::Auto)), false));
    waiting.abort();
    assert!(waiting.join().unwrap_err().is::<weft::Aborted>());
    drop(pool);
    assert_eq!(DROPS.load(Ordering::SeqCst), 3);
}

/// A spawned future's task is one allocation that its handle shares with
/// its wakers, which are written by hand (a vtable over the task's `Arc`,
/// counting the references that can lead to a poll). Every way a waker is
/// used: the borrowed one a poll hands its future, cloned and kept, woken
/// by value and by reference, from a worker and from a plain thread, and
/// dropped for good, which drops a pending future while its handle lives;
/// an abort of an idle future; a future that awaits its own handle, which
/// only the pool's drop breaks. Each future is dropped once, and every
/// reference given back (the witness's count returns to one).
#[test]
fn hand_written_wakers_keep_the_task_alive_exactly_as_long_as_needed() {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::atomic::AtomicBool;
    use std::sync::{Arc, Mutex};
    use std::task::{Context, Poll, Waker};

    /// Pending until `open`, keeping its waker in `slot` (replacing an older
    /// one); its captures include the witness.
    struct Gate {
        slot: Arc<Mutex<Option<Waker>>>,
        open: Arc<AtomicBool>,
        _witness: Arc<()>,
    }
    impl Future for Gate {
        type Output = u8;
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u8> {
            if self.open.load(Ordering::SeqCst) {
                return Poll::Ready(9);
            }
            *self.slot.lock().unwrap() = Some(cx.waker().clone());
            Poll::Pending
        }
    }
    let witness = Arc::new(());
    let pool = pool(2);
    let gate = || {
        let slot = Arc::new(Mutex::new(None::<Waker>));
        let open = Arc::new(AtomicBool::new(false));
        let future = Gate {
            slot: Arc::clone(&slot),
            open: Arc::clone(&open),
            _witness: Arc::clone(&witness),
        };
        (future, slot, open)
    };
    let parked = |slot: &Mutex<Option<Waker>>| loop {
        if let Some(waker) = slot.lock().unwrap().clone() {
            return waker;
        }
        std::thread::yield_now();
    };

    // Woken by value from a plain thread, after a clone was woken by
    // reference and dropped.
    let (future, slot, open) = gate();
    let handle = pool.spawn_future(future);
    let waker = parked(&slot);
    waker.wake_by_ref();
    drop(waker);
    open.store(true, Ordering::SeqCst);
    let waker = slot.lock().unwrap().take().unwrap();
    std::thread::spawn(move || waker.wake()).join().unwrap();
    assert_eq!(handle.join().unwrap(), 9);

    // Every waker dropped while the handle waits: the future is dropped and
    // the handle reports it.
    let (future, slot, _open) = gate();
    let handle = pool.spawn_future(future);
    drop(parked(&slot));
    drop(slot.lock().unwrap().take());
    assert!(handle.join().is_err());

    // An abort of an idle future, its waker still kept.
    let (future, slot, _open) = gate();
    let handle = pool.spawn_future(future);
    drop(parked(&slot));
    handle.abort();
    assert!(handle.join().unwrap_err().is::<weft::Aborted>());
    drop(slot.lock().unwrap().take());

    // A future that awaits its own handle: its waker lives in its own task;
    // the pool's drop breaks the cycle.
    let (send, receive) = std::sync::mpsc::channel::<weft::JoinHandle<()>>();
    let captured = Arc::clone(&witness);
    let own = pool.spawn_future(async move {
        let _witness = captured;
        let me = receive.recv().unwrap();
        let _ = me.await;
    });
    send.send(own).unwrap();
    drop(pool);
    assert_eq!(Arc::strong_count(&witness), 1);
}
