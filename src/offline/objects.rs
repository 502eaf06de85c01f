//! Reads Kubernetes API objects (a Pod, core/v1 or events.k8s.io/v1 Events, EventLists, Lists, Nodes,
//! ReplicaSets/Jobs with a ReplicaFailure condition), as JSON or YAML values, into Evidence grouped by Pod.
//! Reads leniently: unknown fields are ignored and a null where a list is expected is an empty list. It is
//! also the converter the live collector uses for the objects it fetched.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;
use serde_json::value::RawValue;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::evidence::{
    Evidence, NodeFacts, PodFacts, Signal, SignalSource, Taint, Target, Toleration,
};
use crate::sanitize;

/// Objects grouped by the Pod (or owner) they are about.
#[derive(Default)]
struct Groups {
    order: Vec<(String, String, String)>,
    by_key: HashMap<(String, String, String), Evidence>,
    nodes: Vec<NodeFacts>,
    recognised: usize,
    other_kinds: Vec<String>,
}

impl Groups {
    fn entry(&mut self, kind: &str, namespace: &str, name: &str) -> &mut Evidence {
        self.entry_owned((kind.to_string(), namespace.to_string(), name.to_string()))
    }

    fn entry_owned(&mut self, key: (String, String, String)) -> &mut Evidence {
        use std::collections::hash_map::Entry;
        match self.by_key.entry(key) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                let (kind, namespace, name) = e.key().clone();
                self.order.push(e.key().clone());
                let target = Target {
                    kind,
                    namespace: (!namespace.is_empty()).then_some(namespace),
                    name: (!name.is_empty()).then_some(name),
                    ..Default::default()
                };
                e.insert(Evidence {
                    target,
                    ..Default::default()
                })
            }
        }
    }
}

/// A list read with typed, borrowing structs: Events (by far the bulk of a large EventList) are read
/// without building a `Value` tree; any other item falls back to the lenient `Value` walk.
#[derive(Deserialize)]
struct FastList<'a> {
    #[serde(borrow)]
    items: Vec<&'a RawValue>,
    #[serde(borrow, default)]
    kind: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct FastEvent<'a> {
    #[serde(borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    involved_object: Option<FastRef<'a>>,
    #[serde(borrow)]
    regarding: Option<FastRef<'a>>,
    #[serde(borrow)]
    reason: Option<Cow<'a, str>>,
    #[serde(borrow)]
    message: Option<Cow<'a, str>>,
    #[serde(borrow)]
    note: Option<Cow<'a, str>>,
    #[serde(borrow, rename = "type")]
    kind_of: Option<Cow<'a, str>>,
    count: Option<u64>,
    deprecated_count: Option<u64>,
    #[serde(borrow)]
    series: Option<FastSeries<'a>>,
    #[serde(borrow)]
    source: Option<FastSource<'a>>,
    #[serde(borrow)]
    deprecated_source: Option<FastSource<'a>>,
    #[serde(borrow)]
    reporting_component: Option<Cow<'a, str>>,
    #[serde(borrow)]
    reporting_controller: Option<Cow<'a, str>>,
    #[serde(borrow)]
    reporting_instance: Option<Cow<'a, str>>,
    #[serde(borrow)]
    last_timestamp: Option<Cow<'a, str>>,
    #[serde(borrow)]
    deprecated_last_timestamp: Option<Cow<'a, str>>,
    #[serde(borrow)]
    event_time: Option<Cow<'a, str>>,
    #[serde(borrow)]
    metadata: Option<FastMeta<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct FastRef<'a> {
    #[serde(borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    namespace: Option<Cow<'a, str>>,
    #[serde(borrow)]
    field_path: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct FastSeries<'a> {
    count: Option<u64>,
    #[serde(borrow)]
    last_observed_time: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct FastSource<'a> {
    #[serde(borrow)]
    component: Option<Cow<'a, str>>,
    #[serde(borrow)]
    host: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct FastMeta<'a> {
    #[serde(borrow)]
    namespace: Option<Cow<'a, str>>,
    #[serde(borrow)]
    creation_timestamp: Option<Cow<'a, str>>,
}

fn line(c: &Option<Cow<'_, str>>) -> Option<String> {
    c.as_deref().map(sanitize::line).filter(|s| !s.is_empty())
}

