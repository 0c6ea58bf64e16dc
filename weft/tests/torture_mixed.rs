//! Closures, futures and blocking calls on one pool with many more workers
//! than cores: every path a job can take (local queue, yield queue, `next`
//! slot, global queue, spare seats, helping waits) under load at once. Every
//! unit of work must run exactly once, and the pool must drain and join.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

const ROUNDS: usize = 3;
const CHAINS: usize = 500;
const YIELDS: usize = 50;

#[test]
fn closures_futures_and_blocking_calls_each_run_once() {
    for round in 0..ROUNDS {
        let pool = weft::Pool::builder()
            .workers(96)
            .max_blocking(16)
            .build()
            .unwrap();
        // One slot per unit of work, counted when it runs.
        let runs: Arc<Vec<AtomicUsize>> =
            Arc::new((0..CHAINS * 4).map(|_| AtomicUsize::new(0)).collect());
        let done = weft::WaitGroup::new();
        done.add(CHAINS * 4);
        for chain in 0..CHAINS {
            let (runs, done) = (runs.clone(), done.clone());
            pool.spawn(move || {
                // 1: a closure that joins and spawns a future.
                let (a, b) = weft::join(|| chain * 2, || chain * 2 + 1);
                assert_eq!(a + 1, b);
                runs[chain * 4].fetch_add(1, Ordering::Relaxed);
                done.done();
                // 2 and 3: two futures that pass a baton (next slot) and yield
                // (yield queue) before finishing.
                let (ping, pong) = (
                    weft::Event::new(weft::EventMode::Auto),
                    weft::Event::new(weft::EventMode::Auto),
                );
                for (slot, mine, theirs) in [
                    (chain * 4 + 1, ping.clone(), pong.clone()),
                    (chain * 4 + 2, pong, ping),
                ] {
                    let (runs, done) = (runs.clone(), done.clone());
                    drop(weft::spawn_future(async move {
                        for _ in 0..YIELDS {
                            theirs.signal();
                            mine.wait_async().await;
                            weft::yield_async().await;
                        }
                        // Let the partner finish its last wait.
                        theirs.signal();
                        runs[slot].fetch_add(1, Ordering::Relaxed);
                        done.done();
                    }));
                }
                // 4: a blocking call now and then, spawning from inside it.
                let (runs, done) = (runs.clone(), done.clone());
                let last = move || {
                    runs[chain * 4 + 3].fetch_add(1, Ordering::Relaxed);
                    done.done();
                };
                if chain % 7 == 0 {
                    weft::blocking(move || {
                        std::thread::sleep(Duration::from_micros(200));
                        weft::spawn(last);
                    });
                } else {
                    weft::spawn(last);
                }
            });
        }
        assert!(
            done.wait_timeout(Duration::from_secs(120)),
            "round {round}: work was lost"
        );
        drop(pool);
        for (slot, count) in runs.iter().enumerate() {
            assert_eq!(
                count.load(Ordering::Relaxed),
                1,
                "round {round}: unit {slot} ran a wrong number of times"
            );
        }
    }
}
