//! Parallel iterators (`use weft::prelude::*;`) against the sequential
//! result: every source (integer ranges, slices, `Vec`s and arrays by
//! reference, mutable reference and value, chunks and windows), every
//! adapter and every consumer, over lengths 0, 1, 2, 3, random small ones
//! and a large one, on pools of 1, 2, 3, 8 and 64 workers (more workers
//! than this machine has cores, so that pieces migrate) and from outside
//! any pool (the driver's own path for a plain thread). Then what the
//! module docs promise beyond the results: `collect` keeps the input's
//! order, `min`/`max` ties go as std's, by-value items are dropped exactly
//! once (also when a loop stops early, a closure panics or an item's
//! destructor panics), `any` /
//! `find_any` / `position_any` / `all` stop the work once the answer is
//! known, a panic reaches the caller and leaves the pool usable, and
//! `deterministic()` gives the same float bits on every run, and
//! `with_min_len` / `with_max_len` bound the pieces `fold` sees.
//!
//! The property tests are hand-rolled (no dependency): a splitmix64
//! generator, seeded per case; every assertion message names the case as
//! `seed .., len .., workers ..` (workers 0: called from outside any
//! pool). To rerun one case in every test, set
//! `PAR_ITER_CASE=seed,len,workers` (the seed as printed, hex or decimal).
//!
//! No assertion is about time: "stops early" is counted in items the
//! predicate saw, never measured in seconds.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, LinkedList, VecDeque};
use std::fmt;
use std::num::Wrapping;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once, PoisonError};

use weft::iter::Either;
use weft::prelude::*;
use weft::Pool;

/// Where every property runs: from outside any pool (`OUTSIDE`: the loop
/// starts on the calling thread and hands the rest to the global pool, a
/// path of its own in the driver), and inside pools of 1, 2, 3, 8 and 64
/// workers. 64 is far above the 2 cores of the machines this runs on, so
/// most workers are descheduled at any moment and pieces are stolen at odd
/// times.
const WORKERS: [usize; 6] = [OUTSIDE, 1, 2, 3, 8, 64];

/// The "worker count" of a loop called from a thread outside any pool.
const OUTSIDE: usize = 0;

/// The large length every property also runs at.
const LARGE: usize = 100_000;

/// Random lengths per worker count and test, on top of 0, 1, 2, 3 and
/// `LARGE`. Fewer in debug, to keep the whole file within seconds there.
const RANDOM_CASES: usize = if cfg!(debug_assertions) { 8 } else { 24 };

// ------------------------------------------------------------ harness

/// splitmix64: tiny, deterministic, and good enough to pick lengths,
/// values and cut points.
#[derive(Clone, Debug)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0); the modulo bias is harmless
    /// here.
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    /// Uniform in `lo..=hi`.
    fn between(&mut self, lo: i128, hi: i128) -> i128 {
        let span = (hi - lo) as u128 + 1;
        let r = (u128::from(self.next()) << 64 | u128::from(self.next())) % span;
        lo + r as i128
    }

    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }

    /// A random length, mostly short: where the splitting edge cases are.
    fn len(&mut self) -> usize {
        match self.below(3) {
            0 => self.below(8),
            1 => self.below(200),
            _ => self.below(5_000),
        }
    }
}

/// One case of a property: its seed (which alone drives its `rng`), the
/// input length and the pool's worker count.
struct Case {
    seed: u64,
    len: usize,
    workers: usize,
    rng: Rng,
}

impl Case {
    fn new(seed: u64, len: usize, workers: usize) -> Case {
        Case {
            seed,
            len,
            workers,
            rng: Rng(seed),
        }
    }

    /// `len` random values below `max`.
    fn values(&mut self, max: u32) -> Vec<u32> {
        self.values_of(self.len, max)
    }

    fn values_of(&mut self, len: usize, max: u32) -> Vec<u32> {
        (0..len)
            .map(|_| self.rng.below(max as usize) as u32)
            .collect()
    }

    /// Values for the other side of a `zip` or `chain`, of `other_len`.
    fn other_values(&mut self, max: u32) -> Vec<u32> {
        let len = self.other_len();
        self.values_of(len, max)
    }

    /// Another length near this case's, for the other side of a `zip` or
    /// `chain`: shorter, equal or longer.
    fn other_len(&mut self) -> usize {
        match self.rng.below(4) {
            0 => self.len,
            1 => self.rng.below(self.len + 1),
            2 => self.len + self.rng.below(8),
            _ => self.rng.below(2 * self.len + 4),
        }
    }

    /// Counts for `take`, `skip` and the like: the edges (0, 1, half, the
    /// length, beyond it, `usize::MAX`) and a random one.
    fn cuts(&mut self) -> Vec<usize> {
        let len = self.len;
        vec![
            0,
            1,
            len / 2,
            len.saturating_sub(1),
            len,
            len + 1,
            len + 7,
            usize::MAX,
            self.rng.below(len + 3),
        ]
    }
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "seed {:#018x}, len {}, workers {}{}",
            self.seed,
            self.len,
            self.workers,
            if self.workers == OUTSIDE {
                " (outside any pool)"
            } else {
                ""
            }
        )
    }
}

/// FNV-1a, to give each test its own seeds.
fn name_seed(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The case `PAR_ITER_CASE=seed,len,workers` asks for, if any.
fn case_from_env() -> Option<Case> {
    let spec = std::env::var("PAR_ITER_CASE").ok()?;
    let parts: Vec<&str> = spec.split(',').map(str::trim).collect();
    let [seed, len, workers] = parts[..] else {
        panic!("PAR_ITER_CASE is seed,len,workers, not {spec:?}");
    };
    let seed = match seed.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => seed.parse(),
    }
    .expect("PAR_ITER_CASE's seed");
    let len = len.parse().expect("PAR_ITER_CASE's len");
    let workers = workers.parse().expect("PAR_ITER_CASE's workers");
    Some(Case::new(seed, len, workers))
}

/// The cases of the test `name`: for each worker count, lengths 0, 1, 2,
/// 3, `RANDOM_CASES` random ones and `LARGE`.
fn cases(name: &str) -> Vec<Case> {
    if let Some(case) = case_from_env() {
        return vec![case];
    }
    let mut cases = Vec::new();
    for (index, &workers) in WORKERS.iter().enumerate() {
        let mut pick = Rng(name_seed(name) ^ (index as u64 + 1));
        let mut lens = vec![0, 1, 2, 3];
        lens.extend((0..RANDOM_CASES).map(|_| pick.len()));
        lens.push(LARGE);
        for len in lens {
            cases.push(Case::new(pick.next(), len, workers));
        }
    }
    cases
}

/// A pool of `workers` workers, built once and shared by every test of the
/// file (64-worker pools are too costly to build per case).
fn pool(workers: usize) -> &'static Pool {
    static POOLS: Mutex<Vec<(usize, &'static Pool)>> = Mutex::new(Vec::new());
    let mut pools = POOLS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(&(_, pool)) = pools.iter().find(|(count, _)| *count == workers) {
        return pool;
    }
    let pool: &'static Pool = Box::leak(Box::new(
        Pool::builder().workers(workers).build().expect("pool"),
    ));
    pools.push((workers, pool));
    pool
}

/// Runs `op` on a pool of `workers` workers, or on the calling thread
/// (outside any pool) for `OUTSIDE`.
fn on<R: Send>(workers: usize, op: impl FnOnce() -> R + Send) -> R {
    if workers == OUTSIDE {
        return op();
    }
    match panic::catch_unwind(AssertUnwindSafe(|| pool(workers).install(op))) {
        Ok(result) => result,
        // A failed assertion on a worker prints where the worker's output
        // goes, the test that built the pool: restated here, it shows in
        // the failing test's own output. Other payloads (`Planned`) go on
        // as they are.
        Err(payload) => match payload.downcast::<String>() {
            Ok(message) => panic!("{message}"),
            Err(payload) => match payload.downcast::<&str>() {
                Ok(message) => panic!("{message}"),
                Err(payload) => panic::resume_unwind(payload),
            },
        },
    }
}

/// Runs `property` on every case of the test `name`, inside the case's
/// pool (or outside any), so that the loops it starts split for that many
/// workers.
fn check(name: &str, property: impl Fn(&mut Case) + Sync) {
    for mut case in cases(name) {
        on(case.workers, || property(&mut case));
    }
}

/// The payload of the panics the tests throw on purpose.
#[derive(Debug, PartialEq)]
struct Planned(usize);

/// Keeps the planned panics off stderr (hundreds of them otherwise); any
/// other panic, a failed assertion, still prints as usual.
fn quiet_planned_panics() {
    static QUIET: Once = Once::new();
    QUIET.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !info.payload().is::<Planned>() {
                previous(info);
            }
        }));
    });
}

/// What a `catch_unwind` caught, as the planned panic it must be.
fn planned(result: std::thread::Result<impl Sized>, what: &str, ctx: &str) -> Planned {
    match result {
        Ok(_) => panic!("{what}: no panic reached the caller ({ctx})"),
        Err(payload) => match payload.downcast::<Planned>() {
            Ok(planned) => *planned,
            Err(other) => panic::resume_unwind(other),
        },
    }
}

/// An item that records its drops, by id, in a shared table.
#[derive(Debug)]
struct Tracked {
    id: usize,
    drops: Arc<[AtomicUsize]>,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.drops[self.id].fetch_add(1, Ordering::SeqCst);
    }
}

/// `len` tracked items, ids `0..len`, and their drop table.
fn tracked(len: usize) -> (Arc<[AtomicUsize]>, Vec<Tracked>) {
    let drops: Arc<[AtomicUsize]> = (0..len).map(|_| AtomicUsize::new(0)).collect();
    let items = (0..len)
        .map(|id| Tracked {
            id,
            drops: Arc::clone(&drops),
        })
        .collect();
    (drops, items)
}

fn assert_dropped_once(drops: &[AtomicUsize], what: &str, ctx: &str) {
    for (id, count) in drops.iter().enumerate() {
        let count = count.load(Ordering::SeqCst);
        assert_eq!(count, 1, "{what}: item {id} dropped {count} times ({ctx})");
    }
}

fn ids(items: &[Tracked]) -> Vec<usize> {
    items.iter().map(|item| item.id).collect()
}

/// Hands `len` tracked items by value to `consume`, which returns some of
/// them: they must be those of the ids `expected`, in order, and every
/// item must be dropped once.
fn moves_in_order(
    len: usize,
    expected: impl IntoIterator<Item = usize>,
    what: &str,
    ctx: &str,
    consume: impl FnOnce(Vec<Tracked>) -> Vec<Tracked>,
) {
    let (drops, items) = tracked(len);
    let out = consume(items);
    let expected: Vec<usize> = expected.into_iter().collect();
    assert_eq!(ids(&out), expected, "{what} ({ctx})");
    drop(out);
    assert_dropped_once(&drops, what, ctx);
}

/// Hands `len` tracked items by value to `consume` with a closure that
/// panics on item `target`: the panic must reach the caller, and every
/// item must be dropped once.
fn panics_on(
    len: usize,
    target: usize,
    what: &str,
    ctx: &str,
    consume: impl FnOnce(Vec<Tracked>, &(dyn Fn(&Tracked) + Sync)),
) {
    let (drops, items) = tracked(len);
    let explode = |item: &Tracked| {
        if item.id == target {
            panic::panic_any(Planned(target));
        }
    };
    let result = panic::catch_unwind(AssertUnwindSafe(|| consume(items, &explode)));
    assert_eq!(
        planned(result, what, ctx),
        Planned(target),
        "{what} ({ctx})"
    );
    assert_dropped_once(&drops, what, ctx);
}

// ------------------------------------------------------------ sources

/// Ranges of one integer type: random bounds anywhere in the type
/// (including negative ones, the type's ends, and reversed bounds, which
/// are empty), compared with the sequential range.
macro_rules! check_ranges {
    ($case:expr, $ctx:expr, $($t:ty),*) => {$({
        let case: &mut Case = $case;
        let (min, max) = (<$t>::MIN as i128, <$t>::MAX as i128);
        let len = case.len as i128;
        let start = match case.rng.below(5) {
            0 => min,
            1 => max - len,
            2 => -len / 2,
            _ => case.rng.between(min, max),
        }
        .clamp(min, max);
        let end = if case.rng.chance(6) {
            // Reversed: empty, as a sequential range.
            start - case.rng.between(0, len)
        } else {
            start + len
        }
        .clamp(min, max);
        let range = (start as $t)..(end as $t);
        let what = format!("{} range {:?}", stringify!($t), range);
        let seq: Vec<$t> = range.clone().collect();
        let par: Vec<$t> = range.clone().into_par_iter().collect();
        assert_eq!(par, seq, "{what}: collect ({})", $ctx);
        assert_eq!(range.clone().into_par_iter().len(), seq.len(), "{what}: len ({})", $ctx);
        assert_eq!(range.clone().into_par_iter().count(), seq.len(), "{what}: count ({})", $ctx);
        assert_eq!(
            range.clone().into_par_iter().map(|x| x as i128).sum::<i128>(),
            seq.iter().map(|&x| x as i128).sum::<i128>(),
            "{what}: sum ({})", $ctx
        );
        assert_eq!(
            range.clone().into_par_iter().min(),
            seq.iter().copied().min(),
            "{what}: min ({})", $ctx
        );
        assert_eq!(
            range.clone().into_par_iter().max(),
            seq.iter().copied().max(),
            "{what}: max ({})", $ctx
        );
        let cut = case.rng.below(seq.len() + 2);
        assert_eq!(
            range.clone().into_par_iter().skip(cut).collect::<Vec<_>>(),
            seq.iter().copied().skip(cut).collect::<Vec<_>>(),
            "{what}: skip({cut}) ({})", $ctx
        );
        // The same bounds, inclusive: up to the type's maximum included.
        let inclusive = (start as $t)..=(end as $t);
        let what = format!("{} range {:?}", stringify!($t), inclusive);
        let seq: Vec<$t> = inclusive.clone().collect();
        assert_eq!(
            inclusive.clone().into_par_iter().collect::<Vec<_>>(),
            seq,
            "{what}: collect ({})", $ctx
        );
        assert_eq!(inclusive.clone().into_par_iter().len(), seq.len(), "{what}: len ({})", $ctx);
        assert_eq!(
            inclusive.clone().into_par_iter().rev().skip(cut).collect::<Vec<_>>(),
            seq.iter().rev().skip(cut).copied().collect::<Vec<_>>(),
            "{what}: rev skip({cut}) ({})", $ctx
        );
    })*};
}

#[test]
fn ranges_of_every_integer_type() {
    check("ranges_of_every_integer_type", |case| {
        let ctx = case.to_string();
        check_ranges!(case, ctx, u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

        // Negative i64 ranges, as a user writes them.
        let n = case.len as i64;
        for range in [-n..0, -n..n, (-3 * n)..(-n), i64::MIN..(i64::MIN + n)] {
            let seq: Vec<i64> = range.clone().collect();
            let par: Vec<i64> = range.clone().into_par_iter().collect();
            assert_eq!(par, seq, "i64 range {range:?} ({ctx})");
        }
    });
}

#[test]
fn ranges_longer_than_can_be_run() {
    // Lengths up to `usize::MAX`: only cut, counted and searched from the
    // front, never run to the end.
    for &workers in &WORKERS {
        on(workers, || {
            let ctx = format!("workers {workers}");
            let full = i64::MIN..i64::MAX;
            assert_eq!(full.clone().into_par_iter().len(), usize::MAX, "{ctx}");
            assert_eq!(
                full.clone().into_par_iter().take(4).collect::<Vec<_>>(),
                (i64::MIN..i64::MIN + 4).collect::<Vec<_>>(),
                "{ctx}"
            );
            assert_eq!(
                full.clone()
                    .into_par_iter()
                    .skip(usize::MAX - 3)
                    .collect::<Vec<_>>(),
                (i64::MAX - 3..i64::MAX).collect::<Vec<_>>(),
                "{ctx}"
            );
            // The last indices a source can have: `enumerate` must not step
            // past `usize::MAX - 1` when its piece runs out.
            assert_eq!(
                full.clone()
                    .into_par_iter()
                    .enumerate()
                    .skip(usize::MAX - 2)
                    .map(|(index, _)| index)
                    .collect::<Vec<_>>(),
                vec![usize::MAX - 2, usize::MAX - 1],
                "{ctx}"
            );
            assert_eq!(
                full.clone()
                    .into_par_iter()
                    .position_any(|x| x == i64::MIN + 5),
                Some(5),
                "{ctx}"
            );
            assert_eq!(
                (0..u64::MAX).into_par_iter().len(),
                u64::MAX as usize,
                "{ctx}"
            );
            assert_eq!(
                (u64::MAX - 5..u64::MAX).into_par_iter().collect::<Vec<_>>(),
                (u64::MAX - 5..u64::MAX).collect::<Vec<_>>(),
                "{ctx}"
            );
            assert!((0..u64::MAX).into_par_iter().any(|x| x == 1_000), "{ctx}");
        });
    }
    // A chain whose length does not fit says so, rather than wrapping.
    let too_long = panic::catch_unwind(|| {
        (0..u64::MAX)
            .into_par_iter()
            .chain(0..2u64)
            .take(3)
            .collect::<Vec<_>>()
    });
    assert!(too_long.is_err(), "a chain longer than usize::MAX");
    let fits = (0..u64::MAX - 1)
        .into_par_iter()
        .chain(0..1u64)
        .skip(usize::MAX - 2)
        .collect::<Vec<_>>();
    assert_eq!(fits, vec![u64::MAX - 2, 0]);
}

/// The message of a panic caught by `catch_unwind`.
fn panic_message(result: std::thread::Result<impl Sized>, ctx: &str) -> String {
    match result {
        Ok(_) => panic!("no panic ({ctx})"),
        Err(payload) => match payload.downcast::<String>() {
            Ok(message) => *message,
            Err(payload) => match payload.downcast::<&str>() {
                Ok(message) => (*message).to_string(),
                Err(payload) => panic::resume_unwind(payload),
            },
        },
    }
}

#[test]
fn chains_longer_than_usize_max_search_or_panic_clearly() {
    // Searches by value need no index: they find what a sequential chain
    // finds. What needs the length or an index panics with the message
    // `chain` documents, before running anything, rather than wrapping
    // (a wrong answer in release, an arithmetic overflow in debug).
    let over = || (0..usize::MAX).into_par_iter().chain(0..2usize);
    for &workers in &WORKERS {
        on(workers, || {
            let ctx = format!("workers {workers}");
            assert_eq!(over().find_first(|&x| x == 3), Some(3), "{ctx}");
            assert_eq!(over().find_any(|&x| x == 3), Some(3), "{ctx}");
            assert!(over().any(|x| x == 3), "{ctx}");
            assert!(!over().all(|x| x != 3), "{ctx}");
            let under = || (0..2usize).into_par_iter().chain(0..usize::MAX);
            assert_eq!(under().find_first(|&x| x == 5), Some(5), "{ctx}");
            assert_eq!(under().find_first(|&x| x == 1), Some(1), "{ctx}");
            // Unindexed on both sides: the same.
            let odd = (0..usize::MAX).into_par_iter().filter(|x| x % 2 == 1);
            let found = odd.chain(over()).find_first(|&x| x > 6);
            assert_eq!(found, Some(7), "{ctx}");

            let too_long = "the chain is longer than usize::MAX";
            // Each returns what it got, had it not panicked.
            let needs_index: [(&str, &(dyn Fn() -> Option<usize> + Sync)); 7] = [
                ("len", &|| Some(over().len())),
                ("position_any", &|| over().position_any(|x| x == 3)),
                ("enumerate find_first", &|| {
                    over()
                        .enumerate()
                        .find_first(|&(_, x)| x == 3)
                        .map(|(i, _)| i)
                }),
                ("enumerate any", &|| {
                    over().enumerate().any(|(i, _)| i == 3).then_some(3)
                }),
                ("take", &|| Some(over().take(3).collect::<Vec<_>>().len())),
                ("skip", &|| Some(over().skip(usize::MAX).count())),
                ("zip", &|| Some(over().zip(0..3).count())),
            ];
            for (what, op) in needs_index {
                let message = panic_message(panic::catch_unwind(AssertUnwindSafe(op)), &ctx);
                assert_eq!(message, too_long, "{what} ({ctx})");
            }
        });
    }
}

#[test]
fn slices_vecs_and_arrays_by_reference() {
    check("slices_vecs_and_arrays_by_reference", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        let sum: u64 = v.iter().map(|&x| u64::from(x)).sum();

        assert_eq!(v.par_iter().len(), v.len(), "Vec len ({ctx})");
        assert_eq!(
            v.par_iter().map(|&x| u64::from(x)).sum::<u64>(),
            sum,
            "Vec sum ({ctx})"
        );
        assert_eq!(
            v.par_iter().collect::<Vec<&u32>>(),
            v.iter().collect::<Vec<&u32>>(),
            "Vec refs ({ctx})"
        );
        // The references are to the elements themselves, not to copies.
        assert!(
            v.par_iter()
                .enumerate()
                .all(|(i, x)| std::ptr::eq(x, &v[i])),
            "Vec refs point into the Vec ({ctx})"
        );

        let a = case.rng.below(v.len() + 1);
        let b = a + case.rng.below(v.len() - a + 1);
        let slice = &v[a..b];
        assert_eq!(
            slice.par_iter().copied().collect::<Vec<_>>(),
            slice.to_vec(),
            "slice {a}..{b} ({ctx})"
        );
        assert_eq!(
            slice.into_par_iter().copied().collect::<Vec<_>>(),
            slice.to_vec(),
            "&slice into_par_iter ({ctx})"
        );
        assert_eq!(
            (&v).into_par_iter().count(),
            v.len(),
            "&Vec into_par_iter ({ctx})"
        );

        let array: [u32; 7] = std::array::from_fn(|_| case.rng.below(100) as u32);
        assert_eq!(
            array.par_iter().copied().collect::<Vec<_>>(),
            array.to_vec(),
            "array ({ctx})"
        );
        let empty: [u32; 0] = [];
        assert_eq!(empty.par_iter().count(), 0, "empty array ({ctx})");

        let strings: Vec<String> = v.iter().map(u32::to_string).collect();
        assert_eq!(
            strings.par_iter().map(String::len).sum::<usize>(),
            strings.iter().map(String::len).sum::<usize>(),
            "Vec<String> ({ctx})"
        );
    });
}

#[test]
fn par_iter_mut_mutates_every_element_once() {
    check("par_iter_mut_mutates_every_element_once", |case| {
        let ctx = case.to_string();
        let start = case.values(1 << 20);

        let mut par = start.clone();
        par.par_iter_mut().for_each(|x| *x = x.wrapping_mul(7) + 1);
        let seq: Vec<u32> = start.iter().map(|x| x.wrapping_mul(7) + 1).collect();
        assert_eq!(par, seq, "for_each ({ctx})");

        // `^= index` twice would undo itself: each element is visited once.
        let mut par = start.clone();
        par.par_iter_mut()
            .enumerate()
            .for_each(|(i, x)| *x ^= i as u32);
        let seq: Vec<u32> = start
            .iter()
            .enumerate()
            .map(|(i, &x)| x ^ i as u32)
            .collect();
        assert_eq!(par, seq, "enumerate ({ctx})");

        let other = case.other_values(100);
        let mut par = start.clone();
        par.par_iter_mut()
            .zip(other.par_iter())
            .for_each(|(x, &y)| *x += y);
        let mut seq = start.clone();
        seq.iter_mut().zip(&other).for_each(|(x, &y)| *x += y);
        assert_eq!(par, seq, "zip ({ctx})");

        for n in case.cuts() {
            let mut par = start.clone();
            par.par_iter_mut().take(n).for_each(|x| *x = u32::MAX);
            let mut seq = start.clone();
            seq.iter_mut().take(n).for_each(|x| *x = u32::MAX);
            assert_eq!(par, seq, "take({n}) ({ctx})");

            let mut par = start.clone();
            par.par_iter_mut().skip(n).for_each(|x| *x = u32::MAX);
            let mut seq = start.clone();
            seq.iter_mut().skip(n).for_each(|x| *x = u32::MAX);
            assert_eq!(par, seq, "skip({n}) ({ctx})");
        }

        let mut par = start.clone();
        (&mut par[..]).into_par_iter().for_each(|x| *x /= 2);
        let seq: Vec<u32> = start.iter().map(|x| x / 2).collect();
        assert_eq!(par, seq, "&mut slice into_par_iter ({ctx})");

        let mut array = [0usize; 33];
        array
            .par_iter_mut()
            .enumerate()
            .for_each(|(i, x)| *x += i * i);
        assert_eq!(
            array,
            std::array::from_fn::<usize, 33, _>(|i| i * i),
            "array ({ctx})"
        );
    });
}

#[test]
fn vec_and_array_by_value_move_their_items() {
    check("vec_and_array_by_value_move_their_items", |case| {
        let ctx = case.to_string();
        let strings: Vec<String> = case.values(1_000).iter().map(u32::to_string).collect();

        assert_eq!(
            strings.clone().into_par_iter().collect::<Vec<String>>(),
            strings,
            "collect ({ctx})"
        );
        assert_eq!(strings.clone().into_par_iter().len(), strings.len());
        assert_eq!(
            strings
                .clone()
                .into_par_iter()
                .map(|s| s + "!")
                .collect::<Vec<_>>(),
            strings.iter().map(|s| s.clone() + "!").collect::<Vec<_>>(),
            "map ({ctx})"
        );
        assert_eq!(
            strings
                .clone()
                .into_par_iter()
                .enumerate()
                .filter(|(i, _)| i % 3 == 1)
                .map(|(_, s)| s)
                .collect::<Vec<_>>(),
            strings
                .iter()
                .enumerate()
                .filter(|(i, _)| i % 3 == 1)
                .map(|(_, s)| s.clone())
                .collect::<Vec<_>>(),
            "enumerate filter ({ctx})"
        );

        let array: [String; 5] = std::array::from_fn(|i| format!("{i}:{}", case.seed));
        assert_eq!(
            array.clone().into_par_iter().collect::<Vec<_>>(),
            array.to_vec(),
            "array ({ctx})"
        );
    });
}

