//! Recording what each worker did and when (cargo feature `trace`): the
//! per-worker ring buffers the worker loop appends to, the [`Trace`] snapshot
//! [`Pool::trace`](crate::Pool::trace) takes of them, and its two renderings,
//! the Chrome trace event format and a hand-drawn SVG timeline.
//!
//! Recording is off unless [`Builder::trace`](crate::Builder::trace) turns it
//! on; without the `trace` feature every hook compiles to nothing.
//!
//! Each worker owns one ring behind its own `Mutex`. Only the owner writes to
//! it, and the only other thread that ever locks it is one taking a snapshot,
//! so on the hot path the lock is always uncontended: one atomic swap to take
//! it and one to release it, no waiting and no cache line shared with another
//! worker (each ring sits on its own cache line). That suffices; a lock-free
//! single-writer ring would save those two atomics at the cost of `unsafe`.
//! Injections from threads outside the pool have no ring of their own: they go
//! to one small shared ring (`outside`), locked by injecting threads only.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use crossbeam_utils::CachePadded;

use crate::registry::Registry;
use crate::worker::WorkerThread;

/// What happened, as recorded by a worker (or by an outside thread for
/// [`EventKind::Inject`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EventKind {
    /// The worker started running a task. The name comes from
    /// [`Pool::spawn_named`](crate::Pool::spawn_named) or
    /// [`name_current_task`](crate::name_current_task).
    TaskStart { name: Option<&'static str> },
    /// The task started by the matching `TaskStart` returned (or panicked).
    /// Tasks nest: a task that waits runs other tasks inside its own span.
    TaskEnd,
    /// The worker began sweeping other queues for work.
    SearchStart,
    /// The sweep ended, with a task (`found`) or without one.
    SearchEnd { found: bool },
    /// The worker parked (went to sleep).
    Park,
    /// The worker woke up from a park.
    Wake,
    /// The worker took a task from worker `from`'s queue.
    Steal { from: usize },
    /// A task was pushed onto the global queue, or onto worker `worker`'s
    /// pinned queue (`spawn_on`, `broadcast`), from outside that queue's
    /// owner. Recorded by the thread that pushed it.
    Inject { worker: Option<usize> },
}

/// One recorded event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Event {
    /// Nanoseconds since the pool was built (a monotonic clock).
    pub time_ns: u64,
    pub kind: EventKind,
}

/// The events one ring kept, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkerTrace {
    /// The events still in the ring, oldest first.
    pub events: Vec<Event>,
    /// How many older events the full ring dropped to make room.
    pub dropped: u64,
}

/// A snapshot of a pool's trace, from [`Pool::trace`](crate::Pool::trace).
/// Only with the cargo feature `trace`.
///
/// ```
/// # #[cfg(feature = "trace")] {
/// let pool = weft::Pool::builder().workers(2).trace(1024).build().unwrap();
/// pool.install(|| ());
/// let trace = pool.trace();
/// assert_eq!(trace.workers.len(), 2);
/// let mut json = Vec::new();
/// trace.write_chrome_json(&mut json).unwrap();
/// let mut svg = Vec::new();
/// trace.write_svg(&mut svg).unwrap();
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Trace {
    /// One entry per worker, in worker order. Empty rings if the pool was
    /// built without [`Builder::trace`](crate::Builder::trace).
    pub workers: Vec<WorkerTrace>,
    /// Injections made by threads outside the pool.
    pub outside: WorkerTrace,
    /// When the snapshot was taken, in nanoseconds since the pool was built.
    /// Spans still open then (a parked worker, a running task) end here.
    pub taken_ns: u64,
}

/// A bounded queue of events that drops its oldest when full.
struct Ring {
    events: VecDeque<Event>,
    capacity: usize,
    dropped: u64,
}

impl Ring {
    /// `preallocate`: whether to allocate the whole ring now, so that
    /// recording never allocates (workers' rings); spare seats' rings, most of
    /// which never record anything, grow on demand instead.
    fn new(capacity: usize, preallocate: bool) -> Ring {
        Ring {
            events: VecDeque::with_capacity(if preallocate { capacity } else { 0 }),
            capacity,
            dropped: 0,
        }
    }

