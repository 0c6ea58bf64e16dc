//! How a pool's threads are named and sized: one setup for the workers that
//! `build` starts and the spare threads that start on first use.

use std::sync::Arc;

/// The user's naming closure.
pub(crate) type NameFn = Arc<dyn Fn(usize) -> String + Send + Sync>;

/// Names and stack size for every thread of one pool.
#[derive(Clone)]
pub(crate) struct ThreadSetup {
    pub(crate) name: Option<NameFn>,
    pub(crate) stack_size: Option<usize>,
    /// Seats below this are workers' (for the default names).
    pub(crate) workers: usize,
}

impl ThreadSetup {
    /// The name of seat `index`'s thread: the user's (which may panic), or
    /// the default.
    pub(crate) fn name(&self, index: usize) -> String {
        match &self.name {
            Some(name) => name(index),
            None => self.default_name(index),
        }
    }

    /// `weft-worker-{index}` for a worker, `weft-spare-{index}` for a spare
    /// seat (whose indexes follow the workers').
    pub(crate) fn default_name(&self, index: usize) -> String {
        if index < self.workers {
            format!("weft-worker-{index}")
        } else {
            format!("weft-spare-{index}")
        }
    }

    /// A thread builder with `name` and the pool's stack size.
    pub(crate) fn builder(&self, name: String) -> crate::facade::thread::Builder {
        let thread = crate::facade::thread::Builder::new().name(name);
        match self.stack_size {
            Some(bytes) => thread.stack_size(bytes),
            None => thread,
        }
    }
}
