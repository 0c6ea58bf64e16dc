//! The trace (cargo feature `trace`): what the rings record, the Chrome JSON
//! and the SVG timeline. `cargo test --workspace` turns the feature on
//! (weft-bench enables it); `cargo test -p weft --features trace` too.
#![cfg(feature = "trace")]

use std::collections::BTreeMap;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use serde_json::Value;
mod common;

use common::assert_eventually;

use weft::trace::{EventKind, Trace};
use weft::{Pool, WaitGroup};

/// Waits until the pool's workers have counted `tasks` tasks as run: a task
/// signals its waiter just before its worker records its end and counts it.
fn settle(pool: &Pool, tasks: u64) {
    assert_eventually(Duration::from_secs(5), "tasks finished", || {
        pool.stats().total().tasks_run >= tasks
    });
}

/// `tasks` fire-and-forget tasks from outside the pool, each holding its
/// worker for `hold`; returns once all of them were counted.
fn run_tasks(pool: &Pool, tasks: u64, hold: Duration) {
    let wg = WaitGroup::new();
    for _ in 0..tasks {
        wg.add(1);
        let wg = wg.clone();
        pool.spawn(move || {
            std::thread::sleep(hold);
            wg.done();
        });
    }
    wg.wait();
    settle(pool, tasks);
}

fn chrome_json(trace: &Trace) -> Value {
    let mut bytes = Vec::new();
    trace.write_chrome_json(&mut bytes).unwrap();
    serde_json::from_slice(&bytes).expect("the Chrome trace is valid JSON")
}

fn svg(trace: &Trace) -> String {
    let mut bytes = Vec::new();
    trace.write_svg(&mut bytes).unwrap();
    String::from_utf8(bytes).expect("the SVG is UTF-8")
}

/// The complete ("X") events of each track, as (start, end, category) in µs.
fn complete_events(json: &Value) -> BTreeMap<u64, Vec<(f64, f64, String)>> {
    let mut tracks: BTreeMap<u64, Vec<(f64, f64, String)>> = BTreeMap::new();
    for event in json["traceEvents"].as_array().unwrap() {
        if event["ph"] == "X" {
            let start = event["ts"].as_f64().unwrap();
            let end = start + event["dur"].as_f64().unwrap();
            let cat = event["cat"].as_str().unwrap().to_string();
            tracks
                .entry(event["tid"].as_u64().unwrap())
                .or_default()
                .push((start, end, cat));
        }
    }
    tracks
}

/// Checks that the spans on one track nest: any two are disjoint or one
/// contains the other. Returns the largest nesting depth seen.
fn assert_nested(spans: &mut [(f64, f64, String)]) -> usize {
    // Rounding to µs floats: allow a nanosecond.
    const EPS: f64 = 1e-3;
    spans.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
    let mut open: Vec<f64> = Vec::new();
    let mut deepest = 0;
    for (start, end, _) in spans.iter() {
        while open.last().is_some_and(|&top| top <= start + EPS) {
            open.pop();
        }
        if let Some(&top) = open.last() {
            assert!(
                *end <= top + EPS,
                "span {start}..{end} overlaps one ending at {top}"
            );
        }
        open.push(*end);
        deepest = deepest.max(open.len() - 1);
    }
    deepest
}

