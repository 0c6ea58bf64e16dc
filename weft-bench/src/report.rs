//! Turns records into tables: the per-scenario table printed on stdout, and
//! the report directory (report.md, results.json, one SVG chart per scenario).

use crate::record::{Record, Results, Status};
use crate::stats::{ratio_vs_weft, Spread};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::path::Path;

pub const RATIO_HELP: &str =
    "vs weft: peer / weft for times and CPU, weft / peer for ideal/actual; \
     > 1 means weft is better (faster, cheaper, closer to ideal)";

/// One line of a table: a scheduler at a worker count, over its repetitions.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub sched: String,
    pub workers: usize,
    pub status: Status,
    pub note: String,
    pub figure: Option<Spread>,
    pub cpu_ms: Option<Spread>,
    /// Medians of every extra figure.
    pub extra: BTreeMap<String, f64>,
    pub ratio: Option<f64>,
    pub cpu_ratio: Option<f64>,
}

/// Every row of one case (scenario + variant).
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub scenario: String,
    pub variant: String,
    pub unit: String,
    pub higher_is_better: bool,
    pub rows: Vec<Row>,
}

impl Table {
    pub fn title(&self) -> String {
        crate::record::case_name(&self.scenario, &self.variant)
    }
}

/// Groups records into tables, in the order cases and schedulers first
/// appear; rows sorted by workers, then that order.
pub fn tables(records: &[Record]) -> Vec<Table> {
    let mut tables: Vec<Table> = Vec::new();
    let mut sched_order: Vec<&str> = Vec::new();
    for r in records {
        if !sched_order.contains(&r.sched.as_str()) {
            sched_order.push(&r.sched);
        }
        let known = tables
            .iter()
            .any(|t| t.scenario == r.scenario && t.variant == r.variant);
        if !known {
            tables.push(Table {
                scenario: r.scenario.clone(),
                variant: r.variant.clone(),
                unit: r.unit.clone(),
                higher_is_better: r.higher_is_better,
                rows: Vec::new(),
            });
        }
    }
    for table in &mut tables {
        let mine: Vec<&Record> = records
            .iter()
            .filter(|r| r.scenario == table.scenario && r.variant == table.variant)
            .collect();
        let mut keys: Vec<(usize, usize, &str)> = mine
            .iter()
            .map(|r| {
                let pos = sched_order.iter().position(|s| *s == r.sched).unwrap();
                (r.workers, pos, r.sched.as_str())
            })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        for (workers, _, sched) in keys {
            let group: Vec<&Record> = mine
                .iter()
                .copied()
                .filter(|r| r.workers == workers && r.sched == sched)
                .collect();
            table.rows.push(row(sched, workers, &group));
        }
        add_ratios(table);
    }
    tables
}

fn row(sched: &str, workers: usize, group: &[&Record]) -> Row {
    let ok: Vec<&Record> = group
        .iter()
        .copied()
        .filter(|r| r.status == Status::Ok)
        .collect();
    // A failed repetition fails the row: a partial median would hide it.
    let worst = group
        .iter()
        .find(|r| r.status == Status::Failed)
        .or_else(|| group.iter().find(|r| r.status == Status::NotApplicable))
        .or(group.first())
        .expect("a row has at least one record");
    let figures: Vec<f64> = ok.iter().filter_map(|r| r.figure).collect();
    let cpu: Vec<f64> = ok
        .iter()
        .filter_map(|r| r.cpu_ns)
        .map(|c| c as f64 / 1e6)
        .collect();
    let mut extra = BTreeMap::new();
    for key in ok.iter().flat_map(|r| r.extra.keys()) {
        let values: Vec<f64> = ok
            .iter()
            .filter_map(|r| r.extra.get(key).copied())
            .collect();
        if let Some(s) = Spread::of(&values) {
            extra.insert(key.clone(), s.median);
        }
    }
    let failed = group.iter().filter(|r| r.status == Status::Failed).count();
    let note = if failed > 0 {
        format!("{failed} of {} runs failed: {}", group.len(), worst.note)
    } else {
        worst.note.clone()
    };
    Row {
        sched: sched.to_string(),
        workers,
        status: worst.status,
        note,
        figure: Spread::of(&figures),
        cpu_ms: Spread::of(&cpu),
        extra,
        ratio: None,
        cpu_ratio: None,
    }
}