/// `v` in a `VecDeque` whose storage wraps around (its front part pushed
/// at the front), so that its two slices are both in use.
fn wrapped_deque<T>(v: Vec<T>, front: usize) -> VecDeque<T> {
    let mut v = v;
    let back = v.split_off(front.min(v.len()));
    let mut deque = VecDeque::with_capacity(v.len() + back.len());
    deque.extend(back);
    for x in v.into_iter().rev() {
        deque.push_front(x);
    }
    deque
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

#[test]
fn std_collections_by_reference_mutable_reference_and_value() {
    check(
        "std_collections_by_reference_mutable_reference_and_value",
        |case| {
            let ctx = case.to_string();
            let v = case.values(1_000);
            let front = case.rng.below(v.len() + 1);

            let mut deque = wrapped_deque(v.clone(), front);
            assert_eq!(deque.par_iter().len(), v.len(), "VecDeque len ({ctx})");
            assert_eq!(
                deque.par_iter().copied().collect::<Vec<_>>(),
                v,
                "VecDeque par_iter ({ctx})"
            );
            deque
                .par_iter_mut()
                .enumerate()
                .for_each(|(i, x)| *x ^= i as u32);
            let xored: Vec<u32> = v.iter().enumerate().map(|(i, &x)| x ^ i as u32).collect();
            assert!(deque.iter().eq(&xored), "VecDeque par_iter_mut ({ctx})");
            assert_eq!(
                deque.into_par_iter().collect::<Vec<_>>(),
                xored,
                "VecDeque into_par_iter ({ctx})"
            );

            let heap: std::collections::BinaryHeap<u32> = v.iter().copied().collect();
            assert_eq!(
                sorted(heap.par_iter().copied().collect()),
                sorted(v.clone()),
                "BinaryHeap par_iter ({ctx})"
            );
            assert_eq!(
                sorted(heap.into_par_iter().collect()),
                sorted(v.clone()),
                "BinaryHeap into_par_iter ({ctx})"
            );

            let boxed: Box<[u32]> = v.clone().into_boxed_slice();
            assert_eq!(
                boxed.par_iter().count(),
                v.len(),
                "Box<[T]> par_iter ({ctx})"
            );
            assert_eq!(
                boxed.into_par_iter().collect::<Vec<_>>(),
                v,
                "Box<[T]> into_par_iter ({ctx})"
            );

            let mut map: HashMap<u32, usize> = v.iter().enumerate().map(|(i, &x)| (x, i)).collect();
            assert_eq!(
                sorted(map.par_iter().map(|(&k, &i)| (k, i)).collect()),
                sorted(map.iter().map(|(&k, &i)| (k, i)).collect()),
                "HashMap par_iter ({ctx})"
            );
            map.par_iter_mut().for_each(|(&k, i)| *i += k as usize);
            let seq: Vec<(u32, usize)> = sorted(map.iter().map(|(&k, &i)| (k, i)).collect());
            assert!(
                seq.iter().all(|&(k, i)| i >= k as usize),
                "HashMap par_iter_mut ({ctx})"
            );
            assert_eq!(
                sorted(map.into_par_iter().collect()),
                seq,
                "HashMap into_par_iter ({ctx})"
            );

            let set: HashSet<u32> = v.iter().copied().collect();
            assert_eq!(
                sorted(set.par_iter().copied().collect()),
                sorted(set.iter().copied().collect()),
                "HashSet par_iter ({ctx})"
            );
            assert_eq!(
                sorted(set.clone().into_par_iter().collect()),
                sorted(set.into_iter().collect()),
                "HashSet into_par_iter ({ctx})"
            );

            // The ordered ones keep their order.
            let mut tree: BTreeMap<u32, usize> =
                v.iter().enumerate().map(|(i, &x)| (x, i)).collect();
            assert_eq!(
                tree.par_iter().collect::<Vec<_>>(),
                tree.iter().collect::<Vec<_>>(),
                "BTreeMap par_iter ({ctx})"
            );
            tree.par_iter_mut().for_each(|(_, i)| *i *= 2);
            assert!(
                tree.values().all(|i| i % 2 == 0),
                "BTreeMap par_iter_mut ({ctx})"
            );
            assert_eq!(
                tree.clone().into_par_iter().collect::<Vec<_>>(),
                tree.into_iter().collect::<Vec<_>>(),
                "BTreeMap into_par_iter ({ctx})"
            );
            let tree: BTreeSet<u32> = v.iter().copied().collect();
            assert_eq!(
                tree.par_iter().collect::<Vec<_>>(),
                tree.iter().collect::<Vec<_>>(),
                "BTreeSet par_iter ({ctx})"
            );
            assert_eq!(
                tree.clone().into_par_iter().collect::<Vec<_>>(),
                tree.into_iter().collect::<Vec<_>>(),
                "BTreeSet into_par_iter ({ctx})"
            );
            let mut list: LinkedList<u32> = v.iter().copied().collect();
            list.par_iter_mut().for_each(|x| *x += 1);
            let plus_one: Vec<u32> = v.iter().map(|x| x + 1).collect();
            assert_eq!(
                list.par_iter().copied().collect::<Vec<_>>(),
                plus_one,
                "LinkedList par_iter ({ctx})"
            );
            assert_eq!(
                list.into_par_iter().collect::<Vec<_>>(),
                plus_one,
                "LinkedList into_par_iter ({ctx})"
            );

            let mut option = v.first().copied();
            option.par_iter_mut().for_each(|x| *x += 1);
            assert_eq!(option.par_iter().len(), usize::from(!v.is_empty()), "{ctx}");
            assert_eq!(
                option.into_par_iter().collect::<Vec<_>>(),
                v.first().map(|x| x + 1).into_iter().collect::<Vec<_>>(),
                "Option ({ctx})"
            );
            let result: Result<u32, ()> = option.ok_or(());
            assert_eq!(
                result
                    .par_iter()
                    .chain(result.into_par_iter().map(|_| &0))
                    .count(),
                2 * usize::from(!v.is_empty()),
                "Result ({ctx})"
            );
        },
    );
}

#[test]
fn std_collections_by_value_drop_their_items_once() {
    quiet_planned_panics();
    check("std_collections_by_value_drop_their_items_once", |case| {
        let ctx = case.to_string();
        let len = case.len;
        let front = case.rng.below(len + 1);
        let cut = case.rng.below(len + 3);
        let target = case.rng.below(len + 1); // `len`: no item matches.
                                              // Each collection by value, as a parallel iterator whose items
                                              // know their place in `tracked`'s order.
        type Make = fn(Vec<Tracked>, usize) -> Vec<Tracked>;
        let makes: [(&str, Make); 4] = [
            ("VecDeque", |items, front| {
                wrapped_deque(items, front).into_par_iter().collect()
            }),
            ("LinkedList", |items, _| {
                items
                    .into_iter()
                    .collect::<LinkedList<_>>()
                    .into_par_iter()
                    .collect()
            }),
            ("BTreeMap", |items, _| {
                let map: BTreeMap<usize, Tracked> =
                    items.into_iter().map(|item| (item.id, item)).collect();
                map.into_par_iter().map(|(_, item)| item).collect()
            }),
            ("Option", |mut items, _| {
                let last = items.pop();
                let mut out: Vec<Tracked> = last.into_par_iter().collect();
                out.splice(0..0, items);
                out
            }),
        ];
        for (what, make) in makes {
            moves_in_order(len, 0..len, what, &ctx, |items| make(items, front));
        }
        moves_in_order(len, 0..len.min(cut), "VecDeque take", &ctx, |items| {
            wrapped_deque(items, front)
                .into_par_iter()
                .take(cut)
                .collect()
        });
        moves_in_order(
            len,
            (target < len).then_some(target),
            "HashMap find_any",
            &ctx,
            |items| {
                let map: HashMap<usize, Tracked> =
                    items.into_iter().map(|item| (item.id, item)).collect();
                let found = map.into_par_iter().find_any(|(id, _)| *id == target);
                found.map(|(_, item)| item).into_iter().collect()
            },
        );
        if len > 0 {
            let target = target.min(len - 1);
            panics_on(
                len,
                target,
                "LinkedList for_each",
                &ctx,
                |items, explode| {
                    let list: LinkedList<Tracked> = items.into_iter().collect();
                    list.into_par_iter().for_each(|item| explode(&item));
                },
            );
        }
    });
}

/// A random text of `len` chars, many of them separators, whitespace,
/// `\r` and multi-byte ones.
fn text(case: &mut Case) -> String {
    const CHARS: [char; 12] = [
        'a', 'b', 'é', '€', '𝄞', ',', ';', ' ', '\t', '\n', '\r', '\u{3000}',
    ];
    (0..case.len)
        .map(|_| CHARS[case.rng.below(CHARS.len())])
        .collect()
}

#[test]
fn str_sources_against_std() {
    check("str_sources_against_std", |case| {
        let ctx = case.to_string();
        let text = text(case);
        let text = text.as_str();
        assert_eq!(
            text.par_chars().collect::<Vec<_>>(),
            text.chars().collect::<Vec<_>>(),
            "par_chars ({ctx})"
        );
        assert_eq!(
            text.par_char_indices().collect::<Vec<_>>(),
            text.char_indices().collect::<Vec<_>>(),
            "par_char_indices ({ctx})"
        );
        assert_eq!(
            text.par_bytes().collect::<Vec<_>>(),
            text.bytes().collect::<Vec<_>>(),
            "par_bytes ({ctx})"
        );
        assert_eq!(text.par_bytes().len(), text.len(), "par_bytes len ({ctx})");
        assert_eq!(
            text.par_split(',').collect::<Vec<_>>(),
            text.split(',').collect::<Vec<_>>(),
            "par_split char ({ctx})"
        );
        assert_eq!(
            text.par_split([',', '€']).collect::<Vec<_>>(),
            text.split([',', '€']).collect::<Vec<_>>(),
            "par_split array ({ctx})"
        );
        let separators: &[char] = &[';', '𝄞'];
        assert_eq!(
            text.par_split(separators).collect::<Vec<_>>(),
            text.split(separators).collect::<Vec<_>>(),
            "par_split slice ({ctx})"
        );
        assert_eq!(
            text.par_split(|c: char| c.is_alphabetic())
                .collect::<Vec<_>>(),
            text.split(|c: char| c.is_alphabetic()).collect::<Vec<_>>(),
            "par_split predicate ({ctx})"
        );
        assert_eq!(
            text.par_split_terminator(',').collect::<Vec<_>>(),
            text.split_terminator(',').collect::<Vec<_>>(),
            "par_split_terminator ({ctx})"
        );
        assert_eq!(
            text.par_lines().collect::<Vec<_>>(),
            text.lines().collect::<Vec<_>>(),
            "par_lines ({ctx})"
        );
        assert_eq!(
            text.par_split_whitespace().collect::<Vec<_>>(),
            text.split_whitespace().collect::<Vec<_>>(),
            "par_split_whitespace ({ctx})"
        );
        assert_eq!(
            text.par_split_ascii_whitespace().collect::<Vec<_>>(),
            text.split_ascii_whitespace().collect::<Vec<_>>(),
            "par_split_ascii_whitespace ({ctx})"
        );
        // The edges the random text may miss: a separator at either end,
        // runs of whitespace, whitespace that is not ASCII (a vertical tab
        // is for `char::is_whitespace` only; U+3000 is three bytes, U+85
        // and U+A0 two, beside other chars of two and four).
        for edge in [
            ",",
            ",,",
            "a,",
            ",a",
            "\n",
            "a\n",
            "\r\n",
            "a\r",
            "",
            " ",
            "  a  b ",
            "a\u{0B}b",
            "\u{3000}a\u{3000}\u{3000}é b\t",
            "\u{85}é\u{a0}\u{2028}𝄞 \u{85}",
        ] {
            let what = format!("{edge:?} ({ctx})");
            assert_eq!(
                edge.par_split(',').collect::<Vec<_>>(),
                edge.split(',').collect::<Vec<_>>(),
                "par_split {what}"
            );
            assert_eq!(
                edge.par_split_terminator(',').collect::<Vec<_>>(),
                edge.split_terminator(',').collect::<Vec<_>>(),
                "par_split_terminator {what}"
            );
            assert_eq!(
                edge.par_lines().collect::<Vec<_>>(),
                edge.lines().collect::<Vec<_>>(),
                "par_lines {what}"
            );
            assert_eq!(
                edge.par_split_whitespace().collect::<Vec<_>>(),
                edge.split_whitespace().collect::<Vec<_>>(),
                "par_split_whitespace {what}"
            );
            assert_eq!(
                edge.par_split_ascii_whitespace().collect::<Vec<_>>(),
                edge.split_ascii_whitespace().collect::<Vec<_>>(),
                "par_split_ascii_whitespace {what}"
            );
        }
        // Pieces flat-mapped run the sequential path.
        assert_eq!(
            text.par_lines()
                .flat_map(|line| line.par_split(','))
                .count(),
            text.lines().flat_map(|line| line.split(',')).count(),
            "flat_map par_split ({ctx})"
        );
        let target = text.chars().nth(case.rng.below(case.len + 1));
        assert_eq!(
            text.par_char_indices()
                .find_first(|&(_, c)| Some(c) == target),
            text.char_indices().find(|&(_, c)| Some(c) == target),
            "par_char_indices find_first ({ctx})"
        );
    });
}

#[test]
fn repeat_repeat_n_once_and_empty() {
    check("repeat_repeat_n_once_and_empty", |case| {
        let ctx = case.to_string();
        let len = case.len;
        let word = format!("w{}", case.seed % 97);
        let seq: Vec<String> = std::iter::repeat_n(word.clone(), len).collect();
        assert_eq!(
            weft::iter::repeat_n(word.clone(), len).collect::<Vec<_>>(),
            seq,
            "repeat_n ({ctx})"
        );
        assert_eq!(
            weft::iter::repeat_n(0u8, len).len(),
            len,
            "repeat_n len ({ctx})"
        );
        assert_eq!(
            weft::iter::repeat(word.clone())
                .take(len)
                .collect::<Vec<_>>(),
            seq,
            "repeat take ({ctx})"
        );
        let v = case.values(100);
        assert_eq!(
            weft::iter::repeat(3u32)
                .zip(v.par_iter())
                .map(|(a, &b)| a * b)
                .collect::<Vec<_>>(),
            v.iter().map(|&b| 3 * b).collect::<Vec<_>>(),
            "repeat zip ({ctx})"
        );
        // Without end, but a search stops.
        assert_eq!(
            weft::iter::repeat(5u8).map(|x| x + 1).find_any(|&x| x == 6),
            Some(6),
            "repeat find_any ({ctx})"
        );
        let cut = case.rng.below(len + 2);
        assert_eq!(
            weft::iter::repeat_n(1u64, len)
                .enumerate()
                .skip(cut)
                .map(|(i, x)| i as u64 * x)
                .sum::<u64>(),
            (cut.min(len)..len).map(|i| i as u64).sum::<u64>(),
            "repeat_n enumerate skip ({ctx})"
        );
        #[allow(deprecated)]
        let old = weft::iter::repeatn(1u8, len).count();
        assert_eq!(old, len, "repeatn ({ctx})");
        assert_eq!(
            v.par_iter()
                .copied()
                .chain(weft::iter::once(7))
                .collect::<Vec<_>>(),
            v.iter()
                .copied()
                .chain(std::iter::once(7))
                .collect::<Vec<_>>(),
            "once ({ctx})"
        );
        assert_eq!(
            weft::iter::empty()
                .chain(v.par_iter().copied())
                .collect::<Vec<u32>>(),
            v,
            "empty ({ctx})"
        );
        // By value: each clone and the value itself dropped once.
        let (drops, items) = tracked(1);
        let item = items.into_iter().next();
        if let Some(item) = item {
            let clones = weft::iter::once(item).count();
            assert_eq!(clones, 1, "{ctx}");
        }
        assert_dropped_once(&drops, "once", &ctx);
    });
}

#[test]
fn par_bridge_sees_every_item_once() {
    quiet_planned_panics();
    check("par_bridge_sees_every_item_once", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        // In the order the pieces took them: the same items, sorted.
        let par: Vec<u32> = v.iter().copied().par_bridge().collect();
        assert_eq!(sorted(par), sorted(v.clone()), "collect ({ctx})");
        assert_eq!(
            v.iter().par_bridge().map(|&x| u64::from(x)).sum::<u64>(),
            v.iter().map(|&x| u64::from(x)).sum::<u64>(),
            "sum ({ctx})"
        );
        assert_eq!(
            v.iter().filter(|&&x| x % 3 == 0).par_bridge().count(),
            v.iter().filter(|&&x| x % 3 == 0).count(),
            "count ({ctx})"
        );
        let target = case.rng.below(1_000) as u32;
        assert_eq!(
            v.iter().par_bridge().any(|&x| x == target),
            v.contains(&target),
            "any ({ctx})"
        );
        assert_eq!(
            v.iter().par_bridge().flat_map_iter(|&x| [x, x]).count(),
            2 * v.len(),
            "flat_map_iter ({ctx})"
        );
        // Inner bridges of a flat_map: every item of each, once.
        assert_eq!(
            (0..3u32)
                .into_par_iter()
                .flat_map(|_| v.iter().par_bridge())
                .count(),
            3 * v.len(),
            "flat_map par_bridge ({ctx})"
        );

        let len = case.len;
        let cut = case.rng.below(len + 1);
        moves_in_order(
            len,
            (cut < len).then_some(cut),
            "par_bridge find_any",
            &ctx,
            |items| {
                let found = items
                    .into_iter()
                    .par_bridge()
                    .find_any(|item| item.id == cut);
                found.into_iter().collect()
            },
        );
        moves_in_order(len, 0..len, "par_bridge collect", &ctx, |items| {
            let mut out: Vec<Tracked> = items.into_iter().par_bridge().collect();
            out.sort_by_key(|item| item.id);
            out
        });
        if len > 0 {
            let target = cut.min(len - 1);
            panics_on(
                len,
                target,
                "par_bridge for_each",
                &ctx,
                |items, explode| {
                    items
                        .into_iter()
                        .par_bridge()
                        .for_each(|item| explode(&item));
                },
            );
            // A panic in the iterator itself reaches the caller too.
            let result = panic::catch_unwind(AssertUnwindSafe(|| {
                (0..len)
                    .inspect(|&i| {
                        if i == target {
                            panic::panic_any(Planned(i));
                        }
                    })
                    .par_bridge()
                    .count()
            }));
            assert_eq!(
                planned(result, "par_bridge next", &ctx),
                Planned(target),
                "{ctx}"
            );
        }
    });
}

/// Drops of [`Unit`], the zero-sized tracked item (one test uses it).
static UNIT_DROPS: AtomicUsize = AtomicUsize::new(0);

/// A zero-sized item that counts its drops: a `Vec` of them has no bytes to
/// walk, only a length.
struct Unit;

impl Drop for Unit {
    fn drop(&mut self) {
        UNIT_DROPS.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn zero_sized_items_by_value() {
    check("zero_sized_items_by_value", |case| {
        let ctx = case.to_string();
        let len = case.len;
        assert_eq!(vec![(); len].into_par_iter().count(), len, "count ({ctx})");
        assert_eq!(
            vec![(); len].into_par_iter().collect::<Vec<()>>().len(),
            len,
            "collect ({ctx})"
        );
        let cut = case.rng.below(len + 2);
        assert_eq!(
            vec![(); len].into_par_iter().take(cut).count(),
            len.min(cut),
            "take({cut}) ({ctx})"
        );
        // Each item is handed to the closure once, and dropped once.
        UNIT_DROPS.store(0, Ordering::SeqCst);
        let ran = AtomicUsize::new(0);
        let units: Vec<Unit> = (0..len).map(|_| Unit).collect();
        units.into_par_iter().for_each(|unit| {
            ran.fetch_add(1, Ordering::SeqCst);
            drop(unit);
        });
        assert_eq!(ran.into_inner(), len, "for_each runs ({ctx})");
        assert_eq!(
            UNIT_DROPS.load(Ordering::SeqCst),
            len,
            "for_each drops ({ctx})"
        );
        UNIT_DROPS.store(0, Ordering::SeqCst);
        let units: Vec<Unit> = (0..len).map(|_| Unit).collect();
        assert_eq!(
            units.into_par_iter().skip(cut).count(),
            len.saturating_sub(cut)
        );
        assert_eq!(UNIT_DROPS.load(Ordering::SeqCst), len, "skip drops ({ctx})");
        // By reference there is nothing to move: this part works.
        let units = vec![(); len];
        assert_eq!(units.par_iter().count(), len, "par_iter ({ctx})");
    });
}

#[test]
fn by_value_items_are_dropped_exactly_once() {
    check("by_value_items_are_dropped_exactly_once", |case| {
        let ctx = case.to_string();
        let len = case.len;
        let drops_once = |what: &str, consume: &dyn Fn(Vec<Tracked>)| {
            let (drops, items) = tracked(len);
            consume(items);
            assert_dropped_once(&drops, what, &ctx);
        };
        let target = case.rng.below(len + 1); // `len`: no item matches.
        let cut = case.rng.below(len + 3);
        let other = case.other_len();

        drops_once("unconsumed", &|items| drop(items.into_par_iter()));
        drops_once("for_each", &|items| items.into_par_iter().for_each(drop));
        drops_once("collect", &|items| {
            let out: Vec<Tracked> = items.into_par_iter().collect();
            assert_eq!(ids(&out), (0..len).collect::<Vec<_>>(), "{ctx}");
        });
        drops_once("map sum", &|items| {
            let sum = items.into_par_iter().map(|item| item.id).sum::<usize>();
            assert_eq!(sum, (0..len).sum::<usize>(), "{ctx}");
        });
        drops_once("filter collect", &|items| {
            let out: Vec<Tracked> = items.into_par_iter().filter(|i| i.id % 3 == 0).collect();
            assert_eq!(ids(&out), (0..len).step_by(3).collect::<Vec<_>>(), "{ctx}");
        });
        drops_once("rev collect", &|items| {
            let out: Vec<Tracked> = items.into_par_iter().rev().collect();
            assert_eq!(ids(&out), (0..len).rev().collect::<Vec<_>>(), "{ctx}");
        });
        drops_once("take collect", &|items| {
            let out: Vec<Tracked> = items.into_par_iter().take(cut).collect();
            assert_eq!(ids(&out), (0..len.min(cut)).collect::<Vec<_>>(), "{ctx}");
        });
        drops_once("take count", &|items| {
            assert_eq!(items.into_par_iter().take(cut).count(), len.min(cut));
        });
        drops_once("skip collect", &|items| {
            let out: Vec<Tracked> = items.into_par_iter().skip(cut).collect();
            assert_eq!(ids(&out), (cut.min(len)..len).collect::<Vec<_>>(), "{ctx}");
        });
        drops_once("enumerate skip take", &|items| {
            let out: Vec<usize> = items
                .into_par_iter()
                .enumerate()
                .skip(cut / 2)
                .take(cut)
                .map(|(i, item)| i + item.id)
                .collect();
            let seq: Vec<usize> = (0..len).skip(cut / 2).take(cut).map(|i| 2 * i).collect();
            assert_eq!(out, seq, "{ctx}");
        });
        drops_once("find_any", &|items| {
            let found = items.into_par_iter().find_any(|item| item.id == target);
            assert_eq!(found.map(|item| item.id), (target < len).then_some(target));
        });
        drops_once("find_any, one item per piece", &|items| {
            let found = items
                .into_par_iter()
                .with_max_len(1)
                .find_any(|item| item.id % 5 == 4);
            match found {
                Some(item) => assert_eq!(item.id % 5, 4, "{ctx}"),
                None => assert!(len < 5, "found none of {len} ({ctx})"),
            }
        });
        drops_once("find_first", &|items| {
            let found = items.into_par_iter().find_first(|item| item.id >= target);
            assert_eq!(found.map(|item| item.id), (target < len).then_some(target));
        });
        drops_once("any", &|items| {
            let any = items.into_par_iter().any(|item| item.id == target);
            assert_eq!(any, target < len, "{ctx}");
        });
        drops_once("all", &|items| {
            let all = items.into_par_iter().all(|item| item.id != target);
            assert_eq!(all, target >= len, "{ctx}");
        });
        drops_once("position_any", &|items| {
            let at = items.into_par_iter().position_any(|item| item.id == target);
            assert_eq!(at, (target < len).then_some(target), "{ctx}");
        });
        drops_once("min_by_key", &|items| {
            let min = items.into_par_iter().min_by_key(|item| item.id % 7);
            assert_eq!(min.map(|item| item.id), (0..len).min_by_key(|i| i % 7));
        });
        drops_once("fold", &|items| {
            let sum = items
                .into_par_iter()
                .fold(|| 0, |sum, item| sum + item.id)
                .sum::<usize>();
            assert_eq!(sum, (0..len).sum::<usize>(), "{ctx}");
        });
        drops_once("try_for_each", &|items| {
            let result = items.into_par_iter().try_for_each(|item| {
                if item.id == target {
                    Err(item)
                } else {
                    Ok(())
                }
            });
            assert_eq!(
                result.err().map(|item| item.id),
                (target < len).then_some(target)
            );
        });
        drops_once("try_reduce", &|items| {
            let result = items
                .into_par_iter()
                .map(|item| {
                    if item.id == target {
                        Err(item)
                    } else {
                        Ok(item.id)
                    }
                })
                .try_reduce(|| 0, |a, b| Ok(a + b));
            assert_eq!(
                result.err().map(|item| item.id),
                (target < len).then_some(target)
            );
        });
        drops_once("try_fold", &|items| {
            let found: Vec<Result<usize, Tracked>> = items
                .into_par_iter()
                .try_fold(
                    || 0,
                    |n, item| {
                        if item.id == target {
                            Err(item)
                        } else {
                            Ok(n + 1)
                        }
                    },
                )
                .collect();
            let failed = found.iter().filter(|r| r.is_err()).count();
            assert_eq!(failed, usize::from(target < len), "{ctx}");
        });
        drops_once("map_with inspect update collect", &|items| {
            let out: Vec<Tracked> = items
                .into_par_iter()
                .map_with(0, |_, item| item)
                .inspect(|_| ())
                .update(|_| ())
                .take(cut)
                .collect();
            assert_eq!(ids(&out), (0..len.min(cut)).collect::<Vec<_>>(), "{ctx}");
        });
        drops_once("fold_with", &|items| {
            let sum = items
                .into_par_iter()
                .fold_with(0, |sum, item| sum + item.id)
                .sum::<usize>();
            assert_eq!(sum, (0..len).sum::<usize>(), "{ctx}");
        });
        drops_once("flat_map", &|items| {
            let count = items
                .into_par_iter()
                .flat_map(|item| if item.id % 2 == 0 { vec![item] } else { vec![] })
                .count();
            assert_eq!(count, len.div_ceil(2), "{ctx}");
        });
        drops_once("zip, this side", &|items| {
            let (other_drops, others) = tracked(other);
            let pairs = items.into_par_iter().zip(others).count();
            assert_eq!(pairs, len.min(other), "{ctx}");
            assert_dropped_once(&other_drops, "zip, other side", &ctx);
        });
        drops_once("chain take, this side", &|items| {
            let (other_drops, others) = tracked(other);
            let out: Vec<Tracked> = items.into_par_iter().chain(others).take(cut).collect();
            let seq: Vec<usize> = (0..len).chain(0..other).take(cut).collect();
            assert_eq!(ids(&out), seq, "{ctx}");
            drop(out);
            assert_dropped_once(&other_drops, "chain take, other side", &ctx);
        });
    });
}

#[test]
fn by_value_items_are_dropped_exactly_once_when_a_closure_panics() {
    quiet_planned_panics();
    check(
        "by_value_items_are_dropped_exactly_once_when_a_closure_panics",
        |case| {
            let ctx = case.to_string();
            let len = case.len;
            if len == 0 {
                return; // Nothing to panic on.
            }
            let target = match case.rng.below(4) {
                0 => 0,
                1 => len - 1,
                2 => len / 2,
                _ => case.rng.below(len),
            };
            let drops_once = |what: &str, consume: &(dyn Fn(Vec<Tracked>) + Sync)| {
                let (drops, items) = tracked(len);
                let result = panic::catch_unwind(AssertUnwindSafe(|| consume(items)));
                let caught = planned(result, what, &ctx);
                assert_eq!(caught, Planned(target), "{what}: payload ({ctx})");
                assert_dropped_once(&drops, what, &ctx);
            };
            let explode = |item: &Tracked| {
                if item.id == target {
                    panic::panic_any(Planned(target));
                }
            };

            drops_once("for_each", &|items| {
                items.into_par_iter().for_each(|item| explode(&item));
            });
            drops_once("map collect", &|items| {
                let _: Vec<Tracked> = items
                    .into_par_iter()
                    .map(|item| {
                        explode(&item);
                        item
                    })
                    .collect();
            });
            drops_once("filter collect", &|items| {
                let _: Vec<Tracked> = items
                    .into_par_iter()
                    .filter(|item| {
                        explode(item);
                        true
                    })
                    .collect();
            });
            drops_once("map sum", &|items| {
                let _: usize = items
                    .into_par_iter()
                    .map(|item| {
                        explode(&item);
                        item.id
                    })
                    .sum();
            });
            drops_once("find_any", &|items| {
                let _ = items.into_par_iter().find_any(|item| {
                    explode(item);
                    false
                });
            });
            drops_once("try_for_each", &|items| {
                let _ = items.into_par_iter().try_for_each(|item| {
                    explode(&item);
                    Ok::<(), ()>(())
                });
            });
            drops_once("map_init inspect collect", &|items| {
                let _: Vec<Tracked> = items
                    .into_par_iter()
                    .map_init(|| (), |(), item| item)
                    .inspect(explode)
                    .collect();
            });
            drops_once("par_extend", &|items| {
                let (prefix_drops, prefix) = tracked(3);
                let mut out = prefix;
                let result = panic::catch_unwind(AssertUnwindSafe(|| {
                    out.par_extend(items.into_par_iter().map(|item| {
                        explode(&item);
                        item
                    }));
                }));
                // What it held before, and nothing half-written.
                assert_eq!(ids(&out), [0, 1, 2], "par_extend keeps the Vec ({ctx})");
                drop(out);
                assert_dropped_once(&prefix_drops, "par_extend, the Vec's own", &ctx);
                if let Err(payload) = result {
                    panic::resume_unwind(payload);
                }
            });
            drops_once("zip collect", &|items| {
                let (other_drops, others) = tracked(len + 1);
                let result = panic::catch_unwind(AssertUnwindSafe(|| {
                    let _: Vec<(Tracked, Tracked)> = items
                        .into_par_iter()
                        .zip(others)
                        .map(|pair| {
                            explode(&pair.0);
                            pair
                        })
                        .collect();
                }));
                assert_dropped_once(&other_drops, "zip collect, other side", &ctx);
                if let Err(payload) = result {
                    panic::resume_unwind(payload);
                }
            });
        },
    );
}

// ------------------------------------------- destructors that panic

/// The drops of one run's bombs: per item, and in all.
struct Drops {
    each: Vec<AtomicUsize>,
    total: AtomicUsize,
    /// The drop (counted from 1, in all) that panics.
    burst_at: usize,
}

/// An item that counts its drops and panics on the `burst_at`-th drop of
/// its run, whichever item that is.
struct Bomb {
    id: usize,
    drops: Arc<Drops>,
}

impl Drop for Bomb {
    fn drop(&mut self) {
        self.drops.each[self.id].fetch_add(1, Ordering::SeqCst);
        if self.drops.total.fetch_add(1, Ordering::SeqCst) + 1 == self.drops.burst_at {
            panic::panic_any(Planned(self.drops.burst_at));
        }
    }
}

/// How many bombs each run has.
const BOMBS: usize = 20_000;

/// Which drop bursts: the first, one early in a skipped or untaken part,
/// the first after half the items, and the last.
const BURSTS: [usize; 4] = [1, 100, BOMBS / 2 + 1, BOMBS];

/// Runs `consume` on `BOMBS` bombs whose `burst_at`-th drop panics, for
/// every burst and worker count; `consume` drops what the call returns.
/// The panic must reach the caller, and every item must be dropped once.
fn every_bomb_dropped_once(what: &str, consume: impl Fn(Vec<Bomb>) + Sync) {
    quiet_planned_panics();
    for workers in WORKERS {
        for burst_at in BURSTS {
            let ctx = format!("{what}, drop {burst_at} panics, workers {workers}");
            let drops = Arc::new(Drops {
                each: (0..BOMBS).map(|_| AtomicUsize::new(0)).collect(),
                total: AtomicUsize::new(0),
                burst_at,
            });
            let bombs: Vec<Bomb> = (0..BOMBS)
                .map(|id| Bomb {
                    id,
                    drops: Arc::clone(&drops),
                })
                .collect();
            let ran = panic::catch_unwind(AssertUnwindSafe(|| on(workers, || consume(bombs))));
            assert_eq!(planned(ran, what, &ctx), Planned(burst_at), "{ctx}");
            let wrong: Vec<(usize, usize)> = (drops.each.iter().enumerate())
                .map(|(id, count)| (id, count.load(Ordering::SeqCst)))
                .filter(|&(_, count)| count != 1)
                .take(5)
                .collect();
            assert!(
                wrong.is_empty(),
                "(item, drops) not dropped once: {wrong:?}... ({ctx})"
            );
        }
    }
}

#[test]
fn the_harness_agrees_with_std() {
    // std drops every item once whatever one's drop does: the contract the
    // parallel loops are held to below.
    every_bomb_dropped_once("std skip count", |bombs| {
        assert_eq!(bombs.into_iter().skip(10_000).count(), 10_000);
    });
}

#[test]
fn a_panicking_drop_in_skipped_or_untaken_items_leaks_nothing() {
    every_bomb_dropped_once("skip count", |bombs| {
        bombs.into_par_iter().skip(10_000).count();
    });
    every_bomb_dropped_once("take count", |bombs| {
        bombs.into_par_iter().take(50).count();
    });
    every_bomb_dropped_once("take collect", |bombs| {
        drop(bombs.into_par_iter().take(50).collect::<Vec<_>>());
    });
    every_bomb_dropped_once("enumerate skip take collect", |bombs| {
        let kept: Vec<(usize, Bomb)> = bombs
            .into_par_iter()
            .enumerate()
            .skip(5_000)
            .take(5_000)
            .collect();
        drop(kept);
    });
    every_bomb_dropped_once("chain skip take count", |mut bombs| {
        let back = bombs.split_off(BOMBS / 3);
        bombs
            .into_par_iter()
            .chain(back)
            .skip(1_000)
            .take(50)
            .count();
    });
}

#[test]
fn a_panicking_drop_in_the_longer_side_of_a_zip_leaks_nothing() {
    every_bomb_dropped_once("zip count", |bombs| {
        bombs.into_par_iter().zip(0..50).count();
    });
    every_bomb_dropped_once("zip, bombs on the right", |bombs| {
        (0..50).into_par_iter().zip(bombs).count();
    });
    every_bomb_dropped_once("zip of bombs", |mut bombs| {
        let right = bombs.split_off(BOMBS - 50);
        drop(bombs.into_par_iter().zip(right).collect::<Vec<_>>());
    });
}

#[test]
fn a_panicking_drop_in_a_search_leaks_nothing() {
    every_bomb_dropped_once("find_any", |bombs| {
        drop(bombs.into_par_iter().find_any(|bomb| bomb.id == 15_000));
    });
    every_bomb_dropped_once("find_any of many", |bombs| {
        drop(bombs.into_par_iter().find_any(|bomb| bomb.id % 7 == 3));
    });
    every_bomb_dropped_once("find_any, one item per piece", |bombs| {
        let found = bombs
            .into_par_iter()
            .with_max_len(1)
            .find_any(|bomb| bomb.id % 7 == 3);
        drop(found);
    });
    every_bomb_dropped_once("find_first", |bombs| {
        drop(
            bombs
                .into_par_iter()
                .find_first(|bomb| bomb.id % 1_000 == 999),
        );
    });
    every_bomb_dropped_once("position_any", |bombs| {
        bombs.into_par_iter().position_any(|bomb| bomb.id == 12_345);
    });
    every_bomb_dropped_once("any", |bombs| {
        bombs.into_par_iter().any(|bomb| bomb.id == 3);
    });
    every_bomb_dropped_once("all", |bombs| {
        bombs.into_par_iter().all(|bomb| bomb.id < 19_000);
    });
}

#[test]
fn a_panicking_drop_in_other_consumers_leaks_nothing() {
    every_bomb_dropped_once("count", |bombs| {
        bombs.into_par_iter().count();
    });
    every_bomb_dropped_once("for_each", |bombs| bombs.into_par_iter().for_each(drop));
    every_bomb_dropped_once("collect", |bombs| {
        drop(bombs.into_par_iter().collect::<Vec<_>>());
    });
    every_bomb_dropped_once("rev collect", |bombs| {
        drop(bombs.into_par_iter().rev().collect::<Vec<_>>());
    });
    every_bomb_dropped_once("rev sum of ids", |bombs| {
        bombs
            .into_par_iter()
            .rev()
            .map(|bomb| bomb.id)
            .sum::<usize>();
    });
    every_bomb_dropped_once("filter collect", |bombs| {
        let kept: Vec<Bomb> = bombs
            .into_par_iter()
            .filter(|bomb| bomb.id % 3 == 0)
            .collect();
        drop(kept);
    });
    every_bomb_dropped_once("min_by_key", |bombs| {
        drop(bombs.into_par_iter().min_by_key(|bomb| bomb.id % 1_000));
    });
    every_bomb_dropped_once("max_by_key", |bombs| {
        drop(bombs.into_par_iter().max_by_key(|bomb| bomb.id % 1_000));
    });
    every_bomb_dropped_once("partition", |bombs| {
        let sides: (Vec<Bomb>, Vec<Bomb>) =
            bombs.into_par_iter().partition(|bomb| bomb.id % 3 == 0);
        drop(sides);
    });
}

#[test]
fn par_chunks_and_par_chunks_mut() {
    check("par_chunks_and_par_chunks_mut", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        let mut sizes = vec![1, 2, 3, case.len.max(1), case.len + 1];
        sizes.push(1 + case.rng.below(case.len + 2));
        sizes.push(1 + case.rng.below(16));
        for size in sizes {
            let what = format!("size {size}");
            assert_eq!(
                v.par_chunks(size).len(),
                v.chunks(size).len(),
                "{what}: len ({ctx})"
            );
            assert_eq!(
                v.par_chunks(size).collect::<Vec<&[u32]>>(),
                v.chunks(size).collect::<Vec<&[u32]>>(),
                "{what}: collect ({ctx})"
            );
            assert_eq!(
                v.par_chunks(size)
                    .map(|c| c.iter().sum::<u32>())
                    .collect::<Vec<_>>(),
                v.chunks(size)
                    .map(|c| c.iter().sum::<u32>())
                    .collect::<Vec<_>>(),
                "{what}: map ({ctx})"
            );
            let cut = case.rng.below(v.len() / size + 3);
            assert_eq!(
                v.par_chunks(size).skip(cut).collect::<Vec<_>>(),
                v.chunks(size).skip(cut).collect::<Vec<_>>(),
                "{what}: skip({cut}) ({ctx})"
            );
            assert_eq!(
                v.par_chunks(size).take(cut).collect::<Vec<_>>(),
                v.chunks(size).take(cut).collect::<Vec<_>>(),
                "{what}: take({cut}) ({ctx})"
            );

            let mut par = v.clone();
            par.par_chunks_mut(size).enumerate().for_each(|(i, chunk)| {
                chunk.reverse();
                chunk.iter_mut().for_each(|x| *x += i as u32);
            });
            let mut seq = v.clone();
            seq.chunks_mut(size).enumerate().for_each(|(i, chunk)| {
                chunk.reverse();
                chunk.iter_mut().for_each(|x| *x += i as u32);
            });
            assert_eq!(par, seq, "{what}: chunks_mut ({ctx})");
            assert_eq!(
                par.par_chunks_mut(size).len(),
                seq.chunks_mut(size).len(),
                "{what}: chunks_mut len ({ctx})"
            );
        }
    });
}

/// A chunking of `v` (`par`) against std's (`seq`): the same pieces in
/// order, whole and cut at `cut`.
fn same_chunks<'a, P>(par: impl Fn() -> P, seq: &[&'a [u32]], cut: usize, what: &str, ctx: &str)
where
    P: IndexedParallelIterator<Item = &'a [u32]>,
{
    assert_eq!(par().len(), seq.len(), "{what}: len ({ctx})");
    assert_eq!(par().collect::<Vec<_>>(), seq, "{what}: collect ({ctx})");
    let skipped: Vec<&[u32]> = seq.iter().copied().skip(cut).collect();
    assert_eq!(
        par().skip(cut).collect::<Vec<_>>(),
        skipped,
        "{what}: skip({cut}) ({ctx})"
    );
    let taken: Vec<&[u32]> = seq.iter().copied().take(cut).collect();
    assert_eq!(
        par().take(cut).collect::<Vec<_>>(),
        taken,
        "{what}: take({cut}) ({ctx})"
    );
}

