use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use super::mergesort::SortCtx;
use super::quicksort::{partition, quicksort};
use super::*;
use crate::api::global::in_worker;
use crate::prelude::*;

/// Sizes that cut even tiny slices into pieces, so that Miri's small
/// inputs go through the joins, the buffer and the parallel merge.
const TINY: Sizes = Sizes {
    piece: 3,
    merge: 4,
    leaf: 3,
};

/// Sizes under which the unstable sort splits by `join` down to 9 and
/// then by its own sequential partitions down to 2, as it does for large
/// elements (`Sizes::own_partitions_for`).
const TINY_OWN_PARTITIONS: Sizes = Sizes {
    piece: 9,
    merge: 4,
    leaf: 2,
};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 32) as u32
    }

    fn below(&mut self, n: u32) -> u32 {
        self.next() % n
    }
}

fn scale(full: usize, miri: usize) -> usize {
    if cfg!(miri) {
        miri
    } else {
        full
    }
}

/// Inputs of `len` elements in several shapes.
fn shapes(len: usize, rng: &mut Rng) -> Vec<Vec<u32>> {
    let n = len as u32;
    vec![
        (0..len).map(|_| rng.next()).collect(),
        (0..len).map(|_| rng.below(4)).collect(),
        (0..len).map(|_| rng.below(n.max(1))).collect(),
        (0..n).collect(),
        (0..n).rev().collect(),
        vec![5; len],
        // Sawtooth and organ pipe: sorted runs the presorted check
        // does not catch.
        (0..n).map(|i| i % 17).collect(),
        (0..n).map(|i| i.min(n - i)).collect(),
        // Sorted but for the last element.
        (0..n).map(|i| if i + 1 == n { 0 } else { i + 1 }).collect(),
    ]
}

fn lengths() -> Vec<usize> {
    if cfg!(miri) {
        vec![0, 1, 3, 9, 33]
    } else {
        vec![0, 1, 2, 3, 5, 17, 100, 2048, 2049, 5000, 100_000]
    }
}

#[test]
fn sorts_like_std() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for len in lengths() {
        for input in shapes(len, &mut rng) {
            let mut expected = input.clone();
            expected.sort();
            let sorts: [fn(&mut [u32]); 6] = [
                |v| v.par_sort(),
                |v| v.par_sort_by(|a, b| a.cmp(b)),
                |v| v.par_sort_by_key(|&x| x),
                |v| v.par_sort_unstable(),
                |v| v.par_sort_unstable_by(|a, b| a.cmp(b)),
                |v| v.par_sort_unstable_by_key(|&x| x),
            ];
            for sort in sorts {
                let mut v = input.clone();
                sort(&mut v);
                assert_eq!(v, expected, "len {len}");
            }
            let mut v = input.clone();
            v.par_sort_by(|a, b| b.cmp(a));
            expected.reverse();
            assert_eq!(v, expected, "descending, len {len}");
        }
    }
}

/// The parallel paths on small inputs, cut into pieces of 3.
#[test]
fn sorts_like_std_cut_fine() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let lens: Vec<usize> = if cfg!(miri) {
        vec![0, 1, 2, 5, 8, 21]
    } else {
        (0..70).chain([3000]).collect()
    };
    for len in lens {
        for input in shapes(len, &mut rng) {
            let mut expected = input.clone();
            expected.sort();
            let mut v = input.clone();
            in_worker(|| stable_sort(&mut v, &u32::cmp, TINY));
            assert_eq!(v, expected, "stable, len {len}");
            let mut v = input.clone();
            in_worker(|| unstable_sort(&mut v, &u32::cmp, TINY));
            assert_eq!(v, expected, "unstable, len {len}");
            let mut v = input.clone();
            in_worker(|| unstable_sort(&mut v, &u32::cmp, TINY_OWN_PARTITIONS));
            assert_eq!(v, expected, "unstable, own partitions, len {len}");
            // Past the presorted check and with no allowance for
            // lopsided splits, too.
            for limit in [0, 1, 40] {
                for sizes in [TINY, TINY_OWN_PARTITIONS] {
                    let mut v = input.clone();
                    in_worker(|| quicksort(&mut v, &u32::cmp, None, limit, sizes));
                    assert_eq!(
                        v, expected,
                        "quicksort, len {len}, limit {limit}, {sizes:?}"
                    );
                }
            }
        }
    }
}

