//! Tests against the real kube-apiserver and kube-scheduler, at every version in tests/cluster/versions.
//! They assert what the real components of the control plane (tests/cluster/up) said about the GPU lab
//! (tests/cluster/lab): the scheduler's FailedScheduling events and PodScheduled conditions, the apiserver's
//! rejection texts, the owners' FailedCreate events, the containerd handler text, the version, and the audit log.
//! They do not test gpuwhy's diagnosis; the fixtures captured from this lab (tests/fixtures/k8s-<version>) do that.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::cluster::{Cluster, LAB_NAMESPACE};

const SCHEDULER_WAIT: Duration = Duration::from_secs(60);

fn manifest(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cluster/manifests")
        .join(name)
}

fn pod(c: &Cluster, name: &str) -> Value {
    c.get_json(&["-n", LAB_NAMESPACE, "get", "pod", name])
}

fn condition<'a>(pod: &'a Value, kind: &str) -> Option<&'a Value> {
    pod["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)
}

fn str_of(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

/// core/v1 Events about `kind/name` in the lab namespace.
fn events(c: &Cluster, kind: &str, name: &str) -> Vec<Value> {
    let selector = format!("involvedObject.kind={kind},involvedObject.name={name}");
    let list = c.get_json(&[
        "-n",
        LAB_NAMESPACE,
        "get",
        "events",
        "--field-selector",
        &selector,
    ]);
    list["items"].as_array().cloned().unwrap_or_default()
}

/// events.k8s.io/v1 Events about `kind/name` in the lab namespace.
fn events_v1(c: &Cluster, kind: &str, name: &str) -> Vec<Value> {
    let selector = format!("regarding.kind={kind},regarding.name={name}");
    let list = c.get_json(&[
        "-n",
        LAB_NAMESPACE,
        "get",
        "events.v1.events.k8s.io",
        "--field-selector",
        &selector,
    ]);
    list["items"].as_array().cloned().unwrap_or_default()
}

/// Waits for the scheduler to mark `name` Unschedulable and to record the matching FailedScheduling event.
/// Returns the condition's message (complete; the event's copy is cut at 1024 bytes, not reached here).
fn unschedulable(c: &Cluster, name: &str) -> String {
    let message = c.wait_for(
        &format!("PodScheduled=False/Unschedulable on {name}"),
        SCHEDULER_WAIT,
        || {
            let p = pod(c, name);
            let cond = condition(&p, "PodScheduled").ok_or("no PodScheduled condition yet")?;
            if cond["status"] == "False" && cond["reason"] == "Unschedulable" {
                Ok(str_of(&cond["message"]).to_owned())
            } else {
                Err(cond.to_string())
            }
        },
    );
    // The scheduler writes events.k8s.io/v1; the same object reads through core/v1.
    c.wait_for(
        &format!("FailedScheduling event for {name} saying {message:?}"),
        SCHEDULER_WAIT,
        || {
            let v1 = events_v1(c, "Pod", name);
            let hit = v1
                .iter()
                .find(|e| e["reason"] == "FailedScheduling" && e["note"] == message.as_str());
            let e = hit.ok_or_else(|| format!("{} events.k8s.io/v1 events", v1.len()))?;
            assert_eq!(e["type"], "Warning");
            assert_eq!(e["action"], "Scheduling");
            assert_eq!(e["reportingController"], "default-scheduler");
            let core = events(c, "Pod", name);
            core.iter()
                .find(|e| e["reason"] == "FailedScheduling" && e["message"] == message.as_str())
                .map(|_| ())
                .ok_or_else(|| "not visible through core/v1".to_owned())
        },
    );
    message
}

/// `kubectl create -f -` (manifest on stdin, as the lab does) as admin must fail; returns its stderr.
fn rejected(c: &Cluster, manifest_name: &str) -> String {
    let path = manifest(manifest_name);
    let create = |verb: &[&str]| {
        let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        c.kubectl("admin")
            .args(verb)
            .args(["-f", "-"])
            .stdin(file)
            .output()
            .expect("run kubectl")
    };
    let out = create(&["create"]);
    if out.status.success() {
        create(&["delete", "--wait=false"]);
        panic!("the apiserver accepted {manifest_name}; expected a rejection");
    }
    String::from_utf8_lossy(&out.stderr).trim_end().to_owned()
}

/// Waits for the Deployment's ReplicaSet to carry a FailedCreate event; returns its message.
fn owner_failed_create(c: &Cluster, deployment: &str) -> String {
    c.wait_for(
        &format!("FailedCreate on the ReplicaSet of {deployment}"),
        Duration::from_secs(90),
        || {
            let rs = c.get_json(&[
                "-n",
                LAB_NAMESPACE,
                "get",
                "rs",
                "-l",
                &format!("app={deployment}"),
            ]);
            let name = str_of(&rs["items"][0]["metadata"]["name"]).to_owned();
            if name.is_empty() {
                return Err("no ReplicaSet yet".into());
            }
            let evs = events(c, "ReplicaSet", &name);
            let e = evs
                .iter()
                .find(|e| e["reason"] == "FailedCreate")
                .ok_or(format!("no FailedCreate on {name} yet"))?;
            assert_eq!(e["type"], "Warning");
            assert_eq!(e["source"]["component"], "replicaset-controller");
            Ok(str_of(&e["message"]).to_owned())
        },
    )
}

// ------------------------------------------------------------------ what the real components said

/// What the real components of one version said about the lab (tests/fixtures/k8s-<version>/README.md).
struct Said {
    busy: &'static str,
    none: &'static str,
    taint: &'static str,
    mixed: &'static str,
    fraction: &'static str,
}

/// The texts that no version in the matrix changed, and `FRACTION`, which v1.30 prints otherwise.
const REQ_NE_LIMIT: &str = r#"The Pod "gpu-req-ne-limit" is invalid: spec.containers[0].resources.requests: Invalid value: "1": must be equal to nvidia.com/gpu limit of 2"#;
const REQ_NO_LIMIT: &str = r#"The Pod "gpu-req-no-limit" is invalid: spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"#;
const FRACTION: &str = r#"The Pod "gpu-fraction" is invalid: 
* spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "500m": must be an integer
* spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: "500m": must be an integer"#;
const RC_MISSING: &str = r#"Error from server (Forbidden): error when creating "STDIN": pods "gpu-rc-missing" is forbidden: pod rejected: RuntimeClass "nvidia-missing" not found"#;
const QUOTA_TAIL: &str = "is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=2, used: requests.nvidia.com/gpu=0, limited: requests.nvidia.com/gpu=1";
const CONTAINERD: &str = r#"rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "nvidia" is configured"#;

const SAID_V1_37: Said = Said {
    busy: "0/5 nodes are available: 1 Insufficient nvidia.com/gpu, 4 node(s) didn't match Pod's node affinity/selector. preemption: 0/5 nodes are available: 1 No preemption victims found for incoming pod, 4 Preemption is not helpful for scheduling.",
    none: "0/5 nodes are available: 1 Insufficient nvidia.com/gpu, 4 node(s) didn't match Pod's node affinity/selector. preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.",
    // Since 1.35 (and late 1.34 patches) the taint filter no longer names the taint.
    taint: "0/5 nodes are available: 1 node(s) had untolerated taint(s), 4 node(s) didn't match Pod's node affinity/selector. preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.",
    mixed: "0/5 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient nvidia.com/gpu, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/5 nodes are available: 1 No preemption victims found for incoming pod, 4 Preemption is not helpful for scheduling.",
    fraction: FRACTION,
};

const SAID_V1_34: Said = Said {
    // 1.34 (with DRA on by default) puts the DRA plugin's `no new claims to deallocate, ` before the preemption
    // part; its late patches no longer name the taint (v1.34.4 here).
    busy: "0/5 nodes are available: 1 Insufficient nvidia.com/gpu, 4 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, preemption: 0/5 nodes are available: 1 No preemption victims found for incoming pod, 4 Preemption is not helpful for scheduling.",
    none: "0/5 nodes are available: 1 Insufficient nvidia.com/gpu, 4 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.",
    taint: "0/5 nodes are available: 1 node(s) had untolerated taint(s), 4 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.",
    mixed: "0/5 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient nvidia.com/gpu, 2 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, preemption: 0/5 nodes are available: 1 No preemption victims found for incoming pod, 4 Preemption is not helpful for scheduling.",
    fraction: FRACTION,
};

const SAID_V1_30: Said = Said {
    busy: "0/5 nodes are available: 1 Insufficient nvidia.com/gpu, 4 node(s) didn't match Pod's node affinity/selector. preemption: 0/5 nodes are available: 1 No preemption victims found for incoming pod, 4 Preemption is not helpful for scheduling.",
    // At 1.30 the preemption pass counts a node that advertises no GPU as "No preemption victims" too: gpu-none
    // and gpu-busy get the same text, and only the nodes tell them apart.
    none: "0/5 nodes are available: 1 Insufficient nvidia.com/gpu, 4 node(s) didn't match Pod's node affinity/selector. preemption: 0/5 nodes are available: 1 No preemption victims found for incoming pod, 4 Preemption is not helpful for scheduling.",
    // From 1.24 to the early 1.34 patches the message names the taint's key and value.
    taint: "0/5 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}, 4 node(s) didn't match Pod's node affinity/selector. preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.",
    mixed: "0/5 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}, 2 Insufficient nvidia.com/gpu, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/5 nodes are available: 2 No preemption victims found for incoming pod, 3 Preemption is not helpful for scheduling.",
    // At 1.30 the apiserver prints the Go value of the Quantity, not "500m".
    fraction: r#"The Pod "gpu-fraction" is invalid: 
* spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: resource.Quantity{i:resource.int64Amount{value:5, scale:-1}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"", Format:"DecimalSI"}: must be an integer
* spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: resource.Quantity{i:resource.int64Amount{value:5, scale:-1}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"", Format:"DecimalSI"}: must be an integer"#,
};

fn said(c: &Cluster) -> &'static Said {
    match c.version {
        "v1.37.2" => &SAID_V1_37,
        "v1.34.4" => &SAID_V1_34,
        "v1.30.14" => &SAID_V1_30,
        other => panic!("no texts recorded for {other}"),
    }
}

