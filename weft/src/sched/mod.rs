//! The core scheduler: what a pool is made of and how its workers run.
//!
//! It owns the jobs as the queues hold them (`job`), the latches their
//! owners wait on (`latch`), the fork-join step under `join` (`fork`), the
//! state one pool's workers share (`registry`: queues, drain books and the
//! shutdown story), the wake/park protocol (`sleep`), the worker loop
//! (`worker`), the spare seats that stand in for a blocked worker
//! (`spares`), the seat held by the thread that built its pool
//! (`adopted`), how a pool is put together and rolled back when a thread
//! fails to start (`assembly`), the fibers a waiting task suspends on (`fiber`) and their stacks
//! (`fiber_stack`: one budget for the whole process; `fiber_overflow`:
//! the report of an overflow into a stack's guard page), blocking a
//! thread until a condition holds (`waiter`), the
//! per-seat counters (`counters`) and event rings (`recorder`), the list of
//! tasks that may wait for ever (`parked`) and the panic payloads weft drops
//! (`unwind`). The task queues are crossbeam's (`deque`); `join`'s second
//! halves wait on a deque of weft's own (`join_stack`), whose owner makes no
//! fence thanks to the asymmetric fences of `barrier`.
//!
//! Under `--cfg loom` the whole core is built over loom's primitives (the
//! facade's, the context's thread-locals, `deque`'s stand-in), and
//! `worker_loom_tests` runs the shipping worker loop, `join` (`fork`),
//! registry and shutdown in loom's models; `sleep_loom_tests` checks the
//! protocol on its own, in smaller models that reach deeper interleavings,
//! `join_stack_loom_tests` the join stack on its own and `fiber_loom_tests`
//! the state machine of a fiber's wait (loom cannot follow the stack
//! switch itself: under loom no wait suspends, and every wait helps).
//!
//! The thread's context (`context`: which worker this thread is, which
//! pool it stands aside for in `weft::blocking`) is the core's too.
//!
//! It imports only the crate-wide sync facade (`crate::facade`): nothing of
//! the API (`crate::api`) nor of the extensions (futures, `blocking`, `sync`, `trace`, `stats`),
//! which depend on it. Where an extension needs the core to remember
//! something of its own, the core holds it behind a trait (`parked::Parked`).

#[cfg(not(loom))]
pub(crate) mod adopted;
#[cfg(not(loom))]
pub(crate) mod assembly;
pub(crate) mod barrier;
pub(crate) mod context;
pub(crate) mod counters;
pub(crate) mod deque;
pub(crate) mod fiber;
#[cfg(all(
    target_os = "linux",
    not(loom),
    not(miri),
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
pub(crate) mod fiber_overflow;
#[cfg(all(
    not(loom),
    not(miri),
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
pub(crate) mod fiber_stack;
pub(crate) mod fork;
pub(crate) mod job;
pub(crate) mod join_stack;
pub(crate) mod latch;
pub(crate) mod parked;
#[cfg(all(feature = "trace", not(loom)))]
pub(crate) mod recorder;
pub(crate) mod registry;
pub(crate) mod sleep;
pub(crate) mod spares;
pub(crate) mod threads;
pub(crate) mod unwind;
pub(crate) mod waiter;
pub(crate) mod worker;

#[cfg(all(test, loom))]
mod fiber_loom_tests;
#[cfg(all(test, loom))]
mod join_stack_loom_tests;
#[cfg(all(test, loom))]
mod sleep_loom_tests;
#[cfg(all(test, loom))]
mod worker_loom_tests;
