//! Futures on the same workers (an extension over the core and the API):
//! `spawn` runs a future as a pool task, `task_state` is its poll/wake state
//! machine (loom-checked), `block_on` drives one from any thread.

#[cfg(not(loom))]
pub(crate) mod block_on;
#[cfg(not(loom))]
pub(crate) mod spawn;
pub(crate) mod task_state;