impl FastEvent<'_> {
    fn is_event(&self) -> bool {
        match self.kind.as_deref() {
            Some("Event") => true,
            None | Some("") => self.involved_object.is_some() || self.regarding.is_some(),
            _ => false,
        }
    }

    fn into_signal(self) -> (Option<(String, String, String)>, Signal) {
        let regarding = self.involved_object.as_ref().or(self.regarding.as_ref());
        let kind = regarding.and_then(|r| line(&r.kind)).unwrap_or_default();
        let name = regarding.and_then(|r| line(&r.name)).unwrap_or_default();
        let namespace = regarding
            .and_then(|r| line(&r.namespace))
            .or_else(|| self.metadata.as_ref().and_then(|m| line(&m.namespace)))
            .unwrap_or_default();
        let count = self
            .series
            .as_ref()
            .and_then(|s| s.count)
            .or(self.count)
            .or(self.deprecated_count)
            .unwrap_or(1)
            .clamp(1, u64::from(u32::MAX)) as u32;
        let time = self
            .series
            .as_ref()
            .and_then(|s| line(&s.last_observed_time))
            .or_else(|| line(&self.last_timestamp))
            .or_else(|| line(&self.deprecated_last_timestamp))
            .or_else(|| line(&self.event_time))
            .or_else(|| {
                self.metadata
                    .as_ref()
                    .and_then(|m| line(&m.creation_timestamp))
            });
        let component = self
            .source
            .as_ref()
            .and_then(|s| line(&s.component))
            .or_else(|| line(&self.reporting_component))
            .or_else(|| line(&self.reporting_controller))
            .or_else(|| {
                self.deprecated_source
                    .as_ref()
                    .and_then(|s| line(&s.component))
            });
        let node = self
            .source
            .as_ref()
            .and_then(|s| line(&s.host))
            .or_else(|| self.deprecated_source.as_ref().and_then(|s| line(&s.host)))
            .or_else(|| {
                (component.as_deref() == Some("kubelet"))
                    .then(|| line(&self.reporting_instance))
                    .flatten()
            });
        let source = if kind.is_empty() || kind == "Pod" {
            SignalSource::Event
        } else {
            SignalSource::OwnerEvent
        };
        let message = self
            .message
            .as_deref()
            .or(self.note.as_deref())
            .map(|m| sanitize::clean(m, true))
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_default();
        let signal = Signal {
            source: Some(source),
            reason: line(&self.reason),
            kind: line(&self.kind_of),
            message,
            count,
            object: (!name.is_empty())
                .then(|| format!("{}/{}", if kind.is_empty() { "Pod" } else { &kind }, name)),
            field_path: regarding.and_then(|r| line(&r.field_path)),
            component,
            node,
            time,
            seen_ago: None,
            namespace: None,
        };
        let key = (!name.is_empty()).then(|| {
            (
                if kind.is_empty() {
                    "Pod".to_string()
                } else {
                    kind
                },
                namespace,
                name,
            )
        });
        (key, signal)
    }
}

/// One list item, read on its own: an Event straight into its Signal, anything else as a `Value`.
#[expect(
    clippy::large_enum_variant,
    reason = "nearly every item is an Event; boxing it would cost an allocation each"
)]
enum Item {
    Event(Option<(String, String, String)>, Signal),
    Object(Value),
    Unreadable,
}

fn read_item(raw: &RawValue) -> Item {
    match serde_json::from_str::<FastEvent<'_>>(raw.get()) {
        Ok(e) if e.is_event() => {
            let (key, signal) = e.into_signal();
            Item::Event(key, signal)
        }
        _ => serde_json::from_str::<Value>(raw.get()).map_or(Item::Unreadable, Item::Object),
    }
}

