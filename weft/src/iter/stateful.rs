//! Adapters whose closure works on a state of each piece the driver
//! folds: `fold` and `try_fold` (an accumulator), `map_with` and
//! `map_init` (a scratch value). The state comes from a *seed*: a clone
//! of a value (`fold_with`, `map_with`, `try_fold_with`) or a closure's
//! result (`fold`, `map_init`, `try_fold`), made once per piece, so never
//! once per item when items are cheap (a piece then holds many), but
//! possibly so for slow items, which the driver folds a few at a time.

use std::ops::ControlFlow;

use super::consumers::Try;
use super::nested::{FoldOnto, SharedSeed};
use super::plumbing::{drive, Consumer, Producer};
use super::{IndexedParallelIterator, ParallelIterator};

/// Where an adapter's pieces get their state.
pub trait Seed: Send {
    /// The state.
    type State;
    /// What each producer of the adapter holds.
    type Piece<'a>: PieceSeed<State = Self::State>
    where
        Self: 'a;
    /// The seed of the adapter's first producer.
    fn piece(&self) -> Self::Piece<'_>;
    /// The state of a sequential run (a `flat_map`'s inner iterator
    /// folded whole).
    fn into_state(self) -> Self::State;
}

/// A producer's seed: split along with the producer.
pub trait PieceSeed: Send + Sized {
    /// The state.
    type State;
    /// The seed of the right half of a split.
    fn split(&self) -> Self;
    /// The state of a piece about to be folded.
    fn state(self) -> Self::State;
}

/// A state cloned from a value for each piece (`fold_with`, `map_with`).
#[derive(Clone, Debug)]
pub struct CloneSeed<T>(pub(crate) T);

impl<T: Clone + Send> Seed for CloneSeed<T> {
    type State = T;
    type Piece<'a>
        = CloneSeed<T>
    where
        Self: 'a;
    fn piece(&self) -> CloneSeed<T> {
        self.clone()
    }
    fn into_state(self) -> T {
        self.0
    }
}

impl<T: Clone + Send> PieceSeed for CloneSeed<T> {
    type State = T;
    fn split(&self) -> Self {
        self.clone()
    }
    fn state(self) -> T {
        self.0
    }
}

/// A state made by a closure for each piece (`fold`, `map_init`).
#[derive(Clone, Debug)]
pub struct InitSeed<F>(pub(crate) F);

impl<F, T> Seed for InitSeed<F>
where
    F: Fn() -> T + Sync + Send,
{
    type State = T;
    type Piece<'a>
        = InitSeed<&'a F>
    where
        Self: 'a;
    fn piece(&self) -> InitSeed<&F> {
        InitSeed(&self.0)
    }
    fn into_state(self) -> T {
        (self.0)()
    }
}

impl<F, T> PieceSeed for InitSeed<&F>
where
    F: Fn() -> T + Sync,
{
    type State = T;
    fn split(&self) -> Self {
        InitSeed(self.0)
    }
    fn state(self) -> T {
        (self.0)()
    }
}

/// Splits a producer with a base, a seed and a closure reference `f`.
macro_rules! split_seeded {
    ($name:ident) => {
        fn split_at(self, index: usize) -> (Self, Self) {
            let (left, right) = self.base.split_at(index);
            let right = $name {
                base: right,
                seed: self.seed.split(),
                f: self.f,
            };
            let left = $name {
                base: left,
                seed: self.seed,
                f: self.f,
            };
            (left, right)
        }
    };
}

/// Declares a seeded adapter and its producer.
macro_rules! seeded {
    ($(#[$doc:meta])* $name:ident, $producer:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $name<I, S, F> {
            pub(crate) base: I,
            pub(crate) seed: S,
            pub(crate) f: F,
        }

        /// The producer of the adapter of the same name.
        #[derive(Debug)]
        pub struct $producer<'f, P, S, F> {
            base: P,
            seed: S,
            f: &'f F,
        }

        impl<I: ParallelIterator, S: Seed, F> $name<I, S, F> {
            fn seeded_producer(&mut self) -> $producer<'_, I::Producer<'_>, S::Piece<'_>, F> {
                $producer {
                    base: self.base.producer(),
                    seed: self.seed.piece(),
                    f: &self.f,
                }
            }
        }
    };
}

// ------------------------------------------------- map_with, map_init

seeded!(
    /// `iter.map_with(value, f)` ([`MapWith`]) and `iter.map_init(init,
    /// f)` ([`MapInit`]): `f` maps each item with a mutable state of its
    /// piece.
    MapSeeded,
    MapSeededProducer
);