fn add_ratios(table: &mut Table) {
    let weft: BTreeMap<usize, (Option<Spread>, Option<Spread>)> = table
        .rows
        .iter()
        .filter(|r| r.sched == "weft" && r.status == Status::Ok)
        .map(|r| (r.workers, (r.figure, r.cpu_ms)))
        .collect();
    let better_high = table.higher_is_better;
    for row in table.rows.iter_mut().filter(|r| r.status == Status::Ok) {
        let Some((wf, wc)) = weft.get(&row.workers) else {
            continue;
        };
        if let (Some(p), Some(w)) = (row.figure, wf) {
            row.ratio = ratio_vs_weft(p.median, w.median, better_high);
        }
        if let (Some(p), Some(w)) = (row.cpu_ms, wc) {
            row.cpu_ratio = ratio_vs_weft(p.median, w.median, false);
        }
    }
}

/// Compact number: 3 significant digits, no exponent for everyday sizes.
pub fn num(x: f64) -> String {
    let a = x.abs();
    if !x.is_finite() {
        "-".into()
    } else if a >= 100.0 || a == 0.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

fn figure_cell(row: &Row) -> String {
    match (row.status, row.figure) {
        (Status::NotApplicable, _) => "n/a".into(),
        (Status::Failed, _) => "FAILED".into(),
        (Status::Ok, Some(s)) => format!("{} [{}-{}]", num(s.median), num(s.min), num(s.max)),
        (Status::Ok, None) => "-".into(),
    }
}

fn ratio_cell(r: Option<f64>) -> String {
    r.map(|r| format!("{}x", num(r)))
        .unwrap_or_else(|| "-".into())
}

/// Extra figures of an ok row; the reason of an n/a or failed one.
fn extra_cell(row: &Row) -> String {
    if row.status != Status::Ok {
        return row.note.clone();
    }
    let s: Vec<String> = row
        .extra
        .iter()
        .map(|(k, v)| format!("{k}={}", num(*v)))
        .collect();
    s.join(" ")
}

/// "sched: primitive" for each scheduler that ran with a stated equivalent.
fn equivalents(table: &Table) -> String {
    let mut seen: Vec<String> = Vec::new();
    for r in table
        .rows
        .iter()
        .filter(|r| r.status == Status::Ok && !r.note.is_empty())
    {
        let line = format!("{}: {}", r.sched, r.note);
        if !seen.contains(&line) {
            seen.push(line);
        }
    }
    seen.join("; ")
}

/// Cells of one row, in the column order of [`HEADERS`].
fn cells(row: &Row) -> [String; 7] {
    [
        row.sched.clone(),
        row.workers.to_string(),
        figure_cell(row),
        row.cpu_ms
            .map(|s| num(s.median))
            .unwrap_or_else(|| "-".into()),
        ratio_cell(row.ratio),
        ratio_cell(row.cpu_ratio),
        extra_cell(row),
    ]
}

const HEADERS: [&str; 7] = [
    "scheduler",
    "workers",
    "median [min-max]",
    "cpu ms",
    "vs weft (>1: weft better)",
    "cpu vs weft",
    "details",
];

/// A plain-text table for the terminal.
pub fn render_text(table: &Table) -> String {
    let mut rows: Vec<[String; 7]> = vec![HEADERS.map(String::from)];
    rows.extend(table.rows.iter().map(cells));
    let widths: Vec<usize> = (0..7)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = format!("== {} ({}) ==\n", table.title(), table.unit);
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, cell)| format!("{cell:<w$}", w = widths[c]))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    let eq = equivalents(table);
    if !eq.is_empty() {
        out.push_str(&format!("using {eq}\n"));
    }
    out
}