crate::cluster::at_every_version!(
    control_plane_is_the_version_asked_for,
    gpu_ok_is_bound_to_the_free_gpu_node,
    gpu_busy_every_gpu_of_the_wanted_model_is_taken,
    gpu_none_the_wanted_node_advertises_no_gpu,
    gpu_taint_untolerated_gpu_taint,
    gpu_mixed_taint_affinity_and_insufficient_in_one_message,
    apiserver_rejects_requests_not_equal_to_limits,
    apiserver_rejects_a_fractional_gpu,
    runtimeclass_admission_rejects_a_missing_runtimeclass,
    resourcequota_admission_rejects_gpus_over_quota,
    containerd_has_no_runtime_for_the_nvidia_handler,
    restricted_context_reads_only_pods_and_events_in_the_lab,
    audit_log_records_each_request_with_its_user,
    kubectl_finds_the_plugin_on_path,
    fixtures_match_the_live_control_plane,
);

fn control_plane_is_the_version_asked_for(c: &Cluster) {
    let out = std::process::Command::new(c.bin_dir.join("kube-apiserver"))
        .arg("--version")
        .output()
        .expect("run");
    let version = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        version.trim_end(),
        format!("Kubernetes {}", c.version),
        "kube-apiserver --version"
    );
    let v = c.get_json(&["version"]);
    assert_eq!(
        str_of(&v["serverVersion"]["gitVersion"]),
        c.version,
        "server"
    );
    assert_eq!(
        str_of(&v["clientVersion"]["gitVersion"]),
        c.version,
        "kubectl"
    );
}