    fn push(&mut self, event: Event) {
        if self.events.len() == self.capacity {
            self.dropped += 1;
            if self.events.pop_front().is_none() {
                return; // capacity 0: every event is dropped
            }
        }
        self.events.push_back(event);
    }

    fn snapshot(&self) -> WorkerTrace {
        WorkerTrace {
            events: self.events.iter().copied().collect(),
            dropped: self.dropped,
        }
    }
}

/// A pool's recorder, held in the registry's hooks when tracing is on.
pub(crate) struct Tracer {
    start: Instant,
    rings: Box<[CachePadded<Mutex<Ring>>]>,
    outside: Mutex<Ring>,
}

fn lock(ring: &Mutex<Ring>) -> MutexGuard<'_, Ring> {
    // Nothing panics while a ring is locked, but a poisoned ring is still valid.
    ring.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Tracer {
    /// One ring per seat: `workers` workers, then `spares` spare seats.
    pub(crate) fn new(workers: usize, spares: usize, events_per_worker: usize) -> Tracer {
        Tracer {
            start: Instant::now(),
            rings: (0..workers + spares)
                .map(|seat| {
                    CachePadded::new(Mutex::new(Ring::new(events_per_worker, seat < workers)))
                })
                .collect(),
            outside: Mutex::new(Ring::new(events_per_worker, true)),
        }
    }

    fn now_ns(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn record(&self, worker: usize, kind: EventKind) {
        let time_ns = self.now_ns();
        lock(&self.rings[worker]).push(Event { time_ns, kind });
    }

    fn record_outside(&self, kind: EventKind) {
        let mut ring = lock(&self.outside);
        // Stamped under the lock, so that the shared ring stays in time order.
        let time_ns = self.now_ns();
        ring.push(Event { time_ns, kind });
    }

    /// Names the innermost task still running on `worker`, if its start is
    /// still in the ring.
    fn name_current(&self, worker: usize, name: &'static str) {
        let mut ring = lock(&self.rings[worker]);
        let mut depth = 0usize;
        for event in ring.events.iter_mut().rev() {
            match &mut event.kind {
                EventKind::TaskEnd => depth += 1,
                EventKind::TaskStart { name: slot } => {
                    if depth == 0 {
                        *slot = Some(name);
                        return;
                    }
                    depth -= 1;
                }
                _ => {}
            }
        }
    }

    /// The rings of the first `seats` seats (those that may have recorded).
    fn snapshot(&self, seats: usize) -> Trace {
        let workers = self.rings[..seats]
            .iter()
            .map(|ring| lock(ring).snapshot())
            .collect();
        let outside = lock(&self.outside).snapshot();
        Trace {
            workers,
            outside,
            taken_ns: self.now_ns(),
        }
    }
}

/// Records `kind` on worker `worker`'s ring if the pool traces.
#[inline]
pub(crate) fn record(registry: &Registry, worker: usize, kind: EventKind) {
    if let Some(tracer) = &registry.hooks.trace {
        tracer.record(worker, kind);
    }
}

/// Records an injection into `registry` on the injecting side: the calling
/// worker's ring if it belongs to the pool, the shared outside ring otherwise.
#[inline]
pub(crate) fn record_inject(registry: &Registry, pinned: Option<usize>) {
    if let Some(tracer) = &registry.hooks.trace {
        let kind = EventKind::Inject { worker: pinned };
        match WorkerThread::current().filter(|worker| worker.is_in(registry)) {
            Some(worker) => tracer.record(worker.index(), kind),
            None => tracer.record_outside(kind),
        }
    }
}

/// Names the task running on the calling worker in its pool's trace.
pub(crate) fn name_current_task(name: &'static str) {
    if let Some(worker) = WorkerThread::current() {
        if let Some(tracer) = &worker.registry_arc().hooks.trace {
            tracer.name_current(worker.index(), name);
        }
    }
}

/// The snapshot behind `Pool::trace`.
pub(crate) fn snapshot(registry: &Registry) -> Trace {
    match &registry.hooks.trace {
        Some(tracer) => tracer.snapshot(registry.seats_in_use()),
        None => Trace {
            workers: vec![WorkerTrace::default(); registry.seats_in_use()],
            outside: WorkerTrace::default(),
            taken_ns: 0,
        },
    }
}

/// What a span of time on one worker was spent on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SpanKind {
    Task(Option<&'static str>),
    /// `found` is unknown for a search still going on at the snapshot.
    Search(Option<bool>),
    Parked,
}

impl SpanKind {
    fn same(self, other: SpanKind) -> bool {
        matches!(
            (self, other),
            (SpanKind::Task(_), SpanKind::Task(_))
                | (SpanKind::Search(_), SpanKind::Search(_))
                | (SpanKind::Parked, SpanKind::Parked)
        )
    }
}

/// A span between a start event and its end, on one worker.
#[derive(Clone, Copy, Debug)]
struct Span {
    kind: SpanKind,
    start_ns: u64,
    end_ns: u64,
    /// How many spans enclose this one (a task that waits runs others inside).
    depth: usize,
    /// Started before the oldest event the ring kept.
    cut_start: bool,
    /// Still open when the snapshot was taken.
    cut_end: bool,
}

fn opens(kind: EventKind) -> Option<SpanKind> {
    match kind {
        EventKind::TaskStart { name } => Some(SpanKind::Task(name)),
        EventKind::SearchStart => Some(SpanKind::Search(None)),
        EventKind::Park => Some(SpanKind::Parked),
        _ => None,
    }
}

fn closes(kind: EventKind) -> Option<SpanKind> {
    match kind {
        EventKind::TaskEnd => Some(SpanKind::Task(None)),
        EventKind::SearchEnd { found } => Some(SpanKind::Search(Some(found))),
        EventKind::Wake => Some(SpanKind::Parked),
        _ => None,
    }
}

/// Pairs a worker's start and end events into nested spans. Ends whose start
/// the ring dropped become spans from the oldest kept event; spans still open
/// end at `end_ns`.
fn spans(events: &[Event], end_ns: u64) -> Vec<Span> {
    let Some(first) = events.first() else {
        return Vec::new();
    };
    let first_ns = first.time_ns;
    // First pass: which ends have no start left in the ring. The last of them
    // is the outermost, so their starts go in front in reverse order.
    let mut open: Vec<SpanKind> = Vec::new();
    let mut missing: Vec<SpanKind> = Vec::new();
    for event in events {
        if let Some(kind) = opens(event.kind) {
            open.push(kind);
        } else if let Some(kind) = closes(event.kind) {
            match open.iter().rposition(|o| o.same(kind)) {
                Some(at) => open.truncate(at),
                None => missing.push(kind),
            }
        }
    }
    let mut stack: Vec<(SpanKind, u64, bool)> = missing
        .iter()
        .rev()
        .map(|kind| match kind {
            SpanKind::Task(_) => (SpanKind::Task(None), first_ns, true),
            SpanKind::Search(_) => (SpanKind::Search(None), first_ns, true),
            SpanKind::Parked => (SpanKind::Parked, first_ns, true),
        })
        .collect();
    let mut out = Vec::new();
    for event in events {
        let time = event.time_ns;
        if let Some(kind) = opens(event.kind) {
            stack.push((kind, time, false));
        } else if let Some(end) = closes(event.kind) {
            let Some(at) = stack.iter().rposition(|(kind, ..)| kind.same(end)) else {
                continue;
            };
            // Anything opened above the match and never closed (which the
            // worker loop does not do) is closed with it.
            while stack.len() > at {
                let (kind, start_ns, cut_start) = stack.pop().expect("stack is not empty");
                let kind = match (kind, end) {
                    (SpanKind::Search(_), SpanKind::Search(found)) => SpanKind::Search(found),
                    (kind, _) => kind,
                };
                out.push(Span {
                    kind,
                    start_ns,
                    end_ns: time,
                    depth: stack.len(),
                    cut_start,
                    cut_end: false,
                });
            }
        }
    }
    while let Some((kind, start_ns, cut_start)) = stack.pop() {
        out.push(Span {
            kind,
            start_ns,
            end_ns: end_ns.max(start_ns),
            depth: stack.len(),
            cut_start,
            cut_end: true,
        });
    }
    out.sort_by_key(|span| (span.start_ns, span.depth));
    out
}

fn micros(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

impl Trace {
    /// Every worker's spans, paired from its events.
    fn all_spans(&self) -> Vec<Vec<Span>> {
        self.workers
            .iter()
            .map(|worker| spans(&worker.events, self.taken_ns))
            .collect()
    }

    /// Writes the trace in the Chrome trace event format (JSON), which the
    /// Perfetto UI and `chrome://tracing` open: process 1, one thread (track)
    /// per worker with `tid` = worker index, tasks, searches and parks as
    /// complete (`"X"`) events, steals and injections as instant events.
    /// Injections from outside the pool get one more track, `tid` = number of
    /// workers. Dropped event counts are under `otherData`.
    pub fn write_chrome_json(&self, mut out: impl Write) -> io::Result<()> {
        let workers = self.workers.len();
        let mut events: Vec<String> = vec![metadata("process_name", 0, "name", "\"weft pool\"")];
        let mut track = |tid: usize, name: &str| {
            events.push(metadata("thread_name", tid, "name", &json_string(name)));
            events.push(metadata(
                "thread_sort_index",
                tid,
                "sort_index",
                &tid.to_string(),
            ));
        };
        for index in 0..workers {
            track(index, &format!("worker {index}"));
        }
        let has_outside = !self.outside.events.is_empty() || self.outside.dropped > 0;
        if has_outside {
            track(workers, "outside the pool");
        }
        for (tid, spans) in self.all_spans().into_iter().enumerate() {
            for span in spans {
                let mut args = Vec::new();
                let (name, cat) = match span.kind {
                    SpanKind::Task(name) => (name.unwrap_or("task"), "task"),
                    SpanKind::Search(found) => {
                        if let Some(found) = found {
                            args.push(format!("\"found\":{found}"));
                        }
                        ("search", "search")
                    }
                    SpanKind::Parked => ("parked", "park"),
                };
                if span.cut_start {
                    args.push("\"started_before_trace\":true".to_string());
                }
                if span.cut_end {
                    args.push("\"unfinished\":true".to_string());
                }
                events.push(format!(
                    r#"{{"ph":"X","name":{},"cat":"{cat}","pid":1,"tid":{tid},"ts":{},"dur":{},"args":{{{}}}}}"#,
                    json_string(name),
                    micros(span.start_ns),
                    micros(span.end_ns - span.start_ns),
                    args.join(",")
                ));
            }
        }
        let instants = self
            .workers
            .iter()
            .enumerate()
            .chain(has_outside.then_some((workers, &self.outside)));
        for (tid, worker) in instants {
            for event in &worker.events {
                let (name, args) = match event.kind {
                    EventKind::Steal { from } => ("steal", format!("\"from\":{from}")),
                    EventKind::Inject { worker: Some(to) } => {
                        ("inject", format!("\"worker\":{to}"))
                    }
                    EventKind::Inject { worker: None } => ("inject", "\"worker\":null".to_string()),
                    _ => continue,
                };
                events.push(format!(
                    r#"{{"ph":"i","s":"t","name":"{name}","cat":"{name}","pid":1,"tid":{tid},"ts":{},"args":{{{args}}}}}"#,
                    micros(event.time_ns)
                ));
            }
        }
        let dropped: Vec<String> = self
            .workers
            .iter()
            .map(|worker| worker.dropped.to_string())
            .collect();
        write!(
            out,
            "{{\"displayTimeUnit\":\"ms\",\"otherData\":{{\"dropped_events_per_worker\":[{}],\"dropped_events_outside\":{}}},\"traceEvents\":[\n{}\n]}}\n",
            dropped.join(","),
            self.outside.dropped,
            events.join(",\n")
        )?;
        out.flush()
    }

    /// Draws the per-worker timeline as an SVG image, 1200 pixels wide and
    /// 30 pixels per row: a row per worker (and one for injections from
    /// outside the pool, if any), tasks as blue boxes (tasks run inside a
    /// waiting task drawn inset), searching in orange, parked in grey, steals
    /// and injections as markers, a time axis in milliseconds since the pool
    /// was built, and a legend.
    pub fn write_svg(&self, mut out: impl Write) -> io::Result<()> {
        out.write_all(self.svg().as_bytes())?;
        out.flush()
    }

    fn svg(&self) -> String {
        const WIDTH: f64 = 1200.0;
        const LEFT: f64 = 110.0;
        const RIGHT: f64 = 20.0;
        const TOP: f64 = 36.0;
        const ROW: f64 = 30.0;
        const BAR: f64 = 22.0;
        const TASK: &str = "#4e79a7";
        const NESTED: &str = "#8cb3dc";
        const SEARCH: &str = "#f28e2b";
        const PARKED: &str = "#cfd3da";
        const STEAL: &str = "#d62728";
        const INJECT: &str = "#2ca02c";

        let workers = self.workers.len();
        let has_outside = !self.outside.events.is_empty();
        let rows = workers + usize::from(has_outside);
        let height = TOP + ROW * rows as f64 + 24.0;
        let spans = self.all_spans();

        // The window: from the pool's start (or, if a ring dropped events,
        // from the oldest event kept) to the snapshot.
        let rings = || self.workers.iter().chain([&self.outside]);
        let start_ns = if rings().any(|ring| ring.dropped > 0) {
            rings()
                .filter_map(|ring| ring.events.first())
                .map(|event| event.time_ns)
                .min()
                .unwrap_or(0)
        } else {
            0
        };
        let end_ns = self.taken_ns.max(start_ns + 1);
        let scale = (WIDTH - LEFT - RIGHT) / (end_ns - start_ns) as f64;
        let x = |ns: u64| LEFT + ns.saturating_sub(start_ns) as f64 * scale;

        let tasks: usize = spans
            .iter()
            .flatten()
            .filter(|span| matches!(span.kind, SpanKind::Task(_)) && !span.cut_start)
            .count();
        let steals = self
            .workers
            .iter()
            .flat_map(|worker| &worker.events)
            .filter(|event| matches!(event.kind, EventKind::Steal { .. }))
            .count();
        let dropped: u64 = self
            .workers
            .iter()
            .map(|worker| worker.dropped)
            .sum::<u64>()
            + self.outside.dropped;

        let mut svg = String::new();
        let _ = writeln!(
            svg,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="Helvetica, Arial, sans-serif" font-size="12">"#
        );
        let _ = writeln!(
            svg,
            r#"<rect width="{WIDTH}" height="{height}" fill="white"/>"#
        );
        let mut title = format!(
            "weft: {workers} workers, {tasks} tasks, {steals} steals, {:.1} ms",
            (end_ns - start_ns) as f64 / 1e6
        );
        if dropped > 0 {
            let _ = write!(title, " ({dropped} oldest events dropped)");
        }
        let _ = writeln!(
            svg,
            r#"<text x="10" y="22" font-size="15" font-weight="bold">{}</text>"#,
            escape(&title)
        );

        // Legend, right-aligned on the title line.
        let legend: [(&str, &str); 6] = [
            ("task", TASK),
            ("nested task", NESTED),
            ("searching", SEARCH),
            ("parked", PARKED),
            ("steal", STEAL),
            ("inject", INJECT),
        ];
        let mut lx = WIDTH - RIGHT - 530.0;
        for (label, colour) in legend {
            if label == "steal" || label == "inject" {
                let _ = writeln!(
                    svg,
                    r#"<path d="M{} 10 l10 0 l-5 8 z" fill="{colour}"/>"#,
                    lx
                );
            } else {
                let _ = writeln!(
                    svg,
                    r##"<rect x="{lx}" y="9" width="14" height="12" fill="{colour}" stroke="#555" stroke-width="0.5"/>"##
                );
            }
            let _ = writeln!(svg, r#"<text x="{}" y="19">{label}</text>"#, lx + 18.0);
            lx += if label == "nested task" { 104.0 } else { 84.0 };
        }

        // Time axis: ticks at 1, 2 or 5 times a power of ten milliseconds.
        let span_ms = (end_ns - start_ns) as f64 / 1e6;
        let step_ms = nice_step(span_ms / 15.0);
        let axis_y = TOP + ROW * rows as f64;
        let first_tick = (start_ns as f64 / 1e6 / step_ms).ceil() as u64;
        let mut tick = first_tick;
        loop {
            let ms = tick as f64 * step_ms;
            let ns = (ms * 1e6).round() as u64;
            if ns > end_ns {
                break;
            }
            let tx = x(ns);
            let _ = writeln!(
                svg,
                r##"<line x1="{tx:.1}" y1="{TOP}" x2="{tx:.1}" y2="{}" stroke="#e6e6e6"/><text x="{tx:.1}" y="{}" text-anchor="middle" fill="#333">{}</text>"##,
                axis_y + 4.0,
                axis_y + 17.0,
                format_ms(ms, step_ms)
            );
            tick += 1;
        }
        let _ = writeln!(
            svg,
            r##"<line x1="{LEFT}" y1="{axis_y}" x2="{}" y2="{axis_y}" stroke="#333"/><text x="{}" y="{}" text-anchor="end" fill="#333">ms</text>"##,
            WIDTH - RIGHT,
            LEFT - 10.0,
            axis_y + 17.0
        );

        for (index, worker_spans) in spans.iter().enumerate() {
            let top = TOP + ROW * index as f64;
            let bar = top + (ROW - BAR) / 2.0;
            let _ = writeln!(svg, r#"<g class="worker" data-worker="{index}">"#);
            let fill = if index % 2 == 0 { "#f7f7f7" } else { "#ffffff" };
            let _ = writeln!(
                svg,
                r##"<rect x="0" y="{top}" width="{WIDTH}" height="{ROW}" fill="{fill}"/><text x="{}" y="{}" text-anchor="end" fill="#222">worker {index}</text>"##,
                LEFT - 10.0,
                top + ROW / 2.0 + 4.0
            );
            // Enclosing spans first, so nested ones are drawn on top, and
            // searches (often a few microseconds, under a pixel) over the
            // task they found, so that they show at all.
            let mut ordered: Vec<&Span> = worker_spans.iter().collect();
            ordered.sort_by_key(|span| (span.depth, matches!(span.kind, SpanKind::Search(_))));
            for span in ordered {
                let inset = (span.depth as f64 * 4.0).min(BAR / 2.0 - 2.0);
                let (y, h) = (bar + inset, BAR - 2.0 * inset);
                let x0 = x(span.start_ns);
                let w = (x(span.end_ns) - x0).max(1.0);
                let (colour, stroke, label) = match span.kind {
                    SpanKind::Task(name) => {
                        let colour = if span.depth == 0 { TASK } else { NESTED };
                        (colour, "#2c4a6e", name)
                    }
                    SpanKind::Search(_) => (SEARCH, "none", None),
                    SpanKind::Parked => (PARKED, "none", None),
                };
                let _ = writeln!(
                    svg,
                    r#"<rect x="{x0:.2}" y="{y:.1}" width="{w:.2}" height="{h:.1}" fill="{colour}" stroke="{stroke}" stroke-width="0.6"/>"#
                );
                if let Some(label) = label {
                    if w > 7.0 * label.len() as f64 + 6.0 {
                        let _ = writeln!(
                            svg,
                            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="11" fill="white">{}</text>"#,
                            x0 + w / 2.0,
                            y + h / 2.0 + 4.0,
                            escape(label)
                        );
                    }
                }
            }
            for event in &self.workers[index].events {
                let colour = match event.kind {
                    EventKind::Steal { .. } => STEAL,
                    EventKind::Inject { .. } => INJECT,
                    _ => continue,
                };
                let _ = writeln!(
                    svg,
                    r#"<path d="M{:.2} {top} l-4 0 l4 6 l4 -6 z" fill="{colour}"/>"#,
                    x(event.time_ns)
                );
            }
            let _ = writeln!(svg, "</g>");
        }
        if has_outside {
            let top = TOP + ROW * workers as f64;
            let _ = writeln!(
                svg,
                r##"<g class="outside"><text x="{}" y="{}" text-anchor="end" fill="#222">outside</text>"##,
                LEFT - 10.0,
                top + ROW / 2.0 + 4.0
            );
            for event in &self.outside.events {
                let _ = writeln!(
                    svg,
                    r#"<path d="M{:.2} {} l-5 0 l5 9 l5 -9 z" fill="{INJECT}"/>"#,
                    x(event.time_ns),
                    top + ROW / 2.0 - 5.0
                );
            }
            let _ = writeln!(svg, "</g>");
        }
        svg.push_str("</svg>\n");
        svg
    }
}

/// The smallest of 1, 2 or 5 times a power of ten that is at least `rough`.
fn nice_step(rough: f64) -> f64 {
    if rough <= 0.0 || !rough.is_finite() {
        return 1.0;
    }
    let power = 10f64.powf(rough.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|step| *step >= rough)
        .unwrap_or(10.0 * power)
}

/// A tick label with as many decimals as the step needs.
fn format_ms(ms: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    let text = format!("{ms:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// A metadata ("M") event of the Chrome format; `value` is JSON already.
fn metadata(name: &str, tid: usize, key: &str, value: &str) -> String {
    format!(r#"{{"ph":"M","name":"{name}","pid":1,"tid":{tid},"args":{{"{key}":{value}}}}}"#)
}

/// `text` as a JSON string literal.
fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `text` with XML's special characters escaped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(time_ns: u64, kind: EventKind) -> Event {
        Event { time_ns, kind }
    }

    #[test]
    fn a_full_ring_drops_the_oldest() {
        let mut ring = Ring::new(3, true);
        for time in 0..5 {
            ring.push(event(time, EventKind::Park));
        }
        let kept = ring.snapshot();
        assert_eq!(kept.dropped, 2);
        let times: Vec<u64> = kept.events.iter().map(|e| e.time_ns).collect();
        assert_eq!(times, [2, 3, 4]);
    }

    #[test]
    fn a_ring_of_zero_keeps_nothing() {
        let mut ring = Ring::new(0, false);
        ring.push(event(1, EventKind::Park));
        assert_eq!(
            ring.snapshot(),
            WorkerTrace {
                events: Vec::new(),
                dropped: 1
            }
        );
    }

    #[test]
    fn spans_nest_and_cut_ends_are_filled_in() {
        use EventKind::*;
        // The start of the outer task was dropped; the park is still open.
        let events = [
            event(10, SearchStart),
            event(12, SearchEnd { found: true }),
            event(
                13,
                TaskStart {
                    name: Some("inner"),
                },
            ),
            event(20, TaskEnd),
            event(21, TaskEnd),
            event(22, Park),
        ];
        let spans = spans(&events, 30);
        let summary: Vec<(SpanKind, u64, u64, usize)> = spans
            .iter()
            .map(|s| (s.kind, s.start_ns, s.end_ns, s.depth))
            .collect();
        assert_eq!(
            summary,
            [
                (SpanKind::Task(None), 10, 21, 0),
                (SpanKind::Search(Some(true)), 10, 12, 1),
                (SpanKind::Task(Some("inner")), 13, 20, 1),
                (SpanKind::Parked, 22, 30, 0),
            ]
        );
        assert!(spans[0].cut_start && spans[3].cut_end);
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(1.5), 2.0);
        assert_eq!(nice_step(24.0), 50.0);
        assert_eq!(format_ms(0.25, 0.05), "0.25");
        assert_eq!(format_ms(20.0, 10.0), "20");
        assert_eq!(format_ms(0.0, 0.5), "0");
        assert_eq!(json_string("a\"b\\c\n"), r#""a\"b\\c\u000a""#);
        assert_eq!(format_ms(1.5, 0.5), "1.5");
    }
}
