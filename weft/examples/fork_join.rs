//! marl issue 232's scenario on weft: rounds of one 10 ms task per worker,
//! submitted to a pool that parked between rounds. Prints, per round, the
//! time it took against the ideal 10 ms and how many distinct workers ran it.
//!
//! `cargo run --release -p weft --example fork_join -- [workers] [rounds]`

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let workers: usize = args.next().map_or(8, |a| a.parse().expect("workers"));
    let rounds: usize = args.next().map_or(8, |a| a.parse().expect("rounds"));
    let pool = weft::Pool::builder()
        .workers(workers)
        .build()
        .expect("pool");
    let task = Duration::from_millis(10);
    println!("round  wall      ideal/actual  workers used");
    for round in 0..rounds {
        std::thread::sleep(Duration::from_millis(20)); // let the pool park
        let used = Arc::new(Mutex::new(HashSet::new()));
        let started = Instant::now();
        pool.scope(|s| {
            for _ in 0..workers {
                let used = Arc::clone(&used);
                s.spawn(move |_| {
                    used.lock().unwrap().insert(weft::current_worker_index());
                    std::thread::sleep(task);
                });
            }
        });
        let wall = started.elapsed();
        let used = used.lock().unwrap().len();
        println!(
            "{round:>5}  {:>7.2?}  {:>12.3}  {used}/{workers}",
            wall,
            task.as_secs_f64() / wall.as_secs_f64()
        );
    }
}
