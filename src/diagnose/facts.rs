//! Cross-checks against live facts: turns "the message says" into "the cluster shows". For a Pod that is not
//! scheduled it evaluates every node the way the scheduler's filters would (cordon, taints against the Pod's
//! and RuntimeClass's tolerations, nodeSelector and required affinity, allocatable minus what running Pods
//! hold), finds the GPU node closest to taking the Pod, and names what stops it: a taint (with its key), a
//! selector, a device plugin that advertises nothing on GPU hardware, or GPUs held by named Pods. Pure.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::collect::GPU_HARDWARE_LABELS;
use crate::evidence::{
    Evidence, NodeFacts, SignalSource, Taint, Toleration, is_extended_resource, is_gpu_resource,
};
use crate::rules::Category;

use super::EvidenceLine;

/// What the facts say, and which message rules it refines.
#[derive(Debug, Clone)]
pub(super) struct Verdict {
    pub category: Category,
    /// The message rules this verdict refines, most specific first; the first is used when none matched.
    pub rules: &'static [&'static str],
    pub summary: String,
    pub details: BTreeMap<String, Value>,
    pub evidence: Vec<EvidenceLine>,
    pub fix: Option<String>,
}

/// Why a node cannot take the Pod, in the scheduler's filter order.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Failure {
    Cordoned,
    Taints(Vec<Taint>),
    Selector,
    /// No allocatable of the resource: GPU hardware without an advertising device plugin.
    NotAdvertised,
    /// Advertised, but what running Pods hold leaves too little.
    Busy {
        allocatable: u64,
        used: u64,
    },
}

impl Failure {
    /// How good a fix it is to remove this failure (lower first): a toleration is the standard fix; a
    /// device plugin that does not advertise is a fault; busy GPUs mean waiting; the selector is the
    /// user's stated intent; a cordon is maintenance.
    fn rank(&self) -> u8 {
        match self {
            Failure::Taints(_) => 0,
            Failure::NotAdvertised => 1,
            Failure::Busy { .. } => 2,
            Failure::Selector => 3,
            Failure::Cordoned => 4,
        }
    }
}

fn quantity(s: &str) -> Option<u64> {
    s.trim().parse().ok()
}

fn has_gpu_hardware(n: &NodeFacts) -> Option<String> {
    GPU_HARDWARE_LABELS.iter().find_map(|k| {
        n.labels
            .get(*k)
            .filter(|v| !v.is_empty() && v.as_str() != "false")
            .map(|v| format!("{k}={v}"))
    })
}

fn matches_expr(labels: &BTreeMap<String, String>, key: &str, op: &str, values: &[String]) -> bool {
    let v = labels.get(key);
    match op {
        "In" => v.is_some_and(|v| values.contains(v)),
        "NotIn" => !v.is_some_and(|v| values.contains(v)),
        "Exists" => v.is_some(),
        "DoesNotExist" => v.is_none(),
        "Gt" | "Lt" => {
            let (Some(a), Some(b)) = (
                v.and_then(|v| v.parse::<i64>().ok()),
                values.first().and_then(|b| b.parse::<i64>().ok()),
            ) else {
                return false;
            };
            if op == "Gt" { a > b } else { a < b }
        }
        _ => false,
    }
}

/// Every filter a node fails for the Pod (not only the first, which is all the scheduler reports).
fn failures(
    n: &NodeFacts,
    tolerations: &[Toleration],
    selector: &BTreeMap<String, String>,
    affinity: &[Vec<(String, String, Vec<String>)>],
    resource: &str,
    request: u64,
    used: Option<u64>,
) -> Vec<Failure> {
    let mut out = Vec::new();
    if n.unschedulable {
        out.push(Failure::Cordoned);
    }
    let untolerated: Vec<Taint> = n
        .taints
        .iter()
        .filter(|t| matches!(t.effect.as_str(), "NoSchedule" | "NoExecute"))
        .filter(|t| !tolerations.iter().any(|tol| tol.tolerates(t)))
        .cloned()
        .collect();
    if !untolerated.is_empty() {
        out.push(Failure::Taints(untolerated));
    }
    let selector_ok = selector.iter().all(|(k, v)| n.labels.get(k) == Some(v))
        && (affinity.is_empty()
            || affinity.iter().any(|term| {
                term.iter()
                    .all(|(k, op, vals)| matches_expr(&n.labels, k, op, vals))
            }));
    if !selector_ok {
        out.push(Failure::Selector);
    }
    let allocatable = n
        .allocatable
        .get(resource)
        .and_then(|q| quantity(q))
        .unwrap_or(0);
    if allocatable == 0 {
        out.push(Failure::NotAdvertised);
    } else if let Some(used) = used
        && allocatable.saturating_sub(used) < request
    {
        out.push(Failure::Busy { allocatable, used });
    }
    out
}

