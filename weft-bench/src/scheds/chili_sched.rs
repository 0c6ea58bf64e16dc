//! chili adapter: a heartbeat fork-join pool with `join` only (no spawn).
//! chili counts the thread that opens the scope as one of its threads, so a
//! pool of `workers` threads spawns `workers - 1` and the caller joins in.

use std::num::NonZeroUsize;

pub fn build(workers: usize) -> chili::ThreadPool {
    chili::ThreadPool::with_config(chili::Config {
        thread_count: NonZeroUsize::new(workers),
        ..Default::default()
    })
}
