//! Fork-join by `join`: recursive fib and the balanced binary tree sum of
//! chili's benchmark. Each library's own generic join is called directly
//! (monomorphised), so no abstraction layer sits on the hot path.

use std::time::Duration;

use super::{ns_per, timed, Case, Measured};
use crate::scheds::{Sched, SchedKind};

pub fn run(case: &Case, kind: SchedKind, workers: usize, size: u64) -> Measured {
    match case.scenario {
        "join/fib" => fib(kind, workers, size as u32),
        "join/tree-sum" => tree_sum(kind, workers, size as u32),
        other => panic!("unknown join scenario {other}"),
    }
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

/// Times `body` [`RUNS_PER_CHILD`] times and returns the run of median wall
/// time (its result, wall and CPU time).
fn median_of_runs<R>(mut body: impl FnMut() -> R) -> (R, Duration, Duration) {
    let mut runs: Vec<(R, Duration, Duration)> =
        (0..RUNS_PER_CHILD).map(|_| timed(&mut body)).collect();
    runs.sort_by_key(|run| run.1);
    runs.swap_remove(RUNS_PER_CHILD / 2)
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

fn fib_weft(n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = weft::join(|| fib_weft(n - 1), || fib_weft(n - 2));
    a + b
}

fn fib_rayon(n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = rayon::join(|| fib_rayon(n - 1), || fib_rayon(n - 2));
    a + b
}

fn fib_chili(s: &mut chili::Scope<'_>, n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = s.join(|s| fib_chili(s, n - 1), |s| fib_chili(s, n - 2));
    a + b
}

fn fib(kind: SchedKind, workers: usize, n: u32) -> Measured {
    let (expected, joins) = fib_serial(n);
    let (got, wall, cpu) = match kind {
        SchedKind::Weft => {
            let pool = crate::scheds::weft_sched::WeftSched::build(workers);
            pool.pool().install(|| fib_weft(WARM_UP_FIB));
            median_of_runs(|| pool.pool().install(|| fib_weft(n)))
        }
        SchedKind::Rayon => {
            let pool = crate::scheds::rayon_sched::RayonSched::build(workers);
            pool.pool().install(|| fib_rayon(WARM_UP_FIB));
            median_of_runs(|| pool.pool().install(|| fib_rayon(n)))
        }
        SchedKind::Chili => {
            let pool = crate::scheds::chili_sched::build(workers);
            let mut scope = pool.scope();
            fib_chili(&mut scope, WARM_UP_FIB);
            median_of_runs(|| fib_chili(&mut scope, n))
        }
        other => panic!("{} has no join", other.name()),
    };
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

fn sum_weft(node: &Node) -> u64 {
    match &node.children {
        None => node.value,
        Some(kids) => {
            let (a, b) = weft::join(|| sum_weft(&kids.0), || sum_weft(&kids.1));
            node.value + a + b
        }
    }
}

fn sum_rayon(node: &Node) -> u64 {
    match &node.children {
        None => node.value,
        Some(kids) => {
            let (a, b) = rayon::join(|| sum_rayon(&kids.0), || sum_rayon(&kids.1));
            node.value + a + b
        }
    }
}

fn sum_chili(s: &mut chili::Scope<'_>, node: &Node) -> u64 {
    match &node.children {
        None => node.value,
        Some(kids) => {
            let (a, b) = s.join(|s| sum_chili(s, &kids.0), |s| sum_chili(s, &kids.1));
            node.value + a + b
        }
    }
}

fn tree_sum(kind: SchedKind, workers: usize, layers: u32) -> Measured {
    let mut next = 0;
    let tree = Node::tree(layers, &mut next);
    let nodes = next;
    let expected = nodes * (nodes - 1) / 2;
    let joins = (1u64 << (layers - 1)) - 1;
    // A small tree summed untimed first, as fib's warm-up.
    let warm_up = Node::tree(WARM_UP_LAYERS, &mut 0);
    let (got, wall, cpu) = match kind {
        SchedKind::Weft => {
            let pool = crate::scheds::weft_sched::WeftSched::build(workers);
            pool.pool().install(|| sum_weft(&warm_up));
            median_of_runs(|| pool.pool().install(|| sum_weft(&tree)))
        }
        SchedKind::Rayon => {
            let pool = crate::scheds::rayon_sched::RayonSched::build(workers);
            pool.pool().install(|| sum_rayon(&warm_up));
            median_of_runs(|| pool.pool().install(|| sum_rayon(&tree)))
        }
        SchedKind::Chili => {
            let pool = crate::scheds::chili_sched::build(workers);
            let mut scope = pool.scope();
            sum_chili(&mut scope, &warm_up);
            median_of_runs(|| sum_chili(&mut scope, &tree))
        }
        other => panic!("{} has no join", other.name()),
    };
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
