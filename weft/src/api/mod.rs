//! The API a user calls, over the core (`crate::sched`): [`Pool`](crate::Pool),
//! [`Handle`](crate::Handle) and [`Builder`](crate::Builder) (`pool`,
//! `builder`), the global pool and the one rule for which pool a free
//! function acts on (`global`), `join`, `scope`, fire-and-forget tasks with
//! their [`JoinHandle`](crate::JoinHandle) and
//! [`AbortHandle`](crate::AbortHandle) (`task`), and groups of them joined
//! as they finish, [`JoinSet`](crate::JoinSet) (`join_set`), and the free
//! functions (`free`: `weft::spawn`, `spawn_fifo`, `broadcast`,
//! `spawn_broadcast`, `yield_now`, `yield_local`, `current_worker_index` and
//! rayon's other names for the current pool), which the crate root
//! re-exports.
//!
//! It depends on the core and never on the extensions (futures, `blocking`,
//! `sync`, `trace`, `stats`): those add their methods to `Pool` in their own
//! modules (`impl Pool` blocks beside the code they call).

pub(crate) mod builder;
pub(crate) mod free;
pub(crate) mod global;
pub(crate) mod handle;
pub(crate) mod join;
pub(crate) mod join_set;
pub(crate) mod on_workers;
pub(crate) mod pool;
pub(crate) mod scope;
pub(crate) mod task;
