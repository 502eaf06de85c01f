//! Reads the cluster: the Pod first, then one concurrent wave (the Pod's events, the owner's
//! events, the nodes, the RuntimeClass, device-plugin Pods, the Pods holding the resource, the GPU Operator's
//! ClusterPolicy), and turns it all into `Evidence`. Only reads: every request is a GET (get or list).
//! A forbidden, missing or failing optional read becomes a gap; only the Pod itself is required.

pub mod client;

use std::collections::{BTreeMap, BTreeSet};

use futures::future::join_all;
use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::evidence::{
    ClusterPolicyFacts, Evidence, Gap, Holder, NodeFacts, PluginPod, RuntimeClassFacts, Signal,
    SignalSource, Taint, Target, TargetSource, Toleration, is_extended_resource, is_gpu_resource,
};
use crate::offline::objects::{event_signal, pod_facts};
use crate::sanitize;

/// What to diagnose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetSpec {
    Pod(String),
    /// `deploy/`, `rs/`, `job/`, `sts/` (kind is the canonical Kind).
    Workload {
        kind: String,
        name: String,
    },
}

impl TargetSpec {
    /// Parses `NAME` or `TYPE/NAME` as kubectl does.
    pub fn parse(s: &str) -> Result<TargetSpec> {
        let Some((kind, name)) = s.split_once('/') else {
            return Ok(TargetSpec::Pod(s.to_string()));
        };
        if name.is_empty() || name.contains('/') {
            return Err(Error::Usage(format!(
                "cannot parse target {:?}: use POD or TYPE/NAME",
                sanitize::line(s)
            )));
        }
        let kind = match kind.to_ascii_lowercase().as_str() {
            "pod" | "pods" | "po" => return Ok(TargetSpec::Pod(name.to_string())),
            "deploy" | "deployment" | "deployments" | "deployment.apps" => "Deployment",
            "rs" | "replicaset" | "replicasets" | "replicaset.apps" => "ReplicaSet",
            "job" | "jobs" | "job.batch" => "Job",
            "sts" | "statefulset" | "statefulsets" | "statefulset.apps" => "StatefulSet",
            other => {
                return Err(Error::Usage(format!(
                    "unsupported target type {:?}: use pod/, deploy/, rs/, job/ or sts/",
                    sanitize::line(other)
                )));
            }
        };
        Ok(TargetSpec::Workload {
            kind: kind.to_string(),
            name: name.to_string(),
        })
    }
}

/// Node label keys that say a node has GPU hardware even when it advertises no GPU resource.
pub const GPU_HARDWARE_LABELS: &[&str] = &[
    "nvidia.com/gpu.present",
    "nvidia.com/gpu.count",
    "nvidia.com/gpu.product",
    "feature.node.kubernetes.io/pci-10de.present",
    "feature.node.kubernetes.io/pci-0300_10de.present",
    "feature.node.kubernetes.io/pci-0302_10de.present",
    "cloud.google.com/gke-accelerator",
    "k8s.amazonaws.com/accelerator",
    "feature.node.kubernetes.io/pci-1002.present",
    "amd.com/gpu.device-id",
];

/// The labels that mark device-plugin Pods: NVIDIA (GPU Operator, standalone Helm chart, static manifest),
/// AMD, Intel. They are matched on the one list of bound Pods that also finds the GPU holders.
pub const DEVICE_PLUGIN_LABELS: &[(&str, &[&str])] = &[
    (
        "app",
        &["nvidia-device-plugin-daemonset", "intel-gpu-plugin"],
    ),
    ("app.kubernetes.io/name", &["nvidia-device-plugin"]),
    ("name", &["nvidia-device-plugin-ds", "amdgpu-dp-ds"]),
];

/// The outcome of one optional read.
enum Read<T> {
    Ok(T),
    Missing(String),
    Forbidden(String),
    Failed(String),
}

impl<T> Read<T> {
    fn map<U>(self, f: impl FnOnce(T) -> U) -> Read<U> {
        match self {
            Read::Ok(v) => Read::Ok(f(v)),
            Read::Missing(m) => Read::Missing(m),
            Read::Forbidden(m) => Read::Forbidden(m),
            Read::Failed(m) => Read::Failed(m),
        }
    }
}