pub fn render_markdown(
    results: &Results,
    tables: &[Table],
    about: &dyn Fn(&str) -> String,
) -> String {
    let m = &results.meta;
    let mut out = String::new();
    let _ = writeln!(out, "# weft-bench report\n");
    let _ = writeln!(out, "- command: `{}`", m.command);
    let _ = writeln!(
        out,
        "- mode: {}, machine: {} CPUs, {}",
        m.mode, m.cpus, m.os
    );
    let _ = writeln!(
        out,
        "- started: unix time {}, took {:.0} s",
        m.started_unix_s, m.wall_s
    );
    let _ = writeln!(out, "- figures: median [min-max] over repetitions; cpu ms: process CPU (getrusage) of the timed section");
    let _ = writeln!(out, "- {RATIO_HELP}\n");
    for t in tables {
        let _ = writeln!(out, "## {} ({})\n", t.title(), t.unit);
        let _ = writeln!(out, "{}\n", about(&t.scenario));
        let _ = writeln!(
            out,
            "![{}]({})\n",
            t.title(),
            crate::chart::file_name(&t.scenario)
        );
        let _ = writeln!(out, "| {} |", HEADERS.join(" | "));
        let _ = writeln!(out, "|{}", "---|".repeat(HEADERS.len()));
        for r in &t.rows {
            let cells = cells(r).map(|c| c.replace('|', "\\|"));
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        let eq = equivalents(t);
        if !eq.is_empty() {
            let _ = writeln!(out, "\nUsing {eq}.");
        }
        out.push('\n');
    }
    out
}

/// Writes results.json, report.md and the charts into `dir`.
pub fn write_dir(dir: &Path, results: &Results, about: &dyn Fn(&str) -> String) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_string_pretty(results).map_err(io::Error::other)?;
    std::fs::write(dir.join("results.json"), json)?;
    let tables = tables(&results.records);
    std::fs::write(
        dir.join("report.md"),
        render_markdown(results, &tables, about),
    )?;
    crate::chart::write_all(dir, &tables)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Meta;

    fn rec(sched: &str, workers: usize, rep: usize, status: Status, figure: f64) -> Record {
        Record {
            scenario: "marl/empty".into(),
            variant: String::new(),
            sched: sched.into(),
            workers,
            rep,
            size: 10,
            status,
            note: if status == Status::NotApplicable {
                "cannot".into()
            } else {
                String::new()
            },
            unit: "ns/task".into(),
            higher_is_better: false,
            figure: (status == Status::Ok).then_some(figure),
            wall_ns: Some(1_000),
            cpu_ns: Some(2_000_000),
            extra: BTreeMap::new(),
        }
    }

    fn sample() -> Vec<Record> {
        vec![
            rec("weft", 2, 0, Status::Ok, 100.0),
            rec("weft", 2, 1, Status::Ok, 120.0),
            rec("weft", 2, 2, Status::Ok, 80.0),
            rec("rayon", 2, 0, Status::Ok, 200.0),
            rec("rayon", 2, 1, Status::Ok, 300.0),
            rec("rayon", 2, 2, Status::Ok, 100.0),
            rec("chili", 2, 0, Status::NotApplicable, 0.0),
            rec("tokio", 2, 0, Status::Ok, 50.0),
            rec("tokio", 2, 1, Status::Failed, 0.0),
        ]
    }

    #[test]
    fn tables_group_and_compare() {
        let t = &tables(&sample())[0];
        assert_eq!(t.rows.len(), 4);
        let rayon = t.rows.iter().find(|r| r.sched == "rayon").unwrap();
        assert_eq!(rayon.figure.unwrap().median, 200.0);
        assert_eq!(rayon.ratio, Some(2.0));
        assert_eq!(rayon.cpu_ratio, Some(1.0));
        let chili = t.rows.iter().find(|r| r.sched == "chili").unwrap();
        assert_eq!((chili.status, chili.ratio), (Status::NotApplicable, None));
        let tokio = t.rows.iter().find(|r| r.sched == "tokio").unwrap();
        assert_eq!(tokio.status, Status::Failed, "one failed rep fails the row");
    }

    #[test]
    fn text_table_marks_na_and_failures() {
        let text = render_text(&tables(&sample())[0]);
        assert!(text.starts_with("== marl/empty (ns/task) =="));
        assert!(text.contains("200 [100-300]"));
        assert!(text.contains("2.00x"));
        assert!(text.contains("n/a"));
        assert!(text.contains("FAILED"));
    }

    #[test]
    fn report_dir_has_every_file() {
        let dir = std::env::temp_dir().join(format!("weft-bench-test-{}", std::process::id()));
        let results = Results {
            meta: Meta {
                mode: "smoke".into(),
                command: "weft-bench --smoke".into(),
                cpus: 2,
                os: "linux".into(),
                started_unix_s: 0,
                wall_s: 1.0,
            },
            records: sample(),
        };
        write_dir(&dir, &results, &|_| "about".into()).unwrap();
        let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
        assert!(md.contains("## marl/empty (ns/task)"));
        assert!(md.contains("| rayon | 2 | 200 [100-300] |"));
        let back: Results =
            serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap())
                .unwrap();
        assert_eq!(back.records, results.records);
        let svg = std::fs::read_to_string(dir.join(crate::chart::file_name("marl/empty"))).unwrap();
        assert!(svg.contains("<svg"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn numbers_are_compact() {
        assert_eq!(num(1234.5), "1234");
        assert_eq!(num(12.345), "12.3");
        assert_eq!(num(1.2345), "1.23");
        assert_eq!(num(0.12345), "0.123");
        assert_eq!(num(f64::NAN), "-");
    }
}
