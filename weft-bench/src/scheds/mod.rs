//! Scheduler adapters. Scenarios are written once against [`Sched`] (submit a
//! task, wait for a group), [`BlockingPrims`] (events and ordered sections
//! that block the worker), [`BlockingCall`] (how a task makes a call that
//! blocks its thread), [`AsyncSched`] (runtimes of futures) and [`ForkJoin`]
//! (`join` from inside the pool); every method is generic, so each
//! scheduler's own primitive is called directly, monomorphised, with no extra
//! boxing layered on top.
//!
//! A peer is its adapter file, its `mod` line and its line in
//! [`peer_table!`] (the `mod` lines stay out of the table so that rustfmt,
//! which does not expand macros, still finds the adapters). The adapter says,
//! in its [`Peer`] impl, which of those traits it fills (the others are
//! [`Lacking`]) and, for every [`Cap`], the primitive it uses or why it has
//! none; a case's fit follows from the capabilities it needs
//! (`scenarios/case.rs`), and [`with_peer!`] runs a case's generic body on
//! the adapter's type for the role the case uses.

pub mod async_executor_sched;
pub mod bare_threads;
pub mod blocking;
pub mod chili_sched;
pub mod forte_sched;
mod lacking;
pub mod rayon_sched;
pub mod threadpool_sched;
pub mod tokio_sched;
pub mod weft_sched;

pub use lacking::Lacking;

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Every scheduler the suite knows, in report order, one line each:
/// variant, the name on the command line and in reports, the adapter module
/// and its type. Expands into `$then!` with the table after `$args`, so the
/// one list serves [`SchedKind`] and [`with_peer!`] alike.
#[macro_export]
#[doc(hidden)]
macro_rules! peer_table {
    ($then:ident { $($args:tt)* }) => {
        $crate::$then! { $($args)* ;
            Weft "weft" weft_sched::WeftSched,
            Rayon "rayon" rayon_sched::RayonSched,
            RayonOnWeft "rayon-on-weft" rayon_sched::RayonSched,
            Tokio "tokio" tokio_sched::TokioSched,
            AsyncExecutor "async-executor" async_executor_sched::AsyncExecutorSched,
            Threadpool "threadpool" threadpool_sched::ThreadpoolSched,
            Chili "chili" chili_sched::ChiliSched,
            Forte "forte" forte_sched::ForteSched,
            Std "std" bare_threads::BareThreads,
        }
    };
}

/// Declares [`SchedKind`] from [`peer_table!`].
#[macro_export]
#[doc(hidden)]
macro_rules! declare_peers {
    (; $($kind:ident $name:literal $module:ident :: $adapter:ident,)*) => {
        #[derive(
            Clone,
            Copy,
            Debug,
            PartialEq,
            Eq,
            Hash,
            PartialOrd,
            Ord,
            clap::ValueEnum,
            serde::Serialize,
            serde::Deserialize,
        )]
        pub enum SchedKind {
            $(
                #[value(name = $name)]
                #[serde(rename = $name)]
                $kind,
            )*
        }

        impl SchedKind {
            pub const ALL: &'static [SchedKind] = &[$(SchedKind::$kind),*];

            pub fn name(self) -> &'static str {
                match self {
                    $(SchedKind::$kind => $name,)*
                }
            }

            /// What the adapter declares for `cap`.
            pub fn support(self, cap: Cap) -> Support {
                match self {
                    $(SchedKind::$kind => <$module::$adapter as Peer>::support(cap),)*
                }
            }
        }
    };
}

