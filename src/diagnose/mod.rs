//! Evidence → Diagnosis, with no IO: reads every signal through the rule table, groups the findings into
//! causes, drops what later state supersedes, picks the `primary` cause to fix first for the GPU (reasoning
//! about which nodes could have taken the GPU in a mixed FitError), and fills the next commands with every
//! name the evidence gives. It does not fetch or print.

mod facts;

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use serde_json::Value;

use crate::classify::{self, Finding, Reading};
use crate::evidence::{
    Evidence, Gap, Signal, SignalSource, Target, is_extended_resource, is_gpu_resource,
};
use crate::rules::{Category, Gate, Where};
use crate::sanitize;

/// The JSON schema id of DESIGN §2.
pub const SCHEMA: &str = "gpuwhy/v1";

/// The verdict for one target.
#[derive(Debug, Clone, Serialize)]
pub struct Diagnosis {
    pub schema: &'static str,
    pub target: Target,
    pub gate: Gate,
    pub primary: Category,
    pub causes: Vec<Cause>,
    pub gaps: Vec<Gap>,
}

impl Diagnosis {
    /// Whether something blocks the Pod (exit code 1).
    pub fn is_blocked(&self) -> bool {
        self.primary != Category::None
    }
}

/// One cause, with its evidence and what to do next.
#[derive(Debug, Clone, Serialize)]
pub struct Cause {
    pub category: Category,
    /// The rule id; `None` for an `unknown` cause.
    pub rule: Option<&'static str>,
    /// The rule's kebab-case name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<&'static str>,
    pub gate: Gate,
    pub summary: String,
    pub evidence: Vec<EvidenceLine>,
    pub details: BTreeMap<String, Value>,
    pub next: Vec<NextStep>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// From a FitError whose counts overlap (every failing predicate listed per node).
    #[serde(skip)]
    overlapping: bool,
    /// Whose logs the evidence was read from (`pod/NAME[/CONTAINER]`), where the input says.
    #[serde(skip)]
    writers: Vec<String>,
}

/// A line of evidence: who said what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EvidenceLine {
    pub source: SignalSource,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub text: String,
    #[serde(skip_serializing_if = "is_one")]
    pub count: u32,
}

fn is_one(n: &u32) -> bool {
    *n <= 1
}

/// A filled-in next command.
#[derive(Debug, Clone, Serialize)]
pub struct NextStep {
    pub command: String,
    #[serde(rename = "where")]
    pub place: Where,
    pub why: String,
}

struct Hit<'e> {
    signal: &'e Signal,
    finding: Finding,
}

/// The kubelet's event that it pulled an image for, created or started one of the Pod's containers: it admitted
/// the Pod and made its sandbox.
fn made_containers(s: &Signal) -> bool {
    s.source == Some(SignalSource::Event)
        && matches!(
            s.reason.as_deref(),
            Some("Pulling" | "Pulled" | "Created" | "Started")
        )
}

/// Whether a failure to create the Pod's sandbox was followed by a kubelet event that needs a sandbox (an
/// image pulled for one of its containers, a container created, started or backed off): the kubelet made it
/// since. Events with times (an EventList) are ordered by them, when both are about the same object; a
/// `kubectl describe` table (no object column) is in the order it gives them, sorted by when each was last
/// seen, when both come from the same node. A `kubectl get events` table, sorted by nothing of that kind,
/// says nothing of which came last.
fn sandbox_made_since<'a>(ev: &'a Evidence, failed: &'a Signal) -> bool {
    let is_sandbox_failure = failed.source == Some(SignalSource::Event)
        && (failed.reason.as_deref() == Some("FailedCreatePodSandBox")
            || failed.message.starts_with("Failed to create pod sandbox"));
    if !is_sandbox_failure {
        return false;
    }
    let needs_sandbox = |s: &Signal| {
        made_containers(s)
            || s.source == Some(SignalSource::Event)
                && match s.reason.as_deref() {
                    Some("BackOff") => true,
                    Some("Failed") => s.message.starts_with("Error: "),
                    _ => false,
                }
    };
    let Some(at) = ev.signals.iter().position(|s| std::ptr::eq(s, failed)) else {
        return false;
    };
    ev.signals.iter().enumerate().any(|(i, s)| {
        needs_sandbox(s)
            && match (&s.time, &failed.time) {
                // To the second (`lastTimestamp` has no fraction, `eventTime` has one; the API writes UTC);
                // within one second, the order given.
                (Some(made), Some(at_time)) => {
                    let second = |t: &'a str| t.get(..19).unwrap_or(t);
                    s.object == failed.object && (second(made), i) > (second(at_time), at)
                }
                // A table's ages: the one seen last has the smaller age; at the same age, the order given.
                _ if s.seen_ago.is_some() && failed.seen_ago.is_some() => {
                    s.object == failed.object && (failed.seen_ago, i) > (s.seen_ago, at)
                }
                _ => {
                    i > at
                        && s.object.is_none()
                        && failed.object.is_none()
                        && (s.node.is_none() || failed.node.is_none() || s.node == failed.node)
                }
            }
    })
}

/// The Pod and container whose log a line is, when a paste holds several Pods' logs (`kubectl logs --prefix`
/// names the writer of each line).
fn log_writer(s: &Signal) -> Option<&str> {
    s.component.as_deref().filter(|c| c.starts_with("pod/"))
}

/// Whether two lines' writers (`pod/NAME[/CONTAINER]`, or none) are one Pod's: its containers' logs are one run
/// (the GPU Operator's driver Pod logs its manager's wait in one container and the driver's end in another).
/// Lines without a writer are one Pod's with each other only.
fn same_pod(a: Option<&str>, b: Option<&str>) -> bool {
    let pod = |w: &str| w.split('/').nth(1).map(str::to_string);
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => pod(a) == pod(b),
        _ => false,
    }
}

/// Diagnoses one target.
pub fn diagnose(ev: &Evidence) -> Diagnosis {
    diagnose_with(ev, &mut Readings::default())
}

/// Diagnoses many targets on every core, each thread reading each distinct message once (a large EventList
/// repeats them). The blocked targets come first, in input order.
pub fn diagnose_all(evs: &[Evidence]) -> Vec<Diagnosis> {
    // Each thread keeps its own cache of readings: a reading depends on the message alone.
    let mut out = crate::par::map_chunks(evs, 64, Readings::default, |r, ev| diagnose_with(ev, r));
    // Blocked Pods first; of those, a known cause before `other` before `unknown`, and among equals a Pod whose
    // own container fails before one that only waits in its init containers, and the device plugin's or the
    // driver's Pod before the other operands that check them. In a listing, the Pods that wait usually wait on
    // the one that says why, and a GPU ticket is about the GPU stack's Pods before a sidecar.
    out.sort_by_key(|d| {
        (
            !d.is_blocked(),
            d.primary == Category::Unknown,
            d.primary == Category::Other,
            only_waits_in_init(d),
            !d.target.name.as_deref().is_some_and(is_plugin_or_driver),
        )
    });
    out
}

/// Whether a verdict rests only on its Pod waiting in its init containers (`Init:0/1`).
fn only_waits_in_init(d: &Diagnosis) -> bool {
    d.causes.first().is_some_and(|c| {
        !c.evidence.is_empty()
            && c.evidence
                .iter()
                .all(|e| e.reason.as_deref().is_some_and(waits_in_init))
    })
}

/// Whether a Pod's status says it waits in its init containers (`Init:0/1`), not that one failed.
fn waits_in_init(status: &str) -> bool {
    status
        .strip_prefix("Init:")
        .and_then(|n| n.split_once('/'))
        .is_some_and(|(done, all)| done.parse::<u8>().is_ok() && all.parse::<u8>().is_ok())
}

/// The text a signal is read by: its message, or its reason when it has none. The kubelet words every
/// `FailedPrepareDynamicResources` event `Failed to prepare dynamic resources: <error>`; a paste that put the
/// error on a line of its own (or cut the prefix) gets the prefix back, so the DRA rules read the error.
fn reading_text(signal: &Signal) -> Cow<'_, str> {
    let message = signal.message.trim();
    if message.is_empty() {
        // The kubelet's rejection on node affinity, shown only by its reason (a `get pods` STATUS): its message
        // is always the predicate's.
        if signal.reason.as_deref() == Some("NodeAffinity") {
            return Cow::Borrowed("Predicate NodeAffinity failed");
        }
        return Cow::Borrowed(signal.reason.as_deref().unwrap_or(""));
    }
    if signal.reason.as_deref() == Some("FailedPrepareDynamicResources")
        && !message
            .to_ascii_lowercase()
            .contains("prepare dynamic resources")
    {
        let message = message.trim_matches('"');
        return Cow::Owned(format!("Failed to prepare dynamic resources: {message}"));
    }
    Cow::Borrowed(&signal.message)
}

/// What each distinct message said, shared across targets.
#[derive(Default)]
pub struct Readings(HashMap<String, Reading>);

fn diagnose_with(ev: &Evidence, readings: &mut Readings) -> Diagnosis {
    let readings = &mut readings.0;
    let mut hits: Vec<Hit<'_>> = Vec::new();
    let mut unexplained: Vec<(&Signal, String)> = Vec::new();
    for signal in &ev.signals {
        if !worth_reading(signal) {
            continue;
        }
        let text = reading_text(signal);
        let text = text.as_ref();
        if !readings.contains_key(text) {
            readings.insert(text.to_string(), classify::read(text));
        }
        let reading = &readings[text];
        for f in &reading.findings {
            hits.push(Hit {
                signal,
                finding: f.clone(),
            });
        }
        if is_blocking(signal) {
            for u in &reading.unexplained {
                unexplained.push((signal, u.clone()));
            }
        }
    }

    drop_errors_before_registration(ev, &mut unexplained);

    // A containerd error cut off inside the handler's name (GW401 without a handler) says no more than the same
    // error in full beside it.
    if hits
        .iter()
        .any(|h| h.finding.rule.id == "GW401" && h.finding.captures.contains_key("handler"))
    {
        hits.retain(|h| h.finding.rule.id != "GW401" || h.finding.captures.contains_key("handler"));
    }
    // A CUDA image's banner that finds no driver beside `nvidia-smi` that ran in the container without the CUDA
    // library (GW462): the runtime did put the driver's utilities in, and the banner is GW462's missing libcuda.
    if hits.iter().any(|h| h.finding.rule.id == "GW462") {
        hits.retain(|h| h.finding.rule.id != "GW461");
    }
    // A driver installer's log that reaches its end after the line read did not stop short
    // (`rules::log_end_lines`); an end before it was an earlier run's. When the
    // paste holds several Pods' logs (`kubectl logs --prefix`), one node's finished run says nothing of
    // another's, nor of a log pasted without the prefix.
    let finished = |h: &Hit<'_>| {
        let ends = crate::rules::log_end_lines(h.finding.rule.id);
        if ends.is_empty() {
            return false;
        }
        let writer = log_writer(h.signal);
        let at = ev
            .signals
            .iter()
            .position(|s| std::ptr::eq(s, h.signal))
            .unwrap_or(0);
        // GKE's Go installer ends a failed run with its own klog error, which is what to read.
        static INSTALLER_ERROR: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(
            || {
                regex::Regex::new(r"(?m)^E\d{4} [\d:.]+\s+\d+ (?:install|installer|cos|utils|signature|cache)\.go:\d+\]")
                .expect("installer error regex")
            },
        );
        ev.signals[at..].iter().any(|s| {
            (ends.iter().any(|e| s.message.contains(e))
                || (h.finding.rule.id == "GW180" && INSTALLER_ERROR.is_match(&s.message)))
                && same_pod(log_writer(s), writer)
        })
    };
    hits.retain(|h| !finished(h));
    // A sandbox the kubelet failed to create and then made (a container image pulled, a container created or
    // started after the failure): what stopped it then (the toolkit not yet configuring containerd's `nvidia`
    // runtime) no longer stops the Pod. A failure after the last such event stands.
    hits.retain(|h| !sandbox_made_since(ev, h.signal));
    // A kubelet log that stops at its call for a plugin's preferred devices says nothing against a Pod whose
    // containers the kubelet went on to pull, create or start (a `grep` of the log keeps only that line).
    let unanswered = |h: &Hit<'_>| h.finding.rule.id == "GW313";
    if hits.iter().any(unanswered)
        && (ev.signals.iter().any(made_containers)
            || ev.pod.as_ref().is_some_and(|p| p.any_running))
    {
        hits.retain(|h| !unanswered(h));
    }

    // Ollama searches for each vendor's library in turn and logs an empty result for every one it does not
    // find: an empty search means the NVIDIA libraries are missing only when it searched for them and found no
    // GPU at all (GW420).
    let ollama_found_none = |h: &Hit<'_>| {
        h.finding.rule.id == "GW420"
            && h.signal
                .message
                .to_ascii_lowercase()
                .contains("discovered gpu libraries")
    };
    if hits.iter().any(ollama_found_none) {
        let said = |w: &str| {
            ev.signals
                .iter()
                .any(|s| s.message.to_ascii_lowercase().contains(w))
        };
        if said("inference compute") || !(said("libcuda.so") || said("libnvidia-ml.so")) {
            hits.retain(|h| !ollama_found_none(h));
        }
    }

    let pod = ev.pod.as_ref();
    let done = pod.is_some_and(|p| {
        p.phase.as_deref() == Some("Succeeded")
            || (p.phase.as_deref() == Some("Running") && p.ready.as_deref() == Some("True"))
    });
    let mut gaps = ev.gaps.clone();
    if done {
        return Diagnosis {
            schema: SCHEMA,
            target: ev.target.clone(),
            gate: Gate::None,
            primary: Category::None,
            causes: vec![],
            gaps,
        };
    }

    let passed_scheduling = pod
        .is_some_and(|p| p.node_name.is_some() || p.scheduled.as_deref() == Some("True"))
        || ev.signals.iter().any(Signal::is_placement)
        // A workload's own report (its error, its OOM, its node's licence) may be another Pod's log: it does not
        // say this one was scheduled.
        || hits.iter().any(|h| {
            matches!(h.finding.rule.gate, Gate::DeviceAdmission | Gate::Runtime)
                && !crate::rules::is_workload_report(h.finding.rule.id)
        });
    // The reporter's words: they say whose the GPUs are, or that the node does not advertise them.
    let said = |id: &str| hits.iter().any(|h| h.finding.rule.id == id);
    let (reported_busy, reported_unadvertised) = (said("GW132"), said("GW131") || said("GW137"));
    let has_fit = hits
        .iter()
        .any(|h| h.finding.rule.gate == Gate::Scheduling && !is_autoscaler(h.signal));
    hits.retain(|h| {
        if h.finding.rule.gate == Gate::Scheduling
            && passed_scheduling
            && !(crate::rules::reads_component_log(h.finding.rule.id)
                && matches!(
                    h.signal.source,
                    Some(SignalSource::Log | SignalSource::Text) | None
                ))
        {
            return false;
        }
        // The autoscaler's NotTriggerScaleUp repeats node-group reasons; the scheduler's own text decides.
        !(is_autoscaler(h.signal) && has_fit)
    });

    // The reporter's words that the Pods run do not outweigh a Pod shown waiting.
    if shown_waiting(ev) {
        hits.retain(|h| {
            !(h.finding.rule.category == Category::None
                && crate::rules::is_hearsay(h.finding.rule.id))
        });
    }
    // A node block with no GPU (a control plane) beside a node that lists one says nothing of the plugin.
    hits.retain(|h| h.finding.rule.id != "GW136" || !lists_a_gpu(&h.signal.message));
    // A program's own error is the log of a container that ran: not of a Pod shown Pending and never placed
    // (the paste's log is another Pod's, as a head's beside its Pending worker).
    let never_placed = ev
        .pod
        .as_ref()
        .is_some_and(|p| p.phase.as_deref() == Some("Pending") && p.node_name.is_none())
        || ev.signals.iter().any(|s| {
            s.source == Some(SignalSource::PodStatus) && s.reason.as_deref() == Some("Pending")
        });
    if never_placed && !passed_scheduling {
        for h in hits
            .iter()
            .filter(|h| crate::rules::is_workload_report(h.finding.rule.id))
        {
            unexplained.push((h.signal, h.signal.message.clone()));
        }
        hits.retain(|h| !crate::rules::is_workload_report(h.finding.rule.id));
    }
    // Volcano refuses a task on some nodes, then binds it to another: its predicates did their filtering.
    if volcano_binds_refused_task(&ev.signals) {
        hits.retain(|h| h.finding.rule.id != "GW168");
    }
    // HAMi's own account of an out-of-memory (GW602: the Pod's share is used up) explains CUDA's (GW529).
    if hits.iter().any(|h| h.finding.rule.id == "GW602") {
        hits.retain(|h| h.finding.rule.id != "GW529");
    }
    let ctx = Context::new(ev);
    let mut causes = group(&hits, &ctx);
    // When live facts say more than the message, the facts decide (DESIGN §2).
    let forced = facts::scheduling(ev)
        .filter(|_| !passed_scheduling)
        .map(|v| apply_verdict(v, &mut causes, &ctx));
    let forced = forced.or_else(|| plugin_daemonset(ev, &mut causes, &ctx));
    if let Some(rc) = &ev.cluster.runtime_class {
        for c in causes
            .iter_mut()
            .filter(|c| c.category == Category::HandlerMissing)
        {
            c.details
                .insert("runtimeclass".into(), Value::from(rc.name.clone()));
            if let Some(h) = &rc.handler {
                c.evidence.push(EvidenceLine {
                    source: SignalSource::Runtimeclass,
                    reason: None,
                    text: format!("RuntimeClass {} has handler {h}", rc.name),
                    count: 1,
                });
            }
        }
    }
    if let Some(p) = pod.filter(|p| p.node_name.is_none()) {
        let scheduler = p.scheduler_name.as_deref().unwrap_or("default-scheduler");
        let heard = ev.signals.iter().any(|s| {
            matches!(
                s.source,
                Some(SignalSource::Condition | SignalSource::Event)
            )
        });
        if scheduler != "default-scheduler" && !heard {
            gaps.push(Gap {
                check: "scheduler".into(),
                reason: format!("the pod asks for scheduler {scheduler:?}, which has written no event or condition for it: is that scheduler running?"),
            });
        }
        if !p.scheduling_gates.is_empty() {
            gaps.push(Gap {
                check: "scheduling gates".into(),
                reason: format!("held by {}", p.scheduling_gates.join(", ")),
            });
        }
    }
    // Findings that block nothing (a harmless warning) do not say that nothing blocks when another line
    // complains in words no rule reads: that line is what the input shows, and they come after it.
    let mut harmless = Vec::new();
    let only_noise = !causes.is_empty()
        && causes
            .iter()
            .all(|c| c.rule.is_some_and(crate::rules::is_noise));
    if only_noise {
        // The component that printed the harmless line says more of the same (Fabric Manager's service
        // failing after it found nothing to do): that is the harmless line's, not another failure.
        // Each complaining line of the signal must be the component's (a line run on after it is not).
        let covered = |line: &str| {
            causes.iter().any(|c| {
                c.rule
                    .is_some_and(|id| crate::rules::is_noise_line(id, line))
            })
        };
        // A line a wrap cut from the component's line is the component's too; a new record (a timestamp, a
        // klog or logfmt prefix, an exception's name) is not.
        static NEW_RECORD: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
            regex::Regex::new(
                r"^\s*(?:\d|[A-Z][a-z]{2} +\d|[IWEF]\d{4}\b|\[|\{|level=|time=|\w*(?:Error|Exception|ERROR|FATAL)\b:?|NVRM:|nvidia[\w-]*:|insmod:|modprobe:|panic:|goroutine \d+ )",
            )
            .expect("new record regex")
        });
        unexplained.retain(|(s, _)| {
            let mut theirs = false;
            !s.message.lines().all(|l| {
                theirs = covered(l) || (theirs && !NEW_RECORD.is_match(l));
                theirs || !looks_like_error(l)
            })
        });
    }
    if only_noise
        && unexplained.iter().any(|(s, _)| {
            looks_like_error(&s.message)
                && !(passed_scheduling && gate_of_signal(s) == Gate::Scheduling)
        })
    {
        harmless = std::mem::take(&mut causes);
    }
    if causes.is_empty() {
        let unexplained: Vec<_> = unexplained
            .into_iter()
            .filter(|(s, _)| !(passed_scheduling && gate_of_signal(s) == Gate::Scheduling))
            .collect();
        if unexplained.is_empty() {
            if let Some(d) = stalled_without_a_word(ev, &ctx, &gaps) {
                return stack_pod_down(d, ev, &ctx);
            }
            // An input with nothing to read (an empty Events table, a paste cut off in its header) says as
            // little as prose does: not that nothing blocks.
            if ev.signals.is_empty() && ev.pod.is_none() {
                gaps.push(Gap {
                    check: "input".into(),
                    reason: "no Pod, event or message was found in the input".into(),
                });
            }
            if says_nothing_of_the_pod(ev) {
                let d = unknown(
                    ev,
                    Gate::Unknown,
                    "the input shows neither an error nor the pod's state, so it does not say what blocks the pod".into(),
                    vec![],
                    vec![ctx.step(
                        "kubectl describe pod {pod} -n {namespace}",
                        Where::Cluster,
                        "read the Pod's status, events and conditions",
                    )],
                    gaps,
                );
                return log_unexplained(d, ev, &ctx);
            } else if ev.pod.as_ref().is_some_and(|p| p.name.is_some())
                && ev.target.name.as_deref().is_some_and(is_gpu_stack)
            {
                // A described or dumped Pod of the GPU stack, not a row of a listing beside the Pods it serves.
                return unknown(
                    ev,
                    Gate::Unknown,
                    "this Pod of the GPU stack runs; the input does not show the GPU Pod that does not start, or what stops it".into(),
                    vec![],
                    vec![ctx.step(
                        "kubectl get pods -A -o wide | grep -v -E 'Running|Completed'",
                        Where::Cluster,
                        "find the Pods that do not run, then describe the GPU Pod among them",
                    )],
                    gaps,
                );
            }
            return Diagnosis {
                schema: SCHEMA,
                target: ev.target.clone(),
                gate: Gate::None,
                primary: Category::None,
                causes: vec![],
                gaps,
            };
        }
        let gate = unexplained
            .iter()
            .map(|(s, _)| gate_of_signal(s))
            .max_by_key(|g| gate_rank(*g))
            .unwrap_or(Gate::Unknown);
        let mut evidence = Vec::new();
        for (s, _) in &unexplained {
            let _ = push_evidence(&mut evidence, s);
        }
        let next = if gate == Gate::Admission && ctx.vars.contains_key("owner") {
            ctx.step(
                "kubectl describe {owner} -n {namespace}",
                Where::Cluster,
                "the owner's events say why it cannot create Pods",
            )
        } else if ev.target.kind == "Node" {
            ctx.step(
                "kubectl describe node {node}",
                Where::Cluster,
                "read the node's conditions, taints and events",
            )
        } else {
            ctx.step(
                "kubectl describe pod {pod} -n {namespace}",
                Where::Cluster,
                "read every event and condition",
            )
        };
        let d = unknown(
            ev,
            gate,
            "something blocks the pod but no rule explains the message".into(),
            evidence,
            vec![next],
            gaps,
        );
        let mut d = log_unexplained(stack_pod_down(d, ev, &ctx), ev, &ctx);
        d.causes.extend(harmless);
        return d;
    }

    let names = [
        ev.target.name.as_deref(),
        pod.and_then(|p| p.owner.as_deref()),
    ];
    // The containers' names say whose Pod it is when a paste lost the Pod's name.
    let containers = pod.map(|p| p.containers.join(" ")).unwrap_or_default();
    let whose = format!("{} {containers}", names.map(|n| n.unwrap_or("")).join(" "));
    let looping = looping_container(ev);
    for c in causes.iter_mut() {
        whose_component_failure(c, &whose, looping, reported_unadvertised, &ctx);
        whose_shortfall_at_admission(c, reported_busy);
        whose_denial(c);
        whose_topology_exclusions(c);
        whose_libraries(c, ev);
        whose_nvml_failure(c, ev);
        whose_driver_stop(c, ev);
        whose_cuda_check(c, ev, &ctx);
        whose_volcano_shortfall(c, ev);
        whose_scale_up(c, &ctx);
    }
    let primary = forced.unwrap_or_else(|| pick_primary(&causes, &ctx));
    let first = causes.remove(primary);
    causes.insert(0, first);
    let gate = causes[0].gate;
    let primary = causes[0].category;
    gaps.extend(unchecked(&causes[0], ev));
    Diagnosis {
        schema: SCHEMA,
        target: ev.target.clone(),
        gate,
        primary,
        causes,
        gaps,
    }
}