/// An element larger than two words, which the unstable sort partitions
/// itself below the pieces it shares (`Sizes::own_partitions_for`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Wide {
    key: u32,
    tag: [u64; 3],
}

#[test]
fn sorts_large_elements_like_std() {
    let mut rng = Rng(0x0dd_c0ff_ee15_600d);
    let mut lens = lengths();
    lens.push(scale(20_000, 40));
    for len in lens {
        for keys in shapes(len, &mut rng) {
            let input: Vec<Wide> = keys
                .iter()
                .enumerate()
                .map(|(i, &key)| Wide {
                    key,
                    tag: [i as u64, u64::from(key) ^ 7, !(i as u64)],
                })
                .collect();
            // Equal keys may come out in any order: compare the keys in
            // order and the elements as a set.
            let mut expected = input.clone();
            expected.sort();
            let expected_keys: Vec<u32> = expected.iter().map(|w| w.key).collect();
            let check = |mut v: Vec<Wide>, how: &str| {
                let keys: Vec<u32> = v.iter().map(|w| w.key).collect();
                assert_eq!(keys, expected_keys, "{how}, len {len}");
                v.sort();
                assert_eq!(v, expected, "{how}: a permutation, len {len}");
            };
            let mut v = input.clone();
            v.par_sort_unstable_by_key(|w| w.key);
            check(v, "par_sort_unstable_by_key");
            let mut v = input.clone();
            v.par_sort_unstable();
            assert_eq!(v, expected, "par_sort_unstable, len {len}");
            for sizes in [TINY, TINY_OWN_PARTITIONS] {
                let mut v = input.clone();
                in_worker(|| unstable_sort(&mut v, &|a: &Wide, b: &Wide| a.key.cmp(&b.key), sizes));
                check(v, &format!("{sizes:?}"));
            }
        }
    }
}

#[test]
fn stable_keeps_ties_in_order() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let lens = [scale(100_000, 50), scale(5000, 30), scale(2049, 9), 17];
    for len in lens {
        for keys in [3, 50, 1 << 20] {
            let input: Vec<(u32, usize)> = (0..len).map(|i| (rng.below(keys), i)).collect();
            let mut expected = input.clone();
            expected.sort_by_key(|&(key, _)| key);
            let mut v = input.clone();
            v.par_sort_by_key(|&(key, _)| key);
            assert_eq!(v, expected, "len {len}, keys {keys}");
            let mut v = input.clone();
            v.par_sort_by(|a, b| a.0.cmp(&b.0));
            assert_eq!(v, expected, "len {len}, keys {keys}");
            let mut v = input.clone();
            in_worker(|| {
                stable_sort(
                    &mut v,
                    &|a: &(u32, usize), b: &(u32, usize)| a.0.cmp(&b.0),
                    TINY,
                )
            });
            assert_eq!(v, expected, "cut fine, len {len}, keys {keys}");
        }
        // Strictly descending keys are reversed, equal runs are not.
        let input: Vec<(u32, usize)> = (0..len).map(|i| ((len - i) as u32 / 2, i)).collect();
        let mut expected = input.clone();
        expected.sort_by_key(|&(key, _)| key);
        let mut v = input;
        v.par_sort_by_key(|&(key, _)| key);
        assert_eq!(v, expected, "descending with ties, len {len}");
    }
}

#[test]
fn partition_splits_by_the_predicate() {
    let mut rng = Rng(0xdead_beef_cafe_f00d);
    for len in (0..scale(700, 40)).step_by(scale(7, 1)) {
        let input: Vec<u32> = (0..len).map(|_| rng.below(100)).collect();
        for cut in [0, 1, 30, 50, 99, 100] {
            let mut v = input.clone();
            let mid = partition(&mut v, |&x| x < cut);
            assert!(v[..mid].iter().all(|&x| x < cut));
            assert!(v[mid..].iter().all(|&x| x >= cut));
            v.sort();
            let mut sorted = input.clone();
            sorted.sort();
            assert_eq!(v, sorted);
        }
    }
}

