//! Reads text: `kubectl describe pod` output (header fields, container states, conditions, the Events table
//! with `(xN over M)`, wrapped and truncated rows, with or without its header, the 1.35+ `fieldPath: `
//! prefix), `kubectl get events` tables, YAML fragments (`message: '…'`), kubelet/containerd/journal log
//! lines (with their escaped quotes), and bare messages. Everything that is not recognised as a field
//! becomes a plain-text signal; nothing is dropped silently. A pasted `kubectl logs` command says whose log the
//! paste holds; so does each line of `kubectl logs --prefix` (`[pod/NAME/CONTAINER] …`), whose writer is kept
//! apart from the message.

use std::sync::LazyLock;

use regex::Regex;

use crate::evidence::{
    Evidence, LogsOf, PodFacts, Signal, SignalSource, Target, Toleration, is_dns_label,
    is_dns_subdomain, is_driver_daemonset,
};
use crate::sanitize;
use crate::shell::{is_command_line, join_continued, logs_command};

static EVENT_ROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<pre>.*?)\b(?P<type>Warning|Normal)\s+(?P<reason>[A-Za-z][A-Za-z0-9./_-]*)(?:\s+(?P<rest>.*))?$").expect("row")
});
static AGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?P<age><unknown>|<invalid>|[0-9][0-9a-z.]*)(?:\s+\(x(?P<n>\d+)(?: over [^)]*\)|(?: over\b[^)]*)?$))?(?:\s+|$)",
    )
    .expect("age")
});
static FROM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<from>kubelet(?:,\s*\S+)?|[a-z][a-z0-9.-]*(?:-scheduler|-controller|-manager|-controller-manager|scheduler|kubelet|autoscaler)[a-z0-9.-]*|\{[^}]*\}|[a-z][a-z0-9-]*)(?:\s+|$)").expect("from")
});
static OBJECT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<kind>[a-z][a-z.0-9]*|[A-Z][A-Za-z0-9]*)/(?P<name>[^\s/]+)\s+")
        .expect("object")
});
static FIELD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?P<key>[A-Z][A-Za-z -]*):\s*(?P<value>.*)$").expect("field"));
static RECORD_START: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^\s*(?:[-*>]\s+)?`?(?:pod didn't trigger|\d{4}-\d\d-\d\d[T ]|\d{4}/\d\d/\d\d \d\d:\d\d:\d\d|[A-Z][a-z]{2} +\d+ \d\d:\d\d|[EWIF]\d{4} |time=|level=|kubelet\[|containerd\[|Warning\b|Normal\b|Error\b|error:|Failed\b|failed to|0/\d+ nodes|no nodes available|pods? "|Pod "|spec\.|status:|message:|reason:|note:|\{|[Bb]ack-off |Allocate failed|Node didn't|nvidia-container-cli:|Events:|Name:|\$ |[\w.-]+@[\w.-]+:[^\s$#]*[$#] )"#).expect("record")
});
static JSON_PROPERTY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"^"(?P<key>[A-Za-z]+)":\s*(?:"(?P<value>(?:[^"\\]|\\.)*)"|-?[0-9.]+|true|false|null),?$"#,
    )
    .expect("json property")
});
/// A node's log line as a whole line opens it: the journal's or syslog's date (`short`, `short-precise`,
/// `short-iso`), host and writer, or klog's header up to its source line.
static LOG_AFTER_TABLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:(?:(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) {1,2}\d{1,2} \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)? \S+ [\w.@/-]+(?:\[\d+\])?: |[EWIF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [\w.-]+:\d+\] )")
        .expect("log after table")
});
/// A klog line: `I0115 20:11:29.269555 …`.
static KLOG_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[EWIF]\d{4} \d\d:\d\d").expect("klog line"));
static POD_IN_LOG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"pod="(?P<ns>[a-z0-9.-]+)/(?P<name>[a-z0-9.-]+)"|PodSandboxMetadata\{Name:(?P<name2>[^,]+),Uid:[^,]*,Namespace:(?P<ns2>[^,]+),"#).expect("pod in log")
});

/// Whether a line opens a record of its own (a log line's header, an event row, a message's known start).
pub(super) fn starts_record(line: &str) -> bool {
    RECORD_START.is_match(line)
}

/// Whether the text looks like `kubectl describe` output.
pub fn is_describe(input: &str) -> bool {
    let mut name = false;
    let mut section = false;
    for line in input.lines().take(400) {
        name |= line.starts_with("Name:");
        section |= line.starts_with("Events:")
            || line.starts_with("Conditions:")
            || line.starts_with("Containers:")
            || line.starts_with("Status:");
    }
    name && section
}

pub(super) fn read(input: &str) -> Evidence {
    let mut ev = Evidence {
        target: Target {
            kind: "Pod".into(),
            ..Default::default()
        },
        ..Default::default()
    };
    let mut pod = PodFacts::default();
    let mut pod_seen = false;
    // Whose log each line is: its `kubectl logs --prefix` writer, which comes off the line, or the Pod of the
    // `kubectl logs POD` command pasted above it (until the next command).
    let (lines, writers) = log_writers(input);
    let mut i = 0;
    let mut plain = Plain::default();
    while i < lines.len() {
        let raw = lines[i];
        let line = raw.trim_end();
        // Top-level describe fields (column 0).
        // A pasted block's first line often keeps the indentation of the text around it.
        let top_level = !raw.starts_with(' ') && !raw.starts_with('\t')
            || (raw.trim_start().starts_with("Name:")
                && lines
                    .get(i + 1)
                    .is_some_and(|n| n.starts_with("Namespace:")));
        // One container's block pasted without its `Containers:` heading: `cuda:`, then `Container ID:`.
        if top_level && opens_container_block(&lines[i..]) {
            let indented = lines[i + 1].starts_with([' ', '\t']);
            let n = lines[i + 1..]
                .iter()
                .position(|l| ends_container_block(l, indented))
                .map_or(lines.len() - i, |p| p + 1);
            flush_plain(&mut plain, &mut ev);
            read_containers(&lines[i..i + n], &mut pod, &mut ev);
            pod_seen = true;
            i += n;
            continue;
        }
        if let Some(c) = FIELD.captures(line.trim_start()).filter(|_| top_level) {
            let key = c["key"].trim().to_string();
            let value = c["value"].trim().to_string();
            let consumed = describe_field(&key, &value, &lines, i, &mut pod, &mut ev);
            if let Some(n) = consumed {
                pod_seen |= key != "Events";
                flush_plain(&mut plain, &mut ev);
                i += n;
                continue;
            }
        }
        // `kubectl get pods`: NAME READY STATUS RESTARTS AGE; a row's STATUS is the Pod's reason.
        if is_pods_header(line) {
            flush_plain(&mut plain, &mut ev);
            let mut j = i + 1;
            while j < lines.len() {
                let Some(signal) = pods_row(lines[j]) else {
                    break;
                };
                ev.signals.push(signal);
                j += 1;
            }
            i = j;
            continue;
        }
        // `kubectl get ds` (with or without its header): a device-plugin DaemonSet that wants no Pod or
        // whose Pods are not ready.
        if let Some(signal) = plugin_daemonset_row(line) {
            flush_plain(&mut plain, &mut ev);
            ev.signals.push(signal);
            i += 1;
            continue;
        }
        // A `get pods` row without its header (`| grep`): NAME 0/1 STATUS RESTARTS AGE.
        if let Some(signal) = pods_row(line).filter(|_| is_headerless_pods_row(line)) {
            flush_plain(&mut plain, &mut ev);
            ev.signals.push(signal);
            i += 1;
            continue;
        }
        if let Some(row) = event_row(line) {
            flush_plain(&mut plain, &mut ev);
            let (mut signal, used) = continue_row(row, &lines, i);
            note_assigned(&signal, &mut ev, &mut pod);
            signal.message = sanitize::clean(signal.message.trim(), true);
            ev.signals.push(signal);
            i += used;
            continue;
        }
        if is_table_noise(line) {
            i += 1;
            continue;
        }
        // Pieces of a JSON document that is not a Kubernetes object (an API error a tool printed): its
        // brackets are noise, its `"message": "…"` properties are messages, other properties are noise.
        let t = line.trim();
        if !t.is_empty() && t.bytes().all(|b| b"{}[],".contains(&b)) {
            flush_plain(&mut plain, &mut ev);
            i += 1;
            continue;
        }
        if let Some(c) = JSON_PROPERTY.captures(t) {
            flush_plain(&mut plain, &mut ev);
            if let Some(v) = c.name("value").map(|m| m.as_str())
                && matches!(&c["key"], "message" | "msg" | "note" | "error" | "reason")
            {
                let value = serde_json::from_str::<String>(&format!("\"{v}\""))
                    .unwrap_or_else(|_| v.to_string());
                plain.lines.push(value);
                flush_plain(&mut plain, &mut ev);
            }
            i += 1;
            continue;
        }
        // Bare text: start a new record or continue the current one.
        if plain.lines.is_empty()
            || RECORD_START.is_match(line)
            || line.trim().is_empty()
            || plain.writer != writers[i].as_deref()
        {
            flush_plain(&mut plain, &mut ev);
        }
        if !line.trim().is_empty() {
            plain.writer = writers[i].as_deref();
            plain.lines.push(line.to_string());
        }
        i += 1;
    }
    flush_plain(&mut plain, &mut ev);
    if pod_seen {
        // `Status: Failed` with a `Reason:` and no `Message:` (kubelet admission, e.g. OutOfnvidia.com/gpu).
        if let (Some(reason), None) = (&pod.reason, &pod.message) {
            ev.signals.push(Signal {
                source: Some(SignalSource::PodStatus),
                reason: Some(reason.clone()),
                message: reason.clone(),
                count: 1,
                ..Default::default()
            });
        }
        if pod.scheduled.is_none() && pod.node_name.is_some() {
            pod.scheduled = Some("True".into());
        }
        ev.target.name = pod.name.clone();
        ev.target.namespace = pod.namespace.clone();
        ev.pod = Some(pod);
    } else if let Some(p) = ev.pod.take() {
        ev.pod = Some(p);
    }
    // A pasted `kubectl logs` command says whose log is in the paste. It does not make that Pod the target:
    // the target is the Pod that does not start, and a component that prints its log runs.
    let mut commands = join_continued(&lines)
        .into_iter()
        .flatten()
        .filter_map(|l| logs_command(&l));
    if let Some(first) = commands.next() {
        let mut whose = first;
        let mut one_pod = whose.pod.is_some();
        for other in commands {
            if other.pod.is_none()
                || other.pod != whose.pod
                || (other.container.is_some()
                    && whose.container.is_some()
                    && other.container != whose.container)
            {
                one_pod = false;
                break;
            }
            whose.namespace = whose.namespace.or(other.namespace);
            whose.container = whose.container.or(other.container);
        }
        if one_pod && let Some(pod) = whose.pod {
            ev.logs_of = Some(LogsOf {
                pod,
                namespace: whose.namespace,
                container: whose.container,
            });
        }
    } else if let Some(writer) = writers.iter().flatten().next()
        && writers.iter().flatten().all(|w| w == writer)
        && let Some((pod, container)) = writer.strip_prefix("pod/").and_then(|w| w.split_once('/'))
    {
        // `kubectl logs --prefix` of one Pod's container names it on every line.
        ev.logs_of = Some(LogsOf {
            pod: sanitize::clean(pod, true),
            namespace: None,
            container: Some(sanitize::clean(container, true)),
        });
    }
    if ev.target.name.is_none() {
        for s in &ev.signals {
            if let Some(c) = POD_IN_LOG.captures(&s.message) {
                let name = c
                    .name("name")
                    .or_else(|| c.name("name2"))
                    .map(|m| m.as_str().to_string());
                let ns = c
                    .name("ns")
                    .or_else(|| c.name("ns2"))
                    .map(|m| m.as_str().to_string());
                ev.target.name = name;
                ev.target.namespace = ns;
                break;
            }
        }
    }
    settle_watched_rows(&mut ev.signals);
    ev
}

/// `kubectl get pods -w` prints a Pod's row again as it changes: a restarting row (`0/1 Running 3`) that a later
/// row of the same Pod shows ready (`1/1 Running`) was a Pod still starting, not a crash loop.
fn settle_watched_rows(signals: &mut [Signal]) {
    let ready_later: Vec<bool> = (0..signals.len())
        .map(|i| {
            let s = &signals[i];
            s.source == Some(SignalSource::PodStatus)
                && s.kind.as_deref() == Some("Warning")
                && s.reason.as_deref() == Some("Running")
                && signals[i + 1..].iter().any(|t| {
                    t.source == Some(SignalSource::PodStatus)
                        && t.object == s.object
                        && t.reason.as_deref() == Some("Running")
                        && t.kind.as_deref() == Some("Normal")
                })
        })
        .collect();
    for (s, settled) in signals.iter_mut().zip(ready_later) {
        if settled {
            s.kind = Some("Normal".into());
            s.message.clear();
        }
    }
}

/// Whether a line is the reporter's, not a program's: words in the first person (`My pod's events say:`, `I
/// also tried`), an introduction (`Here is the plugin's log:`), or, after a blank line, a line of four words or
/// more ending in a colon with no log header (`The training pod crashes right away, its log:`), which is not a
/// program's own heading (`Traceback (most recent call last):`, `Caused by:`, `goroutine 1 [running]:`). A long sentence alone is no sign:
/// programs' logs are full of them.
fn is_reporters_line(line: &str, after_blank: bool) -> bool {
    static REPORTERS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?:^|\s)(?:I|I'm|I've|[Mm]y|[Ww]e|[Oo]ur|[Hh]ere(?:'s| is| are))\s")
            .expect("reporter's words")
    });
    static HEADED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:[\[(<{]|\d|[EWIF]\d{4} |time=|level=|Traceback\b|Caused by\b|Stack backtrace\b|During handling\b|The above exception\b|goroutine \d+ \[|(?:ERROR|WARN(?:ING)?|INFO|DEBUG|FATAL|PANIC|TRACE)\b)")
            .expect("log header")
    });
    let t = line.trim();
    REPORTERS.is_match(t)
        || after_blank
            && t.ends_with(':')
            && t.split_whitespace().nth(3).is_some()
            && !HEADED.is_match(t)
}