fn gpu_ok_is_bound_to_the_free_gpu_node(c: &Cluster) {
    let p = pod(c, "gpu-ok");
    assert_eq!(p["spec"]["nodeName"], "gpu-node-1");
    assert_eq!(
        condition(&p, "PodScheduled").expect("PodScheduled")["status"],
        "True"
    );
    assert_eq!(
        p["status"]["phase"], "Running",
        "the lab plays the kubelet for gpu-ok"
    );
    let evs = events(c, "Pod", "gpu-ok");
    let scheduled = evs
        .iter()
        .find(|e| e["reason"] == "Scheduled")
        .expect("Scheduled event");
    assert_eq!(
        scheduled["message"],
        "Successfully assigned gpu-lab/gpu-ok to gpu-node-1"
    );
    assert_eq!(scheduled["reportingComponent"], "default-scheduler");
}

fn gpu_busy_every_gpu_of_the_wanted_model_is_taken(c: &Cluster) {
    assert_eq!(unschedulable(c, "gpu-busy"), said(c).busy);
    // The only A100 node advertises 2 GPUs, and gpu-ok and gpu-holder hold them.
    let holders: Vec<String> = ["gpu-ok", "gpu-holder"]
        .iter()
        .map(|n| str_of(&pod(c, n)["spec"]["nodeName"]).to_owned())
        .collect();
    assert_eq!(holders, ["gpu-node-1", "gpu-node-1"]);
    let node = c.get_json(&["get", "node", "gpu-node-1"]);
    assert_eq!(node["status"]["allocatable"]["nvidia.com/gpu"], "2");
}

fn gpu_none_the_wanted_node_advertises_no_gpu(c: &Cluster) {
    assert_eq!(unschedulable(c, "gpu-none"), said(c).none);
    let node = c.get_json(&["get", "node", "gpu-node-3"]);
    assert_eq!(node["metadata"]["labels"]["nvidia.com/gpu.present"], "true");
    assert!(
        node["status"]["allocatable"]
            .get("nvidia.com/gpu")
            .is_none(),
        "{}",
        node["status"]["allocatable"]
    );
}