/// A device-plugin DaemonSet that wants no Pod (`DESIRED 0`) means no node runs the plugin, so no node
/// advertises the GPU: its node selector or affinity matches no node. One whose Pods are not all ready
/// (`READY 0/2`) leaves those nodes without the GPU. Both are `device-plugin`: the advertisement is missing
/// (the GPU Pod's own selector is not at fault, so it is not `node-affinity`). Either is what to fix
/// unless something other than a GPU shortfall blocks the Pod; returns its index when it is primary.
fn plugin_daemonset(ev: &Evidence, causes: &mut Vec<Cause>, ctx: &Context) -> Option<usize> {
    // The GPU Operator starts a node's device plugin only once its driver is ready: when the driver's
    // DaemonSet is not ready either, it is the one to fix.
    let is_driver = |s: &Signal| {
        s.object
            .as_deref()
            .and_then(|o| o.strip_prefix("daemonset/"))
            .is_some_and(crate::evidence::is_driver_daemonset)
    };
    let rows = || {
        ev.signals
            .iter()
            .filter(|s| s.source == Some(SignalSource::Daemonset))
    };
    let row = rows().find(|s| is_driver(s)).or_else(|| rows().next())?;
    let name = row
        .object
        .as_deref()
        .and_then(|o| o.strip_prefix("daemonset/"))
        .unwrap_or("<daemonset>");
    let ns = row
        .namespace
        .as_deref()
        .map_or("<namespace>".to_string(), shell_word);
    let quoted = shell_word(name);
    let mut details = BTreeMap::new();
    details.insert("daemonset".to_string(), Value::from(name));
    let idle = row.reason.as_deref() == Some("DESIRED 0");
    let (summary, next) = if idle {
        (
            format!(
                "the device-plugin DaemonSet {name} wants no Pod (DESIRED 0): its node selector or affinity matches no node, so no node advertises the GPU"
            ),
            vec![
                NextStep {
                    command: sanitize::line(&format!(
                        "kubectl get ds {quoted} -n {ns} -o jsonpath='{{.spec.template.spec.nodeSelector}} {{.spec.template.spec.affinity.nodeAffinity}}'"
                    )),
                    place: Where::Cluster,
                    why: "see which node labels the device plugin requires".into(),
                },
                ctx.step(
                    "kubectl get nodes -L nvidia.com/gpu.present,feature.node.kubernetes.io/pci-10de.present",
                    Where::Cluster,
                    "see whether the GPU nodes carry those labels (GPU Feature Discovery or NFD sets them)",
                ),
            ],
        )
    } else {
        let counts = row.reason.as_deref().unwrap_or("READY").to_string();
        let summary = if crate::evidence::is_driver_daemonset(name) {
            format!(
                "the GPU driver DaemonSet {name} is not ready ({counts}): nodes whose driver Pod is not running have no driver, so their device plugin never starts and they do not advertise the GPU"
            )
        } else {
            format!(
                "the device-plugin DaemonSet {name} is not ready ({counts}): nodes whose plugin Pod is not running do not advertise the GPU"
            )
        };
        (
            summary,
            vec![
                NextStep {
                    command: sanitize::line(&format!("kubectl describe ds {quoted} -n {ns}")),
                    place: Where::Cluster,
                    why: "see why the plugin Pods are not ready".into(),
                },
                NextStep {
                    command: sanitize::line(&format!(
                        "kubectl logs -n {ns} ds/{quoted} --all-containers --tail=100"
                    )),
                    place: Where::Cluster,
                    why: "read what its Pods said when they started".into(),
                },
            ],
        )
    };
    causes.push(Cause {
        category: Category::DevicePlugin,
        rule: None,
        name: None,
        gate: Gate::Scheduling,
        summary,
        evidence: vec![EvidenceLine {
            source: SignalSource::Daemonset,
            reason: row.reason.clone(),
            text: row.message.clone(),
            count: 1,
        }],
        details,
        next,
        fix: None,
        overlapping: false,
        writers: Vec::new(),
    });
    let idx = causes.len() - 1;
    let only_shortfall = causes[..idx].iter().all(|c| {
        matches!(c.rule, Some("GW105" | "GW119" | "GW303")) || c.category == Category::Unknown
    });
    only_shortfall.then_some(idx)
}

/// Pasted prose and command output with no Pod in it: no Pod object or describe block (a node's is not the
/// Pod's), no event, condition or container state, no `get pods` row. Such a paste does not show that nothing
/// blocks the Pod; it shows nothing of the Pod at all.
///
/// Words that a Pod got past its gates (its events, or a container's own output: a test's verdict, a
/// logfmt info line, the GPUs `nvidia-smi -L` lists under the `kubectl exec` that ran it) do say something of
/// it.
fn says_nothing_of_the_pod(ev: &Evidence) -> bool {
    static PROGRESS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r#"(?i)\bSuccessfully assigned \S+ to |\b(?:Started|Created) container\b|^Test PASSED$|\bstatus: "?True"?\s+type: Ready\b|^time=\S+ level=info\b|\bRegistered device plugin\b[^\n]{0,120}?\bwith Kubelet\b"#,
        )
        .expect("progress regex")
    });
    // What the GPU stack says of itself when it is up: the operator's info log of a DaemonSet with every Pod
    // available or a Pod running, `nvidia-smi`'s table, the driver installer's last line, DCGM's start, Volcano
    // binding a task; and the autoscaler adding a node for the Pod. They speak for the input only where nothing
    // in it says otherwise (the reporter's `Pending`, a `notReady` state, a GPU at `ERR!`).
    static HEALTH: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r#"^\{"level":"info",[^\n]*"(?:NumberUnavailable":0\b|Phase":"Running")|\bNVIDIA-SMI \d[\d.]* +Driver Version: \d|^Installation of the NVIDIA [^\n]* is now complete\.|\bDCGM successfully initialized\b|\bBinding Task <[^>\n]+> to node <|\bClusterPolicy is ready\b|\bpod triggered scale-up: \[|\bcan be scheduled on upcoming node\b"#,
        )
        .expect("health regex")
    });
    static UNHEALTHY: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r#"(?i)\bnotready\b|"NumberUnavailable":[1-9]|\bERR!|(?:^|\s)0/[1-9]\d*\s"#,
        )
        .expect("unhealthy regex")
    });
    let lines = || {
        ev.signals
            .iter()
            .filter(|s| {
                matches!(
                    s.source,
                    Some(SignalSource::Text | SignalSource::Log) | None
                )
            })
            .flat_map(|s| s.message.lines())
    };
    let contradicted = lines().any(|l| speaks_of_waiting(l) || UNHEALTHY.is_match(l));
    let healthy =
        |l: &str| !contradicted && (HEALTH.is_match(l.trim()) || gpu_stack_reports_ready(l));
    // Describe output or a manifest cut off before the Pod's status shows its name and spec, not its state.
    let stateless = |p: &crate::evidence::PodFacts| {
        // A node name says the Pod was placed, not whether it runs.
        p.phase.is_none() && p.ready.is_none() && !p.any_running
    };
    // A listing's rows of other Pods that run say how those Pods are, not this one.
    let target = ev.target.name.as_deref().filter(|_| ev.pod.is_some());
    let another_pod_runs = |s: &Signal| {
        s.source == Some(SignalSource::PodStatus)
            && s.kind.as_deref() == Some("Normal")
            && matches!(
                s.reason.as_deref(),
                Some("Running" | "Completed" | "Succeeded")
            )
            && target.is_some_and(|t| {
                s.object
                    .as_deref()
                    .and_then(|o| o.split_once('/'))
                    .is_some_and(|(_, name)| name != t)
            })
    };
    if lists_gpus_through_exec(
        ev.signals.iter().flat_map(|s| s.message.lines()),
        ev.target.name.as_deref(),
    ) {
        return false;
    }
    (ev.pod.as_ref().is_none_or(stateless) || ev.target.kind == "Node")
        && ev.signals.iter().all(|s| {
            another_pod_runs(s)
                || matches!(
                    s.source,
                    Some(SignalSource::Text | SignalSource::Log) | None
                ) && !s
                    .message
                    .lines()
                    .any(|l| PROGRESS.is_match(l.trim()) || healthy(l))
                    // A YAML condition spans two lines; a ticket may wrap a log's line.
                    && !PROGRESS.is_match(&s.message)
                    && !healthy(&s.message.replace('\n', ""))
        })
}

/// Whether `line` holds a row that says something is ready: a `kubectl get daemonset` row of the GPU stack
/// (`[NAMESPACE] NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE …`) whose counts are all the same and not 0, the
/// GPU Operator's ClusterPolicy (`NAME STATUS AGE`) whose status is `ready`, or a `kubectl get pods` row of a
/// Pod whose containers are all ready and run (a listing run together on one line, which is not read as rows).
fn gpu_stack_reports_ready(line: &str) -> bool {
    let cols: Vec<&str> = line.split_whitespace().collect();
    cols.windows(6).any(|w| {
        is_gpu_stack(w[0])
            && w[1] != "0"
            && w[1].parse::<u32>().is_ok()
            && w[2..].iter().all(|c| *c == w[1])
    }) || cols.windows(2).any(|w| {
        let name = w[0].to_ascii_lowercase();
        (name.contains("cluster-policy") || name.contains("clusterpolicy")) && w[1] == "ready"
    }) || {
        // `kubectl get pods` rows run together: `READY n/n` and `STATUS Running`, and no row short of ready.
        fn ready(c: &str) -> Option<(&str, &str)> {
            c.split_once('/')
                .filter(|(a, b)| a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok())
        }
        cols.windows(2)
            .any(|w| w[1] == "Running" && ready(w[0]).is_some_and(|(a, b)| a == b && a != "0"))
            && cols.windows(2).all(|w| {
                ready(w[0]).is_none_or(|(a, b)| a == b && matches!(w[1], "Running" | "Completed"))
            })
    }
}

/// Whether a line speaks of a failure or of a Pod that waits (`Pending`, `stuck`, `doesn't start`).
pub(crate) fn speaks_of_waiting(line: &str) -> bool {
    static WAITING: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?i)\b(?:pending|containercreating|podinitializing|crashloopbackoff|init:|imagepullbackoff|errimagepull|stuck|crash\w*|oomkilled|evicted|unschedulable|not ready|waiting|won't|never|only one of|(?:does|do|did|can)(?:n't| not) (?:start|run|get)|not (?:start|run|get|scheduled))\b")
            .expect("waiting regex")
    });
    WAITING.is_match(line)
}

/// Whether the input shows `nvidia-smi -L` run in the Pod through `kubectl exec`, its GPU (and MIG) rows right
/// under the command (kubectl's `Defaulted container` notice and blank lines aside) or glued to the command's
/// line: the container runs and sees its GPUs. The exec must name the target Pod, when the input names one, and
/// not a Pod that kubectl picks from a DaemonSet or another workload (`ds/…`), nor a Pod of the GPU stack; and no
/// other line may speak of a failure or a waiting Pod (an error, `Pending`, `stuck`): the reporter's words around
/// the listing (`Here is what I see:`) are no such word.
fn lists_gpus_through_exec<'a>(lines: impl Iterator<Item = &'a str>, target: Option<&str>) -> bool {
    static GPU_ROW: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\bGPU \d+: [^()]+ \(UUID: GPU-[0-9a-f-]+\)").expect("GPU row regex")
    });
    static OUTPUT: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"^(?:GPU \d+: [^()]+ \(UUID: GPU-[0-9a-f-]+\)|MIG \S+ +Device +\d+: \(UUID: MIG-[0-9a-f-]+\)|Defaulted container "[^"]+" out of: .*)$"#)
            .expect("exec output regex")
    });
    let lines: Vec<&str> = lines.map(str::trim).filter(|l| !l.is_empty()).collect();
    // The first exec of the Pod in question (an exec of a DaemonSet's Pod may come before it).
    let Some((at, run)) = lines.iter().enumerate().find_map(|(i, l)| {
        let exec = crate::shell::exec_command(l)?;
        let (_, run) = exec.command.split_once("nvidia-smi").filter(|(_, run)| {
            !run.starts_with(|c: char| c.is_alphanumeric() || c == '-' || c == '_')
        })?;
        let pod = exec.pod?;
        (!is_gpu_stack(&pod) && target.is_none_or(|t| t == pod)).then(|| (i, run.to_string()))
    }) else {
        return false;
    };
    let output = lines[at + 1..]
        .iter()
        .take_while(|l| OUTPUT.is_match(l))
        .count();
    let rows = GPU_ROW.is_match(&run)
        || lines[at + 1..at + 1 + output]
            .iter()
            .any(|l| GPU_ROW.is_match(l));
    let mut others = lines[..at].iter().chain(&lines[at + 1 + output..]);
    rows && others.all(|l| !looks_like_error(l) && !speaks_of_waiting(l))
}

/// Whether a pasted node listing names a GPU resource with a count above zero (`nvidia.com/gpu:  4`).
fn lists_a_gpu(text: &str) -> bool {
    static LISTED: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"(?m)^\s*(?P<resource>[a-z0-9.-]+/[\w.-]+):\s+"?0*[1-9]"#)
            .expect("listed resource regex")
    });
    LISTED
        .captures_iter(text)
        .any(|c| is_gpu_resource(&c["resource"]))
}

/// A Pod status that says it waits to start.
fn is_waiting_status(r: &str) -> bool {
    matches!(r, "Pending" | "ContainerCreating" | "PodInitializing") || r.starts_with("Init:")
}

/// The input shows a Pod waiting to start: its phase, or a listing's STATUS.
fn shown_waiting(ev: &Evidence) -> bool {
    ev.pod
        .as_ref()
        .is_some_and(|p| p.phase.as_deref() == Some("Pending"))
        || ev
            .signals
            .iter()
            .filter_map(|s| s.reason.as_deref())
            .any(is_waiting_status)
}

/// A Pod left Pending or ContainerCreating (a `kubectl get pods` row, or describe output whose events are gone)
/// with nothing else said about it: something blocks it and the input does not say what (`unknown`), not
/// "nothing blocks".
fn stalled_without_a_word(ev: &Evidence, ctx: &Context, gaps: &[Gap]) -> Option<Diagnosis> {
    // The scheduler's `Scheduled` says where the Pod went, not that the kubelet started it: a running Pod's
    // events go on with the kubelet's Pulling, Created and Started, and one event ages out no sooner than another.
    let placed_by = ev.signals.iter().find(|s| s.is_placement());
    // What the scheduler and the autoscaler said before they placed it is not the kubelet's word.
    let before_placing = |s: &Signal| {
        placed_by.is_some()
            && (matches!(
                s.reason.as_deref(),
                Some("FailedScheduling" | "TriggeredScaleUp" | "NotTriggerScaleUp" | "Nominated")
            ) || matches!(
                s.component.as_deref(),
                Some("default-scheduler" | "cluster-autoscaler")
            ))
    };
    // Shell prompts and prose around the listing say nothing; an event, a condition with a message or an
    // error line does.
    let said = |s: &Signal| {
        !s.is_placement()
            && !before_placing(s)
            && match s.source {
                Some(SignalSource::PodStatus) => !s.message.is_empty(),
                Some(SignalSource::Text | SignalSource::Log) | None => looks_like_error(&s.message),
                Some(SignalSource::ContainerStatus) => {
                    !s.message.is_empty()
                        || !matches!(
                            s.reason.as_deref(),
                            Some("ContainerCreating" | "PodInitializing")
                        )
                }
                _ => true,
            }
    };
    if ev.signals.iter().any(said) {
        return None;
    }
    let stalled = |r: &str| is_waiting_status(r);
    let from_pod = ev.pod.as_ref().and_then(|p| {
        // The kubelet rejected the Pod or its containers failed for good; the input shows neither why.
        if p.phase.as_deref() == Some("Failed") {
            return Some("Failed");
        }
        // Describe output cut to its Conditions: placed, but its containers are not ready. A paste that shows
        // the containers shows their state (a completed one is not ready either), and a node's conditions are
        // not a Pod's.
        if ev.target.kind == "Pod"
            && p.phase.is_none()
            && p.ready.as_deref() == Some("False")
            && !p.any_running
            && p.containers.is_empty()
        {
            return Some("not ready");
        }
        let pending = p.phase.as_deref() == Some("Pending");
        match (pending, &p.node_name) {
            (true, None) if p.scheduled.as_deref() != Some("True") => Some("Pending"),
            (true, Some(_)) => Some("ContainerCreating"),
            _ => None,
        }
    });
    let status = ev
        .signals
        .iter()
        .filter_map(|s| s.reason.as_deref())
        .find(|r| stalled(r))
        .or(from_pod)
        .filter(|st| !(placed_by.is_some() && *st == "Pending"))
        .or(placed_by.map(|_| "placed"))?;
    let gate = match status {
        "Pending" => Gate::Scheduling,
        // Before its containers ran (the kubelet's admission) or after: the input does not say.
        "Failed" | "placed" => Gate::Unknown,
        _ => Gate::Runtime,
    };
    if let Some(scheduled) = placed_by.filter(|_| status == "placed") {
        // Pasted event lines (JupyterHub's spawn log, a chat paste) that go on past it say it started, also in
        // the same block of text as the `Successfully assigned` line.
        static PROGRESS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
            regex::Regex::new(r"\b(?:Started|Created) container\b|\bPull(?:ing|ed) image\b|\bContainer image \S+ already present|\bAttachVolume\.Attach succeeded|\bSuccessfully pulled image\b")
                .expect("kubelet progress regex")
        });
        // The Pod's phase or a listing's STATUS past waiting (Running, Completed): only the kubelet sets those.
        let target = ev.target.name.as_deref();
        let this_pod = |s: &Signal| {
            s.object
                .as_deref()
                .and_then(|o| o.split_once('/'))
                .is_none_or(|(_, name)| target.is_none_or(|t| t == name))
        };
        let kubelet_ran = ev.pod.as_ref().is_some_and(|p| {
            p.any_running || matches!(p.phase.as_deref(), Some("Running" | "Succeeded"))
        }) || ev.signals.iter().any(|s| {
            matches!(
                s.source,
                Some(SignalSource::PodStatus | SignalSource::ContainerStatus)
            ) && this_pod(s)
                && s.reason.as_deref().is_some_and(|r| !is_waiting_status(r))
        });
        if kubelet_ran || ev.signals.iter().any(|s| PROGRESS.is_match(&s.message)) {
            return None;
        }
        let mut ctx = ctx.clone();
        if let Some(placed) = crate::evidence::placement(&scheduled.message) {
            for (key, value) in [
                ("namespace", placed.namespace),
                ("pod", Some(placed.pod)),
                ("node", placed.node),
            ] {
                if let Some(value) = value {
                    ctx.vars.entry(key).or_insert_with(|| value.to_string());
                }
            }
        }
        let mut evidence = Vec::new();
        let _ = push_evidence(&mut evidence, scheduled);
        let next = vec![
            ctx.step(
                "journalctl -u kubelet --since -1h | grep {pod}",
                Where::Node,
                "the kubelet's own log says where it stopped: admitting the Pod (the device plugin's Allocate), mounting its volumes or creating its sandbox",
            ),
            ctx.step(
                "kubectl get pods -A -o wide --field-selector spec.nodeName={node}",
                Where::Cluster,
                "the device plugin's and the runtime's Pods on that node: are they running?",
            ),
            ctx.step(
                "kubectl describe node {node}",
                Where::Cluster,
                "whether the node is Ready and its kubelet posts status",
            ),
        ];
        let on = ctx
            .vars
            .get("node")
            .map_or_else(|| "a node".to_string(), |n| format!("node {n}"));
        let summary = format!(
            "the pod was placed on {on} and nothing since says the kubelet admitted it or started a container"
        );
        return Some(unknown(ev, gate, summary, evidence, next, gaps.to_vec()));
    }
    let evidence = vec![if status == "not ready" {
        EvidenceLine {
            source: SignalSource::Condition,
            reason: Some("Ready".into()),
            text: "False".into(),
            count: 1,
        }
    } else {
        EvidenceLine {
            source: SignalSource::PodStatus,
            reason: Some(status.to_string()),
            text: format!("STATUS {status}"),
            count: 1,
        }
    }];
    let next = vec![
        ctx.step(
            "kubectl describe pod {pod} -n {namespace}",
            Where::Cluster,
            "read the Pod's events and conditions",
        ),
        ctx.step(
            "kubectl get events -n {namespace} --field-selector involvedObject.name={pod}",
            Where::Cluster,
            "list every event about the Pod",
        ),
    ];
    let summary = format!("the pod is {status} and the input does not say why");
    Some(unknown(ev, gate, summary, evidence, next, gaps.to_vec()))
}

/// Host directories that exist only once the NVIDIA driver is installed.
const DRIVER_HOST_DIRS: [&str; 2] = ["/home/kubernetes/bin/nvidia", "/run/nvidia/driver"];

/// Whether text names a host directory that only the NVIDIA driver creates.
fn names_driver_dir(text: &str) -> bool {
    DRIVER_HOST_DIRS.iter().any(|d| text.contains(d))
}

/// GPU-stack components that neither advertise GPUs nor install the driver.
const OTHER_GPU_COMPONENTS: [&str; 6] = [
    "container-toolkit",
    "dcgm",
    "gpu-feature-discovery",
    "mig-manager",
    "gpu-operator",
    // Intel's device plugins operator (its controller manager deploys the GPU plugin).
    "inteldeviceplugins",
];

/// Whether crash lines name a Pod or container (`my-server-7d9c 0/1 CrashLoopBackOff`), not only a state
/// (`Status: CrashLoopBackOff`): a word with a hyphen or digit besides the state's own words.
fn names_a_pod(crashing: &str) -> bool {
    crashing
        .split(|c: char| c.is_whitespace() || c == ':')
        .filter(|w| !w.is_empty() && !["crashloopbackoff", "back-off", "init"].contains(w))
        .any(|w| w.contains('-') || w.chars().any(|c| c.is_ascii_digit()))
}

/// Whether lowercased text names a GPU-stack component (a validator included).
fn names_gpu_component(text: &str) -> bool {
    PLUGIN_OR_DRIVER
        .iter()
        .chain(&OTHER_GPU_COMPONENTS)
        .any(|w| text.contains(w))
        || names_validator(text)
}

/// Names of the Pods (and their owners) that a node's GPU waits on: the device plugin that advertises it,
/// the driver the plugin needs to find it, and a DRA driver's kubelet plugin. A validator's name can hold the
/// component it validates (`nvidia-device-plugin-validator`), so `is_plugin_or_driver` leaves validators out.
const PLUGIN_OR_DRIVER: [&str; 10] = [
    "device-plugin",
    "amdgpu-dp",
    "intel-gpu-plugin",
    "nvidia-driver",
    "driver-installer",
    "kubelet-plugin",
    "kubeletplugin",
    // The driver Pod's other containers: GPUDirect RDMA's and Storage's modules, and GDRCopy's.
    "nvidia-peermem",
    "nvidia-fs-ctr",
    "nvidia-gdrcopy",
];

/// Whether lowercased text names a GPU (or another accelerator's: Hygon's DCU, Cambricon's MLU, Ascend's NPU,
/// Gaudi, Neuron…) device plugin or driver, and not another device's plugin such as SR-IOV's.
fn names_plugin_or_driver(text: &str) -> bool {
    PLUGIN_OR_DRIVER.iter().any(|w| text.contains(w))
        && [
            "nvidia", "amdgpu", "amd-gpu", "gpu", "neuron", "dcu", "mlu", "npu", "ascend",
            "habana", "gaudi", "iluvatar", "metax", "mthreads", "enflame",
        ]
        .iter()
        .any(|v| text.contains(v))
}

/// Whether a Pod's name or owner is a GPU device plugin's or driver's (not a validator's, and not another
/// device's plugin such as SR-IOV's).
fn is_plugin_or_driver(names: &str) -> bool {
    let names = names.to_ascii_lowercase();
    names_plugin_or_driver(&names) && !names_validator(&names)
}

/// Whether a Pod's name says it belongs to the GPU stack (operator, driver, toolkit, device plugin, feature
/// discovery, validators, exporters) rather than being a workload that asks for a GPU.
fn is_gpu_stack(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    is_plugin_or_driver(&name)
        || [
            "gpu-operator",
            "nvidia-container-toolkit",
            "nvidia-operator-validator",
            "nvidia-cuda-validator",
            "nvidia-device-plugin",
            "gpu-feature-discovery",
            "nvidia-dcgm",
            "dcgm-exporter",
            "nvidia-mig-manager",
            "node-feature-discovery",
            "nfd-worker",
            "nfd-master",
            "inteldeviceplugins",
        ]
        .iter()
        .any(|w| name.contains(w))
}

/// A pasted log that no rule explains but whose writer says where the GPU stops: what the log looks like,
/// and the cause it stands for.
struct UnexplainedLog {
    /// Lowercased words, any of which says whose log it is.
    markers: &'static [&'static str],
    /// Lowercased words that say the log went on past the point where it would stop.
    unless: &'static [&'static str],
    /// Whether the log's lines must look like a service's (a timestamp, a level): a listing that only names
    /// the component is not its log.
    needs_log_lines: bool,
    /// Whether some line must complain (an error, a failure, a panic): the component's log is the answer only
    /// when it says that the component failed.
    needs_complaint: bool,
    /// Lowercased lines only the component's own log prints, which say whose log it is on their own.
    own_lines: &'static [&'static str],
    /// Whether the output must stop at the component's own lines: after the last line with a marker, only a
    /// crash (`Segmentation fault`) may follow, or the workload got past the component.
    stops_there: bool,
    category: Category,
    gate: Gate,
    summary: &'static str,
    next: &'static [(&'static str, Where, &'static str)],
}

