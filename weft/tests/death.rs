//! Death tests: a process that ends in awkward states still ends cleanly.
//! Each case runs in a child process (this test binary, re-run with the case
//! named in an environment variable) so that exiting is what is tested.

use std::time::Duration;

mod common;

const CASE_ENV: &str = "WEFT_DEATH_CASE";

/// The child side: does nothing unless a case is named.
#[test]
fn child_entry() {
    let Ok(case) = std::env::var(CASE_ENV) else {
        return;
    };
    match case.as_str() {
        "exit-with-busy-pool" => {
            let pool = weft::Pool::builder().workers(4).build().unwrap();
            for _ in 0..64 {
                pool.spawn(|| std::thread::sleep(Duration::from_millis(5)));
            }
            std::process::exit(0);
        }
        "forget-a-parked-pool" => {
            let pool = weft::Pool::builder().workers(8).build().unwrap();
            pool.install(|| ());
            std::mem::forget(pool);
        }
        "global-pool-left-running" => {
            weft::spawn(|| ());
            let (a, b) = weft::join(|| 1, || 2);
            assert_eq!(a + b, 3);
        }
        "panicking-tasks-then-drop" => {
            let pool = weft::Pool::builder().workers(2).build().unwrap();
            for _ in 0..10 {
                pool.spawn(|| panic!("expected panic in a death test"));
            }
            drop(pool);
        }
        "drop-while-workers-park" => {
            for _ in 0..50 {
                let pool = weft::Pool::builder().workers(16).build().unwrap();
                pool.spawn(|| ());
                drop(pool);
            }
        }
        other => panic!("unknown death case {other}"),
    }
}

fn run_case(case: &str) {
    // A hang is the failure this guards against; the limit is far beyond need.
    common::run_child_case(CASE_ENV, case, Duration::from_secs(120));
}

#[test]
fn process_exit_with_a_busy_pool_is_clean() {
    run_case("exit-with-busy-pool");
}

#[test]
fn returning_from_main_with_a_forgotten_parked_pool_is_clean() {
    run_case("forget-a-parked-pool");
}

#[test]
fn returning_from_main_with_the_global_pool_running_is_clean() {
    run_case("global-pool-left-running");
}

#[test]
fn panicking_tasks_then_drop_is_clean() {
    run_case("panicking-tasks-then-drop");
}

#[test]
fn dropping_pools_while_their_workers_park_is_clean() {
    run_case("drop-while-workers-park");
}