#[test]
fn chrome_json_parses_with_a_track_per_worker() {
    let pool = Pool::builder().workers(3).trace(10_000).build().unwrap();
    run_tasks(&pool, 11, Duration::from_millis(1));
    // A name that needs escaping in JSON.
    let (sender, receiver) = std::sync::mpsc::channel();
    pool.spawn_named("say \"hi\" \\ \n", move || sender.send(()).unwrap());
    receiver.recv().unwrap();
    settle(&pool, 12);
    let json = chrome_json(&pool.trace());
    let events = json["traceEvents"].as_array().unwrap();
    let mut names = BTreeMap::new();
    for event in events {
        assert_eq!(event["pid"], 1);
        if event["ph"] == "M" && event["name"] == "thread_name" {
            names.insert(
                event["tid"].as_u64().unwrap(),
                event["args"]["name"].as_str().unwrap().to_string(),
            );
        }
    }
    for worker in 0..3 {
        assert_eq!(names[&worker], format!("worker {worker}"));
    }
    // The spawns came from this thread: one more track for them.
    assert_eq!(names[&3], "outside the pool");
    let injects = events
        .iter()
        .filter(|e| e["ph"] == "i" && e["name"] == "inject" && e["tid"] == 3)
        .count();
    assert_eq!(injects, 12);
    let tasks: usize = complete_events(&json)
        .values()
        .flatten()
        .filter(|(.., cat)| cat == "task")
        .count();
    assert_eq!(tasks, 12);
    assert!(events.iter().any(|e| e["name"] == "say \"hi\" \\ \n"));
    assert_eq!(
        json["otherData"]["dropped_events_per_worker"],
        serde_json::json!([0, 0, 0])
    );
}

#[test]
fn every_task_start_has_its_end_on_the_same_worker() {
    let pool = Pool::builder().workers(3).trace(100_000).build().unwrap();
    // Nested work too: scopes and joins whose waits run other tasks.
    pool.scope(|s| {
        for i in 0..16u64 {
            s.spawn(move |s| {
                s.spawn(move |_| {
                    std::thread::sleep(Duration::from_micros(200));
                });
                let (a, b) = weft::join(|| i * 2, || i + 1);
                assert_eq!(a + b, 3 * i + 1);
            });
        }
    });
    // 16 tasks, 16 they spawned and the `install` job that ran the scope
    // (the halves of `join` are not counted).
    settle(&pool, 33);
    let trace = pool.trace();
    for (index, worker) in trace.workers.iter().enumerate() {
        assert_eq!(worker.dropped, 0);
        let mut open = 0usize;
        for event in &worker.events {
            match event.kind {
                EventKind::TaskStart { .. } => open += 1,
                EventKind::TaskEnd => {
                    assert!(open > 0, "worker {index}: a task ended that never started");
                    open -= 1;
                }
                _ => {}
            }
        }
        assert_eq!(open, 0, "worker {index}: {open} tasks never ended");
        // Timestamps come from a monotonic clock.
        assert!(worker
            .events
            .windows(2)
            .all(|pair| pair[0].time_ns <= pair[1].time_ns));
    }
}

#[test]
fn spans_on_a_worker_do_not_overlap() {
    let pool = Pool::builder().workers(3).trace(100_000).build().unwrap();
    run_tasks(&pool, 24, Duration::from_micros(300));
    let json = chrome_json(&pool.trace());
    for (tid, mut spans) in complete_events(&json) {
        // Plain tasks from outside never nest: each runs alone on its worker.
        let mut tasks: Vec<_> = spans.iter().filter(|s| s.2 == "task").cloned().collect();
        assert_eq!(
            assert_nested(&mut tasks),
            0,
            "tasks overlap on worker {tid}"
        );
        // Searches and parks happen between tasks, never across one.
        assert_eq!(
            assert_nested(&mut spans),
            0,
            "spans overlap on worker {tid}"
        );
    }

    // With waits inside tasks, spans nest but still never cross.
    let pool = Pool::builder().workers(2).trace(100_000).build().unwrap();
    pool.install(|| {
        weft::scope(|s| {
            for _ in 0..8 {
                s.spawn(|_| std::thread::sleep(Duration::from_micros(200)));
            }
        })
    });
    settle(&pool, 1);
    let json = chrome_json(&pool.trace());
    for (_, mut spans) in complete_events(&json) {
        assert_nested(&mut spans);
    }
}

