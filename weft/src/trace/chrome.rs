//! The Chrome trace event format (JSON) rendering of a [`Trace`], which the
//! Perfetto UI and `chrome://tracing` open. Written by hand: see the `trace`
//! feature's note in Cargo.toml on why serde_json is not a dependency.

use super::spans::{micros, SpanKind};
use super::{EventKind, Trace};
use std::fmt::Write as _;
use std::io::{self, Write};

impl Trace {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped_for_json() {
        assert_eq!(json_string("a\"b\\c\n"), r#""a\"b\\c\u000a""#);
    }
}