/// Each piece of a mutable chunking reversed and its first element
/// marked with its index, by `weft` and by std.
macro_rules! same_chunks_mut {
    ($v:expr, $size:expr, $par:ident, $seq:ident, $ctx:expr) => {{
        let mark = |(i, chunk): (usize, &mut [u32])| {
            chunk.reverse();
            chunk[0] = chunk[0].wrapping_add(i as u32);
        };
        let mut par = $v.clone();
        par.$par($size).enumerate().for_each(mark);
        let mut seq = $v.clone();
        seq.$seq($size).enumerate().for_each(mark);
        assert_eq!(par, seq, "{} size {} ({})", stringify!($par), $size, $ctx);
    }};
}

#[test]
fn exact_and_reversed_slice_chunks() {
    check("exact_and_reversed_slice_chunks", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        let mut sizes = vec![1, 2, 3, case.len.max(1), case.len + 1];
        sizes.push(1 + case.rng.below(case.len + 2));
        sizes.push(1 + case.rng.below(16));
        for size in sizes {
            let cut = case.rng.below(v.len() / size + 3);
            let what = format!("size {size}");
            let seq: Vec<&[u32]> = v.chunks_exact(size).collect();
            same_chunks(|| v.par_chunks_exact(size), &seq, cut, &what, &ctx);
            let seq: Vec<&[u32]> = v.rchunks(size).collect();
            same_chunks(|| v.par_rchunks(size), &seq, cut, &what, &ctx);
            let seq: Vec<&[u32]> = v.rchunks_exact(size).collect();
            same_chunks(|| v.par_rchunks_exact(size), &seq, cut, &what, &ctx);
            assert_eq!(
                v.par_chunks_exact(size).remainder(),
                v.chunks_exact(size).remainder(),
                "{what}: chunks_exact remainder ({ctx})"
            );
            assert_eq!(
                v.par_rchunks_exact(size).remainder(),
                v.rchunks_exact(size).remainder(),
                "{what}: rchunks_exact remainder ({ctx})"
            );

            same_chunks_mut!(v, size, par_chunks_exact_mut, chunks_exact_mut, ctx);
            same_chunks_mut!(v, size, par_rchunks_mut, rchunks_mut, ctx);
            same_chunks_mut!(v, size, par_rchunks_exact_mut, rchunks_exact_mut, ctx);
            let mut par = v.clone();
            let mut seq = v.clone();
            assert_eq!(
                par.par_chunks_exact_mut(size).into_remainder(),
                seq.chunks_exact_mut(size).into_remainder(),
                "{what}: chunks_exact_mut remainder ({ctx})"
            );
            assert_eq!(
                par.par_rchunks_exact_mut(size).take_remainder(),
                seq.rchunks_exact_mut(size).into_remainder(),
                "{what}: rchunks_exact_mut remainder ({ctx})"
            );
        }
    });
}

#[test]
fn rev_step_by_and_chunks_against_std() {
    check("rev_step_by_and_chunks_against_std", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        let len = v.len();
        let reversed: Vec<u32> = v.iter().rev().copied().collect();
        assert_eq!(
            v.par_iter().rev().copied().collect::<Vec<_>>(),
            reversed,
            "rev ({ctx})"
        );
        assert_eq!(v.par_iter().rev().len(), len, "rev len ({ctx})");
        // Each producer that reads backwards itself, under `rev`: ranges,
        // slices (shared and mutable), and the one-to-one adapters above
        // them (`map`, `copied`, `cloned`, `enumerate`, `with_min_len`).
        assert_eq!(
            (0..len as u64).into_par_iter().rev().collect::<Vec<_>>(),
            (0..len as u64).rev().collect::<Vec<_>>(),
            "range rev ({ctx})"
        );
        assert_eq!(
            (0..len as u64)
                .into_par_iter()
                .rev()
                .map(|x| x * 3)
                .sum::<u64>(),
            (0..len as u64).map(|x| x * 3).sum::<u64>(),
            "range rev sum ({ctx})"
        );
        assert_eq!(
            v.par_iter()
                .map(|&x| u64::from(x) + 1)
                .enumerate()
                .with_min_len(2)
                .rev()
                .collect::<Vec<_>>(),
            v.iter()
                .map(|&x| u64::from(x) + 1)
                .enumerate()
                .rev()
                .collect::<Vec<_>>(),
            "map enumerate with_min_len rev ({ctx})"
        );
        assert_eq!(
            v.par_iter().copied().rev().collect::<Vec<_>>(),
            reversed,
            "copied rev ({ctx})"
        );
        assert_eq!(
            v.par_iter().cloned().rev().collect::<Vec<_>>(),
            reversed,
            "cloned rev ({ctx})"
        );
        let mut marked = v.clone();
        marked
            .par_iter_mut()
            .rev()
            .enumerate()
            .for_each(|(i, x)| *x = x.wrapping_add(i as u32));
        let expected: Vec<u32> = v
            .iter()
            .enumerate()
            .map(|(i, &x)| x.wrapping_add((len - 1 - i) as u32))
            .collect();
        assert_eq!(marked, expected, "iter_mut rev enumerate ({ctx})");
        assert_eq!(
            v.par_iter().rev().rev().copied().collect::<Vec<_>>(),
            v,
            "rev rev ({ctx})"
        );
        assert_eq!(
            (0..len)
                .into_par_iter()
                .rev()
                .zip(v.par_iter())
                .map(|(i, &x)| i as u64 * u64::from(x))
                .sum::<u64>(),
            (0..len)
                .rev()
                .zip(&v)
                .map(|(i, &x)| i as u64 * u64::from(x))
                .sum::<u64>(),
            "rev zip ({ctx})"
        );
        for cut in case.cuts() {
            assert_eq!(
                v.par_iter().rev().skip(cut).copied().collect::<Vec<_>>(),
                reversed.iter().skip(cut).copied().collect::<Vec<_>>(),
                "rev skip({cut}) ({ctx})"
            );
            assert_eq!(
                v.par_iter()
                    .take(cut)
                    .rev()
                    .enumerate()
                    .map(|(i, &x)| (i, x))
                    .collect::<Vec<_>>(),
                v.iter()
                    .take(cut)
                    .rev()
                    .enumerate()
                    .map(|(i, &x)| (i, x))
                    .collect::<Vec<_>>(),
                "take({cut}) rev enumerate ({ctx})"
            );
        }
        let target = case.rng.below(1_000) as u32;
        assert_eq!(
            v.par_iter().rev().find_first(|&&x| x >= target),
            v.iter().rev().find(|&&x| x >= target),
            "rev find_first ({ctx})"
        );

        let mut steps = vec![1, 2, 3, len.max(1), len + 1, usize::MAX];
        steps.push(1 + case.rng.below(len + 2));
        for step in steps {
            let seq: Vec<u32> = v.iter().step_by(step).copied().collect();
            assert_eq!(
                v.par_iter().step_by(step).copied().collect::<Vec<_>>(),
                seq,
                "step_by({step}) ({ctx})"
            );
            assert_eq!(
                v.par_iter().step_by(step).len(),
                seq.len(),
                "step_by({step}) len ({ctx})"
            );
            let cut = case.rng.below(seq.len() + 2);
            assert_eq!(
                v.par_iter()
                    .step_by(step)
                    .rev()
                    .skip(cut)
                    .copied()
                    .collect::<Vec<_>>(),
                seq.iter().rev().skip(cut).copied().collect::<Vec<_>>(),
                "step_by({step}) rev skip({cut}) ({ctx})"
            );

            let size = step;
            let seq: Vec<Vec<u32>> = v
                .chunks(size.min(len.max(1)))
                .map(<[u32]>::to_vec)
                .collect();
            assert_eq!(
                v.par_iter().copied().chunks(size).collect::<Vec<_>>(),
                seq,
                "chunks({size}) ({ctx})"
            );
            assert_eq!(
                v.par_iter().chunks(size).len(),
                seq.len(),
                "chunks({size}) len ({ctx})"
            );
            assert_eq!(
                v.par_iter()
                    .copied()
                    .chunks(size)
                    .skip(cut)
                    .map(|c| c.len())
                    .sum::<usize>(),
                seq.iter().skip(cut).map(Vec::len).sum::<usize>(),
                "chunks({size}) skip({cut}) ({ctx})"
            );
        }
    });
}

#[test]
fn rev_step_by_and_chunks_drop_by_value_items_once() {
    quiet_planned_panics();
    check("rev_step_by_and_chunks_drop_by_value_items_once", |case| {
        let ctx = case.to_string();
        let len = case.len;
        let cut = case.rng.below(len + 3);
        let step = 1 + case.rng.below(5);

        moves_in_order(len, (0..len).rev().take(cut), "rev take", &ctx, |items| {
            items.into_par_iter().rev().take(cut).collect()
        });
        moves_in_order(len, (0..len).step_by(step), "step_by", &ctx, |items| {
            items.into_par_iter().step_by(step).collect()
        });
        let from = (cut / step * step).min(len);
        moves_in_order(len, from..len, "chunks skip", &ctx, |items| {
            let out: Vec<Vec<Tracked>> = items
                .into_par_iter()
                .chunks(step)
                .skip(cut / step)
                .collect();
            assert!(
                out.iter().all(|c| c.len() <= step),
                "chunks of {step} ({ctx})"
            );
            out.into_iter().flatten().collect()
        });
        moves_in_order(
            len,
            (cut < len).then_some(cut),
            "rev find_any",
            &ctx,
            |items| {
                let found = items.into_par_iter().rev().find_any(|item| item.id == cut);
                found.into_iter().collect()
            },
        );
        if len > 0 {
            let target = cut.min(len - 1);
            panics_on(len, target, "rev for_each", &ctx, |items, explode| {
                items.into_par_iter().rev().for_each(|item| explode(&item));
            });
            panics_on(len, target, "chunks for_each", &ctx, |items, explode| {
                let chunks = items.into_par_iter().chunks(step);
                chunks.for_each(|c| c.iter().for_each(explode));
            });
        }
    });
}

#[test]
fn par_windows() {
    check("par_windows", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        let mut sizes = vec![1, 2, 3, case.len.max(1), case.len + 1, case.len + 5];
        sizes.push(1 + case.rng.below(case.len + 2));
        for size in sizes {
            let what = format!("size {size}");
            assert_eq!(
                v.par_windows(size).len(),
                v.windows(size).len(),
                "{what}: len ({ctx})"
            );
            assert_eq!(
                v.par_windows(size).collect::<Vec<&[u32]>>(),
                v.windows(size).collect::<Vec<&[u32]>>(),
                "{what}: collect ({ctx})"
            );
            assert_eq!(
                v.par_windows(size).count(),
                v.windows(size).count(),
                "{what}: count ({ctx})"
            );
            assert_eq!(
                v.par_windows(size)
                    .map(|w| u64::from(w[0]) * u64::from(w[w.len() - 1]))
                    .sum::<u64>(),
                v.windows(size)
                    .map(|w| u64::from(w[0]) * u64::from(w[w.len() - 1]))
                    .sum::<u64>(),
                "{what}: sum ({ctx})"
            );
            let cut = case.rng.below(v.len() + 2);
            assert_eq!(
                v.par_windows(size).skip(cut).collect::<Vec<_>>(),
                v.windows(size).skip(cut).collect::<Vec<_>>(),
                "{what}: skip({cut}) ({ctx})"
            );
            assert_eq!(
                v.par_windows(size)
                    .zip(v.par_chunks(size))
                    .collect::<Vec<_>>(),
                v.windows(size).zip(v.chunks(size)).collect::<Vec<_>>(),
                "{what}: zip with chunks ({ctx})"
            );
        }
    });
}

#[test]
// A `Vec`, as users have one, though an array would do here.
#[allow(clippy::useless_vec)]
fn windows_and_chunks_of_usize_max_zero_sized_items() {
    // A slice of zero-sized items can be `usize::MAX` long: its windows
    // and chunks are counted and cut as std's, never run to the end.
    let units = vec![(); usize::MAX];
    let mut units_mut = vec![(); usize::MAX];
    let sizes = [1, 2, 3, usize::MAX / 2, usize::MAX - 1, usize::MAX];
    let lens = |pieces: Vec<&[()]>| pieces.iter().map(|piece| piece.len()).collect::<Vec<_>>();
    for &workers in &WORKERS {
        on(workers, || {
            for size in sizes {
                let ctx = format!("size {size}, workers {workers}");
                let count = units.windows(size).len();
                let cut = count.saturating_sub(3);
                assert_eq!(units.par_windows(size).len(), count, "windows ({ctx})");
                assert_eq!(
                    units.par_windows(size).skip(cut).count(),
                    count - cut,
                    "windows skip count ({ctx})"
                );
                assert_eq!(
                    lens(units.par_windows(size).take(usize::MAX).skip(cut).collect()),
                    lens(units.windows(size).skip(cut).collect()),
                    "windows take skip ({ctx})"
                );
                assert_eq!(
                    units
                        .par_windows(size)
                        .enumerate()
                        .skip(cut)
                        .map(|(i, _)| i)
                        .max(),
                    count.checked_sub(1),
                    "windows enumerate ({ctx})"
                );
                // Every window matches: `position_any` may name any.
                let any = units.par_windows(size).position_any(|w| w.len() == size);
                assert!(
                    any.map_or(count == 0, |at| at < count),
                    "windows position_any: {any:?} ({ctx})"
                );
                let first = units.par_windows(size).enumerate().find_first(|_| true);
                assert_eq!(
                    first.map(|(at, w)| (at, w.len())),
                    (count > 0).then_some((0, size)),
                    "windows find_first ({ctx})"
                );

                let count = units.chunks(size).len();
                let cut = count.saturating_sub(3);
                assert_eq!(units.par_chunks(size).len(), count, "chunks ({ctx})");
                assert_eq!(
                    lens(units.par_chunks(size).take(usize::MAX).skip(cut).collect()),
                    lens(units.chunks(size).skip(cut).collect()),
                    "chunks take skip ({ctx})"
                );
                let mut_lens: Vec<usize> = units_mut
                    .par_chunks_mut(size)
                    .take(usize::MAX)
                    .skip(cut)
                    .map(|chunk| chunk.len())
                    .collect();
                assert_eq!(
                    mut_lens,
                    lens(units.chunks(size).skip(cut).collect()),
                    "chunks_mut take skip ({ctx})"
                );
                let pairs = count.min(units.windows(size).len());
                let zipped = units.par_chunks(size).zip(units.par_windows(size));
                assert_eq!(zipped.len(), pairs, "chunks zip windows ({ctx})");
                let zipped = units.par_chunks(size).zip(units.par_windows(size));
                assert_eq!(
                    zipped.skip(pairs.saturating_sub(2)).count(),
                    pairs.min(2),
                    "chunks zip windows skip ({ctx})"
                );
            }
        });
    }
}

#[test]
fn zero_chunk_and_window_sizes_panic() {
    let v = [1, 2, 3];
    assert!(panic::catch_unwind(|| v.par_chunks(0).count()).is_err());
    assert!(panic::catch_unwind(|| v.par_windows(0).count()).is_err());
    assert!(panic::catch_unwind(|| {
        let mut v = v;
        v.par_chunks_mut(0).count()
    })
    .is_err());
    assert!(panic::catch_unwind(|| v.par_chunks_exact(0).count()).is_err());
    assert!(panic::catch_unwind(|| v.par_rchunks(0).count()).is_err());
    assert!(panic::catch_unwind(|| v.par_iter().chunks(0).count()).is_err());
    assert!(panic::catch_unwind(|| v.par_iter().step_by(0).count()).is_err());
}

// ----------------------------------------------------------- adapters

#[test]
fn map_filter_filter_map() {
    check("map_filter_filter_map", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        let m = 1 + case.rng.below(5) as u32;

        assert_eq!(
            v.par_iter().map(|&x| x * 2 + 1).collect::<Vec<_>>(),
            v.iter().map(|&x| x * 2 + 1).collect::<Vec<_>>(),
            "map ({ctx})"
        );
        assert_eq!(
            v.par_iter().filter(|&&x| x % m == 0).collect::<Vec<_>>(),
            v.iter().filter(|&&x| x % m == 0).collect::<Vec<_>>(),
            "filter ({ctx})"
        );
        assert_eq!(
            v.par_iter().filter(|&&x| x % m == 0).count(),
            v.iter().filter(|&&x| x % m == 0).count(),
            "filter count ({ctx})"
        );
        // Onto items already there: the pieces go after them, into room
        // reserved once (copied in parallel blocks at the large size).
        let mut extended = vec![u32::MAX; 3];
        extended.par_extend(v.par_iter().filter(|&&x| x % m == 0).copied());
        let mut expected = vec![u32::MAX; 3];
        expected.extend(v.iter().filter(|&&x| x % m == 0).copied());
        assert_eq!(extended, expected, "filter par_extend ({ctx})");
        let half = |x: u32| (x % 2 == 0).then_some(x / 2);
        assert_eq!(
            v.par_iter().filter_map(|&x| half(x)).collect::<Vec<_>>(),
            v.iter().filter_map(|&x| half(x)).collect::<Vec<_>>(),
            "filter_map ({ctx})"
        );
        assert_eq!(
            v.par_iter().filter_map(|&x| half(x)).sum::<u32>(),
            v.iter().filter_map(|&x| half(x)).sum::<u32>(),
            "filter_map sum ({ctx})"
        );
        let n = case.len as u64;
        assert_eq!(
            (0..n)
                .into_par_iter()
                .map(|x| x * x)
                .filter(|x| x % 3 != 0)
                .collect::<Vec<_>>(),
            (0..n)
                .map(|x| x * x)
                .filter(|x| x % 3 != 0)
                .collect::<Vec<_>>(),
            "range map filter ({ctx})"
        );
        // Everything filtered out, and nothing.
        assert_eq!(v.par_iter().filter(|_| false).count(), 0, "{ctx}");
        assert_eq!(v.par_iter().filter(|_| true).count(), v.len(), "{ctx}");
    });
}

#[test]
fn flat_map_and_flat_map_iter() {
    check("flat_map_and_flat_map_iter", |case| {
        let ctx = case.to_string();
        // Short values: a large case flattens to a few times its length.
        let v = case.values(6);

        assert_eq!(
            v.par_iter()
                .flat_map(|&x| vec![x; x as usize])
                .collect::<Vec<_>>(),
            v.iter()
                .flat_map(|&x| vec![x; x as usize])
                .collect::<Vec<_>>(),
            "flat_map Vec ({ctx})"
        );
        assert_eq!(
            v.par_iter()
                .flat_map(|&x| (0..x).into_par_iter())
                .collect::<Vec<_>>(),
            v.iter().flat_map(|&x| 0..x).collect::<Vec<_>>(),
            "flat_map range ({ctx})"
        );
        assert_eq!(
            v.par_iter()
                .flat_map(|&x| (0..x)
                    .into_par_iter()
                    .map(move |i| i * x)
                    .filter(|i| i % 2 == 0))
                .collect::<Vec<_>>(),
            v.iter()
                .flat_map(|&x| (0..x).map(move |i| i * x).filter(|i| i % 2 == 0))
                .collect::<Vec<_>>(),
            "flat_map adapted inner ({ctx})"
        );
        assert_eq!(
            v.par_iter().flat_map(|&x| vec![x; x as usize]).count(),
            v.iter().map(|&x| x as usize).sum::<usize>(),
            "flat_map count ({ctx})"
        );
        assert_eq!(
            v.par_iter()
                .flat_map_iter(|&x| (0..x).map(move |i| x * 10 + i))
                .collect::<Vec<_>>(),
            v.iter()
                .flat_map(|&x| (0..x).map(move |i| x * 10 + i))
                .collect::<Vec<_>>(),
            "flat_map_iter ({ctx})"
        );
        assert_eq!(
            v.par_iter()
                .flat_map_iter(|&x| vec![x.to_string(); x as usize % 3])
                .collect::<Vec<_>>(),
            v.iter()
                .flat_map(|&x| vec![x.to_string(); x as usize % 3])
                .collect::<Vec<_>>(),
            "flat_map_iter Vec<String> ({ctx})"
        );
        assert_eq!(
            v.par_iter()
                .flat_map_iter(|&x| 0..x)
                .find_first(|&i| i == 4),
            v.iter().flat_map(|&x| 0..x).find(|&i| i == 4),
            "flat_map_iter find_first ({ctx})"
        );
    });
}

#[test]
fn chain_indexed_and_not() {
    check("chain_indexed_and_not", |case| {
        let ctx = case.to_string();
        let a = case.values(1_000);
        let b = case.other_values(1_000);
        let seq: Vec<u32> = a.iter().chain(&b).copied().collect();

        assert_eq!(
            a.par_iter().chain(&b).copied().collect::<Vec<_>>(),
            seq,
            "collect ({ctx})"
        );
        assert_eq!(a.par_iter().chain(&b).len(), seq.len(), "len ({ctx})");
        assert_eq!(
            a.par_iter()
                .chain(b.par_iter())
                .enumerate()
                .map(|(i, &x)| (i, x))
                .collect::<Vec<_>>(),
            seq.iter().copied().enumerate().collect::<Vec<_>>(),
            "enumerate ({ctx})"
        );
        for n in case.cuts() {
            assert_eq!(
                a.par_iter().chain(&b).take(n).copied().collect::<Vec<_>>(),
                seq.iter().take(n).copied().collect::<Vec<_>>(),
                "take({n}) ({ctx})"
            );
            assert_eq!(
                a.par_iter().chain(&b).skip(n).copied().collect::<Vec<_>>(),
                seq.iter().skip(n).copied().collect::<Vec<_>>(),
                "skip({n}) ({ctx})"
            );
        }
        assert_eq!(
            a.par_iter().chain(&b).zip(&a).collect::<Vec<_>>(),
            a.iter().chain(&b).zip(&a).collect::<Vec<_>>(),
            "zip ({ctx})"
        );
        match a.par_iter().chain(&b).position_any(|&x| x % 97 == 0) {
            Some(at) => assert_eq!(seq[at] % 97, 0, "position_any {at} ({ctx})"),
            None => assert!(!seq.iter().any(|&x| x % 97 == 0), "position_any ({ctx})"),
        }

        // Unindexed on one side or the other: collected through pieces.
        let odd = |x: &&u32| **x % 2 == 1;
        assert_eq!(
            a.par_iter()
                .filter(odd)
                .chain(&b)
                .copied()
                .collect::<Vec<_>>(),
            a.iter().filter(odd).chain(&b).copied().collect::<Vec<_>>(),
            "filter on the left ({ctx})"
        );
        assert_eq!(
            a.par_iter()
                .chain(b.par_iter().filter(odd))
                .copied()
                .collect::<Vec<_>>(),
            a.iter()
                .chain(b.iter().filter(odd))
                .copied()
                .collect::<Vec<_>>(),
            "filter on the right ({ctx})"
        );
        assert_eq!(
            a.par_iter().filter(odd).chain(&b).find_first(|&&x| x > 500),
            a.iter().filter(odd).chain(&b).find(|&&x| x > 500),
            "filter chain find_first ({ctx})"
        );

        let n = case.len as u64;
        assert_eq!(
            (0..n)
                .into_par_iter()
                .chain(n..2 * n)
                .chain(0..3u64)
                .collect::<Vec<_>>(),
            (0..n).chain(n..2 * n).chain(0..3).collect::<Vec<_>>(),
            "three ranges ({ctx})"
        );
        assert_eq!(
            (0..n).into_par_iter().chain(0..n).sum::<u64>(),
            2 * (0..n).sum::<u64>(),
            "chain sum ({ctx})"
        );
    });
}

#[test]
fn copied_and_cloned() {
    check("copied_and_cloned", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        assert_eq!(
            v.par_iter().copied().collect::<Vec<_>>(),
            v,
            "copied ({ctx})"
        );
        assert_eq!(
            v.par_iter().cloned().collect::<Vec<_>>(),
            v,
            "cloned ({ctx})"
        );
        let strings: Vec<String> = v.iter().map(u32::to_string).collect();
        assert_eq!(
            strings.par_iter().cloned().collect::<Vec<_>>(),
            strings,
            "cloned String ({ctx})"
        );
        assert_eq!(v.par_iter().copied().len(), v.len(), "copied len ({ctx})");
        assert_eq!(
            v.par_iter()
                .filter(|&&x| x < 500)
                .copied()
                .collect::<Vec<_>>(),
            v.iter().filter(|&&x| x < 500).copied().collect::<Vec<_>>(),
            "filter copied ({ctx})"
        );
    });
}

#[test]
fn enumerate_and_zip() {
    check("enumerate_and_zip", |case| {
        let ctx = case.to_string();
        let a = case.values(1_000);
        let b = case.other_values(1_000);

        assert_eq!(
            a.par_iter().enumerate().collect::<Vec<_>>(),
            a.iter().enumerate().collect::<Vec<_>>(),
            "enumerate ({ctx})"
        );
        assert!(
            (0..case.len)
                .into_par_iter()
                .enumerate()
                .all(|(i, x)| i == x),
            "enumerate range ({ctx})"
        );
        assert_eq!(
            a.par_iter().zip(&b).collect::<Vec<_>>(),
            a.iter().zip(&b).collect::<Vec<_>>(),
            "zip ({}, {}) ({ctx})",
            a.len(),
            b.len()
        );
        assert_eq!(
            b.par_iter().zip(&a).collect::<Vec<_>>(),
            b.iter().zip(&a).collect::<Vec<_>>(),
            "zip reversed ({ctx})"
        );
        assert_eq!(
            a.par_iter().zip(&b).len(),
            a.len().min(b.len()),
            "zip len ({ctx})"
        );
        assert_eq!(
            a.par_iter()
                .zip(0..b.len())
                .enumerate()
                .map(|(i, (&x, j))| (i, x, j))
                .collect::<Vec<_>>(),
            a.iter()
                .zip(0..b.len())
                .enumerate()
                .map(|(i, (&x, j))| (i, x, j))
                .collect::<Vec<_>>(),
            "zip range enumerate ({ctx})"
        );
        assert_eq!(
            a.par_iter()
                .enumerate()
                .zip(b.par_iter().enumerate())
                .filter(|((_, x), (_, y))| x < y)
                .map(|((i, _), (j, _))| i + j)
                .collect::<Vec<_>>(),
            a.iter()
                .enumerate()
                .zip(b.iter().enumerate())
                .filter(|((_, x), (_, y))| x < y)
                .map(|((i, _), (j, _))| i + j)
                .collect::<Vec<_>>(),
            "enumerate zip enumerate ({ctx})"
        );
        for n in case.cuts() {
            assert_eq!(
                a.par_iter().zip(&b).skip(n).collect::<Vec<_>>(),
                a.iter().zip(&b).skip(n).collect::<Vec<_>>(),
                "zip skip({n}) ({ctx})"
            );
            assert_eq!(
                a.par_iter().enumerate().skip(n).collect::<Vec<_>>(),
                a.iter().enumerate().skip(n).collect::<Vec<_>>(),
                "enumerate skip({n}) ({ctx})"
            );
            assert_eq!(
                a.par_iter().skip(n).enumerate().collect::<Vec<_>>(),
                a.iter().skip(n).enumerate().collect::<Vec<_>>(),
                "skip({n}) enumerate ({ctx})"
            );
        }
        let c = case.other_values(10);
        assert_eq!(
            a.par_iter().zip(&b).zip(&c).collect::<Vec<_>>(),
            a.iter().zip(&b).zip(&c).collect::<Vec<_>>(),
            "three-way zip ({ctx})"
        );
    });
}