/// The input's lines, each without its `kubectl logs --prefix` writer (`[pod/NAME/CONTAINER] `), and each line's
/// writer: that prefix, else the Pod (and container) of the `kubectl logs POD` command above it, until the next
/// command or the reporter's own words (a code fence around the paste is gone by now: `carried::unfence`). A command's own line, the reporter's lines and lines under a command
/// that names no one Pod have none.
fn log_writers(input: &str) -> (Vec<&str>, Vec<Option<String>>) {
    let mut under: Option<String> = None;
    let mut after_blank = false;
    let lines: Vec<&str> = input.lines().collect();
    let commands = join_continued(&lines);
    lines
        .iter()
        .zip(commands)
        .map(|(&line, command)| {
            let (message, prefix) = split_log_writer(line);
            // A line that continues a command typed over several lines is the command's.
            let Some(command) = command else {
                return (message, None);
            };
            let blank = std::mem::replace(&mut after_blank, line.trim().is_empty());
            if let Some(w) = prefix {
                return (message, Some(w.to_string()));
            }
            if under.is_some() && is_reporters_line(line, blank) {
                under = None;
            }
            if is_command_line(&command) {
                under = logs_command(&command).and_then(|c| {
                    let pod = c.pod?;
                    Some(match c.container {
                        Some(container) => format!("pod/{pod}/{container}"),
                        None => format!("pod/{pod}"),
                    })
                });
                return (message, None);
            }
            (message, under.clone())
        })
        .unzip()
}