/// GET a path as JSON. Unreachable or unauthenticated clusters are errors; API statuses are `Read`s.
async fn get<T: serde::de::DeserializeOwned>(client: &kube::Client, path: &str) -> Result<Read<T>> {
    let req = http::Request::get(path)
        .body(Vec::new())
        .map_err(|e| Error::Api {
            verb: "get",
            resource: path.into(),
            message: e.to_string(),
        })?;
    match client.request::<T>(req).await {
        Ok(v) => Ok(Read::Ok(v)),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(Read::Missing(sanitize::line(&s.message))),
        Err(kube::Error::Api(s)) if s.code == 403 => {
            Ok(Read::Forbidden(sanitize::line(&s.message)))
        }
        Err(kube::Error::Api(s)) if s.code == 401 => Err(Error::Unreachable {
            verb: "get",
            resource: path.into(),
            message: "authentication failed (401 Unauthorized)".into(),
        }),
        Err(kube::Error::Api(s)) => Ok(Read::Failed(format!(
            "{} {}",
            s.code,
            sanitize::line(&s.message)
        ))),
        Err(kube::Error::SerdeError(e)) => Ok(Read::Failed(format!("malformed response: {e}"))),
        Err(e @ (kube::Error::HyperError(_) | kube::Error::Service(_))) => {
            Err(Error::Unreachable {
                verb: "get",
                resource: path.into(),
                message: sanitize::line(&error_chain(&e)),
            })
        }
        Err(e) => Ok(Read::Failed(sanitize::line(&e.to_string()))),
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}

fn enc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Where a LIST may be answered from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Served {
    /// The apiserver's watch cache (`resourceVersion=0` on the first page), which is what the scheduler's and the
    /// controllers' informers see. Before 1.31 a list without it is a quorum read from etcd: at v1.30.14 one page of
    /// 5,000 nodes narrowed by a label selector took 54-113 ms that way and 10-19 ms from the cache.
    FromCache,
    /// A quorum read of the newest state: for events, whose watch cache is off by default, so the cache would not
    /// be faster, and the last event is the one that matters.
    Newest,
}

/// LIST with pagination (limit 500), folding each page into `acc` so only what is needed is kept. The watch
/// cache may answer the first page with every item at once (v1.30's ignores `limit`); a continued page carries no
/// `resourceVersion`, which the apiserver refuses beside `continue`.
async fn list_pages<T, F>(
    client: &kube::Client,
    base: &str,
    query: &str,
    served: Served,
    mut fold: F,
) -> Result<Read<()>>
where
    T: serde::de::DeserializeOwned,
    F: FnMut(Vec<T>),
{
    #[derive(Deserialize)]
    #[serde(bound(deserialize = "T: serde::de::DeserializeOwned"))]
    struct Page<T> {
        #[serde(default = "Vec::new", deserialize_with = "null_as_empty")]
        items: Vec<T>,
        #[serde(default)]
        metadata: PageMeta,
    }
    #[derive(Deserialize, Default)]
    struct PageMeta {
        #[serde(rename = "continue", default)]
        cont: Option<String>,
    }
    let mut cont: Option<String> = None;
    for _ in 0..10_000 {
        let mut path = format!("{base}?limit=500");
        if !query.is_empty() {
            path.push('&');
            path.push_str(query);
        }
        match &cont {
            Some(c) => {
                path.push_str("&continue=");
                path.push_str(&enc(c));
            }
            None if served == Served::FromCache => path.push_str("&resourceVersion=0"),
            None => {}
        }
        match get::<Page<T>>(client, &path).await? {
            Read::Ok(page) => {
                fold(page.items);
                cont = page.metadata.cont.filter(|c| !c.is_empty());
                if cont.is_none() {
                    return Ok(Read::Ok(()));
                }
            }
            Read::Missing(m) => return Ok(Read::Missing(m)),
            Read::Forbidden(m) => return Ok(Read::Forbidden(m)),
            Read::Failed(m) => return Ok(Read::Failed(m)),
        }
    }
    Ok(Read::Failed("pagination did not end".into()))
}

fn null_as_empty<'de, D, T>(d: D) -> std::result::Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(d)?.unwrap_or_default())
}

fn gap(check: &str, why: &str, detail: &str) -> Gap {
    Gap {
        check: check.into(),
        reason: format!("{why}: {}", detail.chars().take(300).collect::<String>()),
    }
}

fn gap_of<T>(check: &str, r: &Read<T>) -> Option<Gap> {
    match r {
        Read::Ok(_) => None,
        Read::Missing(m) => Some(gap(check, "not found", m)),
        Read::Forbidden(m) => Some(gap(check, "forbidden", m)),
        Read::Failed(m) => Some(gap(check, "failed", m)),
    }
}

/// Collects the evidence for a target in `namespace`.
/// The most requests a target's collection makes one after another, each bounded by `--request-timeout`
/// (a list of many pages adds its pages): a Pod is read, then one wave whose longest chain is two (core/v1
/// events, then events.k8s.io/v1 when core/v1 refuses); a workload is read, then its controllers' events
/// beside its Pods, three deep either way (its own events, two, beside a Deployment's ReplicaSets listed and
/// then their events with the same fallback, three; the Pods listed, then each Pod's wave, three). The
/// suggestions for a Pod that is not found read one page of the namespace's Pods after the 404: two.
pub fn requests_in_sequence(target: &TargetSpec) -> u32 {
    match target {
        TargetSpec::Pod(_) => 3,
        TargetSpec::Workload { .. } => 4,
    }
}

pub async fn collect(
    client: &kube::Client,
    namespace: &str,
    target: &TargetSpec,
) -> Result<Vec<Evidence>> {
    match target {
        TargetSpec::Pod(name) => Ok(vec![collect_pod(client, namespace, name, None).await?]),
        TargetSpec::Workload { kind, name } => {
            collect_workload(client, namespace, kind, name).await
        }
    }
}

