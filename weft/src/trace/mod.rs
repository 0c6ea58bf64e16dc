//! What each worker did and when (cargo feature `trace`): the [`Trace`]
//! snapshot [`Pool::trace`](crate::Pool::trace) takes of the per-worker
//! event rings the core records into (`sched/recorder.rs`). Its two renderings, the
//! Chrome trace event format and a hand-drawn SVG timeline, live in
//! `trace/chrome.rs` and `trace/svg.rs`, over the spans `trace/spans.rs`
//! pairs from the events.
//!
//! Recording is off unless [`Builder::trace`](crate::Builder::trace) turns it
//! on; without the `trace` feature every hook compiles to nothing.

use crate::Pool;

/// [`Trace::write_chrome_json`].
mod chrome;
/// Events paired into the spans both renderings draw.
mod spans;
/// [`Trace::write_svg`].
mod svg;

pub use crate::sched::recorder::{Event, EventKind, Trace, WorkerTrace};

impl Pool {
    /// A snapshot of the events each worker recorded: tasks, searches, parks,
    /// steals, injections (see [`Trace`]). Empty unless the pool was built
    /// with [`Builder::trace`](crate::Builder::trace). Only with the cargo
    /// feature `trace`.
    #[cfg_attr(docsrs, doc(cfg(feature = "trace")))]
    pub fn trace(&self) -> Trace {
        crate::sched::recorder::snapshot(self.registry())
    }
}