fn gpu_taint_untolerated_gpu_taint(c: &Cluster) {
    assert_eq!(unschedulable(c, "gpu-taint"), said(c).taint);
    let node = c.get_json(&["get", "node", "gpu-node-2"]);
    let taints = node["spec"]["taints"].as_array().expect("taints");
    assert_eq!(taints.len(), 1, "{taints:?}");
    assert_eq!(taints[0]["key"], "nvidia.com/gpu");
    assert_eq!(taints[0]["value"], "present");
    assert_eq!(taints[0]["effect"], "NoSchedule");
}

fn gpu_mixed_taint_affinity_and_insufficient_in_one_message(c: &Cluster) {
    assert_eq!(unschedulable(c, "gpu-mixed"), said(c).mixed);
}

fn apiserver_rejects_requests_not_equal_to_limits(c: &Cluster) {
    assert_eq!(rejected(c, "gpu-req-ne-limit.yaml"), REQ_NE_LIMIT);
    assert_eq!(rejected(c, "gpu-req-no-limit.yaml"), REQ_NO_LIMIT);
}

fn apiserver_rejects_a_fractional_gpu(c: &Cluster) {
    assert_eq!(rejected(c, "gpu-fraction.yaml"), said(c).fraction);
}

fn runtimeclass_admission_rejects_a_missing_runtimeclass(c: &Cluster) {
    assert_eq!(rejected(c, "gpu-rc-missing.yaml"), RC_MISSING);
    // Through a Deployment the Pod is never created: the rejection lands on its ReplicaSet.
    let msg = owner_failed_create(c, "gpu-rc-missing");
    let rs =
        str_of(
            &c.get_json(&["-n", LAB_NAMESPACE, "get", "rs", "-l", "app=gpu-rc-missing"])["items"]
                [0]["metadata"]["name"],
        )
        .to_owned();
    assert_eq!(
        msg,
        format!(
            r#"Error creating: pods "{rs}-" is forbidden: pod rejected: RuntimeClass "nvidia-missing" not found"#
        )
    );
}