/// Reads a JSON document that is a list, fast: the items are read on all cores, then grouped in order.
/// `None` when it is not a list (the caller walks `Value`s).
pub(super) fn read_list_json(text: &str, what: &str) -> Option<Result<Vec<Evidence>>> {
    let list: FastList<'_> = serde_json::from_str(text).ok()?;
    let items = crate::par::map_chunks(&list.items, 2048, || (), |_, raw| read_item(raw));
    let empty = list.items.is_empty();
    let item_kind = list
        .kind
        .as_deref()
        .and_then(kind_of_items)
        .map(str::to_string);
    drop(list);
    let mut g = Groups::default();
    g.recognised += usize::from(empty);
    for item in items {
        match item {
            Item::Event(key, signal) => {
                g.recognised += 1;
                let key = key.unwrap_or_else(|| ("Pod".into(), String::new(), String::new()));
                g.entry_owned(key).signals.push(signal);
            }
            Item::Object(v) => walk(with_kind(v, item_kind.as_deref()), &mut g),
            Item::Unreadable => {}
        }
    }
    Some(finish(g, what))
}

pub(super) fn read(docs: Vec<Value>, what: &str) -> Result<Vec<Evidence>> {
    let mut g = Groups::default();
    for doc in docs {
        walk(doc, &mut g);
    }
    finish(g, what)
}

fn finish(mut g: Groups, what: &str) -> Result<Vec<Evidence>> {
    if g.recognised == 0 {
        let kinds = if g.other_kinds.is_empty() {
            "no kind".to_string()
        } else {
            g.other_kinds.join(", ")
        };
        return Err(Error::BadInput {
            what: what.into(),
            why: format!("expected a Pod, Events, an EventList or a List of them, got {kinds}"),
        });
    }
    let nodes = std::mem::take(&mut g.nodes);
    let mut out: Vec<Evidence> = Vec::new();
    let order = std::mem::take(&mut g.order);
    // Owner events (ReplicaSet FailedCreate) also explain Pods that the owner did manage to create;
    // only Pod objects name their owner, so a list of Events alone needs none of this.
    let pods_name_owners = g
        .by_key
        .values()
        .any(|e| e.pod.as_ref().is_some_and(|p| p.owner.is_some()));
    let owner_signals: Vec<(String, Signal)> = order
        .iter()
        .filter(|k| pods_name_owners && k.0 != "Pod")
        .flat_map(|k| {
            let ev = &g.by_key[k];
            ev.signals
                .iter()
                .map(move |s| (format!("{}/{}", k.0, k.2), s.clone()))
        })
        .collect();
    for key in &order {
        let Some(mut ev) = g.by_key.remove(key) else {
            continue;
        };
        if key.0 == "Pod" {
            if let Some(owner) = ev.pod.as_ref().and_then(|p| p.owner.clone()) {
                for (o, s) in &owner_signals {
                    if o.eq_ignore_ascii_case(&owner) {
                        ev.signals.push(s.clone());
                    }
                }
            }
        } else if order.iter().any(|k| k.0 == "Pod") && ev.pod.is_none() {
            // Owner-only groups are folded into the Pods above when a Pod names them; keep the rest.
            let name = format!("{}/{}", key.0, key.2);
            let claimed = out.iter().any(|e| {
                e.pod
                    .as_ref()
                    .and_then(|p| p.owner.as_deref())
                    .is_some_and(|o| o.eq_ignore_ascii_case(&name))
            });
            if claimed {
                continue;
            }
        }
        if !nodes.is_empty() {
            ev.nodes = Some(nodes.clone());
        }
        out.push(ev);
    }
    // Pods listed before their owners' events: attach late owner signals too.
    for ev in &mut out {
        if let Some(owner) = ev.pod.as_ref().and_then(|p| p.owner.clone()) {
            for (o, s) in &owner_signals {
                if o.eq_ignore_ascii_case(&owner) && !ev.signals.contains(s) {
                    ev.signals.push(s.clone());
                }
            }
        }
    }
    out.retain(|e| !(e.target.kind != "Pod" && e.signals.is_empty() && e.pod.is_none()));
    if out.is_empty() {
        out.push(Evidence {
            nodes: (!nodes.is_empty()).then_some(nodes),
            ..Default::default()
        });
    }
    Ok(out)
}