#[test]
fn take_and_skip() {
    check("take_and_skip", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        let cuts = case.cuts();
        for &n in &cuts {
            let what = format!("n {n}");
            assert_eq!(
                v.par_iter().take(n).collect::<Vec<_>>(),
                v.iter().take(n).collect::<Vec<_>>(),
                "{what}: take ({ctx})"
            );
            assert_eq!(
                v.par_iter().skip(n).collect::<Vec<_>>(),
                v.iter().skip(n).collect::<Vec<_>>(),
                "{what}: skip ({ctx})"
            );
            assert_eq!(v.par_iter().take(n).len(), v.len().min(n), "{what} ({ctx})");
            assert_eq!(
                v.par_iter().skip(n).len(),
                v.len().saturating_sub(n),
                "{what} ({ctx})"
            );
            assert_eq!(
                (0..case.len)
                    .into_par_iter()
                    .map(|i| i * 3)
                    .take(n)
                    .sum::<usize>(),
                (0..case.len).map(|i| i * 3).take(n).sum::<usize>(),
                "{what}: map take sum ({ctx})"
            );
            let m = case.rng.below(v.len() + 2);
            assert_eq!(
                v.par_iter().skip(n).take(m).collect::<Vec<_>>(),
                v.iter().skip(n).take(m).collect::<Vec<_>>(),
                "{what}: skip take({m}) ({ctx})"
            );
            assert_eq!(
                v.par_iter().take(n).skip(m).collect::<Vec<_>>(),
                v.iter().take(n).skip(m).collect::<Vec<_>>(),
                "{what}: take skip({m}) ({ctx})"
            );
            match v.par_iter().take(n).position_any(|&x| x % 89 == 0) {
                Some(at) => assert!(
                    at < n && v[at] % 89 == 0,
                    "{what}: position_any {at} ({ctx})"
                ),
                None => assert!(
                    !v.iter().take(n).any(|&x| x % 89 == 0),
                    "{what}: position_any ({ctx})"
                ),
            }
        }
    });
}

/// The sizes of the pieces the driver folded (`fold` yields one
/// accumulator per piece), in order.
fn piece_sizes<I: ParallelIterator>(iter: I) -> Vec<usize> {
    iter.fold(Vec::new, |mut sizes: Vec<usize>, _| {
        match sizes.last_mut() {
            Some(last) => *last += 1,
            None => sizes.push(1),
        }
        sizes
    })
    .map(|mut sizes| {
        // An empty piece still yields its (empty) accumulator.
        if sizes.is_empty() {
            sizes.push(0);
        }
        sizes
    })
    .reduce(Vec::new, |mut left, mut right| {
        left.append(&mut right);
        left
    })
}

#[test]
fn with_min_len_and_with_max_len() {
    check("with_min_len_and_with_max_len", |case| {
        let ctx = case.to_string();
        let len = case.len;
        let v = case.values(1_000);
        let seq_sum: u64 = v.iter().map(|&x| u64::from(x)).sum();
        let mut bounds = vec![1, 2, 1 + case.rng.below(len + 2), len + 1, usize::MAX];
        if len > 0 {
            bounds.push(len / 7 + 1);
        }
        for bound in bounds {
            let what = format!("bound {bound}");
            assert_eq!(
                v.par_iter()
                    .with_min_len(bound)
                    .copied()
                    .collect::<Vec<_>>(),
                v,
                "{what}: min collect ({ctx})"
            );
            assert_eq!(
                v.par_iter()
                    .with_min_len(bound)
                    .map(|&x| u64::from(x))
                    .sum::<u64>(),
                seq_sum,
                "{what}: min sum ({ctx})"
            );
            // Single-element pieces of a large input are many joins in
            // debug; the bound is checked there on the shorter ones.
            if bound >= len / 1_000 {
                assert_eq!(
                    v.par_iter()
                        .with_max_len(bound)
                        .copied()
                        .collect::<Vec<_>>(),
                    v,
                    "{what}: max collect ({ctx})"
                );
                assert_eq!(
                    v.par_iter()
                        .with_max_len(bound)
                        .filter(|&&x| x % 2 == 0)
                        .count(),
                    v.iter().filter(|&&x| x % 2 == 0).count(),
                    "{what}: max filter count ({ctx})"
                );
            }
        }
    });
}

// The plumbing docs: pieces never "stay above `with_max_len`".
#[test]
fn with_max_len_keeps_every_piece_that_short() {
    check("with_max_len_keeps_every_piece_that_short", |case| {
        let ctx = case.to_string();
        let len = case.len;
        let mut bounds = vec![1, 2, 1 + case.rng.below(len + 2), len + 1, usize::MAX];
        if len > 0 {
            bounds.push(len / 7 + 1);
        }
        // Single-element pieces of a large input are many joins in debug;
        // the small bounds are checked on the shorter inputs.
        bounds.retain(|&bound| bound >= len / 1_000);
        for bound in bounds {
            let sizes = piece_sizes((0..len).into_par_iter().with_max_len(bound));
            assert_eq!(sizes.iter().sum::<usize>(), len, "bound {bound} ({ctx})");
            assert!(
                sizes.iter().all(|&size| size <= bound),
                "bound {bound}: a piece above with_max_len: {sizes:?} ({ctx})"
            );
        }
    });
}

/// About a microsecond of work that the compiler cannot skip.
fn a_microsecond(i: usize) -> usize {
    (0..200).fold(i, |acc, k| std::hint::black_box(acc ^ k))
}

// The plumbing docs: a leaf whose pieces keep a state is folded in one go,
// so `fold` makes an accumulator per leaf (a few per worker), not one per
// chunk of a few microseconds (a few thousand here).
#[test]
fn fold_makes_a_state_per_leaf_not_per_chunk() {
    const ITEMS: usize = 20_000;
    for workers in [OUTSIDE, 1, 2, 4] {
        let sizes = on(workers, || {
            piece_sizes((0..ITEMS).into_par_iter().map(a_microsecond))
        });
        assert_eq!(sizes.iter().sum::<usize>(), ITEMS, "{workers} workers");
        assert!(
            sizes.len() <= 200,
            "{workers} workers: {} accumulators for {ITEMS} items",
            sizes.len()
        );
    }
}

// The plumbing docs: "Pieces never split below `with_min_len`", which is
// what bounds the number of `fold` accumulators (one per piece).
#[test]
fn with_min_len_keeps_every_piece_that_long() {
    check("with_min_len_keeps_every_piece_that_long", |case| {
        let ctx = case.to_string();
        let len = case.len;
        let mut bounds = vec![1, 2, 1 + case.rng.below(len + 2), len + 1, usize::MAX];
        if len > 0 {
            bounds.push(len / 7 + 1);
        }
        for bound in bounds {
            let sizes = piece_sizes((0..len).into_par_iter().with_min_len(bound));
            assert_eq!(sizes.iter().sum::<usize>(), len, "bound {bound} ({ctx})");
            // A piece splits only when both halves keep `bound` items, so
            // either nothing split or every piece has at least `bound`.
            assert!(
                sizes.len() == 1 || sizes.iter().all(|&size| size >= bound),
                "bound {bound}: a piece below with_min_len: {sizes:?} ({ctx})"
            );
        }
    });
}

#[test]
fn fold_then_sum_or_reduce() {
    check("fold_then_sum_or_reduce", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        assert_eq!(
            v.par_iter()
                .fold(|| 0u64, |sum, &x| sum + u64::from(x))
                .sum::<u64>(),
            v.iter().map(|&x| u64::from(x)).sum::<u64>(),
            "fold sum ({ctx})"
        );
        // Folding into Vecs and appending keeps the input's order.
        assert_eq!(
            v.par_iter()
                .fold(Vec::new, |mut acc, &x| {
                    acc.push(x);
                    acc
                })
                .reduce(Vec::new, |mut left, mut right| {
                    left.append(&mut right);
                    left
                }),
            v,
            "fold Vec reduce ({ctx})"
        );
        assert_eq!(
            v.par_iter()
                .fold(|| None, |best: Option<u32>, &x| best.max(Some(x)))
                .reduce(|| None, Option::max),
            v.iter().copied().max(),
            "fold max ({ctx})"
        );
        assert_eq!(
            v.par_iter()
                .filter(|&&x| x % 3 == 0)
                .fold(|| 0usize, |n, _| n + 1)
                .sum::<usize>(),
            v.iter().filter(|&&x| x % 3 == 0).count(),
            "filter fold count ({ctx})"
        );
        assert!(
            v.par_iter().fold(|| 0, |n, _| n + 1).count() >= 1,
            "fold yields an accumulator per piece, at least one ({ctx})"
        );
    });
}

#[test]
fn fold_with_try_fold_and_try_fold_with() {
    check("fold_with_try_fold_and_try_fold_with", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        let sum: u64 = v.iter().map(|&x| u64::from(x)).sum();
        assert_eq!(
            v.par_iter()
                .fold_with(0u64, |sum, &x| sum + u64::from(x))
                .sum::<u64>(),
            sum,
            "fold_with sum ({ctx})"
        );
        assert_eq!(
            v.par_iter()
                .fold_with(Vec::new(), |mut acc, &x| {
                    acc.push(x);
                    acc
                })
                .reduce(Vec::new, |mut left, mut right| {
                    left.append(&mut right);
                    left
                }),
            v,
            "fold_with Vec reduce keeps the order ({ctx})"
        );
        // Fails where the running sum of a piece passes `limit`: never
        // when the limit is above the whole sum.
        let limit = if case.rng.chance(2) { sum } else { sum / 2 };
        let checked = |acc: u64, &x: &u32| {
            let acc = acc + u64::from(x);
            (acc <= limit).then_some(acc)
        };
        let par = v
            .par_iter()
            .try_fold(|| 0u64, checked)
            .try_reduce(|| 0, |a, b| (a + b <= limit).then_some(a + b));
        assert_eq!(par, (sum <= limit).then_some(sum), "try_fold ({ctx})");
        let par = v
            .par_iter()
            .try_fold_with(0u64, |acc, &x| -> Result<u64, u64> {
                let acc = acc + u64::from(x);
                if acc <= limit {
                    Ok(acc)
                } else {
                    Err(acc)
                }
            })
            .try_reduce(
                || 0,
                |a, b| {
                    if a + b <= limit {
                        Ok(a + b)
                    } else {
                        Err(a + b)
                    }
                },
            );
        match par {
            Ok(total) => assert!(sum <= limit && total == sum, "try_fold_with ({ctx})"),
            Err(over) => assert!(sum > limit && over > limit, "try_fold_with ({ctx})"),
        }
        // Each piece's result, unreduced, is its accumulator.
        let pieces: Vec<Option<u64>> = v.par_iter().try_fold(|| 0, checked).collect();
        if sum <= limit {
            assert_eq!(
                pieces.iter().map(|p| p.unwrap()).sum::<u64>(),
                sum,
                "try_fold pieces ({ctx})"
            );
        }
    });
}

#[test]
fn a_reversed_map_init_makes_a_state_per_piece_not_per_item() {
    // A pool of one worker, called inside it: no thief splits the loop, so
    // it runs as a few pieces, each of which makes one state, reversed or
    // not (a reversed piece once split off an item at a time, each with a
    // state of its own).
    let pool = weft::Builder::new().workers(1).build().unwrap();
    for reversed in [false, true] {
        let inits = AtomicUsize::new(0);
        let items: Vec<u64> = pool.install(|| {
            let mapped = (0..10_000u64)
                .into_par_iter()
                .map_init(|| inits.fetch_add(1, Ordering::Relaxed), |_, x| x);
            if reversed {
                mapped.rev().collect()
            } else {
                mapped.collect()
            }
        });
        let mut expected: Vec<u64> = (0..10_000).collect();
        if reversed {
            expected.reverse();
        }
        assert_eq!(items, expected, "reversed: {reversed}");
        let inits = inits.into_inner();
        assert!(
            inits <= 64,
            "reversed: {reversed}, {inits} states for 10,000 items"
        );
    }
}

#[test]
fn map_with_map_init_inspect_update_against_std() {
    check("map_with_map_init_inspect_update_against_std", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        let offset = case.rng.below(100) as u32;
        let seq: Vec<u32> = v.iter().map(|&x| x + offset).collect();

        let par: Vec<u32> = v.par_iter().map_with(offset, |o, &x| x + *o).collect();
        assert_eq!(par, seq, "map_with ({ctx})");
        // The state is each piece's own: a counter in it counts no more
        // than the piece's items, and all the pieces' counts add up.
        let counts: Vec<(usize, u32)> = v
            .par_iter()
            .map_with(0usize, |seen, &x| {
                *seen += 1;
                (*seen, x)
            })
            .collect();
        assert!(
            counts
                .iter()
                .enumerate()
                .all(|(i, &(seen, _))| seen <= i + 1),
            "map_with state per piece ({ctx})"
        );
        let inits = AtomicUsize::new(0);
        let par: Vec<u32> = v
            .par_iter()
            .map_init(
                || {
                    inits.fetch_add(1, Ordering::Relaxed);
                    Vec::new()
                },
                |scratch: &mut Vec<u32>, &x| {
                    scratch.push(x);
                    x + offset
                },
            )
            .collect();
        assert_eq!(par, seq, "map_init ({ctx})");
        assert!(
            inits.load(Ordering::Relaxed) <= v.len().max(1),
            "map_init inits ({ctx})"
        );
        // Reversed, a piece keeps one state too: its counter counts up
        // along the piece (the reversed output) as it does forwards.
        let counts: Vec<(usize, u32)> = v
            .par_iter()
            .map_with(0usize, |seen, &x| {
                *seen += 1;
                (*seen, x)
            })
            .rev()
            .collect();
        assert!(
            counts.iter().map(|&(_, x)| x).eq(v.iter().rev().copied()),
            "map_with rev ({ctx})"
        );
        assert!(
            counts
                .iter()
                .enumerate()
                .all(|(i, &(seen, _))| seen <= i + 1),
            "map_with rev state per piece ({ctx})"
        );
        assert_eq!(
            v.par_iter()
                .map_init(|| offset, |o, &x| x + *o)
                .enumerate()
                .map(|(i, x)| i as u64 * u64::from(x))
                .sum::<u64>(),
            seq.iter()
                .enumerate()
                .map(|(i, &x)| i as u64 * u64::from(x))
                .sum::<u64>(),
            "map_init enumerate ({ctx})"
        );
        assert_eq!(v.par_iter().map_with((), |(), x| x).len(), v.len(), "{ctx}");

        let (sender, receiver) = std::sync::mpsc::channel();
        v.par_iter()
            .for_each_with(sender, |sender, &x| sender.send(x).unwrap());
        assert_eq!(
            sorted(receiver.iter().collect()),
            sorted(v.clone()),
            "for_each_with ({ctx})"
        );
        let total = AtomicUsize::new(0);
        v.par_iter().for_each_init(
            || offset as usize,
            |o, &x| {
                total.fetch_add(x as usize + *o, Ordering::Relaxed);
            },
        );
        assert_eq!(
            total.into_inner(),
            seq.iter().map(|&x| x as usize).sum::<usize>(),
            "for_each_init ({ctx})"
        );

        let seen = AtomicUsize::new(0);
        let par: Vec<u32> = v
            .par_iter()
            .inspect(|&&x| {
                seen.fetch_add(x as usize, Ordering::Relaxed);
            })
            .copied()
            .collect();
        assert_eq!(par, v, "inspect ({ctx})");
        assert_eq!(
            seen.into_inner(),
            v.iter().map(|&x| x as usize).sum::<usize>(),
            "inspect saw each ({ctx})"
        );
        let par: Vec<u32> = v.par_iter().copied().update(|x| *x += offset).collect();
        assert_eq!(par, seq, "update ({ctx})");
        let cut = case.rng.below(v.len() + 2);
        assert_eq!(
            v.par_iter()
                .copied()
                .update(|x| *x += offset)
                .skip(cut)
                .collect::<Vec<_>>(),
            seq.iter().copied().skip(cut).collect::<Vec<_>>(),
            "update skip ({ctx})"
        );
        assert_eq!(v.par_iter().inspect(|_| ()).len(), v.len(), "{ctx}");
    });
}

#[test]
fn try_for_each_and_try_reduce_against_std() {
    check("try_for_each_and_try_reduce_against_std", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        let len = v.len();
        let target = case.rng.below(len + 1); // `len`: nothing fails.
        let sum: u64 = v.iter().map(|&x| u64::from(x)).sum();

        assert_eq!(
            v.par_iter()
                .map(|&x| Some(u64::from(x)))
                .try_reduce(|| 0, |a, b| Some(a + b)),
            Some(sum),
            "try_reduce Some ({ctx})"
        );
        // One failing item: its residual is the answer.
        assert_eq!(
            v.par_iter()
                .enumerate()
                .map(|(i, &x)| if i == target {
                    Err(i)
                } else {
                    Ok(u64::from(x))
                })
                .try_reduce(|| 0, |a, b| Ok(a + b)),
            if target < len { Err(target) } else { Ok(sum) },
            "try_reduce Err ({ctx})"
        );
        // A failing combination.
        let limit = sum / 2;
        let over = v
            .par_iter()
            .map(|&x| Some(u64::from(x)))
            .try_reduce(|| 0, |a, b| (a + b <= limit).then_some(a + b));
        assert_eq!(
            over,
            (sum <= limit).then_some(sum),
            "try_reduce op fails ({ctx})"
        );
        assert_eq!(
            v.par_iter()
                .enumerate()
                .try_for_each(|(i, _)| if i == target { Err(i) } else { Ok(()) }),
            if target < len { Err(target) } else { Ok(()) },
            "try_for_each ({ctx})"
        );
        // Several failing items: one of them.
        let failed = v
            .par_iter()
            .try_for_each(|&x| if x % 7 == 3 { Err(x) } else { Ok(()) });
        match failed {
            Err(x) => assert_eq!(x % 7, 3, "try_for_each any failure ({ctx})"),
            Ok(()) => assert!(v.iter().all(|x| x % 7 != 3), "try_for_each ({ctx})"),
        }
        use std::ops::ControlFlow;
        assert_eq!(
            v.par_iter().enumerate().try_for_each(|(i, _)| {
                if i == target {
                    ControlFlow::Break(i)
                } else {
                    ControlFlow::Continue(())
                }
            }),
            if target < len {
                ControlFlow::Break(target)
            } else {
                ControlFlow::Continue(())
            },
            "try_for_each ControlFlow ({ctx})"
        );
        let visited = AtomicUsize::new(0);
        assert_eq!(
            v.par_iter().try_for_each_with(0usize, |n, _| {
                *n += 1;
                visited.fetch_add(1, Ordering::Relaxed);
                Some(())
            }),
            Some(()),
            "try_for_each_with ({ctx})"
        );
        assert_eq!(
            visited.swap(0, Ordering::Relaxed),
            len,
            "try_for_each_with visits all ({ctx})"
        );
        assert_eq!(
            v.par_iter()
                .enumerate()
                .try_for_each_init(|| 0, |_, (i, _)| if i == target { None } else { Some(()) }),
            (target >= len).then_some(()),
            "try_for_each_init ({ctx})"
        );
        assert_eq!(
            v.par_iter()
                .map(|&x| Ok::<u32, ()>(x))
                .try_reduce_with(|a, b| Ok(a.max(b))),
            v.iter().copied().max().map(Ok),
            "try_reduce_with ({ctx})"
        );
        assert_eq!(
            v.par_iter()
                .enumerate()
                .map(|(i, &x)| (i != target).then_some(u64::from(x)))
                .try_reduce_with(|a, b| Some(a + b)),
            (len > 0).then(|| (target >= len).then_some(sum)),
            "try_reduce_with fails ({ctx})"
        );
    });
}

#[test]
fn deterministic_gives_the_sequential_results() {
    check("deterministic_gives_the_sequential_results", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        assert_eq!(
            v.par_iter().deterministic().copied().collect::<Vec<_>>(),
            v,
            "collect ({ctx})"
        );
        assert_eq!(
            v.par_iter()
                .deterministic()
                .map(|&x| u64::from(x))
                .sum::<u64>(),
            v.iter().map(|&x| u64::from(x)).sum::<u64>(),
            "sum ({ctx})"
        );
        assert_eq!(
            v.par_iter()
                .enumerate()
                .deterministic()
                .filter(|(i, _)| i % 2 == 0)
                .map(|(_, &x)| x)
                .collect::<Vec<_>>(),
            v.iter().step_by(2).copied().collect::<Vec<_>>(),
            "enumerate filter ({ctx})"
        );
        assert_eq!(
            v.par_iter().deterministic().min_by_key(|&&x| x % 10),
            v.iter().min_by_key(|&&x| x % 10),
            "min_by_key ({ctx})"
        );
    });
}

#[test]
fn deterministic_float_sum_is_bit_identical() {
    // Without `deterministic()` the split tree follows which workers happen
    // to be idle, and floating-point addition is not associative, so the
    // bits of this sum may differ from run to run; with it they may not.
    // (That they do differ without it is timing, and not asserted.)
    let xs: Vec<f64> = (0..100_000)
        .map(|i| 1.0 / (1.0 + f64::from(i)) * if i % 3 == 0 { -1.0 } else { 1.7 })
        .collect();
    let seq: f64 = xs.iter().sum();
    for &workers in &WORKERS {
        on(workers, || {
            let first = xs.par_iter().deterministic().sum::<f64>();
            assert!(
                (first - seq).abs() <= 1e-9 * seq.abs(),
                "{first} is not the sum {seq} (workers {workers})"
            );
            let first_reduce = xs
                .par_iter()
                .copied()
                .deterministic()
                .reduce(|| 0.0, |a, b| a + b);
            for run in 1..20 {
                let again = xs.par_iter().deterministic().sum::<f64>();
                assert_eq!(
                    again.to_bits(),
                    first.to_bits(),
                    "sum, run {run}: {again} after {first} (workers {workers})"
                );
                let again = xs
                    .par_iter()
                    .copied()
                    .deterministic()
                    .reduce(|| 0.0, |a, b| a + b);
                assert_eq!(
                    again.to_bits(),
                    first_reduce.to_bits(),
                    "reduce, run {run}: {again} after {first_reduce} (workers {workers})"
                );
            }
        });
    }
}

#[test]
fn compositions() {
    check("compositions", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        let b = case.other_values(1_000);
        let n = case.rng.below(v.len() + 2);

        assert_eq!(
            v.par_iter()
                .enumerate()
                .filter(|(i, _)| i % 3 != 0)
                .map(|(i, &x)| i * x as usize)
                .collect::<Vec<_>>(),
            v.iter()
                .enumerate()
                .filter(|(i, _)| i % 3 != 0)
                .map(|(i, &x)| i * x as usize)
                .collect::<Vec<_>>(),
            "enumerate filter map ({ctx})"
        );
        assert_eq!(
            (0..case.len)
                .into_par_iter()
                .zip(&b)
                .filter_map(|(i, &x)| (x % 2 == 0).then_some(i as u32 ^ x))
                .flat_map_iter(|x| [x, x + 1])
                .collect::<Vec<_>>(),
            (0..case.len)
                .zip(&b)
                .filter_map(|(i, &x)| (x % 2 == 0).then_some(i as u32 ^ x))
                .flat_map(|x| [x, x + 1])
                .collect::<Vec<_>>(),
            "zip filter_map flat_map_iter ({ctx})"
        );
        assert_eq!(
            v.par_iter()
                .copied()
                .map(|x| x + 1)
                .enumerate()
                .skip(n / 2)
                .take(n)
                .filter(|(_, x)| x % 2 == 1)
                .map(|(i, x)| i as u64 * u64::from(x))
                .sum::<u64>(),
            v.iter()
                .copied()
                .map(|x| x + 1)
                .enumerate()
                .skip(n / 2)
                .take(n)
                .filter(|(_, x)| x % 2 == 1)
                .map(|(i, x)| i as u64 * u64::from(x))
                .sum::<u64>(),
            "map enumerate skip take filter map sum ({ctx})"
        );
        assert_eq!(
            v.par_iter()
                .chain(&b)
                .enumerate()
                .with_max_len(64)
                .map(|(i, &x)| (x, i))
                .max(),
            v.iter().chain(&b).enumerate().map(|(i, &x)| (x, i)).max(),
            "chain enumerate with_max_len max ({ctx})"
        );
        // A parallel loop inside a parallel loop's closure: it runs on the
        // same pool, from a worker.
        let short = &v[..v.len().min(300)];
        assert_eq!(
            short
                .par_iter()
                .map(|&x| (0..x % 50).into_par_iter().map(|i| i * x).sum::<u32>())
                .collect::<Vec<_>>(),
            short
                .iter()
                .map(|&x| (0..x % 50).map(|i| i * x).sum::<u32>())
                .collect::<Vec<_>>(),
            "nested loops ({ctx})"
        );
        assert_eq!(
            v.par_iter()
                .zip(&b)
                .map(|(x, y)| x.max(y))
                .copied()
                .collect::<Vec<_>>(),
            v.iter()
                .zip(&b)
                .map(|(x, y)| x.max(y))
                .copied()
                .collect::<Vec<_>>(),
            "zip map copied ({ctx})"
        );
    });
}

// ---------------------------------------------------------- consumers

#[test]
fn for_each_runs_once_per_item() {
    check("for_each_runs_once_per_item", |case| {
        let ctx = case.to_string();
        let len = case.len;
        let runs = |what: &str, visit: &dyn Fn(&[AtomicUsize]), expect: &dyn Fn(usize) -> usize| {
            let seen: Vec<AtomicUsize> = (0..len).map(|_| AtomicUsize::new(0)).collect();
            visit(&seen);
            for (i, count) in seen.iter().enumerate() {
                let count = count.load(Ordering::SeqCst);
                assert_eq!(
                    count,
                    expect(i),
                    "{what}: item {i} ran {count} times ({ctx})"
                );
            }
        };
        let bump = |seen: &[AtomicUsize], i: usize| {
            seen[i].fetch_add(1, Ordering::SeqCst);
        };
        runs(
            "range",
            &|seen| (0..len).into_par_iter().for_each(|i| bump(seen, i)),
            &|_| 1,
        );
        runs(
            "slice enumerate filter",
            &|seen| {
                seen.par_iter()
                    .enumerate()
                    .filter(|(i, _)| i % 3 == 0)
                    .for_each(|(i, _)| bump(seen, i));
            },
            &|i| usize::from(i % 3 == 0),
        );
        runs(
            "flat_map",
            &|seen| {
                (0..len)
                    .into_par_iter()
                    .flat_map(|i| vec![i; i % 3])
                    .for_each(|i| bump(seen, i));
            },
            &|i| i % 3,
        );
        let cut = case.rng.below(len + 2);
        runs(
            "skip take",
            &|seen| {
                (0..len)
                    .into_par_iter()
                    .skip(cut / 2)
                    .take(cut)
                    .for_each(|i| bump(seen, i));
            },
            &|i| usize::from(i >= cut / 2 && i < cut / 2 + cut),
        );
        runs(
            "with_max_len(1)",
            &|seen| {
                (0..len)
                    .into_par_iter()
                    .with_max_len(if len > 5_000 { 64 } else { 1 })
                    .for_each(|i| bump(seen, i));
            },
            &|_| 1,
        );
        // `collect::<()>()`: side effects only, as std.
        runs(
            "collect unit",
            &|seen| (0..len).into_par_iter().map(|i| bump(seen, i)).collect(),
            &|_| 1,
        );
    });
}

#[test]
fn sum_product_count_reduce() {
    check("sum_product_count_reduce", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);

        assert_eq!(
            v.par_iter().map(|&x| u64::from(x)).sum::<u64>(),
            v.iter().map(|&x| u64::from(x)).sum::<u64>(),
            "sum u64 ({ctx})"
        );
        assert_eq!(
            v.par_iter().map(|&x| i64::from(x) - 500).sum::<i64>(),
            v.iter().map(|&x| i64::from(x) - 500).sum::<i64>(),
            "sum negatives ({ctx})"
        );
        assert_eq!(
            v.par_iter().sum::<u32>(),
            v.iter().sum::<u32>(),
            "sum refs ({ctx})"
        );
        // Integers below 2^24 sum exactly in f64 in any order.
        assert_eq!(
            v.par_iter().map(|&x| f64::from(x)).sum::<f64>(),
            v.iter().map(|&x| f64::from(x)).sum::<f64>(),
            "sum exact f64 ({ctx})"
        );
        assert_eq!(
            v.par_iter()
                .map(|&x| Wrapping(x | 1))
                .product::<Wrapping<u32>>(),
            v.iter()
                .map(|&x| Wrapping(x | 1))
                .product::<Wrapping<u32>>(),
            "product wrapping ({ctx})"
        );
        // Small factors, at most 60 twos: exact in u64.
        let small: Vec<u64> = v.iter().take(60).map(|&x| 1 + u64::from(x % 2)).collect();
        assert_eq!(
            small.par_iter().product::<u64>(),
            small.iter().product::<u64>(),
            "product small ({ctx})"
        );
        assert_eq!(
            (1..=(case.len.min(20) as u64))
                .collect::<Vec<_>>()
                .into_par_iter()
                .product::<u64>(),
            (1..=(case.len.min(20) as u64)).product::<u64>(),
            "factorial ({ctx})"
        );
        assert_eq!(v.par_iter().count(), v.len(), "count ({ctx})");
        assert_eq!(
            v.par_iter().filter(|&&x| x > 300).count(),
            v.iter().filter(|&&x| x > 300).count(),
            "filter count ({ctx})"
        );
        // Concatenation is associative but not commutative: the pieces must
        // combine in the input's order.
        let short = &v[..v.len().min(5_000)];
        assert_eq!(
            short
                .par_iter()
                .map(|x| format!("{x},"))
                .reduce(String::new, |a, b| a + &b),
            short.iter().map(|x| format!("{x},")).collect::<String>(),
            "reduce concatenation ({ctx})"
        );
        assert_eq!(
            v.par_iter().map(|&x| (x, x, u64::from(x))).reduce(
                || (u32::MAX, 0, 0),
                |a, b| (a.0.min(b.0), a.1.max(b.1), a.2 + b.2)
            ),
            v.iter()
                .map(|&x| (x, x, u64::from(x)))
                .fold((u32::MAX, 0, 0), |a, b| (
                    a.0.min(b.0),
                    a.1.max(b.1),
                    a.2 + b.2
                )),
            "reduce min max sum ({ctx})"
        );
    });
}

#[test]
fn min_max_and_their_ties() {
    check("min_max_and_their_ties", |case| {
        let ctx = case.to_string();
        // Few distinct keys, so most are tied; each item carries its index,
        // which tells which of the tied ones came back.
        let distinct = 1 + case.rng.below(6) as u32;
        let items: Vec<(u32, usize)> = case
            .values(distinct)
            .into_iter()
            .enumerate()
            .map(|(i, key)| (key, i))
            .collect();
        let key = |item: &&(u32, usize)| item.0;
        let by_key = |a: &&(u32, usize), b: &&(u32, usize)| a.0.cmp(&b.0);

        assert_eq!(
            items.par_iter().min_by_key(key),
            items.iter().min_by_key(key),
            "min_by_key: the first of equal minima ({ctx})"
        );
        assert_eq!(
            items.par_iter().max_by_key(key),
            items.iter().max_by_key(key),
            "max_by_key: the last of equal maxima ({ctx})"
        );
        assert_eq!(
            items.par_iter().min_by(by_key),
            items.iter().min_by(by_key),
            "min_by ({ctx})"
        );
        assert_eq!(
            items.par_iter().max_by(by_key),
            items.iter().max_by(by_key),
            "max_by ({ctx})"
        );
        assert_eq!(items.par_iter().min(), items.iter().min(), "min ({ctx})");
        assert_eq!(items.par_iter().max(), items.iter().max(), "max ({ctx})");
        assert_eq!(
            items.par_iter().map(|item| item.0).min(),
            items.iter().map(|item| item.0).min(),
            "min of keys ({ctx})"
        );

        // `Ord` ties: a type whose order ignores the index.
        #[derive(Debug, Clone, Copy)]
        struct Key(u32, usize);
        impl PartialEq for Key {
            fn eq(&self, other: &Self) -> bool {
                self.0 == other.0
            }
        }
        impl Eq for Key {}
        impl PartialOrd for Key {
            fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(other))
            }
        }
        impl Ord for Key {
            fn cmp(&self, other: &Self) -> std::cmp::Ordering {
                self.0.cmp(&other.0)
            }
        }
        let keys: Vec<Key> = items.iter().map(|&(k, i)| Key(k, i)).collect();
        assert_eq!(
            keys.par_iter().copied().min().map(|k| k.1),
            keys.iter().copied().min().map(|k| k.1),
            "min: the first of equal minima ({ctx})"
        );
        assert_eq!(
            keys.par_iter().copied().max().map(|k| k.1),
            keys.iter().copied().max().map(|k| k.1),
            "max: the last of equal maxima ({ctx})"
        );
        assert_eq!(
            keys.clone()
                .into_par_iter()
                .filter(|k| k.1 % 2 == 0)
                .max()
                .map(|k| k.1),
            keys.iter()
                .copied()
                .filter(|k| k.1 % 2 == 0)
                .max()
                .map(|k| k.1),
            "filter max, by value ({ctx})"
        );
        assert_eq!(
            keys.clone()
                .into_par_iter()
                .filter(|k| k.1 % 2 == 1)
                .min()
                .map(|k| k.1),
            keys.iter()
                .copied()
                .filter(|k| k.1 % 2 == 1)
                .min()
                .map(|k| k.1),
            "filter min, by value ({ctx})"
        );
    });
}

