//! The spawn path by the size of what a closure captures: empty tasks whose
//! closures hold 8 to 64 bytes, from an outside thread (a flood), from
//! inside the pool (chains of tasks that each spawn the next), and into a
//! scope (the pools that have one). Every peer allocates each closure; weft
//! stores those of up to 32 bytes in the job itself, however spawned (its
//! job.rs says why that size), so these rows show what the allocation costs
//! and where weft's path stops avoiding it.

use std::hint::black_box;

use super::{leak, ns_per, timed, warm_up, Case, Measured, Needs, TASKS};
use crate::latch::Latch;
use crate::scheds::{Cap, Sched, SchedKind};
use crate::with_peer;

/// One pool's chains: where each task finds the pool and the latch, so
/// that a chain's closure holds only this reference, its countdown and its
/// padding.
struct Chain<S: 'static> {
    pool: &'static S,
    latch: Latch,
}

/// `n` empty tasks from this thread, each capturing the latch's reference
/// and `PAD` unused words: `8 * (PAD + 1)` bytes of closure.
fn flood<S: Sched, const PAD: usize>(workers: usize, n: usize) -> Measured {
    let pool = leak(S::build(workers));
    warm_up(pool, workers);
    let latch = leak(Latch::new(n));
    let ((), wall, cpu) = timed(|| {
        for i in 0..n {
            let unused = [i as u64; PAD];
            pool.spawn(move || {
                black_box(&unused);
                latch.count_down();
            });
        }
        latch.wait();
    });
    Measured::new(wall, cpu, ns_per(wall, n as u64))
}

/// One task of a chain: spawns the next from inside the pool until `left`
/// runs out, and the last counts the chain down. Captures the chain's
/// reference, `left` and `PAD` unused words: `8 * (PAD + 2)` bytes. Only a
/// chain's end touches the shared latch, so the row measures the spawn path
/// and not the latch's cache line moving between the chains' workers.
fn chain_link<S: Sched, const PAD: usize>(chain: &'static Chain<S>, left: u64, unused: [u64; PAD]) {
    black_box(&unused);
    if left <= 1 {
        chain.latch.count_down();
    } else {
        let unused = [left; PAD];
        chain
            .pool
            .spawn(move || chain_link::<S, PAD>(chain, left - 1, unused));
    }
}

/// One chain per worker, `n` tasks in all, each spawned by the one before.
fn chains<S: Sched, const PAD: usize>(workers: usize, n: usize) -> Measured {
    let pool = leak(S::build(workers));
    warm_up(pool, workers);
    let per_chain = (n / workers).max(1) as u64;
    let chain = leak(Chain {
        pool,
        latch: Latch::new(workers),
    });
    let ((), wall, cpu) = timed(|| {
        for _ in 0..workers {
            pool.spawn(move || chain_link::<S, PAD>(chain, per_chain, [0; PAD]));
        }
        chain.latch.wait();
    });
    Measured::new(wall, cpu, ns_per(wall, per_chain * workers as u64))
}

/// Floods of `n` empty tasks into one scope, spawned by the scope's body
/// (which runs in the pool on both peers), each closure capturing the
/// counter's reference and `PAD` unused words: `8 * (PAD + 1)` bytes. One
/// source, expanded once per pool that has scopes, with only the pool's
/// type and builder differing.
macro_rules! scoped_floods {
    ($($module:ident: $build:expr;)*) => {$(
        mod $module {
            use super::super::{ns_per, timed, Measured};
            use std::hint::black_box;
            use std::sync::atomic::{AtomicUsize, Ordering};

            pub fn flood<const PAD: usize>(workers: usize, n: usize) -> Measured {
                let pool = $build(workers);
                // Every worker started and through one scope's spawns.
                let warm = AtomicUsize::new(0);
                pool.scope(|s| {
                    for _ in 0..workers * 64 {
                        s.spawn(|_| {
                            warm.fetch_add(1, Ordering::Relaxed);
                        });
                    }
                });
                let count = AtomicUsize::new(0);
                let ((), wall, cpu) = timed(|| {
                    pool.scope(|s| {
                        for i in 0..n {
                            let unused = [i as u64; PAD];
                            let count = &count;
                            s.spawn(move |_| {
                                black_box(&unused);
                                count.fetch_add(1, Ordering::Relaxed);
                            });
                        }
                    })
                });
                assert_eq!(count.load(Ordering::Relaxed), n, "every scoped task ran");
                Measured::new(wall, cpu, ns_per(wall, n as u64))
            }
        }
    )*};
}

