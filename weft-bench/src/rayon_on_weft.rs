//! The `rayon-on-weft` peer: rayon's own code, as the `rayon` peer runs it,
//! on weft through rayon-core/ (the shim). The shim cannot be linked into
//! this binary, whose `rayon` peer links the real rayon-core (the two carry
//! the same `links` key), so that peer's runs go to a second build of this
//! very source, `weft-bench-rayon-on-weft` (manifest
//! weft-bench/rayon-on-weft/Cargo.toml, which patches rayon-core), where the
//! `rayon` adapter runs on the shim. The parent builds it on demand, into
//! its own target directory so every dependency but rayon is compiled once,
//! and runs it as the child for that peer's jobs; each child checks which
//! rayon-core it ran on before it reports.

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = "weft-bench-rayon-on-weft";

/// Whether this is the second build: its package is named after its binary.
const SECOND_BUILD: bool = matches!(
    env!("CARGO_PKG_NAME").as_bytes(),
    b"weft-bench-rayon-on-weft"
);

/// weft-bench's folder, found from where this source was compiled (the
/// peer needs the source tree, not only this binary); the second build's
/// manifest is one folder below it.
fn bench_dir() -> &'static Path {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    match (SECOND_BUILD, here.parent()) {
        (true, Some(parent)) => parent,
        _ => here,
    }
}

/// The second build's manifest.
fn manifest() -> PathBuf {
    bench_dir().join("rayon-on-weft/Cargo.toml")
}

/// The environment variable that names a second binary built elsewhere,
/// for a machine with no cargo (scripts/device-suite.sh sets it); the
/// children still check that the rayon it links runs on weft.
pub const PREBUILT: &str = "WEFT_BENCH_RAYON_ON_WEFT";

/// Builds the second binary beside this one, with this one's profile (cargo
/// only checks it when it is up to date), and returns its path; or returns
/// the binary that [`PREBUILT`] names, without building.
pub fn build() -> Result<PathBuf, String> {
    if let Some(prebuilt) = std::env::var_os(PREBUILT) {
        let bin = PathBuf::from(prebuilt);
        return if bin.is_file() {
            Ok(bin)
        } else {
            Err(format!(
                "{PREBUILT} names {}, which is no file",
                bin.display()
            ))
        };
    }
    let exe = std::env::current_exe().map_err(|e| format!("own executable path: {e}"))?;
    let profile_dir = exe
        .parent()
        .ok_or("the executable is in no folder")?
        .to_path_buf();
    let target_dir = profile_dir
        .parent()
        .ok_or("the executable is not in a cargo target directory")?;
    let manifest = manifest();
    if !manifest.exists() {
        return Err(format!(
            "{} is missing: the rayon-on-weft peer is built from weft's source tree",
            manifest.display()
        ));
    }
    // Under `cargo run`, the cargo that built this binary.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .arg("build")
        .arg("--manifest-path")
        .arg(&manifest)
        .arg("--target-dir")
        .arg(target_dir);
    if !cfg!(debug_assertions) {
        build.arg("--release");
    }
    eprintln!(
        "rayon-on-weft: building {BIN} (weft-bench with rayon on rayon-core/; minutes the first time)"
    );
    // cargo's output goes to stderr, so that `--json` keeps stdout clean.
    let status = build
        .stdout(std::io::stderr())
        .status()
        .map_err(|e| format!("cannot run cargo to build {BIN}: {e}"))?;
    if !status.success() {
        return Err(format!(
            "building {BIN} failed ({status}); `cargo build --release --manifest-path \
             weft-bench/rayon-on-weft/Cargo.toml` shows why"
        ));
    }
    let bin = profile_dir.join(BIN);
    if bin.exists() {
        Ok(bin)
    } else {
        Err(format!("{BIN} was built but is not at {}", bin.display()))
    }
}

/// Whether the rayon this binary links runs on weft: the shim names its
/// workers `weft-worker-{index}`, real rayon-core leaves them unnamed. It
/// builds and drops a pool of its own, so it runs after the measurement.
pub fn rayon_is_on_weft() -> bool {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread rayon pool");
    pool.install(|| {
        std::thread::current()
            .name()
            .is_some_and(|name| name.starts_with("weft-worker"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `[dependencies]` table of a manifest, one entry a line, without
    /// comments, with its paths taken from `base` (the manifest's folder).
    fn dependencies(manifest: &Path) -> Vec<String> {
        let text = std::fs::read_to_string(manifest).expect("manifest readable");
        let base = manifest.parent().expect("manifest folder");
        text.lines()
            .skip_while(|line| line.trim() != "[dependencies]")
            .skip(1)
            .take_while(|line| !line.starts_with('['))
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .map(|line| match line.split_once("path = \"") {
                Some((head, rest)) => {
                    let (path, tail) = rest.split_once('"').expect("closing quote");
                    let full = base
                        .join(path)
                        .canonicalize()
                        .expect("path dependency exists");
                    format!("{head}path = {full:?}{tail}")
                }
                None => line.to_string(),
            })
            .collect()
    }

    /// The peer is weft-bench's source built again with nothing changed but
    /// rayon-core: the same dependencies, at the same versions and features.
    #[test]
    fn the_second_build_has_this_one_dependencies() {
        let ours = dependencies(&bench_dir().join("Cargo.toml"));
        assert!(ours.iter().any(|d| d.starts_with("rayon ")), "{ours:?}");
        assert_eq!(dependencies(&manifest()), ours);
    }

    /// weft-bench's tests link the real rayon-core, the second build's
    /// (`cargo test --manifest-path weft-bench/rayon-on-weft/Cargo.toml`)
    /// the shim: a patch that did not take would show here.
    #[test]
    fn each_build_links_the_rayon_core_its_manifest_names() {
        assert_eq!(rayon_is_on_weft(), SECOND_BUILD);
    }
}
