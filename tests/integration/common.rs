//! Shared helpers for the integration tests: insta settings that put every snapshot under the top-level
//! `snapshots/<area>/`, fixture paths, and the built binary with a scrubbed environment.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixture(rel: &str) -> PathBuf {
    root().join("tests/fixtures").join(rel)
}

/// insta settings for one area: snapshots live in `snapshots/<area>/`, named without module prefixes.
pub fn insta_settings(area: &str) -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path(root().join("snapshots").join(area));
    s.set_prepend_module_to_snapshot(false);
    s.set_omit_expression(true);
    s
}

/// The built binary with a scrubbed environment (no colour forcing, no kubeconfig, no terminal).
pub fn gpuwhy() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kubectl-gpuwhy"));
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", root().join("target"));
    c
}

/// Runs the binary with `args` and `stdin`, returning its output.
pub fn run(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut c = gpuwhy();
    c.args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawn kubectl-gpuwhy");
    if let Some(input) = stdin {
        use std::io::Write;
        let mut w = child.stdin.take().expect("stdin");
        // The binary may exit before reading everything (e.g. on an error); ignore a broken pipe.
        let _ = w.write_all(input);
    }
    child.wait_with_output().expect("wait")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Diagnoses a fixture file through the library, as `--from-file` does.
pub fn diagnose_file(path: &Path) -> Vec<gpuwhy::diagnose::Diagnosis> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let text = gpuwhy::offline::decode(bytes, "fixture").expect("fixture is text");
    let (_, evs) = gpuwhy::offline::parse(&text, "fixture")
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    gpuwhy::diagnose::diagnose_all(&evs)
}