static UNEXPLAINED_LOGS: [UnexplainedLog; 4] = [
    // The reporter pastes a GPU device plugin's log (NVIDIA's, AMD's, Intel's, Neuron's, a sharing stack's, or
    // its MPS daemon's) because the node advertises no GPU or the plugin keeps failing; while the plugin does
    // not register its GPUs, the node advertises none.
    UnexplainedLog {
        markers: &[
            "device-plugin",
            "device plugin",
            "deviceplugin",
            "mps-control-daemon",
            "node-labeller",
            "gpu_plugin.go",
            "k8s-device-plugin",
            "registering the dpi",
        ],
        // NVIDIA's plugin says it registered its resource with the kubelet: the node advertises it.
        unless: &["registered device plugin for '"],
        needs_log_lines: true,
        needs_complaint: false,
        // tkestack's gpu-manager starts from a script that prints this before the plugin's own klog lines; the
        // MPS control daemon (the plugin's, or the DRA driver's) logs its servers' fate.
        own_lines: &["launch gpu manager", "server encountered a fatal exception"],
        stops_there: false,
        category: Category::DevicePlugin,
        gate: Gate::Scheduling,
        summary: "the paste is a GPU device plugin's log that no rule explains: until the plugin registers its GPUs, the node advertises none",
        next: &[
            (
                "kubectl get pods -A -o wide | grep -i -e device-plugin -e gpu-plugin",
                Where::Cluster,
                "find the device-plugin Pods, whether they run, and on which nodes",
            ),
            (
                "kubectl describe node {node}",
                Where::Cluster,
                "see whether the node's Capacity and Allocatable list the GPU resource",
            ),
        ],
    },
    // HAMi-core (formerly 4paradigm's libvgpu) is preloaded into every container that gets a share of a GPU
    // and prints its own lines first; a workload whose output stops at them is stuck in (or crashed by) the
    // library that stands between it and the driver, not in its own code.
    UnexplainedLog {
        markers: &["[hami-core ", "[4pdvgpu "],
        // The library says it is done, or `nvidia-smi` printed its table: the workload got past it.
        unless: &["]: initialized", "driver version:"],
        needs_log_lines: false,
        needs_complaint: false,
        own_lines: &[],
        stops_there: true,
        category: Category::RuntimeHook,
        gate: Gate::Runtime,
        summary: "the container's output stops at the vGPU library that HAMi injects (HAMi-core): it hangs or fails between the workload and the driver",
        next: &[
            (
                "nvidia-smi --query-gpu=driver_version --format=csv",
                Where::Node,
                "a HAMi-core older than the node's driver can hang in NVML's or CUDA's first call",
            ),
            (
                "kubectl get pods -A -o wide | grep -i -e hami -e vgpu",
                Where::Cluster,
                "find the vGPU device plugin that mounts HAMi-core into the containers, and its version",
            ),
        ],
    },
    // The node-side stack that must be up before the device plugin can advertise anything: the driver's
    // container (its installer, its kernel module: NVIDIA's, or AWS Neuron's), the GPU Operator's validators, and the MIG and vGPU
    // managers that cut the GPUs into the devices the plugin lists. When one of them fails, the node advertises
    // no GPU (or none of the kind asked for), whatever the failure is.
    UnexplainedLog {
        markers: &[
            "nvidia-driver-daemonset",
            "nvidia-driver-ctr",
            "k8s-driver-manager",
            "nvidia-installer",
            "driver-installer",
            "cos_gpu_installer",
            "nvrm:",
            "] neuron:",
            "neuron driver",
            "driver-validation",
            "nvidia-operator-validator",
            "nvidia-cuda-validator",
            "nvidia-sandbox-validator",
            "nvidia-mig-manager",
            "nvidia-migmanager",
            "mig-parted",
            "vgpu-device-manager",
        ],
        // An exporter only watches the GPUs: its failure takes nothing from the node.
        unless: &["dcgm-exporter"],
        needs_log_lines: false,
        needs_complaint: true,
        own_lines: &[],
        stops_there: false,
        category: Category::DevicePlugin,
        gate: Gate::Scheduling,
        summary: "the paste is the log of the node's GPU stack (the driver, a validator, the MIG or vGPU manager) and it fails in a way no rule explains: until that stack is up, the node advertises no GPU",
        next: &[
            (
                "kubectl get pods -A -o wide | grep -i -e nvidia -e gpu",
                Where::Cluster,
                "find the GPU stack's Pods on the node, and which of them do not run",
            ),
            (
                "kubectl describe node {node}",
                Where::Cluster,
                "see whether the node's Capacity and Allocatable list the GPU resource",
            ),
        ],
    },
    // The DCGM exporter reports the GPUs' metrics. When it fails (a DCGM module not loaded, a host engine it
    // cannot reach), the metrics are missing, and nothing else: it is `other`, not a gate of the GPU Pods.
    UnexplainedLog {
        markers: &["starting dcgm-exporter", "dcgm-exporter"],
        unless: &[],
        needs_log_lines: false,
        needs_complaint: true,
        own_lines: &[],
        stops_there: false,
        category: Category::Other,
        gate: Gate::Runtime,
        summary: EXPORTER_DOWN,
        next: &[(
            "kubectl get pods -A -o wide | grep -i dcgm",
            Where::Cluster,
            "find the exporter's Pods and whether DCGM runs beside them (nv-hostengine)",
        )],
    },
];

/// What the DCGM exporter's failure means: it only reads the GPUs' metrics, so no Pod waits on it.
const EXPORTER_DOWN: &str = "the DCGM exporter (the GPUs' metrics for Prometheus) fails; it takes no GPU from any Pod, so only the metrics are missing: its own error says why";

/// Kubernetes' e2e suite (Ginkgo) reporting a spec that passed (`• [SLOW TEST:297.012 seconds]`, `• [12.3
/// seconds]`): its headers name the device plugin under test, and it is no plugin's log, unless a spec failed.
fn is_passing_e2e_report(text: &str) -> bool {
    static PASSED: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?m)^\s*• \[(?:SLOW TEST:)?\d+(?:\.\d+)? seconds\]")
            .expect("ginkgo regex")
    });
    if !PASSED.is_match(text) {
        return false;
    }
    let text = text.to_ascii_lowercase();
    ![
        "• failure",
        "[failed]",
        "[panicked]",
        "[fail]",
        "fail!",
        "timeout [",
        "•! panic",
        "[timedout]",
        "[interrupted]",
        "[aborted]",
    ]
    .iter()
    .any(|w| text.contains(w))
}

/// A pasted log that no rule explains is still the answer when its writer is part of the GPU path (see
/// `UNEXPLAINED_LOGS`). Only for a paste without a Pod in it: a Pod's own state says more.
fn log_unexplained(d: Diagnosis, ev: &Evidence, ctx: &Context) -> Diagnosis {
    if d.primary != Category::Unknown || ev.pod.is_some() || ev.target.name.is_some() {
        return d;
    }
    let whole = ev
        .signals
        .iter()
        .map(|s| s.message.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    if is_passing_e2e_report(&whole) {
        return d;
    }
    // What the lines say, and each line as it was pasted: a `kubectl logs --prefix` line keeps its writer,
    // which names the component (another component's name in a writer is no word against this one).
    let said = whole.to_ascii_lowercase();
    let text = ev
        .signals
        .iter()
        .map(|s| match log_writer(s) {
            Some(w) => s
                .message
                .lines()
                .map(|l| format!("[{w}] {l}"))
                .collect::<Vec<_>>()
                .join("\n")
                .to_ascii_lowercase(),
            None => s.message.to_ascii_lowercase(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    // Log lines (klog, Go's log, logrus, JSON), not a listing that names the plugin's DaemonSet.
    static LOG_LINE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r#"(?m)^(?:\S+ )?(?:[iwef]\d{4} \d\d:\d\d:\d\d|\d{4}/\d\d/\d\d \d\d:\d\d:\d\d|time="|\{"level"|\[?\d{4}-\d\d-\d\d[t ]\d\d:\d\d:\d\d)"#,
        )
        .expect("log line regex")
    });
    // The log's complaints (klog's error lines among them) are the evidence; a log without one shows its
    // first lines.
    static ERROR_LINE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?m)^(?:\S+ )?[EF]\d{4} \d\d:\d\d:\d\d").expect("error line regex")
    });
    let complains = |s: &&Signal| {
        // The NVIDIA installer says this of a file it does not need in nearly every driver container's log, one
        // that goes on to `Done, now waiting for signal`.
        let m = s.message.to_ascii_lowercase().replace(
            "error: unable to open 'kernel/dkms.conf' for copying (no such file or directory)",
            "",
        );
        ERROR_LINE.is_match(&s.message)
            || [
                "error",
                "fail",
                "fatal",
                "panic",
                "no devices",
                "segmentation fault",
                "timed out",
            ]
            .iter()
            .any(|w| m.contains(w))
    };
    let Some(kind) = UNEXPLAINED_LOGS.iter().find(|k| {
        let marked = k.markers.iter().any(|m| text.contains(m))
            && (!k.needs_log_lines
                || LOG_LINE.is_match(&text)
                    && ["nvidia", "amd", "gpu", "neuron", "intel", "mlu", "npu"]
                        .iter()
                        .any(|v| text.contains(v))
                    && !names_validator(&text));
        (marked || k.own_lines.iter().any(|l| text.contains(l)))
            && !k.unless.iter().any(|w| said.contains(w))
            && (!k.stops_there || stops_at(&text, k.markers))
            && (!k.needs_complaint || ev.signals.iter().any(|s| complains(&s)))
    }) else {
        return d;
    };
    let complaints: Vec<&Signal> = ev.signals.iter().filter(complains).collect();
    let mut evidence = Vec::new();
    let lines = if complaints.is_empty() {
        ev.signals.iter().collect()
    } else {
        complaints
    };
    for s in lines {
        if !push_evidence(&mut evidence, s) {
            break;
        }
    }
    let cause = Cause {
        category: kind.category,
        rule: None,
        name: None,
        gate: kind.gate,
        summary: kind.summary.into(),
        evidence,
        details: BTreeMap::new(),
        next: kind
            .next
            .iter()
            .map(|(command, place, why)| ctx.step(command, *place, why))
            .collect(),
        fix: None,
        overlapping: false,
        writers: Vec::new(),
    };
    Diagnosis {
        gate: kind.gate,
        primary: kind.category,
        causes: vec![cause],
        ..d
    }
}

/// Whether lowercased output stops at the last line that holds a marker: every later line is blank or a crash.
fn stops_at(text: &str, markers: &[&str]) -> bool {
    let lines: Vec<&str> = text.lines().collect();
    let Some(last) = lines
        .iter()
        .rposition(|l| markers.iter().any(|m| l.contains(m)))
    else {
        return false;
    };
    lines[last + 1..].iter().all(|l| {
        let l = l.trim();
        // The reporter's own question under the paste (`Any idea?`) is not output.
        l.is_empty()
            || l.ends_with('?')
            || ["segmentation fault", "core dumped", "aborted"]
                .iter()
                .any(|c| l.contains(c))
    })
}

/// The GPU Operator validator's check (init container) that a crash loop's lowercased text says keeps
/// failing: named on the line that reports the loop (`container=toolkit-validation`, `for \"toolkit-validation\"
/// with CrashLoopBackOff`), or heading the container's block in `kubectl describe` above its
/// `Reason: CrashLoopBackOff`.
fn failing_validation(text: &str) -> Option<&'static str> {
    const CHECKS: [&str; 4] = [
        "driver-validation",
        "toolkit-validation",
        "cuda-validation",
        "plugin-validation",
    ];
    let lines: Vec<&str> = text.lines().collect();
    let looping = lines.iter().position(|l| {
        let l = l.to_ascii_lowercase();
        l.contains("crashloopbackoff") || l.contains("back-off")
    })?;
    let named = |l: &str| {
        CHECKS
            .into_iter()
            .find(|c| l.to_ascii_lowercase().contains(c))
    };
    named(lines[looping]).or_else(|| {
        lines[..looping].iter().rev().find_map(|l| {
            let head = l.trim().strip_suffix(':')?;
            CHECKS.into_iter().find(|c| head.eq_ignore_ascii_case(c))
        })
    })
}

/// The container whose status says it does not run, from its block in `kubectl describe` or the Pod's
/// status: one that waits to be restarted (`CrashLoopBackOff`) or cannot start before one that exited with
/// `Error`, which may be the last state of a check that passed since.
fn looping_container(ev: &Evidence) -> Option<&str> {
    let with = |reasons: &[&str]| {
        ev.signals.iter().find_map(|s| {
            let looping = s.source == Some(SignalSource::ContainerStatus)
                && s.reason.as_deref().is_some_and(|r| reasons.contains(&r));
            let path = s.field_path.as_deref().filter(|_| looping)?;
            path.split_once('{')?.1.strip_suffix('}')
        })
    };
    with(&["CrashLoopBackOff", "RunContainerError", "StartError"]).or_else(|| with(&["Error"]))
}

/// Whether lowercased text names a GPU Operator validator.
fn names_validator(text: &str) -> bool {
    text.contains("validator") || text.contains("validation")
}

/// A device plugin's or driver's Pod that fails (Error, Init:CrashLoopBackOff) with no rule to say why is still
/// the answer for the GPU Pods: while the plugin (or the driver it needs) does not run, its node advertises no
/// GPU. So is a Pod of the GPU stack that waits in its init containers (`Init:0/1`): the GPU Operator's
/// operands (plugin, feature discovery, DCGM, validators, MIG manager) wait there until the driver (and the
/// toolkit) on their node are ready, and fail there (`Init:CrashLoopBackOff`) when those checks fail; the
/// driver's Pod waits there for its driver manager. The DCGM exporter
/// that fails in its own container keeps no GPU from any Pod: `other` (only the metrics are missing). Node
/// Feature Discovery waits for nothing of the driver's. The verdict stays `unknown` for any other Pod, and for
/// a stack Pod that waits for a node.
fn stack_pod_down(d: Diagnosis, ev: &Evidence, ctx: &Context) -> Diagnosis {
    let name = ev.target.name.as_deref().unwrap_or("");
    let owner = ev
        .pod
        .as_ref()
        .and_then(|p| p.owner.as_deref())
        .unwrap_or("");
    // A Pod that runs (its last restart is history) or has finished is not what keeps the node's GPU away.
    // A Pod in the Running phase whose containers are none of them running (`State: Terminated`, between
    // the restarts of a crash loop) is down.
    let runs = ev.pod.as_ref().is_some_and(|p| match p.phase.as_deref() {
        Some("Succeeded") => true,
        Some("Running") => p.any_running,
        _ => false,
    });
    let names = format!("{name} {owner}");
    if runs || !is_gpu_stack(&names) {
        return d;
    }
    let advertises = is_plugin_or_driver(&names);
    let lower = names.to_ascii_lowercase();
    let is_driver = ["nvidia-driver", "driver-installer"]
        .iter()
        .any(|w| lower.contains(w));
    // Node Feature Discovery's Pods (and the Operator's own) have no init containers that wait on the driver.
    let gated = !["node-feature-discovery", "nfd-", "gpu-operator-"]
        .iter()
        .any(|w| lower.contains(w))
        || lower.contains("validator");
    let Some(mut cause) = d.causes.into_iter().next() else {
        return Diagnosis {
            causes: vec![],
            ..d
        };
    };
    // Only a container of the plugin, the driver or the exporter that fails to run says the component is
    // down; a Pod that waits for a node (Pending), an evicted or superseded one, or one whose state the input
    // does not show has a cause of its own that the input does not show.
    let exporter = lower.contains("dcgm-exporter");
    // The plugin's or the driver's Pod that has its node and is still `Pending` was never started there.
    let bound = ev
        .pod
        .as_ref()
        .is_some_and(|p| p.node_name.is_some() && p.scheduled.as_deref() != Some("False"));
    // The init containers of the Operator's operands (the exporter's too) check the driver and the toolkit:
    // one that fails there says those are not ready on its node, which is the GPU stack's failure.
    let failing = |s: &str| {
        (advertises || (exporter && !s.starts_with("Init:")) || (gated && s.starts_with("Init:")))
            && matches!(
                s.strip_prefix("Init:").unwrap_or(s),
                "Error"
                    | "CrashLoopBackOff"
                    | "RunContainerError"
                    | "CreateContainerError"
                    | "StartError"
            )
    };
    let state = cause
        .evidence
        .iter()
        .filter(|e| {
            matches!(
                e.source,
                SignalSource::PodStatus | SignalSource::ContainerStatus
            )
        })
        .find_map(|e| {
            e.reason.clone().filter(|r| {
                failing(r) || (gated && waits_in_init(r)) || (advertises && bound && r == "Pending")
            })
        })
        // The kubelet backs off a container it cannot pull or keeps restarting (`BackOff`): its row says so
        // even when the paste ends before the message.
        .or_else(|| {
            cause
                .evidence
                .iter()
                .any(|e| {
                    advertises
                        && e.source == SignalSource::Event
                        && e.reason.as_deref() == Some("BackOff")
                })
                .then(|| "BackOff".to_string())
        });
    let Some(state) = state else {
        return Diagnosis {
            causes: vec![cause],
            ..d
        };
    };
    let name = if name.is_empty() {
        owner
            .rsplit('/')
            .next()
            .filter(|o| !o.is_empty())
            .unwrap_or("the Pod")
    } else {
        name
    };
    if exporter && !state.starts_with("Init:") {
        cause.category = Category::Other;
        cause.summary = format!(
            "{name} is the DCGM exporter (the GPUs' metrics for Prometheus) and does not run ({state}): it takes no GPU from any Pod, so only the metrics are missing; its log says why"
        );
        cause.next = vec![ctx.step(
            "kubectl logs {pod} -n {namespace} --previous --tail=50",
            Where::Cluster,
            "read the exporter's own error (a DCGM module not loaded, a host engine it cannot reach)",
        )];
        return Diagnosis {
            primary: Category::Other,
            causes: vec![cause],
            ..d
        };
    }
    cause.category = Category::DevicePlugin;
    cause.summary = if waits_in_init(&state) && is_driver {
        format!(
            "{name} is the driver's Pod and waits in its init containers ({state}): until the driver is loaded, its node advertises no GPU"
        )
    } else if state == "Pending" {
        format!(
            "{name} belongs to the GPU stack and has its node but was never started there (Pending): until it runs, its node advertises no GPU"
        )
    } else if state.starts_with("Init:") && !waits_in_init(&state) && !advertises {
        format!(
            "{name} belongs to the GPU stack and its init containers fail ({state}): they check the driver (and the container toolkit) on its node, which are not ready"
        )
    } else if waits_in_init(&state) {
        format!(
            "{name} belongs to the GPU stack and waits in its init containers ({state}): they wait until the driver (and the container toolkit) on its node are ready"
        )
    } else {
        format!(
            "{name} belongs to the GPU stack and does not run ({state}): until it runs, its node advertises no GPU"
        )
    };
    cause.next = vec![
        ctx.step(
            "kubectl describe pod {pod} -n {namespace}",
            Where::Cluster,
            "read why the GPU-stack Pod does not run",
        ),
        ctx.step(
            "kubectl logs {pod} -n {namespace} --all-containers --tail=100",
            Where::Cluster,
            "read what its containers (and init containers) said",
        ),
    ];
    Diagnosis {
        primary: Category::DevicePlugin,
        causes: vec![cause],
        ..d
    }
}

/// The verdict when something blocks the Pod and no rule explains it.
fn unknown(
    ev: &Evidence,
    gate: Gate,
    summary: String,
    evidence: Vec<EvidenceLine>,
    next: Vec<NextStep>,
    gaps: Vec<Gap>,
) -> Diagnosis {
    let cause = Cause {
        category: Category::Unknown,
        rule: None,
        name: None,
        gate,
        summary,
        evidence,
        details: BTreeMap::new(),
        next,
        fix: None,
        overlapping: false,
        writers: Vec::new(),
    };
    Diagnosis {
        schema: SCHEMA,
        target: ev.target.clone(),
        gate,
        primary: Category::Unknown,
        causes: vec![cause],
        gaps,
    }
}

/// The Pod's names, the logs a cause was read from and its evidence, lowercased: what says whose container
/// failed.
fn whose_text(c: &Cause, target: &str) -> String {
    let names = format!("{target} {}", c.writers.join(" "));
    c.evidence.iter().fold(names.to_ascii_lowercase(), |t, e| {
        let text = e.text.to_ascii_lowercase();
        // A line a terminal wrapped in the middle of a path (`/home` / `/kubernetes/bin/nvidia`) is read
        // glued too.
        let glued = if text.contains('\n') {
            text.lines().map(str::trim).collect::<String>()
        } else {
            String::new()
        };
        t + " " + &text + " " + &glued
    })
}