async fn collect_pod(
    client: &kube::Client,
    ns: &str,
    name: &str,
    pod: Option<Value>,
) -> Result<Evidence> {
    let pod = match pod {
        Some(p) => p,
        None => match get::<Value>(
            client,
            &format!("/api/v1/namespaces/{}/pods/{}", enc(ns), enc(name)),
        )
        .await?
        {
            Read::Ok(v) => v,
            Read::Missing(_) => return Err(not_found(client, ns, name).await),
            Read::Forbidden(m) => {
                return Err(Error::Api {
                    verb: "get",
                    resource: format!("pod {ns}/{name}"),
                    message: format!("forbidden: {m}"),
                });
            }
            Read::Failed(m) => {
                return Err(Error::Api {
                    verb: "get",
                    resource: format!("pod {ns}/{name}"),
                    message: m,
                });
            }
        },
    };
    let (facts, status_signals) = pod_facts(&pod);
    let mut ev = Evidence {
        target: Target {
            kind: "Pod".into(),
            namespace: Some(ns.to_string()),
            name: Some(name.to_string()),
            source: TargetSource::Cluster,
        },
        ..Default::default()
    };
    let uid = facts.uid.clone().unwrap_or_default();
    let resource = facts
        .requests
        .keys()
        .find(|r| is_gpu_resource(r))
        .or_else(|| facts.requests.keys().find(|r| is_extended_resource(r)))
        .cloned();
    let unscheduled = facts.node_name.is_none();

    // The one wave: every read below depends only on the Pod.
    let events = read_events(client, ns, name, &uid, "Pod");
    let owner_events = async {
        match (&facts.owner, &facts.owner_uid) {
            (Some(owner), Some(ouid)) => {
                let (kind, oname) = owner.split_once('/').unwrap_or(("", owner));
                Some(read_events(client, ns, oname, ouid, kind).await)
            }
            _ => None,
        }
    };
    let label_keys: BTreeSet<String> = facts
        .node_selector
        .keys()
        .cloned()
        .chain(
            facts
                .required_affinity
                .iter()
                .flatten()
                .map(|(k, _, _)| k.clone()),
        )
        .chain(GPU_HARDWARE_LABELS.iter().map(|s| s.to_string()))
        .collect();
    let selector = node_label_selector(&facts.node_selector, &facts.required_affinity);
    let nodes = read_nodes(
        client,
        facts.node_name.as_deref(),
        resource.as_deref(),
        &label_keys,
        unscheduled || resource.is_some(),
        selector.as_deref(),
    );
    let runtime_class = async {
        match &facts.runtime_class_name {
            Some(rc) => Some(read_runtime_class(client, rc).await),
            None => None,
        }
    };
    // Device plugins and the ClusterPolicy only matter for a Pod the scheduler has not placed (they explain
    // a node that advertises no GPU); a bound Pod skips those reads.
    let node_pods = async {
        match (&resource, unscheduled) {
            (Some(r), true) => Some(read_node_pods(client, r).await),
            _ => None,
        }
    };
    let policy = async {
        if unscheduled
            && resource
                .as_deref()
                .is_some_and(|r| r.starts_with("nvidia.com/"))
        {
            Some(read_cluster_policy(client).await)
        } else {
            None
        }
    };
    let (events, owner, nodes, rc, node_pods, policy) = tokio::join!(
        events,
        owner_events,
        nodes,
        runtime_class,
        node_pods,
        policy
    );

    let (answered, mut events) = match events? {
        Read::Ok(list) => (true, list),
        other => {
            ev.gaps.extend(gap_of("events", &other));
            (false, Vec::new())
        }
    };
    events.sort_by(|a, b| a.time.cmp(&b.time));
    ev.cluster.events_empty = answered && events.is_empty();
    if ev.cluster.events_empty
        && status_signals
            .iter()
            .any(|s| s.source == Some(SignalSource::Condition))
    {
        ev.gaps.push(Gap {
            check: "events".into(),
            reason: "no events for the Pod (they expire after the apiserver's --event-ttl, 1h by default); the PodScheduled condition, which does not expire, was used".into(),
        });
    }
    ev.signals.extend(events);
    ev.signals.extend(status_signals);
    if let Some(owner) = owner {
        match owner? {
            Read::Ok(list) => ev.signals.extend(list.into_iter().map(|mut s| {
                s.source = Some(SignalSource::OwnerEvent);
                s
            })),
            other => ev.gaps.extend(gap_of("owner events", &other)),
        }
    }
    match nodes? {
        Read::Ok(n) => ev.nodes = Some(n),
        other => ev.gaps.extend(gap_of("nodes", &other)),
    }
    if let Some(rc) = rc {
        match rc? {
            Read::Ok(f) => ev.cluster.runtime_class = Some(f),
            Read::Missing(m) => {
                ev.cluster.runtime_class = Some(RuntimeClassFacts {
                    name: facts.runtime_class_name.clone().unwrap_or_default(),
                    ..Default::default()
                });
                // The apiserver's own NotFound text, as the kubelet would see it.
                ev.signals.push(Signal {
                    source: Some(SignalSource::Text),
                    reason: Some("RuntimeClass".into()),
                    kind: Some("Warning".into()),
                    message: m,
                    count: 1,
                    ..Default::default()
                });
            }
            other => ev.gaps.extend(gap_of("runtimeclass", &other)),
        }
    }
    if let Some(p) = node_pods {
        match p? {
            Read::Ok((holders, plugins)) => {
                ev.cluster.holders = Some(holders);
                ev.cluster.device_plugins = Some(plugins);
            }
            other => {
                ev.gaps.extend(gap_of("device-plugin pods", &other));
                ev.gaps.extend(gap_of("pods holding the resource", &other));
            }
        }
    }
    if let Some(p) = policy {
        match p? {
            Read::Ok(cp) => ev.cluster.cluster_policy = cp,
            Read::Missing(_) => {}
            other => ev.gaps.extend(gap_of("clusterpolicy", &other)),
        }
    }
    ev.pod = Some(facts);
    Ok(ev)
}

