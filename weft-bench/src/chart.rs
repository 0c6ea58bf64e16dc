//! One SVG bar chart per scenario (plotters, SVG backend only): a group of
//! bars per (variant, workers), one bar per scheduler side by side, the bar
//! at the median and a whisker from min to max.

use crate::record::Status;
use crate::report::Table;
use crate::stats::Spread;
use plotters::prelude::*;
use std::io;
use std::path::Path;

pub fn file_name(scenario: &str) -> String {
    format!("{}.svg", scenario.replace('/', "_"))
}

/// A fixed colour per scheduler, so charts read alike; weft stands out.
fn colour(sched: &str) -> RGBColor {
    match sched {
        "weft" => RGBColor(214, 39, 40),
        "rayon" => RGBColor(31, 119, 180),
        "rayon-on-weft" => RGBColor(23, 190, 207),
        "tokio" => RGBColor(44, 160, 44),
        "threadpool" => RGBColor(255, 127, 14),
        "chili" => RGBColor(148, 103, 189),
        "async-executor" => RGBColor(140, 86, 75),
        _ => RGBColor(127, 127, 127),
    }
}

struct Group {
    label: String,
    bars: Vec<(String, Spread)>,
}

fn groups(tables: &[&Table]) -> Vec<Group> {
    let mut out = Vec::new();
    for t in tables {
        let mut workers: Vec<usize> = t.rows.iter().map(|r| r.workers).collect();
        workers.dedup();
        for w in workers {
            let bars = t
                .rows
                .iter()
                .filter(|r| r.workers == w && r.status == Status::Ok)
                .filter_map(|r| r.figure.map(|f| (r.sched.clone(), f)))
                .collect();
            let label = if t.variant.is_empty() {
                format!("{w} workers")
            } else {
                format!("{} / {w}w", t.variant)
            };
            out.push(Group { label, bars });
        }
    }
    out
}

/// Writes one chart per scenario found in `tables` into `dir`.
pub fn write_all(dir: &Path, tables: &[Table]) -> io::Result<()> {
    let mut scenarios: Vec<&str> = tables.iter().map(|t| t.scenario.as_str()).collect();
    scenarios.dedup();
    for scenario in scenarios {
        let mine: Vec<&Table> = tables.iter().filter(|t| t.scenario == scenario).collect();
        draw(&dir.join(file_name(scenario)), scenario, &mine)
            .map_err(|e| io::Error::other(format!("chart {scenario}: {e}")))?;
    }
    Ok(())
}

fn draw(path: &Path, scenario: &str, tables: &[&Table]) -> Result<(), Box<dyn std::error::Error>> {
    let groups = groups(tables);
    let mut scheds: Vec<String> = Vec::new();
    for (s, _) in groups.iter().flat_map(|g| &g.bars) {
        if !scheds.contains(s) {
            scheds.push(s.clone());
        }
    }
    let top = groups
        .iter()
        .flat_map(|g| g.bars.iter().map(|b| b.1.max))
        .fold(0.0f64, f64::max);
    // Headroom above the tallest whisker keeps the legend off the bars.
    let y_max = if top > 0.0 { top * 1.4 } else { 1.0 };
    let n = groups.len().max(1);
    let unit = tables.first().map(|t| t.unit.as_str()).unwrap_or("");
    let better = if tables.first().is_some_and(|t| t.higher_is_better) {
        "higher is better"
    } else {
        "lower is better"
    };

    let root = SVGBackend::new(path, (960, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("{scenario} ({unit}, {better})"), ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0f64..y_max)?;
    let label_of = |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 {
            groups
                .get(i as usize)
                .map(|g| g.label.clone())
                .unwrap_or_default()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(WHITE)
        .x_labels(n + 1)
        .x_label_formatter(&label_of)
        .y_desc(unit)
        .draw()?;

    let slot = 0.8 / scheds.len().max(1) as f64;
    for (si, sched) in scheds.iter().enumerate() {
        let c = colour(sched);
        let bars: Vec<(f64, Spread)> = groups
            .iter()
            .enumerate()
            .filter_map(|(gi, g)| {
                let spread = g.bars.iter().find(|b| &b.0 == sched)?.1;
                Some((gi as f64 - 0.4 + slot * si as f64, spread))
            })
            .collect();
        chart
            .draw_series(bars.iter().map(|(x0, s)| {
                Rectangle::new([(*x0, 0.0), (x0 + slot * 0.9, s.median)], c.filled())
            }))?
            .label(sched.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], c.filled()));
        chart.draw_series(bars.iter().map(|(x0, s)| {
            let mid = x0 + slot * 0.45;
            PathElement::new(vec![(mid, s.min), (mid, s.max)], BLACK.stroke_width(1))
        }))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
