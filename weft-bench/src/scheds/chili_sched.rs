//! chili adapter: a heartbeat fork-join pool with `join` only (no spawn).
//! chili counts the thread that opens the scope as one of its threads, so a
//! pool of `workers` threads spawns `workers - 1` and the caller joins in.

use super::{join_only, Cap, ForkJoin, Lacking, Peer, Support};
use std::num::NonZeroUsize;

pub struct ChiliSched(chili::ThreadPool);

impl Peer for ChiliSched {
    type Tasks = Lacking;
    type Waits = Lacking;
    type Calls = Lacking;
    type Futures = Lacking;
    type Joins = Self;

    fn support(cap: Cap) -> Support {
        let no_tasks = "join only: no way to submit independent tasks";
        join_only(cap, "Scope::join", no_tasks, "no futures: join only")
    }
}

/// The caller's seat is a scope of the pool, opened once; each half of a
/// join is handed the scope of the thread that runs it.
impl ForkJoin for ChiliSched {
    type Ctx<'c> = chili::Scope<'c>;
    type Seat<'s> = chili::Scope<'s>;

    fn start(workers: usize) -> Self {
        ChiliSched(chili::ThreadPool::with_config(chili::Config {
            thread_count: NonZeroUsize::new(workers),
            ..Default::default()
        }))
    }

    fn seat<R>(&self, body: impl for<'s> FnOnce(&mut chili::Scope<'s>) -> R) -> R {
        body(&mut self.0.scope())
    }

    #[inline]
    fn enter<R: Send>(
        scope: &mut chili::Scope<'_>,
        run: impl for<'c> FnOnce(&mut chili::Scope<'c>) -> R + Send,
    ) -> R {
        run(scope)
    }

    #[inline]
    fn join<RA: Send, RB: Send>(
        scope: &mut chili::Scope<'_>,
        a: impl for<'c> FnOnce(&mut chili::Scope<'c>) -> RA + Send,
        b: impl for<'c> FnOnce(&mut chili::Scope<'c>) -> RB + Send,
    ) -> (RA, RB) {
        scope.join(a, b)
    }
}