/// A crash loop (or a failed mount, an image that cannot be pulled or run, a missing command) says only that a
/// container does not run. When the container is part of the GPU stack that is the GPU problem: the device
/// plugin's means its node advertises nothing (`device-plugin`), and so does the driver installer's (no driver,
/// no GPU for the plugin to find); a validator's or toolkit's has a cause the text does not name (`unknown`),
/// unless the reporter says the node advertises no GPU. The Pod's name, its owner and its containers' names say whose container it is.
fn whose_component_failure(
    c: &mut Cause,
    target: &str,
    looping: Option<&str>,
    reported_unadvertised: bool,
    ctx: &Context,
) {
    // The driver's or the device plugin's image cannot be pulled (none is published for this OS or kernel,
    // none for this architecture): the driver never installs or the plugin never runs, so no GPU is advertised.
    // The Pod's own name says whose image it is when the paste shows only its status (`ImagePullBackOff`): as
    // the Pod, or as a `get pods` row inside a record, which is how a listing reads once a ticket ran its lines
    // into one paragraph (a row read as a row is its own Pod).
    static STACK_ROW_PULL: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)\b(?P<name>\S*(?:device-plugin|nvidia-driver|driver-installer|amdgpu-dp|intel-gpu-plugin)\S*)\s+\d+/\d+\s+(?:Init:)?(?:ImagePullBackOff|ErrImagePull|InvalidImageName)\b",
        )
        .expect("stack row regex")
    });
    if c.rule == Some("GW501") {
        let text = whose_text(c, target);
        if [
            "nvidia/driver:",
            "k8s-driver-manager",
            "k8s-device-plugin:",
            "nvidia-driver-ctr",
        ]
        .iter()
        .any(|w| text.contains(w))
            || is_plugin_or_driver(target)
            || STACK_ROW_PULL
                .captures_iter(&text)
                .any(|row| is_plugin_or_driver(&row["name"]))
        {
            c.category = Category::DevicePlugin;
        }
        return;
    }
    // The device plugin's image has no build for the node's architecture, or its container's arguments are
    // taken for its command, or the MPS control binary the plugin's MPS daemon runs is not in its image: the
    // plugin (or the daemon that shares its GPUs) never runs there.
    if matches!(c.rule, Some("GW515" | "GW416")) {
        let text = whose_text(c, target);
        if text.contains("device-plugin")
            || text.contains("nvidia-cuda-mps-control")
            || is_gpu_stack(target)
        {
            c.category = Category::DevicePlugin;
        }
        return;
    }
    // The device plugin's or the driver's own Pod cannot mount its volumes (the driver's host directory, the
    // firmware directory), or any Pod cannot mount a directory that only the driver creates (GKE's
    // `/home/kubernetes/bin/nvidia`, the driver container's `/run/nvidia/driver`): the driver is not installed
    // on the node yet, or the plugin does not run, so no GPU is advertised.
    // So does the GPU Operator's validator DaemonSet (not its child Pods, `nvidia-cuda-validator-…`): until its
    // checks run, the Operator holds the device plugin back.
    if c.rule == Some("GW503") {
        let text = whose_text(c, target);
        if is_plugin_or_driver(target)
            || target
                .to_ascii_lowercase()
                .contains("nvidia-operator-validator")
            || (text.contains("device-plugin") && text.contains("nvidia"))
            || names_driver_dir(&text)
        {
            c.category = Category::DevicePlugin;
        }
        return;
    }
    // The runtime finds no NVIDIA device node under the driver container's root (`lstat
    // /run/nvidia/driver/dev/nvidiactl`): the driver container has not loaded the driver yet.
    // The kubelet's own GPU manager (Kubernetes before device plugins) that finds no device node: the node
    // has no loaded driver, so it advertises no GPU.
    if c.rule == Some("GW406") {
        let text = whose_text(c, target);
        if names_driver_dir(&text) || text.contains("failed to start gpumanager") {
            c.category = Category::DevicePlugin;
        }
        return;
    }
    if !matches!(c.rule, Some("GW505" | "GW518" | "GW523")) {
        return;
    }
    // Only the lines that report the crash: a pasted table names every Pod of the stack. When those lines
    // name no component (`Status: CrashLoopBackOff` under `Container: nvidia-driver-ctr`), the whole record says.
    let mut text = target.to_ascii_lowercase();
    for e in &c.evidence {
        let lower = e.text.to_ascii_lowercase();
        let crashing = lower
            .lines()
            .filter(|l| l.contains("crashloopbackoff") || l.contains("back-off"))
            .collect::<Vec<&str>>()
            .join(" ");
        text.push(' ');
        let says_whose =
            !crashing.is_empty() && (names_gpu_component(&crashing) || names_a_pod(&crashing));
        text.push_str(if says_whose { &crashing } else { &lower });
    }
    let has = |words: &[&str]| words.iter().any(|w| text.contains(w));
    // The GPU Operator's container toolkit has one init container, `driver-validation`: when the toolkit's
    // Pod fails in its init containers, that check is what fails.
    let toolkit_waits_for_driver = has(&["container-toolkit-daemonset"])
        && (text.contains("init:crashloopbackoff") || text.contains("init: crashloopbackoff"))
        && !names_validator(target);
    // A validator's name can hold the component it validates (`nvidia-device-plugin-validator`). The device
    // plugin's own init container `toolkit-validation` is not the validator's check of that name: it waits for
    // the toolkit (or, before Operator 1.8, runs a CUDA sample), and while it loops the plugin does not start.
    let plugins_own_check = target
        .to_ascii_lowercase()
        .contains(OPERATOR_PLUGIN_DAEMONSET);
    if (names_validator(&text) && !plugins_own_check) || toolkit_waits_for_driver {
        c.category = Category::Unknown;
        // The GPU Operator's validator runs its checks in order, each an init container: the one that loops
        // is the first that fails, so the ones before it passed.
        let check = c
            .evidence
            .iter()
            .find_map(|e| failing_validation(&e.text))
            .or_else(|| toolkit_waits_for_driver.then_some("driver-validation"))
            .or_else(|| failing_validation(&format!("{}: CrashLoopBackOff", looping?)));
        // (the check, its category, what its failure means, the operand whose log says more)
        let verdict = match check {
            Some("driver-validation") => Some((
                Category::DevicePlugin,
                "the driver is not ready on this node (or, from GPU Operator 23.3, the check cannot create the /dev/char links for it), so its device plugin waits and the node advertises no GPU",
                "nvidia-driver-daemonset",
            )),
            Some("toolkit-validation") => Some((
                Category::RuntimeHook,
                "the driver passed its check, but a container started through the nvidia runtime does not get it (the toolkit's runtime configuration, hook or driver root)",
                "nvidia-container-toolkit-daemonset",
            )),
            Some("plugin-validation") => Some((
                Category::DevicePlugin,
                "the driver and the toolkit passed, but the device plugin advertises no GPU on this node",
                OPERATOR_PLUGIN_DAEMONSET,
            )),
            _ => None,
        };
        if let (Some(check), Some((category, means, operand))) = (check, verdict) {
            c.category = category;
            c.summary = format!(
                "the GPU Operator's {check} keeps failing: {means}; the check's log says what it found"
            );
            c.next = vec![
                ctx.step(
                    &format!("kubectl logs {{pod}} -n {{namespace}} -c {check} --previous"),
                    Where::Cluster,
                    "read what the check found",
                ),
                ctx.step(
                    &format!(
                        "kubectl logs -n {{namespace}} -l app={operand} --all-containers --tail=50"
                    ),
                    Where::Cluster,
                    "read the log of the operand the check validates",
                ),
            ];
        }
    } else if has(&["node-feature-discovery-worker", "nfd-worker"]) && has(&["gpu-operator"]) {
        // The GPU Operator deploys its driver, toolkit and device plugin on the nodes that Node Feature
        // Discovery labels as having an NVIDIA PCI device; while NFD's worker crashes, no node is labelled.
        c.category = Category::DevicePlugin;
    } else if has(&PLUGIN_OR_DRIVER) {
        // Without its driver a node's device plugin finds no GPU: a crashing driver installer is why the node
        // advertises none, as a crashing plugin is. A DRA driver's kubelet plugin is the device plugin's
        // counterpart: while it crashes, the node publishes no device for a claim.
        c.category = Category::DevicePlugin;
    } else if has(&OTHER_GPU_COMPONENTS)
        && has(&["init:crashloopbackoff", "init: crashloopbackoff"])
        && !has(&["node-feature-discovery", "nfd-"])
    {
        // An operand of the GPU Operator (feature discovery, the DCGM exporter) whose init containers loop:
        // they check the driver and the container toolkit on its node, which are not ready.
        c.category = Category::DevicePlugin;
        c.summary = "a GPU-stack Pod's init containers keep failing (Init:CrashLoopBackOff): they check the driver (and the container toolkit) on its node, which are not ready, so its node advertises no GPU".into();
        c.next = vec![ctx.step(
            "kubectl logs {pod} -n {namespace} --all-containers --tail=100",
            Where::Cluster,
            "read which of its init containers' checks fails",
        )];
    } else if has(&["dcgm-exporter"]) && !has(&["init:"]) && !reported_unadvertised {
        // The DCGM exporter only reads the GPUs' metrics: its crash loop keeps no GPU from any Pod. (Its init
        // containers wait for the driver and the toolkit, so a loop there is theirs.)
        c.category = Category::Other;
        c.summary = EXPORTER_DOWN.into();
    } else if has(&["nvidia-dcgm-"]) && !has(&["init:"]) && !reported_unadvertised {
        // The GPU Operator's standalone DCGM (nv-hostengine) serves the GPUs' health and metrics to the exporter:
        // like the exporter's, its crash loop keeps no GPU from any Pod.
        c.category = Category::Other;
        c.summary = "the GPU Operator's DCGM host engine (nvidia-dcgm) keeps failing; it only serves the GPUs' health and metrics to the DCGM exporter, so no GPU Pod waits on it: its own log says why".into();
    } else if has(&["nvidia-container-toolkit-daemonset"]) && !has(&["init:"]) {
        // The container toolkit's Pod writes the nvidia runtime into the node's containerd or CRI-O configuration:
        // while it crashes, the node's runtime has no nvidia handler (or an old one).
        c.category = Category::HandlerMissing;
        c.summary = "the GPU Operator's container toolkit keeps failing, so it does not set up the node's container runtime (containerd or CRI-O) for the nvidia runtime: its own log says why (a runtime configuration it cannot read or write, or another runtime than the node runs)".into();
        c.next = vec![ctx.step(
            "kubectl logs {pod} -n {namespace} --previous --tail=100",
            Where::Cluster,
            "read why the toolkit stops",
        )];
    } else if has(&OTHER_GPU_COMPONENTS) {
        // A GPU-stack component that keeps crashing is why the node advertises no GPU, when the reporter
        // says it advertises none; otherwise what breaks it is inside the component.
        c.category = if reported_unadvertised {
            Category::DevicePlugin
        } else {
            Category::Unknown
        };
    }
}

/// Words that say something did try to put the GPU's libraries into the container: the NVIDIA hook itself (its
/// own error is in the paste, or `docker run --gpus`, which runs it), a GPU-sharing layer (HAMi's or gpu-manager's vCUDA, nvshare), CDI, or the
/// toolkit's setting that makes it ignore the device plugin's `NVIDIA_VISIBLE_DEVICES` in an unprivileged
/// container.
static LIBRARY_INJECTORS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"(?i)nvidia-container-cli: |\bdocker run\b[^\n]*?\s--gpus[\s=]|\bnvidia-container-runtime-hook\b|\bprestart hook\b|\bvcuda\b|\bcuda-control\b|\blibvgpu\b|\bhami(?:-core|\.io)?\b|\bgpu-manager\b|\bnvshare\b|\bcdi-enabled\b|\bcdi\.k8s\.io\b|(?m:(?:^|[^#\s])[ \t]*accept-nvidia-visible-devices-envvar-when-unprivileged\s*=\s*false\b)",
    )
    .expect("library injectors regex")
});

/// The GPU Operator's device-plugin DaemonSet, whose Pods' names start with it.
const OPERATOR_PLUGIN_DAEMONSET: &str = "nvidia-device-plugin-daemonset";

/// The GPU Operator 1.x ran a CUDA sample (vectorAdd) in the device plugin's init container
/// `toolkit-validation`, before its driver was validated: the CUDA that sample was built for finding no driver new
/// enough (GW408) means the Operator's driver is not loaded yet (or the node's own driver is older than the release
/// needs), and the device plugin does not start. The same line from any other Pod stays the image's CUDA against
/// the node's driver.
fn whose_cuda_check(c: &mut Cause, ev: &Evidence, ctx: &Context) {
    if c.rule != Some("GW408")
        || !c
            .evidence
            .iter()
            .any(|e| e.text.contains("Failed to allocate device vector A"))
    {
        return;
    }
    let plugin_pod = |name: &str| name.starts_with(OPERATOR_PLUGIN_DAEMONSET);
    let described = ev.pod.as_ref().is_some_and(|p| {
        ev.target.name.as_deref().is_some_and(plugin_pod)
            && p.containers.iter().any(|c| c == "toolkit-validation")
    });
    let logged = ev.logs_of.as_ref().is_some_and(|l| {
        plugin_pod(&l.pod)
            && l.container.as_deref() == Some("toolkit-validation")
            && ev.target.name.as_deref().is_none_or(|t| t == l.pod)
    });
    if !(described || logged) {
        return;
    }
    c.category = Category::DevicePlugin;
    c.summary = "the GPU Operator's CUDA check in the device plugin's toolkit-validation finds no driver as new as its CUDA: the Operator's driver is not loaded yet, or the node's own driver is older than the release needs, so the device plugin does not start".into();
    c.next = vec![
        ctx.step(
            "kubectl get pods -A -o wide | grep -e nvidia-driver -e nvidia-device-plugin",
            Where::Cluster,
            "see whether the driver container on the node is ready",
        ),
        ctx.step(
            "cat /proc/driver/nvidia/version",
            Where::Node,
            "see which driver the node has loaded, if any",
        ),
    ];
}

/// NVML's `Unknown Error` (GW432) from `nvidia-smi` run on the node itself (`kubectl debug node/…` then
/// `chroot /host`), not in a container: the driver does not answer there, so no container can use the GPU.
fn whose_nvml_failure(c: &mut Cause, ev: &Evidence) {
    let on_the_node = ev
        .signals
        .iter()
        .any(|s| s.message.contains("kubectl debug node/") || s.message.contains("chroot /host"));
    if c.rule != Some("GW432") || !on_the_node {
        return;
    }
    c.category = Category::DevicePlugin;
    c.summary = "nvidia-smi fails with NVML's Unknown Error on the node itself: the driver does not answer there, so no container can use the GPU".into();
    c.next = vec![NextStep {
        command: "dmesg | grep -i -e NVRM -e Xid | tail -20".into(),
        place: Where::Node,
        why: "see what the kernel driver reported about the GPU (an Xid error, a GPU that fell off the bus, a licence)".into(),
    }];
}

/// A driver container's log that stops short (GW155) beside its Pod's crash loop: the container does not work on,
/// it fails and restarts, and the line that says why is further down the log than the paste, or in the previous
/// run's.
fn whose_driver_stop(c: &mut Cause, ev: &Evidence) {
    let looping = ev.signals.iter().any(|s| {
        s.reason.as_deref() == Some("CrashLoopBackOff")
            && s.object
                .as_deref()
                .or(ev.target.name.as_deref())
                .is_some_and(|n| n.to_ascii_lowercase().contains("driver"))
    });
    if c.rule != Some("GW155") || !looping {
        return;
    }
    c.summary = "the GPU Operator's driver container keeps failing (CrashLoopBackOff): the log shown stops before the driver is loaded, so what fails is further down it or in the previous run's log, and the node advertises no GPU".into();
}

/// A workload container without the driver's libraries or `nvidia-smi` was not started by the nvidia runtime
/// (`handler-missing`, GW420's and GW431's category), unless the paste says the NVIDIA hook ran (or could not be
/// found), or a GPU-sharing layer or CDI was to put them there: then that injection failed (`runtime-hook`). A
/// device plugin that cannot start for want of NVML's library (GW145) is `handler-missing` too.
fn whose_libraries(c: &mut Cause, ev: &Evidence) {
    // The device plugin (or GPU Feature Discovery) cannot start because it cannot open NVML's library: its
    // container does not run under the nvidia runtime, as GW151 says of the plugin's other words for it.
    if c.rule == Some("GW145")
        && detail(c, "why")
            .is_some_and(|w| w.contains("libnvidia-ml.so.1: cannot open shared object file"))
    {
        c.category = Category::HandlerMissing;
        return;
    }
    if !matches!(c.rule, Some("GW420" | "GW431")) {
        return;
    }
    let injected = c
        .evidence
        .iter()
        .map(|e| e.text.as_str())
        .chain(ev.signals.iter().map(|s| s.message.as_str()))
        .any(|t| LIBRARY_INJECTORS.is_match(t));
    if injected {
        c.category = Category::RuntimeHook;
        c.summary = if c.rule == Some("GW431") {
            "nvidia-smi is not in the container: the NVIDIA hook (or the layer that shares the GPU) that should inject it failed".into()
        } else {
            format!(
                "the container cannot load {}: the NVIDIA hook (or the layer that shares the GPU) ran but did not put the driver's libraries where the container looks",
                detail(c, "library").unwrap_or("the driver's library")
            )
        };
    }
}

/// The kubelet refused a Pod the scheduler had placed (`OutOf…`, "Node didn't have enough resource"). For a
/// device-plugin resource the scheduler had counted the node's allocatable, so the kubelet's device manager
/// holds fewer devices than the node advertised: the plugin has not (re-)registered or lost them
/// (`device-plugin`). A shortfall of cpu or memory is not a GPU gate (`other`). The kubelet's own GPU
/// resource of old releases (`alpha.kubernetes.io/nvidia-gpu`) stays `insufficient-resource`. When the
/// reporter says other Pods hold every GPU of the node, the devices are simply taken (`insufficient-resource`).
fn whose_shortfall_at_admission(c: &mut Cause, reported_busy: bool) {
    // A scheduler shortfall of an extended resource that is no accelerator (a fuse or RDMA device) is not a
    // GPU gate either.
    if c.rule == Some("GW105")
        && detail(c, "resource").is_some_and(|r| is_extended_resource(r) && !is_gpu_resource(r))
    {
        c.category = Category::Other;
        return;
    }
    if reported_busy && matches!(c.rule, Some("GW301" | "GW306" | "GW310")) {
        c.category = Category::InsufficientResource;
        return;
    }
    if !matches!(c.rule, Some("GW306" | "GW310")) {
        return;
    }
    let Some(resource) = detail(c, "resource") else {
        return;
    };
    if !is_extended_resource(resource) {
        c.category = Category::Other;
    } else if is_gpu_resource(resource) && !resource.starts_with("alpha.kubernetes.io/") {
        c.category = Category::DevicePlugin;
    }
}

/// Kueue's Topology-Aware Scheduling that finds no room (GW227) may say why it left nodes out (`excluded:
/// resource "nvidia.com/gpu": 5, taint "k:NoSchedule": 1, nodeSelector: 2`). A node left out for a taint or
/// for the Pods' node selector or affinity was never counted for the GPU: when no node was left out for lack
/// of a GPU, that taint (or that selector) is what keeps the workload off the GPU nodes.
fn whose_topology_exclusions(c: &mut Cause) {
    if c.rule != Some("GW227") {
        return;
    }
    let Some(excluded) = detail(c, "excluded").map(str::to_string) else {
        return;
    };
    static RESOURCE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"resource \\?"([^"\\]+)"#).expect("excluded resource regex")
    });
    if RESOURCE
        .captures_iter(&excluded)
        .any(|r| is_gpu_resource(&r[1]) || is_extended_resource(&r[1]))
    {
        return;
    }
    let topology = detail(c, "topology").unwrap_or("of the flavor").to_string();
    if excluded.contains("taint ") {
        c.category = Category::Taint;
        c.summary = format!(
            "the Kueue topology {topology} leaves out nodes for taints the workload does not tolerate ({excluded}), so no domain has room and Kueue does not admit it"
        );
    } else if excluded.contains("nodeSelector") || excluded.contains("affinity") {
        c.category = Category::NodeAffinity;
        c.summary = format!(
            "the Kueue topology {topology} leaves out nodes that do not match the pods' node selector or affinity ({excluded}), so no domain has room and Kueue does not admit the workload"
        );
    }
}

/// A webhook or policy that denies a Pod because of a quota (a scheduler's elastic quota, a quota group) is a
/// quota gate, whatever else the denial names; one that denies the device plugin (or its MPS daemon) keeps the
/// node's GPUs from being advertised (or shared).
fn whose_denial(c: &mut Cause) {
    if !matches!(c.rule, Some("GW210" | "GW212")) {
        return;
    }
    let text = whose_text(c, "");
    if text.contains("quota") {
        c.category = Category::Quota;
    } else if c.rule == Some("GW210")
        && (names_plugin_or_driver(&text)
            || text.contains("mps-control-daemon")
            || (text.contains("node-feature-discovery") && text.contains("gpu-operator")))
    {
        // What a policy refused is the GPU stack's own Pod (or its DaemonSet): the device plugin, the MPS daemon
        // that shares its GPUs, or the GPU Operator's feature discovery, whose labels place the Operator's
        // driver and plugin. Until it runs, the node advertises (or shares) no GPU.
        c.category = Category::DevicePlugin;
    }
}

/// Puts a fact verdict on the message cause it refines (or a new cause of that rule when the message is
/// gone) and returns its index.
fn apply_verdict(v: facts::Verdict, causes: &mut Vec<Cause>, ctx: &Context) -> usize {
    let idx = v
        .rules
        .iter()
        .find_map(|id| causes.iter().position(|c| c.rule == Some(*id)));
    let idx = match idx {
        Some(i) => i,
        None => {
            let rule = crate::rules::by_id(v.rules[0]).expect("verdict rules exist in the table");
            let f = Finding {
                rule,
                captures: BTreeMap::new(),
                count: None,
                nodes_total: None,
                truncated: false,
                overlapping: false,
                preemption_helps_nowhere: false,
            };
            causes.push(new_cause(&f, ctx));
            causes.len() - 1
        }
    };
    let c = &mut causes[idx];
    c.category = v.category;
    c.summary = sanitize::line(&v.summary);
    if let Some(node) = v.details.get("node").and_then(Value::as_str) {
        c.next.insert(
            0,
            NextStep {
                command: format!("kubectl describe node {}", shell_word(node)),
                place: Where::Cluster,
                why: "read the node's taints, labels and allocated resources".into(),
            },
        );
        if v.category == Category::DevicePlugin {
            c.next.insert(
                1,
                NextStep {
                    command: format!("kubectl get pods -A -o wide --field-selector spec.nodeName={} | grep -i -E 'device-plugin|gpu-operator|driver|toolkit'", shell_word(node)),
                    place: Where::Cluster,
                    why: "find the device plugin and GPU Operator pods on that node".into(),
                },
            );
        }
    }
    if let Some((ns, name)) = v
        .details
        .get("device_plugin_pod")
        .and_then(Value::as_str)
        .and_then(|p| p.split_once('/'))
    {
        c.next.insert(
            0,
            NextStep {
                command: format!(
                    "kubectl logs -n {} {} --all-containers --tail=50",
                    shell_word(ns),
                    shell_word(name)
                ),
                place: Where::Cluster,
                why: "read why the device plugin on that node advertises nothing".into(),
            },
        );
    }
    c.details.extend(v.details);
    c.evidence.extend(v.evidence);
    if v.fix.is_some() {
        c.fix = v.fix;
    }
    idx
}

/// What a Volcano scheduler's log shows one task short of: the resources, the refusing nodes whose request
/// line shows it (of how many refused the task), and those lines.
#[derive(Debug, PartialEq)]
struct Shortfall {
    short: Vec<String>,
    shown: Vec<String>,
    refused: usize,
    lines: Vec<String>,
}

/// What a Volcano scheduler's log shows short where its fit error names nothing: for each task and node it
/// reports `Predicates failed for task <ns/name> on node <node>: … resource fit failed`, its `Considering Task
/// <ns/name> on node <node>: <request> vs. <idle>` line (verbosity 3 or 4) gives the task's request beside the
/// node's idle resources as `name value` pairs (`<cpu 0.00, memory 0.00, nvidia.com/gpu 1000.00>`). For the first
/// task refused: the resources short on every refusing node whose latest request line the log holds (a GPU
/// first), those nodes, how many refused it, and the lines. `None` when no such line shows a shortfall.
fn volcano_shortfall(signals: &[Signal]) -> Option<Shortfall> {
    fn pairs(s: &str) -> Option<Vec<(&str, f64)>> {
        s.split(", ")
            .map(|p| {
                let (name, value) = p.trim().rsplit_once(' ')?;
                let value: f64 = value.parse().ok().filter(|v: &f64| v.is_finite())?;
                name.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"./_-".contains(&b))
                    .then_some((name, value))
            })
            .collect()
    }
    // `<ns/name> on node <node>`: the task and the node a line is about.
    fn task_node(line: &str, after: &str) -> Option<(String, String)> {
        let rest = &line[line.find(after)? + after.len()..];
        let (task, rest) = rest.split_once("> on node <")?;
        let (node, _) = rest.split_once('>')?;
        Some((task.to_string(), node.to_string()))
    }
    let lines = || signals.iter().flat_map(|s| s.message.lines());
    let failed: Vec<(String, String)> = lines()
        .filter(|l| l.contains("resource fit failed"))
        .filter_map(|l| task_node(l, "Predicates failed for task <"))
        .collect();
    // The first task the log refuses, and every node that refused it.
    let task = failed.first()?.0.clone();
    let mut nodes: Vec<String> = Vec::new();
    for (t, n) in &failed {
        if *t == task && !nodes.contains(n) {
            nodes.push(n.clone());
        }
    }
    // Each refused node's latest request line (a later scheduling cycle replaces an earlier one).
    let mut requests: Vec<(String, String, Vec<String>)> = Vec::new();
    for line in lines() {
        let Some((t, node)) = task_node(line, "Considering Task <") else {
            continue;
        };
        if t != task || !nodes.contains(&node) {
            continue;
        }
        let Some((request, idle)) = line
            .split_once(">: <")
            .and_then(|(_, r)| r.split_once("> vs. <"))
            .and_then(|(request, idle)| Some((pairs(request)?, pairs(idle.split_once('>')?.0)?)))
        else {
            continue;
        };
        let short: Vec<String> = request
            .iter()
            .filter(|(name, want)| {
                *want > 0.0
                    && idle
                        .iter()
                        .find(|(n, _)| n == name)
                        .map_or(0.0, |(_, v)| *v)
                        < *want
            })
            .map(|(name, _)| name.to_string())
            .collect();
        requests.retain(|(n, _, _)| *n != node);
        requests.push((node, line.trim().to_string(), short));
    }
    if requests.is_empty() {
        return None;
    }
    // Only what every refusing node that shows its request lacks is what the task is short of.
    let mut short = requests[0].2.clone();
    short.retain(|r| requests.iter().all(|(_, _, s)| s.contains(r)));
    if short.is_empty() {
        return None;
    }
    short.sort_by_key(|r| !is_gpu_resource(r));
    let refused = nodes.len();
    let (shown, lines): (Vec<String>, Vec<String>) =
        requests.into_iter().map(|(n, l, _)| (n, l)).unzip();
    Some(Shortfall {
        short,
        shown,
        refused,
        lines,
    })
}

/// A GPU shortfall that only the cluster autoscaler reports, and as its only reason (`pod didn't trigger scale-up
/// (it wouldn't fit if a new node is added): 6 Insufficient nvidia.com/gpu`, or its log's `Scale-up predicate
/// failed … reason: Insufficient nvidia.com/gpu`), counts node groups, not nodes: the node a group would add, as
/// its template describes it, would not have the GPU either. A group that scales up from zero has no node to
/// copy, so its template must declare the GPU (the ASG's `k8s.io/cluster-autoscaler/node-template/resources/…`
/// tag), or the GPU group is not one the autoscaler discovered. Beside another reason (cpu, a group at its
/// maximum, a taint), or for a Pod that asks for more than one GPU, the groups may lack something else.
fn whose_scale_up(c: &mut Cause, ctx: &Context) {
    let only_the_gpu = |text: &str| {
        if text.contains("Scale-up predicate failed") {
            return true;
        }
        text.contains("pod didn't trigger scale-up")
            && crate::fiterror::parse(text).is_some_and(|f| {
                !f.items.is_empty()
                    && f.items.iter().all(|i| {
                        i.reason
                            .strip_prefix("Insufficient ")
                            .is_some_and(is_gpu_resource)
                    })
            })
    };
    let one = ctx
        .vars
        .get("resource_request")
        .is_none_or(|q| q.trim() == "1");
    if c.rule != Some("GW105")
        || !one
        || c.evidence.is_empty()
        || !c.evidence.iter().all(|e| only_the_gpu(&e.text))
    {
        return;
    }
    let Some(resource) = detail(c, "resource").filter(|r| is_gpu_resource(r)) else {
        return;
    };
    let groups = count_or(c, "its");
    c.summary = format!(
        "the cluster autoscaler adds no node for the pod: in {groups} node group(s), even a new node would not have {resource}: their node templates do not offer it (a GPU group that scales up from zero must declare the GPU there), or the GPU group is not one it manages"
    );
    c.next = vec![
        ctx.step(
            "kubectl get configmap cluster-autoscaler-status -n kube-system -o yaml",
            Where::Cluster,
            "see which node groups the autoscaler manages and their sizes",
        ),
        ctx.step(
            "kubectl logs -n kube-system $(kubectl get pods -n kube-system -o name | grep cluster-autoscaler | head -1) --tail=300 | grep -i -e template -e predicate -e 'scale-up'",
            Where::Cluster,
            "read why each group's template node would not fit the pod (a managed autoscaler, as on GKE or AKS, runs no Pod there)",
        ),
    ];
}