/// The [`ForkJoin`] of a pool that finds itself from the worker thread a
/// join runs on (weft, rayon): each run is sent in with `install`, and the
/// halves are handed nothing. `$adapter` wraps the `$pool` as its field 0.
macro_rules! installed_fork_join {
    ($adapter:ty, $pool:ty, $join:path) => {
        impl $crate::scheds::ForkJoin for $adapter {
            type Ctx<'c> = ();
            type Seat<'s> = &'s $pool;

            fn start(workers: usize) -> Self {
                <Self as $crate::scheds::Sched>::build(workers)
            }

            fn seat<R>(&self, body: impl for<'s> FnOnce(&mut &'s $pool) -> R) -> R {
                body(&mut &self.0)
            }

            #[inline]
            fn enter<R: Send>(
                pool: &mut &$pool,
                run: impl for<'c> FnOnce(&mut ()) -> R + Send,
            ) -> R {
                pool.install(|| run(&mut ()))
            }

            #[inline]
            fn join<RA: Send, RB: Send>(
                _: &mut (),
                a: impl for<'c> FnOnce(&mut ()) -> RA + Send,
                b: impl for<'c> FnOnce(&mut ()) -> RB + Send,
            ) -> (RA, RB) {
                $join(|| a(&mut ()), || b(&mut ()))
            }
        }
    };
}
use installed_fork_join;

peer_table!(declare_peers {});

impl SchedKind {
    /// Whether this peer runs in a second build of this source
    /// (`crate::rayon_on_weft`), not in this binary: such a peer runs only
    /// when `--peers` names it, since that build takes minutes the first time.
    pub fn built_apart(self) -> bool {
        self == SchedKind::RayonOnWeft
    }

    /// The peers a run compares with when `--peers` names none.
    pub fn defaults() -> Vec<SchedKind> {
        Self::ALL
            .iter()
            .copied()
            .filter(|kind| !kind.built_apart())
            .collect()
    }
}

/// `with_peer!(kind, Role, f(args))` calls `f::<R>(args)` where `R` is the
/// type that fills `Role` (an associated type of [`Peer`]) for `kind`'s
/// adapter: [`Lacking`] where it has none, which the case's fit keeps from
/// ever being run.
#[macro_export]
macro_rules! with_peer {
    ($kind:expr, $role:ident, $f:ident $args:tt) => {
        $crate::peer_table!(dispatch_peer { $kind, $role, $f $args })
    };
}

#[macro_export]
#[doc(hidden)]
macro_rules! dispatch_peer {
    ($kind:expr, $role:ident, $f:ident $args:tt;
     $($variant:ident $name:literal $module:ident :: $adapter:ident,)*) => {
        match $kind {
            $(
                $crate::scheds::SchedKind::$variant => $f::<
                    <$crate::scheds::$module::$adapter as $crate::scheds::Peer>::$role,
                > $args,
            )*
        }
    };
}

/// What a case may need of a scheduler. Each adapter says, for every one,
/// the primitive it uses ([`Support::Has`]) or why it has none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cap {
    /// Independent closure tasks, submitted from any thread, tasks included.
    Spawn,
    /// A group of tasks the submitting thread waits for.
    WaitGroup,
    /// Auto-reset events that tasks wait on (marl's Event).
    TaskEvent,
    /// Ordered sections that tasks wait their turn for (marl's Ticket).
    TaskTicket,
    /// A task that waits frees its worker meanwhile (what marl's fibers give).
    FreeingWaits,
    /// `join`: two closures, possibly in parallel, from inside the pool.
    ForkJoin,
    /// Futures spawned from any thread, and a `block_on` for the submitter.
    Futures,
    /// A `yield_now` for futures.
    YieldNow,
    /// One release for many waiting futures.
    WakeAll,
    /// A stand-in for a worker whose task makes a blocking call.
    StandIn,
    /// No scheduler at all: bare threads handed their tasks directly, the
    /// machine's floor for rounds of tasks.
    Floor,
    /// rayon-style parallel iterators (`par_iter`, `into_par_iter`,
    /// `par_chunks_mut`, `par_sort_unstable`...), called from outside the pool.
    ParIter,
    /// A scope whose spawned closures may borrow from the caller's stack and
    /// which ends once they have all run (rayon's and weft's `scope`), its
    /// tasks shared with the pool's other workers.
    ScopeSpawn,
}