/// `kubectl get pods`' header: NAME (after NAMESPACE with `-A`) opens it, so a line that only holds those
/// words further on (a paste whose line breaks were lost) is not one.
fn is_pods_header(line: &str) -> bool {
    let cols: Vec<&str> = line.split_whitespace().collect();
    let at = |name: &str| cols.iter().position(|c| *c == name);
    matches!((at("NAME"), at("READY"), at("STATUS")), (Some(n), Some(r), Some(s)) if n <= 1 && n < r && r < s)
}

fn is_headerless_pods_row(line: &str) -> bool {
    let cols: Vec<&str> = line.split_whitespace().collect();
    // NAME READY STATUS RESTARTS …, or with `-A` the namespace first.
    let row_at = |ready: usize| {
        // A STATUS typed with a space after the colon (`Init: CrashLoopBackOff`) takes two cells.
        let wide = usize::from(cols.get(ready + 1) == Some(&"Init:"));
        cols.len() >= ready + 4 + wide
            && is_ready_column(cols[ready])
            && cols[ready + 1]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_uppercase())
            && cols[ready + 2 + wide]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit())
    };
    row_at(1) || row_at(2)
}

/// A `get pods` READY cell: ready/total containers (`0/1`).
fn is_ready_column(cell: &str) -> bool {
    cell.split_once('/')
        .is_some_and(|(a, b)| a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok())
}

fn pods_row(line: &str) -> Option<Signal> {
    let cols: Vec<&str> = line.split_whitespace().collect();
    // [NAMESPACE] NAME READY STATUS …, READY looks like 0/1.
    let ready_at = cols.iter().position(|c| is_ready_column(c))?;
    let name = cols.get(ready_at.checked_sub(1)?)?;
    // `-A` listings put the namespace first.
    let namespace = ready_at
        .checked_sub(2)
        .and_then(|i| cols.get(i))
        .filter(|ns| {
            ns.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        })
        .map(|ns| ns.to_string());
    let status = match *cols.get(ready_at + 1)? {
        // A status retyped with a space after the colon (`Init: 0/1`).
        "Init:" => format!("Init:{}", cols.get(ready_at + 2)?),
        s => s.to_string(),
    };
    let status = status.as_str();
    // A container that keeps restarting shows `Running` between its crashes: not ready, restarted again and again.
    let restarts: u32 = cols
        .get(ready_at + 2)
        .and_then(|r| r.parse().ok())
        .unwrap_or(0);
    let restarting = status == "Running" && cols[ready_at].starts_with("0/") && restarts >= 3;
    // In-progress states say nothing about a block on their own.
    let healthy = !restarting
        && matches!(
            status,
            "Running"
                | "Completed"
                | "Succeeded"
                | "Pending"
                | "ContainerCreating"
                | "PodInitializing"
                | "Terminating"
        )
        || status.starts_with("Init:") && !status.contains("Err") && !status.contains("BackOff");
    // `-o wide` adds IP and NODE after AGE (RESTARTS may read `9 (19d ago)`): the node the Pod is bound to.
    let ip = |c: &str| {
        c == "<none>"
            || c.split('.').count() == 4 && c.split('.').all(|o| o.parse::<u8>().is_ok())
            || c.contains(':') && c.bytes().all(|b| b.is_ascii_hexdigit() || b == b':')
    };
    let node = cols
        .iter()
        .enumerate()
        .skip(ready_at + 3)
        .take(5)
        .find(|(_, c)| ip(c))
        .and_then(|(i, _)| cols.get(i + 1))
        .filter(|n| **n != "<none>" && is_dns_subdomain(n))
        .map(|n| n.to_string());
    Some(Signal {
        node,
        source: Some(SignalSource::PodStatus),
        reason: Some(sanitize::line(status)),
        kind: Some(if healthy { "Normal" } else { "Warning" }.into()),
        // The row itself is the evidence of the restarts.
        message: if restarting {
            sanitize::line(&cols.join(" "))
        } else {
            String::new()
        },
        count: 1,
        // `kubectl get all` names its rows `pod/NAME`.
        object: Some(format!(
            "pod/{}",
            sanitize::line(name.strip_prefix("pod/").unwrap_or(name))
        )),
        namespace,
        ..Default::default()
    })
}

/// A `kubectl get daemonset` row, `[NAMESPACE] NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE …`, of a GPU
/// device plugin that wants no Pod (DESIRED 0: its node selector or affinity matches no node) or whose Pods
/// are not all ready (READY below DESIRED), or of a GPU driver DaemonSet whose Pods are not all ready. A listing flattened onto one line is read row by row.
fn plugin_daemonset_row(line: &str) -> Option<Signal> {
    // A table pads its columns (with spaces, or tabs once a ticket converted them); a sentence does not. A
    // row whose padding a tracker squeezed to one space still has every column of `kubectl get ds`.
    if !line.trim().contains("  ")
        && !line.contains('\t')
        && line.split_whitespace().nth(6).is_none()
    {
        return None;
    }
    let cols: Vec<&str> = line.split_whitespace().collect();
    (1..cols.len()).find_map(|at| {
        let name = cols[at - 1];
        let counts: Vec<u32> = cols
            .get(at..at + 5)?
            .iter()
            .map(|c| c.parse().ok())
            .collect::<Option<_>>()?;
        let driver = is_driver_daemonset(name);
        // A precompiled driver's DaemonSet names its kernel (`…-5.15.0-105-generic-ubuntu22.04`): dots.
        let named = is_dns_label(name) || (driver && is_dns_subdomain(name));
        if !(is_plugin_daemonset(name) || driver) || !named {
            return None;
        }
        let (desired, ready) = (counts[0], counts[2]);
        let state = match desired {
            // A driver DaemonSet wants no Pod where the driver is installed on the host: that is no fault.
            0 if driver => return None,
            0 => DaemonsetState::Idle,
            _ if ready < desired => DaemonsetState::NotReady { desired, ready },
            _ => return None,
        };
        // The column before the name is its namespace when the row starts the line, or follows the AGE of
        // the row before it in a listing run together; otherwise it is that AGE, or prose.
        let namespace = at
            .checked_sub(2)
            .filter(|&i| i == 0 || is_age(cols[i - 1]))
            .map(|i| cols[i])
            .filter(|ns| is_dns_label(ns) && !is_age(ns))
            .map(str::to_string);
        // A listing run together on one line is quoted by its row; a row of its own, whole.
        let rows = cols
            .windows(5)
            .filter(|w| w.iter().all(|c| c.parse::<u32>().is_ok()))
            .count();
        let row = if rows > 1 {
            cols[at.saturating_sub(2)..at + 5].join(" ")
        } else {
            line.to_string()
        };
        Some(daemonset_signal(name, namespace, &row, state))
    })
}