/// Whether a Volcano scheduler's log binds every task it refuses (`Predicates failed for task <ns/name> …`)
/// after refusing it: `Binding Task <ns/name> to node <node>`.
fn volcano_binds_refused_task(signals: &[Signal]) -> bool {
    let mut refused: Vec<String> = Vec::new();
    let mut bound = false;
    for line in signals.iter().flat_map(|s| s.message.lines()) {
        if let Some((_, rest)) = line.split_once("Predicates failed for task <")
            && line.contains("resource fit failed")
            && let Some((task, _)) = rest.split_once('>')
        {
            if !refused.iter().any(|t| t == task) {
                refused.push(task.to_string());
            }
        } else if let Some((_, rest)) = line.split_once("Binding Task <")
            && let Some((task, _)) = rest.split_once("> to node <")
        {
            bound |= refused.iter().any(|t| t == task);
            refused.retain(|t| t != task);
        }
    }
    bound && refused.is_empty()
}

/// Volcano's `resource fit failed` names no resource; its log's request lines may (`volcano_shortfall`).
fn whose_volcano_shortfall(c: &mut Cause, ev: &Evidence) {
    if c.rule != Some("GW168") {
        return;
    }
    let Some(Shortfall {
        short,
        shown,
        refused,
        lines,
    }) = volcano_shortfall(&ev.signals)
    else {
        return;
    };
    let count = count_or(c, "some");
    let names = short.join(" and ");
    let on = match shown.as_slice() {
        [one] => format!("node {one}"),
        [first, second] => format!("nodes {first} and {second}"),
        [first, second, third] => format!("nodes {first}, {second} and {third}"),
        [first, second, rest @ ..] => {
            format!("nodes {first}, {second} and {} more", rest.len())
        }
        [] => "the nodes".to_string(),
    };
    // The log may hold the request line of only some of the nodes that refused the task.
    let of = if shown.len() < refused {
        format!(" ({} of the {refused} nodes that refused it)", shown.len())
    } else {
        String::new()
    };
    c.summary = sanitize::line(&format!(
        "{count} node(s) lack room for the pod's requests: the Volcano scheduler's log shows less {names} idle than the task asks for on {on}{of}"
    ));
    c.details
        .insert("short".into(), Value::from(sanitize::line(&names)));
    for line in lines
        .iter()
        // One request line at least, beyond the evidence kept per cause if need be: it is what says which.
        .take(MAX_EVIDENCE.saturating_sub(c.evidence.len()).max(1))
    {
        c.evidence.push(EvidenceLine {
            source: SignalSource::Log,
            reason: None,
            text: sanitize::clean(line, false),
            count: 1,
        });
    }
}

/// Says which fact would confirm the primary cause when it was not read (offline input, or a forbidden read).
fn unchecked(primary: &Cause, ev: &Evidence) -> Option<Gap> {
    let resource = detail(primary, "resource").unwrap_or("the resource");
    match (primary.rule, &ev.nodes) {
        (Some("GW105"), None) => Some(Gap {
            check: "nodes".into(),
            reason: format!("node allocatable was not read, so \"no node advertises {resource}\" (device plugin) and \"all of it is allocated\" cannot be told apart"),
        }),
        (Some("GW104"), None) => Some(Gap { check: "nodes".into(), reason: "the message does not name the taint and node taints were not read".into() }),
        (Some("GW168"), None) if !primary.details.contains_key("short") => Some(Gap {
            check: "nodes".into(),
            reason: "Volcano does not name the resource that ran short and node allocatable was not read, so a GPU none can spare cannot be told from cpu or memory".into(),
        }),
        (Some("GW401" | "GW402" | "GW403"), _) => Some(Gap {
            check: "runtime config".into(),
            reason: "the runtime's handler table lives on the node; run the node-side command to confirm".into(),
        }),
        _ => None,
    }
}

fn is_autoscaler(s: &Signal) -> bool {
    matches!(
        s.reason.as_deref(),
        Some("NotTriggerScaleUp" | "TriggeredScaleUp")
    ) || s.message.contains("pod didn't trigger scale-up")
}

/// Normal events say what went right; everything else is read.
fn worth_reading(s: &Signal) -> bool {
    s.kind.as_deref() != Some("Normal") || is_autoscaler(s) || says_it_waits(s)
}

/// A Normal event that says the Pod still waits: a batch scheduler's (Volcano) `Unschedulable`, the
/// autoscaler's `NotTriggerScaleUp`, and the kubelet's `BackOff` (its image manager reports `Back-off pulling
/// image` as Normal, yet the container cannot start until the image is pulled).
fn says_it_waits(s: &Signal) -> bool {
    matches!(
        s.reason.as_deref(),
        Some("Unschedulable" | "NotTriggerScaleUp" | "BackOff")
    ) || s.message.contains("pod didn't trigger scale-up")
        // Kueue records a workload it cannot admit as a Normal `Pending` event.
        || (s.reason.as_deref() == Some("Pending") && s.message.contains("couldn't assign flavors"))
}

/// A device plugin's log that goes on to register with the kubelet (`Registered device plugin … with Kubelet`)
/// and then offers devices got past the errors it logged before: a gRPC server's broken pipe while the kubelet
/// restarted, a first try that failed. When the paste is only logs (no Pod, event, condition, or words of the
/// reporter's that tell of an error), the lines of each Pod's log before its own last registration that no
/// rule reads say nothing blocks, unless the last count it sent the kubelet is `Sending 0 device(s)`.
fn drop_errors_before_registration(ev: &Evidence, unexplained: &mut Vec<(&Signal, String)>) {
    static REGISTERED: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?i)\bRegistered device plugin\b[^\n]{0,120}?\bwith Kubelet\b")
            .expect("registration regex")
    });
    static SENDING: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?i)\bSending (\d+) device").expect("sending regex")
    });
    // A log's own line starts with its timestamp (logfmt, klog, Go's log package); the command that printed
    // it is no one's account either.
    static STAMPED: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^(?:time=|[IWEF]\d{4} |\d{4}[/-]\d{2}[/-]\d{2}[T ])")
            .expect("log line regex")
    });
    let machine = |s: &Signal| {
        s.source == Some(SignalSource::Log)
            || STAMPED.is_match(s.message.trim_start())
            || crate::shell::is_command_line(s.message.trim())
            || !looks_like_error(&s.message)
    };
    let registrations: Vec<usize> = (0..ev.signals.len())
        .filter(|&i| REGISTERED.is_match(&ev.signals[i].message))
        .collect();
    if registrations.is_empty() || unexplained.is_empty() {
        return;
    }
    let logs_only = ev.signals.iter().all(|s| {
        matches!(
            s.source,
            Some(SignalSource::Log | SignalSource::Text) | None
        ) && machine(s)
    });
    if ev.pod.is_some() || !logs_only {
        return;
    }
    // Where the log of each writer (`kubectl logs --prefix`'s Pod, or none) last registered, if it then offered
    // devices.
    let registered_at = |writer: Option<&str>| {
        let mine = |s: &Signal| same_pod(log_writer(s), writer);
        let last = *registrations
            .iter()
            .rev()
            .find(|&&i| mine(&ev.signals[i]))?;
        let offered = ev.signals[last..]
            .iter()
            .rev()
            .filter(|s| mine(s))
            .find_map(|s| SENDING.captures(&s.message).map(|c| &c[1] != "0"))
            .unwrap_or(true);
        offered.then_some(last)
    };
    let index = |s: &Signal| ev.signals.iter().position(|t| std::ptr::eq(t, s));
    unexplained.retain(|(s, _)| {
        let Some(at) = registered_at(log_writer(s)) else {
            return true;
        };
        index(s).is_none_or(|i| i >= at)
    });
}

/// Whether an unexplained signal still means the Pod is blocked.
fn is_blocking(s: &Signal) -> bool {
    // Stopping a container (its preStop hook, the kill) never keeps a Pod from starting.
    if matches!(s.reason.as_deref(), Some("FailedPreStopHook" | "Killing")) {
        return false;
    }
    // A readiness probe runs in a container that has started: the workload is not serving yet (a model still
    // loading), which keeps no GPU from it.
    if contains_ignoring_case(&s.message, "readiness probe")
        && s.message.lines().filter(|l| looks_like_error(l)).all(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("readiness probe failed") || l.contains("readiness probe errored")
        })
        && looks_like_error(&s.message)
    {
        return false;
    }
    match s.source {
        Some(SignalSource::Event | SignalSource::OwnerEvent) => {
            s.kind.as_deref() != Some("Normal") || says_it_waits(s)
        }
        Some(SignalSource::Condition) => true,
        Some(SignalSource::ContainerStatus) => !matches!(
            s.reason.as_deref(),
            Some("ContainerCreating" | "PodInitializing" | "Completed")
        ),
        Some(SignalSource::PodStatus) => true,
        // A pasted command (`$ kubectl logs … | grep -i error`) with nothing it printed on its line is no error.
        Some(SignalSource::Log) | Some(SignalSource::Text) | None => {
            let bare_command =
                crate::shell::is_command_line(s.message.trim()) && !s.message.contains(": ");
            !bare_command && looks_like_error(&s.message)
        }
        Some(
            SignalSource::Node
            | SignalSource::Runtimeclass
            | SignalSource::DevicePlugin
            | SignalSource::Clusterpolicy
            | SignalSource::Daemonset,
        ) => false,
    }
}

/// Whether `text` holds `word` (ASCII), in any case, without lowercasing `text`.
fn contains_ignoring_case(text: &str, word: &str) -> bool {
    text.as_bytes()
        .windows(word.len())
        .any(|w| w.eq_ignore_ascii_case(word.as_bytes()))
}

pub(crate) fn looks_like_error(text: &str) -> bool {
    // The cordon taint's key (`node.kubernetes.io/unschedulable`, in a manifest's tolerations) is a name, not the
    // scheduler's word.
    let mut t = text.to_ascii_lowercase();
    if t.contains("kubernetes.io/unschedulable") {
        t = t.replace("kubernetes.io/unschedulable", "");
    }
    [
        "error",
        "fail",
        "fallen off the bus",
        "unknown symbol",
        "undefined symbol",
        "disagrees about version of symbol",
        "forbidden",
        "invalid",
        "unable",
        "cannot",
        "can't",
        "denied",
        "not found",
        "insufficient",
        "nodes are available",
        "unschedulable",
        "back-off",
        "backoff",
        "refused",
        "timed out",
        "timeout",
        "trigger scale-up",
    ]
    .iter()
    .any(|w| t.contains(w))
        // `kubectl logs` on a container that is still being created is progress, not a failure.
        && !(t.contains("is waiting to start: containercreating")
            || t.contains("is waiting to start: podinitializing"))
}

fn gate_of_signal(s: &Signal) -> Gate {
    match (s.source, s.reason.as_deref()) {
        (Some(SignalSource::OwnerEvent), _) | (_, Some("FailedCreate")) => Gate::Admission,
        (_, Some("FailedScheduling" | "Unschedulable" | "SchedulerError" | "SchedulingGated")) => {
            Gate::Scheduling
        }
        (Some(SignalSource::Condition), _) => Gate::Scheduling,
        (_, Some("UnexpectedAdmissionError" | "TopologyAffinityError")) => Gate::DeviceAdmission,
        (_, Some(r)) if r.starts_with("OutOf") => Gate::DeviceAdmission,
        (
            _,
            Some(
                "FailedCreatePodSandBox"
                | "Failed"
                | "RunContainerError"
                | "CreateContainerError"
                | "StartError"
                | "BackOff"
                | "CrashLoopBackOff",
            ),
        ) => Gate::Runtime,
        (Some(SignalSource::ContainerStatus), _) => Gate::Runtime,
        // A listing's STATUS of a container that fails to run (`Init:Error`, `Init:CrashLoopBackOff`, `Error`).
        (Some(SignalSource::PodStatus), Some(r))
            if r == "Error"
                || r.starts_with("Init:") && (r.contains("Err") || r.contains("BackOff")) =>
        {
            Gate::Runtime
        }
        _ => {
            if crate::fiterror::parse(&s.message).is_some() {
                Gate::Scheduling
            } else {
                Gate::Unknown
            }
        }
    }
}

fn gate_rank(g: Gate) -> u8 {
    match g {
        Gate::Runtime => 4,
        Gate::DeviceAdmission => 3,
        Gate::Scheduling => 2,
        Gate::Admission => 1,
        Gate::Unknown => 0,
        Gate::None => 0,
    }
}

fn category_rank(c: Category) -> u8 {
    match c {
        Category::HandlerMissing => 0,
        Category::RuntimeclassNotFound => 1,
        Category::RuntimeHook => 2,
        Category::DevicePlugin => 3,
        Category::Quota => 4,
        Category::InvalidSpec => 5,
        Category::Taint => 6,
        Category::InsufficientResource => 7,
        Category::NodeAffinity => 8,
        Category::Other => 9,
        Category::Unknown => 10,
        Category::None => 11,
    }
}

/// Names and counts a template may use.
#[derive(Clone)]
struct Context {
    vars: BTreeMap<&'static str, String>,
    /// The Pod's nodeSelector names GPU labels, so the nodes it selects are GPU nodes.
    gpu_selector: bool,
    /// The Pod's selector (or affinity) may name a label of its own nodes: the input does not show it to be
    /// only the OS or the CPU architecture, which charts set by default and which leave out only a node of
    /// another kind.
    own_selector: bool,
    /// The GPU resource a next command names when neither the rule's message nor the Pod gives one: the first of
    /// `GPU_RESOURCES` that the input mentions, else the first other accelerator's resource it names, else
    /// `nvidia.com/gpu`.
    gpu_named: String,
}

/// A domain-prefixed resource name in a message (`npu.intel.com/accel`).
static RESOURCE_NAME: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"\b[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)+/[a-z0-9][a-z0-9._-]*")
        .expect("resource name regex")
});

/// The vendors' GPU resources, in the order a paste that names none falls back on them.
const GPU_RESOURCES: [&str; 5] = [
    "nvidia.com/gpu",
    "amd.com/gpu",
    "gpu.intel.com/i915",
    "gpu.intel.com/xe",
    "aws.amazon.com/neuron",
];

impl Context {
    fn new(ev: &Evidence) -> Context {
        let mut vars = BTreeMap::new();
        let pod = ev.pod.as_ref();
        if let Some(name) = ev
            .target
            .name
            .clone()
            .filter(|_| ev.target.kind == "Pod")
            // A described Node's name is the node's, not a Pod's.
            .or_else(|| {
                pod.and_then(|p| p.name.clone())
                    .filter(|_| ev.target.kind != "Node")
            })
        {
            vars.insert("pod", name);
        }
        if let Some(ns) = ev
            .target
            .namespace
            .clone()
            .or_else(|| pod.and_then(|p| p.namespace.clone()))
        {
            vars.insert("namespace", ns);
        }
        let node = pod
            .and_then(|p| p.node_name.clone())
            .or_else(|| ev.target.name.clone().filter(|_| ev.target.kind == "Node"))
            .or_else(|| ev.signals.iter().find_map(|s| s.node.clone()));
        if let Some(node) = node {
            vars.insert("node", node);
        }
        let this = (ev.target.kind != "Pod" && ev.target.name.is_some()).then(|| {
            format!(
                "{}/{}",
                ev.target.kind,
                ev.target.name.clone().unwrap_or_default()
            )
        });
        // The object whose FailedCreate events explain a refusal (a Deployment's ReplicaSet) comes first.
        let refused = ev
            .signals
            .iter()
            .find(|s| {
                s.source == Some(SignalSource::OwnerEvent)
                    && s.reason.as_deref() == Some("FailedCreate")
            })
            .and_then(|s| s.object.clone());
        let owner = refused
            .or(this)
            .or_else(|| pod.and_then(|p| p.owner.clone()))
            .or_else(|| {
                ev.signals
                    .iter()
                    .find(|s| s.source == Some(SignalSource::OwnerEvent))
                    .and_then(|s| s.object.clone())
            });
        if let Some(owner) = owner.or_else(|| {
            (ev.target.kind != "Pod").then(|| {
                format!(
                    "{}/{}",
                    ev.target.kind,
                    ev.target.name.clone().unwrap_or_default()
                )
            })
        }) {
            let (kind, name) = owner.split_once('/').unwrap_or(("pod", &owner));
            vars.insert("owner", format!("{}/{}", kind.to_ascii_lowercase(), name));
        }
        if let Some(rc) = pod.and_then(|p| p.runtime_class_name.clone()) {
            vars.insert("runtimeclass", rc);
        }
        if let Some(c) = pod.and_then(|p| p.containers.first().cloned()) {
            vars.insert("container", c);
        }
        let resource = pod.and_then(|p| {
            p.requests
                .keys()
                .find(|r| is_gpu_resource(r))
                .or_else(|| p.requests.keys().find(|r| is_extended_resource(r)))
                .cloned()
        });
        if let Some(r) = resource {
            // Under a name no rule's text uses: a rule's own `{requested}` is its message's number.
            if let Some(q) = pod.and_then(|p| p.requests.get(&r)) {
                vars.insert("resource_request", q.to_string());
            }
            vars.insert("resource", r);
        }
        let gpu_selector = pod.is_some_and(|p| p.node_selector.keys().any(|k| gpu_key(k)));
        let generic = |k: &String| {
            matches!(
                k.as_str(),
                "kubernetes.io/os"
                    | "kubernetes.io/arch"
                    | "beta.kubernetes.io/os"
                    | "beta.kubernetes.io/arch"
            )
        };
        let own_selector = !pod
            .is_some_and(|p| !p.node_selector.is_empty() && p.node_selector.keys().all(generic));
        let gpu_named = if vars.contains_key("resource") {
            GPU_RESOURCES[0].to_string()
        } else {
            GPU_RESOURCES
                .into_iter()
                .find(|r| ev.signals.iter().any(|s| s.message.contains(r)))
                .map(str::to_string)
                .or_else(|| {
                    ev.signals.iter().find_map(|s| {
                        RESOURCE_NAME
                            .find_iter(&s.message)
                            .map(|m| m.as_str())
                            .find(|r| is_gpu_resource(r) && is_extended_resource(r))
                            .map(str::to_string)
                    })
                })
                .unwrap_or_else(|| GPU_RESOURCES[0].to_string())
        };
        Context {
            vars,
            gpu_selector,
            own_selector,
            gpu_named,
        }
    }

    fn step(&self, command: &str, place: Where, why: &str) -> NextStep {
        let empty = BTreeMap::new();
        NextStep {
            command: fill(command, &self.vars, &empty, true),
            place,
            why: fill(why, &self.vars, &empty, false),
        }
    }
}

