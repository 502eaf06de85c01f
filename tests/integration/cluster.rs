//! Starts or reuses the real control plane (tests/cluster/up) and the GPU lab (tests/cluster/lab) for cargo test,
//! once per test process. It owns process startup and the kubectl plumbing, not assertions: those live in
//! controlplane.rs. When the cluster cannot come up, it panics with the scripts' stderr: tests fail, never skip.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The Kubernetes versions the lab runs at, newest first, as in tests/cluster/versions (a test checks that the two
/// lists agree). Every control-plane test and the live tests of the lab's scenarios run at each; the other tests
/// use the newest.
pub const VERSIONS: [&str; 3] = ["v1.37.2", "v1.34.4", "v1.30.14"];
pub const NEWEST: &str = VERSIONS[0];

/// A running control plane with the lab applied. Built by [`cluster`] or [`cluster_at`].
#[derive(Debug)]
pub struct Cluster {
    /// The Kubernetes version of every component (one of `VERSIONS`).
    pub version: &'static str,
    /// Kubeconfig with contexts `admin` and `restricted` (namespace `gpu-lab` only).
    pub kubeconfig: PathBuf,
    /// The cached bin dir of tests/cluster/build: kubectl, kube-apiserver, etcd, … at `version`.
    pub bin_dir: PathBuf,
    /// `${GPUWHY_CLUSTER_DIR:-/tmp/gpuwhy-cluster}`, with `-v1.34` or `-v1.30` appended for the older ones: PKI,
    /// logs, pid files, lab outputs.
    pub state_dir: PathBuf,
    /// The kube-apiserver audit log (every request, Metadata level).
    pub audit_log: PathBuf,
}

/// The namespace the lab's scenarios live in, and the only one the `restricted` context can read.
pub const LAB_NAMESPACE: &str = "gpu-lab";

/// The newest control plane and its lab, started (or reused) on first use in this test process.
pub fn cluster() -> &'static Cluster {
    cluster_at(NEWEST)
}