#[test]
fn collect_into_vec_keeps_the_order() {
    check("collect_into_vec_keeps_the_order", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        // The indexed path (writes in place) and the unindexed one (pieces
        // joined), on the same input.
        assert_eq!(
            v.par_iter().map(|&x| x + 1).collect::<Vec<_>>(),
            v.iter().map(|&x| x + 1).collect::<Vec<_>>(),
            "indexed ({ctx})"
        );
        assert_eq!(
            v.par_iter().filter(|_| true).copied().collect::<Vec<_>>(),
            v,
            "unindexed, nothing filtered ({ctx})"
        );
        assert_eq!(
            (0..case.len).into_par_iter().collect::<Vec<_>>(),
            (0..case.len).collect::<Vec<_>>(),
            "range ({ctx})"
        );
        assert_eq!(
            (0..case.len)
                .into_par_iter()
                .with_max_len(if case.len > 5_000 { 50 } else { 1 })
                .filter(|i| i % 7 != 3)
                .collect::<Vec<_>>(),
            (0..case.len).filter(|i| i % 7 != 3).collect::<Vec<_>>(),
            "small pieces, unindexed ({ctx})"
        );
    });
}

#[test]
fn collect_into_maps_sets_and_strings() {
    check("collect_into_maps_sets_and_strings", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        // Repeated keys: the last value wins, as in a sequential collect.
        let pairs = |v: &[u32]| {
            v.iter()
                .enumerate()
                .map(|(i, &x)| (x % 64, i))
                .collect::<Vec<_>>()
        };
        let seq_pairs = pairs(&v);
        assert_eq!(
            seq_pairs.par_iter().copied().collect::<HashMap<_, _>>(),
            seq_pairs.iter().copied().collect::<HashMap<_, _>>(),
            "HashMap ({ctx})"
        );
        assert_eq!(
            v.par_iter()
                .enumerate()
                .map(|(i, &x)| (x % 64, i))
                .collect::<BTreeMap<_, _>>(),
            seq_pairs.iter().copied().collect::<BTreeMap<_, _>>(),
            "BTreeMap ({ctx})"
        );
        assert_eq!(
            v.par_iter().copied().collect::<HashSet<_>>(),
            v.iter().copied().collect::<HashSet<_>>(),
            "HashSet ({ctx})"
        );
        assert_eq!(
            v.par_iter().copied().collect::<BTreeSet<_>>(),
            v.iter().copied().collect::<BTreeSet<_>>(),
            "BTreeSet ({ctx})"
        );
        assert_eq!(
            v.par_iter().copied().collect::<VecDeque<_>>(),
            v.iter().copied().collect::<VecDeque<_>>(),
            "VecDeque ({ctx})"
        );
        assert_eq!(
            v.par_iter().copied().collect::<LinkedList<_>>(),
            v.iter().copied().collect::<LinkedList<_>>(),
            "LinkedList ({ctx})"
        );
        let letter = |x: u32| char::from(b'a' + (x % 26) as u8);
        assert_eq!(
            v.par_iter().map(|&x| letter(x)).collect::<String>(),
            v.iter().map(|&x| letter(x)).collect::<String>(),
            "String from chars ({ctx})"
        );
        let words: Vec<String> = v.iter().map(|x| format!("{x} ")).collect();
        assert_eq!(
            words.par_iter().map(String::as_str).collect::<String>(),
            words.concat(),
            "String from &str ({ctx})"
        );
        assert_eq!(
            words.par_iter().cloned().collect::<String>(),
            words.concat(),
            "String from String ({ctx})"
        );
        assert_eq!(
            v.par_iter()
                .filter(|&&x| x % 2 == 0)
                .map(|&x| letter(x))
                .collect::<String>(),
            v.iter()
                .filter(|&&x| x % 2 == 0)
                .map(|&x| letter(x))
                .collect::<String>(),
            "String, unindexed ({ctx})"
        );
    });
}

#[test]
fn unzip_splits_pairs_in_order() {
    check("unzip_splits_pairs_in_order", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        let (xs, is): (Vec<u32>, Vec<usize>) =
            v.par_iter().enumerate().map(|(i, &x)| (x, i)).unzip();
        let (seq_xs, seq_is): (Vec<u32>, Vec<usize>) =
            v.iter().enumerate().map(|(i, &x)| (x, i)).unzip();
        assert_eq!((xs, is), (seq_xs, seq_is), "Vecs ({ctx})");
        let (odd, set): (Vec<usize>, HashSet<u32>) = v
            .par_iter()
            .enumerate()
            .filter(|(i, _)| i % 2 == 1)
            .map(|(i, &x)| (i, x))
            .unzip();
        let (seq_odd, seq_set): (Vec<usize>, HashSet<u32>) = v
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 2 == 1)
            .map(|(i, &x)| (i, x))
            .unzip();
        assert_eq!(
            (odd, set),
            (seq_odd, seq_set),
            "unindexed, into a set ({ctx})"
        );
    });
}

#[test]
fn any_all_find_and_position() {
    check("any_all_find_and_position", |case| {
        let ctx = case.to_string();
        // Values below `range`, matched when equal to `wanted`: from no
        // match (range 1000, short input) to most items matching.
        let range = [1, 2, 10, 1_000, 100_000][case.rng.below(5)];
        let v = case.values(range);
        let wanted = case.rng.below(range as usize) as u32;
        let matches = |x: u32| x == wanted;
        let any = v.iter().any(|&x| matches(x));
        let what = format!("range {range}, wanted {wanted}, any {any}");

        assert_eq!(
            v.par_iter().any(|&x| matches(x)),
            any,
            "{what}: any ({ctx})"
        );
        assert_eq!(
            v.par_iter().all(|&x| !matches(x)),
            !any,
            "{what}: all ({ctx})"
        );
        assert!(v.par_iter().all(|&x| x < range), "{what}: all true ({ctx})");
        match v.par_iter().find_any(|&&x| matches(x)) {
            Some(x) => {
                assert!(matches(*x), "{what}: find_any {x} ({ctx})");
                assert!(
                    v.as_ptr_range().contains(&std::ptr::from_ref(x)),
                    "{what}: find_any an element of the input ({ctx})"
                );
            }
            None => assert!(!any, "{what}: find_any found none ({ctx})"),
        }
        assert_eq!(
            v.par_iter().enumerate().find_first(|(_, &x)| matches(x)),
            v.iter().enumerate().find(|(_, &x)| matches(x)),
            "{what}: find_first, the first in order ({ctx})"
        );
        assert_eq!(
            v.par_iter()
                .enumerate()
                .filter(|(i, _)| i % 2 == 0)
                .find_first(|(_, &x)| matches(x)),
            v.iter()
                .enumerate()
                .filter(|(i, _)| i % 2 == 0)
                .find(|(_, &x)| matches(x)),
            "{what}: filter find_first ({ctx})"
        );
        match v.par_iter().position_any(|&x| matches(x)) {
            Some(at) => assert!(
                at < v.len() && matches(v[at]),
                "{what}: position_any {at} ({ctx})"
            ),
            None => assert!(!any, "{what}: position_any found none ({ctx})"),
        }
        match v.par_iter().skip(3).position_any(|&x| matches(x)) {
            Some(at) => assert!(
                at + 3 < v.len() && matches(v[at + 3]),
                "{what}: skip position_any {at} ({ctx})"
            ),
            None => assert!(
                !v.iter().skip(3).any(|&x| matches(x)),
                "{what}: skip position_any found none ({ctx})"
            ),
        }
        // No early exit without a match: every item is seen once.
        let seen = AtomicUsize::new(0);
        assert!(
            !v.par_iter().any(|&x| {
                seen.fetch_add(1, Ordering::Relaxed);
                x >= range
            }),
            "{ctx}"
        );
        assert_eq!(seen.into_inner(), v.len(), "any without a match ({ctx})");
    });
}

#[test]
fn find_last_find_map_and_position_first_last() {
    check("find_last_find_map_and_position_first_last", |case| {
        let ctx = case.to_string();
        let v = case.values(50);
        let target = case.rng.below(50) as u32;
        let is = |x: &u32| *x == target;
        assert_eq!(
            v.par_iter().find_last(|x| is(x)),
            v.iter().rev().find(|x| is(x)),
            "find_last ({ctx})"
        );
        // Which of equal values: the index says.
        assert_eq!(
            v.par_iter().enumerate().find_last(|(_, x)| is(x)),
            v.iter().enumerate().rev().find(|(_, x)| is(x)),
            "enumerate find_last ({ctx})"
        );
        assert_eq!(
            v.par_iter().position_first(is),
            v.iter().position(is),
            "position_first ({ctx})"
        );
        assert_eq!(
            v.par_iter().position_last(is),
            v.iter().rposition(is),
            "position_last ({ctx})"
        );
        let f = |(i, x): (usize, &u32)| is(x).then_some(i);
        assert_eq!(
            v.par_iter().enumerate().find_map_first(f),
            v.iter().enumerate().find_map(f),
            "find_map_first ({ctx})"
        );
        assert_eq!(
            v.par_iter().enumerate().find_map_last(f),
            v.iter().enumerate().rev().find_map(f),
            "find_map_last ({ctx})"
        );
        match v.par_iter().enumerate().find_map_any(f) {
            Some(i) => assert!(is(&v[i]), "find_map_any ({ctx})"),
            None => assert!(!v.contains(&target), "find_map_any ({ctx})"),
        }
        let odd = |x: &&u32| **x % 2 == 1;
        assert_eq!(
            v.par_iter().filter(odd).find_last(|_| true),
            v.iter().rfind(odd),
            "filter find_last ({ctx})"
        );

        let len = case.len;
        let cut = case.rng.below(len + 1);
        moves_in_order(
            len,
            (0..len).rev().find(|i| i % 5 == cut % 5),
            "find_last",
            &ctx,
            |items| {
                let found = items
                    .into_par_iter()
                    .find_last(|item| item.id % 5 == cut % 5);
                found.into_iter().collect()
            },
        );
        moves_in_order(
            len,
            (0..len).find(|&i| i >= cut),
            "find_map_first",
            &ctx,
            |items| {
                let found = items
                    .into_par_iter()
                    .find_map_first(|item| (item.id >= cut).then_some(item));
                found.into_iter().collect()
            },
        );
    });
}

#[test]
fn while_some_stops_at_a_none() {
    check("while_some_stops_at_a_none", |case| {
        let ctx = case.to_string();
        let len = case.len;
        let all: Vec<usize> = (0..len).into_par_iter().map(Some).while_some().collect();
        assert_eq!(all, (0..len).collect::<Vec<_>>(), "no None ({ctx})");
        let target = case.rng.below(len + 1);
        let out: Vec<usize> = (0..len)
            .into_par_iter()
            .map(|i| (i != target).then_some(i))
            .while_some()
            .collect();
        assert!(out.windows(2).all(|w| w[0] < w[1]), "in order ({ctx})");
        assert!(!out.contains(&target), "no None's item ({ctx})");
        if target >= len {
            assert_eq!(out.len(), len, "no None ({ctx})");
        }
        let (drops, items) = tracked(len);
        let out: Vec<Tracked> = items
            .into_par_iter()
            .map(|item| (item.id != target).then_some(item))
            .while_some()
            .collect();
        assert!(
            ids(&out).windows(2).all(|w| w[0] < w[1]),
            "by value ({ctx})"
        );
        drop(out);
        assert_dropped_once(&drops, "while_some", &ctx);
    });
}

#[test]
fn par_extend_appends_in_order() {
    check("par_extend_appends_in_order", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        let prefix_len = case.rng.below(20);
        let prefix = case.values_of(prefix_len, 1_000);

        let mut par = prefix.clone();
        par.par_extend(v.par_iter().copied());
        let mut seq = prefix.clone();
        seq.extend(v.iter().copied());
        assert_eq!(par, seq, "Vec, indexed ({ctx})");

        let mut par = prefix.clone();
        par.par_extend(v.par_iter().copied().filter(|x| x % 3 == 0));
        let mut seq = prefix.clone();
        seq.extend(v.iter().copied().filter(|x| x % 3 == 0));
        assert_eq!(par, seq, "Vec, unindexed ({ctx})");

        let mut par = prefix.clone();
        par.par_extend(v.clone());
        assert_eq!(par, [&prefix[..], &v[..]].concat(), "Vec by value ({ctx})");

        let mut par = String::from("start:");
        par.par_extend(v.par_iter().map(|&x| char::from(b'a' + (x % 26) as u8)));
        let mut seq = String::from("start:");
        seq.extend(v.iter().map(|&x| char::from(b'a' + (x % 26) as u8)));
        assert_eq!(par, seq, "String ({ctx})");

        let mut par: HashMap<u32, usize> = prefix.iter().map(|&x| (x, 0)).collect();
        let mut seq = par.clone();
        par.par_extend(v.par_iter().enumerate().map(|(i, &x)| (x, i)));
        seq.extend(v.iter().enumerate().map(|(i, &x)| (x, i)));
        assert_eq!(par, seq, "HashMap ({ctx})");

        let mut par: BTreeSet<u32> = prefix.iter().copied().collect();
        let mut seq = par.clone();
        par.par_extend(v.par_iter().copied());
        seq.extend(v.iter().copied());
        assert_eq!(par, seq, "BTreeSet ({ctx})");
    });
}

#[test]
fn loops_outside_any_pool_run_on_the_global_pool() {
    // Called from a plain thread: the loops go to the global pool.
    let v: Vec<u64> = (0..10_000).collect();
    assert_eq!(v.par_iter().sum::<u64>(), v.iter().sum::<u64>());
    assert_eq!(
        v.par_iter().map(|x| x * 2).collect::<Vec<_>>(),
        v.iter().map(|x| x * 2).collect::<Vec<_>>()
    );
    assert_eq!(v.par_iter().position_any(|&x| x == 9_999), Some(9_999));
    let workers = std::thread::spawn(|| {
        (0..1_000)
            .into_par_iter()
            .map(|_| weft::current_num_threads())
            .max()
    })
    .join()
    .expect("thread");
    assert!(workers >= Some(1));
}

// --------------------------------------------------------- early exit

/// The input of the early-exit tests: long enough that running it all is
/// unmistakable, and the match near the front.
const EARLY_LEN: usize = 10_000_000;
const EARLY_MATCH: usize = 1_000;

/// Far enough into a loop that a loop called from outside a pool has
/// handed its rest to the pool before it gets there: the caller is alone
/// for microseconds, and 100k items take tens of them even in a release
/// build.
const LATE_MATCH: usize = 100_000;

/// `find_first` stops the pieces past its match: a search of a range far
/// too long to run returns once the match is in, as `find_any` does.
/// (Before, every later chunk still ran, each finding it had nothing to
/// do, and the search of `0..u64::MAX` never returned.)
#[test]
fn find_first_over_a_range_too_long_to_run_returns() {
    for workers in WORKERS {
        let found = on(workers, || {
            (0..u64::MAX)
                .into_par_iter()
                .find_first(|&x| x % 1_000 == 999)
        });
        assert_eq!(found, Some(999), "{workers} workers");
        let found = on(workers, || {
            (0..usize::MAX)
                .into_par_iter()
                .map(|x| x / 2)
                .find_first(|&x| x == EARLY_MATCH)
        });
        assert_eq!(found, Some(EARLY_MATCH), "{workers} workers, mapped");
        let found = on(workers, || {
            (0..u128::MAX).into_par_iter().find_first(|&x| x == 999)
        });
        assert_eq!(found, Some(999), "{workers} workers, u128");
        // A match late enough that, from outside a pool, the pool's task
        // has joined in first: the rest it shares with the caller is longer
        // than a `usize` counts, so its back cannot be cut by index.
        let late = LATE_MATCH as u128;
        let found = on(workers, || {
            (0..u128::MAX).into_par_iter().find_first(|&x| x == late)
        });
        assert_eq!(found, Some(late), "{workers} workers, u128, a late match");
        // A deterministic loop folds each leaf in one go: a leaf right of
        // the match, as long as the range, ends at its next item once the
        // match is known.
        let found = on(workers, || {
            (0..u128::MAX)
                .into_par_iter()
                .deterministic()
                .find_first(|&x| x == late)
        });
        assert_eq!(found, Some(late), "{workers} workers, u128, deterministic");
    }
}

#[test]
fn any_find_any_position_any_and_all_stop_the_work() {
    // The promise is about work, not time: once a match is found, pieces
    // not yet started do not run, and started ones stop at their next item.
    // So the predicate sees a small fraction of the input; half is far
    // above what any schedule gives (a few pieces' worth of items) and far
    // below the whole.
    for &workers in &WORKERS {
        on(workers, || {
            let ctx = format!("len {EARLY_LEN}, match at {EARLY_MATCH}, workers {workers}");
            let seen = AtomicUsize::new(0);
            let saw = |i: usize| {
                seen.fetch_add(1, Ordering::Relaxed);
                i == EARLY_MATCH
            };
            let reset = |what: &str| {
                let count = seen.swap(0, Ordering::Relaxed);
                assert!(
                    count < EARLY_LEN / 2,
                    "{what}: the predicate saw {count} items ({ctx})"
                );
            };

            assert!((0..EARLY_LEN).into_par_iter().any(saw), "{ctx}");
            reset("any");
            assert_eq!(
                (0..EARLY_LEN).into_par_iter().find_any(|&i| saw(i)),
                Some(EARLY_MATCH),
                "{ctx}"
            );
            reset("find_any");
            assert_eq!(
                (0..EARLY_LEN).into_par_iter().position_any(saw),
                Some(EARLY_MATCH),
                "{ctx}"
            );
            reset("position_any");
            assert!(!(0..EARLY_LEN).into_par_iter().all(|i| !saw(i)), "{ctx}");
            reset("all");
            assert!(
                (0..EARLY_LEN)
                    .into_par_iter()
                    .map(|i| i * 2)
                    .any(|i| saw(i / 2)),
                "{ctx}"
            );
            reset("map any");
            assert_eq!(
                (0..EARLY_LEN).into_par_iter().try_for_each(|i| if saw(i) {
                    Err(i)
                } else {
                    Ok(())
                }),
                Err(EARLY_MATCH),
                "{ctx}"
            );
            reset("try_for_each");
            assert_eq!(
                (0..EARLY_LEN)
                    .into_par_iter()
                    .map(|i| (!saw(i)).then_some(i))
                    .try_reduce(|| 0, |a, b| Some(a.max(b))),
                None,
                "{ctx}"
            );
            reset("try_reduce");
        });
    }
}

// ------------------------------------------------------------- panics

/// The input of the panic tests, and the item whose closure panics.
const PANIC_LEN: usize = 1_000_000;
const PANIC_AT: usize = 10;

/// How many times a panic test runs its loop before it says the loop did
/// not stop: one run may see every item run with no fault in the loop (the
/// thread that panicked lost its core while the others ran the rest), so
/// the test asks that at least one of several runs stops early.
const PANIC_TRIES: usize = 6;

/// Runs `attempt` (which returns how many items ran) until a run stops
/// before every item ran, and fails after `PANIC_TRIES` runs that did not.
/// The pieces not yet started when an item panicked must not run; how
/// many did start is a matter of timing, and under a loaded machine so is
/// whether any was left, which is why one early stop in several suffices
/// and a loop that never stops still fails every time.
fn stops_in_some_try(what: &str, ctx: &str, mut attempt: impl FnMut() -> usize) {
    let mut counts = Vec::new();
    for _ in 0..PANIC_TRIES {
        let ran = attempt();
        if ran < PANIC_LEN {
            return;
        }
        counts.push(ran);
    }
    panic!(
        "{what}: every item ran after the panic in each of {PANIC_TRIES} runs ({ctx}): {counts:?}"
    );
}

/// Runs `run` on every worker count with a closure that counts the items
/// it sees and panics on `PANIC_AT`; `run` hands it the items of
/// `0..PANIC_LEN`. The panic must reach the caller, the loop must stop
/// before every item ran (in one of a few runs: `stops_in_some_try`), and
/// the pool must stay usable.
fn a_panic_stops_the_loop(what: &str, run: impl Fn(&(dyn Fn(usize) + Sync)) + Sync) {
    quiet_planned_panics();
    for &workers in &WORKERS {
        let ctx = format!("len {PANIC_LEN}, panic at {PANIC_AT}, workers {workers}");
        stops_in_some_try(what, &ctx, || {
            let ran = AtomicUsize::new(0);
            let hit = |i: usize| {
                ran.fetch_add(1, Ordering::Relaxed);
                if i == PANIC_AT {
                    panic::panic_any(Planned(i));
                }
            };
            let result = panic::catch_unwind(AssertUnwindSafe(|| on(workers, || run(&hit))));
            assert_eq!(planned(result, what, &ctx), Planned(PANIC_AT), "{ctx}");
            ran.into_inner()
        });
        assert_pool_works(workers, &ctx);
    }
}

#[test]
fn a_panic_in_for_each_reaches_the_caller_and_stops_the_loop() {
    a_panic_stops_the_loop("for_each", |hit| {
        (0..PANIC_LEN).into_par_iter().for_each(hit);
    });
}

#[test]
fn a_panic_in_map_collect_reaches_the_caller_and_stops_the_loop() {
    quiet_planned_panics();
    for &workers in &WORKERS {
        let ctx = format!("len {PANIC_LEN}, panic at {PANIC_AT}, workers {workers}");
        for unindexed in [false, true] {
            let ctx = format!("{ctx}, unindexed {unindexed}");
            stops_in_some_try("collect", &ctx, || {
                let ran = AtomicUsize::new(0);
                let result = panic::catch_unwind(AssertUnwindSafe(|| {
                    on(workers, || {
                        let mapped = (0..PANIC_LEN).into_par_iter().map(|i| {
                            ran.fetch_add(1, Ordering::Relaxed);
                            if i == PANIC_AT {
                                panic::panic_any(Planned(i));
                            }
                            i.to_string()
                        });
                        let out: Vec<String> = if unindexed {
                            mapped.filter(|_| true).collect()
                        } else {
                            mapped.collect()
                        };
                        out.len()
                    })
                }));
                assert_eq!(planned(result, "collect", &ctx), Planned(PANIC_AT), "{ctx}");
                ran.into_inner()
            });
            assert_pool_works(workers, &ctx);
        }
    }
}

#[test]
fn a_panic_on_the_last_item_or_every_item_reaches_the_caller() {
    quiet_planned_panics();
    check(
        "a_panic_on_the_last_item_or_every_item_reaches_the_caller",
        |case| {
            let ctx = case.to_string();
            let len = case.len;
            if len == 0 {
                return;
            }
            let result = panic::catch_unwind(|| {
                (0..len).into_par_iter().for_each(|i| {
                    if i == len - 1 {
                        panic::panic_any(Planned(i));
                    }
                });
            });
            assert_eq!(planned(result, "last", &ctx), Planned(len - 1), "{ctx}");
            // Every piece panics: one of the payloads comes back.
            let result = panic::catch_unwind(|| {
                (0..len)
                    .into_par_iter()
                    .map(|i| -> u32 { panic::panic_any(Planned(i)) })
                    .sum::<u32>()
            });
            let Planned(at) = planned(result, "every", &ctx);
            assert!(at < len, "every: payload {at} ({ctx})");
            assert_eq!((0..len).into_par_iter().count(), len, "after ({ctx})");
        },
    );
}

#[test]
fn a_panic_in_identity_or_reduce_reaches_the_caller() {
    quiet_planned_panics();
    check("a_panic_in_identity_or_reduce_reaches_the_caller", |case| {
        let ctx = case.to_string();
        let len = case.len;
        let result = panic::catch_unwind(|| {
            (0..len)
                .into_par_iter()
                .fold(|| -> usize { panic::panic_any(Planned(0)) }, |a, b| a + b)
                .sum::<usize>()
        });
        assert_eq!(planned(result, "fold identity", &ctx), Planned(0), "{ctx}");
        if len >= 2 {
            // The op sees every item: one of its calls gets the largest.
            let result = panic::catch_unwind(|| {
                (0..len).into_par_iter().reduce(
                    || 0,
                    |a, b| {
                        if a == len - 1 || b == len - 1 {
                            panic::panic_any(Planned(len - 1));
                        }
                        a.max(b)
                    },
                )
            });
            assert_eq!(
                planned(result, "reduce op", &ctx),
                Planned(len - 1),
                "{ctx}"
            );
        }
        assert_eq!((0..len).into_par_iter().count(), len, "after ({ctx})");
    });
}

/// The pool (or the global pool, for `OUTSIDE`) runs loops correctly
/// after a loop's panic.
fn assert_pool_works(workers: usize, ctx: &str) {
    let (sum, collected) = on(workers, || {
        (
            (0..100_000u64).into_par_iter().sum::<u64>(),
            (0..1_000)
                .into_par_iter()
                .map(|i| i * 2)
                .collect::<Vec<_>>(),
        )
    });
    assert_eq!(sum, 4_999_950_000, "sum after the panic ({ctx})");
    assert_eq!(
        collected,
        (0..1_000).map(|i| i * 2).collect::<Vec<_>>(),
        "collect after the panic ({ctx})"
    );
}

// ------------------------------------- two collections, indices, zip_eq

#[test]
fn partition_partition_map_and_unzip_against_std() {
    quiet_planned_panics();
    check("partition_partition_map_and_unzip_against_std", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        let pivot = case.rng.below(1_001) as u32;

        let split: (Vec<u32>, Vec<u32>) = v.par_iter().copied().partition(|&x| x < pivot);
        assert_eq!(
            split,
            v.iter().copied().partition(|&x| x < pivot),
            "partition ({ctx})"
        );
        // Unindexed, into sets and a string.
        let split: (BTreeSet<u32>, BTreeSet<u32>) = v
            .par_iter()
            .copied()
            .filter(|x| x % 2 == 0)
            .partition(|&x| x < pivot);
        let seq: (BTreeSet<u32>, BTreeSet<u32>) = v
            .iter()
            .copied()
            .filter(|x| x % 2 == 0)
            .partition(|&x| x < pivot);
        assert_eq!(split, seq, "filter partition into sets ({ctx})");

        let sort = |x: u32| {
            if x % 3 == 0 {
                Either::Left(x / 3)
            } else {
                Either::Right(char::from(b'a' + (x % 26) as u8))
            }
        };
        let (thirds, letters): (Vec<u32>, String) =
            v.par_iter().map(|&x| sort(x)).partition_map(|e| e);
        let mut seq = (Vec::new(), String::new());
        for x in &v {
            match sort(*x) {
                Either::Left(third) => seq.0.push(third),
                Either::Right(letter) => seq.1.push(letter),
            }
        }
        assert_eq!((thirds, letters), seq, "partition_map ({ctx})");

        let (xs, squares): (VecDeque<u32>, Vec<u64>) = v
            .par_iter()
            .map(|&x| (x, u64::from(x) * u64::from(x)))
            .unzip();
        let seq: (VecDeque<u32>, Vec<u64>) =
            v.iter().map(|&x| (x, u64::from(x) * u64::from(x))).unzip();
        assert_eq!((xs, squares), seq, "unzip ({ctx})");

        // By value: every item lands on its side, in order, dropped once.
        let len = case.len;
        let modulus = 1 + case.rng.below(4);
        let chosen = move |id: usize| id % modulus == 0;
        let expected = (0..len)
            .filter(|&id| chosen(id))
            .chain((0..len).filter(|&id| !chosen(id)));
        moves_in_order(len, expected, "partition by value", &ctx, |items| {
            let (mut yes, no): (Vec<Tracked>, Vec<Tracked>) =
                items.into_par_iter().partition(|item| chosen(item.id));
            yes.extend(no);
            yes
        });
        moves_in_order(len, 0..len, "unzip by value", &ctx, |items| {
            let (out, ids): (Vec<Tracked>, Vec<usize>) = items
                .into_par_iter()
                .map(|item| {
                    let id = item.id;
                    (item, id)
                })
                .unzip();
            assert_eq!(ids, (0..len).collect::<Vec<_>>(), "unzip's ids ({ctx})");
            out
        });
        if len > 0 {
            let target = case.rng.below(len);
            panics_on(len, target, "partition_map", &ctx, |items, explode| {
                let sides: (Vec<Tracked>, LinkedList<Tracked>) =
                    items.into_par_iter().partition_map(|item| {
                        explode(&item);
                        if item.id % 2 == 0 {
                            Either::Left(item)
                        } else {
                            Either::Right(item)
                        }
                    });
                drop(sides);
            });
            panics_on(len, target, "unzip", &ctx, |items, explode| {
                let sides: (Vec<Tracked>, Vec<usize>) = items
                    .into_par_iter()
                    .map(|item| {
                        explode(&item);
                        let id = item.id;
                        (item, id)
                    })
                    .unzip();
                drop(sides);
            });
        }
    });
}

#[test]
fn collect_and_unzip_into_vecs_reuse_the_vecs() {
    quiet_planned_panics();
    check("collect_and_unzip_into_vecs_reuse_the_vecs", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        // Leftovers, fewer or more than the output, that must go.
        let mut target: Vec<u32> = case.other_values(7);
        let room = target.capacity();
        let before = target.as_ptr();
        v.par_iter().map(|&x| x ^ 5).collect_into_vec(&mut target);
        assert_eq!(
            target,
            v.iter().map(|&x| x ^ 5).collect::<Vec<_>>(),
            "collect_into_vec ({ctx})"
        );
        if v.len() <= room {
            assert_eq!(
                target.as_ptr(),
                before,
                "collect_into_vec reallocated ({ctx})"
            );
        }

        let mut left: Vec<usize> = vec![9; case.rng.below(10)];
        let mut right: Vec<u32> = case.other_values(3);
        v.par_iter()
            .enumerate()
            .map(|(i, &x)| (i, x + 1))
            .unzip_into_vecs(&mut left, &mut right);
        assert_eq!(
            left,
            (0..v.len()).collect::<Vec<_>>(),
            "unzip_into_vecs left ({ctx})"
        );
        assert_eq!(
            right,
            v.iter().map(|&x| x + 1).collect::<Vec<_>>(),
            "unzip_into_vecs right ({ctx})"
        );

        let len = case.len;
        moves_in_order(len, 0..len, "collect_into_vec by value", &ctx, |items| {
            let (stale_drops, stale) = tracked(3);
            let mut target = stale;
            items.into_par_iter().collect_into_vec(&mut target);
            assert_dropped_once(&stale_drops, "collect_into_vec's old items", &ctx);
            target
        });
        if len > 0 {
            let target = case.rng.below(len);
            panics_on(len, target, "collect_into_vec", &ctx, |items, explode| {
                let mut out = Vec::new();
                items
                    .into_par_iter()
                    .inspect(explode)
                    .collect_into_vec(&mut out);
            });
            panics_on(len, target, "unzip_into_vecs", &ctx, |items, explode| {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                items
                    .into_par_iter()
                    .map(|item| {
                        explode(&item);
                        (item.id, item)
                    })
                    .unzip_into_vecs(&mut a, &mut b);
            });
        }
    });
}