/// Fills `{name}` placeholders from the finding's captures first, then the context. Values that go into a
/// shell command are quoted unless they are plain names; a missing value stays visible as `<name>`.
fn fill(
    template: &str,
    ctx: &BTreeMap<&'static str, String>,
    local: &BTreeMap<String, String>,
    shell: bool,
) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else { break };
        let Some((name, fallback)) = crate::rules::placeholder(&after[..close]) else {
            out.push_str(&rest[..open + 1]);
            rest = after;
            continue;
        };
        out.push_str(&rest[..open]);
        let value = local.get(name).cloned().or_else(|| ctx.get(name).cloned());
        match (value, fallback) {
            (Some(v), _) if shell => out.push_str(&shell_word(&v)),
            (Some(v), _) => out.push_str(&sanitize::line(&v)),
            (None, Some(words)) => out.push_str(words),
            (None, None) => {
                out.push('<');
                out.push_str(name);
                out.push('>');
            }
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

/// A value safe to paste into a shell: plain names pass, anything else is single-quoted.
fn shell_word(v: &str) -> String {
    let v = sanitize::line(v);
    if !v.is_empty()
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-/=:,@+\\".contains(&b))
    {
        v
    } else {
        format!("'{}'", v.replace('\'', "'\\''"))
    }
}

/// Evidence lines kept per cause; repeats beyond it are counted in `details.more_evidence`.
const MAX_EVIDENCE: usize = 4;

fn push_evidence(evidence: &mut Vec<EvidenceLine>, s: &Signal) -> bool {
    let line = EvidenceLine {
        source: s.source.unwrap_or(SignalSource::Text),
        reason: s.reason.clone(),
        // A reason-only signal (a `get pods` STATUS, `Reason:` without a message) shows its reason.
        text: sanitize::clean(
            if s.message.trim().is_empty() {
                s.reason.as_deref().unwrap_or("")
            } else {
                s.message.trim()
            },
            true,
        ),
        count: s.count,
    };
    if evidence.iter().any(|e| e.text == line.text) {
        return true;
    }
    if evidence.len() >= MAX_EVIDENCE {
        return false;
    }
    evidence.push(line);
    true
}

/// The key that separates two causes of the same rule (two different taints are two causes).
fn identity(f: &Finding) -> String {
    [
        "key",
        "resource",
        "handler",
        "runtimeclass",
        "quota",
        "stage",
    ]
    .iter()
    .filter_map(|k| f.captures.get(*k))
    .cloned()
    .collect::<Vec<_>>()
    .join("|")
}

fn group(hits: &[Hit<'_>], ctx: &Context) -> Vec<Cause> {
    let mut order: Vec<(String, usize)> = Vec::new();
    let mut causes: Vec<Cause> = Vec::new();
    let mut counted_by_condition: Vec<usize> = Vec::new();
    for h in hits {
        let id = format!("{}#{}", h.finding.rule.id, identity(&h.finding));
        let idx = match order.iter().find(|(k, _)| *k == id) {
            Some((_, i)) => *i,
            None => {
                causes.push(new_cause(&h.finding, ctx));
                order.push((id, causes.len() - 1));
                causes.len() - 1
            }
        };
        let cause = &mut causes[idx];
        if let Some(w) = log_writer(h.signal)
            && !cause.writers.iter().any(|c| c == w)
        {
            cause.writers.push(w.to_string());
        }
        if !push_evidence(&mut cause.evidence, h.signal) {
            let more = cause
                .details
                .get("more_evidence")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                + 1;
            cause
                .details
                .insert("more_evidence".into(), Value::from(more));
        }
        // The condition is never truncated: prefer its counts over a cut event's. Of several events, the
        // latest (listed last, as `kubectl describe` sorts them) counts the nodes as they are now.
        let from_condition = h.signal.source == Some(SignalSource::Condition);
        if from_condition {
            counted_by_condition.push(idx);
        }
        let latest = from_condition || !counted_by_condition.contains(&idx);
        if let Some(c) = h.finding.count
            && latest
        {
            // A later event with other counts speaks for the cause: its summary says them.
            if cause
                .details
                .get("count")
                .is_some_and(|n| n.as_u64() != Some(c as u64))
            {
                let fresh = new_cause(&h.finding, ctx);
                cause.summary = fresh.summary;
                cause.next = fresh.next;
            }
            cause.details.insert("count".into(), Value::from(c));
        }
        if let Some(n) = h.finding.nodes_total
            && latest
        {
            cause.details.insert("nodes_total".into(), Value::from(n));
        }
        cause.overlapping |= h.finding.overlapping;
        if h.finding.truncated && !from_condition {
            cause
                .details
                .entry("event_truncated".into())
                .or_insert(Value::Bool(true));
        }
        if let Some(node) = &h.signal.node {
            cause
                .details
                .entry("node".into())
                .or_insert_with(|| Value::from(node.clone()));
        }
    }
    causes
}

fn new_cause(f: &Finding, ctx: &Context) -> Cause {
    let rule = f.rule;
    let mut local: BTreeMap<String, String> = f.captures.clone();
    if let Some(r) = local.get("docker_runtime").cloned() {
        local.entry("handler".into()).or_insert(r);
    }
    if let Some(r) = local.get("lookup").cloned() {
        local.entry("runtimeclass".into()).or_insert(r);
    }
    if let Some(key) = local.get("key").cloned() {
        let taint = match local.get("value").filter(|v| !v.is_empty()) {
            Some(v) => format!("{key}={v}"),
            None => key,
        };
        local.insert("taint".into(), taint);
    }
    local.insert(
        "count".into(),
        f.count
            .map_or_else(|| "some".to_string(), |c| c.to_string()),
    );
    if let Some(n) = f.nodes_total {
        local.insert("nodes_total".into(), n.to_string());
    }
    let resource = local
        .get("resource")
        .cloned()
        .or_else(|| ctx.vars.get("resource").cloned());
    if let Some(r) = &resource {
        local.insert("resource".into(), r.clone());
        local.insert("resource_jsonpath".into(), r.replace('.', "\\."));
    }

    let mut details: BTreeMap<String, Value> = BTreeMap::new();
    for (k, v) in &f.captures {
        if matches!(k.as_str(), "docker_runtime" | "lookup") {
            continue;
        }
        details.insert(k.clone(), Value::from(sanitize::line(v)));
    }
    if let Some(h) = local.get("handler") {
        details.insert("handler".into(), Value::from(sanitize::line(h)));
    }
    if let Some(rc) = local.get("runtimeclass") {
        details.insert("runtimeclass".into(), Value::from(sanitize::line(rc)));
    }
    if let Some(t) = local
        .get("taint")
        .filter(|_| f.captures.contains_key("key"))
    {
        details.insert("taint".into(), Value::from(sanitize::line(t)));
    }
    if let Some(r) = &resource {
        details.insert("resource".into(), Value::from(sanitize::line(r)));
    }

    // A command must run as printed: when the input names no resource, the nodes' GPU column reads the one most
    // tickets are about.
    let mut for_next = local.clone();
    if resource.is_none() {
        for_next.insert("resource".into(), ctx.gpu_named.clone());
        for_next.insert(
            "resource_jsonpath".into(),
            ctx.gpu_named.replace('.', "\\."),
        );
    }
    let next = rule
        .next
        .iter()
        .map(|n| NextStep {
            command: fill(n.command, &ctx.vars, &for_next, true),
            place: n.place,
            why: fill(n.why, &ctx.vars, &for_next, false),
        })
        .collect();
    let mut category = rule.category;
    let mut summary = fill(rule.summary, &ctx.vars, &local, false);
    // A GPU that preemption could free on no node (Kubernetes 1.34 and later): no node short of it has that many
    // allocatable. Unless the Pod asks for more than one, that is none at all: the advertisement is missing.
    let one_or_unknown = ctx
        .vars
        .get("resource_request")
        .is_none_or(|q| q.trim() == "1");
    if rule.id == "GW105"
        && f.preemption_helps_nowhere
        && resource.as_deref().is_some_and(is_gpu_resource)
        && one_or_unknown
    {
        category = Category::DevicePlugin;
        summary = fill(
            "{count} node(s) lack {resource}, and preemption could free it on none: none of them has it allocatable at all, so its device plugin advertises none there",
            &ctx.vars,
            &local,
            false,
        );
        details.insert("preemption".into(), Value::from("helps on no node"));
    }
    Cause {
        category,
        rule: Some(rule.id),
        name: Some(rule.name),
        gate: rule.gate,
        summary,
        evidence: Vec::new(),
        details,
        next,
        fix: rule.fix.map(|f| fill(f, &ctx.vars, &local, false)),
        overlapping: f.overlapping,
        writers: Vec::new(),
    }
}

/// The index of the cause to fix first for the GPU. The furthest gate reached wins; past scheduling, a
/// GPU cause (handler, hook, device plugin) beats a cause that is not a GPU gate (image, network, mount),
/// because a device-admission rejection is final and hook failures precede the noise they cause.
fn pick_primary(causes: &[Cause], ctx: &Context) -> usize {
    let mut primary = pick_by_gate(causes, ctx);
    // A rule that refines the chosen one says more about the same failure, also when the two read different
    // lines (one component's log, each line its own record), as long as it is at the same gate. The table has
    // no cycles; the bound is a guard.
    for _ in 0..causes.len() {
        let Some(general) = causes[primary].rule else {
            break;
        };
        // Only within the gate: a finding that blocks nothing (a shared GPU's OOM) does not stand for a
        // failure another line reports.
        let gate = causes[primary].gate;
        // Nor does a workload's own report (its OOM) stand for the failure another line reports, unless it is
        // a report at a GPU gate (`nvidia-smi` in the container without its CUDA library) that says more.
        // A reason about another resource (a FitError's KubeVirt device beside its GPU) is another cause.
        fn resource(c: &Cause) -> Option<&str> {
            c.details.get("resource").and_then(Value::as_str)
        }
        match causes.iter().position(|c| {
            c.gate == gate
                && resource(c)
                    .zip(resource(&causes[primary]))
                    .is_none_or(|(a, b)| a == b)
                && c.rule.is_some_and(|r| {
                    crate::rules::refines(r, general)
                        && (!crate::rules::is_workload_report(r) || is_gpu_category(c.category))
                })
        }) {
            Some(specific) => primary = specific,
            None => break,
        }
    }
    primary
}

/// Whether a category is one of the GPU's gates (not `other`, `none` or `unknown`).
fn is_gpu_category(c: Category) -> bool {
    !matches!(c, Category::Other | Category::None | Category::Unknown)
}

fn pick_by_gate(causes: &[Cause], ctx: &Context) -> usize {
    // A program's own error (GW528) says only that some container ran: a paste that also holds a cause at an
    // earlier gate is about what that cause stops (a worker Pending beside its head's log). The reporter's
    // words and findings that block nothing do not count.
    // A report at a GPU gate (a CUDA image that finds no driver, GW461) also yields to a GPU cause at its own
    // gate, which is what leaves the container without its driver, unless it says more about that cause
    // (GW462 refines GW420).
    let weak = |i: usize| {
        causes[i].rule.is_some_and(crate::rules::is_workload_report)
            && causes.iter().any(|c| {
                !c.rule.is_some_and(crate::rules::is_workload_report)
                    && (matches!(
                        c.gate,
                        Gate::Admission | Gate::Scheduling | Gate::DeviceAdmission
                    ) || (is_gpu_category(causes[i].category)
                        && is_gpu_category(c.category)
                        && !causes[i]
                            .rule
                            .zip(c.rule)
                            .is_some_and(|(report, other)| crate::rules::refines(report, other))))
                    && !matches!(c.category, Category::None | Category::Unknown)
            })
    };
    let late: Vec<usize> = (0..causes.len())
        .filter(|&i| matches!(causes[i].gate, Gate::Runtime | Gate::DeviceAdmission) && !weak(i))
        .collect();
    // A crash loop is a symptom: a GPU-stack component's own log beside it says why the component exits. So is
    // NVML's `Unknown Error` (GW432) beside a component that finds no usable GPU on the node (its NVML fails,
    // it finds no device or no driver): no GPU was handed to a container to lose, and the node's own NVML fails.
    let component_log = (0..causes.len())
        .filter(|&i| {
            causes[i]
                .rule
                .is_some_and(crate::rules::reads_component_log)
        })
        .min_by_key(|&i| (category_rank(causes[i].category), i));
    let finds_no_gpu = |i: usize| {
        matches!(
            causes[i].rule,
            Some("GW122" | "GW128" | "GW151" | "GW165" | "GW176")
        )
    };
    if let Some(i) = component_log
        && !late.is_empty()
        && late.iter().all(|&j| {
            causes[j].rule == Some("GW505") || (causes[j].rule == Some("GW432") && finds_no_gpu(i))
        })
    {
        // With the node's own NVML failing (GW432), a plugin that cannot load NVML (GW151) lacks the driver
        // rather than the nvidia runtime: a finding of the plugin's that blames the node says so.
        if causes[i].rule == Some("GW151")
            && late.iter().any(|&j| causes[j].rule == Some("GW432"))
            && let Some(k) = (0..causes.len())
                .find(|&k| finds_no_gpu(k) && causes[k].category == Category::DevicePlugin)
        {
            return k;
        }
        return i;
    }
    if !late.is_empty() {
        return *late
            .iter()
            .min_by_key(|&&i| {
                // A crash loop whose cause is inside the component says less than any message that names one.
                let unexplained_crash = causes[i].rule == Some("GW505")
                    && matches!(causes[i].category, Category::Unknown | Category::Other);
                (
                    // CRI-O's start-up warning that it dropped a handler (GW458) may be about a handler the
                    // Pod does not use: any other runtime cause of the Pod's own comes first.
                    causes[i].rule == Some("GW458"),
                    unexplained_crash,
                    // A program's own error yields to any other cause at these gates (a GPU's Xid, an image
                    // that cannot run on it), and explains a crash loop.
                    causes[i].rule == Some(crate::rules::WORKLOAD_ERROR),
                    causes[i].category == Category::Other,
                    // The runtime's bare "OCI runtime create failed" yields to a GPU cause that says why.
                    is_fallback(&causes[i]) == 2,
                    category_rank(causes[i].category),
                    is_fallback(&causes[i]),
                    4 - gate_rank(causes[i].gate),
                    i,
                )
            })
            .unwrap_or(&0);
    }
    let top_gate = (0..causes.len())
        .filter(|&i| !weak(i))
        .map(|i| gate_rank(causes[i].gate))
        .max()
        .unwrap_or(0);
    let in_gate: Vec<usize> = (0..causes.len())
        .filter(|&i| gate_rank(causes[i].gate) == top_gate && !weak(i))
        .collect();
    if causes[in_gate[0]].gate == Gate::Scheduling
        && let Some(i) = scheduling_primary(causes, &in_gate, ctx)
    {
        return i;
    }
    *in_gate
        .iter()
        .min_by_key(|&&i| {
            (
                category_rank(causes[i].category),
                is_fallback(&causes[i]),
                i,
            )
        })
        .unwrap_or(&0)
}

/// Catch-all rules that a more specific rule of the same category should beat (2: the last resort). A crash
/// loop that the component it hits made a GPU cause (a validator's check) is a symptom: any message of that
/// category says more.
fn is_fallback(c: &Cause) -> u8 {
    match c.rule {
        Some("GW505") => 3,
        Some("GW418") => 2,
        Some("GW211" | "GW305" | "GW410" | "GW118" | "GW417") => 1,
        // The reporter's words yield to a component's message of the same category.
        Some(id) if crate::rules::is_hearsay(id) => 1,
        _ => 0,
    }
}

/// A cause's node (or group) count for a summary, or the words to say when the message gave none.
fn count_or(c: &Cause, none: &str) -> String {
    c.details
        .get("count")
        .and_then(Value::as_u64)
        .map_or_else(|| none.to_string(), |n| n.to_string())
}

fn detail<'c>(c: &'c Cause, key: &str) -> Option<&'c str> {
    c.details.get(key).and_then(Value::as_str)
}

fn gpu_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    [
        "gpu",
        "nvidia",
        "amd.com",
        "accelerator",
        "habana",
        "neuron",
        "tpu",
    ]
    .iter()
    .any(|w| k.contains(w))
}

