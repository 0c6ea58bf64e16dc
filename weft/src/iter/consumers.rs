//! The consumers behind the consuming methods of
//! [`ParallelIterator`](super::ParallelIterator): how each folds a piece and
//! combines two neighbouring pieces' results (left, then right).

use std::convert::Infallible;
use std::marker::PhantomData;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::plumbing::{keep, Consumer};

/// `for_each`.
pub(crate) struct ForEach<'f, F>(pub(crate) &'f F);

impl<T, F: Fn(T) + Sync> Consumer<T> for ForEach<'_, F> {
    type Result = ();
    fn fold<I: Iterator<Item = T>>(&self, _offset: usize, items: I) {
        items.for_each(self.0);
    }
    fn reduce(&self, (): (), (): ()) {}
}

/// `sum`.
pub(crate) struct Sum<S>(pub(crate) PhantomData<fn() -> S>);

impl<T, S> Consumer<T> for Sum<S>
where
    S: std::iter::Sum<T> + std::iter::Sum<S> + Send,
{
    type Result = S;
    fn fold<I: Iterator<Item = T>>(&self, _offset: usize, items: I) -> S {
        items.sum()
    }
    fn reduce(&self, left: S, right: S) -> S {
        [left, right].into_iter().sum()
    }
}

/// `product`.
pub(crate) struct Product<P>(pub(crate) PhantomData<fn() -> P>);

impl<T, P> Consumer<T> for Product<P>
where
    P: std::iter::Product<T> + std::iter::Product<P> + Send,
{
    type Result = P;
    fn fold<I: Iterator<Item = T>>(&self, _offset: usize, items: I) -> P {
        items.product()
    }
    fn reduce(&self, left: P, right: P) -> P {
        [left, right].into_iter().product()
    }
}

/// `count`.
pub(crate) struct Count;

impl<T> Consumer<T> for Count {
    type Result = usize;
    fn fold<I: Iterator<Item = T>>(&self, _offset: usize, items: I) -> usize {
        items.count()
    }
    fn reduce(&self, left: usize, right: usize) -> usize {
        left + right
    }
}

/// `reduce(identity, op)`.
pub(crate) struct ReduceWith<'f, ID, OP> {
    pub(crate) identity: &'f ID,
    pub(crate) op: &'f OP,
}

impl<T, ID, OP> Consumer<T> for ReduceWith<'_, ID, OP>
where
    T: Send,
    ID: Fn() -> T + Sync,
    OP: Fn(T, T) -> T + Sync,
{
    type Result = T;
    fn fold<I: Iterator<Item = T>>(&self, _offset: usize, items: I) -> T {
        items.fold((self.identity)(), self.op)
    }
    fn reduce(&self, left: T, right: T) -> T {
        (self.op)(left, right)
    }
}

/// `reduce_with(op)`: `reduce` without an identity; `None` stands for a
/// piece of no items.
pub(crate) struct ReduceOptional<'f, OP>(pub(crate) &'f OP);

impl<T, OP> Consumer<T> for ReduceOptional<'_, OP>
where
    T: Send,
    OP: Fn(T, T) -> T + Sync,
{
    type Result = Option<T>;
    fn fold<I: Iterator<Item = T>>(&self, _offset: usize, items: I) -> Option<T> {
        items.reduce(self.0)
    }
    fn reduce(&self, left: Option<T>, right: Option<T>) -> Option<T> {
        match (left, right) {
            (Some(left), Some(right)) => Some((self.0)(left, right)),
            (left, right) => left.or(right),
        }
    }
    fn fold_more<I: Iterator<Item = T>>(
        &self,
        left: Option<T>,
        _offset: usize,
        items: I,
    ) -> Option<T> {
        match left {
            Some(left) => Some(items.fold(left, self.0)),
            None => items.reduce(self.0),
        }
    }
}

/// Which end of the order `MinMax` keeps.
#[derive(Clone, Copy)]
pub(crate) enum Extreme {
    Min,
    Max,
}

/// `min`, `max` and their `_by` and `_by_key` forms. Ties go as in std's:
/// the first of equal minima, the last of equal maxima (pieces combine
/// left then right, so "first" and "last" are the input's order).
pub(crate) struct MinMax<'f, F> {
    pub(crate) compare: &'f F,
    pub(crate) keep: Extreme,
}

impl<T, F> Consumer<T> for MinMax<'_, F>
where
    T: Send,
    F: Fn(&T, &T) -> std::cmp::Ordering + Sync,
{
    type Result = Option<T>;
    fn fold<I: Iterator<Item = T>>(&self, _offset: usize, items: I) -> Option<T> {
        // Not std's `min_by`, which leaks the winner if the loser's drop
        // panics: one item at a time through `reduce`, the same rule.
        items.fold(None, |best, item| self.reduce(best, Some(item)))
    }
    fn reduce(&self, left: Option<T>, right: Option<T>) -> Option<T> {
        match (left, right) {
            (Some(left), Some(right)) => {
                let right_wins = match self.keep {
                    Extreme::Min => (self.compare)(&right, &left).is_lt(),
                    Extreme::Max => (self.compare)(&right, &left).is_ge(),
                };
                Some(if right_wins {
                    keep(right, left)
                } else {
                    keep(left, right)
                })
            }
            (left, right) => left.or(right),
        }
    }
}

