//! `Evidence`: the one model of what was read about a Pod, whichever way it was read (the live API or pasted
//! text). Everything after it is pure. This module owns the types and their small helpers; it does no IO and
//! no classification.

use std::collections::BTreeMap;

use serde::Serialize;

/// Where the target came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum TargetSource {
    Cluster,
    #[default]
    File,
}

/// The object being diagnosed. Names are optional: a bare message names nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Target {
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub source: TargetSource,
}

/// Which part of the Pod's story a message came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
#[derive(Default)]
pub enum SignalSource {
    /// An Event whose involved object is the Pod.
    Event,
    /// An Event on the Pod's owner (ReplicaSet, Job, …), e.g. `FailedCreate`.
    OwnerEvent,
    /// A Pod condition (PodScheduled) message.
    Condition,
    /// A container's waiting or terminated state.
    ContainerStatus,
    /// The Pod's `status.reason` / `status.message`.
    PodStatus,
    /// A kubelet, containerd or journal log line.
    Log,
    /// A bare message or an apiserver reply that was pasted.
    #[default]
    Text,
    /// A node's labels, taints and allocatable, read from the cluster.
    Node,
    /// The Pod's RuntimeClass, read from the cluster.
    Runtimeclass,
    /// A device-plugin Pod's state.
    DevicePlugin,
    /// The GPU Operator's ClusterPolicy status.
    Clusterpolicy,
    /// A `kubectl get ds` row of a device-plugin DaemonSet that wants no Pod (DESIRED 0) or is not ready, or of
    /// a driver DaemonSet that is not ready.
    Daemonset,
}

/// One message, with what is known about who said it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Signal {
    pub source: Option<SignalSource>,
    /// Event reason, condition reason or container waiting reason.
    pub reason: Option<String>,
    /// `Warning` or `Normal` for events.
    pub kind: Option<String>,
    pub message: String,
    /// How many times it was seen (event count or series count); 1 when unknown.
    pub count: u32,
    /// `Kind/name` of the object the message is about, when known.
    pub object: Option<String>,
    /// The namespace of that object, when a listing names it (`kubectl get pods -A`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// `spec.containers{name}` for container events.
    pub field_path: Option<String>,
    /// Reporting component (`default-scheduler`, `kubelet`, …); for a line of `kubectl logs --prefix`, the Pod
    /// and container that wrote it (`pod/NAME/CONTAINER`).
    pub component: Option<String>,
    /// The node that reported it (kubelet events) when known.
    pub node: Option<String>,
    /// Best timestamp for ordering: series.lastObservedTime → lastTimestamp → eventTime (RFC 3339).
    pub time: Option<String>,
    /// How long before the paste it was last seen, in seconds, from a table's age column (`LAST SEEN`, `Age`):
    /// the order of rows that carry no time.
    #[serde(skip)]
    pub seen_ago: Option<u64>,
}

impl Signal {
    /// The scheduler's word that it placed the Pod: a `Scheduled` event, or its `Successfully assigned` text.
    pub fn is_placement(&self) -> bool {
        self.reason.as_deref() == Some("Scheduled")
            || self.message.contains("Successfully assigned ")
    }
}

/// Where the scheduler's `Successfully assigned [ns/]pod to node` put a Pod.
pub struct Placement<'a> {
    /// Absent in the wording before Kubernetes 1.12.
    pub namespace: Option<&'a str>,
    pub pod: &'a str,
    /// Absent when a paste cut the line off after `to`.
    pub node: Option<&'a str>,
}

/// Reads `Successfully assigned [ns/]pod to node` out of a message.
pub fn placement(message: &str) -> Option<Placement<'_>> {
    static ASSIGNED: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"Successfully assigned (?:(?P<ns>[a-z0-9.-]+)/)?(?P<pod>[a-z0-9.-]+) to\b(?: (?P<node>[A-Za-z0-9.-]+))?")
            .expect("assigned regex")
    });
    let c = ASSIGNED.captures(message)?;
    Some(Placement {
        namespace: c.name("ns").map(|m| m.as_str()),
        pod: c.name("pod")?.as_str(),
        node: c.name("node").map(|m| m.as_str()),
    })
}

/// A toleration as written on the Pod.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Toleration {
    pub key: Option<String>,
    pub operator: Option<String>,
    pub value: Option<String>,
    pub effect: Option<String>,
}

/// A node taint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Taint {
    pub key: String,
    pub value: Option<String>,
    pub effect: String,
}

impl Taint {
    /// `key=value:Effect`, as kubectl prints it.
    pub fn display(&self) -> String {
        match &self.value {
            Some(v) if !v.is_empty() => format!("{}={}:{}", self.key, v, self.effect),
            _ => format!("{}:{}", self.key, self.effect),
        }
    }
}