/// Reasons about a FitError: each node reports only its first failing filter, in the order
/// NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit, volume filters,
/// PodTopologySpread, InterPodAffinity, DynamicResources. So:
/// 1. a node that failed a filter *after* NodeResourcesFit had the GPU free: that filter is what to fix;
/// 2. a taint whose key names a GPU marks the GPU nodes (they never reach the resource check), and so does a
///    dedicated pool's taint, unless the nodes short of the GPU passed a selector of the Pod's own (not only
///    the OS or the architecture) that other nodes failed: then they are the nodes the Pod is meant for;
/// 3. otherwise the resource shortfall on the nodes the Pod may use;
/// 4. a taint beside a selector mismatch: no node both passed the taints and matched the selector, so the
///    selected nodes are tainted, or none exists. A named custom taint, or an unnamed one when the Pod selects
///    GPU labels (so the selected nodes are GPU nodes), says the selected nodes are the tainted ones; an
///    unnamed taint beside any other selector is most often the control plane, and a system pool's taint
///    (`CriticalAddonsOnly`) marks nodes that hold no GPU, so the selector is what to fix;
/// 5. control-plane, node-condition and absent-node reasons only when nothing else is left.
fn scheduling_primary(causes: &[Cause], idx: &[usize], ctx: &Context) -> Option<usize> {
    let gpu_selector = ctx.gpu_selector;
    let find = |pred: &dyn Fn(&Cause) -> bool| idx.iter().copied().find(|&i| pred(&causes[i]));
    let rule = |c: &Cause, id: &str| c.rule == Some(id);
    let after_fit = |c: &Cause| {
        rule(c, "GW111")
            || rule(c, "GW113")
            || (rule(c, "GW110") && c.details.contains_key("count"))
    };
    // The scheduler never considers a Pod that still has scheduling gates: a FailedScheduling beside its
    // gated status is another Pod's, or from before the gates.
    if let Some(g) = find(&|c| rule(c, "GW115")) {
        return Some(g);
    }
    // A system pool's taint (AKS's and EKS's `CriticalAddonsOnly`, an infra or control-plane role) keeps
    // workloads off nodes that are not where the GPUs are.
    let system_taint = |c: &Cause| {
        rule(c, "GW103")
            && detail(c, "key").is_some_and(|k| {
                k.starts_with("node-role.kubernetes.io/") || k == "CriticalAddonsOnly"
            })
    };
    let named_custom_taint =
        |c: &Cause| (rule(c, "GW103") && !system_taint(c)) || (gpu_selector && rule(c, "GW104"));
    let count = |c: &Cause| c.details.get("count").and_then(Value::as_u64);
    // A reason that every node reports blocks every node: it is what to fix.
    let universal = |c: &Cause| {
        count(c).is_some() && count(c) == c.details.get("nodes_total").and_then(Value::as_u64)
    };
    // Old layouts list every failing predicate per node; the most widespread one is the blocker.
    let widest = || {
        idx.iter()
            .copied()
            .filter(|&i| causes[i].overlapping && count(&causes[i]).is_some())
            .max_by_key(|&i| {
                (
                    count(&causes[i]),
                    std::cmp::Reverse(category_rank(causes[i].category)),
                )
            })
    };
    // A taint on a dedicated pool (not the control plane, infra or a node condition) marks where the GPUs
    // are: the untainted nodes said Insufficient, the pool never reached the resource check.
    let pool_taint = |c: &Cause| rule(c, "GW103") && !system_taint(c);
    // A device plugin that crashes, cannot start or finds no GPU (its own log, or a node listing that shows
    // no GPU advertised) explains a GPU shortfall.
    let gpu_short =
        find(&|c| rule(c, "GW105") && detail(c, "resource").is_some_and(is_gpu_resource));
    // The GPU stack not installed at all (its chart, OpenShift's Driver Toolkit) explains it too.
    let plugin_down = find(&|c| {
        matches!(
            c.rule,
            Some("GW131" | "GW135" | "GW136" | "GW137" | "GW178" | "GW179")
        ) || c.rule.is_some_and(crate::rules::reads_component_log)
    });
    if let (Some(_), Some(p)) = (gpu_short, plugin_down) {
        return Some(p);
    }
    // A GPU-sharing scheduler's own quota check (HAMi's ResourceQuotaNotFit in its FilteringFailed event)
    // says why its nodes did not fit (its FailedScheduling's NodeUnfitPod, or "not enough"); so does its
    // "node unregistered" (no devices) beside a "not enough" that counts no node (HAMi's "all node scores do
    // not meet").
    if let Some(short) = find(&|c| rule(c, "GW119")) {
        let why = find(&|c| rule(c, "GW121"))
            .or_else(|| find(&|c| rule(c, "GW120")).filter(|_| count(&causes[short]).is_none()));
        if let Some(w) = why {
            return Some(w);
        }
    }
    // The scheduler's filter order: of reasons every node reports, the earliest filter is the one a
    // current scheduler would have named.
    let filter_order = |c: &Cause| match c.rule {
        Some("GW109") => 0,
        Some("GW118") => 1,
        Some("GW101" | "GW102" | "GW103" | "GW104" | "GW125") => 2,
        Some("GW108" | "GW126") => 3,
        Some("GW112") => 4,
        Some("GW105" | "GW106" | "GW107" | "GW119" | "GW168") => 5,
        _ => 6,
    };
    // Where every node lists every reason (old layouts), a GPU that no node has free is what to fix: a
    // selector or taint on the same nodes only says they are not the GPU nodes the pod is waiting for.
    let everywhere_short = idx.iter().copied().find(|&i| {
        let c = &causes[i];
        c.overlapping
            && universal(c)
            && rule(c, "GW105")
            && detail(c, "resource").is_some_and(is_gpu_resource)
    });
    // Whether every reason that every node reports is one of `rules`.
    let universal_only = |rules: &[&str]| {
        idx.iter()
            .copied()
            .filter(|&i| universal(&causes[i]))
            .all(|i| causes[i].rule.is_some_and(|r| rules.contains(&r)))
    };
    let only_placement = universal_only(&["GW103", "GW104", "GW105", "GW108", "GW125", "GW126"]);
    if let Some(i) = everywhere_short.filter(|_| only_placement) {
        return Some(i);
    }
    // The existing nodes all fail on placement and Karpenter says why it cannot add one that fits, or the cloud
    // has no capacity for the node an autoscaler tried to add: the nodes the Pod is meant for do not exist yet,
    // so the provisioner's reason is what to fix.
    // A launch the cloud refused (no capacity, an account limit, a subnet and security group that do not
    // match) comes before Karpenter's "no instance type met all requirements", which follows it: Karpenter
    // takes the offerings that failed out of its choice.
    let refused_launch = find(&|c| rule(c, "GW163") || rule(c, "GW522"));
    // Every node of a FitError fails on placement: one reason covers them all, or the reasons of a current
    // layout (one per node) are all placement reasons and add up to every node.
    let placed_out = {
        let fit: Vec<&Cause> = idx
            .iter()
            .map(|&i| &causes[i])
            .filter(|c| count(c).is_some())
            .collect();
        let total = fit
            .iter()
            .find_map(|c| c.details.get("nodes_total").and_then(Value::as_u64));
        fit.iter()
            .any(|c| universal(c) && c.rule.is_some_and(|r| PLACEMENT.contains(&r)))
            || (!fit.is_empty()
                && fit
                    .iter()
                    .all(|c| !c.overlapping && c.rule.is_some_and(|r| PLACEMENT.contains(&r)))
                && total.is_some_and(|t| fit.iter().filter_map(|c| count(c)).sum::<u64>() == t))
    };
    let karpenter = find(&|c| rule(c, "GW126"))
        .map(|k| refused_launch.unwrap_or(k))
        .or_else(|| find(&|c| rule(c, "GW125") && detail(c, "taint").is_some_and(gpu_key)))
        .or_else(|| find(&|c| rule(c, "GW125") || rule(c, "GW130") || rule(c, "GW163")))
        // A launch the cloud refused, with no word from Karpenter about its pools: only when placement reasons
        // shut out every existing node (else the FitError's own reasons say what to fix).
        .or(refused_launch.filter(|_| placed_out));
    const PLACEMENT: [&str; 6] = ["GW101", "GW102", "GW103", "GW104", "GW108", "GW109"];
    let placement_only = universal_only(&PLACEMENT);
    if let Some(k) = karpenter.filter(|_| placement_only) {
        return Some(k);
    }
    // Only the resource check failed, and fewer nodes lack the GPU than were counted: the others had a GPU free
    // and lack cpu, memory or a Pod slot (the only other reasons), which is what to fix.
    let gpu_free_elsewhere = gpu_short.filter(|&g| {
        let total = causes[g].details.get("nodes_total").and_then(Value::as_u64);
        count(&causes[g]).zip(total).is_some_and(|(n, t)| n < t)
            && idx.iter().all(|&i| {
                i == g
                    || ((rule(&causes[i], "GW106") || rule(&causes[i], "GW107"))
                        && causes[i].details.get("nodes_total").and_then(Value::as_u64) == total)
            })
    });
    if let Some(c) =
        gpu_free_elsewhere.and_then(|_| find(&|c| rule(c, "GW106") || rule(c, "GW107")))
    {
        return Some(c);
    }
    idx.iter()
        .copied()
        .filter(|&i| universal(&causes[i]))
        // One filter reports every resource a node lacks: the GPU before cpu or memory.
        .min_by_key(|&i| {
            (
                filter_order(&causes[i]),
                causes[i].category == Category::Other,
                i,
            )
        })
        .or_else(widest)
        .or_else(|| find(&after_fit))
        // Karpenter: a pool the Pod's requirements rule out is what to fix, beside pools it is tainted away from.
        .or_else(|| find(&|c| rule(c, "GW126")))
        .or_else(|| {
            find(&|c| {
                rule(c, "GW103")
                    && (detail(c, "key").is_some_and(gpu_key)
                        || detail(c, "value").is_some_and(gpu_key))
            })
        })
        // Nodes that said Insufficient passed the Pod's own selector where others did not: they are the nodes
        // it is meant for, and their GPUs are taken. (A selector of only the OS or the architecture leaves out
        // a node of another kind, and says nothing of where the GPUs are.)
        .or_else(|| {
            find(&|c| rule(c, "GW108"))
                .filter(|_| ctx.own_selector)
                .and_then(|_| {
                    find(&|c| {
                        rule(c, "GW105") && detail(c, "resource").is_some_and(is_gpu_resource)
                    })
                })
        })
        .or_else(|| find(&pool_taint))
        .or_else(|| {
            find(&|c| {
                (rule(c, "GW105") && detail(c, "resource").is_some_and(is_gpu_resource))
                    || rule(c, "GW119")
            })
        })
        .or_else(|| {
            find(&|c| rule(c, "GW105") || rule(c, "GW114") || rule(c, "GW120") || rule(c, "GW168"))
        })
        // Of the nodes short of cpu, memory or Pod slots, the widest shortfall is what to fix first.
        .or_else(|| {
            idx.iter()
                .copied()
                .filter(|&i| rule(&causes[i], "GW106") || rule(&causes[i], "GW107"))
                .max_by_key(|&i| (count(&causes[i]), std::cmp::Reverse(i)))
        })
        .or_else(|| {
            let affinity = find(&|c| rule(c, "GW108"));
            match (affinity, find(&named_custom_taint)) {
                (Some(_), Some(t)) => Some(t),
                (Some(a), None) => Some(a),
                (None, Some(t)) => Some(t),
                (None, None) => find(&|c| rule(c, "GW104")),
            }
        })
        .or_else(|| {
            idx.iter()
                .copied()
                .filter(|&i| !matches!(causes[i].rule, Some("GW101" | "GW102" | "GW118")))
                .min_by_key(|&i| (category_rank(causes[i].category), i))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::{PodFacts, Signal};

    fn event(reason: &str, message: &str) -> Signal {
        Signal {
            source: Some(SignalSource::Event),
            reason: Some(reason.into()),
            kind: Some("Warning".into()),
            message: message.into(),
            count: 1,
            ..Default::default()
        }
    }

    /// A line of a component's or a program's log.
    fn log(message: &str) -> Signal {
        Signal {
            source: Some(SignalSource::Log),
            message: message.into(),
            count: 1,
            ..Default::default()
        }
    }

    fn ev(signals: Vec<Signal>) -> Evidence {
        Evidence {
            signals,
            ..Default::default()
        }
    }

    #[test]
    fn a_shortfall_at_the_kubelet_is_the_plugin_for_gpus_and_other_for_memory() {
        let d = diagnose(&ev(vec![event(
            "OutOfnvidia.com/gpu",
            "Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 0, capacity: 0",
        )]));
        assert_eq!(d.primary, Category::DevicePlugin);
        assert_eq!(d.gate, Gate::DeviceAdmission);
        let d = diagnose(&ev(vec![event(
            "OutOfmemory",
            "Pod was rejected: Node didn't have enough resource: memory, requested: 2147483648, used: 32290433792, capacity: 32457011200",
        )]));
        assert_eq!(d.primary, Category::Other);
        let d = diagnose(&ev(vec![event("OutOfalpha.kubernetes.io/nvidia-gpu", "")]));
        assert_eq!(d.primary, Category::InsufficientResource);
    }

    #[test]
    fn a_pending_pod_with_no_word_about_it_is_unknown_not_fine() {
        let pending = Evidence {
            pod: Some(PodFacts {
                phase: Some("Pending".into()),
                scheduled: Some("False".into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        let d = diagnose(&pending);
        assert_eq!((d.primary, d.gate), (Category::Unknown, Gate::Scheduling));
        // Once the scheduler has placed it and an event says so, it is past scheduling; with no word from the
        // kubelet since, the input does not say what holds it.
        let mut placed = pending.clone();
        placed.signals.push(Signal {
            kind: Some("Normal".into()),
            ..event(
                "Scheduled",
                "Successfully assigned ml/trainer-0 to gpu-node-1",
            )
        });
        let d = diagnose(&placed);
        assert_eq!((d.primary, d.gate), (Category::Unknown, Gate::Unknown));
        assert!(
            d.causes[0].summary.contains("placed on node gpu-node-1"),
            "{d:?}"
        );
        assert_eq!(
            d.causes[0].next[0].command,
            "journalctl -u kubelet --since -1h | grep trainer-0"
        );
        // The kubelet's word after it (the container started) says it got past the node's gates.
        let mut started = placed.clone();
        started.signals.push(Signal {
            kind: Some("Normal".into()),
            ..event("Started", "Started container trainer")
        });
        assert_eq!(diagnose(&started).primary, Category::None);
    }

    /// A loader's or the kernel's word that a symbol is missing is an error, though it says neither `error` nor
    /// `fail`.
    #[test]
    fn a_missing_symbol_is_an_error() {
        for line in [
            "undefined symbol: nvmlDeviceGetPciInfo_v3",
            "nvidia: Unknown symbol drm_gem_object_free (err -2)",
            "nvidia: disagrees about version of symbol module_layout",
        ] {
            assert!(looks_like_error(line), "{line}");
        }
        let d = diagnose(&ev(vec![log("undefined symbol: nvmlDeviceGetPciInfo_v3")]));
        assert_eq!(
            d.causes[0].summary,
            "something blocks the pod but no rule explains the message"
        );
    }

    #[test]
    fn a_failed_pod_or_an_input_with_nothing_to_read_is_unknown_not_fine() {
        // Describe output cut off after `Status: Failed`.
        let failed = Evidence {
            pod: Some(PodFacts {
                phase: Some("Failed".into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        let d = diagnose(&failed);
        assert_eq!((d.primary, d.gate), (Category::Unknown, Gate::Unknown));
        // An Events table with no rows: no Pod, no event, no message.
        let d = diagnose(&Evidence::default());
        assert_eq!(d.primary, Category::Unknown);
        assert!(d.gaps.iter().any(|g| g.check == "input"), "{d:?}");
        // The autoscaler's Normal event that it could not help, cut off before its reason.
        let d = diagnose(&ev(vec![Signal {
            kind: Some("Normal".into()),
            ..event(
                "NotTriggerScaleUp",
                "pod didn't trigger scale-up: 1 max node group size",
            )
        }]));
        assert_eq!((d.primary, d.gate), (Category::Unknown, Gate::Scheduling));
    }

    #[test]
    fn a_normal_back_off_pulling_the_image_still_blocks() {
        // The kubelet's image manager reports the pull back-off as a Normal event.
        let pulling = Evidence {
            target: Target {
                kind: "Pod".into(),
                name: Some("nvidia-driver-daemonset-b4lsh".into()),
                ..Default::default()
            },
            signals: vec![Signal {
                kind: Some("Normal".into()),
                ..event(
                    "BackOff",
                    "Back-off pulling image \"nvcr.io/nvidia/driver:470.82.01-sles15.3\"",
                )
            }],
            ..Default::default()
        };
        let d = diagnose(&pulling);
        assert_eq!(d.causes[0].rule, Some("GW501"));
        // The driver's image: no driver, so no GPU to advertise.
        assert_eq!(d.primary, Category::DevicePlugin);
        // Another Normal event still says what went right.
        let mut pulled = pulling.clone();
        pulled.signals[0] = Signal {
            kind: Some("Normal".into()),
            ..event(
                "Pulled",
                "Successfully pulled image \"nvcr.io/nvidia/driver:470\"",
            )
        };
        assert_eq!(diagnose(&pulled).primary, Category::None);
    }

    #[test]
    fn gpu_taint_beats_insufficient_on_the_other_nodes() {
        let d = diagnose(&ev(vec![event(
            "FailedScheduling",
            "0/3 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}, 2 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.",
        )]));
        assert_eq!(d.primary, Category::Taint);
        assert_eq!(d.gate, Gate::Scheduling);
        assert_eq!(d.causes.len(), 2);
        assert_eq!(d.causes[0].details["taint"], "nvidia.com/gpu=present");
    }

    #[test]
    fn a_programs_own_error_does_not_beat_a_gpu_or_scheduling_cause() {
        // vllm-project/vllm#15613's ValueError (GW528) beside a GPU shortfall, or beside GW517's Xid.
        let own = Signal {
            message: "ValueError: invalid literal for int() with base 10: 'tcp://10.43.1.39:8000'"
                .into(),
            ..Default::default()
        };
        let short = event(
            "FailedScheduling",
            "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
        );
        let d = diagnose(&ev(vec![own.clone(), short]));
        assert_eq!(d.primary, Category::InsufficientResource, "{d:?}");
        let xid = Signal {
            message: crate::rules::by_id("GW517").unwrap().example.into(),
            ..Default::default()
        };
        let d = diagnose(&ev(vec![own.clone(), xid]));
        assert_eq!(d.causes[0].rule, Some("GW517"), "{d:?}");
        let d = diagnose(&ev(vec![own]));
        assert_eq!(d.causes[0].rule, Some("GW528"), "{d:?}");
    }

    #[test]
    fn control_plane_taint_does_not_beat_insufficient() {
        let d = diagnose(&ev(vec![event(
            "FailedScheduling",
            "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 Insufficient nvidia.com/gpu.",
        )]));
        assert_eq!(d.primary, Category::InsufficientResource);
        assert_eq!(d.causes[0].details["count"], 2);
        assert_eq!(d.causes[0].details["nodes_total"], 3);
    }

    #[test]
    fn gpu_short_on_the_selected_nodes_beats_a_pool_taint() {
        // A pool taint and a shortfall alone: the pool holds the GPUs.
        let d = diagnose(&ev(vec![event(
            "FailedScheduling",
            "0/3 nodes are available: 1 node(s) had untolerated taint {restricted: true}, 2 Insufficient nvidia.com/gpu.",
        )]));
        assert_eq!(d.primary, Category::Taint);
        // The nodes short of the GPU passed a selector that two others failed: they are the Pod's nodes.
        let d = diagnose(&ev(vec![event(
            "FailedScheduling",
            "0/4 nodes are available: 1 Insufficient cpu, 1 Insufficient gpu.intel.com/i915, 1 node(s) had untolerated taint {restricted: true}, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 1 No preemption victims found for incoming pod, 3 Preemption is not helpful for scheduling.",
        )]));
        assert_eq!(d.primary, Category::InsufficientResource);
        assert_eq!(d.causes[0].details["resource"], "gpu.intel.com/i915");
        // A selector of only the OS leaves out a node of another kind: the pool's taint is still where the
        // GPUs are.
        let mut generic = ev(vec![event(
            "FailedScheduling",
            "0/7 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 node(s) had untolerated taint {dedicated: ml}, 4 Insufficient nvidia.com/gpu.",
        )]);
        generic.pod = Some(PodFacts {
            node_selector: [("kubernetes.io/os".to_string(), "linux".to_string())].into(),
            ..Default::default()
        });
        assert_eq!(diagnose(&generic).primary, Category::Taint);
    }

    /// Volcano's fit error names no resource; its log's request-against-idle lines do (volcano-sh/volcano#474:
    /// the P40 node has no GPU idle, while cpu and memory are requested at zero).
    #[test]
    fn a_volcano_log_names_the_resource_its_fit_error_does_not() {
        let failed = |node: &str| {
            format!(
                "I1009 06:42:18.755856       1 scheduler_helper.go:49] Predicates failed for task <default/lm-mpi-job-mpiworker-0> on node <{node}>: task default/lm-mpi-job-mpiworker-0 on node {node} fit failed: node(s) resource fit failed"
            )
        };
        let p40 = "I1009 06:42:18.755730       1 scheduler_helper.go:44] Considering Task <default/lm-mpi-job-mpiworker-0> on node <p40-4>: <cpu 0.00, memory 0.00, nvidia.com/gpu 1000.00> vs. <cpu 54020.00, memory 132631269376.00, hugepages-1Gi 0.00, hugepages-2Mi 0.00, nvidia.com/gpu 0.00>";
        let signals: Vec<Signal> = [failed("p40-3"), p40.to_string(), failed("p40-4")]
            .iter()
            .map(|l| log(l))
            .collect();
        // The log (its last 30 lines) holds p40-4's request line, not p40-3's.
        let shortfall = volcano_shortfall(&signals).unwrap();
        assert_eq!(shortfall.short, ["nvidia.com/gpu"]);
        assert_eq!(shortfall.shown, ["p40-4"]);
        assert_eq!(shortfall.refused, 2);
        assert_eq!(shortfall.lines, [p40]);
        let d = diagnose(&Evidence {
            signals: signals.clone(),
            ..Default::default()
        });
        assert_eq!(d.primary, Category::InsufficientResource);
        let c = &d.causes[0];
        assert_eq!(c.rule, Some("GW168"));
        assert_eq!(
            c.details.get("short").and_then(Value::as_str),
            Some("nvidia.com/gpu")
        );
        assert!(
            c.summary.ends_with(
                "less nvidia.com/gpu idle than the task asks for on node p40-4 (1 of the 2 nodes that refused it)"
            ),
            "{}",
            c.summary
        );
        assert!(
            c.evidence
                .iter()
                .any(|e| e.text.contains("Considering Task"))
        );
        assert!(
            d.gaps
                .iter()
                .all(|g| !g.reason.contains("Volcano does not name")),
            "{:?}",
            d.gaps
        );
        // The request line of a node the task was not refused on (the one it went to: the same line with the
        // idle resources the log's `After allocated Task … to Node <titanxp-4>: idle <…>` gives) says nothing.
        let fits = "Considering Task <default/lm-mpi-job-mpiworker-0> on node <titanxp-4>: <cpu 0.00, memory 0.00, nvidia.com/gpu 1000.00> vs. <cpu 31650.00, memory 270108176384.00, nvidia.com/gpu 7000.00>";
        assert_eq!(volcano_shortfall(&[log(&failed("p40-3")), log(fits)]), None);
        // Without the request lines the fit error stays unexplained, and the gap says so.
        let d = diagnose(&Evidence {
            signals: vec![log(&failed("p40-3"))],
            ..Default::default()
        });
        assert!(!d.causes[0].details.contains_key("short"));
        assert!(
            d.gaps
                .iter()
                .any(|g| g.reason.contains("Volcano does not name")),
            "{:?}",
            d.gaps
        );
    }

    #[test]
    fn a_gated_pod_is_held_by_its_gates_not_by_a_fit_error_beside_it() {
        let mut gated = ev(vec![
            event(
                "FailedScheduling",
                "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
            ),
            Signal {
                source: Some(SignalSource::PodStatus),
                reason: Some("SchedulingGated".into()),
                count: 1,
                ..Default::default()
            },
        ]);
        assert_eq!(diagnose(&gated).causes[0].rule, Some("GW115"));
        gated.signals.pop();
        assert_eq!(diagnose(&gated).causes[0].rule, Some("GW105"));
    }

    #[test]
    fn a_workloads_oom_or_licence_does_not_place_a_pending_pod() {
        let short = event(
            "FailedScheduling",
            "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
        );
        for report in [
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
            crate::rules::by_id("GW530").unwrap().example,
        ] {
            let d = diagnose(&ev(vec![short.clone(), log(report)]));
            assert_eq!(d.primary, Category::InsufficientResource, "{d:?}");
            assert_eq!(d.causes[0].rule, Some("GW105"), "{d:?}");
        }
        // CUDA's OOM on its own line is no account of another HAMi-core failure.
        let d = diagnose(&ev(vec![
            log(
                "[HAMI-core ERROR (pid:565 thread=140267266266944 multiprocess_memory_limit.c:831)]: Illegal device id: 850725928",
            ),
            log("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB."),
        ]));
        assert_eq!(d.causes[0].rule, Some("GW439"), "{d:?}");
        // HAMi's own account of the OOM (the share is used up) is what it is, on its line or another.
        let hami_oom = "[HAMI-core ERROR (pid:30 thread=140382094939712 allocator.c:53)]: Device 0 OOM 15032385536 / 15032385536";
        let res2 = "[HAMI-core ERROR (pid:7 thread=140360328144640 allocator.c:115)]: cuMemoryAllocate failed res=2";
        for signals in [
            vec![log(&format!("{hami_oom} {res2}"))],
            vec![log(hami_oom), log(res2)],
        ] {
            let d = diagnose(&ev(signals));
            assert_eq!(d.causes[0].rule, Some("GW602"), "{d:?}");
            assert!(!d.is_blocked(), "{d:?}");
        }
        // Alone, HAMi-core's failed allocation is CUDA's out-of-memory code.
        let d = diagnose(&ev(vec![log(res2)]));
        assert_eq!(d.causes[0].rule, Some("GW529"), "{d:?}");
    }

    #[test]
    fn a_refining_rule_on_another_line_says_more() {
        let d = diagnose(&ev(vec![
            log("2019/11/28 16:07:11 Failed to initialize NVML: could not load NVML library."),
            log(
                "nvidia-kubevirt-gpu-device-plugin: symbol lookup error: nvidia-kubevirt-gpu-device-plugin: undefined symbol: nvmlDeviceGetCount_v2",
            ),
        ]));
        assert_eq!(d.primary, Category::DevicePlugin);
        assert_eq!(d.causes[0].rule, Some("GW153"));
        assert!(d.causes.iter().any(|c| c.rule == Some("GW151")));
        // Not to a finding at another gate: one process's OOM under HAMi blocks nothing and does not explain
        // another's crash.
        let d = diagnose(&ev(vec![
            log(
                "[HAMI-core ERROR (pid:565 thread=140267266266944 multiprocess_memory_limit.c:831)]: Illegal device id: 850725928",
            ),
            log(
                "[HAMI-core ERROR (pid:30 thread=140382094939712 allocator.c:53)]: Device 0 OOM 3171158016 / 3145728000",
            ),
        ]));
        assert_eq!(d.causes[0].rule, Some("GW439"));
        assert!(d.is_blocked());
    }

    /// What a container's GPU tools print (`nvidia-smi` without the CUDA library, ROCm refused `/dev/kfd`) and
    /// NCCL's shared-memory error may come from the node or another Pod (the device plugin's `nvidia-smi`, a
    /// host's `rocminfo`): they yield to a cause at an earlier gate, and do not say a Pending Pod was placed.
    #[test]
    fn a_containers_gpu_tools_do_not_speak_for_a_pod_that_was_not_placed() {
        let fit = || {
            event(
                "FailedScheduling",
                "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
            )
        };
        let reports = [
            "| NVIDIA-SMI 470.182.03   Driver Version: 470.182.03   CUDA Version: N/A      |",
            "Unable to open /dev/kfd read-write: Permission denied",
            "Error while creating shared memory segment /dev/shm/nccl-F9ffgB (size 9637888)",
            "Error while attaching to shared memory segment /dev/shm/nccl-glnlGK (size 14156128), error: No such file or directory (2)",
        ];
        for report in reports {
            let d = diagnose(&ev(vec![fit(), log(report)]));
            assert_eq!(d.causes[0].rule, Some("GW105"), "{report}");
            let d = diagnose(&ev(vec![
                event(
                    "UnexpectedAdmissionError",
                    "Allocate failed due to rpc error: code = Unavailable desc = transport is closing, which is unexpected",
                ),
                log(report),
            ]));
            assert_eq!(d.gate, Gate::DeviceAdmission, "{report}");
            // A Pod shown Pending on no node: the report is not its own.
            let mut pending = ev(vec![log(report)]);
            pending.pod = Some(PodFacts {
                phase: Some("Pending".into()),
                ..Default::default()
            });
            assert!(
                diagnose(&pending).causes.iter().all(|c| c.rule.is_none()),
                "{report}"
            );
        }
        // Alone, or beside the program's failure to find the driver that it explains, each is the answer.
        let d = diagnose(&ev(vec![
            log(
                "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx",
            ),
            log(reports[0]),
        ]));
        assert_eq!(d.causes[0].rule, Some("GW462"));
        assert_eq!(d.primary, Category::RuntimeHook);
        // A CUDA image's banner that finds no driver is what that missing library leaves behind.
        let d = diagnose(&ev(vec![
            log(
                "WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.",
            ),
            log(reports[0]),
        ]));
        assert_eq!(d.causes[0].rule, Some("GW462"));
        assert!(d.causes.iter().all(|c| c.rule != Some("GW461")));
        assert_eq!(
            diagnose(&ev(vec![log(reports[1])])).causes[0].rule,
            Some("GW463")
        );
        for (report, rule) in [(reports[2], "GW534"), (reports[3], "GW535")] {
            let d = diagnose(&ev(vec![log(report)]));
            assert_eq!(d.causes[0].rule, Some(rule), "{report}");
            assert_eq!(d.causes.len(), 1, "{report}");
        }
    }

    #[test]
    fn custom_taint_with_selector_mismatch_is_the_taint() {
        let d = diagnose(&ev(vec![event(
            "FailedScheduling",
            "0/5 nodes are available: 2 node(s) had untolerated taint {dedicated: ml}, 3 node(s) didn't match Pod's node affinity/selector.",
        )]));
        assert_eq!(d.primary, Category::Taint);
        let d = diagnose(&ev(vec![event(
            "FailedScheduling",
            "0/5 nodes are available: 1 node(s) had untolerated taint(s), 4 node(s) didn't match Pod's node affinity/selector.",
        )]));
        assert_eq!(d.primary, Category::NodeAffinity);
        let mut gpu_sel = ev(vec![event(
            "FailedScheduling",
            "0/5 nodes are available: 1 node(s) had untolerated taint(s), 4 node(s) didn't match Pod's node affinity/selector.",
        )]);
        gpu_sel.pod = Some(PodFacts {
            node_selector: [(
                "nvidia.com/gpu.product".to_string(),
                "NVIDIA-H100-80GB-HBM3".to_string(),
            )]
            .into(),
            ..Default::default()
        });
        assert_eq!(
            diagnose(&gpu_sel).primary,
            Category::Taint,
            "the selected GPU nodes are the tainted ones"
        );
        let d = diagnose(&ev(vec![event(
            "FailedScheduling",
            "0/5 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 4 node(s) didn't match Pod's node affinity/selector.",
        )]));
        assert_eq!(d.primary, Category::NodeAffinity);
        // A system pool's taint (AKS, EKS) is on nodes that hold no GPU, as the control plane's is; a pool of
        // spot GPU nodes is tainted where the GPUs are.
        for (taint, primary) in [
            ("{CriticalAddonsOnly: true}", Category::NodeAffinity),
            (
                "{kubernetes.azure.com/scalesetpriority: spot}",
                Category::Taint,
            ),
        ] {
            let message = format!(
                "0/3 nodes are available: 1 node(s) had untolerated taint {taint}, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
            );
            let d = diagnose(&ev(vec![event("FailedScheduling", &message)]));
            assert_eq!(d.primary, primary, "{taint}");
        }
    }

    #[test]
    fn a_node_that_failed_after_the_resource_check_had_the_gpu() {
        let d = diagnose(&ev(vec![event(
            "FailedScheduling",
            "0/4 nodes are available: 1 node(s) didn't match pod affinity rules, 3 Insufficient nvidia.com/gpu.",
        )]));
        assert_eq!(d.primary, Category::Other);
        assert_eq!(d.causes[0].rule, Some("GW111"));
    }

    #[test]
    fn device_admission_rejection_beats_later_mount_noise() {
        let d = diagnose(&ev(vec![
            event(
                "UnexpectedAdmissionError",
                "Allocate failed due to rpc error: code = Unavailable desc = transport is closing, which is unexpected",
            ),
            event(
                "FailedMount",
                "MountVolume.SetUp failed for volume \"kube-api-access-8hcmj\" : object \"default\"/\"kube-root-ca.crt\" not registered",
            ),
        ]));
        assert_eq!(d.primary, Category::DevicePlugin);
        assert_eq!(d.gate, Gate::DeviceAdmission);
    }

    #[test]
    fn later_gate_wins_and_scheduling_is_superseded() {
        let d = diagnose(&ev(vec![
            event(
                "FailedScheduling",
                "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.",
            ),
            Signal {
                kind: Some("Normal".into()),
                reason: Some("Scheduled".into()),
                message: "Successfully assigned ml/x to gpu-1".into(),
                source: Some(SignalSource::Event),
                count: 1,
                ..Default::default()
            },
            event(
                "FailedCreatePodSandBox",
                "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for \"nvidia\" is configured",
            ),
        ]));
        assert_eq!(d.primary, Category::HandlerMissing);
        assert_eq!(d.causes.len(), 1);
        assert_eq!(d.causes[0].details["handler"], "nvidia");
        assert!(
            d.causes[0]
                .next
                .iter()
                .any(|n| n.place == Where::Node && n.command.contains("runtimes.nvidia"))
        );
    }

    #[test]
    fn running_ready_pod_is_none() {
        let mut e = ev(vec![event(
            "FailedScheduling",
            "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.",
        )]);
        e.pod = Some(PodFacts {
            phase: Some("Running".into()),
            ready: Some("True".into()),
            ..Default::default()
        });
        let d = diagnose(&e);
        assert_eq!(d.primary, Category::None);
        assert!(!d.is_blocked());
    }

    /// A container's `nvidia-smi -L` under the `kubectl exec` that ran it says the Pod runs and sees its GPUs; the
    /// same rows alone may be the node's, and say nothing of the Pod.
    #[test]
    fn gpus_listed_through_kubectl_exec_say_the_pod_runs() {
        let rows = "GPU 0: Tesla V100-SXM2-32GB (UUID: GPU-52e32369-aced-8688-5124-395e9c636a33)\nGPU 1: Tesla V100-SXM2-32GB (UUID: GPU-ebaee821-cd6a-8e1d-0cca-2c7d6f96dbea)";
        let exec = "# kubectl exec -ti -n=ml train-0 -- nvidia-smi -L";
        let d = diagnose(&ev(vec![log(&format!("{exec}\n{rows}"))]));
        assert_eq!((d.gate, d.primary), (Gate::None, Category::None));
        assert_eq!(diagnose(&ev(vec![log(rows)])).primary, Category::Unknown);
        // Another command's output, or an error beside the listing, is no such word.
        let other = "# kubectl exec -ti -n=ml train-0 -- ls /dev";
        assert_eq!(
            diagnose(&ev(vec![log(&format!("{other}\n{rows}"))])).primary,
            Category::Unknown
        );
        // The driver's or a DaemonSet's Pod that lists the node's GPUs, or prose about an exec, is no such word.
        for not_the_pod in [
            "$ kubectl exec -it -n gpu-operator ds/nvidia-driver-daemonset -- nvidia-smi -L",
            "$ kubectl exec -it -n gpu-operator nvidia-driver-daemonset-7xk2p -- nvidia-smi -L",
            "when I kubectl exec into my pod and run nvidia-smi -L I see:",
        ] {
            let d = diagnose(&ev(vec![log(&format!("{not_the_pod}\n{rows}"))]));
            assert_eq!(d.primary, Category::Unknown, "{not_the_pod}");
        }
        // kubectl's notice of the container it chose is part of the exec's output; anything more may be about
        // another Pod: its state, an error, the reporter's words.
        let d = diagnose(&ev(vec![
            log(exec),
            log("Defaulted container \"cuda\" out of: cuda, fetch (init)"),
            log(rows),
        ]));
        assert_eq!(d.primary, Category::None);
        for beside in [
            "Error from server (BadRequest): container \"cuda\" in pod \"train-1\" is waiting to start: ContainerCreating",
            "My pod train-1 is stuck in ContainerCreating. The other pod works:",
            "train-1   0/1     Pending   0          5m",
        ] {
            let d = diagnose(&ev(vec![log(exec), log(rows), log(beside)]));
            assert_ne!(d.primary, Category::None, "{beside}");
        }
        for intro in [
            "My pod train-1 is stuck in ContainerCreating. The other pod works:",
            "The second pod train-2 won't start, but train-0 works:",
        ] {
            let d = diagnose(&ev(vec![log(intro), log(exec), log(rows)]));
            assert_ne!(d.primary, Category::None, "{intro}");
        }
        // A DaemonSet's listing before the Pod's own does not hide the Pod's.
        let ds =
            "$ kubectl exec -n gpu-operator ds/nvidia-device-plugin-daemonset -- nvidia-smi -L";
        let d = diagnose(&ev(vec![log(&format!("{ds}\n{rows}\n{exec}\n{rows}"))]));
        assert_eq!(d.primary, Category::None);
    }

    /// GW182 reads the plugin's error wherever a log puts it (after klog's header, in logfmt's quotes), but not
    /// the warning of a release that ignores it and registers; GW213 names the quota reason of a Kueue message
    /// whatever reasons come before or after it (Kueue sorts them).
    #[test]
    fn reasons_inside_a_longer_message_are_read() {
        for (text, rule) in [
            (
                "E1120 10:00:00.000000       1 main.go:300] error getting device memory: Not Supported",
                Some("GW182"),
            ),
            (
                "time=\"2025-11-20T10:00:00Z\" level=error msg=\"error getting device memory: Not Supported\"",
                Some("GW182"),
            ),
            (
                "W1204 18:29:54.725748 Ignoring error getting device memory: Not Supported",
                None,
            ),
        ] {
            let d = diagnose(&ev(vec![log(text)]));
            assert_eq!(d.causes.first().and_then(|c| c.rule), rule, "{text}");
        }
        let d = diagnose(&ev(vec![log(
            "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor h100 in ClusterQueue, resource ephemeral-storage unavailable in ClusterQueue",
        )]));
        assert_eq!(d.causes[0].rule, Some("GW213"));
        assert_eq!(d.causes[0].details["resource"], "nvidia.com/gpu");
    }

    /// A readiness probe that fails in a started container keeps no GPU from it; a liveness probe that kills
    /// the container still counts, and so does an error beside the probe's line.
    #[test]
    fn a_readiness_probe_is_no_gate() {
        let mut started = event("Started", "Started container vllm");
        started.kind = Some("Normal".into());
        let probe = event(
            "Unhealthy",
            "Readiness probe failed: Get \"http://10.36.2.5:8000/health\": dial tcp 10.36.2.5:8000: connect: connection refused",
        );
        let d = diagnose(&ev(vec![started.clone(), probe.clone()]));
        assert_eq!(d.primary, Category::None);
        // In any case.
        let shouted = event(
            "Unhealthy",
            &probe.message.replace("Readiness probe", "READINESS PROBE"),
        );
        assert_eq!(
            diagnose(&ev(vec![started.clone(), shouted])).primary,
            Category::None
        );
        let liveness = event(
            "Unhealthy",
            "Liveness probe failed: Get \"http://10.36.2.5:8000/health\": context deadline exceeded",
        );
        assert_ne!(
            diagnose(&ev(vec![started.clone(), liveness])).primary,
            Category::None
        );
        let beside = log(
            "Readiness probe failed: connection refused\nRuntimeError: CUDA error: no kernel image is available",
        );
        assert_ne!(diagnose(&ev(vec![started, beside])).primary, Category::None);
        // Kubernetes' e2e suite reporting a passed spec of the device plugin is no plugin's log.
        let passed = log(
            "• [SLOW TEST:297.012 seconds]\n[sig-node] NVIDIA GPU Device Plugin [Feature:GPUDevicePlugin]\nI1029 01:07:31.171986    1188 e2e_node_suite_test.go:237] Stopping node services...",
        );
        assert_ne!(
            diagnose(&ev(vec![passed.clone()])).primary,
            Category::DevicePlugin
        );
        let failed = log(
            "• Failure [297.012 seconds]\n[sig-node] NVIDIA GPU Device Plugin [Feature:GPUDevicePlugin]\nI1029 01:07:31.171986    1188 e2e_node_suite_test.go:237] Stopping node services...",
        );
        // A spec that failed beside it, in the next record or the same one, still reads as the plugin's.
        assert_eq!(
            diagnose(&ev(vec![passed.clone(), failed.clone()])).primary,
            Category::DevicePlugin
        );
        let both = log(&format!("{}\n{}", passed.message, failed.message));
        assert_eq!(diagnose(&ev(vec![both])).primary, Category::DevicePlugin);
        // Ginkgo's timed-out and panicked specs are failures too.
        for failure in ["•... Timeout [600.001 seconds]", "•! Panic [0.012 seconds]"] {
            let failed = log(&failed
                .message
                .replace("• Failure [297.012 seconds]", failure));
            assert_eq!(
                diagnose(&ev(vec![passed.clone(), failed])).primary,
                Category::DevicePlugin,
                "{failure}"
            );
        }
    }

    /// Kueue's Topology-Aware Scheduling (GW227) in each of its forms stays at admission; the nodes it left
    /// out for a taint or a selector are the cause when none was left out for lack of a GPU; a quota reason
    /// before it (Kueue joins each flavor's reason) comes first.
    #[test]
    fn kueue_topology_reasons_are_read_at_admission() {
        let head = "couldn't assign flavors to pod set main: topology \"default\"";
        for (tail, category) in [
            (
                " doesn't allow to fit any of 1 slice(s)",
                Category::InsufficientResource,
            ),
            (
                " doesn't allow to fit; 0/1 slice(s) fit on level cloud.com/topology-rack; 2/3 slice(s) fit on level kubernetes.io/hostname. Total nodes: 3; excluded: resource \"cpu\": 1",
                Category::InsufficientResource,
            ),
            (
                " doesn't allow to fit any of 1 pod(s). Total nodes: 4; excluded: resource \"nvidia.com/gpu\": 3, taint \"nvidia.com/gpu:NoSchedule\": 1",
                Category::InsufficientResource,
            ),
            (
                " doesn't allow to fit any of 1 pod(s). Total nodes: 4; excluded: nodeSelector: 2, resource \"cpu\": 1, taint \"key=value:NoSchedule\": 1",
                Category::Taint,
            ),
            (
                " allows to fit only 2 out of 8 pod(s). Total nodes: 8; excluded: nodeSelector: 6",
                Category::NodeAffinity,
            ),
        ] {
            // Kueue records it as a Normal event.
            let mut pending = event("Pending", &format!("{head}{tail}"));
            pending.kind = Some("Normal".into());
            let d = diagnose(&ev(vec![pending]));
            assert_eq!(d.causes[0].rule, Some("GW227"), "{tail}");
            assert_eq!((d.primary, d.gate), (category, Gate::Admission), "{tail}");
        }
        let d = diagnose(&ev(vec![event(
            "Pending",
            "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor h100, 8 more needed, topology \"default\" doesn't allow to fit any of 2 pod(s)",
        )]));
        assert_eq!(d.causes[0].rule, Some("GW213"));
        assert_eq!(d.primary, Category::Quota);
        // The reasons end where Kueue's list ends, not at the next field of the Workload as printed.
        for paste in [
            format!(
                "    message: '{head} doesn't allow to fit any of 1 pod(s). Total nodes: 26; excluded: taint \"nvidia.com/gpu=present:NoSchedule\": 26'\n    observedGeneration: 1"
            ),
            format!(
                "    Message: {head} doesn't allow to fit any of 1 pod(s). Total nodes: 4; excluded: nodeSelector: 2, taint \"key=value:NoSchedule\": 1 Observed Generation: 1 Reason: Pending"
            ),
        ] {
            let d = diagnose(&ev(vec![log(&paste)]));
            let excluded = d.causes[0].details.get("excluded").and_then(|v| v.as_str());
            assert!(
                excluded.is_some_and(|e| e.ends_with(": 26") || e.ends_with(": 1")),
                "{excluded:?}"
            );
        }
    }

    /// Older kubelets call the runtime down for their first seconds; a node recorded Ready after it is past it.
    #[test]
    fn a_runtime_down_at_start_is_past_once_the_node_is_ready() {
        let down = "Nov 22 23:43:12 suzlab1080-001 kubelet[102275]: I1122 23:43:12.583274  102275 kubelet.go:1789] skipping pod synchronization - [container runtime is down]";
        let ready = "Nov 22 23:43:20 suzlab1080-001 kubelet[102275]: I1122 23:43:20.123456  102275 kubelet_node_status.go:486] Recording NodeReady event message for node suzlab1080-001";
        let d = diagnose(&ev(vec![log(down)]));
        assert_eq!(d.causes[0].rule, Some("GW542"));
        let d = diagnose(&ev(vec![log(down), log(ready)]));
        assert!(d.causes.iter().all(|c| c.rule != Some("GW542")));
        let d = diagnose(&ev(vec![log(ready), log(down)]));
        assert_eq!(d.causes[0].rule, Some("GW542"));
        // The kubelet that finds no runtime on its socket when it starts; not crictl's try of dockershim's.
        let no_socket = "Oct  4 16:57:28 ip-192-168-160-221 kubelet: E1004 16:57:28.770481    8031 remote_runtime.go:86] \"Version from runtime service failed\" err=\"rpc error: code = Unavailable desc = connection error: desc = \\\"transport: Error while dialing dial unix /run/containerd/containerd.sock: connect: no such file or directory\\\"\"";
        let d = diagnose(&ev(vec![log(no_socket)]));
        assert_eq!(d.causes[0].rule, Some("GW542"));
        // k3s runs the kubelet in its own process (its journal's writer is k3s), and RKE2's kubelet.log has no
        // journal prefix: k3s's socket is no crictl default.
        for line in [
            "Oct 04 16:57:28 gpu-node-1 k3s[8031]: E1004 16:57:28.770481    8031 remote_runtime.go:145] \"Version from runtime service failed\" err=\"rpc error: code = Unavailable desc = connection error: desc = \\\"transport: Error while dialing dial unix /run/k3s/containerd/containerd.sock: connect: no such file or directory\\\"\"",
            "E1004 16:57:28.770481    8031 remote_runtime.go:145] \"Version from runtime service failed\" err=\"rpc error: code = Unavailable desc = connection error: desc = \\\"transport: Error while dialing dial unix /run/k3s/containerd/containerd.sock: connect: connection refused\\\"\"",
        ] {
            let d = diagnose(&ev(vec![log(line)]));
            assert_eq!(d.causes[0].rule, Some("GW542"), "{line}");
        }
        // crictl logs the same line when it tries its default endpoints: only the kubelet's journal says so.
        for socket in [
            "/var/run/dockershim.sock",
            "/run/containerd/containerd.sock",
        ] {
            let crictl = format!(
                "E0227 00:42:42.876014 7762 remote_runtime.go:145] \"Version from runtime service failed\" err=\"rpc error: code = Unavailable desc = connection error: desc = \\\"transport: Error while dialing dial unix {socket}: connect: no such file or directory\\\"\""
            );
            let d = diagnose(&ev(vec![log(&crictl)]));
            assert!(d.causes.iter().all(|c| c.rule != Some("GW542")), "{d:?}");
        }
    }

    /// The GPU stack's signs of health (`nvidia-smi`'s table, a ready ClusterPolicy, an installer that completed)
    /// say nothing blocks only where nothing in the input says a Pod waits or a part of the stack is not ready.
    #[test]
    fn health_signs_yield_to_a_waiting_pod_or_a_failed_part() {
        let table =
            "| NVIDIA-SMI 470.57.02    Driver Version: 470.57.02    CUDA Version: 11.4     |";
        let primary =
            |lines: &[&str]| diagnose(&ev(lines.iter().map(|l| log(l)).collect())).primary;
        assert_eq!(primary(&[table]), Category::None);
        assert_eq!(
            primary(&["gpu-cluster-policy   ready    2026-08-30T08:37:24Z"]),
            Category::None
        );
        for contrary in [
            "my GPU pod is still Pending",
            "| N/A  ERR!  ERR!  ERR! / ERR! |  ERR!  / ERR! |  ERR!  ERR! |",
            r#"{"level":"info","msg":"ClusterPolicy step completed","state:":"state-driver","status":"notReady"}"#,
        ] {
            assert_eq!(primary(&[table, contrary]), Category::Unknown, "{contrary}");
        }
        // A listing run together on one line: one Pod that runs does not speak for one that does not.
        assert_eq!(
            primary(&[
                "nvidia-device-plugin-abcde 1/1 Running 0 3d trainer-7f9c8d-abcde 0/1 ContainerCreating 0 14m"
            ]),
            Category::Unknown
        );
    }

    /// Volcano refuses a task on some nodes and binds it to another: nothing blocks, unless another task it
    /// refused stays unbound.
    #[test]
    fn a_volcano_task_bound_after_refusals_is_placed_but_not_another_task() {
        let refused = |task: &str, node: &str| {
            format!(
                "I1009 06:42:18.755838       1 scheduler_helper.go:49] Predicates failed for task <default/{task}> on node <{node}>: task default/{task} on node {node} fit failed: node(s) resource fit failed"
            )
        };
        let bound = "I1009 06:42:18.755985       1 allocate.go:208] Binding Task <default/w-0> to node <titanxp-4>";
        let d = diagnose(&ev(vec![log(&refused("w-0", "p40-3")), log(bound)]));
        assert_eq!(d.primary, Category::None);
        let d = diagnose(&ev(vec![
            log(&refused("w-0", "p40-3")),
            log(bound),
            log(&refused("w-1", "p40-3")),
        ]));
        assert_eq!(d.causes[0].rule, Some("GW168"));
    }

    /// GKE's installer traced from its first lines has not finished, unless nvidia-smi's table follows.
    #[test]
    fn a_cos_installer_log_is_finished_once_nvidia_smi_answers() {
        let traced = "+ LOCK_FILE=/root/tmp/cos_gpu_installer_lock";
        let table =
            "| NVIDIA-SMI 384.111                 Driver Version: 384.111                   |";
        let d = diagnose(&ev(vec![log(traced)]));
        assert_eq!(d.causes[0].rule, Some("GW180"));
        let d = diagnose(&ev(vec![log(traced), log(table)]));
        assert!(d.causes.iter().all(|c| c.rule != Some("GW180")), "{d:?}");
    }

    /// The kubelet's call for a plugin's preferred devices is unanswered only while no allocation follows it.
    #[test]
    fn a_preferred_allocation_call_is_answered_once_the_kubelet_allocates() {
        let call = "Jul 30 20:39:03 ai-app-8-1-msxf kubelet[45878]: I0730 20:39:03.753013   45878 manager.go:956] \"Issuing a GetPreferredAllocation call for container\" containerName=\"neal-0729-6\" podUID=\"69e0758e-d625-4013-9258-df8b7ddf04e2\"";
        let made = "Jul 30 19:37:03 ai-app-8-1-msxf kubelet[26361]: I0730 19:37:03.952761   26361 manager.go:819] \"Making allocation request for device plugin\" devices=[MIG-5e2f454b-6cf3-51c3-a060-0a34ba38dfe4] resourceName=\"nvidia.com/mig-3g.48gb\"";
        let d = diagnose(&ev(vec![log(call)]));
        assert_eq!(d.causes[0].rule, Some("GW313"));
        assert_eq!(
            (d.primary, d.gate),
            (Category::DevicePlugin, Gate::DeviceAdmission)
        );
        let d = diagnose(&ev(vec![log(call), log(made)]));
        assert!(d.causes.iter().all(|c| c.rule != Some("GW313")), "{d:?}");
        let d = diagnose(&ev(vec![log(made), log(call)]));
        assert_eq!(d.causes[0].rule, Some("GW313"));
        // A Pod whose container the kubelet went on to start was answered (a grep kept only the call).
        let started = Signal {
            kind: Some("Normal".into()),
            reason: Some("Started".into()),
            message: "Started container neal-0729-6".into(),
            source: Some(SignalSource::Event),
            count: 1,
            ..Default::default()
        };
        let d = diagnose(&ev(vec![started, log(call)]));
        assert!(d.causes.iter().all(|c| c.rule != Some("GW313")), "{d:?}");
    }

    /// A sandbox the kubelet could not create at first and made later (the toolkit had not yet given
    /// containerd its `nvidia` runtime) is past; a failure after the last container event stands.
    #[test]
    fn a_sandbox_made_after_its_failure_is_past() {
        let sandbox = || {
            event(
                "FailedCreatePodSandBox",
                "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for \"nvidia\" is configured",
            )
        };
        let created = || Signal {
            kind: Some("Normal".into()),
            reason: Some("Created".into()),
            message: "Created container toolkit-validation".into(),
            source: Some(SignalSource::Event),
            count: 4,
            ..Default::default()
        };
        let hook = || {
            event(
                "Failed",
                "Error: failed to create containerd task: OCI runtime create failed: container_linux.go:367: starting container process caused: process_linux.go:495: container init caused: Running hook #0:: error running hook: exit status 1, stdout: , stderr: /usr/local/nvidia/toolkit/nvidia-container-cli.real: /lib64/libc.so.6: version `GLIBC_2.27' not found (required by /usr/local/nvidia/toolkit/libnvidia-container.so.1): unknown",
            )
        };
        let d = diagnose(&ev(vec![sandbox(), created(), hook()]));
        assert_eq!(d.primary, Category::RuntimeHook, "{d:?}");
        assert!(
            d.causes
                .iter()
                .all(|c| c.category != Category::HandlerMissing)
        );
        // Alone before a container started, the failure no longer blocks the Pod.
        let d = diagnose(&ev(vec![sandbox(), created()]));
        assert!(
            d.causes
                .iter()
                .all(|c| c.category != Category::HandlerMissing),
            "{d:?}"
        );
        // A sandbox that fails again after the last container event (re-created after SandboxChanged) stands.
        let d = diagnose(&ev(vec![created(), hook(), sandbox()]));
        assert!(
            d.causes
                .iter()
                .any(|c| c.category == Category::HandlerMissing),
            "{d:?}"
        );
        // Times decide where both events have one, whatever the order they came in.
        let (mut early, mut late) = (sandbox(), created());
        early.time = Some("2022-04-01T10:00:00Z".into());
        late.time = Some("2022-04-01T10:05:00Z".into());
        let d = diagnose(&ev(vec![late.clone(), early.clone()]));
        assert!(
            d.causes
                .iter()
                .all(|c| c.category != Category::HandlerMissing),
            "{d:?}"
        );
        // `eventTime`'s fraction within the same second as a `lastTimestamp`: the order given decides.
        let (mut fine, mut coarse) = (created(), sandbox());
        fine.time = Some("2022-04-01T10:05:00.123456Z".into());
        coarse.time = Some("2022-04-01T10:05:00Z".into());
        let d = diagnose(&ev(vec![coarse, fine]));
        assert!(
            d.causes
                .iter()
                .all(|c| c.category != Category::HandlerMissing),
            "{d:?}"
        );
        early.time = Some("2022-04-01T10:09:00Z".into());
        let d = diagnose(&ev(vec![late, early]));
        let stands = |d: &Diagnosis| {
            d.causes
                .iter()
                .any(|c| c.category == Category::HandlerMissing)
        };
        assert!(stands(&d), "{d:?}");
        // A `kubectl get events` table (an OBJECT column) is not in last-seen order: its rows say nothing of
        // which came last.
        let listed = |mut s: Signal| {
            s.object = Some("pod/cuda-vectoradd".into());
            s
        };
        let d = diagnose(&ev(vec![listed(sandbox()), listed(created())]));
        assert!(stands(&d), "{d:?}");
        // Unless its LAST SEEN ages say: the sandbox failed 3m ago, the container was created 2m ago.
        let aged = |mut s: Signal, ago: u64| {
            s.seen_ago = Some(ago);
            listed(s)
        };
        let d = diagnose(&ev(vec![aged(sandbox(), 180), aged(created(), 120)]));
        assert!(!stands(&d), "{d:?}");
        // A sandbox that still fails (4s ago) after containers made 20m ago stands, whatever the rows' order.
        let d = diagnose(&ev(vec![aged(created(), 1200), aged(sandbox(), 4)]));
        assert!(stands(&d), "{d:?}");
        let d = diagnose(&ev(vec![aged(sandbox(), 4), aged(created(), 1200)]));
        assert!(stands(&d), "{d:?}");
        // Nor is another node's container event in an old events table any word on this sandbox.
        let on = |mut s: Signal, node: &str| {
            s.node = Some(node.into());
            s
        };
        let d = diagnose(&ev(vec![
            on(sandbox(), "gpu-node-1"),
            on(created(), "cpu-node-2"),
        ]));
        assert!(stands(&d), "{d:?}");
    }

    #[test]
    fn a_plugin_log_that_goes_on_to_register_is_past_its_errors() {
        // Xilinx/FPGA_as_a_Service #8: a broken pipe while the kubelet restarted, then the registration.
        let broken = "2019/12/17 08:05:19 grpc: Server.Serve failed to create ServerTransport:  connection error: desc = \"transport: write unix /var/lib/kubelet/device-plugins/drm_minor-20191217-fpga.sock->@: write: broken pipe\"";
        let registered = "time=\"2019-12-17T08:05:19Z\" level=info msg=\"Registered device plugin with Kubelet xilinx.com/fpga-drm_minor-20191217\"";
        let d = diagnose(&ev(vec![log(broken), log(registered)]));
        assert_eq!(d.primary, Category::None, "{d:?}");
        // An error after the registration, or beside the Pod's own events, is still read.
        let d = diagnose(&ev(vec![log(registered), log(broken)]));
        assert_eq!(d.primary, Category::Unknown, "{d:?}");
        // Nor is a plugin that registered and offers no device, or another Pod's registration.
        let none =
            "time=\"2019-12-17T08:05:19Z\" level=info msg=\"Sending 0 device(s) [] to kubelet\"";
        let d = diagnose(&ev(vec![log(broken), log(registered), log(none)]));
        assert_eq!(d.primary, Category::Unknown, "{d:?}");
        let mut other = log(registered);
        other.component = Some("pod/fpga-device-plugin-def34/plugin".into());
        let mut first = log(broken);
        first.component = Some("pod/fpga-device-plugin-abc12/plugin".into());
        let d = diagnose(&ev(vec![first, other]));
        assert_eq!(d.primary, Category::Unknown, "{d:?}");
        // Each Pod's log is past its own errors; the last count a plugin sent is what it offers; the command
        // that printed the log is no error, whatever it greps for.
        let prefixed = |pod: &str, line: &str| {
            let mut s = log(line);
            s.component = Some(format!("pod/{pod}/plugin"));
            s
        };
        let d = diagnose(&ev(vec![
            prefixed("fpga-a", broken),
            prefixed("fpga-a", registered),
            prefixed("fpga-b", broken),
            prefixed("fpga-b", registered),
        ]));
        assert_eq!(d.primary, Category::None, "{d:?}");
        let one = "time=\"2019-12-17T08:05:20Z\" level=info msg=\"Sending 1 device(s) [&Device{ID:a0,Health:Healthy,}] to kubelet\"";
        let d = diagnose(&ev(vec![log(broken), log(registered), log(none), log(one)]));
        assert_eq!(d.primary, Category::None, "{d:?}");
        let mut command = log("$ kubectl logs -n kube-system fpga-device-plugin-x | grep -i error");
        command.source = Some(SignalSource::Text);
        let d = diagnose(&ev(vec![command, log(broken), log(registered)]));
        assert_eq!(d.primary, Category::None, "{d:?}");
        // The reporter's words beside the log are not the plugin's.
        let mut prose = log("the kubelet keeps saying: failed to prepare GPU devices");
        prose.source = Some(SignalSource::Text);
        let d = diagnose(&ev(vec![prose, log(broken), log(registered)]));
        assert_ne!(d.primary, Category::None, "{d:?}");
        assert!(d.causes[0].evidence.len() == 2, "{d:?}");
        let d = diagnose(&ev(vec![
            event("Pulled", "Container image \"x\" already present on machine"),
            log(broken),
            log(registered),
        ]));
        assert_eq!(d.primary, Category::Unknown, "{d:?}");
    }

    #[test]
    fn a_gpu_e2e_run_that_found_its_gpus_did_not_stop_short() {
        let waiting = "Apr 28 05:39:33.883: INFO: Nvidia GPUs not available on Node: \"bootstrap-e2e-minion-group-2z9j\"";
        let d = diagnose(&ev(vec![log(waiting)]));
        assert_eq!(d.causes[0].rule, Some("GW185"));
        let d = diagnose(&ev(vec![
            log(waiting),
            log("Apr 28 05:40:33.883: INFO: Nvidia GPUs exist on all schedulable nodes"),
        ]));
        assert!(d.causes.iter().all(|c| c.rule != Some("GW185")), "{d:?}");
        // A run that found them, then recreated its nodes and waits again, stopped short after all.
        let d = diagnose(&ev(vec![
            log("Apr 28 05:39:33.883: INFO: Nvidia GPUs exist on all schedulable nodes"),
            log(waiting),
        ]));
        assert_eq!(d.causes[0].rule, Some("GW185"), "{d:?}");
    }

    #[test]
    fn the_cordon_taints_key_in_a_manifest_is_no_error() {
        // NVIDIA/nvidia-container-toolkit #1089: a Pod's tolerations in the heredoc that created it.
        let manifest = "  tolerations:\n  - key: \"node.kubernetes.io/unschedulable\"\n    operator: \"Exists\"\n    effect: \"NoSchedule\"\nEOF";
        assert!(!looks_like_error(manifest));
        assert!(looks_like_error(
            "0/3 nodes are available: 3 node(s) were unschedulable."
        ));
    }

    #[test]
    fn unexplained_warning_is_unknown() {
        let d = diagnose(&ev(vec![event(
            "FailedScheduling",
            "0/2 nodes are available: 2 node(s) had a reason nobody has seen before.",
        )]));
        assert_eq!(d.primary, Category::Unknown);
        assert_eq!(d.gate, Gate::Scheduling);
        assert!(d.is_blocked());
    }

    #[test]
    fn names_are_filled_and_hostile_names_quoted() {
        let mut e = ev(vec![event(
            "FailedScheduling",
            "0/1 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}.",
        )]);
        e.target = Target {
            kind: "Pod".into(),
            namespace: Some("ml".into()),
            name: Some("x;rm -rf /".into()),
            ..Default::default()
        };
        let d = diagnose(&e);
        let cmd = &d.causes[0].next[1].command;
        assert!(cmd.contains("'x;rm -rf /'"), "{cmd}");
        assert!(cmd.contains("-n ml"));
        assert_eq!(
            d.causes[0].fix.as_deref().unwrap().lines().next(),
            Some("tolerations:")
        );
    }

    #[test]
    fn missing_names_stay_visible() {
        let d = diagnose(&ev(vec![event(
            "FailedScheduling",
            "0/1 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}.",
        )]));
        assert!(d.causes[0].next[1].command.contains("<pod> -n <namespace>"));
    }

    #[test]
    fn a_summary_reads_on_where_the_text_names_nothing() {
        let ctx: BTreeMap<&'static str, String> = BTreeMap::new();
        let empty: BTreeMap<String, String> = BTreeMap::new();
        let given = BTreeMap::from([("condition".to_string(), "cuda>=12.4".to_string())]);
        let template = "the image needs {condition|a newer CUDA} but the node's driver is older";
        assert_eq!(
            fill(template, &ctx, &empty, false),
            "the image needs a newer CUDA but the node's driver is older"
        );
        assert_eq!(
            fill(template, &ctx, &given, false),
            "the image needs cuda>=12.4 but the node's driver is older"
        );
        assert_eq!(
            fill("kubectl get pod {pod}", &ctx, &empty, true),
            "kubectl get pod <pod>"
        );
        assert_eq!(
            crate::rules::shown_template(template),
            "the image needs {condition} but the node's driver is older"
        );
        // JSON and shell braces are not placeholders.
        assert_eq!(
            fill("{\"a\": 1} {Pod}", &ctx, &empty, false),
            "{\"a\": 1} {Pod}"
        );
    }
}