/// `find_any`, `any`, `all`, `position_any`: the first match any piece
/// finds; every piece stops once one has.
pub(crate) struct FindAny<'f, F> {
    pub(crate) found: AtomicBool,
    pub(crate) matches: &'f F,
}

impl<T, R: Send, F: Fn(T) -> Option<R> + Sync> Consumer<T> for FindAny<'_, F> {
    type Result = Option<R>;
    fn fold<I: Iterator<Item = T>>(&self, _offset: usize, mut items: I) -> Option<R> {
        // Relaxed: a hint to stop; the match itself travels by join.
        let unfound = |item| (!self.found.load(Ordering::Relaxed)).then_some(item);
        let hit = items.by_ref().map_while(unfound).find_map(self.matches);
        if hit.is_some() {
            self.found.store(true, Ordering::Relaxed);
        }
        // The items after the match are dropped unused.
        keep(hit, items)
    }
    fn reduce(&self, left: Option<R>, right: Option<R>) -> Option<R> {
        leftmost(left, right)
    }
    fn full(&self) -> bool {
        self.found.load(Ordering::Relaxed)
    }
}

/// `find_first`: the leftmost match. A piece stops at its first match, and
/// pieces that start right of the leftmost match found so far do not run.
pub(crate) struct FindFirst<'f, F> {
    /// The base index of the leftmost piece start with a match so far.
    pub(crate) best: AtomicUsize,
    pub(crate) matches: &'f F,
}

impl<T, R: Send, F: Fn(T) -> Option<R> + Sync> Consumer<T> for FindFirst<'_, F> {
    type Result = Option<R>;
    fn fold<I: Iterator<Item = T>>(&self, offset: usize, mut items: I) -> Option<R> {
        // Relaxed: a hint; the leftmost match wins in `reduce` anyway.
        if offset > self.best.load(Ordering::Relaxed) {
            return None;
        }
        // Each item looks again: a match found left of this piece since it
        // started ends it, however long it is (a piece of an unbounded
        // range need never end otherwise).
        let left_of_best = |item| (offset <= self.best.load(Ordering::Relaxed)).then_some(item);
        let hit = items
            .by_ref()
            .map_while(left_of_best)
            .find_map(self.matches);
        if hit.is_some() {
            self.best.fetch_min(offset, Ordering::Relaxed);
        }
        // The items after the match are dropped unused.
        keep(hit, items)
    }
    fn reduce(&self, left: Option<R>, right: Option<R>) -> Option<R> {
        leftmost(left, right)
    }
    fn full_from(&self, offset: usize) -> bool {
        // A piece that starts after the one with the leftmost match so far
        // lies wholly after that match.
        offset > self.best.load(Ordering::Relaxed)
    }
}

/// The left match if any, else the right: the one that loses is dropped
/// (see `keep`).
fn leftmost<R>(left: Option<R>, right: Option<R>) -> Option<R> {
    if left.is_some() {
        keep(left, right)
    } else {
        right
    }
}

/// What `try_reduce`, `try_for_each` and `try_fold` accept: `Option`,
/// `Result` and `ControlFlow`, each either an output to go on with or a
/// residual that stops the loop (std's unstable `Try`, which rayon
/// mirrors the same way). Sealed: only these three implement it.
pub trait Try: sealed::Sealed {
    /// What the loop goes on with: `Some`'s, `Ok`'s or `Continue`'s value.
    type Output;
    /// What stops it: `None`, an `Err` or a `Break`, without the output.
    type Residual;
    /// Wraps an output.
    fn from_output(output: Self::Output) -> Self;
    /// Wraps a residual.
    fn from_residual(residual: Self::Residual) -> Self;
    /// Whether to go on, with the output, or stop, with the residual.
    fn branch(self) -> ControlFlow<Self::Residual, Self::Output>;
}

mod sealed {
    pub trait Sealed {}
    impl<T> Sealed for Option<T> {}
    impl<T, E> Sealed for Result<T, E> {}
    impl<B, C> Sealed for std::ops::ControlFlow<B, C> {}
}

impl<T> Try for Option<T> {
    type Output = T;
    type Residual = Option<Infallible>;
    fn from_output(output: T) -> Self {
        Some(output)
    }
    fn from_residual(_: Option<Infallible>) -> Self {
        None
    }
    fn branch(self) -> ControlFlow<Option<Infallible>, T> {
        match self {
            Some(output) => ControlFlow::Continue(output),
            None => ControlFlow::Break(None),
        }
    }
}

