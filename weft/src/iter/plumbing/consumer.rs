//! The consumer trait: what a consuming call does with a loop's pieces.
//! Public in name only, in a private module: the iterator traits' hidden
//! `drive_with` takes one, and only this crate's consumers drive a loop.

/// What a consuming call does with the pieces: fold each sequentially,
/// combine neighbours left then right.
pub trait Consumer<T>: Sync {
    /// What a piece folds to.
    type Result: Send;

    /// Folds the piece that starts at base index `offset` (`usize::MAX`
    /// for all the pieces past it, see [`at`]).
    fn fold<I: Iterator<Item = T>>(&self, offset: usize, items: I) -> Self::Result;

    /// Combines a piece's result with the result of the piece after it.
    fn reduce(&self, left: Self::Result, right: Self::Result) -> Self::Result;

    /// Folds the piece right after the one `left` is the result of onto
    /// it: where the driver folds a leaf a chunk at a time, a consumer that
    /// builds a value (a `collect`'s `Vec`) goes on with the one it has
    /// instead of building one a chunk and merging.
    fn fold_more<I: Iterator<Item = T>>(
        &self,
        left: Self::Result,
        offset: usize,
        items: I,
    ) -> Self::Result {
        let right = self.fold(offset, items);
        self.reduce(left, right)
    }

    /// Whether the answer is known, so that the rest need not run.
    fn full(&self) -> bool {
        false
    }

    /// Whether nothing from base index `offset` on can change the answer,
    /// so that a block that starts there need not run (`find_first` once
    /// a match is found before it).
    fn full_from(&self, offset: usize) -> bool {
        let _ = offset;
        self.full()
    }
}