/// Past two blocks (256 elements), where the block partition swaps
/// misplaced elements recorded by offset: elements that own heap memory,
/// so that Miri, too, runs the blocks' path (the other tests' lengths
/// under Miri stay below it), and every one dropped once.
#[test]
fn partition_moves_owned_elements_across_blocks() {
    let mut rng = Rng(0x0b10_c4ed_5eed_0001);
    let lens = if cfg!(miri) {
        vec![256, 300, 520]
    } else {
        vec![256, 257, 300, 511, 512, 700, 5000]
    };
    for len in lens {
        let keys: Vec<u32> = (0..len).map(|_| rng.below(100)).collect();
        for cut in [0, 1, 37, 50, 99, 100] {
            let live = Arc::new(AtomicIsize::new(0));
            let mut v: Vec<Tracked> = keys.iter().map(|&k| Tracked::new(k, &live)).collect();
            let mid = partition(&mut v, |t| *t.key < cut);
            assert!(
                v[..mid].iter().all(|t| *t.key < cut),
                "len {len}, cut {cut}"
            );
            assert!(
                v[mid..].iter().all(|t| *t.key >= cut),
                "len {len}, cut {cut}"
            );
            let mut after: Vec<u32> = v.iter().map(|t| *t.key).collect();
            after.sort();
            let mut before = keys.clone();
            before.sort();
            assert_eq!(after, before, "a permutation, len {len}, cut {cut}");
            drop(v);
            assert_eq!(live.load(Relaxed), 0, "each dropped once, len {len}");
        }
    }
}

#[test]
fn split_for_merge_keeps_order() {
    let mut rng = Rng(0x0bad_cafe_1234_5678);
    let ctx = SortCtx {
        compare: &u32::cmp,
        merge: 2,
    };
    for _ in 0..scale(500, 30) {
        let mut left: Vec<u32> = (0..rng.below(20)).map(|_| rng.below(6)).collect();
        let mut right: Vec<u32> = (0..rng.below(20)).map(|_| rng.below(6)).collect();
        left.sort();
        right.sort();
        let (l, r) = ctx.split_for_merge(&left, &right);
        // Left before: not greater; right before: strictly less.
        assert!(left[..l].iter().all(|x| right[r..].iter().all(|y| x <= y)));
        assert!(right[..r].iter().all(|x| left[l..].iter().all(|y| x < y)));
    }
}

#[test]
fn par_chunks_mut_covers_the_slice() {
    let mut v: Vec<usize> = vec![0; 1000];
    v.par_chunks_mut(7)
        .enumerate()
        .for_each(|(i, chunk)| chunk.fill(i));
    assert!(v.iter().enumerate().all(|(i, &c)| c == i / 7));
}

#[test]
fn sorts_zero_sized() {
    let mut v = vec![(); scale(10_000, 20)];
    v.par_sort();
    v.par_sort_unstable();
    assert_eq!(v.len(), scale(10_000, 20));
}

/// An element that counts how many of its kind are alive, and owns a
/// heap allocation (so that Miri sees a double drop or a use after
/// drop). Three words, so that the unstable sort partitions it itself
/// below the pieces it shares (`Sizes::own_partitions_for`).
struct Tracked {
    key: Box<u32>,
    live: Arc<AtomicIsize>,
    _third_word: usize,
}

impl Tracked {
    fn new(key: u32, live: &Arc<AtomicIsize>) -> Self {
        live.fetch_add(1, Relaxed);
        Tracked {
            key: Box::new(key),
            live: Arc::clone(live),
            _third_word: 0,
        }
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.live.fetch_sub(1, Relaxed);
    }
}

type Compare<'c> = &'c (dyn Fn(&Tracked, &Tracked) -> Ordering + Sync);

