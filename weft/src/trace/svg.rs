//! The SVG timeline rendering of a [`Trace`]: one row per worker, drawn by
//! hand so that the `trace` feature adds no dependency.

use super::spans::{Span, SpanKind};
use super::{EventKind, Trace};
use std::fmt::Write as _;
use std::io::{self, Write};

impl Trace {
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

    #[test]
    fn ticks_are_round() {
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(1.5), 2.0);
        assert_eq!(nice_step(24.0), 50.0);
        assert_eq!(format_ms(0.25, 0.05), "0.25");
        assert_eq!(format_ms(20.0, 10.0), "20");
        assert_eq!(format_ms(0.0, 0.5), "0");
        assert_eq!(format_ms(1.5, 0.5), "1.5");
    }
}
