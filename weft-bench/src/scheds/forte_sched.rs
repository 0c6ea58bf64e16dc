//! forte adapter: a heartbeat fork-join pool (rayon_core's API, no work
//! stealing). `Worker::join` pushes its first half on the worker's own
//! queue and runs the second; the first is shared with the other workers
//! only when a heartbeat (every 100 us, round the pool's members) has come
//! to that worker since its last shared job. Like chili, the thread that
//! calls `ThreadPool::with_worker` takes a seat in the pool and works in it,
//! so a pool of `workers` threads has `workers - 1` of forte's own.
//!
//! forte pools must be `'static`: this one is leaked, as every pool of the
//! bench is (each child process runs one measurement and exits).

use super::{join_only, Cap, ForkJoin, Lacking, Peer, Support};

pub struct ForteSched(&'static forte::ThreadPool);

impl Peer for ForteSched {
    type Tasks = Lacking;
    type Waits = Lacking;
    type Calls = Lacking;
    type Futures = Lacking;
    type Joins = Self;

    fn support(cap: Cap) -> Support {
        // forte has spawn and futures, but what they queue stays on the
        // caller's own worker (a heartbeat shares work only inside join),
        // and a caller from outside the pool takes a seat and runs it
        // there: not the independent tasks those scenarios hand a pool.
        join_only(
            cap,
            "Worker::join inside ThreadPool::with_worker",
            "spawn queues on the caller's own worker, shared only by a join's heartbeat: \
             from outside the pool, the submitting thread runs every task itself",
            "spawn_future queues on the caller's own worker: from outside the pool, \
             the submitting thread polls every future itself",
        )
    }
}

/// The caller's seat is its worker in the pool, taken once; each half of a
/// join is handed the worker of the thread that runs it.
impl ForkJoin for ForteSched {
    type Ctx<'c> = &'c forte::Worker;
    type Seat<'s> = &'s forte::Worker;

    fn start(workers: usize) -> Self {
        let pool: &'static forte::ThreadPool = Box::leak(Box::new(forte::ThreadPool::new()));
        let own = workers.saturating_sub(1);
        // resize_to may start fewer threads than asked for: a smaller pool
        // would be another measurement than the one the record names.
        assert_eq!(pool.resize_to(own), own, "forte started fewer threads");
        ForteSched(pool)
    }

    fn seat<R>(&self, body: impl for<'s> FnOnce(&mut &'s forte::Worker) -> R) -> R {
        self.0.with_worker(|worker| body(&mut { worker }))
    }

    #[inline]
    fn enter<R: Send>(
        worker: &mut &forte::Worker,
        run: impl for<'c> FnOnce(&mut &'c forte::Worker) -> R + Send,
    ) -> R {
        run(worker)
    }

    #[inline]
    fn join<RA: Send, RB: Send>(
        worker: &mut &forte::Worker,
        a: impl for<'c> FnOnce(&mut &'c forte::Worker) -> RA + Send,
        b: impl for<'c> FnOnce(&mut &'c forte::Worker) -> RB + Send,
    ) -> (RA, RB) {
        worker.join(|w| a(&mut { w }), |w| b(&mut { w }))
    }
}
