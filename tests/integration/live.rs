//! Live mode against the real control plane and GPU lab: every scenario from the `admin` and the
//! `restricted` context and the real kubectl running the plugin from PATH, at every version in
//! tests/cluster/versions; an unreachable apiserver, a missing Pod and the audit log (read-only verbs) at the newest.

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cluster::{Cluster, LAB_NAMESPACE, cluster};

fn gpuwhy(c: &Cluster, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kubectl-gpuwhy"))
        .args(args)
        .arg("--kubeconfig")
        .arg(&c.kubeconfig)
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .output()
        .expect("run kubectl-gpuwhy")
}

fn json_for(c: &Cluster, context: &str, target: &str) -> (i32, Value) {
    let o = gpuwhy(
        c,
        &[
            target,
            "-n",
            LAB_NAMESPACE,
            "--context",
            context,
            "-o",
            "json",
        ],
    );
    let code = o.status.code().unwrap_or(-1);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{target} as {context}: not JSON ({e}); exit {code}; stderr: {}",
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (code, v)
}

/// Whether this version's scheduler names the untolerated taint in its message: from 1.24 until 1.35 and the late
/// 1.34 patches (v1.34.4 does not).
fn names_the_taint(c: &Cluster) -> bool {
    c.version == "v1.30.14"
}

/// Whether this version's scheduler tells a node with none of the GPU allocatable from one whose GPUs are held: from
/// 1.34 the first is unresolvable, so preemption helps on no node (`N Preemption is not helpful for scheduling`).
fn tells_unallocatable_from_held(c: &Cluster) -> bool {
    c.version != "v1.30.14"
}

/// Waits until the scheduler has written its verdict on every Pending lab Pod.
fn settled(c: &Cluster) {
    for pod in ["gpu-busy", "gpu-none", "gpu-taint", "gpu-mixed"] {
        c.wait_for(
            &format!("{pod} to carry PodScheduled=False"),
            Duration::from_secs(60),
            || {
                let v = c.get_json(&["get", "pod", pod, "-n", LAB_NAMESPACE]);
                let msg = v["status"]["conditions"]
                    .as_array()
                    .and_then(|cs| cs.iter().find(|c| c["type"] == "PodScheduled"))
                    .and_then(|c| c["message"].as_str())
                    .unwrap_or("")
                    .to_string();
                if msg.contains("nodes are available") {
                    Ok(())
                } else {
                    Err(msg)
                }
            },
        );
    }
}

crate::cluster::at_every_version!(
    admin_sees_the_facts_behind_every_scenario,
    restricted_still_names_the_cause_and_lists_its_gaps,
    real_kubectl_runs_the_plugin_from_path,
);

fn admin_sees_the_facts_behind_every_scenario(c: &Cluster) {
    settled(c);
    for (target, code, gate, primary, detail) in [
        ("gpu-ok", 0, "none", "none", None),
        (
            "gpu-busy",
            1,
            "scheduling",
            "insufficient-resource",
            Some(("holders", "gpu-lab/gpu-holder (1)")),
        ),
        (
            "gpu-none",
            1,
            "scheduling",
            "device-plugin",
            Some(("node", "gpu-node-3")),
        ),
        (
            "gpu-taint",
            1,
            "scheduling",
            "taint",
            Some(("taint", "nvidia.com/gpu=present:NoSchedule")),
        ),
        (
            "gpu-mixed",
            1,
            "scheduling",
            "taint",
            Some(("node", "gpu-node-2")),
        ),
        (
            "gpu-handler",
            1,
            "runtime",
            "handler-missing",
            Some(("handler", "nvidia")),
        ),
        (
            "deploy/gpu-rc-missing",
            1,
            "admission",
            "runtimeclass-not-found",
            Some(("runtimeclass", "nvidia-missing")),
        ),
        (
            "deploy/gpu-quota",
            1,
            "admission",
            "quota",
            Some(("quota", "gpu-quota")),
        ),
    ] {
        let (got_code, v) = json_for(c, "admin", target);
        assert_eq!(got_code, code, "{target}: {v:#}");
        assert_eq!(
            (v["gate"].as_str(), v["primary"].as_str()),
            (Some(gate), Some(primary)),
            "{target}: {v:#}"
        );
        assert_eq!(v["target"]["source"], "cluster");
        if let Some((key, want)) = detail {
            let got = &v["causes"][0]["details"][key];
            let ok = got.as_str() == Some(want)
                || got
                    .as_array()
                    .is_some_and(|a| a.iter().any(|x| x.as_str() == Some(want)));
            assert!(ok, "{target}: details.{key} = {got}, want {want}");
        }
    }
    // The taint fix names the real taint, and node-side commands are marked.
    let (_, v) = json_for(c, "admin", "gpu-taint");
    assert!(
        v["causes"][0]["fix"]
            .as_str()
            .unwrap()
            .contains("key: \"nvidia.com/gpu\"")
    );
    let (_, v) = json_for(c, "admin", "gpu-handler");
    assert!(v["causes"][0]["next"].as_array().unwrap().iter().any(|n| {
        n["where"] == "node"
            && n["command"]
                .as_str()
                .unwrap()
                .contains("containerd config dump")
    }));
}