fn walk(doc: Value, g: &mut Groups) {
    match doc {
        Value::Array(items) => {
            for item in items {
                walk(item, g);
            }
        }
        Value::Object(mut map) => {
            let kind = str_of(map.get("kind")).unwrap_or_default();
            if let Some(items @ (Value::Array(_) | Value::Null)) = map.remove("items") {
                let items = match items {
                    Value::Array(items) => items,
                    _ => Vec::new(),
                };
                // An empty list is a real answer (no events yet); a list of other kinds is the wrong input.
                g.recognised +=
                    usize::from(items.is_empty() && (kind.ends_with("List") || kind.is_empty()));
                let item_kind = kind_of_items(&kind);
                for item in items {
                    walk(with_kind(item, item_kind), g);
                }
                return;
            }
            let obj = Value::Object(map);
            match kind.as_str() {
                "Pod" => {
                    g.recognised += 1;
                    read_pod(&obj, g);
                }
                "Event" => {
                    g.recognised += 1;
                    read_event(&obj, g);
                }
                "Node" => {
                    g.recognised += 1;
                    g.nodes.push(node_facts(&obj));
                }
                "ReplicaSet"
                | "Job"
                | "StatefulSet"
                | "DaemonSet"
                | "Deployment"
                | "ReplicationController" => {
                    g.recognised += 1;
                    read_owner(&kind, &obj, g);
                }
                // The apiserver's reply to a request it refused (a 403 from quota or admission, as a spawner or
                // an operator prints it): its message is what the user would have seen from kubectl.
                // Not a missing object (`NotFound`): that is no answer about a Pod.
                "Status"
                    if str_of(obj.get("status")).as_deref() == Some("Failure")
                        && str_of(obj.get("reason")).as_deref() != Some("NotFound") =>
                {
                    g.recognised += 1;
                    read_status(&obj, g);
                }
                "" if obj.get("involvedObject").is_some() || obj.get("regarding").is_some() => {
                    g.recognised += 1;
                    read_event(&obj, g);
                }
                "" if obj.get("spec").and_then(|s| s.get("containers")).is_some() => {
                    g.recognised += 1;
                    read_pod(&obj, g);
                }
                other => {
                    if !g.other_kinds.iter().any(|k| k == other) && g.other_kinds.len() < 5 {
                        g.other_kinds.push(if other.is_empty() {
                            "an object without a kind".into()
                        } else {
                            format!("kind {other}")
                        });
                    }
                }
            }
        }
        Value::Null => {}
        other => {
            let t = match other {
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::String(_) => "a string",
                _ => "a value",
            };
            if g.other_kinds.len() < 5 {
                g.other_kinds.push(t.into());
            }
        }
    }
}

/// The kind of a typed list's items (`EventList` holds Events, `NodeList` Nodes); none for a plain `List`.
fn kind_of_items(list: &str) -> Option<&str> {
    list.strip_suffix("List").filter(|k| !k.is_empty())
}

/// An item of a typed list is of the list's kind even when it does not say so (the API leaves `kind` off list
/// items).
fn with_kind(mut item: Value, kind: Option<&str>) -> Value {
    if let (Some(kind), Value::Object(o)) = (kind, &mut item)
        && !o.contains_key("kind")
    {
        o.insert("kind".into(), kind.into());
    }
    item
}

fn str_of(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .map(sanitize::line)
        .filter(|s| !s.is_empty())
}

fn text_of(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .map(|s| sanitize::clean(s, true))
        .filter(|s| !s.trim().is_empty())
}

fn path<'v>(v: &'v Value, keys: &[&str]) -> Option<&'v Value> {
    keys.iter().try_fold(v, |acc, k| acc.get(*k))
}