impl<T, E> Try for Result<T, E> {
    type Output = T;
    type Residual = Result<Infallible, E>;
    fn from_output(output: T) -> Self {
        Ok(output)
    }
    fn from_residual(residual: Result<Infallible, E>) -> Self {
        match residual {
            Err(error) => Err(error),
        }
    }
    fn branch(self) -> ControlFlow<Result<Infallible, E>, T> {
        match self {
            Ok(output) => ControlFlow::Continue(output),
            Err(error) => ControlFlow::Break(Err(error)),
        }
    }
}

impl<B, C> Try for ControlFlow<B, C> {
    type Output = C;
    type Residual = ControlFlow<B, Infallible>;
    fn from_output(output: C) -> Self {
        ControlFlow::Continue(output)
    }
    fn from_residual(residual: ControlFlow<B, Infallible>) -> Self {
        match residual {
            ControlFlow::Break(stop) => ControlFlow::Break(stop),
        }
    }
    fn branch(self) -> ControlFlow<ControlFlow<B, Infallible>, C> {
        match self {
            ControlFlow::Continue(output) => ControlFlow::Continue(output),
            ControlFlow::Break(stop) => ControlFlow::Break(ControlFlow::Break(stop)),
        }
    }
}

/// `try_reduce` and `try_for_each`: `reduce` until an item or a
/// combination is a residual; then every piece stops, as for `find_any`.
/// Which residual wins, when several pieces stop, is the leftmost of those
/// that got as far as the final combination.
pub(crate) struct TryReduce<'f, ID, OP> {
    pub(crate) identity: &'f ID,
    pub(crate) op: &'f OP,
    pub(crate) stopped: AtomicBool,
}

impl<ID, OP> TryReduce<'_, ID, OP> {
    /// Combines two outputs, or passes a residual on (and stops the rest).
    fn combine<R>(&self, left: R, right: R) -> ControlFlow<R, R::Output>
    where
        R: Try,
        OP: Fn(R::Output, R::Output) -> R,
    {
        let stop = |residual| {
            // Relaxed: a hint to stop; the residual itself travels by join.
            self.stopped.store(true, Ordering::Relaxed);
            ControlFlow::Break(R::from_residual(residual))
        };
        let left = match left.branch() {
            ControlFlow::Continue(output) => output,
            ControlFlow::Break(residual) => return keep(stop(residual), right),
        };
        match right.branch() {
            ControlFlow::Continue(right) => match (self.op)(left, right).branch() {
                ControlFlow::Continue(output) => ControlFlow::Continue(output),
                ControlFlow::Break(residual) => stop(residual),
            },
            ControlFlow::Break(residual) => keep(stop(residual), left),
        }
    }
}

impl<R, ID, OP> Consumer<R> for TryReduce<'_, ID, OP>
where
    R: Try + Send,
    ID: Fn() -> R::Output + Sync,
    OP: Fn(R::Output, R::Output) -> R + Sync,
{
    type Result = R;
    fn fold<I: Iterator<Item = R>>(&self, _offset: usize, mut items: I) -> R {
        let mut acc = R::from_output((self.identity)());
        // Relaxed: a hint to stop; see `combine`.
        while !self.stopped.load(Ordering::Relaxed) {
            let Some(item) = items.next() else { break };
            acc = match self.combine(acc, item) {
                ControlFlow::Continue(output) => R::from_output(output),
                // The items after the residual are dropped unused.
                ControlFlow::Break(residual) => return keep(residual, items),
            };
        }
        // Stopped by another piece, whose residual wins in `reduce`.
        keep(acc, items)
    }
    fn reduce(&self, left: R, right: R) -> R {
        match self.combine(left, right) {
            ControlFlow::Continue(output) => R::from_output(output),
            ControlFlow::Break(residual) => residual,
        }
    }
    fn full(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }
}

/// `find_last`, `find_map_last`, `position_last`: the rightmost match. A
/// piece keeps its last match, and pieces that start left of a piece with
/// a match do not run: all their items come before it.
pub(crate) struct FindLast<'f, F> {
    /// The base index of the rightmost piece start with a match so far.
    pub(crate) best: AtomicUsize,
    pub(crate) matches: &'f F,
}

impl<T, R: Send, F: Fn(T) -> Option<R> + Sync> Consumer<T> for FindLast<'_, F> {
    type Result = Option<R>;
    fn fold<I: Iterator<Item = T>>(&self, offset: usize, items: I) -> Option<R> {
        // Relaxed: a hint; the rightmost match wins in `reduce` anyway.
        if offset < self.best.load(Ordering::Relaxed) {
            return keep(None, items);
        }
        // One at a time through `reduce`: a later match replaces an
        // earlier one, which is dropped.
        let hit = items
            .filter_map(self.matches)
            .fold(None, |last, hit| self.reduce(last, Some(hit)));
        if hit.is_some() {
            self.best.fetch_max(offset, Ordering::Relaxed);
        }
        hit
    }
    fn reduce(&self, left: Option<R>, right: Option<R>) -> Option<R> {
        if right.is_some() {
            keep(right, left)
        } else {
            left
        }
    }
}