/// A missing Pod: exit 2, with close names from the namespace when they can be listed. The names come from
/// one page of the namespace's Pods (500, from the apiserver's cache): one request, so a namespace of many pages
/// on a slow apiserver still says "not found" within the run's limit.
async fn not_found(client: &kube::Client, ns: &str, name: &str) -> Error {
    #[derive(Deserialize)]
    struct Page {
        #[serde(default = "Vec::new", deserialize_with = "null_as_empty")]
        items: Vec<Named>,
    }
    #[derive(Deserialize)]
    struct Named {
        metadata: NamedMeta,
    }
    #[derive(Deserialize)]
    struct NamedMeta {
        name: String,
    }
    let path = format!(
        "/api/v1/namespaces/{}/pods?limit=500&resourceVersion=0",
        enc(ns)
    );
    let names = match get::<Page>(client, &path).await {
        Ok(Read::Ok(page)) => page.items,
        _ => Vec::new(),
    };
    let mut close: Vec<(usize, String)> = names
        .into_iter()
        .map(|n| n.metadata.name)
        .filter_map(|n| {
            let d = distance(name, &n);
            (d <= 3 || n.starts_with(name) || name.starts_with(&n) || n.contains(name))
                .then_some((d, n))
        })
        .collect();
    close.sort();
    let hint = if close.is_empty() {
        String::new()
    } else {
        format!(
            "; did you mean {}?",
            close
                .iter()
                .take(3)
                .map(|(_, n)| sanitize::line(n))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Error::NotFound {
        verb: "get",
        resource: "pod".into(),
        name: format!("{}/{}", sanitize::line(ns), sanitize::line(name)),
        message: format!("not found{hint}"),
    }
}

/// Levenshtein distance, for close-name suggestions.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The events about `kind/name`. Both event APIs serve the same objects from the same storage: core/v1 is
/// read, and events.k8s.io/v1 only when core/v1 refuses or fails (a Role that grants just the newer API), so
/// the common case is one request. When both refuse, the gap keeps a forbidden answer over another.
async fn read_events(
    client: &kube::Client,
    ns: &str,
    name: &str,
    uid: &str,
    kind: &str,
) -> Result<Read<Vec<Signal>>> {
    let core = list_events(client, ns, "/api/v1", "involvedObject", name, uid, kind).await?;
    if matches!(core, Read::Ok(_)) {
        return Ok(core);
    }
    let v1 = list_events(
        client,
        ns,
        "/apis/events.k8s.io/v1",
        "regarding",
        name,
        uid,
        kind,
    )
    .await?;
    Ok(match (core, v1) {
        (_, v1 @ Read::Ok(_)) | (Read::Missing(_) | Read::Failed(_), v1 @ Read::Forbidden(_)) => v1,
        (core, _) => core,
    })
}

/// Events about one object from one event API, by uid (so an earlier object of the same name is left out).
async fn list_events(
    client: &kube::Client,
    ns: &str,
    group: &str,
    field: &str,
    name: &str,
    uid: &str,
    kind: &str,
) -> Result<Read<Vec<Signal>>> {
    let mut selector = format!("{field}.name={name},{field}.namespace={ns}");
    if !uid.is_empty() {
        selector.push_str(&format!(",{field}.uid={uid}"));
    }
    if !kind.is_empty() {
        selector.push_str(&format!(",{field}.kind={kind}"));
    }
    let mut out = Vec::new();
    let r = list_pages::<Value, _>(
        client,
        &format!("{group}/namespaces/{}/events", enc(ns)),
        &format!("fieldSelector={}", enc(&selector)),
        Served::Newest,
        |items| out.extend(items.iter().map(|e| event_signal(e).1)),
    )
    .await?;
    Ok(r.map(|()| out))
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct MiniMeta {
    name: String,
    namespace: String,
    labels: Option<BTreeMap<String, String>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct MiniNode {
    metadata: MiniMeta,
    spec: MiniNodeSpec,
    status: MiniNodeStatus,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct MiniNodeSpec {
    taints: Option<Vec<MiniTaint>>,
    unschedulable: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct MiniTaint {
    key: String,
    value: Option<String>,
    effect: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct MiniNodeStatus {
    allocatable: Option<BTreeMap<String, String>>,
}

impl MiniNode {
    /// Keeps only the labels and allocatable entries the checks use.
    fn facts(self, resource: Option<&str>, label_keys: &BTreeSet<String>) -> NodeFacts {
        let labels = self
            .metadata
            .labels
            .unwrap_or_default()
            .into_iter()
            .filter(|(k, _)| label_keys.contains(k))
            .map(|(k, v)| (sanitize::line(&k), sanitize::line(&v)))
            .collect();
        let allocatable = self
            .status
            .allocatable
            .unwrap_or_default()
            .into_iter()
            .filter(|(k, _)| Some(k.as_str()) == resource || k == "pods")
            .map(|(k, v)| (sanitize::line(&k), sanitize::line(&v)))
            .collect();
        NodeFacts {
            name: sanitize::line(&self.metadata.name),
            labels,
            taints: self
                .spec
                .taints
                .unwrap_or_default()
                .into_iter()
                .map(|t| Taint {
                    key: sanitize::line(&t.key),
                    value: t.value.as_deref().map(sanitize::line),
                    effect: sanitize::line(&t.effect),
                })
                .collect(),
            allocatable,
            unschedulable: self.spec.unschedulable.unwrap_or(false),
        }
    }
}

/// The Pod's node, or every node (paginated), reduced to what the checks need.
async fn read_nodes(
    client: &kube::Client,
    node: Option<&str>,
    resource: Option<&str>,
    keys: &BTreeSet<String>,
    want: bool,
    selector: Option<&str>,
) -> Result<Read<Vec<NodeFacts>>> {
    if !want {
        return Ok(Read::Ok(Vec::new()));
    }
    if let Some(n) = node {
        let node = get::<MiniNode>(client, &format!("/api/v1/nodes/{}", enc(n))).await?;
        return Ok(node.map(|node| vec![node.facts(resource, keys)]));
    }
    let list = |query: String| async move {
        let mut nodes = Vec::new();
        let r = list_pages::<MiniNode, _>(
            client,
            "/api/v1/nodes",
            &query,
            Served::FromCache,
            |items| nodes.extend(items.into_iter().map(|n| n.facts(resource, keys))),
        )
        .await?;
        Ok::<_, Error>(r.map(|()| nodes))
    };
    // The scheduler only considers nodes that match the Pod's selector, so ask the apiserver for those first.
    // Only when none of them has a GPU do the others matter (they say "the selector excludes the GPU
    // nodes"), and only then is every node read.
    if let Some(sel) = selector {
        let narrowed = list(format!("labelSelector={}", enc(sel))).await?;
        let has_gpu = |n: &NodeFacts| {
            resource.is_some_and(|r| n.allocatable.get(r).is_some_and(|q| q.trim() != "0"))
                || GPU_HARDWARE_LABELS
                    .iter()
                    .any(|k| n.labels.contains_key(*k))
        };
        match narrowed {
            Read::Ok(nodes) if nodes.iter().any(has_gpu) => return Ok(Read::Ok(nodes)),
            Read::Ok(_) => {}
            other => return Ok(other),
        }
    }
    list(String::new()).await
}

/// The Pod's nodeSelector and (single-term) required node affinity as an apiserver label selector.
fn node_label_selector(
    selector: &BTreeMap<String, String>,
    affinity: &[Vec<(String, String, Vec<String>)>],
) -> Option<String> {
    let valid = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_./".contains(&b))
    };
    let mut parts: Vec<String> = Vec::new();
    for (k, v) in selector {
        if !valid(k) || !(v.is_empty() || valid(v)) {
            return None;
        }
        parts.push(format!("{k}={v}"));
    }
    if let [term] = affinity {
        for (k, op, values) in term {
            if !valid(k) || values.iter().any(|v| !valid(v)) {
                return None;
            }
            match op.as_str() {
                "In" if !values.is_empty() => parts.push(format!("{k} in ({})", values.join(","))),
                "NotIn" if !values.is_empty() => {
                    parts.push(format!("{k} notin ({})", values.join(",")))
                }
                "Exists" => parts.push(k.clone()),
                "DoesNotExist" => parts.push(format!("!{k}")),
                _ => {}
            }
        }
    }
    (!parts.is_empty()).then(|| parts.join(","))
}

async fn read_runtime_class(client: &kube::Client, name: &str) -> Result<Read<RuntimeClassFacts>> {
    Ok(
        match get::<Value>(
            client,
            &format!("/apis/node.k8s.io/v1/runtimeclasses/{}", enc(name)),
        )
        .await?
        {
            Read::Ok(v) => {
                let str_at = |p: &[&str]| {
                    p.iter()
                        .try_fold(&v, |a, k| a.get(*k))
                        .and_then(Value::as_str)
                        .map(sanitize::line)
                };
                let mut node_selector = BTreeMap::new();
                if let Some(m) = v
                    .pointer("/scheduling/nodeSelector")
                    .and_then(Value::as_object)
                {
                    for (k, val) in m {
                        node_selector.insert(
                            sanitize::line(k),
                            val.as_str().map(sanitize::line).unwrap_or_default(),
                        );
                    }
                }
                let tolerations = v
                    .pointer("/scheduling/tolerations")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .map(|t| Toleration {
                                key: t.get("key").and_then(Value::as_str).map(sanitize::line),
                                operator: t
                                    .get("operator")
                                    .and_then(Value::as_str)
                                    .map(sanitize::line),
                                value: t.get("value").and_then(Value::as_str).map(sanitize::line),
                                effect: t.get("effect").and_then(Value::as_str).map(sanitize::line),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                Read::Ok(RuntimeClassFacts {
                    name: name.to_string(),
                    handler: str_at(&["handler"]),
                    node_selector,
                    tolerations,
                })
            }
            Read::Missing(m) => Read::Missing(m),
            Read::Forbidden(m) => Read::Forbidden(m),
            Read::Failed(m) => Read::Failed(m),
        },
    )
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct MiniPod {
    metadata: MiniMeta,
    spec: MiniPodSpec,
    status: MiniPodStatus,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct MiniPodSpec {
    node_name: Option<String>,
    containers: Option<Vec<MiniContainer>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct MiniContainer {
    resources: Option<MiniResources>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct MiniResources {
    limits: Option<BTreeMap<String, Value>>,
    requests: Option<BTreeMap<String, Value>>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct MiniPodStatus {
    phase: Option<String>,
    conditions: Option<Vec<MiniCondition>>,
    container_statuses: Option<Vec<Value>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct MiniCondition {
    #[serde(rename = "type")]
    kind: String,
    status: String,
}

/// One list of the Pods bound to nodes and not finished: those that request `resource` (with how much, per
/// node) and the device-plugin Pods.
async fn read_node_pods(
    client: &kube::Client,
    resource: &str,
) -> Result<Read<(Vec<Holder>, Vec<PluginPod>)>> {
    let (mut holders, mut plugins) = (Vec::new(), Vec::new());
    let query = format!(
        "fieldSelector={}",
        enc("status.phase!=Succeeded,status.phase!=Failed,spec.nodeName!=")
    );
    let r = list_pages::<MiniPod, _>(client, "/api/v1/pods", &query, Served::FromCache, |items| {
        for p in items {
            let count: u64 = p
                .spec
                .containers
                .iter()
                .flatten()
                .filter_map(|c| {
                    let r = c.resources.as_ref()?;
                    let v = r
                        .limits
                        .as_ref()
                        .and_then(|l| l.get(resource))
                        .or_else(|| r.requests.as_ref().and_then(|q| q.get(resource)))?;
                    match v {
                        Value::String(s) => s.parse::<u64>().ok(),
                        Value::Number(n) => n.as_u64(),
                        _ => None,
                    }
                })
                .sum();
            if count > 0
                && let Some(node) = &p.spec.node_name
            {
                holders.push(Holder {
                    namespace: sanitize::line(&p.metadata.namespace),
                    name: sanitize::line(&p.metadata.name),
                    node: sanitize::line(node),
                    count,
                });
            }
            if is_device_plugin(&p) {
                plugins.push(plugin_pod(p));
            }
        }
    })
    .await?;
    Ok(r.map(|()| (holders, plugins)))
}

fn is_device_plugin(p: &MiniPod) -> bool {
    let Some(labels) = &p.metadata.labels else {
        return false;
    };
    DEVICE_PLUGIN_LABELS.iter().any(|(key, values)| {
        labels
            .get(*key)
            .is_some_and(|v| values.contains(&v.as_str()))
    })
}

fn plugin_pod(p: MiniPod) -> PluginPod {
    let ready = p
        .status
        .conditions
        .as_ref()
        .is_some_and(|c| c.iter().any(|c| c.kind == "Ready" && c.status == "True"));
    let problem = p.status.container_statuses.as_ref().and_then(|cs| {
        cs.iter().find_map(|c| {
            c.pointer("/state/waiting/reason")
                .or_else(|| c.pointer("/lastState/terminated/reason"))
                .and_then(Value::as_str)
                .map(sanitize::line)
        })
    });
    PluginPod {
        namespace: sanitize::line(&p.metadata.namespace),
        name: sanitize::line(&p.metadata.name),
        node: p.spec.node_name.as_deref().map(sanitize::line),
        phase: p.status.phase.as_deref().map(sanitize::line),
        ready,
        problem,
    }
}

/// The GPU Operator's ClusterPolicy (`nvidia.com/v1`); `Missing` when the CRD is not installed.
async fn read_cluster_policy(client: &kube::Client) -> Result<Read<Option<ClusterPolicyFacts>>> {
    Ok(
        match get::<Value>(client, "/apis/nvidia.com/v1/clusterpolicies").await? {
            Read::Ok(v) => {
                let item = v
                    .get("items")
                    .and_then(Value::as_array)
                    .and_then(|a| a.first())
                    .cloned();
                Read::Ok(item.map(|cp| {
                    let conditions = cp
                        .pointer("/status/conditions")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default();
                    let message = conditions
                        .iter()
                        .find(|c| {
                            (c.get("type").and_then(Value::as_str) == Some("Error")
                                && c.get("status").and_then(Value::as_str) == Some("True"))
                                || (c.get("type").and_then(Value::as_str) == Some("Ready")
                                    && c.get("status").and_then(Value::as_str) == Some("False"))
                        })
                        .and_then(|c| c.get("message").and_then(Value::as_str))
                        .map(sanitize::line);
                    ClusterPolicyFacts {
                        name: cp
                            .pointer("/metadata/name")
                            .and_then(Value::as_str)
                            .map(sanitize::line)
                            .unwrap_or_default(),
                        state: cp
                            .pointer("/status/state")
                            .and_then(Value::as_str)
                            .map(sanitize::line),
                        message,
                    }
                }))
            }
            Read::Missing(m) => Read::Missing(m),
            Read::Forbidden(m) => Read::Forbidden(m),
            Read::Failed(m) => Read::Failed(m),
        },
    )
}

/// A workload: its own events and its ReplicaSets' (FailedCreate lands there), then each of its Pods that is
/// not Ready. With no Pod at all (admission refused every one), the workload itself is diagnosed.
/// A workload's own events and, for a Deployment, its ReplicaSets' (where `FailedCreate` says why no Pod
/// exists), marked as the owner's; what could not be read is a gap.
async fn owner_events(
    client: &kube::Client,
    ns: &str,
    kind: &str,
    name: &str,
    uid: &str,
    selector: &str,
) -> Result<(Vec<Signal>, Vec<Gap>)> {
    // The workload's own events beside its ReplicaSets' (listed, then read): neither waits on the other.
    let (own, replicasets) = futures::future::join(
        read_events(client, ns, name, uid, kind),
        replicaset_events(client, ns, uid, selector, kind),
    )
    .await;
    let mut owner_signals: Vec<Signal> = Vec::new();
    let mut gaps = Vec::new();
    match own? {
        Read::Ok(l) => owner_signals.extend(l),
        other => gaps.extend(gap_of("owner events", &other)),
    }
    let (rs_signals, rs_gaps) = replicasets?;
    owner_signals.extend(rs_signals);
    gaps.extend(rs_gaps);
    for s in &mut owner_signals {
        s.source = Some(SignalSource::OwnerEvent);
    }
    Ok((owner_signals, gaps))
}

/// A Deployment's ReplicaSets' events (where `FailedCreate` says why no Pod exists); none for other kinds.
async fn replicaset_events(
    client: &kube::Client,
    ns: &str,
    uid: &str,
    selector: &str,
    kind: &str,
) -> Result<(Vec<Signal>, Vec<Gap>)> {
    let mut owner_signals: Vec<Signal> = Vec::new();
    let mut gaps = Vec::new();
    if kind == "Deployment" && !selector.is_empty() {
        let mut rss = Vec::new();
        let _ = list_pages::<Value, _>(
            client,
            &format!("/apis/apps/v1/namespaces/{}/replicasets", enc(ns)),
            &format!("labelSelector={}", enc(selector)),
            Served::FromCache,
            |items| {
                for rs in items {
                    let owned = rs
                        .pointer("/metadata/ownerReferences")
                        .and_then(Value::as_array)
                        .is_some_and(|o| {
                            o.iter()
                                .any(|r| r.get("uid").and_then(Value::as_str) == Some(uid))
                        });
                    if owned {
                        rss.push((
                            rs.pointer("/metadata/name")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string(),
                            rs.pointer("/metadata/uid")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string(),
                        ));
                    }
                }
            },
        )
        .await?;
        let reads = join_all(
            rss.iter()
                .map(|(n, u)| read_events(client, ns, n, u, "ReplicaSet")),
        )
        .await;
        for r in reads {
            match r? {
                Read::Ok(l) => owner_signals.extend(l),
                other => gaps.extend(gap_of("replicaset events", &other)),
            }
        }
    }
    Ok((owner_signals, gaps))
}

async fn collect_workload(
    client: &kube::Client,
    ns: &str,
    kind: &str,
    name: &str,
) -> Result<Vec<Evidence>> {
    let (group, plural) = match kind {
        "Deployment" => ("/apis/apps/v1", "deployments"),
        "ReplicaSet" => ("/apis/apps/v1", "replicasets"),
        "StatefulSet" => ("/apis/apps/v1", "statefulsets"),
        _ => ("/apis/batch/v1", "jobs"),
    };
    let obj = match get::<Value>(
        client,
        &format!("{group}/namespaces/{}/{plural}/{}", enc(ns), enc(name)),
    )
    .await?
    {
        Read::Ok(v) => v,
        Read::Missing(_) => {
            return Err(Error::NotFound {
                verb: "get",
                resource: kind.to_ascii_lowercase(),
                name: format!("{}/{}", sanitize::line(ns), sanitize::line(name)),
                message: "not found".into(),
            });
        }
        Read::Forbidden(m) => {
            return Err(Error::Api {
                verb: "get",
                resource: format!("{kind} {ns}/{name}"),
                message: format!("forbidden: {m}"),
            });
        }
        Read::Failed(m) => {
            return Err(Error::Api {
                verb: "get",
                resource: format!("{kind} {ns}/{name}"),
                message: m,
            });
        }
    };
    let uid = obj
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let selector = obj
        .pointer("/spec/selector/matchLabels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default();
    // What the workload's controllers said (its own events, a Deployment's ReplicaSets') and its Pods are read
    // side by side: neither waits on the other.
    let owner = owner_events(client, ns, kind, name, &uid, &selector);
    let listed = async {
        let mut pods: Vec<Value> = Vec::new();
        let mut gaps = Vec::new();
        if !selector.is_empty() {
            let r = list_pages::<Value, _>(
                client,
                &format!("/api/v1/namespaces/{}/pods", enc(ns)),
                &format!("labelSelector={}", enc(&selector)),
                Served::FromCache,
                |items| pods.extend(items),
            )
            .await?;
            gaps.extend(gap_of("pods", &r));
        }
        Ok::<_, Error>((pods, gaps))
    };
    let (owner, listed) = futures::future::join(owner, listed).await;
    let (owner_signals, mut gaps) = owner?;
    let (pods, pod_gaps) = listed?;
    gaps.extend(pod_gaps);
    let not_ready: Vec<Value> = pods
        .into_iter()
        .filter(|p| {
            let ready = p
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .is_some_and(|c| {
                    c.iter().any(|c| {
                        c.get("type").and_then(Value::as_str) == Some("Ready")
                            && c.get("status").and_then(Value::as_str) == Some("True")
                    })
                });
            let done = p.pointer("/status/phase").and_then(Value::as_str) == Some("Succeeded");
            !ready && !done
        })
        .collect();
    if not_ready.is_empty() {
        let target = Target {
            kind: kind.to_string(),
            namespace: Some(ns.to_string()),
            name: Some(name.to_string()),
            source: TargetSource::Cluster,
        };
        return Ok(vec![Evidence {
            target,
            signals: owner_signals,
            gaps,
            ..Default::default()
        }]);
    }
    let reads = join_all(not_ready.into_iter().map(|p| {
        let pname = p
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        async move { collect_pod(client, ns, &pname, Some(p)).await }
    }))
    .await;
    let mut out = Vec::new();
    for r in reads {
        let mut ev = r?;
        ev.signals.extend(owner_signals.iter().cloned());
        ev.gaps.extend(gaps.iter().cloned());
        out.push(ev);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_like_kubectl() {
        assert_eq!(TargetSpec::parse("p").unwrap(), TargetSpec::Pod("p".into()));
        assert_eq!(
            TargetSpec::parse("pod/p").unwrap(),
            TargetSpec::Pod("p".into())
        );
        assert_eq!(
            TargetSpec::parse("deploy/d").unwrap(),
            TargetSpec::Workload {
                kind: "Deployment".into(),
                name: "d".into()
            }
        );
        assert_eq!(
            TargetSpec::parse("sts/s").unwrap(),
            TargetSpec::Workload {
                kind: "StatefulSet".into(),
                name: "s".into()
            }
        );
        assert!(TargetSpec::parse("svc/x").is_err());
        assert!(TargetSpec::parse("deploy/").is_err());
    }

    #[test]
    fn selectors_become_label_selectors() {
        let sel: BTreeMap<String, String> = [(
            "nvidia.com/gpu.product".to_string(),
            "NVIDIA-H100-80GB-HBM3".to_string(),
        )]
        .into();
        assert_eq!(
            node_label_selector(&sel, &[]).as_deref(),
            Some("nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3")
        );
        let aff = vec![vec![(
            "topology.kubernetes.io/zone".to_string(),
            "In".to_string(),
            vec!["zone-a".to_string()],
        )]];
        assert_eq!(
            node_label_selector(&BTreeMap::new(), &aff).as_deref(),
            Some("topology.kubernetes.io/zone in (zone-a)")
        );
        // Two OR-ed terms cannot be one selector; odd values are not sent.
        assert_eq!(
            node_label_selector(&BTreeMap::new(), &[aff[0].clone(), aff[0].clone()]),
            None
        );
        let odd: BTreeMap<String, String> = [("k".to_string(), "a b".to_string())].into();
        assert_eq!(node_label_selector(&odd, &[]), None);
    }

    #[test]
    fn close_names() {
        assert_eq!(distance("gpu-tain", "gpu-taint"), 1);
        assert_eq!(distance("", "ab"), 2);
    }
}
