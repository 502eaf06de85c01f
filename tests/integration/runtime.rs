//! The runtime gate from real components: what Debian's containerd 1.6, containerd 2.x, CRI-O and cri-dockerd with
//! Docker, with the NVIDIA Container Toolkit as their `nvidia` runtime (or, for CRI-O, its OCI hook), answered over CRI
//! (tests/cluster/runtimes, kept in tests/fixtures/runtime); how the engine reads each answer, alone and as the
//! kubelet's event carries it, and CRI-O's warning when it drops a handler; and that the live runtimes still
//! answer the same.

use crate::common::{diagnose_file, fixture, insta_settings, root};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The runtimes the captures come from: fixture directory names, as tests/cluster/runtimes names them.
const RUNTIMES: [&str; 4] = [
    "containerd-1.6.20~ds1",
    "containerd-v2.4.2",
    "cri-o-1.34.0",
    "docker-26.1.5+dfsg1",
];

/// (runtime, scenario, primary, rule) for each scenario of tests/cluster/runtimes: what the engine makes of the
/// runtime's answer, at every version of that runtime (a fixture directory's name starts with the runtime's).
const READ_AS: [(&str, &str, &str, &str); 19] = [
    ("containerd", "handler-missing", "handler-missing", "GW401"),
    (
        "containerd",
        "runtime-binary-missing",
        "runtime-hook",
        "GW405",
    ),
    ("containerd", "toolkit-cdi", "runtime-hook", "GW411"),
    ("containerd", "toolkit-legacy", "runtime-hook", "GW448"),
    ("containerd", "toolkit-auto", "runtime-hook", "GW407"),
    ("containerd", "cri-cdi", "runtime-hook", "GW411"),
    // CRI-O drops a handler whose binary is missing when it starts, so the Pod meets a missing handler.
    ("cri-o", "handler-missing", "handler-missing", "GW402"),
    (
        "cri-o",
        "runtime-binary-missing",
        "handler-missing",
        "GW402",
    ),
    ("cri-o", "toolkit-cdi", "runtime-hook", "GW411"),
    ("cri-o", "toolkit-legacy", "runtime-hook", "GW448"),
    ("cri-o", "toolkit-auto", "runtime-hook", "GW407"),
    ("cri-o", "cri-cdi", "runtime-hook", "GW411"),
    ("cri-o", "oci-hook", "runtime-hook", "GW448"),
    ("cri-o", "startup", "handler-missing", "GW458"),
    // cri-dockerd 0.4 asks Docker for its runtimes and words a missing one as containerd 1.6 does; Docker's own
    // wrappers (`failed to start sandbox container for pod`, `Error response from daemon:`) go around the rest.
    ("docker", "handler-missing", "handler-missing", "GW401"),
    ("docker", "runtime-binary-missing", "runtime-hook", "GW459"),
    ("docker", "toolkit-cdi", "runtime-hook", "GW411"),
    ("docker", "toolkit-legacy", "runtime-hook", "GW448"),
    ("docker", "toolkit-auto", "runtime-hook", "GW407"),
];

/// (scenario, CRI call) from a capture directory's calls.tsv.
fn calls(dir: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(dir.join("calls.tsv"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join("calls.tsv").display()));
    text.lines()
        .map(|l| {
            let (scenario, call) = l.split_once('\t').expect("scenario<TAB>call");
            (scenario.to_string(), call.to_string())
        })
        .collect()
}

/// The message of the kubelet's event for a CRI error `err` from `call` (pkg/kubelet/kuberuntime: the sandbox's
/// `Failed to create pod sandbox: %v` with the whole error; a container's `Error: %v` with the status message).
fn kubelet_message(call: &str, err: &str) -> String {
    let desc = err
        .split_once(" desc = ")
        .map_or(err, |(_, desc)| desc)
        .trim_end();
    match call {
        "RunPodSandbox" => format!("Failed to create pod sandbox: {}", err.trim_end()),
        "CreateContainer" | "StartContainer" => format!("Error: {desc}"),
        other => panic!("unknown CRI call {other}"),
    }
}

fn primary_and_rule(text: &str) -> (String, String, String) {
    let (_, evs) = gpuwhy::offline::parse(text, "capture").expect("parses");
    let d = &gpuwhy::diagnose::diagnose_all(&evs)[0];
    let rule = d
        .causes
        .first()
        .and_then(|c| c.rule)
        .map(str::to_string)
        .unwrap_or_default();
    (
        d.gate.as_str().to_string(),
        d.primary.as_str().to_string(),
        rule,
    )
}

