//! std threads baseline: no pool at all, `std::thread::scope` spawns one OS
//! thread per task. It fits only scenarios made of rounds of a few long
//! tasks (fork-join); for the rest it is n/a.

/// Runs `task` once on each of `threads` fresh scoped threads and waits.
pub fn run_round(threads: usize, task: &(dyn Fn() + Sync)) {
    ::std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(task);
        }
    });
}
