//! Fork-join by `join`: recursive fib and the balanced binary tree sum of
//! chili's benchmark. Every scheduler runs the same code through
//! [`ForkJoin`], whose methods are generic, so each library's own join is
//! called directly (monomorphised): no abstraction layer sits on the hot path.

use std::time::Duration;

use super::{ns_per, timed, Case, Measured, Needs};
use crate::scheds::{Cap, ForkJoin};
use crate::with_peer;

pub fn cases() -> Vec<Case> {
    let fib = Case {
        scenario: "join/fib",
        variant: "",
        about: "fib(n) by recursive join, no cutoff (size = n)",
        unit: "ns/join",
        higher_is_better: false,
        sizes: [15, 27, 32],
        needs: Needs::ways(&[&[Cap::ForkJoin]]),
        run: |kind, workers, n| with_peer!(kind, Joins, fib(workers, n as u32)),
    };
    vec![
        fib,
        Case {
            scenario: "join/tree-sum",
            about: "sum of a balanced binary tree by join at every inner node (chili's benchmark; size = layers)",
            sizes: [10, 20, 24],
            run: |kind, workers, layers| with_peer!(kind, Joins, tree_sum(workers, layers as u32)),
            ..fib
        },
    ]
}

/// Every pool first computes this fib untimed (~30,000 joins): the timed run
/// then measures joins, not thread start-up and the first touches of fresh
/// stacks and queues, which vary a lot from one child process to the next.
const WARM_UP_FIB: u32 = 22;
/// The warm-up tree of `join/tree-sum` (~16,000 joins).
const WARM_UP_LAYERS: u32 = 15;

/// Timed runs of the computation per child process; the child reports the
/// run of median wall time. A whole run takes a few milliseconds, shorter
/// than the hiccups of a shared machine, so one run per process would
/// measure those as much as the joins.
const RUNS_PER_CHILD: usize = 5;

/// On a pool of `J` with `workers` threads: runs `warm_up` once untimed,
/// then `run` [`RUNS_PER_CHILD`] times, each run entering the pool from the
/// caller's seat; returns the run of median wall time (its result, wall and
/// CPU time).
fn median_of_runs<J: ForkJoin, R: Send>(
    workers: usize,
    warm_up: impl Fn(&mut J::Ctx<'_>) + Sync,
    run: impl Fn(&mut J::Ctx<'_>) -> R + Sync,
) -> (R, Duration, Duration) {
    let pool = J::start(workers);
    pool.seat(|seat| {
        J::enter(seat, |c| warm_up(c));
        let mut runs: Vec<(R, Duration, Duration)> = (0..RUNS_PER_CHILD)
            .map(|_| timed(|| J::enter(seat, |c| run(c))))
            .collect();
        runs.sort_by_key(|run| run.1);
        runs.swap_remove(RUNS_PER_CHILD / 2)
    })
}

fn fib_serial(n: u32) -> (u64, u64) {
    // (fib(n), joins made computing it): one join per call with n >= 2.
    let (mut a, mut b, mut joins_prev, mut joins) = (0u64, 1u64, 0u64, 0u64);
    for i in 0..n {
        (a, b) = (b, a + b);
        if i >= 1 {
            (joins_prev, joins) = (joins, joins + joins_prev + 1);
        }
    }
    (a, joins)
}

fn fib_join<J: ForkJoin>(ctx: &mut J::Ctx<'_>, n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = J::join(
        ctx,
        |c| fib_join::<J>(c, n - 1),
        |c| fib_join::<J>(c, n - 2),
    );
    a + b
}

fn fib<J: ForkJoin>(workers: usize, n: u32) -> Measured {
    let (expected, joins) = fib_serial(n);
    let (got, wall, cpu) = median_of_runs::<J, _>(
        workers,
        |c| {
            fib_join::<J>(c, WARM_UP_FIB);
        },
        |c| fib_join::<J>(c, n),
    );
    assert_eq!(got, expected, "fib({n}) gave a wrong answer");
    Measured::new(wall, cpu, ns_per(wall, joins)).with("joins", joins as f64)
}

pub struct Node {
    value: u64,
    children: Option<Box<(Node, Node)>>,
}

impl Node {
    /// A balanced tree of `layers` layers, values numbered from `first`.
    fn tree(layers: u32, first: &mut u64) -> Node {
        let value = *first;
        *first += 1;
        let children = (layers > 1).then(|| {
            let left = Node::tree(layers - 1, first);
            let right = Node::tree(layers - 1, first);
            Box::new((left, right))
        });
        Node { value, children }
    }
}

fn sum_join<J: ForkJoin>(ctx: &mut J::Ctx<'_>, node: &Node) -> u64 {
    match &node.children {
        None => node.value,
        Some(kids) => {
            let (a, b) = J::join(
                ctx,
                |c| sum_join::<J>(c, &kids.0),
                |c| sum_join::<J>(c, &kids.1),
            );
            node.value + a + b
        }
    }
}

fn tree_sum<J: ForkJoin>(workers: usize, layers: u32) -> Measured {
    let mut next = 0;
    let tree = Node::tree(layers, &mut next);
    let nodes = next;
    let expected = nodes * (nodes - 1) / 2;
    let joins = (1u64 << (layers - 1)) - 1;
    // A small tree summed untimed first, as fib's warm-up.
    let warm_up = Node::tree(WARM_UP_LAYERS, &mut 0);
    let (got, wall, cpu) = median_of_runs::<J, _>(
        workers,
        |c| {
            sum_join::<J>(c, &warm_up);
        },
        |c| sum_join::<J>(c, &tree),
    );
    assert_eq!(got, expected, "tree sum gave a wrong answer");
    Measured::new(wall, cpu, ns_per(wall, joins))
        .with("joins", joins as f64)
        .with("nodes", nodes as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fib_serial_counts_joins() {
        // fib(4) = 3; calls with n >= 2: f4, f3, f2 (x2) = 4 joins.
        assert_eq!(fib_serial(4), (3, 4));
        assert_eq!(fib_serial(1), (1, 0));
    }
}