scoped_floods! {
    weft_scope: |workers| weft::Pool::builder().workers(workers).build().expect("weft pool");
    rayon_scope: |workers| rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .build()
        .expect("rayon pool");
}

/// `flood::<PAD>` on the pool `kind` names (only pools with scopes fit).
fn scoped<const PAD: usize>(kind: SchedKind, workers: usize, n: u64) -> Measured {
    match kind {
        SchedKind::Weft => weft_scope::flood::<PAD>(workers, n as usize),
        SchedKind::Rayon | SchedKind::RayonOnWeft => rayon_scope::flood::<PAD>(workers, n as usize),
        other => unreachable!("{} has no scope (its fit says n/a)", other.name()),
    }
}

/// The `spawn/scope` cases: `base` at each size, with its run.
macro_rules! scoped_cases {
    ($base:ident: $($variant:literal => $pad:literal),*) => {
        vec![$(
            Case {
                variant: $variant,
                run: |kind, workers, n| scoped::<$pad>(kind, workers, n),
                ..$base
            },
        )*]
    };
}

/// The cases of one shape at each size: for each, the entry point that
/// `with_peer!` dispatches to (it names the scheduler type alone) and the
/// case, `base` with its variant and run.
macro_rules! sized_cases {
    ($($base:ident $variant:literal => $name:ident = $body:ident::<$pad:literal>;)*) => {{
        $(
            fn $name<S: Sched>(workers: usize, n: u64) -> Measured {
                $body::<S, $pad>(workers, n as usize)
            }
        )*
        vec![$(
            Case {
                variant: $variant,
                run: |kind, workers, n| with_peer!(kind, Tasks, $name(workers, n)),
                ..$base
            },
        )*]
    }};
}

pub fn cases() -> Vec<Case> {
    let outside = Case {
        scenario: "spawn/outside",
        variant: "",
        about: "N empty tasks submitted from an outside thread, each closure capturing the completion latch's reference and unused words to the size named (size = N); wait for all",
        unit: "ns/task",
        higher_is_better: false,
        sizes: [1_000, 65_536, 262_144],
        needs: TASKS,
        run: |_, _, _| unreachable!("each spawn case has a run of its own"),
    };
    let inside = Case {
        scenario: "spawn/chain",
        about: "one chain per worker, N tasks in all: each task spawns the next from inside the pool, its closure capturing the chain's reference, its countdown and unused words to the size named; the last of each chain counts down the completion latch (size = N)",
        ..outside
    };
    let scope = Case {
        scenario: "spawn/scope",
        about: "N empty tasks spawned into one scope by its body (Pool::scope, ThreadPool::scope: the body runs in the pool), each closure capturing the counter's reference and unused words to the size named; timed: the scope call, which ends once all have run (size = N)",
        needs: Needs::ways(&[&[Cap::ScopeSpawn]]),
        ..outside
    };
    let mut cases = scoped_cases! {
        scope: "8 B" => 0, "16 B" => 1, "24 B" => 2, "32 B" => 3, "64 B" => 7
    };
    let mut sized = sized_cases! {
        outside "8 B" => flood_8 = flood::<0>;
        outside "16 B" => flood_16 = flood::<1>;
        outside "24 B" => flood_24 = flood::<2>;
        outside "32 B" => flood_32 = flood::<3>;
        outside "64 B" => flood_64 = flood::<7>;
        inside "16 B" => chain_16 = chains::<0>;
        inside "24 B" => chain_24 = chains::<1>;
        inside "32 B" => chain_32 = chains::<2>;
        inside "64 B" => chain_64 = chains::<6>;
    };
    sized.append(&mut cases);
    sized
}