#[test]
fn positions_and_zip_eq_against_std() {
    check("positions_and_zip_eq_against_std", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        let modulus = 1 + case.rng.below(10) as u32;
        let seq: Vec<usize> = (v.iter().enumerate())
            .filter(|(_, &x)| x % modulus == 0)
            .map(|(i, _)| i)
            .collect();
        let found: Vec<usize> = v.par_iter().positions(|&x| x % modulus == 0).collect();
        assert_eq!(found, seq, "positions ({ctx})");
        assert_eq!(
            v.par_iter().positions(|&x| x % modulus == 0).count(),
            seq.len(),
            "positions count ({ctx})"
        );
        for n in case.cuts() {
            let found: Vec<usize> = v
                .par_iter()
                .skip(n)
                .positions(|&x| x % modulus == 0)
                .collect();
            let seq: Vec<usize> = (v.iter().skip(n).enumerate())
                .filter(|(_, &x)| x % modulus == 0)
                .map(|(i, _)| i)
                .collect();
            assert_eq!(found, seq, "skip({n}) positions ({ctx})");
        }

        let w = case.values(10);
        assert_eq!(
            v.par_iter().zip_eq(w.par_iter().rev()).collect::<Vec<_>>(),
            v.iter().zip(w.iter().rev()).collect::<Vec<_>>(),
            "zip_eq ({ctx})"
        );
        let other = case.other_len();
        if other != v.len() {
            let message = panic_message(
                panic::catch_unwind(|| v.par_iter().zip_eq(0..other).count()),
                &ctx,
            );
            assert!(
                message.contains("zip_eq"),
                "zip_eq's panic: {message} ({ctx})"
            );
        }
    });
}

// ------------------------------------------------- weaving two iterators

/// `a` and `b` alternately, `a` first; the longer one's rest at the end.
fn interleaved<T: Clone>(a: &[T], b: &[T]) -> Vec<T> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    for i in 0..a.len().max(b.len()) {
        out.extend(a.get(i).cloned());
        out.extend(b.get(i).cloned());
    }
    out
}

/// `a` and `b` alternately, `a` first, until the side whose turn it is
/// has nothing left.
fn interleaved_shortest<T: Clone>(a: &[T], b: &[T]) -> Vec<T> {
    let mut b = b.iter();
    let mut out = Vec::new();
    for x in a {
        out.push(x.clone());
        let Some(y) = b.next() else { break };
        out.push(y.clone());
    }
    out
}

/// `separator` between each two of `items`.
fn interspersed<T: Clone>(items: &[T], separator: &T) -> Vec<T> {
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(separator.clone());
        }
        out.push(item.clone());
    }
    out
}

/// Runs `woven` whole and cut every way an indexed iterator is cut (by
/// `skip`, `take`, `rev`, `zip_eq`, and into pieces of at most `max`
/// items), against `expected`.
fn same_woven<I>(woven: impl Fn() -> I, expected: &[u32], max: usize, what: &str, ctx: &str)
where
    I: IndexedParallelIterator<Item = u32>,
{
    let len = expected.len();
    assert_eq!(woven().len(), len, "{what} len ({ctx})");
    assert_eq!(woven().collect::<Vec<_>>(), expected, "{what} ({ctx})");
    let pieces: Vec<u32> = woven().with_max_len(max).collect();
    assert_eq!(pieces, expected, "{what} in pieces of {max} ({ctx})");
    let reversed: Vec<u32> = woven().with_max_len(max).rev().collect();
    assert!(reversed.iter().rev().eq(expected), "{what} rev ({ctx})");
    assert!(
        woven()
            .zip_eq(0..len)
            .with_max_len(max)
            .all(|(x, i)| x == expected[i]),
        "{what} zip_eq ({ctx})"
    );
    for n in [0, 1, len / 3, len / 2 + 1, len.saturating_sub(1), len] {
        let cut: Vec<u32> = woven().skip(n).take(len / 2).collect();
        let seq: Vec<u32> = expected.iter().copied().skip(n).take(len / 2).collect();
        assert_eq!(cut, seq, "{what} skip({n}) take({}) ({ctx})", len / 2);
    }
}

#[test]
fn interleave_and_intersperse_against_std() {
    quiet_planned_panics();
    check("interleave_and_intersperse_against_std", |case| {
        let ctx = case.to_string();
        let a = case.values(1_000);
        let b = case.other_values(1_000);
        let max = 1 + case.rng.below(5);
        let pair = |a: &Vec<u32>, b: &Vec<u32>| (a.clone(), b.clone());

        let expected = interleaved(&a, &b);
        let woven = || {
            let (a, b) = pair(&a, &b);
            a.into_par_iter().interleave(b)
        };
        same_woven(woven, &expected, max, "interleave", &ctx);
        let expected = interleaved(&b, &a);
        same_woven(
            || b.par_iter().copied().interleave(a.par_iter().copied()),
            &expected,
            max,
            "interleave reversed",
            &ctx,
        );

        let expected = interleaved_shortest(&a, &b);
        let woven = || {
            a.par_iter()
                .copied()
                .interleave_shortest(b.par_iter().copied())
        };
        same_woven(woven, &expected, max, "interleave_shortest", &ctx);
        let expected = interleaved_shortest(&b, &a);
        let woven = || {
            b.par_iter()
                .copied()
                .interleave_shortest(a.par_iter().copied())
        };
        same_woven(woven, &expected, max, "interleave_shortest reversed", &ctx);

        let separator = 7_777;
        let expected = interspersed(&a, &separator);
        same_woven(
            || a.par_iter().copied().intersperse(separator),
            &expected,
            max,
            "intersperse",
            &ctx,
        );
        // Twice: separators of the first are the second's items.
        let expected = interspersed(&expected, &5_555);
        let twice = || {
            a.par_iter()
                .copied()
                .intersperse(separator)
                .intersperse(5_555)
        };
        same_woven(twice, &expected, max, "intersperse twice", &ctx);
        let words: Vec<String> = a.iter().map(u32::to_string).collect();
        let joined: String = words
            .par_iter()
            .map(String::as_str)
            .intersperse(";")
            .collect();
        assert_eq!(joined, words.join(";"), "intersperse into a String ({ctx})");

        // By value: each item once, in the woven order; what
        // interleave_shortest leaves is dropped unused.
        let len = case.len;
        let other = case.other_len();
        let ids: Vec<usize> = (0..len + other).collect();
        let (left_ids, right_ids) = ids.split_at(len);
        let expected = interleaved(left_ids, right_ids);
        moves_in_order(
            len + other,
            expected,
            "interleave by value",
            &ctx,
            |mut items| {
                let right = items.split_off(len);
                items
                    .into_par_iter()
                    .interleave(right)
                    .with_max_len(max)
                    .collect()
            },
        );
        let expected = interleaved_shortest(left_ids, right_ids);
        moves_in_order(
            len + other,
            expected,
            "interleave_shortest by value",
            &ctx,
            |mut items| {
                let right = items.split_off(len);
                items.into_par_iter().interleave_shortest(right).collect()
            },
        );
        if len + other > 0 {
            let target = case.rng.below(len + other);
            panics_on(
                len + other,
                target,
                "interleave",
                &ctx,
                |mut items, explode| {
                    let right = items.split_off(len);
                    items
                        .into_par_iter()
                        .interleave(right)
                        .with_max_len(max)
                        .for_each(|item| explode(&item));
                },
            );
        }
    });
}

// -------------------------------------------------------------- par_drain

#[test]
fn par_drain_moves_the_range_out_and_keeps_the_rest() {
    quiet_planned_panics();
    check("par_drain_moves_the_range_out_and_keeps_the_rest", |case| {
        let ctx = case.to_string();
        let len = case.len;
        let start = case.rng.below(len + 1);
        let end = start + case.rng.below(len - start + 1);
        let rest = || (0..start).chain(end..len).collect::<Vec<_>>();

        let v = case.values(1_000);
        let mut drained = v.clone();
        let out: Vec<u32> = drained.par_drain(start..end).collect();
        assert_eq!(out, v[start..end], "Vec par_drain ({ctx})");
        let kept: Vec<u32> = v[..start].iter().chain(&v[end..]).copied().collect();
        assert_eq!(drained, kept, "what the Vec keeps ({ctx})");
        let mut deque = wrapped_deque(v.clone(), case.rng.below(len + 1));
        let mut seq = deque.clone();
        let out: Vec<u32> = deque.par_drain(start..end).collect();
        let seq_out: Vec<u32> = seq.drain(start..end).collect();
        assert_eq!((out, deque), (seq_out, seq), "VecDeque par_drain ({ctx})");

        // By value: the range in order, the rest kept, each dropped once,
        // also when the loop stops early or is never run.
        let (drops, mut items) = tracked(len);
        let out: Vec<Tracked> = items.par_drain(start..end).collect();
        assert_eq!(
            ids(&out),
            (start..end).collect::<Vec<_>>(),
            "drained ids ({ctx})"
        );
        assert_eq!(ids(&items), rest(), "kept ids ({ctx})");
        drop((out, items));
        assert_dropped_once(&drops, "par_drain", &ctx);
        let (drops, mut items) = tracked(len);
        drop(items.par_drain(start..end));
        assert_eq!(ids(&items), rest(), "kept ids of an unused drain ({ctx})");
        drop(items);
        assert_dropped_once(&drops, "unused par_drain", &ctx);
        let (drops, mut items) = tracked(len);
        let found = items
            .par_drain(start..end)
            .find_any(|item| item.id % 3 == 0);
        assert_eq!(ids(&items), rest(), "kept ids after find_any ({ctx})");
        drop((found, items));
        assert_dropped_once(&drops, "par_drain find_any", &ctx);
        if start < end {
            let target = start + case.rng.below(end - start);
            let (drops, mut items) = tracked(len);
            let ran = panic::catch_unwind(AssertUnwindSafe(|| {
                items.par_drain(start..end).for_each(|item| {
                    if item.id == target {
                        panic::panic_any(Planned(target));
                    }
                });
            }));
            assert_eq!(planned(ran, "par_drain", &ctx), Planned(target), "{ctx}");
            assert_eq!(ids(&items), rest(), "kept ids after a panic ({ctx})");
            drop(items);
            assert_dropped_once(&drops, "par_drain panicking", &ctx);
        }
    });
}

#[test]
fn par_drain_of_a_string_and_bad_ranges() {
    let mut text = String::from("weft: añb→c");
    let seq: String = text.clone().drain(6..10).collect();
    let out: String = text.par_drain(6..10).collect();
    assert_eq!((out.as_str(), text.as_str()), (seq.as_str(), "weft: →c"));
    let mut v = vec![1, 2, 3];
    assert!(panic::catch_unwind(AssertUnwindSafe(|| v.par_drain(2..4).count())).is_err());
    #[allow(clippy::reversed_empty_ranges)]
    let backwards = 2..1;
    assert!(panic::catch_unwind(AssertUnwindSafe(|| v.par_drain(backwards).count())).is_err());
    assert_eq!(v, [1, 2, 3]);
}

// ------------------------------------- rayon's further adapters and consumers
//
// flatten, flatten_iter, reduce_with, collect_vec_list, the unordered
// take_any / skip_any / take_any_while / skip_any_while, panic_fuse and
// intersperse on unindexed iterators.

/// Whether `indices` strictly increase, each below `len`: the positions of
/// items that kept the input's order.
fn in_order(indices: &[usize], len: usize) -> bool {
    indices.windows(2).all(|w| w[0] < w[1]) && indices.iter().all(|&i| i < len)
}

#[test]
fn flatten_reduce_with_and_collect_vec_list_against_std() {
    quiet_planned_panics();
    check(
        "flatten_reduce_with_and_collect_vec_list_against_std",
        |case| {
            let ctx = case.to_string();
            let v = case.values(1_000);
            let nested: Vec<Vec<u32>> = v.iter().map(|&x| vec![x; x as usize % 4]).collect();
            let flat: Vec<u32> = nested.iter().flatten().copied().collect();

            let got: Vec<u32> = nested.clone().into_par_iter().flatten().collect();
            assert_eq!(got, flat, "flatten of Vecs ({ctx})");
            let got: Vec<u32> = nested.par_iter().flatten().copied().collect();
            assert_eq!(got, flat, "flatten of &Vecs ({ctx})");
            let got: Vec<u32> = nested.clone().into_par_iter().flatten_iter().collect();
            assert_eq!(got, flat, "flatten_iter ({ctx})");
            let ranges: Vec<std::ops::Range<u32>> = v.iter().map(|&x| 0..x % 5).collect();
            let got: Vec<u32> = ranges.clone().into_par_iter().flatten().collect();
            assert_eq!(
                got,
                ranges.iter().cloned().flatten().collect::<Vec<_>>(),
                "flatten ranges ({ctx})"
            );
            assert_eq!(
                nested.par_iter().flatten_iter().find_first(|&&x| x == 3),
                flat.iter().find(|&&x| x == 3),
                "flatten_iter find_first ({ctx})"
            );

            assert_eq!(
                v.par_iter().copied().reduce_with(u32::max),
                v.iter().copied().reduce(u32::max),
                "reduce_with max ({ctx})"
            );
            // Associative, not commutative: neighbours combine in order.
            let joined = v.par_iter().map(|&x| vec![x]).reduce_with(|mut a, b| {
                a.extend(b);
                a
            });
            assert_eq!(
                joined,
                (!v.is_empty()).then(|| v.clone()),
                "reduce_with concat ({ctx})"
            );
            assert_eq!(
                v.par_iter()
                    .filter(|&&x| x % 7 == 0)
                    .map(|&x| u64::from(x))
                    .reduce_with(|a, b| a + b),
                v.iter()
                    .filter(|&&x| x % 7 == 0)
                    .map(|&x| u64::from(x))
                    .reduce(|a, b| a + b),
                "filter reduce_with ({ctx})"
            );

            let list = v
                .par_iter()
                .copied()
                .filter(|x| x % 2 == 0)
                .collect_vec_list();
            assert!(
                list.iter().all(|piece| !piece.is_empty()),
                "no empty piece ({ctx})"
            );
            let got: Vec<u32> = list.into_iter().flatten().collect();
            let want: Vec<u32> = v.iter().copied().filter(|x| x % 2 == 0).collect();
            assert_eq!(got, want, "collect_vec_list ({ctx})");

            // By value: every item once, through each.
            let len = case.len;
            moves_in_order(len, 0..len, "flatten by value", &ctx, |items| {
                let nested: Vec<Vec<Tracked>> = items.into_iter().map(|item| vec![item]).collect();
                nested.into_par_iter().flatten().collect()
            });
            moves_in_order(len, 0..len, "collect_vec_list by value", &ctx, |items| {
                items
                    .into_par_iter()
                    .collect_vec_list()
                    .into_iter()
                    .flatten()
                    .collect()
            });
            let (drops, items) = tracked(len);
            let last = items
                .into_par_iter()
                .reduce_with(|a, b| if a.id > b.id { a } else { b });
            assert_eq!(
                last.as_ref().map(|item| item.id),
                len.checked_sub(1),
                "reduce_with by value ({ctx})"
            );
            drop(last);
            assert_dropped_once(&drops, "reduce_with by value", &ctx);
            if len > 0 {
                let target = case.rng.below(len);
                panics_on(len, target, "flatten", &ctx, |items, explode| {
                    let nested: Vec<Vec<Tracked>> =
                        items.into_iter().map(|item| vec![item]).collect();
                    nested
                        .into_par_iter()
                        .flatten()
                        .for_each(|item| explode(&item));
                });
                panics_on(len, target, "reduce_with", &ctx, |items, explode| {
                    items.into_par_iter().inspect(explode).reduce_with(|a, _| a);
                });
            }
        },
    );
}

#[test]
fn take_any_skip_any_and_their_while_forms() {
    quiet_planned_panics();
    check("take_any_skip_any_and_their_while_forms", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        let len = v.len();
        let evens = v.iter().filter(|&&x| x % 2 == 0).count();
        for n in case.cuts() {
            for unindexed in [false, true] {
                let pairs = || {
                    v.par_iter()
                        .copied()
                        .enumerate()
                        .filter(move |&(_, x)| !unindexed || x % 2 == 0)
                };
                let all = if unindexed { evens } else { len };
                let ctx = format!("n {n}, unindexed {unindexed}, {ctx}");
                let taken: Vec<(usize, u32)> = pairs().take_any(n).collect();
                let at: Vec<usize> = taken.iter().map(|&(i, _)| i).collect();
                assert_eq!(taken.len(), n.min(all), "take_any count ({ctx})");
                assert!(in_order(&at, len), "take_any order ({ctx})");
                assert!(
                    taken.iter().all(|&(i, x)| v[i] == x),
                    "take_any items ({ctx})"
                );
                let kept: Vec<(usize, u32)> = pairs().skip_any(n).collect();
                let at: Vec<usize> = kept.iter().map(|&(i, _)| i).collect();
                assert_eq!(kept.len(), all.saturating_sub(n), "skip_any count ({ctx})");
                assert!(in_order(&at, len), "skip_any order ({ctx})");
                assert_eq!(
                    pairs().take_any(n).count(),
                    n.min(all),
                    "take_any count() ({ctx})"
                );
            }
            // The predicate compares with a threshold: every item passes
            // (all taken, none left), none does, or some do.
            let bound = n.min(1_001) as u32;
            let taken: Vec<(usize, u32)> = v
                .par_iter()
                .copied()
                .enumerate()
                .take_any_while(|&(_, x)| x < bound)
                .collect();
            let at: Vec<usize> = taken.iter().map(|&(i, _)| i).collect();
            assert!(in_order(&at, len), "take_any_while order ({ctx})");
            assert!(
                taken.iter().all(|&(_, x)| x < bound),
                "take_any_while passes ({ctx})"
            );
            if v.iter().all(|&x| x < bound) {
                assert_eq!(taken.len(), len, "take_any_while of all ({ctx})");
            }
            let kept: Vec<(usize, u32)> = v
                .par_iter()
                .copied()
                .enumerate()
                .skip_any_while(|&(_, x)| x < bound)
                .collect();
            let at: Vec<usize> = kept.iter().map(|&(i, _)| i).collect();
            assert!(in_order(&at, len), "skip_any_while order ({ctx})");
            let failing = v.iter().filter(|&&x| x >= bound).count();
            assert!(
                kept.iter().filter(|&&(_, x)| x >= bound).count() == failing,
                "skip_any_while keeps every item that fails ({ctx})"
            );
            if failing == 0 {
                assert!(kept.is_empty(), "skip_any_while of all ({ctx})");
            }
            if failing == len {
                assert_eq!(kept.len(), len, "skip_any_while of none ({ctx})");
            }
        }

        // By value: what is taken, skipped or left is dropped once, also
        // when a closure panics.
        let n = case.rng.below(len + 2);
        let consume = |what: &str, run: &dyn Fn(Vec<Tracked>) -> Vec<Tracked>| {
            let (drops, items) = tracked(len);
            let out = run(items);
            let at = ids(&out);
            assert!(in_order(&at, len), "{what} order ({ctx})");
            drop(out);
            assert_dropped_once(&drops, what, &ctx);
        };
        consume("take_any", &|items| {
            items.into_par_iter().take_any(n).collect()
        });
        consume("skip_any", &|items| {
            items.into_par_iter().skip_any(n).collect()
        });
        consume("take_any_while", &|items| {
            items
                .into_par_iter()
                .take_any_while(|item| item.id < n)
                .collect()
        });
        consume("skip_any_while", &|items| {
            items
                .into_par_iter()
                .skip_any_while(|item| item.id < n)
                .collect()
        });
        consume("filter take_any", &|items| {
            items
                .into_par_iter()
                .filter(|item| item.id % 3 != 0)
                .take_any(n)
                .collect()
        });
        if len > 0 {
            let target = case.rng.below(len);
            panics_on(len, target, "take_any", &ctx, |items, explode| {
                items
                    .into_par_iter()
                    .take_any(len)
                    .for_each(|item| explode(&item));
            });
            panics_on(len, target, "skip_any", &ctx, |items, explode| {
                items
                    .into_par_iter()
                    .skip_any(0)
                    .for_each(|item| explode(&item));
            });
            panics_on(len, target, "take_any_while", &ctx, |items, explode| {
                items
                    .into_par_iter()
                    .take_any_while(|item| {
                        explode(item);
                        true
                    })
                    .for_each(drop);
            });
            panics_on(len, target, "skip_any_while", &ctx, |items, explode| {
                items
                    .into_par_iter()
                    .skip_any_while(|_| false)
                    .for_each(|item| explode(&item));
            });
        }
    });
}

#[test]
fn take_any_and_take_any_while_stop_the_work() {
    for &workers in &WORKERS {
        on(workers, || {
            let ctx = format!("len {EARLY_LEN}, workers {workers}");
            let seen = AtomicUsize::new(0);
            let count = |i: usize| {
                seen.fetch_add(1, Ordering::Relaxed);
                i
            };
            let taken = (0..EARLY_LEN)
                .into_par_iter()
                .map(count)
                .take_any(EARLY_MATCH)
                .count();
            assert_eq!(taken, EARLY_MATCH, "{ctx}");
            let saw = seen.swap(0, Ordering::Relaxed);
            assert!(saw < EARLY_LEN / 2, "take_any: {saw} items pulled ({ctx})");
            (0..EARLY_LEN)
                .into_par_iter()
                .map(count)
                .take_any_while(|&i| i % EARLY_MATCH != EARLY_MATCH - 1)
                .for_each(drop);
            let saw = seen.swap(0, Ordering::Relaxed);
            assert!(
                saw < EARLY_LEN / 2,
                "take_any_while: {saw} items pulled ({ctx})"
            );
        });
    }
}

#[test]
fn panic_fuse_keeps_the_items_and_stops_at_a_panic() {
    quiet_planned_panics();
    check("panic_fuse_keeps_the_items_and_stops_at_a_panic", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        let fused = || v.par_iter().copied().panic_fuse();
        assert_eq!(fused().len(), v.len(), "panic_fuse len ({ctx})");
        assert_eq!(fused().collect::<Vec<_>>(), v, "panic_fuse collect ({ctx})");
        assert!(
            fused().zip_eq(v.par_iter()).all(|(a, &b)| a == b),
            "panic_fuse zip_eq ({ctx})"
        );
        assert_eq!(
            fused().filter(|x| x % 3 == 0).count(),
            v.iter().filter(|&&x| x % 3 == 0).count(),
            "panic_fuse filter count ({ctx})"
        );
        let len = case.len;
        moves_in_order(len, 0..len, "panic_fuse by value", &ctx, |items| {
            items.into_par_iter().panic_fuse().collect()
        });
        if len > 0 {
            let target = case.rng.below(len);
            panics_on(len, target, "panic_fuse", &ctx, |items, explode| {
                items
                    .into_par_iter()
                    .panic_fuse()
                    .for_each(|item| explode(&item));
            });
            panics_on(len, target, "filter panic_fuse", &ctx, |items, explode| {
                let _: Vec<Tracked> = items
                    .into_par_iter()
                    .filter(|_| true)
                    .panic_fuse()
                    .inspect(explode)
                    .collect();
            });
        }
    });
    a_panic_stops_the_loop("panic_fuse", |hit| {
        (0..PANIC_LEN).into_par_iter().panic_fuse().for_each(hit);
    });
}

#[test]
fn intersperse_of_unindexed_iterators_against_std() {
    quiet_planned_panics();
    check("intersperse_of_unindexed_iterators_against_std", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        let max = 1 + case.rng.below(5);
        let kept: Vec<u32> = v.iter().copied().filter(|x| x % 3 == 0).collect();
        let expected = interspersed(&kept, &7_777);
        let woven = || {
            v.par_iter()
                .copied()
                .filter(|x| x % 3 == 0)
                .intersperse(7_777)
        };
        assert_eq!(
            woven().collect::<Vec<_>>(),
            expected,
            "filter intersperse ({ctx})"
        );
        let pieces: Vec<u32> = v
            .par_iter()
            .copied()
            .with_max_len(max)
            .filter(|x| x % 3 == 0)
            .intersperse(7_777)
            .collect();
        assert_eq!(
            pieces, expected,
            "filter intersperse in pieces of {max} ({ctx})"
        );
        assert_eq!(
            woven().count(),
            expected.len(),
            "filter intersperse count ({ctx})"
        );
        assert_eq!(
            woven().find_first(|&x| x == 7_777),
            expected.iter().copied().find(|&x| x == 7_777),
            "filter intersperse find_first ({ctx})"
        );
        // Pieces that yield nothing on either side of those that do.
        let sparse = v
            .par_iter()
            .copied()
            .with_max_len(max)
            .filter(|&x| x == 1)
            .intersperse(0);
        let ones = v.iter().filter(|&&x| x == 1).count();
        assert_eq!(
            sparse.collect::<Vec<_>>(),
            interspersed(&vec![1; ones], &0),
            "sparse filter intersperse ({ctx})"
        );
        let nested: Vec<u32> = v.iter().flat_map(|&x| 0..x % 3).collect();
        assert_eq!(
            v.par_iter()
                .flat_map_iter(|&x| 0..x % 3)
                .intersperse(9)
                .collect::<Vec<_>>(),
            interspersed(&nested, &9),
            "flat_map_iter intersperse ({ctx})"
        );
        // By value (shared, as the separator is cloned): each once.
        let len = case.len;
        let (drops, items) = tracked(len + 1);
        let mut items: Vec<Arc<Tracked>> = items.into_iter().map(Arc::new).collect();
        let separator = items.pop().expect("the separator");
        let out: Vec<Arc<Tracked>> = items
            .into_par_iter()
            .filter(|item| item.id % 2 == 0)
            .intersperse(separator)
            .collect();
        let out_ids: Vec<usize> = out.iter().map(|item| item.id).collect();
        let evens: Vec<usize> = (0..len).filter(|id| id % 2 == 0).collect();
        assert_eq!(
            out_ids,
            interspersed(&evens, &len),
            "intersperse by value ({ctx})"
        );
        drop(out);
        assert_dropped_once(&drops, "intersperse by value", &ctx);
        if len > 0 {
            let target = case.rng.below(len);
            let (drops, items) = tracked(len + 1);
            let mut items: Vec<Arc<Tracked>> = items.into_iter().map(Arc::new).collect();
            let separator = items.pop().expect("the separator");
            let result = panic::catch_unwind(AssertUnwindSafe(|| {
                items
                    .into_par_iter()
                    .filter(|item| {
                        if item.id == target {
                            panic::panic_any(Planned(target));
                        }
                        true
                    })
                    .intersperse(separator)
                    .count()
            }));
            assert_eq!(
                planned(result, "intersperse", &ctx),
                Planned(target),
                "{ctx}"
            );
            assert_dropped_once(&drops, "intersperse panicking", &ctx);
        }
    });
}

// ------------------------ comparisons, fold_chunks, by_*_blocks (indexed)

// Tracked items compare by id, so that comparisons can run by value.
impl PartialEq for Tracked {
    fn eq(&self, other: &Tracked) -> bool {
        self.id == other.id
    }
}

impl Eq for Tracked {}

impl PartialOrd for Tracked {
    fn partial_cmp(&self, other: &Tracked) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Tracked {
    fn cmp(&self, other: &Tracked) -> std::cmp::Ordering {
        self.id.cmp(&other.id)
    }
}

#[test]
fn comparisons_against_std() {
    #![allow(deprecated)]
    check("comparisons_against_std", |case| {
        let ctx = case.to_string();
        // Few values, so that long equal prefixes are common.
        let a = case.values(3);
        let mut changed = a.clone();
        if !changed.is_empty() {
            let at = case.rng.below(changed.len());
            changed[at] = 3 - changed[at].min(3);
        }
        let cut = case.rng.below(a.len() + 1);
        let others = [
            a.clone(),
            a[..cut].to_vec(),
            changed,
            case.other_values(3),
            [a.clone(), vec![0]].concat(),
        ];
        for b in &others {
            let ctx = format!("b of len {}, {ctx}", b.len());
            assert_eq!(a.par_iter().cmp(b), a.iter().cmp(b.iter()), "cmp ({ctx})");
            assert_eq!(
                a.par_iter().partial_cmp(b),
                a.iter().partial_cmp(b.iter()),
                "partial_cmp ({ctx})"
            );
            assert_eq!(a.par_iter().eq(b), a.iter().eq(b.iter()), "eq ({ctx})");
            assert_eq!(a.par_iter().ne(b), a.iter().ne(b.iter()), "ne ({ctx})");
            assert_eq!(a.par_iter().lt(b), a.iter().lt(b.iter()), "lt ({ctx})");
            assert_eq!(a.par_iter().le(b), a.iter().le(b.iter()), "le ({ctx})");
            assert_eq!(a.par_iter().gt(b), a.iter().gt(b.iter()), "gt ({ctx})");
            assert_eq!(a.par_iter().ge(b), a.iter().ge(b.iter()), "ge ({ctx})");
            let by_value = a.clone().into_par_iter().cmp(b.clone());
            assert_eq!(by_value, a.iter().cmp(b.iter()), "cmp by value ({ctx})");
        }
        // Unordered pairs: a NaN decides where it is first met.
        let mut x: Vec<f64> = a.iter().map(|&v| f64::from(v)).collect();
        let y = x.clone();
        if !x.is_empty() {
            let at = case.rng.below(x.len());
            x[at] = f64::NAN;
        }
        assert_eq!(
            x.par_iter().partial_cmp(&y),
            x.iter().partial_cmp(y.iter()),
            "NaN ({ctx})"
        );
        assert_eq!(x.par_iter().lt(&y), x.iter().lt(y.iter()), "NaN lt ({ctx})");
        assert_eq!(x.par_iter().ge(&y), x.iter().ge(y.iter()), "NaN ge ({ctx})");
        // The deprecated names forward to the `_any` searches.
        assert_eq!(
            a.par_iter().find(|&&v| v == 2).is_some(),
            a.contains(&2),
            "find ({ctx})"
        );
        let at = a.par_iter().position(|&v| v == 2);
        assert!(at.is_none_or(|i| a[i] == 2), "position ({ctx})");

        // By value: the longer side's extra items and what the comparison
        // did not look at are dropped once.
        let len = case.len;
        let split = case.rng.below(len + 1);
        let (drops, mut items) = tracked(len);
        let right = items.split_off(split);
        let order = items.into_par_iter().cmp(right);
        // The first pair decides, ids 0 and `split`, unless a side is empty.
        let expected = if split > 0 && len > split {
            std::cmp::Ordering::Less
        } else {
            split.cmp(&(len - split))
        };
        assert_eq!(order, expected, "cmp by value ({ctx})");
        assert_dropped_once(&drops, "cmp by value", &ctx);
        let (drops, items) = tracked(len);
        let (drops_b, others) = tracked(len);
        assert!(items.into_par_iter().eq(others), "eq by value ({ctx})");
        assert_dropped_once(&drops, "eq by value", &ctx);
        assert_dropped_once(&drops_b, "eq by value, other side", &ctx);
    });
}

#[test]
fn fold_chunks_and_fold_chunks_with_against_std() {
    quiet_planned_panics();
    check("fold_chunks_and_fold_chunks_with_against_std", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        let len = v.len();
        let max = 1 + case.rng.below(5);
        let random = 1 + case.rng.below(len + 3);
        for size in [1, 2, 3, len.max(1), len + 1, random] {
            let ctx = format!("size {size}, {ctx}");
            // Not commutative: each chunk's items must come in order.
            let hash = |acc: u64, x: &u32| acc.wrapping_mul(31).wrapping_add(u64::from(*x));
            let expected: Vec<u64> = v.chunks(size).map(|c| c.iter().fold(7, hash)).collect();
            let folded = || v.par_iter().fold_chunks(size, || 7u64, hash);
            assert_eq!(folded().len(), expected.len(), "fold_chunks len ({ctx})");
            assert_eq!(
                folded().collect::<Vec<_>>(),
                expected,
                "fold_chunks ({ctx})"
            );
            let pieces: Vec<u64> = folded().with_max_len(max).collect();
            assert_eq!(pieces, expected, "fold_chunks in pieces of {max} ({ctx})");
            let reversed: Vec<u64> = folded().rev().collect();
            assert!(
                reversed.iter().rev().eq(&expected),
                "fold_chunks rev ({ctx})"
            );
            let skipped: Vec<u64> = folded().skip(1).collect();
            assert_eq!(
                skipped,
                expected.get(1..).unwrap_or(&[]),
                "fold_chunks skip ({ctx})"
            );
            let with: Vec<Vec<u32>> = v
                .par_iter()
                .fold_chunks_with(size, Vec::new(), |mut chunk, &x| {
                    chunk.push(x);
                    chunk
                })
                .collect();
            let chunks: Vec<Vec<u32>> = v.chunks(size).map(<[u32]>::to_vec).collect();
            assert_eq!(with, chunks, "fold_chunks_with ({ctx})");
            let inner: Vec<u64> = (0..2u32)
                .into_par_iter()
                .flat_map(|_| v.par_iter().fold_chunks(size, || 7u64, hash))
                .collect();
            assert_eq!(
                inner,
                [expected.clone(), expected].concat(),
                "inner fold_chunks ({ctx})"
            );
        }

        // By value: each item once, in its chunk, also when one panics.
        let size = 1 + case.rng.below(len + 2);
        moves_in_order(
            case.len,
            0..case.len,
            "fold_chunks by value",
            &ctx,
            |items| {
                let chunks: Vec<Vec<Tracked>> = items
                    .into_par_iter()
                    .fold_chunks(size, Vec::new, |mut chunk, item| {
                        chunk.push(item);
                        chunk
                    })
                    .collect();
                assert!(
                    chunks.iter().all(|c| c.len() <= size),
                    "chunk sizes ({ctx})"
                );
                chunks.into_iter().flatten().collect()
            },
        );
        if case.len > 0 {
            let target = case.rng.below(case.len);
            panics_on(case.len, target, "fold_chunks", &ctx, |items, explode| {
                let _: usize = items
                    .into_par_iter()
                    .fold_chunks(
                        size,
                        || 0,
                        |count, item| {
                            explode(&item);
                            count + 1
                        },
                    )
                    .sum();
            });
        }
    });
    let zero = panic::catch_unwind(|| {
        (0..3)
            .into_par_iter()
            .fold_chunks(0, || 0, |a, x| a + x)
            .count()
    });
    assert!(zero.is_err(), "fold_chunks(0, ..) panics");
    let zero = panic::catch_unwind(|| {
        (0..3)
            .into_par_iter()
            .fold_chunks_with(0, 0, |a, x| a + x)
            .count()
    });
    assert!(zero.is_err(), "fold_chunks_with(0, ..) panics");
}