/// The control plane of `version` (one of `VERSIONS`) and its lab, started (or reused) on first use in this test
/// process. They run side by side, each on its own ports and state dir.
pub fn cluster_at(version: &'static str) -> &'static Cluster {
    static AT: [OnceLock<Cluster>; VERSIONS.len()] = [const { OnceLock::new() }; VERSIONS.len()];
    let i = VERSIONS
        .iter()
        .position(|v| *v == version)
        .unwrap_or_else(|| panic!("no control plane for {version}; the lab runs at {VERSIONS:?}"));
    AT[i].get_or_init(|| start(version))
}

/// Generates, for each function named, one `#[test]` per version: `v1_37::NAME`, `v1_34::NAME`, `v1_30::NAME`,
/// each calling `NAME(&Cluster)` with that version's control plane.
macro_rules! at_every_version {
    ($($name:ident),* $(,)?) => {
        mod v1_37 {
            $(#[test] fn $name() { super::$name($crate::cluster::cluster_at($crate::cluster::VERSIONS[0])) })*
        }
        mod v1_34 {
            $(#[test] fn $name() { super::$name($crate::cluster::cluster_at($crate::cluster::VERSIONS[1])) })*
        }
        mod v1_30 {
            $(#[test] fn $name() { super::$name($crate::cluster::cluster_at($crate::cluster::VERSIONS[2])) })*
        }
    };
}
pub(crate) use at_every_version;

/// tests/cluster/versions, which the scripts read, lists the versions above in the same order.
#[test]
fn the_scripts_and_the_tests_know_the_same_versions() {
    let file = repo_root().join("tests/cluster/versions");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("K8S_VERSIONS=("))
        .and_then(|l| l.strip_suffix(')'))
        .expect("a K8S_VERSIONS=(…) line");
    assert_eq!(line.split_whitespace().collect::<Vec<_>>(), VERSIONS);
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run_script(name: &str, version: &str) -> String {
    let script = repo_root().join("tests/cluster").join(name);
    let started = Instant::now();
    let out = Command::new(&script)
        .env("GPUWHY_K8S_VERSION", version)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        panic!(
            "{} ({version}) failed ({}) after {:?}; the control-plane tests need it.\n--- stderr ---\n{}\n--- stdout ---\n{}",
            script.display(),
            out.status,
            started.elapsed(),
            String::from_utf8_lossy(&out.stderr),
            stdout
        );
    }
    stdout
}

fn last_line(s: &str) -> &str {
    s.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

fn start(version: &'static str) -> Cluster {
    let kubeconfig = PathBuf::from(last_line(&run_script("up", version)));
    assert!(
        kubeconfig.is_file(),
        "tests/cluster/up printed {kubeconfig:?}, which is not a file"
    );
    // The lab is idempotent: on a warm cluster it only re-asks the apiserver for the rejections.
    run_script("lab", version);
    let state_dir = kubeconfig
        .parent()
        .expect("kubeconfig lives in the state dir")
        .to_path_buf();
    let bin_dir = std::fs::read_to_string(state_dir.join("bin-dir"))
        .map(|s| PathBuf::from(s.trim()))
        .unwrap_or_else(|e| panic!("{}: {e}", state_dir.join("bin-dir").display()));
    let audit_log = state_dir.join("audit.log");
    Cluster {
        version,
        kubeconfig,
        bin_dir,
        state_dir,
        audit_log,
    }
}

impl Cluster {
    /// The real kubectl of `version`, built with the control plane (not the system's kubectl).
    pub fn kubectl_path(&self) -> PathBuf {
        self.bin_dir.join("kubectl")
    }

    /// A kubectl command for `context` (`admin` or `restricted`), with PATH led by the directory of the
    /// freshly built `kubectl-gpuwhy`, so `kubectl gpuwhy …` runs this crate's binary as a plugin.
    pub fn kubectl(&self, context: &str) -> Command {
        let mut cmd = Command::new(self.kubectl_path());
        cmd.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--context")
            .arg(context);
        cmd.env("PATH", plugin_path());
        cmd.env_remove("KUBECONFIG");
        cmd
    }

    /// Runs kubectl as `context` and returns its output, whatever the exit status.
    pub fn kubectl_output(&self, context: &str, args: &[&str]) -> Output {
        self.kubectl(context)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", self.kubectl_path().display()))
    }

    /// Runs kubectl as admin, expects success, and parses stdout as JSON (`-o json` is added).
    pub fn get_json(&self, args: &[&str]) -> serde_json::Value {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["-o", "json"]);
        let out = self.kubectl_output("admin", &all);
        assert!(
            out.status.success(),
            "kubectl {} failed: {}",
            all.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("kubectl {}: not JSON: {e}", all.join(" ")))
    }

    /// Polls `probe` every 500 ms until it returns `Some`, for at most `timeout` (the scheduler and the
    /// controllers need a moment). Panics with `what` and the last value seen.
    pub fn wait_for<T>(
        &self,
        what: &str,
        timeout: Duration,
        mut probe: impl FnMut() -> Result<T, String>,
    ) -> T {
        let end = Instant::now() + timeout;
        loop {
            match probe() {
                Ok(v) => return v,
                Err(last) if Instant::now() >= end => {
                    panic!("timed out after {timeout:?} waiting for {what}; last seen: {last}")
                }
                Err(_) => std::thread::sleep(Duration::from_millis(500)),
            }
        }
    }

    /// A file that tests/cluster/lab wrote into the state dir (rejection stderr, containerd text).
    pub fn lab_output(&self, name: &str) -> String {
        let p = self.state_dir.join("lab").join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }
}

/// PATH with the directory of the built `kubectl-gpuwhy` first, then the inherited PATH.
fn plugin_path() -> OsString {
    let exe = Path::new(env!("CARGO_BIN_EXE_kubectl-gpuwhy"));
    let mut dirs = vec![exe.parent().expect("binary has a parent dir").to_path_buf()];
    if let Some(p) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&p));
    }
    std::env::join_paths(dirs).expect("PATH entries contain no separator")
}