/// A kubectl AGE cell: `12m`, `4m20s`, `3d`, `<unknown>`.
fn is_age(s: &str) -> bool {
    s == "<unknown>"
        || (!s.is_empty()
            && s.bytes().next().is_some_and(|b| b.is_ascii_digit())
            && s.bytes()
                .all(|b| b.is_ascii_digit() || b"smhdy".contains(&b))
            && !s.bytes().all(|b| b.is_ascii_digit()))
}

/// A GPU device plugin's DaemonSet (not the MPS control daemon beside it).
fn is_plugin_daemonset(name: &str) -> bool {
    [
        "device-plugin",
        "amdgpu-dp",
        "intel-gpu-plugin",
        "gpu-plugin",
    ]
    .iter()
    .any(|p| name.contains(p))
        && !name.contains("mps")
}

/// What a device-plugin DaemonSet's counts say.
enum DaemonsetState {
    Idle,
    NotReady { desired: u32, ready: u32 },
}

fn daemonset_signal(
    name: &str,
    namespace: Option<String>,
    text: &str,
    state: DaemonsetState,
) -> Signal {
    let reason = match state {
        DaemonsetState::Idle => "DESIRED 0".to_string(),
        DaemonsetState::NotReady { desired, ready } => format!("READY {ready}/{desired}"),
    };
    Signal {
        source: Some(SignalSource::Daemonset),
        reason: Some(reason),
        message: sanitize::clean(text.trim(), false),
        count: 1,
        object: Some(format!("daemonset/{}", sanitize::line(name))),
        namespace,
        ..Default::default()
    }
}

fn note_assigned(s: &Signal, ev: &mut Evidence, pod: &mut PodFacts) {
    if s.reason.as_deref() == Some("Scheduled")
        && let Some(placed) = crate::evidence::placement(&s.message)
        && let Some(ns) = placed.namespace
    {
        if ev.target.name.is_none() {
            ev.target.name = Some(placed.pod.to_string());
            ev.target.namespace = Some(ns.to_string());
        }
        let node = placed.node.map(str::to_string);
        if pod.node_name.is_none() {
            pod.node_name.clone_from(&node);
        }
        if ev.pod.is_none() {
            ev.pod = Some(PodFacts {
                node_name: node,
                scheduled: Some("True".into()),
                ..Default::default()
            });
        }
    }
}

fn is_table_noise(line: &str) -> bool {
    let t = line.trim();
    t.starts_with("----")
        // The Events table's header, not a table run together on one line after it.
        || (t.starts_with("Type")
            && t.contains("Reason")
            && t.trim_end_matches(|c: char| c == '|' || c.is_whitespace()).ends_with("Message"))
        || (t.contains("LAST SEEN") && t.contains("REASON"))
        || (t.starts_with("FirstSeen") && t.contains("Reason"))
        || (t.starts_with("```") && t[3..].chars().all(|c| c.is_ascii_alphanumeric()))
}

/// Lines of bare text that make one record, and the Pod whose log they are when a prefix named it.
#[derive(Default)]
struct Plain<'a> {
    lines: Vec<String>,
    writer: Option<&'a str>,
}

/// A line of `kubectl logs --prefix` (`[pod/NAME/CONTAINER] message`) as its message and its writer
/// (`pod/NAME/CONTAINER`); any other line as it is.
fn split_log_writer(line: &str) -> (&str, Option<&str>) {
    let Some(rest) = line.strip_prefix("[pod/") else {
        return (line, None);
    };
    match rest
        .split_once("] ")
        .or_else(|| rest.strip_suffix(']').map(|w| (w, "")))
    {
        Some((writer, message))
            if writer.split('/').count() == 2
                && !writer.contains(char::is_whitespace)
                && writer.split('/').all(|p| !p.is_empty()) =>
        {
            (message, Some(&line[1..writer.len() + 5]))
        }
        _ => (line, None),
    }
}

fn flush_plain(plain: &mut Plain<'_>, ev: &mut Evidence) {
    if plain.lines.is_empty() {
        return;
    }
    let joined = plain.lines.join("\n");
    plain.lines.clear();
    let (source, message, reason) = strip_record(&joined);
    if message.trim().is_empty() {
        return;
    }
    ev.signals.push(Signal {
        source: Some(source),
        reason,
        message: sanitize::clean(message.trim(), true),
        count: 1,
        component: plain.writer.map(|w| sanitize::clean(w, true)),
        ..Default::default()
    });
}

/// Recognises log framing and YAML keys around a bare message, and undoes log escaping.
fn strip_record(text: &str) -> (SignalSource, String, Option<String>) {
    let t =
        text.trim_start_matches(|c: char| c == '-' || c == '>' || c == '*' || c.is_whitespace());
    for key in ["message:", "note:"] {
        if let Some(rest) = t.strip_prefix(key) {
            let v = rest.trim().trim_matches(|c| c == '\'' || c == '"');
            return (SignalSource::Text, v.to_string(), None);
        }
    }
    if let Some(rest) = t.strip_prefix("reason:") {
        return (
            SignalSource::Text,
            rest.trim().trim_matches('"').to_string(),
            None,
        );
    }
    let is_log = t.contains("level=")
        || t.contains("kubelet[")
        || t.contains("containerd[")
        || t.contains("err=\"")
        || t.contains("error=\"")
        || KLOG_LINE.is_match(t);
    if is_log {
        return (SignalSource::Log, unescape(t), None);
    }
    if text.contains("\\\"") {
        return (SignalSource::Text, unescape(text), None);
    }
    (SignalSource::Text, text.to_string(), None)
}

/// Undoes one or more levels of Go/JSON string escaping inside log lines (`\"`, `\\\"`).
fn unescape(s: &str) -> String {
    let mut cur = s.to_string();
    for _ in 0..4 {
        if !cur.contains('\\') {
            break;
        }
        let next = cur
            .replace("\\\\", "\u{0}")
            .replace("\\\"", "\"")
            .replace("\\n", "\n")
            .replace('\u{0}', "\\");
        if next == cur {
            break;
        }
        cur = next;
    }
    cur
}

