//! `Pool::set_global_maker`: a maker that panics the first time it is
//! called (with a payload that panics if dropped), then builds a pool whose
//! start hooks spawn, while several threads need the global pool at once.
//! One test in this binary, as the global pool is the process's.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

const MAKER_WORKERS: usize = 5;

static MAKER_CALLS: AtomicUsize = AtomicUsize::new(0);
static FAIL_NEXT: AtomicBool = AtomicBool::new(true);
static HOOK_TASKS_RUN: AtomicUsize = AtomicUsize::new(0);

/// A panic payload that panics again if anyone drops it.
struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        panic!("a maker's panic payload was dropped");
    }
}

fn maker() -> weft::Pool {
    MAKER_CALLS.fetch_add(1, Ordering::SeqCst);
    if FAIL_NEXT.swap(false, Ordering::SeqCst) {
        panic::panic_any(Bomb);
    }
    weft::Pool::builder()
        .workers(MAKER_WORKERS)
        .on_thread_start(|_| {
            // A start hook's spawn goes to the pool being built (its
            // worker's), never to the global pool that is being made.
            weft::spawn(|| {
                HOOK_TASKS_RUN.fetch_add(1, Ordering::SeqCst);
            });
        })
        .build()
        .unwrap()
}

#[test]
fn a_maker_that_panics_is_called_again_and_its_pool_serves_every_caller() {
    weft::Pool::set_global_maker(maker).unwrap();
    assert_eq!(
        MAKER_CALLS.load(Ordering::SeqCst),
        0,
        "nothing is built yet"
    );

    // The first use panics with the maker's payload, handed to the caller
    // untouched (dropping it would panic again).
    let first = panic::catch_unwind(AssertUnwindSafe(weft::current_num_threads));
    let payload = first.expect_err("the maker panicked");
    assert!(payload.is::<Bomb>());
    std::mem::forget(payload);
    // The lazy build has begun: another maker is refused.
    assert!(weft::Pool::set_global_maker(maker).is_err());

    // Then eight threads need the pool at once: the maker runs once more,
    // and every caller sees its pool.
    let barrier = Barrier::new(8);
    let seen: Vec<(usize, Option<usize>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    let (threads, index) =
                        weft::join(weft::current_num_threads, weft::current_thread_index);
                    (threads, index)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (threads, index) in seen {
        assert_eq!(threads, MAKER_WORKERS);
        assert!(index.unwrap() < MAKER_WORKERS);
    }
    assert_eq!(MAKER_CALLS.load(Ordering::SeqCst), 2);

    // Every start hook's task ran on the new pool.
    let start = Instant::now();
    while HOOK_TASKS_RUN.load(Ordering::SeqCst) < MAKER_WORKERS
        && start.elapsed() < Duration::from_secs(20)
    {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(HOOK_TASKS_RUN.load(Ordering::SeqCst), MAKER_WORKERS);
    assert!(weft::Pool::set_global_maker(maker).is_err());
}