fn restricted_still_names_the_cause_and_lists_its_gaps(c: &Cluster) {
    settled(c);
    // Without the nodes, only the scheduler's message tells that gpu-none's L4 node advertises no GPU.
    let none = if tells_unallocatable_from_held(c) {
        "device-plugin"
    } else {
        "insufficient-resource"
    };
    for (target, gate, primary) in [
        ("gpu-busy", "scheduling", "insufficient-resource"),
        ("gpu-none", "scheduling", none),
        ("gpu-taint", "scheduling", "taint"),
        ("gpu-handler", "runtime", "handler-missing"),
        ("gpu-ok", "none", "none"),
    ] {
        let (_, v) = json_for(c, "restricted", target);
        assert_eq!(
            (v["gate"].as_str(), v["primary"].as_str()),
            (Some(gate), Some(primary)),
            "{target}: {v:#}"
        );
        if primary != "none" {
            let gaps: Vec<&str> = v["gaps"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|g| g["check"].as_str())
                .collect();
            assert!(
                gaps.iter()
                    .any(|g| *g == "nodes" || *g == "runtimeclass" || *g == "runtime config"),
                "{target}: gaps {gaps:?}"
            );
            if target != "gpu-handler" {
                assert!(
                    gaps.contains(&"nodes"),
                    "{target}: a forbidden node list is a gap: {gaps:?}"
                );
            }
        }
    }
    // Without the nodes, the taint's name can come only from the message: v1.30's scheduler writes it
    // (`untolerated taint {nvidia.com/gpu: present}`), v1.34.4 and v1.37 do not.
    let (_, v) = json_for(c, "restricted", "gpu-taint");
    let named = v["causes"][0]["details"]["taint"].as_str();
    if names_the_taint(c) {
        assert_eq!(named, Some("nvidia.com/gpu=present"), "{v:#}");
        assert!(
            v["causes"][0]["fix"]
                .as_str()
                .is_some_and(|f| f.contains("key: \"nvidia.com/gpu\"")),
            "{v:#}"
        );
    } else {
        assert_eq!(named, None, "{v:#}");
    }
    // gpu-mixed: of the nodes in its zone, one lacks a GPU, one has all of its GPUs held, and the GPU-tainted
    // one has free GPUs. Without the nodes, only a text that names the taint shows that it is the GPU's own.
    let (_, v) = json_for(c, "restricted", "gpu-mixed");
    let want = if names_the_taint(c) {
        "taint"
    } else {
        "insufficient-resource"
    };
    assert_eq!(v["primary"].as_str(), Some(want), "{v:#}");
}

#[test]
fn missing_pod_is_exit_2_with_close_names() {
    let o = gpuwhy(
        cluster(),
        &["gpu-tain", "-n", LAB_NAMESPACE, "--context", "admin"],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("not found") && err.contains("gpu-taint"),
        "{err}"
    );
}

fn kubeconfig_pointing_at(port: u16) -> std::path::PathBuf {
    let c = cluster();
    let text = std::fs::read_to_string(&c.kubeconfig).unwrap();
    let re = regex::Regex::new(r"server: https://127\.0\.0\.1:\d+").unwrap();
    let changed = re
        .replace_all(&text, format!("server: https://127.0.0.1:{port}").as_str())
        .into_owned();
    let p = c.state_dir.join(format!("dead-{port}.kubeconfig"));
    std::fs::write(&p, changed).unwrap();
    p
}