/// `iter.map_with(value, f)`: each piece's state is a clone of `value`.
pub type MapWith<I, T, F> = MapSeeded<I, CloneSeed<T>, F>;

/// `iter.map_init(init, f)`: each piece's state is `init()`.
pub type MapInit<I, INIT, F> = MapSeeded<I, InitSeed<INIT>, F>;

impl<I, S, F, R> ParallelIterator for MapSeeded<I, S, F>
where
    I: ParallelIterator,
    S: Seed,
    F: Fn(&mut S::State, I::Item) -> R + Sync + Send,
    R: Send,
{
    type Item = R;
    type Producer<'a>
        = MapSeededProducer<'a, I::Producer<'a>, S::Piece<'a>, F>
    where
        Self: 'a;
    type Seq = WithState<I::Seq, S::State, F>;
    fn producer(&mut self) -> Self::Producer<'_> {
        self.seeded_producer()
    }
    fn into_seq(self) -> Self::Seq {
        WithState {
            base: self.base.into_seq(),
            state: self.seed.into_state(),
            f: self.f,
        }
    }
    fn opt_len(&self) -> Option<usize> {
        self.base.opt_len()
    }
}

impl<I, S, F, R> IndexedParallelIterator for MapSeeded<I, S, F>
where
    I: IndexedParallelIterator,
    S: Seed,
    F: Fn(&mut S::State, I::Item) -> R + Sync + Send,
    R: Send,
{
    fn len(&self) -> usize {
        self.base.len()
    }
}

impl<'f, P, S, F, R> Producer for MapSeededProducer<'f, P, S, F>
where
    P: Producer,
    S: PieceSeed,
    F: Fn(&mut S::State, P::Item) -> R + Sync,
{
    type Item = R;
    type IntoIter = WithState<P::IntoIter, S::State, &'f F>;
    fn len(&self) -> usize {
        self.base.len()
    }
    split_seeded!(MapSeededProducer);
    fn into_iter(self) -> Self::IntoIter {
        WithState {
            base: self.base.into_iter(),
            state: self.seed.state(),
            f: self.f,
        }
    }
    /// One state for the whole piece, read backwards through the base, as
    /// the forward fold makes one: the default way splits off an item at a
    /// time, each a piece with a state of its own (`init` per item).
    fn fold_back<B, G>(self, init: B, mut fold: G) -> B
    where
        G: FnMut(B, R) -> B,
    {
        let (mut state, f) = (self.seed.state(), self.f);
        self.base
            .fold_back(init, |folded, item| fold(folded, f(&mut state, item)))
    }
    forward_hints!(folds_leaves_whole: true);
}

/// The sequential iterator of a [`MapSeeded`] piece: its items mapped
/// with its state.
#[derive(Debug)]
pub struct WithState<It, S, F> {
    base: It,
    state: S,
    f: F,
}

impl<It, S, F, R> Iterator for WithState<It, S, F>
where
    It: Iterator,
    F: Fn(&mut S, It::Item) -> R,
{
    type Item = R;
    fn next(&mut self) -> Option<R> {
        let item = self.base.next()?;
        Some((self.f)(&mut self.state, item))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.base.size_hint()
    }
    /// Through the base's own `fold`, as std's `map` does, so a consumer
    /// that folds runs the base's tightest loop.
    fn fold<B, G>(self, init: B, mut fold: G) -> B
    where
        G: FnMut(B, R) -> B,
    {
        let WithState { base, mut state, f } = self;
        base.fold(init, |folded, item| fold(folded, f(&mut state, item)))
    }
}

// ------------------------------------------------------ fold, fold_with

seeded!(
    /// `iter.fold(identity, f)` ([`Fold`]) and `iter.fold_with(value, f)`
    /// ([`FoldWith`]): one accumulator per piece the driver folds, as a
    /// parallel iterator to reduce further.
    FoldSeeded,
    FoldSeededProducer
);

/// `iter.fold(identity, f)`: each piece starts from `identity()`.
pub type Fold<I, ID, F> = FoldSeeded<I, InitSeed<ID>, F>;

/// `iter.fold_with(value, f)`: each piece starts from a clone of `value`.
pub type FoldWith<I, T, F> = FoldSeeded<I, CloneSeed<T>, F>;

