//! `Pool::set_global_maker` racing the global pool's first use from other
//! threads: either the maker was set in time, and every caller sees its
//! pool, or it was refused, and every caller sees the default pool. One
//! test in this binary, as the global pool is the process's.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Barrier;

static MAKER_CALLS: AtomicUsize = AtomicUsize::new(0);

fn seven_workers() -> weft::Pool {
    MAKER_CALLS.fetch_add(1, Ordering::SeqCst);
    weft::Pool::builder().workers(7).build().unwrap()
}

#[test]
fn a_maker_set_while_others_use_the_global_pool_is_used_exactly_when_accepted() {
    let barrier = Barrier::new(9);
    let (accepted, seen) = std::thread::scope(|s| {
        let users: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    weft::join(weft::current_num_threads, || ()).0
                })
            })
            .collect();
        let setter = s.spawn(|| {
            barrier.wait();
            weft::Pool::set_global_maker(seven_workers).is_ok()
        });
        let seen: Vec<usize> = users.into_iter().map(|h| h.join().unwrap()).collect();
        (setter.join().unwrap(), seen)
    });
    let expected = if accepted {
        7
    } else {
        weft::Builder::new().build().unwrap().workers()
    };
    assert!(
        seen.iter().all(|&threads| threads == expected),
        "maker accepted: {accepted}; callers saw {seen:?}"
    );
    assert_eq!(MAKER_CALLS.load(Ordering::SeqCst), usize::from(accepted));
    assert_eq!(weft::current_num_threads(), expected);
}