/// An adapter's word on one [`Cap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Support {
    /// The primitive that provides it (weft's own, or the peer's nearest equivalent).
    Has(&'static str),
    /// Why the scheduler cannot provide it.
    Lacks(&'static str),
}

/// What a pool that only forks by `join` (chili, forte) supports: `join`
/// with its note, and nothing else, for the reason given for tasks (spawn,
/// waits, stand-ins) or for futures.
pub fn join_only(
    cap: Cap,
    join: &'static str,
    no_tasks: &'static str,
    no_futures: &'static str,
) -> Support {
    match cap {
        Cap::ForkJoin => Support::Has(join),
        Cap::Futures | Cap::YieldNow | Cap::WakeAll => Support::Lacks(no_futures),
        Cap::Spawn
        | Cap::WaitGroup
        | Cap::TaskEvent
        | Cap::TaskTicket
        | Cap::FreeingWaits
        | Cap::StandIn => Support::Lacks(no_tasks),
        Cap::Floor => Support::Lacks("a scheduler: the std row is the floor"),
        Cap::ParIter => Support::Lacks("no parallel iterators: join only"),
        Cap::ScopeSpawn => Support::Lacks(no_tasks),
    }
}

/// One adapter: the type that fills each role a scenario is written
/// against ([`Lacking`] where it fills none), and what it supports.
pub trait Peer {
    type Tasks: Sched;
    type Waits: BlockingPrims;
    type Calls: BlockingCall;
    type Futures: AsyncSched;
    type Joins: ForkJoin;

    fn support(cap: Cap) -> Support;
}

/// A pool that runs independent tasks submitted from any thread, including
/// from its own tasks.
pub trait Sched: Send + Sync + Sized + 'static {
    /// What the submitting thread waits on for a group of tasks.
    type WaitGroup: WaitGroupLike;

    fn build(workers: usize) -> Self;

    fn spawn<F: FnOnce() + Send + 'static>(&self, task: F);

    /// Which worker is running the caller: the scheduler's own index where
    /// it has one, else a per-thread id. Used to see whether a round of
    /// tasks spread over every worker.
    fn worker_index() -> Option<usize>;
}

/// How a task of this pool makes a call that blocks its thread: through the
/// pool's stand-in API where it has one (weft, tokio), else directly, holding
/// the worker for the whole call (rayon, threadpool).
pub trait BlockingCall: Sched {
    /// Runs `call` from inside one of the pool's tasks.
    fn call_blocking<R>(call: impl FnOnce() -> R) -> R;
}

/// A runtime of futures. Spawning goes through the runtime's handle both
/// from the submitting thread and from inside its tasks: on a worker, weft's
/// `Pool::spawn_future` and tokio's `Runtime::spawn` take the same local-queue
/// path as their free functions (`weft::spawn_future`, `tokio::spawn`), and
/// async-executor has no free function at all, so one path serves all three.
pub trait AsyncSched: Sched {
    /// What many futures wait on to be released at once (async/fan-out).
    type Gate: GateLike;

    /// Runs `future` as a detached task (its result is not waited for).
    fn spawn_detached<F: Future<Output = ()> + Send + 'static>(&self, future: F);

    /// Drives `future` to completion on the calling thread, which is never
    /// one of the runtime's workers in the scenarios: it parks while pending.
    fn block_on<F: Future>(&self, future: F) -> F::Output;

    /// The runtime's own `yield_now`.
    fn yield_now() -> impl Future<Output = ()> + Send + 'static;
}

/// A pool that forks by `join` from inside itself (the join/* scenarios).
/// Joins run where the pool hands out a context: weft and rayon find their
/// pool in a thread-local, chili passes its scope to each half and forte its
/// worker, so the context is what each half gets. A run enters the pool from
/// the caller's seat: for weft and rayon each run is sent in (`install`);
/// chili and forte count the calling thread as one of their threads, and it
/// takes its place in the pool once, for every run.
pub trait ForkJoin: Sized {
    /// What each half of a join is handed.
    type Ctx<'c>;
    /// Where the caller stands between runs.
    type Seat<'s>;