impl<I, S, F> ParallelIterator for FoldSeeded<I, S, F>
where
    I: ParallelIterator,
    S: Seed,
    S::State: Send,
    F: Fn(S::State, I::Item) -> S::State + Sync + Send,
{
    type Item = S::State;
    type Producer<'a>
        = FoldSeededProducer<'a, I::Producer<'a>, S::Piece<'a>, F>
    where
        Self: 'a;
    type Seq = std::iter::Once<S::State>;
    fn producer(&mut self) -> Self::Producer<'_> {
        self.seeded_producer()
    }
    fn into_seq(self) -> Self::Seq {
        std::iter::once(self.base.into_seq().fold(self.seed.into_state(), self.f))
    }
    const NESTS: bool = I::NESTS;
    fn drive_with<C: Consumer<S::State>>(&mut self, consumer: &C) -> C::Result {
        if !I::NESTS {
            return drive(self.producer(), consumer);
        }
        let Self { base, seed, f } = self;
        let onto = FoldOnto {
            consumer,
            seed: SharedSeed::new(seed),
            f: &*f,
        };
        let open = base.drive_with(&onto);
        onto.close(open)
    }
}

impl<P, S, F> Producer for FoldSeededProducer<'_, P, S, F>
where
    P: Producer,
    S: PieceSeed,
    F: Fn(S::State, P::Item) -> S::State + Sync,
{
    type Item = S::State;
    type IntoIter = std::iter::Once<S::State>;
    fn len(&self) -> usize {
        self.base.len()
    }
    split_seeded!(FoldSeededProducer);
    fn into_iter(self) -> Self::IntoIter {
        std::iter::once(self.base.into_iter().fold(self.seed.state(), self.f))
    }
    forward_hints!(folds_leaves_whole: true);
}

// ---------------------------------------------- try_fold, try_fold_with

seeded!(
    /// `iter.try_fold(identity, f)` ([`TryFold`]) and
    /// `iter.try_fold_with(value, f)` ([`TryFoldWith`]): one result per
    /// piece the driver folds, its accumulator or the residual that
    /// stopped it.
    TryFoldSeeded,
    TryFoldSeededProducer
);

/// `iter.try_fold(identity, f)`: each piece starts from `identity()`.
pub type TryFold<I, ID, F> = TryFoldSeeded<I, InitSeed<ID>, F>;

/// `iter.try_fold_with(value, f)`: each piece starts from a clone of
/// `value`.
pub type TryFoldWith<I, T, F> = TryFoldSeeded<I, CloneSeed<T>, F>;

/// Folds `items` from `acc` until `f` returns a residual; the items after
/// it are dropped unused.
fn try_fold<It, T, F, R>(mut items: It, mut acc: T, f: F) -> R
where
    It: Iterator,
    F: Fn(T, It::Item) -> R,
    R: Try<Output = T>,
{
    for item in items.by_ref() {
        acc = match f(acc, item).branch() {
            ControlFlow::Continue(acc) => acc,
            ControlFlow::Break(residual) => {
                return super::plumbing::keep(R::from_residual(residual), items)
            }
        };
    }
    R::from_output(acc)
}

impl<I, S, F, R> ParallelIterator for TryFoldSeeded<I, S, F>
where
    I: ParallelIterator,
    S: Seed,
    F: Fn(S::State, I::Item) -> R + Sync + Send,
    R: Try<Output = S::State> + Send,
{
    type Item = R;
    type Producer<'a>
        = TryFoldSeededProducer<'a, I::Producer<'a>, S::Piece<'a>, F>
    where
        Self: 'a;
    type Seq = std::iter::Once<R>;
    fn producer(&mut self) -> Self::Producer<'_> {
        self.seeded_producer()
    }
    fn into_seq(self) -> Self::Seq {
        std::iter::once(try_fold(
            self.base.into_seq(),
            self.seed.into_state(),
            self.f,
        ))
    }
}

impl<P, S, F, R> Producer for TryFoldSeededProducer<'_, P, S, F>
where
    P: Producer,
    S: PieceSeed,
    F: Fn(S::State, P::Item) -> R + Sync,
    R: Try<Output = S::State>,
{
    type Item = R;
    type IntoIter = std::iter::Once<R>;
    fn len(&self) -> usize {
        self.base.len()
    }
    split_seeded!(TryFoldSeededProducer);
    fn into_iter(self) -> Self::IntoIter {
        std::iter::once(try_fold(self.base.into_iter(), self.seed.state(), self.f))
    }
    forward_hints!(folds_leaves_whole: true);
}
