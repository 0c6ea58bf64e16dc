//! Fork-join by `join`: recursive fib and the balanced binary tree sum of
//! chili's benchmark (the cost of a join), two long halves and their nested
//! pairs (whether the second half reaches an idle worker at once), and a
//! parallel quicksort. Every scheduler runs the same code through
//! [`ForkJoin`], whose methods are generic, so each library's own join is
//! called directly (monomorphised): no abstraction layer sits on the hot path.

use std::time::Duration;

use super::{ns_per, timed, Case, Measured, Needs};
use crate::scheds::{Cap, ForkJoin};
use crate::with_peer;
use crate::work::{some_work, Rng};

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
    let halves = Case {
        scenario: "join/long-halves",
        variant: "",
        about: "join of two halves that each sleep 10 ms, from inside the pool; wall ms per join, median of size joins per child (ideal_ms: 10 on 2 workers or more, where the second half goes to an idle worker; a pool that runs the halves in turn takes 20)",
        unit: "ms/join",
        sizes: [3, 5, 9],
        run: |kind, workers, joins| with_peer!(kind, Joins, long_halves(workers, joins as usize, 1)),
        ..fib
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
        Case {
            scenario: "join/tree-sum",
            variant: "shuffled",
            about: "sum of a balanced binary tree by join at every inner node, its nodes at shuffled places of one array, so that no traversal order streams through memory (size = layers; 22 layers is 4M nodes)",
            sizes: [14, 20, 22],
            run: |kind, workers, layers| with_peer!(kind, Joins, shuffled_tree_sum(workers, layers as u32, 1)),
            ..fib
        },
        Case {
            scenario: "join/tree-sum",
            variant: "cache-resident",
            about: "a shuffled tree of 2^size - 1 nodes small enough for the cache, summed 256 times in a row per timed run: joins without the cost of memory (size = layers; 14 layers is 16k nodes)",
            sizes: [10, 14, 16],
            run: |kind, workers, layers| with_peer!(kind, Joins, shuffled_tree_sum(workers, layers as u32, 256)),
            ..fib
        },
        halves,
        Case {
            variant: "nested",
            about: "join(join(sleep, sleep), join(sleep, sleep)): four 10 ms leaves, from inside the pool; wall ms per outer join, median of size outer joins per child (ideal_ms: 40 on 1 worker, 20 on 2, 10 on 4 or more)",
            run: |kind, workers, joins| with_peer!(kind, Joins, long_halves(workers, joins as usize, 2)),
            ..halves
        },
        Case {
            scenario: "join/short-halves",
            variant: "",
            about: "size joins in a row, from one task inside the pool, each of two halves of SHORT_HALF units of some_work (about 20 us each on the 2-core VM): whether a half of tens of microseconds goes to an idle worker when joins come one after another, or the joining worker runs both; figure: wall us per join (serial_us: both halves run in turn on the calling thread, in the same child, untimed by the suite)",
            unit: "us/join",
            sizes: [20, 2_000, 5_000],
            run: |kind, workers, joins| with_peer!(kind, Joins, short_halves(workers, joins as usize)),
            ..fib
        },
        Case {
            scenario: "join/quicksort",
            about: "in-place quicksort of size pseudo-random u64 (fixed seed) by join on the two sides of each partition, sort_unstable below 32 elements; ms per sort, median of 5 per child; every output checked against a serial sort",
            unit: "ms",
            sizes: [20_000, 1_000_000, 10_000_000],
            run: |kind, workers, n| with_peer!(kind, Joins, quicksort(workers, n as usize)),
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

/// On a pool of `J` with `workers` threads, from the caller's seat: runs
/// `warm_up` once untimed, then `runs` times makes an input (untimed), times
/// `run` on it inside the pool and hands the result to `check` (untimed).
/// Returns the wall and CPU time of the run of median wall time.
fn timed_runs<J: ForkJoin, I: Send, R: Send>(
    workers: usize,
    runs: usize,
    warm_up: impl Fn(&mut J::Ctx<'_>) + Sync,
    mut input: impl FnMut() -> I,
    run: impl Fn(&mut J::Ctx<'_>, I) -> R + Sync,
    mut check: impl FnMut(R),
) -> (Duration, Duration) {
    let pool = J::start(workers);
    let mut times: Vec<(Duration, Duration)> = pool.seat(|seat| {
        J::enter(seat, |c| warm_up(c));
        (0..runs)
            .map(|_| {
                let input = input();
                let (out, wall, cpu) = timed(|| J::enter(seat, |c| run(c, input)));
                check(out);
                (wall, cpu)
            })
            .collect()
    });
    times.sort_by_key(|time| time.0);
    times[runs / 2]
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
    let (wall, cpu) = timed_runs::<J, _, _>(
        workers,
        RUNS_PER_CHILD,
        |c| {
            fib_join::<J>(c, WARM_UP_FIB);
        },
        || (),
        |c, ()| fib_join::<J>(c, n),
        |got| assert_eq!(got, expected, "fib({n}) gave a wrong answer"),
    );
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
    let (wall, cpu) = timed_runs::<J, _, _>(
        workers,
        RUNS_PER_CHILD,
        |c| {
            sum_join::<J>(c, &warm_up);
        },
        || (),
        |c, ()| sum_join::<J>(c, &tree),
        |got| assert_eq!(got, expected, "tree sum gave a wrong answer"),
    );
    Measured::new(wall, cpu, ns_per(wall, joins))
        .with("joins", joins as f64)
        .with("nodes", nodes as f64)
}

/// A balanced binary tree in one array, each node at a shuffled place:
/// built in recursive order, a tree's nodes lie in the order one traversal
/// visits them, and a traversal that takes the right half first streams
/// through memory several times faster than one that takes the left first,
/// on one thread with no scheduler at all. Shuffled, every child is a jump.
struct ShuffledTree {
    nodes: Vec<ShuffledNode>,
    root: u32,
}

struct ShuffledNode {
    value: u64,
    /// Where the two children are, if the node has any.
    kids: Option<(u32, u32)>,
}

impl ShuffledTree {
    fn new(layers: u32, seed: u64) -> ShuffledTree {
        let count = (1usize << layers) - 1;
        // Fisher-Yates: place[i] is where the i-th node in recursive order goes.
        let mut place: Vec<u32> = (0..count as u32).collect();
        let mut rng = Rng::new(seed);
        for i in (1..count).rev() {
            let j = rng.range(0, i as u64 + 1) as usize;
            place.swap(i, j);
        }
        let mut nodes: Vec<ShuffledNode> = (0..count)
            .map(|_| ShuffledNode {
                value: 0,
                kids: None,
            })
            .collect();
        let mut next = 0;
        let root = Self::fill(&mut nodes, &place, layers, &mut next);
        ShuffledTree { nodes, root }
    }

    /// Lays out a subtree of `layers` layers, its nodes numbered from
    /// `next` in recursive order; returns where its root went.
    fn fill(nodes: &mut [ShuffledNode], place: &[u32], layers: u32, next: &mut usize) -> u32 {
        let number = *next;
        *next += 1;
        let kids = (layers > 1).then(|| {
            let left = Self::fill(nodes, place, layers - 1, next);
            let right = Self::fill(nodes, place, layers - 1, next);
            (left, right)
        });
        let at = place[number];
        nodes[at as usize] = ShuffledNode {
            value: number as u64,
            kids,
        };
        at
    }
}

fn shuffled_sum_join<J: ForkJoin>(ctx: &mut J::Ctx<'_>, tree: &ShuffledTree, at: u32) -> u64 {
    let node = &tree.nodes[at as usize];
    match node.kids {
        None => node.value,
        Some((left, right)) => {
            let (a, b) = J::join(
                ctx,
                |c| shuffled_sum_join::<J>(c, tree, left),
                |c| shuffled_sum_join::<J>(c, tree, right),
            );
            node.value + a + b
        }
    }
}

/// `join/tree-sum` over a [`ShuffledTree`], summed `passes` times per run.
fn shuffled_tree_sum<J: ForkJoin>(workers: usize, layers: u32, passes: u32) -> Measured {
    let tree = ShuffledTree::new(layers, 0x5eed_7a11);
    let nodes = tree.nodes.len() as u64;
    let expected = nodes * (nodes - 1) / 2 * u64::from(passes);
    let joins = ((1u64 << (layers - 1)) - 1) * u64::from(passes);
    let warm_up = ShuffledTree::new(WARM_UP_LAYERS, 1);
    let (wall, cpu) = timed_runs::<J, _, _>(
        workers,
        RUNS_PER_CHILD,
        |c| {
            shuffled_sum_join::<J>(c, &warm_up, warm_up.root);
        },
        || (),
        |c, ()| {
            (0..passes)
                .map(|_| shuffled_sum_join::<J>(c, &tree, tree.root))
                .sum::<u64>()
        },
        |got| assert_eq!(got, expected, "shuffled tree sum gave a wrong answer"),
    );
    Measured::new(wall, cpu, ns_per(wall, joins))
        .with("joins", joins as f64)
        .with("nodes", nodes as f64)
}

/// How long each leaf of `join/long-halves` holds its thread: long enough
/// that how a pool hands out the second half shows, not what a join costs.
const LEAF: Duration = Duration::from_millis(10);

/// A tree of joins `depth` deep whose leaves each sleep [`LEAF`].
fn sleeping_leaves<J: ForkJoin>(ctx: &mut J::Ctx<'_>, depth: u32) {
    if depth == 0 {
        std::thread::sleep(LEAF);
        return;
    }
    J::join(
        ctx,
        |c| sleeping_leaves::<J>(c, depth - 1),
        |c| sleeping_leaves::<J>(c, depth - 1),
    );
}

fn long_halves<J: ForkJoin>(workers: usize, joins: usize, depth: u32) -> Measured {
    let leaves = 1u32 << depth;
    let (wall, cpu) = timed_runs::<J, _, _>(
        workers,
        joins.max(1),
        |c| {
            fib_join::<J>(c, WARM_UP_FIB);
        },
        || (),
        |c, ()| sleeping_leaves::<J>(c, depth),
        |()| {},
    );
    // Sleeping leaves need no core: every worker can hold one at once.
    let ideal = LEAF * leaves.div_ceil(workers as u32);
    Measured::new(wall, cpu, wall.as_secs_f64() * 1e3)
        .with("ideal_ms", ideal.as_secs_f64() * 1e3)
        .with("leaves", f64::from(leaves))
}

/// Units of [`some_work`] in each half of `join/short-halves`: about 20 us
/// on the 2-core VM, as long as a park-and-wake round trip there.
const SHORT_HALF: u32 = 8_000;

fn short_halves<J: ForkJoin>(workers: usize, joins: usize) -> Measured {
    let half = |seed: u32| u64::from(some_work(seed, SHORT_HALF));
    let expected = half(1) + half(2);
    let call_loop = |c: &mut J::Ctx<'_>| {
        (0..joins)
            .filter(|_| {
                let (a, b) = J::join(c, |_| half(1), |_| half(2));
                a + b != expected
            })
            .count()
    };
    let (wall, cpu) = timed_runs::<J, _, _>(
        workers,
        RUNS_PER_CHILD,
        |c| {
            call_loop(c);
        },
        || (),
        |c, ()| call_loop(c),
        |wrong| assert_eq!(wrong, 0, "{wrong} of {joins} short joins gave a wrong sum"),
    );
    let (_, serial, _) = timed(|| (0..joins).map(|_| half(1) + half(2)).sum::<u64>());
    Measured::new(wall, cpu, ns_per(wall, joins as u64) / 1e3)
        .with("joins", joins as f64)
        .with("serial_us", ns_per(serial, joins as u64) / 1e3)
        .with("cpu_us_per_join", ns_per(cpu, joins as u64) / 1e3)
}

/// Below this many elements a slice is sorted serially (the same cutoff on
/// every scheduler).
const SORT_CUTOFF: usize = 32;
/// The warm-up sort of `join/quicksort`, untimed.
const WARM_UP_ELEMENTS: usize = 1 << 14;

/// Sorts `v` by partitioning it and sorting both sides in a join.
fn quicksort_join<J: ForkJoin>(ctx: &mut J::Ctx<'_>, v: &mut [u64]) {
    if v.len() <= SORT_CUTOFF {
        v.sort_unstable();
        return;
    }
    let pivot = partition(v);
    let (below, rest) = v.split_at_mut(pivot);
    J::join(
        ctx,
        |c| quicksort_join::<J>(c, below),
        |c| quicksort_join::<J>(c, &mut rest[1..]),
    );
}

/// Lomuto's partition around the median of the first, middle and last
/// elements (no quadratic case on sorted runs); returns where the pivot
/// ends up, with every smaller element before it and the rest after.
fn partition(v: &mut [u64]) -> usize {
    let (mid, last) = (v.len() / 2, v.len() - 1);
    if v[mid] < v[0] {
        v.swap(mid, 0);
    }
    if v[last] < v[0] {
        v.swap(last, 0);
    }
    if v[mid] < v[last] {
        v.swap(mid, last);
    }
    let pivot = v[last];
    let mut store = 0;
    for i in 0..last {
        if v[i] < pivot {
            v.swap(i, store);
            store += 1;
        }
    }
    v.swap(store, last);
    store
}

fn quicksort<J: ForkJoin>(workers: usize, n: usize) -> Measured {
    let mut rng = Rng::new(0x5eed_5047);
    let data: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
    let mut sorted = data.clone();
    sorted.sort_unstable();
    let warm_up = &data[..n.min(WARM_UP_ELEMENTS)];
    let (wall, cpu) = timed_runs::<J, _, _>(
        workers,
        RUNS_PER_CHILD,
        |c| quicksort_join::<J>(c, &mut warm_up.to_vec()),
        || data.clone(),
        |c, mut v| {
            quicksort_join::<J>(c, &mut v);
            v
        },
        |v| assert!(v == sorted, "quicksort gave a wrong order"),
    );
    Measured::new(wall, cpu, wall.as_secs_f64() * 1e3)
        .with("elements", n as f64)
        .with("ns_per_element", ns_per(wall, n as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_splits_around_its_pivot() {
        let mut rng = Rng::new(9);
        for len in [2, 3, 33, 100] {
            let mut v: Vec<u64> = (0..len).map(|_| rng.next_u64() % 10).collect();
            let p = partition(&mut v);
            assert!(v[..p].iter().all(|&x| x < v[p]));
            assert!(v[p + 1..].iter().all(|&x| x >= v[p]));
        }
    }

    #[test]
    fn fib_serial_counts_joins() {
        // fib(4) = 3; calls with n >= 2: f4, f3, f2 (x2) = 4 joins.
        assert_eq!(fib_serial(4), (3, 4));
        assert_eq!(fib_serial(1), (1, 0));
    }
}
