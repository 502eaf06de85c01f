//! Records the git commit for `--version`: `GPUWHY_COMMIT` wins (release builds from a tarball), then
//! `git rev-parse`, else "unknown".
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=GPUWHY_COMMIT");
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs");
    let commit = std::env::var("GPUWHY_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(|| {
            Command::new("git")
                .args(["rev-parse", "--short=12", "HEAD"])
                .output()
                .ok()
                .filter(|o| o.status.success())
                .and_then(|o| String::from_utf8(o.stdout).ok())
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        });
    println!(
        "cargo:rustc-env=GPUWHY_COMMIT={}",
        commit.unwrap_or_else(|| "unknown".into())
    );
}
