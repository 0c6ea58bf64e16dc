//! A global pool of more workers than cores, and a long loop from outside
//! it whose items sleep: once the caller finds its items waiting (from its
//! thread's usage, read on Linux only), the loop runs on more threads than
//! the cores, as the pool's workers were made to (a long loop of items
//! that keep their core gets at most one thread a core, the caller among
//! them, or two threads on one core). One binary, as the global pool is
//! the process's.

#![cfg(all(target_os = "linux", not(miri)))]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

use weft::prelude::*;

#[test]
fn a_long_loop_of_waiting_items_from_outside_gets_every_worker() {
    let cores = thread::available_parallelism().map_or(1, usize::from);
    let workers = cores + 4;
    weft::Pool::builder()
        .workers(workers)
        .build_global()
        .expect("the global pool is built here first");
    // The most threads a long loop gets before its items are seen to wait.
    let capped = cores.min(workers).max(2);

    let (in_flight, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let items = 200;
    // Twice: a first call sees its items wait only once the pool has its
    // part, which on three cores or more is already cut for the capped
    // helpers (its pieces spread as other workers take them); the second
    // looks at its first chunk, as its thread timed slow items last, and
    // hands the pool a part cut for every worker.
    for call in 0..2 {
        let ran: Vec<usize> = (0..items)
            .into_par_iter()
            .map(|item| {
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                thread::sleep(Duration::from_millis(2));
                in_flight.fetch_sub(1, Ordering::SeqCst);
                item
            })
            .collect();
        assert_eq!(
            ran,
            (0..items).collect::<Vec<_>>(),
            "every item once, in order (call {call})"
        );
    }
    let most = most.into_inner();
    assert!(
        most > capped,
        "at most {most} of the items slept at once on a pool of {workers} workers \
         on {cores} cores: the loops kept to their cap of {capped} threads"
    );
}