#[test]
fn svg_is_well_formed_xml_with_a_row_per_worker() {
    let workers = 4;
    let pool = Pool::builder()
        .workers(workers)
        .trace(10_000)
        .build()
        .unwrap();
    let wg = WaitGroup::new();
    for _ in 0..8 {
        wg.add(1);
        let wg = wg.clone();
        // A name that needs escaping in XML.
        pool.spawn_named("<a & b>", move || {
            std::thread::sleep(Duration::from_millis(2));
            wg.done();
        });
    }
    wg.wait();
    settle(&pool, 8);
    let text = svg(&pool.trace());
    let doc = roxmltree::Document::parse(&text).expect("the SVG is well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(root.attribute("width"), Some("1200"));
    let rows: Vec<_> = root
        .descendants()
        .filter(|node| node.attribute("class") == Some("worker"))
        .collect();
    assert_eq!(rows.len(), workers);
    for (index, row) in rows.iter().enumerate() {
        assert_eq!(
            row.attribute("data-worker"),
            Some(index.to_string().as_str())
        );
        let label = format!("worker {index}");
        assert!(row.descendants().any(|n| n.text() == Some(label.as_str())));
    }
    // One row per worker, one for the injections from this thread.
    let height: f64 = root.attribute("height").unwrap().parse().unwrap();
    assert_eq!(height, 60.0 + 30.0 * (workers + 1) as f64);
    // A time axis in ms and a legend.
    let texts: Vec<&str> = root.descendants().filter_map(|n| n.text()).collect();
    for word in ["ms", "task", "searching", "parked", "steal", "inject"] {
        assert!(texts.contains(&word), "no {word:?} in the SVG");
    }
    assert!(texts.contains(&"0"), "no tick at 0 ms");
}

#[test]
fn stats_add_up_to_the_tasks_run() {
    let pool = Pool::builder().workers(3).trace(100_000).build().unwrap();
    run_tasks(&pool, 40, Duration::from_micros(100));
    // A worker may park between two snapshots: take both until they agree.
    let counts = |stats: &weft::Stats| {
        let total = stats.total();
        (total.tasks_run, total.tasks_stolen, total.parks)
    };
    let (stats, trace) = loop {
        let before = pool.stats();
        let trace = pool.trace();
        let after = pool.stats();
        if counts(&before) == counts(&after) {
            break (after, trace);
        }
    };
    assert_eq!(stats.total().tasks_run, 40);
    for (worker, (stats, trace)) in stats.workers.iter().zip(&trace.workers).enumerate() {
        let started = trace
            .events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::TaskStart { .. }))
            .count() as u64;
        let ended = trace
            .events
            .iter()
            .filter(|e| e.kind == EventKind::TaskEnd)
            .count() as u64;
        assert_eq!(started, stats.tasks_run, "worker {worker}");
        assert_eq!(ended, stats.tasks_run, "worker {worker}");
        let steals = trace
            .events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::Steal { .. }))
            .count() as u64;
        assert_eq!(steals, stats.tasks_stolen, "worker {worker}");
        let parks = trace
            .events
            .iter()
            .filter(|e| e.kind == EventKind::Park)
            .count() as u64;
        assert_eq!(parks, stats.parks, "worker {worker}");
    }
}

#[test]
fn a_full_ring_drops_the_oldest_events_and_counts_them() {
    let capacity = 16;
    let pool = Pool::builder().workers(1).trace(capacity).build().unwrap();
    let (sender, receiver) = std::sync::mpsc::channel();
    let done = sender.clone();
    pool.spawn_named("first", move || done.send(()).unwrap());
    receiver.recv().unwrap();
    run_tasks(&pool, 20, Duration::ZERO);
    pool.spawn_named("last", move || sender.send(()).unwrap());
    receiver.recv().unwrap();
    settle(&pool, 22);
    let trace = pool.trace();
    let ring = &trace.workers[0];
    assert_eq!(ring.events.len(), capacity);
    // 22 tasks alone make 44 events.
    assert!(ring.dropped >= 44 - capacity as u64, "{}", ring.dropped);
    let names: Vec<_> = ring
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::TaskStart { name } => Some(name),
            _ => None,
        })
        .collect();
    assert!(names.contains(&Some("last")), "{names:?}");
    assert!(!names.contains(&Some("first")), "{names:?}");
    // The renderings cope with ends whose start was dropped.
    let json = chrome_json(&trace);
    assert_eq!(
        json["otherData"]["dropped_events_per_worker"][0],
        ring.dropped
    );
    roxmltree::Document::parse(&svg(&trace)).unwrap();
}