type Sort<'s> = &'s dyn Fn(&mut [Tracked], Compare<'_>);

/// The five ways in: both sorts, through the public methods and cut
/// fine, the unstable one with its own sequential partitions too.
fn each_sort(len: usize, check: impl Fn(usize, Sort<'_>)) {
    check(len, &|v, compare| {
        in_worker(|| unstable_sort(v, &compare, TINY_OWN_PARTITIONS))
    });
    check(len, &|v, compare| v.par_sort_by(compare));
    check(len, &|v, compare| v.par_sort_unstable_by(compare));
    check(len, &|v, compare| {
        in_worker(|| stable_sort(v, &compare, TINY))
    });
    check(len, &|v, compare| {
        in_worker(|| unstable_sort(v, &compare, TINY))
    });
}

/// Runs `sort` on `len` tracked elements with `compare` (given the
/// number of the call and the two keys), and checks that the slice
/// ends a permutation of its input, whether the sort returned or
/// panicked, and that every element is dropped exactly once. Returns
/// whether it panicked.
fn check_permutation(
    len: usize,
    sort: Sort<'_>,
    compare: &(dyn Fn(usize, u32, u32) -> Ordering + Sync),
) -> bool {
    let mut rng = Rng(0x5eed_5eed_5eed_5eed ^ len as u64);
    let live = Arc::new(AtomicIsize::new(0));
    let keys: Vec<u32> = (0..len).map(|_| rng.below(len as u32 / 2 + 1)).collect();
    let mut v: Vec<Tracked> = keys.iter().map(|&k| Tracked::new(k, &live)).collect();
    let calls = AtomicUsize::new(0);
    let counted = |a: &Tracked, b: &Tracked| compare(calls.fetch_add(1, Relaxed), *a.key, *b.key);
    let panicked = panic::catch_unwind(AssertUnwindSafe(|| sort(&mut v, &counted))).is_err();
    let mut after: Vec<u32> = v.iter().map(|t| *t.key).collect();
    after.sort();
    let mut before = keys;
    before.sort();
    assert_eq!(after, before, "a permutation, len {len}");
    drop(v);
    assert_eq!(live.load(Relaxed), 0, "each dropped once, len {len}");
    panicked
}

/// A comparator that panics on its `fuse`th call, or on every call
/// from then on (so both sides of a `join` may panic), leaves a
/// permutation of the input, every element dropped once.
#[test]
fn panicking_comparator_leaves_a_permutation() {
    // Under Miri (where an unwind is slow) two lengths and two fuses.
    let lens = if cfg!(miri) {
        vec![20, 2]
    } else {
        vec![100_000, 2049, 2]
    };
    for len in lens {
        let fuses = if cfg!(miri) {
            vec![0, 7]
        } else {
            vec![0, 1, 7, len / 3, len, 5 * len]
        };
        for fuse in fuses {
            for every in [false, true] {
                each_sort(len, |len, sort| {
                    let compare = |call: usize, a: u32, b: u32| {
                        if call == fuse || (every && call > fuse) {
                            panic!("comparator panics on purpose");
                        }
                        a.cmp(&b)
                    };
                    let panicked = check_permutation(len, sort, &compare);
                    // Every sort compares at least `len - 1` times.
                    if fuse + 1 < len {
                        assert!(panicked, "fuse {fuse}, len {len}");
                    }
                });
            }
        }
    }
}

/// A comparator that is no order at all still leaves a permutation:
/// the merges take each element once whatever the answers.
#[test]
fn inconsistent_comparator_leaves_a_permutation() {
    for len in [scale(100_000, 24), scale(3000, 12), 5] {
        each_sort(len, |len, sort| {
            let compare = |call: usize, a: u32, b: u32| {
                let mut rng = Rng((call as u64) << 32 ^ u64::from(a) << 16 ^ u64::from(b) | 1);
                rng.next();
                [Ordering::Less, Ordering::Equal, Ordering::Greater][rng.below(3) as usize]
            };
            check_permutation(len, sort, &compare);
        });
    }
}