#[test]
fn by_uniform_and_exponential_blocks_against_std() {
    quiet_planned_panics();
    check("by_uniform_and_exponential_blocks_against_std", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        let len = v.len();
        let size = 1 + case.rng.below(len + 2);
        let target = case.rng.below(1_000) as u32;
        for uniform in [true, false] {
            let ctx = format!("uniform {uniform}, size {size}, {ctx}");
            let blocks = || {
                let items = v.par_iter().copied();
                if uniform {
                    items.by_uniform_blocks(size)
                } else {
                    items.by_exponential_blocks()
                }
            };
            assert_eq!(blocks().collect::<Vec<_>>(), v, "collect ({ctx})");
            // Indexed, unlike rayon's: zipped, enumerated and reversed,
            // the blocks count the outer iterator's items.
            assert!(
                blocks().zip_eq(v.par_iter()).all(|(a, &b)| a == b),
                "zip_eq ({ctx})"
            );
            let reversed: Vec<u32> = blocks().rev().collect();
            assert!(reversed.iter().rev().eq(&v), "rev ({ctx})");
            assert_eq!(
                blocks().enumerate().filter(|&(i, x)| v[i] == x).count(),
                len,
                "enumerate ({ctx})"
            );
            assert_eq!(
                blocks().map(u64::from).sum::<u64>(),
                v.iter().map(|&x| u64::from(x)).sum::<u64>(),
                "sum ({ctx})"
            );
            assert_eq!(
                blocks().find_first(|&x| x == target),
                v.iter().copied().find(|&x| x == target),
                "find_first ({ctx})"
            );
            assert_eq!(
                blocks().find_last(|&x| x == target),
                v.iter().copied().rfind(|&x| x == target),
                "find_last ({ctx})"
            );
            assert_eq!(
                blocks().any(|x| x == target),
                v.contains(&target),
                "any ({ctx})"
            );
            assert_eq!(
                blocks().filter(|x| x % 2 == 0).count(),
                v.iter().filter(|&&x| x % 2 == 0).count(),
                "filter count ({ctx})"
            );
        }
        // No fold spans two uniform blocks: each folds a run of indices
        // inside one block.
        let runs: Vec<(usize, usize)> = (0..len)
            .into_par_iter()
            .by_uniform_blocks(size)
            .fold(
                || None,
                |run: Option<(usize, usize)>, i| Some((run.map_or(i, |r| r.0), i)),
            )
            .flatten_iter()
            .collect();
        assert!(
            runs.iter()
                .all(|&(first, last)| first / size == last / size),
            "a fold across blocks: {runs:?} ({ctx})"
        );
        assert_eq!(
            runs.iter()
                .map(|&(first, last)| last - first + 1)
                .sum::<usize>(),
            len,
            "every index folded ({ctx})"
        );

        // By value: each once, also when a search stops or a closure panics.
        let n = case.len;
        moves_in_order(n, 0..n, "by_uniform_blocks by value", &ctx, |items| {
            items.into_par_iter().by_uniform_blocks(size).collect()
        });
        let (drops, items) = tracked(n);
        let found = items
            .into_par_iter()
            .by_exponential_blocks()
            .find_first(|item| item.id % 5 == 4);
        assert_eq!(
            found.as_ref().map(|item| item.id),
            (n > 4).then_some(4),
            "find_first ({ctx})"
        );
        drop(found);
        assert_dropped_once(&drops, "by_exponential_blocks find_first", &ctx);
        if n > 0 {
            let target = case.rng.below(n);
            panics_on(n, target, "by_uniform_blocks", &ctx, |items, explode| {
                items
                    .into_par_iter()
                    .by_uniform_blocks(size)
                    .for_each(|item| explode(&item));
            });
        }
    });
    let zero = panic::catch_unwind(|| (0..3).into_par_iter().by_uniform_blocks(0).count());
    assert!(zero.is_err(), "by_uniform_blocks(0) panics");
}

#[test]
fn blocks_stop_a_search_after_the_block_of_its_answer() {
    for &workers in &WORKERS {
        on(workers, || {
            let ctx = format!("len {EARLY_LEN}, match at {EARLY_MATCH}, workers {workers}");
            let seen = AtomicUsize::new(0);
            let saw = |i: &usize| {
                seen.fetch_add(1, Ordering::Relaxed);
                *i == EARLY_MATCH
            };
            let block = 10 * EARLY_MATCH;
            let found = (0..EARLY_LEN)
                .into_par_iter()
                .by_uniform_blocks(block)
                .find_first(saw);
            assert_eq!(found, Some(EARLY_MATCH), "{ctx}");
            let count = seen.swap(0, Ordering::Relaxed);
            assert!(
                count <= block,
                "uniform find_first: {count} items seen ({ctx})"
            );
            assert!(
                (0..EARLY_LEN)
                    .into_par_iter()
                    .by_uniform_blocks(block)
                    .any(|i| saw(&i)),
                "{ctx}"
            );
            let count = seen.swap(0, Ordering::Relaxed);
            assert!(count <= block, "uniform any: {count} items seen ({ctx})");
            let found = (0..EARLY_LEN)
                .into_par_iter()
                .by_exponential_blocks()
                .find_first(saw);
            assert_eq!(found, Some(EARLY_MATCH), "{ctx}");
            // The block that holds the match ends before twice its index
            // plus a block of one item per worker.
            let count = seen.swap(0, Ordering::Relaxed);
            let bound = 2 * (EARLY_MATCH + weft::current_num_threads());
            assert!(
                count <= bound,
                "exponential find_first: {count} items seen ({ctx})"
            );
        });
    }
}

// ---------------------------- rayon's collections: collect, extend, drain

#[test]
fn collect_and_extend_every_collection_rayon_has() {
    check("collect_and_extend_every_collection_rayon_has", |case| {
        use std::borrow::Cow;
        use std::collections::BinaryHeap;
        use std::ffi::{OsStr, OsString};
        use std::rc::Rc;

        let ctx = case.to_string();
        let v = case.values(1_000);
        let odd = || v.par_iter().copied().filter(|x| x % 2 == 1);
        let odds: Vec<u32> = v.iter().copied().filter(|x| x % 2 == 1).collect();

        let heap: BinaryHeap<u32> = odd().collect();
        assert_eq!(
            heap.into_sorted_vec(),
            sorted(odds.clone()),
            "BinaryHeap ({ctx})"
        );
        assert_eq!(
            &*v.par_iter().copied().collect::<Box<[u32]>>(),
            &v[..],
            "Box<[T]> ({ctx})"
        );
        assert_eq!(&*odd().collect::<Rc<[u32]>>(), &odds[..], "Rc<[T]> ({ctx})");
        assert_eq!(
            &*odd().collect::<Arc<[u32]>>(),
            &odds[..],
            "Arc<[T]> ({ctx})"
        );
        let cow: Cow<'_, [u32]> = odd().collect();
        assert_eq!(&*cow, &odds[..], "Cow<[T]> ({ctx})");

        let words: Vec<String> = v.iter().map(u32::to_string).collect();
        let text = words.concat();
        let chars: Vec<char> = text.chars().collect();
        assert_eq!(
            chars.par_iter().collect::<String>(),
            text,
            "String from &char ({ctx})"
        );
        let boxed: Vec<Box<str>> = words.iter().map(|w| w.as_str().into()).collect();
        assert_eq!(
            boxed.par_iter().cloned().collect::<String>(),
            text,
            "from Box<str> ({ctx})"
        );
        let cows = || words.par_iter().map(|w| Cow::Borrowed(w.as_str()));
        assert_eq!(
            cows().collect::<String>(),
            text,
            "String from Cow<str> ({ctx})"
        );
        assert_eq!(
            &*chars.par_iter().copied().collect::<Box<str>>(),
            text,
            "Box<str> ({ctx})"
        );
        assert_eq!(
            &*cows().collect::<Box<str>>(),
            text,
            "Box<str> from Cow ({ctx})"
        );
        let os: Vec<OsString> = words.iter().map(OsString::from).collect();
        let os_text = OsString::from(&text);
        assert_eq!(
            os.par_iter().cloned().collect::<OsString>(),
            os_text,
            "OsString ({ctx})"
        );
        let os_strs = || os.par_iter().map(OsString::as_os_str);
        assert_eq!(
            os_strs().collect::<OsString>(),
            os_text,
            "OsString from &OsStr ({ctx})"
        );
        let os_cows = os_strs().map(Cow::Borrowed::<OsStr>).collect::<OsString>();
        assert_eq!(os_cows, os_text, "OsString from Cow<OsStr> ({ctx})");

        // Option and Result: the first None or Err decides.
        let missing = case.rng.below(1_200) as u32;
        let options = || v.par_iter().map(|&x| (x != missing).then_some(x));
        let seq: Option<Vec<u32>> = v.iter().map(|&x| (x != missing).then_some(x)).collect();
        assert_eq!(
            options().collect::<Option<Vec<u32>>>(),
            seq,
            "Option<Vec> ({ctx})"
        );
        let results = || {
            v.par_iter()
                .map(|&x| if x == missing { Err(x) } else { Ok(x) })
        };
        let seq: Result<Vec<u32>, u32> = v
            .iter()
            .map(|&x| if x == missing { Err(x) } else { Ok(x) })
            .collect();
        assert_eq!(
            results().collect::<Result<Vec<u32>, u32>>(),
            seq,
            "Result<Vec> ({ctx})"
        );
        let seq: Result<(), u32> =
            v.iter()
                .try_for_each(|&x| if x == missing { Err(x) } else { Ok(()) });
        let par: Result<(), u32> = results().map(|r| r.map(drop)).collect();
        assert_eq!(par, seq, "Result<()> ({ctx})");

        // Pairs and Eithers, nested.
        let pairs = || v.par_iter().map(|&x| (x, x % 7));
        let (a, b): (Vec<u32>, Vec<u32>) = pairs().collect();
        assert_eq!(
            (a, b),
            v.iter().map(|&x| (x, x % 7)).unzip(),
            "pairs ({ctx})"
        );
        let sides = || {
            v.par_iter().map(|&x| {
                if x % 3 == 0 {
                    Either::Left(x)
                } else {
                    Either::Right(x)
                }
            })
        };
        let (threes, others): (Vec<u32>, Vec<u32>) = sides().collect();
        let seq: (Vec<u32>, Vec<u32>) = v.iter().partition(|&&x| x % 3 == 0);
        assert_eq!((threes, others), seq, "Eithers ({ctx})");
        let (all, (threes, others)): (Vec<u32>, (Vec<u32>, Vec<u32>)) = v
            .par_iter()
            .zip(sides())
            .map(|(&x, side)| (x, side))
            .collect();
        assert_eq!(
            (all, (threes, others)),
            (v.clone(), seq.clone()),
            "nested ({ctx})"
        );

        // Extending, by reference and by value, onto what was there.
        let start: Vec<u32> = vec![5_000, 5_001];
        let mut vec = start.clone();
        vec.par_extend(&v);
        assert_eq!(
            vec,
            [start.clone(), v.clone()].concat(),
            "Vec extend &T ({ctx})"
        );
        let mut deque: VecDeque<u32> = start.iter().copied().collect();
        deque.par_extend(v.par_iter());
        assert!(deque.iter().eq(vec.iter()), "VecDeque extend &T ({ctx})");
        let mut list: LinkedList<u32> = start.iter().copied().collect();
        list.par_extend(v.par_iter());
        assert!(list.iter().eq(vec.iter()), "LinkedList extend &T ({ctx})");
        let mut heap: BinaryHeap<u32> = start.iter().copied().collect();
        heap.par_extend(v.par_iter());
        assert_eq!(
            heap.into_sorted_vec(),
            sorted(vec.clone()),
            "BinaryHeap extend &T ({ctx})"
        );
        let mut set: BTreeSet<u32> = start.iter().copied().collect();
        set.par_extend(v.par_iter());
        assert!(
            set.iter().eq(vec.iter().collect::<BTreeSet<_>>()),
            "BTreeSet extend &T ({ctx})"
        );
        let mut hashed: HashSet<u32> = HashSet::new();
        hashed.par_extend(v.par_iter());
        assert_eq!(
            hashed,
            v.iter().copied().collect(),
            "HashSet extend &T ({ctx})"
        );
        let entries: Vec<(u32, usize)> = v.iter().enumerate().map(|(i, &x)| (x, i)).collect();
        let mut tree: BTreeMap<u32, usize> = BTreeMap::new();
        tree.par_extend(entries.par_iter().map(|(k, i)| (k, i)));
        assert_eq!(
            tree,
            entries.iter().copied().collect(),
            "BTreeMap extend refs ({ctx})"
        );
        let mut map: HashMap<u32, usize> = HashMap::new();
        map.par_extend(entries.par_iter().map(|(k, i)| (k, i)));
        assert_eq!(
            map,
            entries.iter().copied().collect(),
            "HashMap extend refs ({ctx})"
        );
        let mut both = (vec![1u32], vec![2u32]);
        both.par_extend(pairs());
        let (mut a, mut b) = (vec![1u32], vec![2u32]);
        for (x, y) in v.iter().map(|&x| (x, x % 7)) {
            a.push(x);
            b.push(y);
        }
        assert_eq!(both, (a, b), "pairs extend ({ctx})");
        let mut split = (vec![1u32], VecDeque::from([2u32]));
        split.par_extend(sides());
        assert_eq!(split.0[1..], seq.0[..], "Either extend, left ({ctx})");
        assert!(
            split.1.iter().skip(1).eq(seq.1.iter()),
            "Either extend, right ({ctx})"
        );
        let mut either: Either<Vec<u32>, LinkedList<u32>> = Either::Right(LinkedList::new());
        either.par_extend(odd());
        assert!(
            matches!(&either, Either::Right(l) if l.iter().eq(odds.iter())),
            "Either ({ctx})"
        );
        let mut string = String::from("<");
        string.par_extend(chars.par_iter());
        string.par_extend(boxed.par_iter().cloned());
        string.par_extend(cows());
        assert_eq!(
            string,
            format!("<{text}{text}{text}"),
            "String extends ({ctx})"
        );
        let mut os_string = OsString::from("<");
        os_string.par_extend(os_strs());
        os_string.par_extend(os.par_iter().cloned());
        os_string.par_extend(os_strs().map(Cow::Borrowed::<OsStr>));
        let mut expected = OsString::from("<");
        for _ in 0..3 {
            expected.push(&os_text);
        }
        assert_eq!(os_string, expected, "OsString extends ({ctx})");
        let ran = AtomicUsize::new(0);
        ().par_extend(v.par_iter().map(|_| {
            ran.fetch_add(1, Ordering::Relaxed);
        }));
        assert_eq!(ran.into_inner(), v.len(), "() extend ({ctx})");

        // By value: a None or an Err stops the rest, and every item is
        // dropped once, the one returned too.
        let len = case.len;
        let target = case.rng.below(len + 1);
        let (drops, items) = tracked(len);
        let collected: Option<Vec<Tracked>> = items
            .into_par_iter()
            .map(|item| (item.id != target).then_some(item))
            .collect();
        assert_eq!(
            collected.is_some(),
            target == len,
            "Option by value ({ctx})"
        );
        drop(collected);
        assert_dropped_once(&drops, "Option by value", &ctx);
        let (drops, items) = tracked(len);
        let collected: Result<Vec<Tracked>, Tracked> = items
            .into_par_iter()
            .map(|item| {
                if item.id % 3 == 2 {
                    Err(item)
                } else {
                    Ok(item)
                }
            })
            .collect();
        match &collected {
            Ok(all) => assert_eq!(ids(all), (0..len).collect::<Vec<_>>(), "Ok ({ctx})"),
            Err(item) => assert_eq!(item.id % 3, 2, "Err by value ({ctx})"),
        }
        drop(collected);
        assert_dropped_once(&drops, "Result by value", &ctx);
        let (drops, items) = tracked(len);
        let (lefts, rights): (Vec<Tracked>, Vec<Tracked>) = items
            .into_par_iter()
            .map(|item| {
                if item.id % 2 == 0 {
                    Either::Left(item)
                } else {
                    Either::Right(item)
                }
            })
            .collect();
        assert!(
            lefts.iter().all(|item| item.id % 2 == 0),
            "Either by value ({ctx})"
        );
        assert_eq!(lefts.len() + rights.len(), len, "Either by value ({ctx})");
        drop((lefts, rights));
        assert_dropped_once(&drops, "Either by value", &ctx);
    });
}

#[test]
fn par_drain_of_whole_collections() {
    check("par_drain_of_whole_collections", |case| {
        use std::collections::BinaryHeap;

        let ctx = case.to_string();
        let v = case.values(1_000);
        let mut map: HashMap<usize, u32> = v.iter().copied().enumerate().collect();
        let mut drained: Vec<(usize, u32)> = map.par_drain().collect();
        drained.sort_unstable();
        assert_eq!(
            drained,
            v.iter().copied().enumerate().collect::<Vec<_>>(),
            "HashMap ({ctx})"
        );
        assert!(map.is_empty(), "HashMap left empty ({ctx})");
        let mut set: HashSet<u32> = v.iter().copied().collect();
        let expected = sorted(set.iter().copied().collect());
        assert_eq!(
            sorted(set.par_drain().collect()),
            expected,
            "HashSet ({ctx})"
        );
        assert!(set.is_empty(), "HashSet left empty ({ctx})");
        let mut heap: BinaryHeap<u32> = v.iter().copied().collect();
        assert_eq!(
            heap.par_drain().map(u64::from).sum::<u64>(),
            v.iter().map(|&x| u64::from(x)).sum::<u64>(),
            "BinaryHeap ({ctx})"
        );
        assert!(heap.is_empty(), "BinaryHeap left empty ({ctx})");

        // By value: each once, drained whole even when unused or stopped.
        let len = case.len;
        let (drops, items) = tracked(len);
        let mut heap: BinaryHeap<Tracked> = items.into_iter().collect();
        let out: Vec<Tracked> = heap.par_drain().collect();
        assert_eq!(
            sorted(ids(&out)),
            (0..len).collect::<Vec<_>>(),
            "drained ids ({ctx})"
        );
        drop(out);
        assert!(heap.is_empty(), "{ctx}");
        assert_dropped_once(&drops, "BinaryHeap par_drain", &ctx);
        let (drops, items) = tracked(len);
        let mut heap: BinaryHeap<Tracked> = items.into_iter().collect();
        drop(heap.par_drain());
        assert!(heap.is_empty(), "unused par_drain empties ({ctx})");
        let found = heap.par_drain().find_any(|item| item.id == 0);
        assert!(found.is_none(), "{ctx}");
        assert_dropped_once(&drops, "unused BinaryHeap par_drain", &ctx);
    });
}

#[test]
fn either_of_two_iterators_runs_as_the_one_it_holds() {
    quiet_planned_panics();
    check("either_of_two_iterators_runs_as_the_one_it_holds", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        let odds: Vec<u32> = v.iter().copied().filter(|x| x % 2 == 1).collect();
        let indexed = |left: bool| {
            if left {
                Either::Left(v.par_iter().copied())
            } else {
                Either::Right(v.par_iter().copied().rev())
            }
        };
        let reversed: Vec<u32> = v.iter().rev().copied().collect();
        assert_eq!(indexed(true).collect::<Vec<_>>(), v, "Left ({ctx})");
        assert_eq!(
            indexed(false).collect::<Vec<_>>(),
            reversed,
            "Right ({ctx})"
        );
        assert_eq!(indexed(false).len(), v.len(), "len ({ctx})");
        assert!(
            indexed(true).zip_eq(v.par_iter()).all(|(a, &b)| a == b),
            "zip_eq ({ctx})"
        );
        let unindexed = |left: bool| {
            if left {
                Either::Left(v.par_iter().copied().filter(|x| x % 2 == 1))
            } else {
                Either::Right(
                    v.par_iter()
                        .copied()
                        .flat_map_iter(|x| (x % 2 == 1).then_some(x)),
                )
            }
        };
        for left in [true, false] {
            assert_eq!(
                unindexed(left).collect::<Vec<_>>(),
                odds,
                "unindexed {left} ({ctx})"
            );
        }
        let nested: Vec<u32> = (0..3u32)
            .into_par_iter()
            .flat_map(|i| indexed(i % 2 == 0))
            .collect();
        assert_eq!(
            nested,
            [v.clone(), reversed, v.clone()].concat(),
            "inner ({ctx})"
        );

        let len = case.len;
        for left in [true, false] {
            moves_in_order(len, 0..len, "Either by value", &ctx, |items| {
                let iter = if left {
                    Either::Left(items.into_par_iter())
                } else {
                    Either::Right(items.into_par_iter().filter(|_| true))
                };
                iter.collect()
            });
        }
        if len > 0 {
            let target = case.rng.below(len);
            panics_on(len, target, "Either", &ctx, |items, explode| {
                let iter: Either<_, weft::iter::Empty<Tracked>> =
                    Either::Left(items.into_par_iter());
                iter.for_each(|item| explode(&item));
            });
        }
    });
}

// ------------------------------- more sources: rayon 1.12's whole surface

#[test]
fn str_splits_matches_and_utf16_against_std() {
    check("str_splits_matches_and_utf16_against_std", |case| {
        let ctx = case.to_string();
        let text = text(case);
        let text = text.as_str();
        let separators: &[char] = &[';', '𝄞'];
        let array = [',', '€'];
        assert_eq!(
            text.par_split_inclusive(',').collect::<Vec<_>>(),
            text.split_inclusive(',').collect::<Vec<_>>(),
            "par_split_inclusive char ({ctx})"
        );
        assert_eq!(
            text.par_split_inclusive(separators).collect::<Vec<_>>(),
            text.split_inclusive(separators).collect::<Vec<_>>(),
            "par_split_inclusive slice ({ctx})"
        );
        assert_eq!(
            text.par_split(&array).collect::<Vec<_>>(),
            text.split(&array).collect::<Vec<_>>(),
            "par_split &[char; N] ({ctx})"
        );
        assert_eq!(
            text.par_matches(char::is_whitespace).collect::<Vec<_>>(),
            text.matches(char::is_whitespace).collect::<Vec<_>>(),
            "par_matches predicate ({ctx})"
        );
        assert_eq!(
            text.par_matches(&array).collect::<Vec<_>>(),
            text.matches(&array).collect::<Vec<_>>(),
            "par_matches &[char; N] ({ctx})"
        );
        assert_eq!(
            text.par_match_indices(separators).collect::<Vec<_>>(),
            text.match_indices(separators).collect::<Vec<_>>(),
            "par_match_indices slice ({ctx})"
        );
        assert_eq!(
            text.par_match_indices('é').collect::<Vec<_>>(),
            text.match_indices('é').collect::<Vec<_>>(),
            "par_match_indices char ({ctx})"
        );
        assert_eq!(
            text.par_encode_utf16().collect::<Vec<_>>(),
            text.encode_utf16().collect::<Vec<_>>(),
            "par_encode_utf16 ({ctx})"
        );
        let target = case.rng.below(case.len + 1);
        assert_eq!(
            text.par_match_indices(',')
                .find_first(|&(at, _)| at >= target),
            text.match_indices(',').find(|&(at, _)| at >= target),
            "par_match_indices find_first ({ctx})"
        );
        for edge in [",", ",,", "a,", ",a", "a", ""] {
            let what = format!("{edge:?} ({ctx})");
            assert_eq!(
                edge.par_split_inclusive(',').collect::<Vec<_>>(),
                edge.split_inclusive(',').collect::<Vec<_>>(),
                "par_split_inclusive {what}"
            );
        }
        // Flat-mapped, they run their sequential path.
        assert_eq!(
            text.par_lines()
                .flat_map(|line| line.par_split_inclusive(','))
                .collect::<Vec<_>>(),
            text.lines()
                .flat_map(|line| line.split_inclusive(','))
                .collect::<Vec<_>>(),
            "flat_map par_split_inclusive ({ctx})"
        );
        assert_eq!(
            text.par_lines()
                .flat_map(|line| line.par_match_indices(';'))
                .count(),
            text.lines()
                .flat_map(|line| line.match_indices(';'))
                .count(),
            "flat_map par_match_indices ({ctx})"
        );
    });
}

/// `len` values of which about one in `one_in` is 0, the separator of the
/// slice splits.
fn with_zeros(case: &mut Case, one_in: u32) -> Vec<u32> {
    let len = case.len;
    case.values_of(len, one_in)
}

#[test]
fn slice_splits_and_chunk_by_against_std() {
    check("slice_splits_and_chunk_by_against_std", |case| {
        let ctx = case.to_string();
        let one_in = [2, 5, 100, 100_000][case.rng.below(4)];
        let v = with_zeros(case, one_in);
        let is_zero = |x: &u32| *x == 0;
        assert_eq!(
            v.par_split(is_zero).collect::<Vec<_>>(),
            v.split(is_zero).collect::<Vec<_>>(),
            "par_split ({ctx})"
        );
        assert_eq!(
            v.par_split_inclusive(is_zero).collect::<Vec<_>>(),
            v.split_inclusive(is_zero).collect::<Vec<_>>(),
            "par_split_inclusive ({ctx})"
        );
        let runs = |a: &u32, b: &u32| (a == &0) == (b == &0);
        assert_eq!(
            v.par_chunk_by(runs).collect::<Vec<_>>(),
            v.chunk_by(runs).collect::<Vec<_>>(),
            "par_chunk_by ({ctx})"
        );
        let rising = |a: &u32, b: &u32| a < b;
        assert_eq!(
            v.par_chunk_by(rising).map(<[u32]>::len).collect::<Vec<_>>(),
            v.chunk_by(rising).map(<[u32]>::len).collect::<Vec<_>>(),
            "par_chunk_by rising ({ctx})"
        );
        // Mutable: each piece reversed, as std's pieces reversed.
        let mut seq = v.clone();
        seq.split_mut(is_zero).for_each(<[u32]>::reverse);
        let mut par = v.clone();
        par.par_split_mut(is_zero).for_each(<[u32]>::reverse);
        assert_eq!(par, seq, "par_split_mut ({ctx})");
        let mut seq = v.clone();
        seq.split_inclusive_mut(is_zero).for_each(<[u32]>::reverse);
        let mut par = v.clone();
        par.par_split_inclusive_mut(is_zero)
            .for_each(<[u32]>::reverse);
        assert_eq!(par, seq, "par_split_inclusive_mut ({ctx})");
        let mut seq = v.clone();
        seq.chunk_by_mut(rising).for_each(<[u32]>::reverse);
        let mut par = v.clone();
        par.par_chunk_by_mut(rising).for_each(<[u32]>::reverse);
        assert_eq!(par, seq, "par_chunk_by_mut ({ctx})");
        // The order-sensitive consumers see the pieces in order.
        let long = case.rng.below(8);
        assert_eq!(
            v.par_split(is_zero)
                .find_first(|p| p.len() > long)
                .map(<[u32]>::as_ptr),
            v.split(is_zero)
                .find(|p| p.len() > long)
                .map(<[u32]>::as_ptr),
            "par_split find_first ({ctx})"
        );
        assert_eq!(
            v.par_chunk_by(rising)
                .find_last(|p| p.len() > long)
                .map(<[u32]>::as_ptr),
            v.chunk_by(rising)
                .rfind(|p| p.len() > long)
                .map(<[u32]>::as_ptr),
            "par_chunk_by find_last ({ctx})"
        );
        // Flat-mapped, they run their sequential path.
        assert_eq!(
            v.par_chunks(7)
                .flat_map(|chunk| chunk.par_split(is_zero))
                .collect::<Vec<_>>(),
            v.chunks(7)
                .flat_map(|chunk| chunk.split(is_zero))
                .collect::<Vec<_>>(),
            "flat_map par_split ({ctx})"
        );
        assert_eq!(
            v.par_chunks(7)
                .flat_map(|chunk| chunk.par_chunk_by(rising))
                .collect::<Vec<_>>(),
            v.chunks(7)
                .flat_map(|chunk| chunk.chunk_by(rising))
                .collect::<Vec<_>>(),
            "flat_map par_chunk_by ({ctx})"
        );
    });
}