#[test]
fn steals_name_the_victim() {
    let pool = Pool::builder().workers(2).trace(10_000).build().unwrap();
    let (sender, receiver) = std::sync::mpsc::channel();
    pool.spawn(move || {
        // Both children must run at once, so one of them is stolen from
        // this worker's queue.
        let barrier = Arc::new(Barrier::new(2));
        for _ in 0..2 {
            let (barrier, sender) = (Arc::clone(&barrier), sender.clone());
            weft::spawn(move || {
                barrier.wait();
                sender.send(weft::current_worker_index().unwrap()).unwrap();
            });
        }
        sender.send(weft::current_worker_index().unwrap()).unwrap();
    });
    let parent = receiver.recv().unwrap();
    let _ = (receiver.recv().unwrap(), receiver.recv().unwrap());
    settle(&pool, 3);
    let trace = pool.trace();
    let thief = 1 - parent;
    assert!(
        trace.workers[thief]
            .events
            .iter()
            .any(|e| e.kind == EventKind::Steal { from: parent }),
        "{:?}",
        trace.workers[thief]
    );
}

#[test]
fn names_come_from_spawn_named_and_from_inside_scoped_tasks() {
    let pool = Pool::builder().workers(2).trace(10_000).build().unwrap();
    let (sender, receiver) = std::sync::mpsc::channel();
    pool.spawn_named("named", move || sender.send(()).unwrap());
    receiver.recv().unwrap();
    pool.scope(|s| {
        s.spawn(|_| weft::name_current_task("scoped"));
    });
    settle(&pool, 2);
    let names: Vec<&str> = pool
        .trace()
        .workers
        .iter()
        .flat_map(|w| &w.events)
        .filter_map(|e| match e.kind {
            EventKind::TaskStart { name } => name,
            _ => None,
        })
        .collect();
    assert!(
        names.contains(&"named") && names.contains(&"scoped"),
        "{names:?}"
    );
}

#[test]
fn parks_and_wakes_pair_up() {
    let pool = Pool::builder().workers(2).trace(10_000).build().unwrap();
    run_tasks(&pool, 4, Duration::from_millis(1));
    std::thread::sleep(Duration::from_millis(5));
    let trace = pool.trace();
    for worker in &trace.workers {
        let parks = worker
            .events
            .iter()
            .filter(|e| e.kind == EventKind::Park)
            .count();
        let wakes = worker
            .events
            .iter()
            .filter(|e| e.kind == EventKind::Wake)
            .count();
        assert!(parks >= 1, "an idle worker parks");
        // The last park may still be going on.
        assert!(
            parks == wakes || parks == wakes + 1,
            "{parks} parks, {wakes} wakes"
        );
        assert!(trace.taken_ns >= worker.events.last().unwrap().time_ns);
    }
}

#[test]
fn without_builder_trace_nothing_is_recorded() {
    let pool = Pool::builder().workers(2).build().unwrap();
    run_tasks(&pool, 4, Duration::ZERO);
    let trace = pool.trace();
    assert_eq!(trace.workers.len(), 2);
    assert!(trace
        .workers
        .iter()
        .all(|w| w.events.is_empty() && w.dropped == 0));
    // It still renders (empty rows).
    roxmltree::Document::parse(&svg(&trace)).unwrap();
    chrome_json(&trace);
}
