//! The other chunkings of a slice: exact chunks (`par_chunks_exact`,
//! their remainder aside) and chunks counted from the end
//! (`par_rchunks`), shared and mutable.

use super::plumbing::Producer;
use super::sources::{chunk_count, chunk_start, Chunks, ChunksMut};
use super::{IndexedParallelIterator, ParallelIterator};

/// Chunks that all have the same length, and the remainder that is
/// shorter than one, aside (`par_chunks_exact`, `par_rchunks_exact` and
/// their mutable forms): the chunks iterator `I` runs over the slice
/// without the remainder.
#[derive(Debug)]
pub struct Exact<I, R> {
    chunks: I,
    remainder: R,
}

/// `slice.par_chunks_exact(size)`.
pub type ChunksExact<'a, T> = Exact<Chunks<'a, T>, &'a [T]>;
/// `slice.par_chunks_exact_mut(size)`.
pub type ChunksExactMut<'a, T> = Exact<ChunksMut<'a, T>, &'a mut [T]>;
/// `slice.par_rchunks_exact(size)`.
pub type RChunksExact<'a, T> = Exact<RChunks<'a, T>, &'a [T]>;
/// `slice.par_rchunks_exact_mut(size)`.
pub type RChunksExactMut<'a, T> = Exact<RChunksMut<'a, T>, &'a mut [T]>;

impl<'a, I, T> Exact<I, &'a [T]> {
    /// The elements left out of the chunks (after the last chunk, or
    /// before it counting from the end), fewer than the chunk size.
    pub fn remainder(&self) -> &'a [T] {
        self.remainder
    }
}

impl<'a, I, T> Exact<I, &'a mut [T]> {
    /// The elements left out of the chunks, fewer than the chunk size.
    pub fn remainder(&mut self) -> &mut [T] {
        self.remainder
    }
    /// The elements left out of the chunks, for as long as the slice.
    pub fn into_remainder(self) -> &'a mut [T] {
        self.remainder
    }
    /// Takes the elements left out of the chunks, leaving none.
    pub fn take_remainder(&mut self) -> &'a mut [T] {
        std::mem::take(&mut self.remainder)
    }
}

impl<'a, T> ChunksExact<'a, T> {
    pub(crate) fn new(slice: &'a [T], size: usize) -> Self {
        assert!(size != 0, "chunk size must be non-zero");
        let (chunks, remainder) = slice.split_at(slice.len() - slice.len() % size);
        Exact {
            chunks: Chunks::new(chunks, size),
            remainder,
        }
    }
}

impl<'a, T> ChunksExactMut<'a, T> {
    pub(crate) fn new(slice: &'a mut [T], size: usize) -> Self {
        assert!(size != 0, "chunk size must be non-zero");
        let at = slice.len() - slice.len() % size;
        let (chunks, remainder) = slice.split_at_mut(at);
        Exact {
            chunks: ChunksMut::new(chunks, size),
            remainder,
        }
    }
}

impl<'a, T> RChunksExact<'a, T> {
    pub(crate) fn new(slice: &'a [T], size: usize) -> Self {
        assert!(size != 0, "chunk size must be non-zero");
        let (remainder, chunks) = slice.split_at(slice.len() % size);
        Exact {
            chunks: RChunks {
                slice: chunks,
                size,
            },
            remainder,
        }
    }
}

impl<'a, T> RChunksExactMut<'a, T> {
    pub(crate) fn new(slice: &'a mut [T], size: usize) -> Self {
        assert!(size != 0, "chunk size must be non-zero");
        let (remainder, chunks) = slice.split_at_mut(slice.len() % size);
        Exact {
            chunks: RChunksMut {
                slice: chunks,
                size,
            },
            remainder,
        }
    }
}

impl<I: ParallelIterator, R: Send> ParallelIterator for Exact<I, R> {
    type Item = I::Item;
    type Producer<'b>
        = I::Producer<'b>
    where
        Self: 'b;
    type Seq = I::Seq;
    fn producer(&mut self) -> Self::Producer<'_> {
        self.chunks.producer()
    }
    fn into_seq(self) -> Self::Seq {
        self.chunks.into_seq()
    }
    fn opt_len(&self) -> Option<usize> {
        self.chunks.opt_len()
    }
}

impl<I: IndexedParallelIterator, R: Send> IndexedParallelIterator for Exact<I, R> {
    fn len(&self) -> usize {
        self.chunks.len()
    }
}

/// Declares a chunking counted from the end of a slice: the iterator, its
/// producer, and how each takes its slice (`$take`) and cuts it.
macro_rules! rchunks {
    (
        $(#[$doc:meta])*
        $name:ident, $producer:ident, $bound:ident, [$($slice:tt)+];
        item $item:ty, seq $seq:ident, $rchunks:ident, $split:ident, $take:expr
    ) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name<'a, T> {
            slice: $($slice)+ [T],
            size: usize,
        }

        /// The producer of the iterator of the same name.
        #[derive(Debug)]
        pub struct $producer<'a, T> {
            slice: $($slice)+ [T],
            size: usize,
        }

        impl<'a, T> $name<'a, T> {
            pub(crate) fn new(slice: $($slice)+ [T], size: usize) -> Self {
                assert!(size != 0, "chunk size must be non-zero");
                $name { slice, size }
            }
        }

        impl<'a, T: $bound> ParallelIterator for $name<'a, T> {
            type Item = $item;
            type Producer<'b>
                = $producer<'a, T>
            where
                Self: 'b;
            type Seq = std::slice::$seq<'a, T>;
            fn producer(&mut self) -> $producer<'a, T> {
                let take: fn(&mut $($slice)+ [T]) -> $($slice)+ [T] = $take;
                $producer {
                    slice: take(&mut self.slice),
                    size: self.size,
                }
            }
            fn into_seq(self) -> Self::Seq {
                self.slice.$rchunks(self.size)
            }
            fn opt_len(&self) -> Option<usize> {
                Some(chunk_count(self.slice.len(), self.size))
            }
        }

        impl<T: $bound> IndexedParallelIterator for $name<'_, T> {
            fn len(&self) -> usize {
                chunk_count(self.slice.len(), self.size)
            }
        }

        impl<'a, T: $bound> Producer for $producer<'a, T> {
            type Item = $item;
            type IntoIter = std::slice::$seq<'a, T>;
            fn len(&self) -> usize {
                chunk_count(self.slice.len(), self.size)
            }
            fn split_at(self, index: usize) -> (Self, Self) {
                // The first `index` chunks are the slice's last elements.
                let len = self.slice.len();
                let at = len - chunk_start(index, self.size, len);
                let (rest, first) = self.slice.$split(at);
                let size = self.size;
                ($producer { slice: first, size }, $producer { slice: rest, size })
            }
            fn into_iter(self) -> Self::IntoIter {
                self.slice.$rchunks(self.size)
            }
        }
    };
}

rchunks!(
    /// `slice.par_rchunks(size)`: non-overlapping pieces of `size`
    /// elements from the end, the last (the slice's first elements)
    /// possibly shorter.
    RChunks, RChunksProducer, Sync, [&'a];
    item &'a [T], seq RChunks, rchunks, split_at, |slice| *slice
);

rchunks!(
    /// `slice.par_rchunks_mut(size)`.
    RChunksMut, RChunksMutProducer, Send, [&'a mut];
    item &'a mut [T], seq RChunksMut, rchunks_mut, split_at_mut,
    // The slice moves into the producer, so no element is lent twice.
    |slice| std::mem::take(slice)
);
