//! The runtime gate from real components: what Debian's containerd 1.6 and containerd 2.x, with the NVIDIA
//! Container Toolkit as their `nvidia` runtime, answered over CRI (tests/cluster/runtimes, kept in
//! tests/fixtures/runtime); how the engine reads each answer, alone and as the kubelet's event carries it; and
//! that the live runtimes still answer the same.

use crate::common::{diagnose_file, fixture, insta_settings, root};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The containerds the captures come from: fixture directory names, as tests/cluster/runtimes names them.
const CONTAINERDS: [&str; 2] = ["containerd-1.6.20~ds1", "containerd-v2.4.2"];

/// (scenario, primary, rule) for each scenario of tests/cluster/runtimes: what the engine makes of the runtime's
/// answer, at every containerd that gave one.
const READ_AS: [(&str, &str, &str); 6] = [
    ("handler-missing", "handler-missing", "GW401"),
    ("runtime-binary-missing", "runtime-hook", "GW405"),
    ("toolkit-cdi", "runtime-hook", "GW411"),
    ("toolkit-legacy", "runtime-hook", "GW448"),
    ("toolkit-auto", "runtime-hook", "GW407"),
    ("cri-cdi", "runtime-hook", "GW411"),
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
    for containerd in CONTAINERDS {
        let dir = fixture("runtime").join(containerd);
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
        assert_eq!(files, listed, "{containerd}: calls.tsv");
        for (scenario, call) in &calls {
            let (_, primary, rule) = READ_AS
                .iter()
                .find(|(s, _, _)| s == scenario)
                .unwrap_or_else(|| panic!("{containerd}/{scenario}: not in READ_AS"));
            let err = std::fs::read_to_string(dir.join(format!("{scenario}.txt"))).unwrap();
            let want = ("runtime".to_string(), primary.to_string(), rule.to_string());
            assert_eq!(primary_and_rule(&err), want, "{containerd}/{scenario}");
            let event = kubelet_message(call, &err);
            assert_eq!(
                primary_and_rule(&event),
                want,
                "{containerd}/{scenario} as the kubelet's event: {event}"
            );
            seen.push(scenario.clone());
        }
    }
    for (scenario, _, _) in READ_AS {
        assert!(seen.iter().any(|s| s == scenario), "{scenario}: no capture");
    }
}

#[test]
fn runtime_captures_snapshot() {
    // The sandbox's id and the state dir change from run to run.
    let mut settings = insta_settings("offline");
    settings.add_filter(r"[0-9a-f]{64}", "<id>");
    settings.add_filter(r"/[^\s:()]*-runtime/(1\.6|2\.x)/state", "<state>");
    let _g = settings.bind_to_scope();
    insta::glob!(
        "../fixtures/runtime",
        "*/{handler-missing,runtime-binary-missing,toolkit-*,cri-cdi}.txt",
        |path| {
            let ds = diagnose_file(path);
            insta::assert_json_snapshot!("runtime", serde_json::to_value(&ds[0]).unwrap());
        }
    );
}

/// `s` with what changes between runs masked: sandbox ids, and the state dir (GPUWHY_CLUSTER_DIR).
fn masked(s: &str) -> String {
    let id = regex::Regex::new("[0-9a-f]{64}").unwrap();
    let state = regex::Regex::new(r"/[^\s:()]*-runtime/(1\.6|2\.x)/state").unwrap();
    state
        .replace_all(&id.replace_all(s, "<id>"), "<state>/$1")
        .into_owned()
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
    for containerd in CONTAINERDS {
        let (live, kept) = (out.join(containerd), fixture("runtime").join(containerd));
        assert_eq!(calls(&live), calls(&kept), "{containerd}: calls.tsv");
        for name in
            std::iter::once("versions".to_string()).chain(calls(&kept).into_iter().map(|(s, _)| s))
        {
            let read = |dir: &Path| {
                let p = dir.join(format!("{name}.txt"));
                std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            };
            assert_eq!(
                masked(&read(&live)),
                masked(&read(&kept)),
                "{containerd}/{name}.txt"
            );
        }
    }
    std::fs::remove_dir_all(&out).unwrap();
}
