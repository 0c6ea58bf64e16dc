//! Pairing a worker's start and end events into nested spans of time (tasks,
//! searches, parks), which both renderings draw.

use super::{Event, EventKind, Trace};

/// What a span of time on one worker was spent on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SpanKind {
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
pub(super) struct Span {
    pub(super) kind: SpanKind,
    pub(super) start_ns: u64,
    pub(super) end_ns: u64,
    /// How many spans enclose this one (a task that waits runs others inside).
    pub(super) depth: usize,
    /// Started before the oldest event the ring kept.
    pub(super) cut_start: bool,
    /// Still open when the snapshot was taken.
    pub(super) cut_end: bool,
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

pub(super) fn micros(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

impl Trace {
    /// Every worker's spans, paired from its events.
    pub(super) fn all_spans(&self) -> Vec<Vec<Span>> {
        self.workers
            .iter()
            .map(|worker| spans(&worker.events, self.taken_ns))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(time_ns: u64, kind: EventKind) -> Event {
        Event { time_ns, kind }
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
}
