//! A global pool of one worker: a long parallel loop called from outside
//! the pool runs on the calling thread alone, as a pool of one thread
//! runs it, and never on the worker beside it (the caller folding beside
//! its one worker would keep two cores busy). A loop of few items, whose
//! items may sleep, still gets the worker. One binary, as the global pool
//! is the process's.

use std::collections::HashSet;
use std::sync::Mutex;
use std::thread::{self, ThreadId};

use weft::prelude::*;

#[test]
fn one_worker_runs_long_loops_from_outside_on_the_caller_alone() {
    weft::Pool::builder()
        .workers(1)
        .build_global()
        .expect("the global pool is built here first");
    assert_eq!(weft::current_num_threads(), 1);
    let caller = thread::current().id();

    // Long loops of every kind of consumer: each item records its thread.
    let threads = Mutex::new(HashSet::<ThreadId>::new());
    let seen = || {
        threads.lock().unwrap().insert(thread::current().id());
    };
    // Halfway through, the caller stops for 50 ms: where the pool has a
    // part of the loop (a pool of more workers, or the rule before), its
    // worker takes it meanwhile and shows in `threads`.
    let sum: u64 = (0..200_000u64)
        .into_par_iter()
        .map(|x| {
            if x % 1024 == 0 {
                seen();
            }
            if x == 100_000 {
                thread::sleep(std::time::Duration::from_millis(50));
            }
            x
        })
        .sum();
    assert_eq!(sum, 199_999 * 200_000 / 2);
    let squares: Vec<u64> = (0..100_000u64)
        .into_par_iter()
        .inspect(|&x| {
            if x % 1024 == 0 {
                seen();
            }
        })
        .map(|x| x * x)
        .collect();
    assert!(squares
        .iter()
        .enumerate()
        .all(|(i, &s)| s == (i * i) as u64));
    let found = (0..1_000_000u64).into_par_iter().find_any(|&x| {
        if x % 1024 == 0 {
            seen();
        }
        x == 300_000
    });
    assert_eq!(found, Some(300_000));
    assert_eq!(*threads.lock().unwrap(), HashSet::from([caller]));

    // A panic midway reaches the caller, and the pool runs on.
    let caught = std::panic::catch_unwind(|| {
        (0..100_000u32).into_par_iter().for_each(|x| {
            if x == 50_000 {
                panic!("item 50000");
            }
        })
    });
    assert!(caught.is_err());

    // Few items, each of which may sleep: the worker takes part. Each item
    // waits (for at most a minute) until a thread other than the caller
    // has run one, so that the caller cannot finish the loop before the
    // worker comes.
    let few = Mutex::new(HashSet::<ThreadId>::new());
    let worker_came = || few.lock().unwrap().iter().any(|&id| id != caller);
    (0..8).into_par_iter().for_each(|_| {
        few.lock().unwrap().insert(thread::current().id());
        let start = std::time::Instant::now();
        while !worker_came() && start.elapsed().as_secs() < 60 {
            thread::sleep(std::time::Duration::from_millis(1));
        }
    });
    let few = few.into_inner().unwrap();
    assert!(few.iter().any(|&id| id != caller), "{few:?}");
}