fn resourcequota_admission_rejects_gpus_over_quota(c: &Cluster) {
    let tail = QUOTA_TAIL;
    let stderr = rejected(c, "gpu-quota.yaml");
    assert_eq!(
        stderr,
        format!(
            r#"Error from server (Forbidden): error when creating "STDIN": pods "gpu-quota" {tail}"#
        )
    );
    let msg = owner_failed_create(c, "gpu-quota");
    // The replicaset controller's recorder aggregates after 10 similar events; strip that prefix.
    let msg = msg
        .strip_prefix("(combined from similar events): ")
        .unwrap_or(&msg);
    assert!(
        msg.starts_with(r#"Error creating: pods "gpu-quota-"#),
        "{msg}"
    );
    assert!(msg.ends_with(tail), "{msg}");
}

fn containerd_has_no_runtime_for_the_nvidia_handler(c: &Cluster) {
    // The real text from Debian's containerd, asked over CRI by the lab (criprobe).
    assert_eq!(
        c.lab_output("gpu-handler.containerd.txt").trim_end(),
        CONTAINERD
    );
    assert!(
        c.lab_output("gpu-handler.containerd-version.txt")
            .starts_with("containerd ")
    );
    let rc = c.get_json(&["get", "runtimeclass", "nvidia"]);
    assert_eq!(rc["handler"], "nvidia");
    let p = pod(c, "gpu-handler");
    assert_eq!(p["spec"]["runtimeClassName"], "nvidia");
    assert_eq!(p["spec"]["nodeName"], "gpu-node-2");
    // Recorded on the bound Pod as the kubelet would (the lab plays the kubelet for this event).
    let evs = events(c, "Pod", "gpu-handler");
    let e = evs
        .iter()
        .find(|e| e["reason"] == "FailedCreatePodSandBox")
        .expect("FailedCreatePodSandBox event");
    assert_eq!(e["type"], "Warning");
    assert_eq!(e["source"]["component"], "kubelet");
    assert_eq!(e["source"]["host"], "gpu-node-2");
    assert_eq!(
        e["message"],
        format!("Failed to create pod sandbox: {CONTAINERD}")
    );
    let waiting = &p["status"]["containerStatuses"][0]["state"]["waiting"];
    assert_eq!(waiting["reason"], "ContainerCreating");
    // A real kubelet v1.37.2, run once against the same containerd, wrote the same event (fixture).
    let real = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/k8s-v1.37.2/real-kubelet/real-kubelet-handler.events.json");
    let real: Value =
        serde_json::from_str(&std::fs::read_to_string(&real).expect("real-kubelet fixture"))
            .expect("json");
    let real = &real["items"][0];
    assert_eq!(real["reason"], e["reason"]);
    assert_eq!(real["message"], e["message"]);
    assert_eq!(real["source"]["component"], e["source"]["component"]);
}

fn restricted_context_reads_only_pods_and_events_in_the_lab(c: &Cluster) {
    for args in [["get", "pods"], ["get", "events"]] {
        let out = c.kubectl_output("restricted", &args);
        assert!(
            out.status.success(),
            "restricted {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for args in [
        &["get", "nodes"][..],
        &["get", "pods", "-n", "default"],
        &["get", "runtimeclasses"],
    ] {
        let out = c.kubectl_output("restricted", args);
        assert!(
            !out.status.success(),
            "restricted {args:?} should be forbidden"
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(r#"User "gpuwhy-restricted" cannot"#), "{err}");
    }
}

fn audit_log_records_each_request_with_its_user(c: &Cluster) {
    let marker = format!("gpuwhy-audit-{}", std::process::id());
    // A request only the restricted user makes, with a unique field selector to find it again.
    let selector = format!("metadata.name={marker}");
    let out = c.kubectl_output(
        "restricted",
        &["get", "pods", "--field-selector", &selector],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    c.wait_for(
        "the restricted user's request in the audit log",
        Duration::from_secs(20),
        || {
            let log = std::fs::read_to_string(&c.audit_log).map_err(|e| e.to_string())?;
            let mut users = std::collections::BTreeSet::new();
            let mut found = false;
            for line in log.lines() {
                let Ok(ev) = serde_json::from_str::<Value>(line) else {
                    continue;
                };
                assert_eq!(
                    ev["level"], "Metadata",
                    "policy logs everything at Metadata: {line}"
                );
                let user = str_of(&ev["user"]["username"]).to_owned();
                if user == "gpuwhy-restricted"
                    && ev["verb"] == "list"
                    && ev["objectRef"]["resource"] == "pods"
                    && ev["objectRef"]["namespace"] == LAB_NAMESPACE
                    && str_of(&ev["requestURI"]).contains(&marker)
                {
                    found = true;
                }
                users.insert(user);
            }
            for want in ["gpuwhy-admin", "system:kube-scheduler"] {
                if !users.contains(want) {
                    return Err(format!("no request by {want}; users seen: {users:?}"));
                }
            }
            if found {
                Ok(())
            } else {
                Err(format!("no list pods by gpuwhy-restricted with {marker}"))
            }
        },
    );
}

fn kubectl_finds_the_plugin_on_path(c: &Cluster) {
    let out = c.kubectl_output("admin", &["plugin", "list", "--name-only"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.lines().any(|l| l.trim() == "kubectl-gpuwhy"),
        "kubectl plugin list: {stdout}"
    );
}

/// The fixtures the engine tests read were captured from this lab; they must still say what it says.
fn fixtures_match_the_live_control_plane(c: &Cluster) {
    let said = said(c);
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("k8s-{}", c.version));
    let read = |name: &str| {
        std::fs::read_to_string(dir.join(name))
            .unwrap_or_else(|e| panic!("{}: {e}", dir.join(name).display()))
    };
    for (scenario, live) in [
        ("gpu-busy", said.busy),
        ("gpu-none", said.none),
        ("gpu-taint", said.taint),
        ("gpu-mixed", said.mixed),
    ] {
        let p: Value =
            serde_json::from_str(&read(&format!("{scenario}.pod.json"))).expect("pod json");
        let cond = condition(&p, "PodScheduled").expect("PodScheduled in fixture");
        assert_eq!(cond["message"], live, "{scenario}.pod.json");
        assert!(
            read(&format!("{scenario}.describe.txt")).contains(live),
            "{scenario}.describe.txt"
        );
    }
    for (scenario, live) in [
        ("gpu-req-ne-limit", REQ_NE_LIMIT),
        ("gpu-req-no-limit", REQ_NO_LIMIT),
        ("gpu-fraction", said.fraction),
        ("gpu-rc-missing", RC_MISSING),
    ] {
        assert_eq!(
            read(&format!("{scenario}.stderr.txt")).trim_end(),
            live,
            "{scenario}.stderr.txt"
        );
    }
    assert!(
        read("gpu-quota.stderr.txt")
            .trim_end()
            .ends_with(QUOTA_TAIL)
    );
    assert_eq!(read("gpu-handler.containerd.txt").trim_end(), CONTAINERD);
}
