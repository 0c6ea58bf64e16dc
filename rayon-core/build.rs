// Present only because the manifest carries rayon-core's `links` key, which
// Cargo accepts only with a build script. Nothing is built or linked.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
}
