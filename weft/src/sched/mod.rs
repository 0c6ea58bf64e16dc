//! The core scheduler: what a pool is made of and how its workers run.
//!
//! It owns the jobs as the queues hold them (`job`), the latches their owners
//! wait on (`latch`), the state one pool's workers share (`registry`: queues,
//! drain books and the shutdown story), the wake/park protocol (`sleep`), the
//! worker loop (`worker`), the spare seats that stand in for a blocked worker
//! (`spares`), blocking a thread until a condition holds (`waiter`), the
//! per-seat counters (`counters`) and event rings (`recorder`), the list of
//! tasks that may wait for ever (`parked`) and the panic payloads weft drops
//! (`unwind`).
//!
//! It imports only the crate-wide sync facade (`crate::facade`) and the
//! thread's context (`crate::context`): nothing of the API (`crate::api`)
//! nor of the extensions (futures, `blocking`, `sync`, `trace`, `stats`),
//! which depend on it. Where an extension needs the core to remember
//! something of its own, the core holds it behind a trait (`parked::Parked`).

#[cfg(not(loom))]
pub(crate) mod counters;
#[cfg(not(loom))]
pub(crate) mod job;
#[cfg(not(loom))]
pub(crate) mod latch;
#[cfg(not(loom))]
pub(crate) mod parked;
#[cfg(all(feature = "trace", not(loom)))]
pub(crate) mod recorder;
#[cfg(not(loom))]
pub(crate) mod registry;
pub(crate) mod sleep;
#[cfg(not(loom))]
pub(crate) mod spares;
#[cfg(not(loom))]
pub(crate) mod threads;
#[cfg(not(loom))]
pub(crate) mod unwind;
#[cfg(not(loom))]
pub(crate) mod waiter;
#[cfg(not(loom))]
pub(crate) mod worker;

#[cfg(all(test, loom))]
mod sleep_loom_tests;
