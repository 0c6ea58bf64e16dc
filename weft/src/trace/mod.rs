//! What each worker did and when (cargo feature `trace`): the [`Trace`]
//! snapshot [`Pool::trace`](crate::Pool::trace) takes of the per-worker
//! event rings the scheduler records into, rendered in the Chrome trace
//! event format ([`Trace::write_chrome_json`]) or as an SVG timeline
//! ([`Trace::write_svg`]).
//!
//! Recording is off unless [`Builder::trace`](crate::Builder::trace) turns it
//! on; without the `trace` feature every hook compiles to nothing.

// The rings are the core's (`sched/recorder.rs`); the two renderings live in
// `chrome.rs` and `svg.rs`, over the spans `spans.rs` pairs from the events.

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