impl Toleration {
    /// Whether this toleration tolerates `taint` (the scheduler's `ToleratesTaint`).
    pub fn tolerates(&self, taint: &Taint) -> bool {
        if let Some(effect) = self.effect.as_deref().filter(|e| !e.is_empty())
            && effect != taint.effect
        {
            return false;
        }
        let exists = self.operator.as_deref() == Some("Exists");
        match self.key.as_deref().filter(|k| !k.is_empty()) {
            // An empty key with Exists tolerates everything.
            None => exists,
            Some(k) if k != taint.key => false,
            Some(_) if exists => true,
            Some(_) => self.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or(""),
        }
    }
}

/// What the Pod spec and status say, as far as it was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct PodFacts {
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub phase: Option<String>,
    pub reason: Option<String>,
    pub message: Option<String>,
    pub node_name: Option<String>,
    pub runtime_class_name: Option<String>,
    pub scheduler_name: Option<String>,
    pub scheduling_gates: Vec<String>,
    pub tolerations: Vec<Toleration>,
    pub node_selector: BTreeMap<String, String>,
    /// Resource name → total quantity requested by the containers (limits where requests are absent).
    pub requests: BTreeMap<String, String>,
    pub containers: Vec<String>,
    /// `Kind/name` of the controller that owns the Pod.
    pub owner: Option<String>,
    /// `PodScheduled` condition status (`True`/`False`) when known.
    pub scheduled: Option<String>,
    /// `Ready` condition status when known.
    pub ready: Option<String>,
    /// A container is in `state.running`.
    pub any_running: bool,
    pub uid: Option<String>,
    /// The controller owner's uid, for its events.
    pub owner_uid: Option<String>,
    /// Required node affinity: OR of terms, each an AND of (key, operator, values).
    pub required_affinity: Vec<Vec<(String, String, Vec<String>)>>,
}

/// What a node's spec and status say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct NodeFacts {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<Taint>,
    pub allocatable: BTreeMap<String, String>,
    pub unschedulable: bool,
}

/// The Pod's RuntimeClass as read from the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct RuntimeClassFacts {
    pub name: String,
    /// `None` when the RuntimeClass does not exist.
    pub handler: Option<String>,
    pub node_selector: BTreeMap<String, String>,
    pub tolerations: Vec<Toleration>,
}

/// A device-plugin Pod (NVIDIA, AMD, Intel) and its state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct PluginPod {
    pub namespace: String,
    pub name: String,
    pub node: Option<String>,
    pub phase: Option<String>,
    pub ready: bool,
    /// A container's waiting or last-terminated reason (CrashLoopBackOff, …).
    pub problem: Option<String>,
}

/// A running or pending Pod that holds some of the resource on a node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Holder {
    pub namespace: String,
    pub name: String,
    pub node: String,
    pub count: u64,
}

/// The GPU Operator's ClusterPolicy status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct ClusterPolicyFacts {
    pub name: String,
    pub state: Option<String>,
    /// The message of the `Error=True` or `Ready=False` condition.
    pub message: Option<String>,
}

/// Facts read from the cluster beside the Pod; `None` means not read (offline, or a gap says why).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct ClusterFacts {
    pub runtime_class: Option<RuntimeClassFacts>,
    pub device_plugins: Option<Vec<PluginPod>>,
    pub holders: Option<Vec<Holder>>,
    pub cluster_policy: Option<ClusterPolicyFacts>,
    /// The events API answered and returned nothing for the Pod.
    pub events_empty: bool,
}

/// A check that could not be made, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Gap {
    pub check: String,
    pub reason: String,
}

/// Everything that was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Evidence {
    pub target: Target,
    pub pod: Option<PodFacts>,
    pub signals: Vec<Signal>,
    /// `None` when nodes were not read at all.
    pub nodes: Option<Vec<NodeFacts>>,
    pub cluster: ClusterFacts,
    pub gaps: Vec<Gap>,
    /// The one Pod whose log a `kubectl logs` command pasted in the text reads. It is not the target: the paste
    /// holds that Pod's log somewhere, and may hold other Pods' events too.
    #[serde(skip)]
    pub logs_of: Option<LogsOf>,
}

/// The Pod (and container) a pasted `kubectl logs` command reads.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LogsOf {
    pub pod: String,
    pub namespace: Option<String>,
    /// The container `-c` (or the second word) names, if any.
    pub container: Option<String>,
}