struct Row {
    signal: Signal,
    indent: usize,
}

fn event_row(line: &str) -> Option<Row> {
    let c = EVENT_ROW.captures(line)?;
    let pre = c.name("pre").map_or("", |m| m.as_str());
    let pre_trim = pre.trim();
    // Only a table row if what precedes the type is indentation, a timestamp or an age column.
    if !pre_trim.is_empty()
        && !pre_trim
            .split_whitespace()
            .all(|w| w.len() < 40 && !w.ends_with(':'))
    {
        return None;
    }
    if !pre_trim.is_empty()
        && pre_trim.chars().any(|c| c.is_ascii_lowercase())
        && !looks_like_age_or_ns(pre_trim)
    {
        return None;
    }
    let reason = c["reason"].to_string();
    let mut rest = c
        .name("rest")
        .map_or("", |m| m.as_str())
        .trim_start()
        .to_string();
    let mut count = 1;
    let mut component = None;
    let mut node = None;
    let mut object = None;
    let mut seen_ago = None;
    if let Some(o) = OBJECT.captures(&rest) {
        // `kubectl get events`: LAST SEEN before the type, OBJECT then MESSAGE (`kubectl events` writes the
        // kind as the API names it, `Pod/NAME`).
        object = Some(format!("{}/{}", o["kind"].to_ascii_lowercase(), &o["name"]));
        rest = rest[o.get(0).map_or(0, |m| m.end())..].to_string();
        // With `-A` the namespace comes first.
        seen_ago = pre_trim.split_whitespace().find_map(age_seconds);
    } else {
        if let Some(a) = AGE.captures(&rest) {
            seen_ago = age_seconds(&a["age"]);
            count = a
                .name("n")
                .and_then(|m| m.as_str().parse().ok())
                .unwrap_or(1);
            rest = rest[a.get(0).map_or(0, |m| m.end())..].to_string();
        }
        if let Some(f) = FROM.captures(&rest) {
            let from = f["from"].to_string();
            if let Some((comp, host)) = from.split_once(',') {
                component = Some(comp.trim().to_string());
                node = Some(host.trim().to_string());
            } else {
                component = Some(
                    from.trim_matches(|c| c == '{' || c == '}')
                        .split_whitespace()
                        .next()
                        .unwrap_or("")
                        .to_string(),
                );
            }
            rest = rest[f.get(0).map_or(0, |m| m.end())..].to_string();
        }
    }
    // kubectl ≥1.35 prefixes container events with their fieldPath.
    let mut field_path = None;
    if rest.starts_with("spec.")
        && let Some((fp, msg)) = rest.split_once("}: ")
        && !fp.contains(' ')
    {
        field_path = Some(format!("{fp}}}"));
        rest = msg.to_string();
    }
    let kind = c["type"].to_string();
    let source =
        if reason == "FailedCreate" || object.as_deref().is_some_and(|o| !o.starts_with("pod/")) {
            SignalSource::OwnerEvent
        } else {
            SignalSource::Event
        };
    let indent = line.len() - line.trim_start().len();
    Some(Row {
        signal: Signal {
            source: Some(source),
            reason: Some(reason),
            kind: Some(kind),
            message: rest,
            count,
            object,
            field_path,
            component,
            node,
            time: None,
            seen_ago,
            namespace: None,
        },
        indent,
    })
}

fn looks_like_age_or_ns(pre: &str) -> bool {
    // `2m`, `<unknown>`, `10h (x3 over 1d)`, a namespace column, or an ISO timestamp.
    pre.split_whitespace().count() <= 6
}

/// kubectl's age (`4s`, `25m`, `3h5m`, `2d3h`, `2y`) in seconds; `None` for `<unknown>` and anything else.
fn age_seconds(age: &str) -> Option<u64> {
    let mut total = 0u64;
    let mut digits = String::new();
    for c in age.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3_600,
            'd' => 86_400,
            'y' => 31_536_000,
            _ => return None,
        };
        total = total.checked_add(digits.parse::<u64>().ok()?.checked_mul(unit)?)?;
        digits.clear();
    }
    digits
        .is_empty()
        .then_some(total)
        .filter(|_| !age.is_empty())
}

/// Appends the lines that continue an event's message (wrapped rows, embedded newlines).
fn continue_row(row: Row, lines: &[&str], start: usize) -> (Signal, usize) {
    let mut signal = row.signal;
    let mut used = 1;
    while start + used < lines.len() {
        let next = lines[start + used];
        let t = next.trim();
        if t.is_empty() || event_row(next).is_some() || is_table_noise(next) {
            break;
        }
        let indent = next.len() - next.trim_start().len();
        // A new top-level describe field ends the table, and so does a node's log pasted after it (a
        // journal line with its host and writer, or klog's header with its source line).
        if indent == 0
            && (FIELD.is_match(next) || LOG_AFTER_TABLE.is_match(next))
            && !signal.message.is_empty()
            && row.indent > 0
        {
            break;
        }
        signal.message.push('\n');
        signal.message.push_str(t);
        used += 1;
    }
    (signal, used)
}