fn run_against(kubeconfig: &Path, timeout: &str) -> (Output, Duration) {
    let start = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_kubectl-gpuwhy"))
        .args([
            "gpu-ok",
            "-n",
            LAB_NAMESPACE,
            "--request-timeout",
            timeout,
            "--kubeconfig",
        ])
        .arg(kubeconfig)
        .env_remove("KUBECONFIG")
        .output()
        .unwrap();
    (o, start.elapsed())
}

#[test]
fn unreachable_apiserver_is_exit_3_within_the_timeout() {
    // A port with nothing listening: connection refused, as for a stopped apiserver.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (o, took) = run_against(&kubeconfig_pointing_at(port), "2s");
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(took < Duration::from_secs(4), "{took:?}");
    // A server that accepts and never answers: only the timeout ends it.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let hold = std::thread::spawn(move || {
        let mut held = Vec::new();
        silent.set_nonblocking(false).unwrap();
        let end = Instant::now() + Duration::from_secs(8);
        while Instant::now() < end {
            if let Ok((mut s, _)) = silent.accept() {
                s.set_read_timeout(Some(Duration::from_millis(100))).ok();
                let mut buf = [0u8; 64];
                let _ = s.read(&mut buf);
                held.push(s);
            }
            if held.len() > 4 {
                break;
            }
        }
    });
    let (o, took) = run_against(&kubeconfig_pointing_at(port), "2s");
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        took >= Duration::from_millis(1500) && took < Duration::from_secs(6),
        "{took:?}"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    drop(hold);
}

#[test]
fn the_audit_log_shows_only_reads() {
    let c = cluster();
    settled(c);
    let before = std::fs::metadata(&c.audit_log)
        .map(|m| m.len())
        .unwrap_or(0);
    for target in ["gpu-busy", "gpu-taint", "gpu-handler", "deploy/gpu-quota"] {
        let _ = json_for(c, "admin", target);
    }
    let _ = json_for(c, "restricted", "gpu-none");
    // The audit backend writes asynchronously; give it a moment.
    let verbs = c.wait_for(
        "gpuwhy's requests in the audit log",
        Duration::from_secs(20),
        || {
            let mut f = std::fs::File::open(&c.audit_log).map_err(|e| e.to_string())?;
            let mut all = String::new();
            f.read_to_string(&mut all).map_err(|e| e.to_string())?;
            let tail = &all[(before as usize).min(all.len())..];
            let mut verbs = Vec::new();
            for line in tail.lines() {
                let Ok(e) = serde_json::from_str::<Value>(line) else {
                    continue;
                };
                if e["userAgent"]
                    .as_str()
                    .is_some_and(|u| u.starts_with("kubectl-gpuwhy/"))
                    && e["stage"] == "ResponseComplete"
                {
                    verbs.push((
                        e["verb"].as_str().unwrap_or("").to_string(),
                        e["user"]["username"].as_str().unwrap_or("").to_string(),
                    ));
                }
            }
            if verbs.len() >= 20 {
                Ok(verbs)
            } else {
                Err(format!("{} entries so far", verbs.len()))
            }
        },
    );
    assert!(
        verbs
            .iter()
            .all(|(v, _)| matches!(v.as_str(), "get" | "list" | "watch")),
        "write verbs: {verbs:?}"
    );
    assert!(
        verbs.iter().any(|(_, u)| u == "gpuwhy-restricted"),
        "the restricted user's requests are audited too"
    );
}

fn real_kubectl_runs_the_plugin_from_path(c: &Cluster) {
    settled(c);
    let exe = Path::new(env!("CARGO_BIN_EXE_kubectl-gpuwhy"));
    let mut path = vec![exe.parent().unwrap().to_path_buf()];
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let o = Command::new(c.kubectl_path())
        .args(["gpuwhy", "gpu-taint", "-n", LAB_NAMESPACE])
        .env("PATH", std::env::join_paths(path).unwrap())
        .env("KUBECONFIG", &c.kubeconfig)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.starts_with("Pod gpu-lab/gpu-taint: blocked at scheduling: taint"),
        "{out}"
    );
    assert!(out.contains("nvidia.com/gpu=present:NoSchedule"), "{out}");
    assert!(!out.contains('\u{1b}'), "piped output is plain");
}