#[test]
fn array_windows_and_sort_by_cached_key_against_std() {
    check("array_windows_and_sort_by_cached_key_against_std", |case| {
        let ctx = case.to_string();
        let v = case.values(50);
        assert_eq!(
            v.par_array_windows::<3>()
                .copied()
                .collect::<Vec<[u32; 3]>>(),
            v.windows(3).map(|w| [w[0], w[1], w[2]]).collect::<Vec<_>>(),
            "par_array_windows ({ctx})"
        );
        assert_eq!(
            v.par_array_windows::<1>().len(),
            v.len(),
            "par_array_windows len ({ctx})"
        );
        // Stable: equal keys keep their elements' order, which the
        // second field shows.
        let pairs: Vec<(u32, usize)> = v.iter().copied().zip(0..).collect();
        let calls = AtomicUsize::new(0);
        let mut par = pairs.clone();
        par.par_sort_by_cached_key(|&(x, _)| {
            calls.fetch_add(1, Ordering::Relaxed);
            x % 7
        });
        let mut seq = pairs.clone();
        seq.sort_by_cached_key(|&(x, _)| x % 7);
        assert_eq!(par, seq, "par_sort_by_cached_key ({ctx})");
        assert_eq!(
            calls.load(Ordering::Relaxed),
            if v.len() < 2 { 0 } else { v.len() },
            "one key per element ({ctx})"
        );
        let mut par = v.clone();
        par.par_sort_by_cached_key(|x| std::cmp::Reverse(x.to_string()));
        let mut seq = v.clone();
        seq.sort_by_cached_key(|x| std::cmp::Reverse(x.to_string()));
        assert_eq!(par, seq, "par_sort_by_cached_key strings ({ctx})");
    });
}

#[test]
fn a_panic_in_a_key_leaves_the_slice_whole() {
    quiet_planned_panics();
    check("a_panic_in_a_key_leaves_the_slice_whole", |case| {
        let ctx = case.to_string();
        if case.len < 2 {
            return;
        }
        let target = case.rng.below(case.len);
        let (drops, mut items) = tracked(case.len);
        let ran = panic::catch_unwind(AssertUnwindSafe(|| {
            items.par_sort_by_cached_key(|item| {
                if item.id == target {
                    panic::panic_any(Planned(target));
                }
                usize::MAX - item.id
            });
        }));
        assert_eq!(
            planned(ran, "par_sort_by_cached_key", &ctx),
            Planned(target)
        );
        assert_eq!(ids(&items), (0..case.len).collect::<Vec<_>>(), "{ctx}");
        drop(items);
        assert_dropped_once(&drops, "par_sort_by_cached_key", &ctx);
    });
}

/// Halves a range while it is longer than `leaf`.
fn halve(
    leaf: usize,
) -> impl Fn(std::ops::Range<usize>) -> (std::ops::Range<usize>, Option<std::ops::Range<usize>>)
       + Sync
       + Send {
    move |range| {
        if range.len() <= leaf {
            return (range, None);
        }
        let mid = range.start + range.len() / 2;
        (range.start..mid, Some(mid..range.end))
    }
}

#[test]
fn split_covers_its_data_in_order() {
    check("split_covers_its_data_in_order", |case| {
        let ctx = case.to_string();
        let len = case.len;
        let leaf = 1 + case.rng.below(64);
        let pieces: Vec<std::ops::Range<usize>> = weft::iter::split(0..len, halve(leaf)).collect();
        assert_eq!(pieces.first().map(|r| r.start), Some(0), "first ({ctx})");
        assert_eq!(pieces.last().map(|r| r.end), Some(len), "last ({ctx})");
        assert!(
            pieces.windows(2).all(|pair| pair[0].end == pair[1].start),
            "in order, without gaps ({ctx}): {pieces:?}"
        );
        assert!(
            pieces.len() == 1 || pieces.iter().all(|piece| !piece.is_empty()),
            "no empty piece but of empty data ({ctx})"
        );
        assert_eq!(
            weft::iter::split(0..len, halve(leaf))
                .map(|piece| piece.sum::<usize>())
                .sum::<usize>(),
            (0..len).sum::<usize>(),
            "sum ({ctx})"
        );
        let target = case.rng.below(len + 1);
        assert_eq!(
            weft::iter::split(0..len, halve(leaf))
                .flat_map_iter(|piece| piece)
                .find_first(|&x| x >= target),
            (0..len).find(|&x| x >= target),
            "find_first ({ctx})"
        );
        // A splitter that never cuts: one piece.
        assert_eq!(
            weft::iter::split(0..len, |range| (range, None)).collect::<Vec<_>>(),
            vec![0..len],
            "uncut ({ctx})"
        );
        // As a `flat_map`'s inner loop (split in a pool, in one go from
        // outside one), it still covers its data in order.
        assert_eq!(
            weft::iter::once(0..len)
                .flat_map(|range| weft::iter::split(range, halve(leaf)))
                .flat_map_iter(|piece| piece)
                .collect::<Vec<_>>(),
            (0..len).collect::<Vec<_>>(),
            "flat_map ({ctx})"
        );
    });
}

/// A random tree of about `len` nodes, as each node's children: node `n`'s
/// are `children[n]`.
fn random_tree(case: &mut Case) -> Vec<Vec<usize>> {
    let mut children = vec![Vec::new(); case.len.max(1)];
    // Each node but the root hangs under an earlier one: mostly near the
    // previous node (deep paths), sometimes anywhere (wide nodes).
    for node in 1..children.len() {
        let parent = if case.rng.chance(3) {
            case.rng.below(node)
        } else {
            node - 1 - case.rng.below(node.min(3))
        };
        children[parent].push(node);
    }
    children
}

fn prefix_walk(tree: &[Vec<usize>], node: usize, out: &mut Vec<usize>) {
    out.push(node);
    for &child in &tree[node] {
        prefix_walk(tree, child, out);
    }
}

fn postfix_walk(tree: &[Vec<usize>], node: usize, out: &mut Vec<usize>) {
    for &child in &tree[node] {
        postfix_walk(tree, child, out);
    }
    out.push(node);
}

#[test]
fn walk_tree_orders_against_a_sequential_walk() {
    check("walk_tree_orders_against_a_sequential_walk", |case| {
        let ctx = case.to_string();
        let tree = random_tree(case);
        // Deep paths: the test's own recursive walks would overflow.
        if case.len == LARGE {
            return;
        }
        let children = |&node: &usize| tree[node].iter().copied();
        let (mut prefix, mut postfix) = (Vec::new(), Vec::new());
        prefix_walk(&tree, 0, &mut prefix);
        postfix_walk(&tree, 0, &mut postfix);
        assert_eq!(
            weft::iter::walk_tree_prefix(0, children).collect::<Vec<_>>(),
            prefix,
            "walk_tree_prefix ({ctx})"
        );
        assert_eq!(
            weft::iter::walk_tree_postfix(0, children).collect::<Vec<_>>(),
            postfix,
            "walk_tree_postfix ({ctx})"
        );
        assert_eq!(
            sorted(weft::iter::walk_tree(0, children).collect()),
            sorted(prefix.clone()),
            "walk_tree ({ctx})"
        );
        let target = case.rng.below(tree.len());
        assert_eq!(
            weft::iter::walk_tree_postfix(0, children).find_first(|&node| node >= target),
            postfix.iter().copied().find(|&node| node >= target),
            "walk_tree_postfix find_first ({ctx})"
        );
        assert_eq!(
            weft::iter::walk_tree_prefix(0, children).find_last(|&node| node % 5 == 1),
            prefix.iter().copied().rfind(|node| node % 5 == 1),
            "walk_tree_prefix find_last ({ctx})"
        );
        // Flat-mapped, they run their sequential walks.
        assert_eq!(
            weft::iter::once(0)
                .flat_map(|root| weft::iter::walk_tree_postfix(root, children))
                .collect::<Vec<_>>(),
            postfix,
            "flat_map walk_tree_postfix ({ctx})"
        );
        assert_eq!(
            weft::iter::once(0)
                .flat_map(|root| weft::iter::walk_tree_prefix(root, children))
                .collect::<Vec<_>>(),
            prefix,
            "flat_map walk_tree_prefix ({ctx})"
        );
    });
}

#[test]
fn walk_tree_drops_its_nodes_once_when_a_closure_panics() {
    quiet_planned_panics();
    check(
        "walk_tree_drops_its_nodes_once_when_a_closure_panics",
        |case| {
            let ctx = case.to_string();
            let tree = random_tree(case);
            let len = tree.len();
            let drops: Arc<[AtomicUsize]> = (0..len).map(|_| AtomicUsize::new(0)).collect();
            let made: Vec<AtomicUsize> = (0..len).map(|_| AtomicUsize::new(0)).collect();
            let node = |id: usize| {
                made[id].fetch_add(1, Ordering::SeqCst);
                Tracked {
                    id,
                    drops: Arc::clone(&drops),
                }
            };
            let children = |parent: &Tracked| {
                tree[parent.id]
                    .iter()
                    .map(|&id| node(id))
                    .collect::<Vec<_>>()
            };
            let target = case.rng.below(len);
            for prefix in [true, false] {
                for count in drops.iter().chain(&made) {
                    count.store(0, Ordering::SeqCst);
                }
                let explode = |item: Tracked| {
                    if item.id == target {
                        panic::panic_any(Planned(target));
                    }
                };
                let ran = panic::catch_unwind(AssertUnwindSafe(|| {
                    if prefix {
                        weft::iter::walk_tree_prefix(node(0), children).for_each(explode);
                    } else {
                        weft::iter::walk_tree_postfix(node(0), children).for_each(explode);
                    }
                }));
                let what = if prefix { "prefix" } else { "postfix" };
                assert_eq!(planned(ran, what, &ctx), Planned(target), "{ctx}");
                // The nodes made were dropped once each; the ones left
                // unwalked were never made.
                for id in 0..len {
                    let made = made[id].load(Ordering::SeqCst);
                    let dropped = drops[id].load(Ordering::SeqCst);
                    assert!(made <= 1, "{what}: node {id} made {made} times ({ctx})");
                    assert_eq!(dropped, made, "{what}: node {id} dropped ({ctx})");
                }
                assert_eq!(
                    drops[target].load(Ordering::SeqCst),
                    1,
                    "{what}: the target ({ctx})"
                );
            }
        },
    );
}

#[test]
fn wide_and_char_ranges_against_std() {
    check("wide_and_char_ranges_against_std", |case| {
        let ctx = case.to_string();
        let len = case.len as i128;
        for start in [
            i128::MIN,
            -len / 2,
            i128::MAX - len,
            case.rng.between(-1 << 100, 1 << 100),
        ] {
            let range = start..start.saturating_add(len);
            let what = format!("i128 {range:?} ({ctx})");
            let seq: Vec<i128> = range.clone().collect();
            assert_eq!(
                range.clone().into_par_iter().collect::<Vec<_>>(),
                seq,
                "{what}"
            );
            assert_eq!(range.clone().into_par_iter().count(), seq.len(), "{what}");
            let inclusive = range.start..=range.end;
            assert_eq!(
                inclusive.clone().into_par_iter().collect::<Vec<_>>(),
                inclusive.collect::<Vec<_>>(),
                "{what} inclusive"
            );
        }
        let end = u128::MAX - case.rng.below(3) as u128;
        let range = end - len as u128..end;
        assert_eq!(
            range.clone().into_par_iter().collect::<Vec<_>>(),
            range.clone().collect::<Vec<_>>(),
            "u128 {range:?} ({ctx})"
        );
        let inclusive = range.start..=u128::MAX;
        assert_eq!(
            inclusive.clone().into_par_iter().collect::<Vec<_>>(),
            inclusive.collect::<Vec<_>>(),
            "u128 up to MAX ({ctx})"
        );
        // Longer than a usize can count: cut and searched.
        let target = len as u128 * 7;
        assert_eq!(
            (0..u128::MAX).into_par_iter().find_any(|&x| x == target),
            Some(target),
            "(0..u128::MAX) find_any ({ctx})"
        );
        // Chars: around the surrogates, and at the top.
        let at = [
            0,
            0xD7FF - case.len as u32 / 2,
            0xE000,
            0x10FFFF - case.len as u32,
        ];
        for start in at {
            let start = char::from_u32(start).unwrap_or('\u{E000}');
            let end = char::from_u32((start as u32 + case.len as u32 + 0x800).min(0x10FFFF))
                .unwrap_or('\u{E000}');
            let what = format!("chars {start:?}..{end:?} ({ctx})");
            let seq: Vec<char> = (start..end).collect();
            assert_eq!(
                (start..end).into_par_iter().collect::<Vec<_>>(),
                seq,
                "{what}"
            );
            assert_eq!((start..end).into_par_iter().len(), seq.len(), "{what} len");
            let cut = case.rng.below(seq.len() + 2);
            assert_eq!(
                (start..end)
                    .into_par_iter()
                    .rev()
                    .skip(cut)
                    .collect::<Vec<_>>(),
                seq.iter().rev().skip(cut).copied().collect::<Vec<_>>(),
                "{what} rev skip({cut})"
            );
            assert_eq!(
                (start..=end).into_par_iter().collect::<Vec<_>>(),
                (start..=end).collect::<Vec<_>>(),
                "{what} inclusive"
            );
        }
        assert_eq!(
            ('\u{10FFF0}'..=char::MAX).into_par_iter().count(),
            16,
            "chars up to char::MAX ({ctx})"
        );
    });
}

#[test]
fn boxed_slices_and_tuples_of_iterators() {
    check("boxed_slices_and_tuples_of_iterators", |case| {
        let ctx = case.to_string();
        let v = case.values(1000);
        let mut boxed: Box<[u32]> = v.clone().into_boxed_slice();
        assert_eq!(
            (&boxed).into_par_iter().copied().collect::<Vec<_>>(),
            v,
            "&Box<[T]> ({ctx})"
        );
        (&mut boxed).into_par_iter().for_each(|x| *x += 1);
        assert_eq!(
            boxed.iter().map(|x| x - 1).collect::<Vec<_>>(),
            v,
            "&mut Box<[T]> ({ctx})"
        );
        let w = case.other_values(1000);
        let len = v.len().min(w.len());
        let seq: Vec<(u32, u32, usize)> = v
            .iter()
            .zip(&w)
            .zip(0..)
            .map(|((&a, &b), i)| (a, b, i))
            .collect();
        assert_eq!(
            (&v, &w, 0..usize::MAX)
                .into_par_iter()
                .map(|(&a, &b, i)| (a, b, i))
                .collect::<Vec<_>>(),
            seq,
            "(&a, &b, range) ({ctx})"
        );
        assert_eq!((&v, &w).into_par_iter().len(), len, "len ({ctx})");
        let mut sums = vec![0; v.len()];
        (&mut sums, &v, &w)
            .into_par_iter()
            .for_each(|(sum, a, b)| *sum = a + b);
        assert_eq!(
            sums[..len],
            seq.iter().map(|&(a, b, _)| a + b).collect::<Vec<_>>(),
            "(&mut s, &a, &b) ({ctx})"
        );
        let mut pair = (v.clone(), w.clone());
        (&mut pair)
            .into_par_iter()
            .for_each(|(a, b)| std::mem::swap(a, b));
        assert_eq!(pair.0[..len], w[..len], "&mut (a, b) ({ctx})");
        assert_eq!(
            (&pair).into_par_iter().map(|(a, b)| a + b).sum::<u32>(),
            seq.iter().map(|&(a, b, _)| a + b).sum::<u32>(),
            "&(a, b) ({ctx})"
        );
        let twelve = (&v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &w);
        assert_eq!(
            twelve
                .into_par_iter()
                .map(|t| t.0 + t.11)
                .collect::<Vec<_>>(),
            seq.iter().map(|&(a, b, _)| a + b).collect::<Vec<_>>(),
            "twelve ({ctx})"
        );
        assert_eq!((&v,).into_par_iter().count(), v.len(), "one ({ctx})");
        let target = case.rng.below(len + 1);
        assert_eq!(
            (&v, &w, 0..usize::MAX)
                .into_par_iter()
                .rev()
                .position_first(|(_, _, i)| i == target),
            (0..len).rev().position(|i| i == target),
            "rev position_first ({ctx})"
        );
        // By value: the shorter side's count, every item dropped once.
        let n = case.len;
        let m = case.other_len();
        let (a_drops, a) = tracked(n);
        let (b_drops, b) = tracked(m);
        let pairs: Vec<(usize, usize)> = (a, b, 0..n.max(m))
            .into_par_iter()
            .map(|(x, y, _)| (x.id, y.id))
            .collect();
        assert_eq!(
            pairs,
            (0..n.min(m)).map(|i| (i, i)).collect::<Vec<_>>(),
            "by value ({ctx})"
        );
        assert_dropped_once(&a_drops, "multizip a", &ctx);
        assert_dropped_once(&b_drops, "multizip b", &ctx);
    });
}

/// A loop of few items whose items block their threads (a sleep, not a
/// weft wait) hands its halves to other workers without forcing any: an
/// owner asleep in its item could answer no request, and a forced steal
/// costs two process-wide barriers. Every item still runs once, on as many
/// workers as there are items.
#[test]
fn a_loop_of_few_sleeping_items_forces_no_steal() {
    let pool = Pool::builder().workers(4).build().expect("pool");
    let ran = AtomicUsize::new(0);
    pool.install(|| {
        (0..8).into_par_iter().for_each(|_| {
            std::thread::sleep(std::time::Duration::from_millis(5));
            ran.fetch_add(1, Ordering::Relaxed);
        });
    });
    assert_eq!(ran.load(Ordering::Relaxed), 8);
    assert_eq!(pool.stats().total().join_halves_forced, 0);
}

// ------------------------------------------------- flat_map inner loops

/// `v` cut into a few contiguous groups (one to four), at random places,
/// each item with its index: a `flat_map` over the groups has few outer
/// items and long inner loops, which run in parallel (plumbing's "Inner
/// loops").
fn groups_of(case: &mut Case, v: &[u32]) -> Vec<Vec<(usize, u32)>> {
    let groups = 1 + case.rng.below(4);
    let mut cuts: Vec<usize> = (1..groups).map(|_| case.rng.below(v.len() + 1)).collect();
    cuts.push(0);
    cuts.push(v.len());
    cuts.sort_unstable();
    cuts.windows(2)
        .map(|cut| (cut[0]..cut[1]).map(|i| (i, v[i])).collect())
        .collect()
}

/// A `flat_map` over few outer items with long inner loops gives the
/// sequential answer through every kind of consumer and through the
/// adapters that pass their consumer down to it (`map`, `filter`,
/// `filter_map`, `inspect`, `copied`, `cloned`, `update`,
/// `flat_map_iter`, a second `flat_map`, `fold`, `fold_with`), and behind
/// ones that do not (`map_init`, `map_with`).
#[test]
fn flat_map_inner_loops_against_std() {
    check("flat_map_inner_loops_against_std", |case| {
        let ctx = case.to_string();
        let v = case.values(1_000);
        let groups = groups_of(case, &v);
        let pairs: Vec<(usize, u32)> = v.iter().copied().enumerate().collect();
        let inner = || groups.par_iter().flat_map(|group| group.par_iter());

        assert_eq!(
            inner().copied().collect::<Vec<_>>(),
            pairs,
            "collect ({ctx})"
        );
        assert_eq!(
            inner()
                .cloned()
                .filter(|&(_, x)| x % 3 != 0)
                .map(|(i, x)| i as u64 * u64::from(x))
                .collect::<Vec<_>>(),
            pairs
                .iter()
                .filter(|&&(_, x)| x % 3 != 0)
                .map(|&(i, x)| i as u64 * u64::from(x))
                .collect::<Vec<_>>(),
            "cloned filter map collect ({ctx})"
        );
        let seen = AtomicUsize::new(0);
        assert_eq!(
            inner()
                .inspect(|_| {
                    seen.fetch_add(1, Ordering::Relaxed);
                })
                .filter_map(|&(i, x)| (x % 2 == 0).then_some(i))
                .flat_map_iter(|i| [i, i + 1])
                .collect::<Vec<_>>(),
            pairs
                .iter()
                .filter(|&&(_, x)| x % 2 == 0)
                .flat_map(|&(i, _)| [i, i + 1])
                .collect::<Vec<_>>(),
            "inspect filter_map flat_map_iter ({ctx})"
        );
        assert_eq!(seen.load(Ordering::Relaxed), v.len(), "inspect ({ctx})");
        assert_eq!(
            inner()
                .copied()
                .update(|pair| pair.1 += 1)
                .map(|(_, x)| u64::from(x))
                .sum::<u64>(),
            v.iter().map(|&x| u64::from(x) + 1).sum::<u64>(),
            "update sum ({ctx})"
        );
        assert_eq!(
            inner()
                .flat_map(|&(_, x)| (0..x % 4).into_par_iter())
                .count(),
            v.iter().map(|&x| (x % 4) as usize).sum::<usize>(),
            "flat_map of a flat_map ({ctx})"
        );
        // `fold` above it: runs of items in order, one accumulator a run.
        assert_eq!(
            inner()
                .fold(Vec::new, |mut run, pair| {
                    run.push(pair.0);
                    run
                })
                .collect::<Vec<Vec<usize>>>()
                .concat(),
            (0..v.len()).collect::<Vec<_>>(),
            "fold's runs in order ({ctx})"
        );
        let accumulators = AtomicUsize::new(0);
        assert_eq!(
            inner()
                .fold(
                    || {
                        accumulators.fetch_add(1, Ordering::Relaxed);
                        0usize
                    },
                    |count, _| count + 1
                )
                .sum::<usize>(),
            v.len(),
            "fold count ({ctx})"
        );
        // An accumulator a run of items (a piece of the outer loop, or of
        // an inner one), never one an item.
        assert!(
            v.len() < 500 || accumulators.load(Ordering::Relaxed) < v.len() / 2,
            "fold made {} accumulators for {} items ({ctx})",
            accumulators.load(Ordering::Relaxed),
            v.len()
        );
        assert_eq!(
            inner()
                .map(|pair| u64::from(pair.1))
                .fold_with(0u64, |sum, x| sum + x)
                .sum::<u64>(),
            v.iter().map(|&x| u64::from(x)).sum::<u64>(),
            "fold_with sum ({ctx})"
        );
        assert_eq!(
            inner()
                .fold(|| 0usize, |count, _| count + 1)
                .reduce(|| 0, |a, b| a + b),
            v.len(),
            "fold then reduce ({ctx})"
        );
        assert_eq!(
            inner()
                .fold(|| 0usize, |count, _| count + 1)
                .fold(|| 0usize, |sum, count| sum + count)
                .sum::<usize>(),
            v.len(),
            "fold of a fold ({ctx})"
        );
        let states = AtomicUsize::new(0);
        assert_eq!(
            inner()
                .map_init(
                    || {
                        states.fetch_add(1, Ordering::Relaxed);
                        0usize
                    },
                    |seen, pair| {
                        *seen += 1;
                        (pair.0, *seen > 0)
                    }
                )
                .collect::<Vec<_>>(),
            (0..v.len()).map(|i| (i, true)).collect::<Vec<_>>(),
            "map_init collect ({ctx})"
        );
        // A state a piece the driver folds (behind `map_init` the inner
        // loops run sequentially), never one an item.
        assert!(
            v.len() < 500 || states.load(Ordering::Relaxed) < v.len() / 2,
            "map_init made {} states for {} items ({ctx})",
            states.load(Ordering::Relaxed),
            v.len()
        );
        assert_eq!(
            inner()
                .map_with(7u32, |key, pair| pair.1 ^ *key)
                .collect::<Vec<_>>(),
            v.iter().map(|&x| x ^ 7).collect::<Vec<_>>(),
            "map_with collect ({ctx})"
        );

        // Order-sensitive and early-exit consumers.
        let target = case.rng.below(1_000) as u32;
        assert_eq!(
            inner().find_first(|pair| pair.1 == target).copied(),
            pairs.iter().find(|pair| pair.1 == target).copied(),
            "find_first ({ctx})"
        );
        assert_eq!(
            inner().find_last(|pair| pair.1 == target).copied(),
            pairs.iter().rev().find(|pair| pair.1 == target).copied(),
            "find_last ({ctx})"
        );
        assert_eq!(
            inner().find_any(|pair| pair.1 == target).map(|pair| pair.1),
            v.contains(&target).then_some(target),
            "find_any ({ctx})"
        );
        assert_eq!(
            inner().any(|pair| pair.1 == target),
            v.contains(&target),
            "any ({ctx})"
        );
        assert_eq!(
            inner().all(|pair| pair.1 != target),
            !v.contains(&target),
            "all ({ctx})"
        );
        assert_eq!(
            inner().min_by_key(|pair| pair.1).copied(),
            pairs.iter().min_by_key(|pair| pair.1).copied(),
            "min_by_key, the first of equals ({ctx})"
        );
        assert_eq!(
            inner().max_by_key(|pair| pair.1).copied(),
            pairs.iter().max_by_key(|pair| pair.1).copied(),
            "max_by_key, the last of equals ({ctx})"
        );
        assert_eq!(
            inner()
                .try_for_each(|pair| if pair.1 == target {
                    Err(pair.0)
                } else {
                    Ok(())
                })
                .is_err(),
            v.contains(&target),
            "try_for_each ({ctx})"
        );
        let (small, large): (Vec<usize>, Vec<usize>) =
            inner().map(|pair| pair.0).partition(|&i| v[i] < 500);
        assert_eq!(
            (small, large),
            (0..v.len()).partition(|&i| v[i] < 500),
            "partition ({ctx})"
        );

        // A floating-point sum, deterministic: the same bits every run.
        let floats = || {
            groups
                .par_iter()
                .deterministic()
                .flat_map(|group| group.par_iter().map(|&(_, x)| f64::from(x) / 7.0))
                .sum::<f64>()
        };
        let first = floats();
        for _ in 0..3 {
            assert_eq!(floats().to_bits(), first.to_bits(), "deterministic ({ctx})");
        }
    });
}

/// Items by value through a `flat_map`'s parallel inner loops: each is
/// moved out or dropped once, when a search leaves the rest unsearched and
/// when a closure panics midway.
#[test]
fn flat_map_inner_loops_by_value() {
    quiet_planned_panics();
    check("flat_map_inner_loops_by_value", |case| {
        let ctx = case.to_string();
        let len = case.len;
        let cut = case.rng.below(len + 1);
        let regroup = |items: Vec<Tracked>| -> Vec<Vec<Tracked>> {
            let mut items = items;
            let tail = items.split_off(cut);
            vec![items, Vec::new(), tail]
        };
        moves_in_order(len, 0..len, "flat_map by value", &ctx, |items| {
            regroup(items)
                .into_par_iter()
                .flat_map(|group| group.into_par_iter())
                .collect()
        });
        let target = case.rng.below(len + 1);
        moves_in_order(
            len,
            (target < len).then_some(target),
            "find_first by value",
            &ctx,
            |items| {
                regroup(items)
                    .into_par_iter()
                    .flat_map(|group| group.into_par_iter())
                    .find_first(|item| item.id == target)
                    .into_iter()
                    .collect()
            },
        );
        moves_in_order(len, 0..len, "fold by value", &ctx, |items| {
            regroup(items)
                .into_par_iter()
                .flat_map(|group| group.into_par_iter())
                .fold(Vec::new, |mut run, item| {
                    run.push(item);
                    run
                })
                .flat_map_iter(|run| run)
                .collect()
        });
        moves_in_order(len, 0..len, "map_init by value", &ctx, |items| {
            regroup(items)
                .into_par_iter()
                .flat_map(|group| group.into_par_iter())
                .map_init(|| (), |(), item| item)
                .collect()
        });
        if len > 0 {
            let target = case.rng.below(len);
            panics_on(len, target, "flat_map", &ctx, |items, explode| {
                regroup(items)
                    .into_par_iter()
                    .flat_map(|group| group.into_par_iter())
                    .for_each(|item| explode(&item));
            });
            panics_on(len, target, "flat_map then fold", &ctx, |items, explode| {
                regroup(items)
                    .into_par_iter()
                    .flat_map(|group| group.into_par_iter())
                    .fold(Vec::new, |mut run, item| {
                        explode(&item);
                        run.push(item);
                        run
                    })
                    .for_each(drop);
            });
        }
    });
}

/// A `flat_map`'s inner loop spreads over the pool, as a loop called on a
/// worker does: one outer item whose inner loop's items sleep. Its last
/// item waits, under a deadline, for another thread to have run one of
/// the others; run on one thread, it would wait alone.
/// The same behind `fold`, which passes its consumer down.
#[test]
fn a_flat_maps_inner_loop_spreads_over_the_pool() {
    /// A loop shape that runs the given body for each item.
    type ItemsThrough<'a> = dyn Fn(&(dyn Fn(usize) + Sync)) + Sync + 'a;
    let pool = Pool::builder().workers(4).build().expect("pool");
    let inner = || weft::iter::once(16).flat_map(|items: usize| (0..items).into_par_iter());
    let spreads = |shape: &str, run: &ItemsThrough<'_>| {
        let threads = Mutex::new(HashSet::new());
        let spread = AtomicUsize::new(0);
        pool.install(|| {
            run(&|i| {
                std::thread::sleep(std::time::Duration::from_millis(1));
                let lock = || threads.lock().unwrap_or_else(PoisonError::into_inner);
                lock().insert(std::thread::current().id());
                if i == 15 {
                    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
                    while lock().len() < 2 && std::time::Instant::now() < deadline {
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                    spread.store(lock().len(), Ordering::Relaxed);
                }
            });
        });
        assert!(
            spread.load(Ordering::Relaxed) >= 2,
            "{shape}: the inner loop ran on one thread"
        );
    };
    spreads("for_each", &|item| inner().for_each(item));
    spreads("fold", &|item| {
        inner().fold(|| (), |(), i| item(i)).for_each(|()| ());
    });
}

/// `flat_map`'s inner loops on a pool of many more workers than cores
/// (256 on this project's 2-core machines): few outer items with long
/// inner loops, many with short ones, and a search, each against std,
/// every item by value dropped once, a few times over.
#[test]
fn flat_map_inner_loops_on_256_workers() {
    let pool = Pool::builder().workers(256).build().expect("pool");
    let rounds = if cfg!(debug_assertions) { 3 } else { 20 };
    pool.install(|| {
        for round in 0..rounds {
            let long: Vec<Vec<u64>> = (0..3u64)
                .map(|g| (0..20_000).map(|x| x * 3 + g).collect())
                .collect();
            let want: u64 = long.iter().flatten().map(|x| x % 1_000).sum();
            let got: u64 = long
                .par_iter()
                .flat_map(|group| group.par_iter().map(|x| x % 1_000))
                .sum();
            assert_eq!(got, want, "long inner loops, round {round}");

            let short: Vec<u64> = (0..50_000u64)
                .into_par_iter()
                .flat_map(|i| (0..(i % 4)).into_par_iter().map(move |k| i * 4 + k))
                .collect();
            let want: Vec<u64> = (0..50_000u64)
                .flat_map(|i| (0..(i % 4)).map(move |k| i * 4 + k))
                .collect();
            assert_eq!(short, want, "short inner loops, round {round}");

            let target = 3 * 20_000 - 7 - round as u64;
            assert_eq!(
                long.par_iter()
                    .flat_map(|group| group.par_iter())
                    .find_first(|&&x| x == target),
                long.iter().flatten().find(|&&x| x == target),
                "find_first, round {round}"
            );

            let len = 30_000;
            let cut = len / 3 + round;
            moves_in_order(len, 0..len, "by value on 256 workers", "", |items| {
                let mut items = items;
                let tail = items.split_off(cut);
                vec![items, tail]
                    .into_par_iter()
                    .flat_map(|group| group.into_par_iter())
                    .collect()
            });
        }
    });
}