/// Handles one top-level describe field; returns how many lines it consumed, or None if it is not one.
fn describe_field(
    key: &str,
    value: &str,
    lines: &[&str],
    i: usize,
    pod: &mut PodFacts,
    ev: &mut Evidence,
) -> Option<usize> {
    let block_end = |from: usize| -> usize {
        let mut j = from + 1;
        while j < lines.len()
            && (lines[j].starts_with(' ')
                || lines[j].starts_with('\t')
                || lines[j].trim().is_empty())
        {
            if lines[j].trim().is_empty() && j + 1 < lines.len() && !lines[j + 1].starts_with(' ') {
                break;
            }
            j += 1;
        }
        j - from
    };
    let none = |v: &str| v.is_empty() || v == "<none>";
    match key {
        "Name" => {
            pod.name = Some(sanitize::line(value));
            Some(1)
        }
        "Namespace" => {
            pod.namespace = Some(sanitize::line(value));
            Some(1)
        }
        // A Pod's node follows its name; a `Node:` line on its own names the node a ticket is about.
        "Node" if pod.name.is_none() => None,
        "Node" => {
            if !none(value) {
                pod.node_name = Some(sanitize::line(value.split('/').next().unwrap_or(value)));
            }
            Some(1)
        }
        // A Pod's phase (`Terminating (lasts 2m)` while it is deleted); another object's `Status:` (a
        // ComputeDomain's `NotReady`) is not one.
        "Status" => {
            if matches!(
                value.split_whitespace().next(),
                Some("Pending" | "Running" | "Succeeded" | "Failed" | "Unknown" | "Terminating")
            ) {
                pod.phase = Some(sanitize::line(value));
            }
            Some(1)
        }
        "Reason" => {
            pod.reason = Some(sanitize::line(value));
            Some(1)
        }
        "Message" => {
            let n = block_end(i);
            let mut msg = value.to_string();
            for l in &lines[i + 1..i + n] {
                msg.push('\n');
                msg.push_str(l.trim());
            }
            pod.message = Some(sanitize::clean(msg.trim(), true));
            ev.signals.push(Signal {
                source: Some(SignalSource::PodStatus),
                reason: pod.reason.clone(),
                message: pod.message.clone().unwrap_or_default(),
                count: 1,
                ..Default::default()
            });
            Some(n)
        }
        "Runtime Class Name" => {
            if !none(value) {
                pod.runtime_class_name = Some(sanitize::line(value));
            }
            Some(1)
        }
        "Controlled By" => {
            pod.owner = Some(sanitize::line(value));
            if ev.target.kind == "Deployment" && value.starts_with("Deployment/") {
                ev.target.kind = "ReplicaSet".into();
            }
            Some(1)
        }
        "Node-Selectors" => {
            let n = block_end(i);
            for l in std::iter::once(value).chain(lines[i + 1..i + n].iter().map(|l| l.trim())) {
                if let Some((k, v)) = l.split_once('=') {
                    pod.node_selector
                        .insert(sanitize::line(k.trim()), sanitize::line(v.trim()));
                }
            }
            Some(n)
        }
        "Tolerations" => {
            let n = block_end(i);
            for l in std::iter::once(value).chain(lines[i + 1..i + n].iter().map(|l| l.trim())) {
                if let Some(t) = parse_toleration(l) {
                    pod.tolerations.push(t);
                }
            }
            Some(n)
        }
        "Containers" | "Init Containers" => {
            let n = block_end(i);
            read_containers(&lines[i + 1..i + n], pod, ev);
            Some(n)
        }
        "Conditions" => {
            let n = block_end(i);
            for l in &lines[i + 1..i + n] {
                let mut parts = l.split_whitespace();
                match (parts.next(), parts.next(), parts.next()) {
                    (Some("PodScheduled"), Some(s), _) => pod.scheduled = Some(s.to_string()),
                    (Some("Ready"), Some(s), _) => pod.ready = Some(s.to_string()),
                    // A Deployment/ReplicaSet that cannot create its Pods (the reason is on the ReplicaSet).
                    (Some("ReplicaFailure"), Some("True"), reason) => ev.signals.push(Signal {
                        source: Some(SignalSource::OwnerEvent),
                        reason: Some(reason.unwrap_or("FailedCreate").to_string()),
                        kind: Some("Warning".into()),
                        message: "condition ReplicaFailure=True".into(),
                        count: 1,
                        ..Default::default()
                    }),
                    _ => {}
                }
            }
            Some(n)
        }
        "Events" => Some(1),
        // `kubectl describe node`: the block is about a node, not a Pod.
        "Roles" => {
            if pod.phase.is_none() {
                ev.target.kind = "Node".into();
            }
            Some(1)
        }
        // `kubectl describe daemonset` of a device plugin that wants no Pod.
        "Desired Number of Nodes Scheduled" => {
            ev.target.kind = "DaemonSet".into();
            if value == "0"
                && let Some(name) = pod.name.as_deref().filter(|n| is_plugin_daemonset(n))
            {
                ev.signals.push(daemonset_signal(
                    name,
                    pod.namespace.clone(),
                    lines[i],
                    DaemonsetState::Idle,
                ));
            }
            Some(1)
        }
        "Replicas" => {
            ev.target.kind = if pod
                .owner
                .as_deref()
                .is_some_and(|o| o.starts_with("Deployment/"))
            {
                "ReplicaSet".into()
            } else {
                "Deployment".into()
            };
            Some(1)
        }
        "NewReplicaSet" => {
            if let Some(rs) = value.split_whitespace().next().filter(|v| !none(v)) {
                pod.owner = Some(format!("ReplicaSet/{}", sanitize::line(rs)));
            }
            Some(1)
        }
        _ if lines[i].starts_with(key)
            && !value.contains("  ")
            && key.len() < 40
            && is_describe_key(key) =>
        {
            Some(block_end(i))
        }
        _ => None,
    }
}

fn is_describe_key(key: &str) -> bool {
    matches!(
        key,
        "Priority"
            | "Priority Class Name"
            | "Service Account"
            | "Start Time"
            | "Labels"
            | "Annotations"
            | "IP"
            | "IPs"
            | "QoS Class"
            | "Volumes"
            | "Readiness Gates"
            | "Topology Spread Constraints"
            | "Selector"
            | "Replicas"
            | "Pods Status"
            | "Pod Template"
            | "Nominated Node Name"
            | "Completions"
            | "Parallelism"
            | "CreationTimestamp"
    )
}

/// `nvidia.com/gpu:NoSchedule op=Exists`, `dedicated=gpu:NoSchedule`, `node.kubernetes.io/not-ready:NoExecute op=Exists for 300s`.
fn parse_toleration(l: &str) -> Option<Toleration> {
    let l = l.trim();
    if l.is_empty() || l == "<none>" {
        return None;
    }
    let mut parts = l.split_whitespace();
    let head = parts.next()?;
    let op = parts
        .find_map(|p| p.strip_prefix("op="))
        .map(str::to_string);
    let (kv, effect) = match head.rsplit_once(':') {
        Some((kv, e)) if matches!(e, "NoSchedule" | "NoExecute" | "PreferNoSchedule") => {
            (kv, Some(e.to_string()))
        }
        _ => (head, None),
    };
    let (key, value) = match kv.split_once('=') {
        Some((k, v)) => (k, Some(v.to_string())),
        None => (kv, None),
    };
    Some(Toleration {
        key: (!key.is_empty()).then(|| key.to_string()),
        operator: op.or_else(|| {
            Some(if value.is_some() {
                "Equal".into()
            } else {
                "Exists".into()
            })
        }),
        value,
        effect,
    })
}

/// Whether the lines open one container's block from `kubectl describe` (its name alone, then its
/// `Container ID:` or `Image:`), cut from the Pod's.
fn opens_container_block(lines: &[&str]) -> bool {
    let (Some(head), Some(next)) = (lines.first(), lines.get(1)) else {
        return false;
    };
    let next = next.trim_start();
    head.trim().strip_suffix(':').is_some_and(is_dns_label)
        && (next.starts_with("Container ID:") || next.starts_with("Image:"))
}

/// Whether a line ends a container's block pasted without its heading: a blank line (what follows is another
/// paste), a section of the Pod's (`Conditions:`, `Events:`) at the left edge, or, when the block's fields are
/// indented under its name, any line at the left edge.
fn ends_container_block(line: &str, indented: bool) -> bool {
    let flush = !line.starts_with([' ', '\t']);
    line.trim().is_empty()
        || (flush && indented)
        || (flush
            && FIELD.captures(line).is_some_and(|c| {
                matches!(
                    c["key"].trim(),
                    "Conditions"
                        | "Volumes"
                        | "Events"
                        | "QoS Class"
                        | "Node-Selectors"
                        | "Tolerations"
                )
            }))
}

