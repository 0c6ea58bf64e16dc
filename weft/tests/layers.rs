//! The crate's layers depend one way: the core scheduler (`src/sched/`)
//! imports nothing of the API (`src/api/`) nor of the extensions (futures,
//! `blocking`, `sync`, `trace`, `stats`), and the API imports no extension.
//! This reads the sources, so a new import across a layer fails here rather
//! than in a review.

use std::fs;
use std::path::Path;

/// Every `crate::` path named in the non-comment, non-test lines of the
/// `.rs` files under `dir`, with the file and line it is on.
fn crate_paths(dir: &Path) -> Vec<(String, usize, String)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("source folder") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension() != Some("rs".as_ref()) {
                continue;
            }
            let text = fs::read_to_string(&path).expect("source file");
            for (number, line) in text.lines().enumerate() {
                // Unit tests may build pools through the public API.
                let trimmed = line.trim_start();
                if trimmed.starts_with("#[cfg(") && trimmed.contains("test") {
                    break;
                }
                let code = line.split("//").next().unwrap_or("");
                let mut rest = code;
                while let Some(at) = rest.find("crate::") {
                    let tail = &rest[at + "crate::".len()..];
                    let name: String = tail
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    found.push((path.display().to_string(), number + 1, name));
                    rest = tail;
                }
            }
        }
    }
    found
}

fn assert_imports_none_of(layer: &str, forbidden: &[&str]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(layer);
    let crossing: Vec<String> = crate_paths(&dir)
        .into_iter()
        .filter(|(_, _, name)| forbidden.contains(&name.as_str()))
        .map(|(file, line, name)| format!("{file}:{line}: crate::{name}"))
        .collect();
    assert!(
        crossing.is_empty(),
        "{layer}/ imports across its layer:\n{}",
        crossing.join("\n")
    );
}

/// What the crate root re-exports from the API: a path through one of these
/// from inside the core would reach the API by its public name.
const API_NAMES: &[&str] = &[
    "Pool",
    "Handle",
    "Builder",
    "BuildError",
    "SpawnError",
    "Scope",
    "ScopeFifo",
    "JoinHandle",
    "Aborted",
    "AbortHandle",
    "JoinSet",
    "JoinError",
    "ThreadBuilder",
    "ShutdownReport",
    "spawn",
    "join",
    "scope",
    "scope_fifo",
    "in_place_scope",
    "in_place_scope_fifo",
    "spawn_fifo",
    "broadcast",
    "spawn_broadcast",
    "current_num_threads",
    "current_thread_index",
    "yield_now",
    "yield_local",
    "Yield",
];

/// The extensions' modules and what the crate root re-exports from them.
const EXTENSION_NAMES: &[&str] = &[
    "future",
    "iter",
    "prelude",
    "blocking",
    "sync",
    "trace",
    "stats",
    "Stats",
    "WorkerStats",
    "Condvar",
    "Event",
    "EventMode",
    "Ticket",
    "TicketQueue",
    "WaitGroup",
    "WaitTimeoutResult",
    "Trace",
    "spawn_future",
    "block_on",
    "yield_async",
    "YieldNow",
];

#[test]
fn the_core_imports_neither_the_api_nor_the_extensions() {
    let mut forbidden = vec!["api"];
    forbidden.extend_from_slice(API_NAMES);
    forbidden.extend_from_slice(EXTENSION_NAMES);
    assert_imports_none_of("sched", &forbidden);
}

#[test]
fn the_api_imports_no_extension() {
    assert_imports_none_of("api", EXTENSION_NAMES);
}

/// The core reaches outside itself only for the sync facade: the thread's
/// context lives in it (`sched/context.rs`), and nothing at the crate root
/// (where the public re-exports and the free functions' docs are) is a
/// dependency of the scheduler.
#[test]
fn the_core_imports_only_itself_and_the_facade() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join("sched");
    let outside: Vec<String> = crate_paths(&dir)
        .into_iter()
        .filter(|(_, _, name)| name != "sched" && name != "facade")
        .map(|(file, line, name)| format!("{file}:{line}: crate::{name}"))
        .collect();
    assert!(
        outside.is_empty(),
        "sched/ imports from outside the core:\n{}",
        outside.join("\n")
    );
}

/// The crate root is the crate's docs, its module list and its re-exports:
/// code that runs lives in a layer (the free functions in `api/free.rs`),
/// so that no layer imports the root to reach it.
#[test]
fn the_crate_root_is_docs_and_re_exports() {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join("lib.rs");
    let text = fs::read_to_string(lib).expect("lib.rs");
    let code: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| {
            let line = line.trim_start();
            let line = line.strip_prefix("pub ").unwrap_or(line);
            [
                "fn ",
                "unsafe fn ",
                "impl",
                "struct ",
                "enum ",
                "static ",
                "const ",
            ]
            .iter()
            .any(|start| line.starts_with(start))
        })
        .collect();
    assert!(
        code.is_empty(),
        "lib.rs defines code:\n{}",
        code.iter()
            .map(|(n, line)| format!("lib.rs:{}: {line}", n + 1))
            .collect::<Vec<_>>()
            .join("\n")
    );
}
