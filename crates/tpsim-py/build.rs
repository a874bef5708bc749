//! Embeds the build fingerprint: the SHA-256 of every source file of the workspace's crates
//! and of Cargo.lock, so that a run stored by one build is never reused by another build
//! whose engine could compute something else (the package version alone stays the same
//! across engine changes).

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            // Build outputs and caches are not sources.
            if p.file_name()
                .is_some_and(|n| n == "target" || n.to_string_lossy().starts_with('.'))
            {
                continue;
            }
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs" || x == "toml") {
            out.push(p);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = manifest.join("../..");
    let crates = root.join("crates");
    let mut list = Vec::new();
    files(&crates, &mut list);
    list.push(root.join("Cargo.lock"));
    list.push(root.join("Cargo.toml"));
    list.sort();
    let mut h = Sha256::new();
    for p in &list {
        // Paths relative to the root, so that the fingerprint does not depend on where the
        // checkout is.
        let rel = p.strip_prefix(&root).unwrap_or(p);
        h.update(rel.to_string_lossy().as_bytes());
        h.update([0]);
        h.update(std::fs::read(p).unwrap_or_default());
        h.update([0]);
    }
    let hex: String = h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env=TPSIM_BUILD_ID={hex}");
    println!("cargo:rerun-if-changed={}", crates.display());
    println!("cargo:rerun-if-changed={}", root.join("Cargo.lock").display());
    println!("cargo:rerun-if-changed={}", root.join("Cargo.toml").display());
}