/// Container blocks: `Limits:`/`Requests:` resources and `State:`/`Last State:` reason and message.
fn read_containers(block: &[&str], pod: &mut PodFacts, ev: &mut Evidence) {
    let mut current: Option<String> = None;
    let mut in_res = false;
    let mut state: Option<String> = None;
    let mut reason: Option<String> = None;
    let mut j = 0;
    let push = |pod_name: &Option<String>,
                state: &Option<String>,
                reason: &Option<String>,
                msg: String,
                ev: &mut Evidence| {
        if reason.is_none() && msg.is_empty() {
            return;
        }
        if state.as_deref() == Some("Terminated") && reason.as_deref() == Some("Completed") {
            return;
        }
        ev.signals.push(Signal {
            source: Some(SignalSource::ContainerStatus),
            reason: reason.clone(),
            message: sanitize::clean(msg.trim(), true),
            count: 1,
            field_path: pod_name.as_ref().map(|n| format!("spec.containers{{{n}}}")),
            ..Default::default()
        });
    };
    while j < block.len() {
        let l = block[j];
        let indent = l.len() - l.trim_start().len();
        let t = l.trim();
        // A container's name heads its block; it is a DNS label, where the block's own keys (`Args:`,
        // `Mounts:`) are capitalised, so a paste that lost its indentation still tells them apart.
        if indent <= 2 && t.strip_suffix(':').is_some_and(is_dns_label) {
            current = Some(sanitize::line(t.trim_end_matches(':')));
            if let Some(c) = &current {
                pod.containers.push(c.clone());
            }
            in_res = false;
            j += 1;
            continue;
        }
        if let Some((k, v)) = t.split_once(':') {
            let v = v.trim();
            match k {
                "Limits" | "Requests" => {
                    in_res = true;
                    j += 1;
                    continue;
                }
                "State" | "Last State" => {
                    in_res = false;
                    state = Some(v.to_string());
                    if v == "Running" {
                        pod.any_running = true;
                    }
                    reason = None;
                }
                "Reason" if state.is_some() => {
                    reason = Some(sanitize::line(v));
                    // A reason without a message (ContainerCreating) still counts.
                    let next_is_msg = block
                        .get(j + 1)
                        .is_some_and(|n| n.trim_start().starts_with("Message:"));
                    if !next_is_msg {
                        push(&current, &state, &reason, String::new(), ev);
                    }
                }
                "Message" if state.is_some() => {
                    let mut msg = v.to_string();
                    let base = indent;
                    while j + 1 < block.len() {
                        let n = block[j + 1];
                        let ni = n.len() - n.trim_start().len();
                        let nt = n.trim();
                        if nt.is_empty()
                            || (ni <= base
                                && nt.contains(':')
                                && nt.split(':').next().is_some_and(|k| {
                                    !k.contains(' ') || k == "Exit Code" || k == "Last State"
                                }))
                        {
                            break;
                        }
                        msg.push('\n');
                        msg.push_str(nt);
                        j += 1;
                    }
                    push(&current, &state, &reason, msg, ev);
                }
                _ if in_res && indent >= 6 => {
                    if !v.is_empty() {
                        pod.requests
                            .entry(sanitize::line(k))
                            .or_insert_with(|| sanitize::line(v));
                    }
                }
                _ => in_res = false,
            }
        }
        j += 1;
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn table_ages_are_read_in_seconds() {
        for (age, secs) in [
            ("4s", Some(4)),
            ("25m", Some(1500)),
            ("3h5m", Some(11_100)),
            ("2d3h", Some(183_600)),
            ("2y", Some(63_072_000)),
            ("<unknown>", None),
            ("default", None),
            ("", None),
            ("5", None),
        ] {
            assert_eq!(age_seconds(age), secs, "{age}");
        }
        // `kubectl events` names the kind as the API does; its LAST SEEN is the row's age.
        let row = event_row("3m (x12 over 6m)    Warning   FailedCreatePodSandBox   Pod/cuda-vectoradd   Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for \"nvidia\" is configured").unwrap();
        assert_eq!(row.signal.object.as_deref(), Some("pod/cuda-vectoradd"));
        assert_eq!(row.signal.seen_ago, Some(180));
        assert!(
            row.signal
                .message
                .starts_with("Failed to create pod sandbox")
        );
    }
    use super::*;

    #[test]
    fn a_running_row_that_keeps_restarting_is_not_healthy() {
        let row = |l: &str| pods_row(l).unwrap();
        let looping = row("default   vllm-9f6768b85-ppsm8   0/1   Running   12 (7m51s ago)   151m");
        assert_eq!(looping.kind.as_deref(), Some("Warning"));
        assert!(
            looping.message.contains("0/1 Running 12 (7m51s ago)"),
            "{looping:?}"
        );
        // Ready, or restarted only once or twice: a Pod that runs.
        for l in [
            "default   vllm-9f6768b85-ppsm8   1/1   Running   12 (7m51s ago)   151m",
            "default   vllm-9f6768b85-ppsm8   0/1   Running   2 (7m51s ago)   151m",
            "vllm-9f6768b85-ppsm8   0/1   Running   0   15s",
        ] {
            let s = row(l);
            assert_eq!(s.kind.as_deref(), Some("Normal"), "{l}");
            assert!(s.message.is_empty(), "{l}");
        }
        // Watched until it turned ready: no crash loop.
        let watched = read(
            "NAME                   READY   STATUS    RESTARTS      AGE\nvllm-9f6768b85-ppsm8   0/1     Running   3 (40s ago)   9m\nvllm-9f6768b85-ppsm8   1/1     Running   3 (60s ago)   10m\n",
        );
        assert!(
            watched
                .signals
                .iter()
                .all(|s| s.kind.as_deref() == Some("Normal")),
            "{:?}",
            watched.signals
        );
    }

    #[test]
    fn describe_events_with_counts_and_prefix() {
        let text = "Name: p\nNamespace: ml\nStatus: Pending\nEvents:\n  Type     Reason            Age                  From               Message\n  ----     ------            ----                 ----               -------\n  Warning  FailedScheduling  2m35s (x1135 over 4h7m)  default-scheduler  0/3 nodes are available: 3 Insufficient nvidia.com/gpu.\n  Warning  Failed  1s  kubelet  spec.containers{cuda}: Error: failed to create containerd task: x\n    nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown\n";
        let ev = read(text);
        assert_eq!(ev.target.name.as_deref(), Some("p"));
        assert_eq!(ev.signals.len(), 2, "{:#?}", ev.signals);
        assert_eq!(ev.signals[0].count, 1135);
        assert_eq!(
            ev.signals[0].component.as_deref(),
            Some("default-scheduler")
        );
        assert_eq!(
            ev.signals[1].field_path.as_deref(),
            Some("spec.containers{cuda}")
        );
        assert!(ev.signals[1].message.contains("driver not loaded"));
    }

    #[test]
    fn a_container_block_without_its_heading_is_read_as_one_even_flush_left() {
        for text in [
            "toolkit-validation:\n  Container ID:  containerd://5678\n  Args:\n    nvidia-validator\n  State:          Waiting\n    Reason:       CrashLoopBackOff\n  Last State:     Terminated\n    Reason:       Error\n",
            "toolkit-validation:\nContainer ID: containerd://5678\nArgs:\nnvidia-validator\nState: Waiting\nReason: CrashLoopBackOff\nLast State: Terminated\nReason: Error\n",
        ] {
            let ev = read(text);
            let s = &ev.signals[0];
            assert_eq!(s.source, Some(SignalSource::ContainerStatus), "{text}");
            assert_eq!(s.reason.as_deref(), Some("CrashLoopBackOff"));
            assert_eq!(
                s.field_path.as_deref(),
                Some("spec.containers{toolkit-validation}")
            );
            assert_eq!(ev.pod.and_then(|p| p.reason), None, "{text}");
        }
    }

    #[test]
    fn a_container_block_without_its_heading_ends_where_the_next_paste_starts() {
        let text = "cuda:\n  Container ID:  containerd://1\n  State:          Waiting\n    Reason:       ContainerCreating\n\n$ kubectl get events\nLAST SEEN   TYPE      REASON   OBJECT     MESSAGE\n10s         Warning   Failed   pod/cuda   Error: nvml error: driver not loaded: unknown\n";
        let ev = read(text);
        assert!(
            ev.signals
                .iter()
                .any(|s| s.message.contains("driver not loaded")),
            "{:#?}",
            ev.signals
        );
    }

    #[test]
    fn an_event_row_cut_off_in_its_age_has_no_message() {
        // gpu-operator #308: the paste ends inside `14m (x2 over 15m)`.
        let ev = read(
            "Events:\n  Type     Reason   Age  From  Message\n  ----     ------   ---  ----  -------\n  Normal   BackOff           14m (x2",
        );
        let s = ev.signals.last().unwrap();
        assert_eq!(s.reason.as_deref(), Some("BackOff"));
        assert_eq!(s.count, 2);
        assert!(!s.message.contains("(x2"), "{s:?}");
    }

    #[test]
    fn events_without_header_and_get_events_table() {
        let ev = read(
            "Warning  FailedScheduling  10h  default-scheduler  0/6 nodes are available: 6 Insufficient nvidia.com/gpu.",
        );
        assert_eq!(ev.signals[0].reason.as_deref(), Some("FailedScheduling"));
        assert!(ev.signals[0].message.starts_with("0/6"));
        let ev = read(
            "LAST SEEN   TYPE      REASON             OBJECT            MESSAGE\n2m          Warning   FailedCreate       replicaset/gpu-5d   Error creating: pods \"gpu-5d-\" is forbidden: pod rejected: RuntimeClass \"nvidia\" not found\n",
        );
        assert_eq!(ev.signals.len(), 1);
        assert_eq!(ev.signals[0].source, Some(SignalSource::OwnerEvent));
        assert_eq!(ev.signals[0].object.as_deref(), Some("replicaset/gpu-5d"));
    }

    #[test]
    fn log_lines_are_unescaped() {
        let ev = read(
            r#"kubelet[1311]: E0505 18:42:19.812688    1311 pod_workers.go:949] "Error syncing pod, skipping" err="failed to \"CreatePodSandbox\" for \"x\" with CreatePodSandboxError: \"Failed to create sandbox for pod \\\"x\\\": rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for \\\"nvidia\\\" is configured\"" pod="gpu-operator/nvidia-device-plugin-daemonset-h9kxw""#,
        );
        assert_eq!(ev.signals[0].source, Some(SignalSource::Log));
        assert!(
            ev.signals[0]
                .message
                .contains(r#"no runtime for "nvidia" is configured"#),
            "{}",
            ev.signals[0].message
        );
        assert_eq!(
            ev.target.name.as_deref(),
            Some("nvidia-device-plugin-daemonset-h9kxw")
        );
    }

    /// Go's standard log dates its lines `2018/02/27 16:43:50` (the device plugin's before klog): such a line
    /// opens a record, not a continuation of the scheduler's message above it (NVIDIA/k8s-device-plugin#33).
    #[test]
    fn a_go_log_line_opens_its_own_record() {
        let ev = read(
            "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.\n2018/02/27 16:43:50 Warning: GPU with UUID GPU-edae6d5d-6698-fb8d-2c6b-2a791224f089 is too old to support healtchecking with error: %!s(MISSING). Marking it unhealthy",
        );
        assert_eq!(ev.signals.len(), 2, "{:?}", ev.signals);
        assert!(ev.signals[1].message.contains("Marking it unhealthy"));
        assert!(!ev.signals[0].message.contains("2018/02/27"));
        // The plugin's log says why the node has no GPU to give.
        let d = crate::diagnose::diagnose(&ev);
        assert_eq!(d.primary, crate::rules::Category::DevicePlugin);
        assert_eq!(d.causes[0].rule, Some("GW123"));
    }

    #[test]
    fn a_logs_command_names_whose_log_it_is_not_the_target() {
        let ev = read(
            "$ kubectl logs gpushare-device-plugin-ds-k6srx -n kube-system\nFailed to initialize NVML: could not load NVML library.\n",
        );
        assert_eq!(ev.target.name, None);
        let logs = ev.logs_of.expect("logs of");
        assert_eq!(logs.pod, "gpushare-device-plugin-ds-k6srx");
        assert_eq!(logs.namespace.as_deref(), Some("kube-system"));
        // The same Pod twice keeps what either line says; two Pods, or a selector beside one, name none.
        let ev = read("$ kubectl logs p\nx\n$ kubectl logs p -n ns -c ctr\ny\n");
        let logs = ev.logs_of.expect("logs of");
        assert_eq!(
            (logs.namespace.as_deref(), logs.container.as_deref()),
            (Some("ns"), Some("ctr"))
        );
        assert_eq!(
            read("$ kubectl logs p\nx\n$ kubectl logs q\ny\n").logs_of,
            None
        );
        assert_eq!(
            read("$ kubectl logs -l app=x\nx\n$ kubectl logs q\ny\n").logs_of,
            None
        );
        // A command typed over several lines (`\` at the end) is read whole, and its other lines are no log.
        let ev = read(
            "$ kubectl logs nvidia-device-plugin-x \\\n    -n kube-system \\\n    -c plugin\nFailed to initialize NVML: could not load NVML library.\n",
        );
        let logs = ev.logs_of.expect("logs of");
        assert_eq!(
            (logs.namespace.as_deref(), logs.container.as_deref()),
            (Some("kube-system"), Some("plugin"))
        );
        let components: Vec<_> = ev
            .signals
            .iter()
            .filter(|s| s.component.is_some() || !s.message.starts_with('$'))
            .map(|s| (s.message.as_str(), s.component.as_deref()))
            .collect();
        assert_eq!(
            components,
            [(
                "Failed to initialize NVML: could not load NVML library.",
                Some("pod/nvidia-device-plugin-x/plugin")
            )]
        );
    }

    #[test]
    fn tolerations_and_limits() {
        let text = "Name: p\nNamespace: ml\nStatus: Pending\nContainers:\n  cuda:\n    Limits:\n      nvidia.com/gpu:  1\n    Requests:\n      nvidia.com/gpu:  1\nTolerations:     node.kubernetes.io/not-ready:NoExecute op=Exists for 300s\n                 nvidia.com/gpu:NoSchedule op=Exists\nEvents:  <none>\n";
        let ev = read(text);
        let p = ev.pod.unwrap();
        assert_eq!(
            p.requests.get("nvidia.com/gpu").map(String::as_str),
            Some("1")
        );
        assert_eq!(p.tolerations.len(), 2);
        assert_eq!(p.tolerations[1].key.as_deref(), Some("nvidia.com/gpu"));
        assert_eq!(p.containers, vec!["cuda"]);
    }
}
