//! Resource exhaustion: the kernel's cap on a process's memory mappings, and a capped address space.

use super::*;

// ---------------------------------------------------------------------------
// Resource exhaustion: the kernel's cap on a process's memory mappings.

/// The kernel's cap on mappings per process, where it is low enough for a
/// test to pass it (each fiber stack is two mappings); `None` elsewhere,
/// and the cases below then say so and return.
pub(super) fn reachable_map_limit() -> Option<usize> {
    let limit: usize = std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()?
        .trim()
        .parse()
        .ok()?;
    if limit > 200_000 {
        eprintln!("vm.max_map_count is {limit}: too many fibers to pass it here");
        return None;
    }
    Some(limit)
}

/// Holds `tasks` tasks of each pool in a wait on one event, signals it once
/// no more start, and checks that every task finishes once. Not every task
/// need start before the signal: past the fibers weft can map, each worker
/// nests helped waits until its stack is three quarters used and then
/// blocks, so a few workers hold fewer waits than the process could map.
pub(super) fn wait_on_one_event(pools: &[Pool], tasks: usize) {
    let go = Event::new(EventMode::Manual);
    let started = counter();
    let finished = counter();
    for pool in pools {
        for _ in 0..tasks {
            let (go, started, finished) = (go.clone(), Arc::clone(&started), Arc::clone(&finished));
            pool.spawn(move || {
                started.fetch_add(1, SeqCst);
                go.wait();
                finished.fetch_add(1, SeqCst);
            });
        }
    }
    let all = tasks * pools.len();
    let limit = Duration::from_secs(40);
    let mut seen = 0;
    let mut still = 0;
    eventually(limit, || {
        let now = started.load(SeqCst);
        still = if now == seen { still + 1 } else { 0 };
        seen = now;
        now == all || still == 100
    });
    eprintln!("{seen} of {all} tasks started before the signal");
    go.signal();
    assert!(
        eventually(limit, || finished.load(SeqCst) == all),
        "{} of {all} tasks finished",
        finished.load(SeqCst)
    );
}

/// More tasks waiting at once than the kernel lets the process map fiber
/// stacks for, in one pool whose cap on suspended tasks would allow them
/// all: the waits past the mappings weft can have help instead of
/// suspending, and every task finishes once.
pub(super) fn waits_past_the_map_limit() {
    let Some(limit) = reachable_map_limit() else {
        return;
    };
    let tasks = limit / 2 + 1_000;
    let pool = Pool::builder()
        .workers(4)
        .max_suspended(tasks)
        .build()
        .unwrap();
    wait_on_one_event(std::slice::from_ref(&pool), tasks);
}

/// Two pools with the default settings, each with its default cap of
/// suspended tasks waiting: together past the process's mappings, and
/// every task of both finishes once.
pub(super) fn two_default_pools_past_the_map_limit() {
    if reachable_map_limit().is_none() {
        return;
    }
    let pools = [
        Pool::builder().workers(4).build().unwrap(),
        Pool::builder().workers(4).build().unwrap(),
    ];
    wait_on_one_event(&pools, weft::DEFAULT_MAX_SUSPENDED);
}

/// Caps the process's address space at what it maps now plus `spare`
/// bytes (`RLIMIT_AS`), so that the next large mappings fail.
pub(super) fn cap_address_space(spare: usize) {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kib: usize = status
        .lines()
        .find_map(|line| line.strip_prefix("VmSize:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmSize in /proc/self/status");
    let cap = (kib * 1024 + spare) as libc::rlim_t;
    let limit = libc::rlimit {
        rlim_cur: cap,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: setrlimit reads the struct it is given and changes only the
    // limit of this (child) process.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) }, 0);
}

/// With the address space capped a little above what the process maps
/// (room for a few dozen 2 MiB fiber stacks, not for hundreds), a pool
/// whose tasks all wait on one event, some of them inside a `blocking`
/// call whose spare thread may not start: the waits that get no fiber help,
/// the blocking calls run with or without a stand-in, and every task
/// finishes once.
pub(super) fn waits_and_blocking_past_the_address_space() {
    let pool = Pool::builder().workers(2).max_blocking(4).build().unwrap();
    // Touch the pool once, so its first fibers exist before the cap, and
    // every worker once: a thread that the OS has not yet run when the cap
    // comes fails in std's own start (its signal stack cannot be mapped),
    // which is no part of what this case tests.
    pool.install(|| weft::join(|| (), || ()));
    pool.broadcast(|_| ());
    cap_address_space(64 << 20);
    let go = Event::new(EventMode::Manual);
    let finished = counter();
    let tasks = 400;
    for i in 0..tasks {
        let (go, finished) = (go.clone(), Arc::clone(&finished));
        pool.spawn(move || {
            if i % 50 == 0 {
                weft::blocking(|| go.wait());
            } else {
                go.wait();
            }
            finished.fetch_add(1, SeqCst);
        });
    }
    thread::sleep(Duration::from_millis(200));
    let suspended = pool.stats().suspended_now;
    assert!(
        suspended < tasks - tasks / 50,
        "{suspended} tasks suspended: the cap left room for every fiber"
    );
    go.signal();
    assert!(
        eventually(Duration::from_secs(40), || finished.load(SeqCst) == tasks),
        "{} of {tasks} tasks finished",
        finished.load(SeqCst)
    );
    drop(pool);
}

/// With the address space capped so that no thread stack fits: a pool
/// that asks for new threads fails to build with `ThreadSpawn` and leaves
/// no thread behind, and a pool built before the cap still runs tasks and
/// `blocking` calls (their spare threads cannot start; each call runs
/// without a stand-in) and drops.
pub(super) fn threads_past_the_address_space() {
    let pool = Pool::builder().workers(2).build().unwrap();
    pool.install(|| weft::join(|| (), || ()));
    // Every worker started before the cap (see above).
    pool.broadcast(|_| ());
    let threads_before = thread_count();
    cap_address_space(1 << 20);
    for workers in [1, 4, 16] {
        match Pool::builder().workers(workers).stack_size(8 << 20).build() {
            Err(weft::BuildError::ThreadSpawn { .. }) => {}
            Err(other) => panic!("{workers} workers: {other}"),
            Ok(_) => panic!("{workers} workers of 8 MiB started within 1 MiB"),
        }
        assert_eq!(thread_count(), threads_before, "{workers} workers");
    }
    let ran = counter();
    let done = WaitGroup::new();
    for _ in 0..8 {
        done.add(1);
        let (ran, done) = (Arc::clone(&ran), done.clone());
        pool.spawn(move || {
            weft::blocking(|| ran.fetch_add(1, SeqCst));
            done.done();
        });
    }
    assert!(
        done.wait_timeout(WAIT),
        "{} of 8 tasks ran",
        ran.load(SeqCst)
    );
    drop(pool);
}