#[test]
fn runtime_captures_read_as_the_scenario_intends() {
    let mut seen = Vec::new();
    for runtime in RUNTIMES {
        let dir = fixture("runtime").join(runtime);
        let calls = calls(&dir);
        // Every captured answer is listed in calls.tsv, and so read below.
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".txt") && n != "versions.txt")
            .collect();
        files.sort();
        let mut listed: Vec<String> = calls.iter().map(|(s, _)| format!("{s}.txt")).collect();
        listed.sort();
        assert_eq!(files, listed, "{runtime}: calls.tsv");
        let read_as = |scenario: &str| {
            let (_, _, primary, rule) = READ_AS
                .iter()
                .find(|(r, s, _, _)| runtime.starts_with(&format!("{r}-")) && *s == scenario)
                .unwrap_or_else(|| panic!("{runtime}/{scenario}: not in READ_AS"));
            ("runtime".to_string(), primary.to_string(), rule.to_string())
        };
        for (scenario, call) in &calls {
            let err = std::fs::read_to_string(dir.join(format!("{scenario}.txt"))).unwrap();
            let want = read_as(scenario);
            assert_eq!(primary_and_rule(&err), want, "{runtime}/{scenario}");
            let event = kubelet_message(call, &err);
            assert_eq!(
                primary_and_rule(&event),
                want,
                "{runtime}/{scenario} as the kubelet's event: {event}"
            );
            seen.push(format!("{runtime}/{scenario}"));
        }
        // The runtime's own log when it starts, where it has one to keep.
        if let Ok(log) = std::fs::read_to_string(dir.join("startup.log")) {
            assert_eq!(
                primary_and_rule(&log),
                read_as("startup"),
                "{runtime}/startup.log"
            );
            seen.push(format!("{runtime}/startup"));
        }
    }
    for (runtime, scenario, _, _) in READ_AS {
        assert!(
            seen.iter()
                .any(|s| s.starts_with(&format!("{runtime}-"))
                    && s.ends_with(&format!("/{scenario}"))),
            "{runtime}/{scenario}: no capture"
        );
    }
}

#[test]
fn runtime_captures_snapshot() {
    // The sandbox's id, the state dir, CRI-O's pointers and its runtime's timestamps change from run to run.
    let mut settings = insta_settings("offline");
    for (pattern, with) in MASKS {
        settings.add_filter(pattern, with);
    }
    let _g = settings.bind_to_scope();
    insta::glob!(
        "../fixtures/runtime",
        "*/{handler-missing,runtime-binary-missing,toolkit-*,cri-cdi,oci-hook}.txt",
        |path| {
            let ds = diagnose_file(path);
            insta::assert_json_snapshot!("runtime", serde_json::to_value(&ds[0]).unwrap());
        }
    );
}

/// What changes between runs, and what stands for it: sandbox ids, the state dirs (GPUWHY_CLUSTER_DIR), the pointer
/// addresses in CRI-O's runtime list, and the timestamps of CRI-O's and its runtime's log lines.
const MASKS: [(&str, &str); 5] = [
    (r"[0-9a-f]{64}", "<id>"),
    (r"/[^\s:()]*-runtime/(1\.6|2\.x)/state", "<state>/$1"),
    (r"/[^\s:()]*-runtime/docker/exec", "<state>/docker"),
    (r":0x[0-9a-f]+", ":<pointer>"),
    (r#"time=\\?"[0-9TZ:.+-]+\\?""#, "time=<time>"),
];

/// `s` with what changes between runs masked.
fn masked(s: &str) -> String {
    MASKS.iter().fold(s.to_string(), |s, (pattern, with)| {
        regex::Regex::new(pattern)
            .unwrap()
            .replace_all(&s, *with)
            .into_owned()
    })
}

#[test]
fn the_live_runtimes_still_answer_what_the_fixtures_hold() {
    let out: PathBuf = std::env::temp_dir().join(format!("gpuwhy-runtimes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(root().join("tests/cluster/runtimes"))
        .arg(&out)
        .output()
        .expect("tests/cluster/runtimes runs");
    assert!(
        run.status.success(),
        "tests/cluster/runtimes failed (it needs root, Debian's containerd and runc, and Go):\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    for runtime in RUNTIMES {
        let (live, kept) = (out.join(runtime), fixture("runtime").join(runtime));
        assert_eq!(calls(&live), calls(&kept), "{runtime}: calls.tsv");
        let mut files: Vec<String> = std::iter::once("versions".to_string())
            .chain(calls(&kept).into_iter().map(|(s, _)| s))
            .map(|s| format!("{s}.txt"))
            .collect();
        if kept.join("startup.log").exists() {
            files.push("startup.log".into());
        }
        for name in files {
            let read = |dir: &Path| {
                let p = dir.join(&name);
                std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            };
            assert_eq!(
                masked(&read(&live)),
                masked(&read(&kept)),
                "{runtime}/{name}"
            );
        }
    }
    std::fs::remove_dir_all(&out).unwrap();
}