fn line(source: SignalSource, text: String) -> EvidenceLine {
    EvidenceLine {
        source,
        reason: None,
        text,
        count: 1,
    }
}

/// The verdict for a Pod that is not scheduled, when nodes were read.
pub(super) fn scheduling(ev: &Evidence) -> Option<Verdict> {
    let pod = ev.pod.as_ref()?;
    if pod.node_name.is_some() {
        return None;
    }
    let nodes = ev.nodes.as_ref()?;
    let resource = pod
        .requests
        .keys()
        .find(|r| is_gpu_resource(r))
        .or_else(|| pod.requests.keys().find(|r| is_extended_resource(r)))?
        .clone();
    let request = pod
        .requests
        .get(&resource)
        .and_then(|q| quantity(q))
        .unwrap_or(1)
        .max(1);
    let rc = ev.cluster.runtime_class.as_ref();
    let mut tolerations = pod.tolerations.clone();
    let mut selector = pod.node_selector.clone();
    if let Some(rc) = rc {
        tolerations.extend(rc.tolerations.iter().cloned());
        selector.extend(rc.node_selector.clone());
    }
    let holders = ev.cluster.holders.as_ref();
    let used_on = |node: &str| {
        holders.map(|h| {
            h.iter()
                .filter(|h| h.node == node)
                .map(|h| h.count)
                .sum::<u64>()
        })
    };
    let gpu_nodes: Vec<&NodeFacts> = nodes
        .iter()
        .filter(|n| {
            n.allocatable
                .get(&resource)
                .and_then(|q| quantity(q))
                .unwrap_or(0)
                > 0
                || has_gpu_hardware(n).is_some()
        })
        .collect();
    let mut details = BTreeMap::new();
    details.insert("resource".into(), json!(resource));
    details.insert("nodes_read".into(), json!(nodes.len()));
    details.insert(
        "gpu_nodes".into(),
        json!(gpu_nodes.iter().map(|n| n.name.clone()).collect::<Vec<_>>()),
    );
    if gpu_nodes.is_empty() {
        return Some(Verdict {
            category: Category::InsufficientResource,
            rules: &["GW105"],
            summary: format!(
                "no node advertises {resource}, and none of the {} nodes has GPU hardware labels",
                nodes.len()
            ),
            details,
            evidence: vec![line(
                SignalSource::Node,
                format!(
                    "{} nodes read; none has allocatable {resource} or a GPU hardware label",
                    nodes.len()
                ),
            )],
            fix: None,
        });
    }
    // The GPU node closest to taking the Pod: fewest failing filters, then the best fix.
    let mut scored: Vec<(&NodeFacts, Vec<Failure>)> = gpu_nodes
        .iter()
        .map(|n| {
            (
                *n,
                failures(
                    n,
                    &tolerations,
                    &selector,
                    &pod.required_affinity,
                    &resource,
                    request,
                    used_on(&n.name),
                ),
            )
        })
        .collect();
    scored.sort_by_key(|(n, f)| {
        (
            f.len(),
            f.iter().map(Failure::rank).min().unwrap_or(9),
            n.name.clone(),
        )
    });
    let (best, fails) = scored.first()?;
    let Some(first) = fails.iter().min_by_key(|f| f.rank()) else {
        // A GPU node fits now: the scheduler has not caught up, or another scheduler owns the Pod.
        return None;
    };
    let mut evidence: Vec<EvidenceLine> = scored
        .iter()
        .take(6)
        .map(|(n, f)| {
            let what: Vec<String> = f
                .iter()
                .map(|f| match f {
                    Failure::Cordoned => "cordoned".to_string(),
                    Failure::Taints(t) => format!(
                        "untolerated taint {}",
                        t.iter().map(Taint::display).collect::<Vec<_>>().join(", ")
                    ),
                    Failure::Selector => {
                        "does not match the pod's nodeSelector/affinity".to_string()
                    }
                    Failure::NotAdvertised => format!(
                        "advertises no {resource}{}",
                        has_gpu_hardware(n)
                            .map(|l| format!(" despite {l}"))
                            .unwrap_or_default()
                    ),
                    Failure::Busy { allocatable, used } => {
                        format!("{used} of {allocatable} {resource} already requested")
                    }
                })
                .collect();
            let state = if what.is_empty() {
                "fits".to_string()
            } else {
                what.join("; ")
            };
            line(SignalSource::Node, format!("{}: {state}", n.name))
        })
        .collect();
    details.insert("node".into(), json!(best.name));
    let verdict = match first {
        Failure::Taints(taints) => {
            let t = &taints[0];
            details.insert("taint".into(), json!(t.display()));
            details.insert("key".into(), json!(t.key));
            if let Some(v) = &t.value {
                details.insert("value".into(), json!(v));
            }
            details.insert("effect".into(), json!(t.effect));
            let fix = match &t.value {
                Some(v) if !v.is_empty() => format!(
                    "tolerations:\n- key: \"{}\"\n  operator: \"Equal\"\n  value: \"{v}\"\n  effect: \"{}\"",
                    t.key, t.effect
                ),
                _ => format!(
                    "tolerations:\n- key: \"{}\"\n  operator: \"Exists\"\n  effect: \"{}\"",
                    t.key, t.effect
                ),
            };
            Verdict {
                category: Category::Taint,
                rules: &["GW103", "GW104", "GW102", "GW101"],
                summary: format!(
                    "GPU node {} carries taint {} that the pod does not tolerate",
                    best.name,
                    t.display()
                ),
                details,
                evidence: Vec::new(),
                fix: Some(fix),
            }
        }
        Failure::NotAdvertised => {
            let hw = has_gpu_hardware(best).unwrap_or_default();
            details.insert("hardware_label".into(), json!(hw));
            let plugins: Vec<String> = ev
                .cluster
                .device_plugins
                .iter()
                .flatten()
                .filter(|p| p.node.as_deref() == Some(best.name.as_str()))
                .map(|p| {
                    format!(
                        "{}/{} {}{}",
                        p.namespace,
                        p.name,
                        p.phase.clone().unwrap_or_default(),
                        p.problem
                            .as_ref()
                            .map(|x| format!(" ({x})"))
                            .unwrap_or_default()
                    )
                })
                .collect();
            let plugin_note = match (&ev.cluster.device_plugins, plugins.is_empty()) {
                (Some(_), true) => "no device-plugin pod runs there".to_string(),
                (Some(_), false) => format!("its device-plugin pod: {}", plugins.join(", ")),
                (None, _) => "device-plugin pods could not be read".to_string(),
            };
            details.insert("device_plugin_pods".into(), json!(plugins));
            if let Some(p) = ev
                .cluster
                .device_plugins
                .iter()
                .flatten()
                .find(|p| p.node.as_deref() == Some(best.name.as_str()))
            {
                details.insert(
                    "device_plugin_pod".into(),
                    json!(format!("{}/{}", p.namespace, p.name)),
                );
            }
            evidence.push(line(
                SignalSource::DevicePlugin,
                format!("{}: {plugin_note}", best.name),
            ));
            if let Some(cp) = &ev.cluster.cluster_policy {
                evidence.push(line(
                    SignalSource::Clusterpolicy,
                    format!(
                        "{}: {}{}",
                        cp.name,
                        cp.state.clone().unwrap_or_else(|| "no state".into()),
                        cp.message
                            .as_ref()
                            .map(|m| format!(": {m}"))
                            .unwrap_or_default()
                    ),
                ));
                details.insert("clusterpolicy_state".into(), json!(cp.state));
            }
            Verdict {
                category: Category::DevicePlugin,
                rules: &["GW105"],
                summary: format!(
                    "GPU node {} has GPU hardware ({hw}) but advertises no {resource}; {plugin_note}",
                    best.name
                ),
                details,
                evidence: Vec::new(),
                fix: None,
            }
        }
        Failure::Busy { allocatable, .. } => {
            let on_best: Vec<String> = holders
                .iter()
                .flat_map(|h| h.iter())
                .filter(|h| h.node == best.name)
                .map(|h| format!("{}/{} ({})", h.namespace, h.name, h.count))
                .collect();
            details.insert("allocatable".into(), json!(allocatable));
            details.insert("holders".into(), json!(on_best));
            Verdict {
                category: Category::InsufficientResource,
                rules: &["GW105"],
                summary: format!(
                    "all {allocatable} {resource} on {} are requested by running pods: {}",
                    best.name,
                    on_best.join(", ")
                ),
                details,
                evidence: Vec::new(),
                fix: None,
            }
        }
        Failure::Selector => {
            let sel: Vec<String> = selector.iter().map(|(k, v)| format!("{k}={v}")).collect();
            details.insert("node_selector".into(), json!(sel));
            Verdict {
                category: Category::NodeAffinity,
                rules: &["GW108"],
                summary: format!(
                    "no GPU node matches the pod's nodeSelector/affinity ({}); nearest is {}",
                    if sel.is_empty() {
                        "required affinity".into()
                    } else {
                        sel.join(", ")
                    },
                    best.name
                ),
                details,
                evidence: Vec::new(),
                fix: None,
            }
        }
        Failure::Cordoned => Verdict {
            category: Category::Other,
            rules: &["GW109"],
            summary: format!("the GPU node {} is cordoned", best.name),
            details,
            evidence: Vec::new(),
            fix: None,
        },
    };
    Some(Verdict {
        evidence,
        ..verdict
    })
}
