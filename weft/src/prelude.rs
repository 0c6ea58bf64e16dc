//! `use weft::prelude::*;` brings the parallel-iterator traits into scope,
//! under rayon's names, so that a loop written for rayon runs on weft with
//! this import instead of `rayon::prelude::*`.

pub use crate::iter::{
    FromParallelIterator, IndexedParallelIterator, IntoParallelIterator, IntoParallelRefIterator,
    IntoParallelRefMutIterator, ParallelBridge, ParallelDrainFull, ParallelDrainRange,
    ParallelExtend, ParallelIterator, ParallelSlice, ParallelSliceMut, ParallelString,
};