/// The GPU Operator's driver DaemonSets: the driver's (`nvidia-driver-daemonset`, and its precompiled
/// `nvidia-driver-daemonset-5.15.0-105-generic-ubuntu22.04`) and the vGPU manager's. A node whose driver Pod
/// is not ready has no driver, so the operator never starts its device plugin there.
pub fn is_driver_daemonset(name: &str) -> bool {
    name.starts_with("nvidia-driver-daemonset") || name.starts_with("nvidia-vgpu-manager-daemonset")
}

/// A Kubernetes object name of the DNS-1123 label kind (namespaces, DaemonSets, containers).
pub fn is_dns_label(s: &str) -> bool {
    (1..=63).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// A Kubernetes object name of the DNS-1123 subdomain kind (Pods): lowercase DNS labels joined by dots.
pub fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_dns_label)
}

/// Resource names the engine treats as GPUs, GPU slices or other accelerators (NPU, MLU, DCU, TPU, Neuron, …)
/// rather than generic extended resources: a vendor prefix, or a word of the name that names an accelerator.
pub fn is_gpu_resource(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    const WORDS: [&str; 12] = [
        "npu",
        "ascend",
        "mlu",
        "dcu",
        "vcuda",
        "gcu",
        "neuron",
        "tpu",
        "xpu",
        "habana",
        "accelerator",
        "i915",
    ];
    n.starts_with("nvidia.com/")
        || n.starts_with("amd.com/gpu")
        || n.starts_with("gpu.intel.com/")
        || n.starts_with("habana.ai/")
        || n.contains("gpu")
        || n.split(['/', '.', '-', '_'])
            .any(|w| WORDS.iter().any(|a| w.starts_with(a)))
}

/// Extended resources are the domain-prefixed ones (`vendor/name`); native ones are cpu, memory, …
pub fn is_extended_resource(name: &str) -> bool {
    name.contains('/') && !name.starts_with("kubernetes.io/") && !name.starts_with("requests.")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taint(key: &str, value: Option<&str>, effect: &str) -> Taint {
        Taint {
            key: key.into(),
            value: value.map(Into::into),
            effect: effect.into(),
        }
    }

    #[test]
    fn toleration_matching_follows_the_scheduler() {
        let gpu = taint("nvidia.com/gpu", Some("present"), "NoSchedule");
        let exists = Toleration {
            key: Some("nvidia.com/gpu".into()),
            operator: Some("Exists".into()),
            ..Default::default()
        };
        assert!(exists.tolerates(&gpu));
        let equal = Toleration {
            key: Some("nvidia.com/gpu".into()),
            operator: Some("Equal".into()),
            value: Some("present".into()),
            effect: Some("NoSchedule".into()),
        };
        assert!(equal.tolerates(&gpu));
        let wrong_value = Toleration {
            value: Some("absent".into()),
            ..equal.clone()
        };
        assert!(!wrong_value.tolerates(&gpu));
        let wrong_effect = Toleration {
            effect: Some("NoExecute".into()),
            ..equal.clone()
        };
        assert!(!wrong_effect.tolerates(&gpu));
        let all = Toleration {
            operator: Some("Exists".into()),
            ..Default::default()
        };
        assert!(all.tolerates(&gpu));
        let empty_key_equal = Toleration::default();
        assert!(!empty_key_equal.tolerates(&gpu));
        // Equal with no value matches a taint with an empty value.
        let cp = taint("node-role.kubernetes.io/control-plane", None, "NoSchedule");
        let cp_tol = Toleration {
            key: Some("node-role.kubernetes.io/control-plane".into()),
            ..Default::default()
        };
        assert!(cp_tol.tolerates(&cp));
    }

    #[test]
    fn gpu_resource_names() {
        for r in [
            "nvidia.com/gpu",
            "nvidia.com/mig-1g.5gb",
            "nvidia.com/gpu.shared",
            "amd.com/gpu",
            "gpu.intel.com/i915",
            "gpu.intel.com/xe",
        ] {
            assert!(is_gpu_resource(r), "{r}");
        }
        for r in [
            "huawei.com/Ascend910",
            "cambricon.com/mlu",
            "tencent.com/vcuda-core",
            "aws.amazon.com/neuroncore",
            "google.com/tpu",
        ] {
            assert!(is_gpu_resource(r), "{r}");
        }
        for r in [
            "cpu",
            "memory",
            "example.com/foo",
            "ephemeral-storage",
            "github.com/fuse",
            "rdma/hca_shared_devices_a",
            "example.com/outputs",
        ] {
            assert!(!is_gpu_resource(r), "{r}");
        }
        assert!(is_extended_resource("example.com/foo"));
        assert!(!is_extended_resource("cpu"));
    }
}