    /// A pool of `workers` threads in all.
    fn start(workers: usize) -> Self;

    /// Calls `body` from the caller's seat.
    fn seat<R>(&self, body: impl for<'s> FnOnce(&mut Self::Seat<'s>) -> R) -> R;

    /// Runs `run` inside the pool, from `seat`.
    fn enter<R: Send>(
        seat: &mut Self::Seat<'_>,
        run: impl for<'c> FnOnce(&mut Self::Ctx<'c>) -> R + Send,
    ) -> R;

    /// The pool's own `join`.
    fn join<RA: Send, RB: Send>(
        ctx: &mut Self::Ctx<'_>,
        a: impl for<'c> FnOnce(&mut Self::Ctx<'c>) -> RA + Send,
        b: impl for<'c> FnOnce(&mut Self::Ctx<'c>) -> RB + Send,
    ) -> (RA, RB);
}

/// A release for many waiting futures at once.
pub trait GateLike: Clone + Send + Sync + 'static {
    fn new() -> Self;
    /// A future that completes once the gate is released, provided it was
    /// polled at least once before the release.
    fn wait(&self) -> impl Future<Output = ()> + Send + 'static;
    fn release(&self);
}

/// Waiting primitives used *inside* tasks, blocking the worker thread.
pub trait BlockingPrims: Sched {
    type Event: EventLike;
    type Tickets: TicketQueueLike;
}

pub trait WaitGroupLike: Clone + Send + Sync + 'static {
    fn new() -> Self;
    fn add(&self, n: usize);
    fn done(&self);
    fn wait(&self);
}

/// An auto-reset event: one `wait` consumes one `signal`.
pub trait EventLike: Clone + Send + Sync + 'static {
    fn new_auto() -> Self;
    fn signal(&self);
    fn wait(&self);
}

/// Ordered sections: tickets are served in the order they were taken.
pub trait TicketQueueLike: Send + Sync + 'static {
    type Ticket: TicketLike;
    fn new() -> Self;
    fn take(&self) -> Self::Ticket;
}

pub trait TicketLike: Send + 'static {
    /// Blocks until every earlier ticket is done.
    fn wait(&self);
    fn done(self);
}

/// A small per-thread id for schedulers with no worker index of their own.
pub fn thread_slot() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SLOT: usize = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    SLOT.with(|s| *s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::any::TypeId;

    fn fills<T: 'static>() -> bool {
        TypeId::of::<T>() != TypeId::of::<Lacking>()
    }

    /// A run that names no peers must not build the second binary, nor
    /// leave any peer of this binary out.
    #[test]
    fn by_default_every_peer_runs_but_those_built_apart() {
        let defaults = SchedKind::defaults();
        assert!(!defaults.contains(&SchedKind::RayonOnWeft));
        assert_eq!(defaults.len(), SchedKind::ALL.len() - 1);
        assert!(SchedKind::RayonOnWeft.built_apart());
    }

    /// A capability an adapter claims must come with the type that runs it,
    /// or a case that needs it would reach [`Lacking`].
    #[test]
    fn what_an_adapter_has_it_can_run() {
        for &kind in SchedKind::ALL {
            let has = |cap| matches!(kind.support(cap), Support::Has(_));
            let name = kind.name();
            if has(Cap::Spawn) || has(Cap::WaitGroup) {
                assert!(crate::with_peer!(kind, Tasks, fills()), "{name}: spawn");
            }
            if has(Cap::ForkJoin) {
                assert!(crate::with_peer!(kind, Joins, fills()), "{name}: join");
            }
            if has(Cap::Futures) || has(Cap::YieldNow) || has(Cap::WakeAll) {
                assert!(crate::with_peer!(kind, Futures, fills()), "{name}: futures");
            }
            if has(Cap::StandIn) {
                assert!(crate::with_peer!(kind, Calls, fills()), "{name}: stand-in");
            }
        }
    }
}