fn arr(v: Option<&Value>) -> &[Value] {
    v.and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// Pod spec and status → PodFacts and status signals (conditions, container states, rejection).
pub fn pod_facts(pod: &Value) -> (PodFacts, Vec<Signal>) {
    let meta = pod.get("metadata");
    let spec = pod.get("spec");
    let status = pod.get("status");
    let mut facts = PodFacts {
        name: str_of(meta.and_then(|m| m.get("name"))),
        namespace: str_of(meta.and_then(|m| m.get("namespace"))),
        phase: str_of(status.and_then(|s| s.get("phase"))),
        reason: str_of(status.and_then(|s| s.get("reason"))),
        message: text_of(status.and_then(|s| s.get("message"))),
        node_name: str_of(spec.and_then(|s| s.get("nodeName"))),
        runtime_class_name: str_of(spec.and_then(|s| s.get("runtimeClassName"))),
        scheduler_name: str_of(spec.and_then(|s| s.get("schedulerName"))),
        ..Default::default()
    };
    for gate in arr(spec.and_then(|s| s.get("schedulingGates"))) {
        if let Some(n) = str_of(gate.get("name")) {
            facts.scheduling_gates.push(n);
        }
    }
    for t in arr(spec.and_then(|s| s.get("tolerations"))) {
        facts.tolerations.push(Toleration {
            key: str_of(t.get("key")),
            operator: str_of(t.get("operator")),
            value: str_of(t.get("value")),
            effect: str_of(t.get("effect")),
        });
    }
    if let Some(sel) = spec
        .and_then(|s| s.get("nodeSelector"))
        .and_then(Value::as_object)
    {
        for (k, v) in sel {
            facts.node_selector.insert(
                sanitize::line(k),
                v.as_str().map(sanitize::line).unwrap_or_default(),
            );
        }
    }
    for c in arr(spec.and_then(|s| s.get("containers"))) {
        if let Some(n) = str_of(c.get("name")) {
            facts.containers.push(n);
        }
        let res = c.get("resources");
        let limits = res.and_then(|r| r.get("limits")).and_then(Value::as_object);
        let requests = res
            .and_then(|r| r.get("requests"))
            .and_then(Value::as_object);
        for map in [limits, requests].into_iter().flatten() {
            for (k, v) in map {
                let q = match v {
                    Value::String(s) => sanitize::line(s),
                    Value::Number(n) => n.to_string(),
                    _ => continue,
                };
                facts.requests.entry(sanitize::line(k)).or_insert(q);
            }
        }
    }
    facts.uid = str_of(meta.and_then(|m| m.get("uid")));
    let terms = path(
        pod,
        &[
            "spec",
            "affinity",
            "nodeAffinity",
            "requiredDuringSchedulingIgnoredDuringExecution",
            "nodeSelectorTerms",
        ],
    );
    for term in arr(terms) {
        let mut exprs = Vec::new();
        for e in arr(term.get("matchExpressions")) {
            let values = arr(e.get("values"))
                .iter()
                .filter_map(|v| v.as_str().map(sanitize::line))
                .collect();
            if let (Some(k), Some(op)) = (str_of(e.get("key")), str_of(e.get("operator"))) {
                exprs.push((k, op, values));
            }
        }
        facts.required_affinity.push(exprs);
    }
    if let Some(owner) = arr(meta.and_then(|m| m.get("ownerReferences")))
        .iter()
        .find(|o| o.get("controller").and_then(Value::as_bool).unwrap_or(true))
        && let (Some(k), Some(n)) = (str_of(owner.get("kind")), str_of(owner.get("name")))
    {
        facts.owner = Some(format!("{k}/{n}"));
        facts.owner_uid = str_of(owner.get("uid"));
    }
    let mut signals = Vec::new();
    let object = facts.name.as_ref().map(|n| format!("Pod/{n}"));
    for c in arr(status.and_then(|s| s.get("conditions"))) {
        let ctype = str_of(c.get("type")).unwrap_or_default();
        let cstatus = str_of(c.get("status"));
        match ctype.as_str() {
            "PodScheduled" => facts.scheduled = cstatus.clone(),
            "Ready" => facts.ready = cstatus.clone(),
            _ => {}
        }
        if cstatus.as_deref() == Some("False") && ctype == "PodScheduled" {
            signals.push(Signal {
                source: Some(SignalSource::Condition),
                reason: str_of(c.get("reason")),
                message: text_of(c.get("message")).unwrap_or_default(),
                count: 1,
                object: object.clone(),
                time: str_of(c.get("lastTransitionTime")),
                ..Default::default()
            });
        }
    }
    for key in ["initContainerStatuses", "containerStatuses"] {
        for cs in arr(status.and_then(|s| s.get(key))) {
            let name = str_of(cs.get("name"));
            if cs.get("state").and_then(|s| s.get("running")).is_some() {
                facts.any_running = true;
            }
            for (state_key, state) in [
                ("state", cs.get("state")),
                ("lastState", cs.get("lastState")),
            ] {
                let Some(state) = state else { continue };
                for (phase, detail) in [
                    ("waiting", state.get("waiting")),
                    ("terminated", state.get("terminated")),
                ] {
                    let Some(d) = detail else { continue };
                    let reason = str_of(d.get("reason"));
                    let message = text_of(d.get("message")).unwrap_or_default();
                    if phase == "terminated"
                        && (reason.as_deref() == Some("Completed")
                            || state_key == "lastState" && message.is_empty())
                    {
                        continue;
                    }
                    if reason.is_none() && message.is_empty() {
                        continue;
                    }
                    signals.push(Signal {
                        source: Some(SignalSource::ContainerStatus),
                        reason,
                        message,
                        count: 1,
                        object: object.clone(),
                        field_path: name.as_ref().map(|n| format!("spec.containers{{{n}}}")),
                        ..Default::default()
                    });
                }
            }
        }
    }
    if (facts.phase.as_deref() == Some("Failed") || facts.reason.is_some())
        && let Some(msg) = facts.message.clone().or_else(|| facts.reason.clone())
    {
        signals.push(Signal {
            source: Some(SignalSource::PodStatus),
            reason: facts.reason.clone(),
            message: msg,
            count: 1,
            object,
            ..Default::default()
        });
    }
    (facts, signals)
}

fn read_pod(obj: &Value, g: &mut Groups) {
    let (facts, signals) = pod_facts(obj);
    let ns = facts.namespace.clone().unwrap_or_default();
    let name = facts.name.clone().unwrap_or_default();
    let ev = g.entry("Pod", &ns, &name);
    ev.signals.extend(signals);
    ev.pod = Some(facts);
}

/// A core/v1 or events.k8s.io/v1 Event → a Signal, with the object it is about.
pub fn event_signal(e: &Value) -> (Option<(String, String, String)>, Signal) {
    // One converter for both paths: the typed reader borrows straight from the `Value`.
    match FastEvent::deserialize(e) {
        Ok(fast) => fast.into_signal(),
        // A field of an unexpected type: keep what can be read rather than drop the event.
        Err(_) => {
            let signal = Signal {
                source: Some(SignalSource::Event),
                reason: str_of(e.get("reason")),
                kind: str_of(e.get("type")),
                message: text_of(e.get("message"))
                    .or_else(|| text_of(e.get("note")))
                    .unwrap_or_default(),
                count: 1,
                ..Default::default()
            };
            (None, signal)
        }
    }
}

fn read_event(obj: &Value, g: &mut Groups) {
    let (key, signal) = event_signal(obj);
    let (kind, ns, name) = key.unwrap_or_else(|| ("Pod".into(), String::new(), String::new()));
    g.entry(&kind, &ns, &name).signals.push(signal);
}

fn read_status(obj: &Value, g: &mut Groups) {
    let kind = str_of(path(obj, &["details", "kind"]))
        .map(|k| if k == "pods" { "Pod".to_string() } else { k })
        .unwrap_or_else(|| "Pod".into());
    let name = str_of(path(obj, &["details", "name"])).unwrap_or_default();
    let signal = Signal {
        source: Some(SignalSource::Text),
        reason: str_of(obj.get("reason")),
        kind: Some("Warning".into()),
        message: text_of(obj.get("message")).unwrap_or_default(),
        count: 1,
        ..Default::default()
    };
    g.entry(&kind, "", &name).signals.push(signal);
}

fn read_owner(kind: &str, obj: &Value, g: &mut Groups) {
    let ns = str_of(path(obj, &["metadata", "namespace"])).unwrap_or_default();
    let name = str_of(path(obj, &["metadata", "name"])).unwrap_or_default();
    let mut signals = Vec::new();
    for c in arr(path(obj, &["status", "conditions"])) {
        let failed = matches!(
            str_of(c.get("type")).as_deref(),
            Some("ReplicaFailure" | "Failed" | "ReplicaSetFailure")
        );
        if failed && str_of(c.get("status")).as_deref() == Some("True") {
            signals.push(Signal {
                source: Some(SignalSource::OwnerEvent),
                reason: str_of(c.get("reason")),
                kind: Some("Warning".into()),
                message: text_of(c.get("message")).unwrap_or_default(),
                count: 1,
                object: Some(format!("{kind}/{name}")),
                ..Default::default()
            });
        }
    }
    g.entry(kind, &ns, &name).signals.extend(signals);
}

/// Node spec and status → NodeFacts.
pub fn node_facts(node: &Value) -> NodeFacts {
    let mut labels = BTreeMap::new();
    if let Some(m) = path(node, &["metadata", "labels"]).and_then(Value::as_object) {
        for (k, v) in m {
            labels.insert(
                sanitize::line(k),
                v.as_str().map(sanitize::line).unwrap_or_default(),
            );
        }
    }
    let mut allocatable = BTreeMap::new();
    if let Some(m) = path(node, &["status", "allocatable"]).and_then(Value::as_object) {
        for (k, v) in m {
            if let Some(s) = v.as_str() {
                allocatable.insert(sanitize::line(k), sanitize::line(s));
            }
        }
    }
    let taints = arr(path(node, &["spec", "taints"]))
        .iter()
        .filter_map(|t| {
            Some(Taint {
                key: str_of(t.get("key"))?,
                value: str_of(t.get("value")),
                effect: str_of(t.get("effect")).unwrap_or_default(),
            })
        })
        .collect();
    NodeFacts {
        name: str_of(path(node, &["metadata", "name"])).unwrap_or_default(),
        labels,
        taints,
        allocatable,
        unschedulable: path(node, &["spec", "unschedulable"])
            .and_then(Value::as_bool)
            .unwrap_or(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_k8s_io_and_core_events_read_the_same() {
        let core = json!({"kind":"Event","involvedObject":{"kind":"Pod","name":"p","namespace":"ml"},"reason":"FailedScheduling","type":"Warning","message":"m","count":3,"source":{"component":"default-scheduler"}});
        let new = json!({"kind":"Event","apiVersion":"events.k8s.io/v1","regarding":{"kind":"Pod","name":"p","namespace":"ml"},"reason":"FailedScheduling","type":"Warning","note":"m","series":{"count":3,"lastObservedTime":"2026-01-01T00:00:00Z"},"reportingController":"default-scheduler"});
        let (k1, s1) = event_signal(&core);
        let (k2, s2) = event_signal(&new);
        assert_eq!(k1, k2);
        assert_eq!(
            (s1.message.as_str(), s1.count, s1.component.as_deref()),
            (s2.message.as_str(), s2.count, s2.component.as_deref())
        );
    }

    #[test]
    fn a_refused_request_is_read_by_its_message_and_a_success_is_not() {
        let refused = json!({"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods \"nb\" is forbidden: exceeded quota: medium","reason":"Forbidden","details":{"name":"nb","kind":"pods"},"code":403});
        let evs = read(vec![refused], "input").unwrap();
        assert_eq!(evs.len(), 1);
        assert_eq!(evs[0].signals[0].reason.as_deref(), Some("Forbidden"));
        assert!(evs[0].signals[0].message.contains("exceeded quota"));
        let ok = json!({"kind":"Status","apiVersion":"v1","status":"Success"});
        assert!(read(vec![ok], "input").is_err());
    }

    #[test]
    fn null_lists_and_odd_types_do_not_panic() {
        let pod = json!({"kind":"Pod","metadata":{"name":"p","ownerReferences":null},"spec":{"containers":null,"tolerations":[null, 3, {"key": 5}]},"status":{"conditions":[null,{"type":"PodScheduled","status":"False","message":null}],"containerStatuses":"x"}});
        let (facts, signals) = pod_facts(&pod);
        assert_eq!(facts.name.as_deref(), Some("p"));
        assert_eq!(signals.len(), 1);
    }

    #[test]
    fn owner_failed_create_reaches_its_pod() {
        let list = json!({"kind":"List","items":[
            {"kind":"Pod","metadata":{"name":"p-1","namespace":"ml","ownerReferences":[{"kind":"ReplicaSet","name":"rs","controller":true}]},"spec":{"containers":[{"name":"c"}]},"status":{"phase":"Pending"}},
            {"kind":"Event","involvedObject":{"kind":"ReplicaSet","name":"rs","namespace":"ml"},"reason":"FailedCreate","type":"Warning","message":"Error creating: pods \"p-2\" is forbidden: exceeded quota: q, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=1, limited: requests.nvidia.com/gpu=1"}
        ]});
        let evs = read(vec![list], "x").unwrap();
        assert_eq!(evs.len(), 1, "{evs:#?}");
        assert_eq!(evs[0].signals.len(), 1);
        assert_eq!(evs[0].signals[0].source, Some(SignalSource::OwnerEvent));
    }
}
