//! Restores the lines of a paste whose line breaks a ticket field turned into spaces.
//!
//! A flattened line still carries each lost line's indentation: the break became one space, and the spaces
//! that indented the next line follow it. So a run of spaces before a word that only starts a line of
//! `kubectl describe` (`Reason:` followed by its aligned value, an event row's `Warning  Failed  …`, a
//! container's name above its `Container ID:`), of `kubectl get pods` or `get events` (the header, then the
//! rows) or of a log (a date, klog's header) is a lost break. A describe key says how far its line was
//! indented; the run's length only tells a Pod's `Reason:` from a container state's.

use std::sync::LazyLock;

use regex::Regex;

/// A run of spaces, then the start of something that may open a line of describe, get-pods, get-events or log
/// output; what follows it decides.
static CANDIDATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?x)
        (?P<run>\x20+)
        (?P<start>
            (?:Name|Namespace|Priority(?:\x20Class\x20Name)?|Runtime\x20Class\x20Name|Service\x20Account|Node
              |Start\x20Time|Labels|Annotations|Status|Reason|Message|IPs?|Controlled\x20By|Init\x20Containers
              |Containers|Container\x20ID|Image(?:\x20ID)?|Ports?|Host\x20Ports?|Command|Args|State
              |Last\x20State|Started|Finished|Exit\x20Code|Ready|Restart\x20Count|Limits|Requests|Environment
              |Mounts|Conditions|Volumes|QoS\x20Class|Node-Selectors|Tolerations|Events|Roles|CreationTimestamp
              |Taints|Unschedulable|Lease|Addresses|Capacity|Allocatable|System\x20Info|PodCIDRs?|ProviderID
              |Non-terminated\x20Pods|Allocated\x20resources):
          | (?:[a-z0-9.-]+/)?[a-z0-9][A-Za-z0-9-]*:\x20+\d
          | (?:Normal|Warning)\x20
          | [a-z0-9][a-z0-9-]*:
          | (?:PodScheduled|Initialized|Ready|ContainersReady|PodReadyToStartContainers)\x20
          | (?:NAMESPACE\x20+)?NAME\x20+READY\x20+STATUS\b
          | [a-z0-9][a-z0-9.-]*\x20+\d+/\d+\x20
          | \d{4}[/-]\d\d[/-]\d\d[T\x20]\d\d:\d\d:\d\d
          | [IWEF]\d{4}\x20\d\d:\d\d:\d\d\.\d+\x20
          | (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\x20{1,2}\d{1,2}\x20\d\d:\d\d:\d\d(?:\.\d+)?\x20
          | LAST\x20SEEN\x20+TYPE\x20
          | (?:\d+[smhd]\d*[smh]?|<unknown>)\x20+(?:Normal|Warning)\x20
          | time=\x22
          | [$\#]\x20kubectl\x20
        )",
    )
    .expect("flattened candidate regex")
});

/// What must follow a candidate for it to be a line's start, by its kind: a describe key's value is aligned
/// (two spaces or more) or empty (the next key follows).
static FIELD_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[A-Z][A-Za-z-]*(?:\x20[A-Za-z-]+){0,3}:(?:\x20{2,}\S|\x20*$|\x20[A-Z][A-Za-z-]*(?:\x20[A-Za-z-]+){0,3}:)")
        .expect("field regex")
});
static EVENT_ROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:Normal|Warning)\x20{2,}[A-Z][A-Za-z]+\x20{2,}\S").expect("event row regex")
});
static CONTAINER_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[a-z0-9][a-z0-9-]*:\x20+(?:Container ID|Image):").expect("container name regex")
});
static RESOURCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[a-z0-9.-]+/)?[a-z0-9][A-Za-z0-9-]*:\x20+\d+[A-Za-z]*(?:\x20|$)")
        .expect("resource regex")
});
/// A log line's head: Go's log date, klog's header, logrus's `time="…"`, the journal's and syslog's date, host
/// and writer, with the message after it.
static LOG_HEAD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"^(?:\d{4}[/-]\d\d[/-]\d\d[T\x20]\d\d:\d\d:\d\d(?:[.,]\d+)?Z?\x20+[A-Za-z\[]|[IWEF]\d{4}\x20\d\d:\d\d:\d\d\.\d+\x20|time="[^"]+"\x20+level=|(?:(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\x20{1,2}\d{1,2}\x20\d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\x20\S+\x20[\w.@/-]+(?:\[\d+\])?:\x20)"#,
    )
    .expect("log head regex")
});
/// klog's header alone.
static KLOG_HEAD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[IWEF]\d{4}\x20\d\d:\d\d:\d\d\.\d+\x20").expect("klog head regex")
});
/// A row of `kubectl get events`: LAST SEEN, TYPE, REASON, OBJECT (`kind/name`).
static EVENTS_ROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:\d+[smhd]\d*[smh]?|<unknown>)\x20+(?:Normal|Warning)\x20+[A-Z][A-Za-z]+\x20+[a-z.]+/\S")
        .expect("events row regex")
});
static CONDITION_ROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[A-Za-z]+\x20+(?:True|False)(?:\x20|$)").expect("condition regex")
});
static PODS_ROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\S+(?:\x20+\S+)?\x20+\d+/\d+\x20+[A-Z][\w:/-]*\x20+\d+").expect("pods row regex")
});

/// A line shorter than this was not made of several lines.
const MIN_FLATTENED: usize = 200;

/// The paste with the lines that a ticket glued into one long line restored, or `None` when no line looks
/// flattened (it needs three lost breaks of describe, event, get-pods or log lines, or one in a line that opens
/// as a describe line does).
pub(super) fn restore_lines(input: &str) -> Option<String> {
    if !input.lines().any(|l| l.len() >= MIN_FLATTENED) {
        return None;
    }
    let mut changed = false;
    let mut out = String::with_capacity(input.len() + 256);
    for line in input.split_inclusive('\n') {
        match (line.len() >= MIN_FLATTENED)
            .then(|| restore_line(&unquoted(line).unwrap_or_else(|| line.into())))
            .flatten()
        {
            Some(restored) => {
                out.push_str(&restored);
                changed = true;
            }
            None => out.push_str(line),
        }
    }
    changed.then_some(out)
}

/// A markdown quote that was flattened: each lost line's `> ` is left between the line before and the run of
/// spaces that indented it (`… Unschedulable >   Normal   …`). With the markers that stand before a run of
/// two spaces or more, or before what opens a line, taken out (and the line's own), the line reads as an
/// unquoted one; a `>` in a message (`request (1) > maximum capacity`) has one space after it and stays.
/// `None` unless the line opens with a quote and three markers or more follow.
fn unquoted(line: &str) -> Option<String> {
    static MARKER: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\x20>(?P<run>\x20+)").expect("quote marker regex"));
    if !line.starts_with('>') {
        return None;
    }
    let lost = |m: &regex::Captures| {
        let at = m.get(0).expect("match").start() + 2;
        m["run"].len() >= 2
            || CANDIDATE
                .find(ahead(&line[at..]))
                .is_some_and(|c| c.start() == 0)
    };
    let markers: Vec<usize> = MARKER
        .captures_iter(line)
        .filter(|m| lost(m))
        .map(|m| m.get(0).expect("match").start() + 1)
        .collect();
    if markers.len() < 3 {
        return None;
    }
    let mut out = String::with_capacity(line.len());
    let mut at = 1;
    for m in markers {
        out.push_str(&line[at..m]);
        at = m + 1;
    }
    out.push_str(&line[at..]);
    Some(out.trim_start_matches(' ').to_string())
}

/// A lost break: where its run of spaces starts, the run's length, the indentation of the line it opens, and
/// whether that line is one of `kubectl describe`'s (a key, an event row), not a table row or a log line.
struct Break {
    from: usize,
    run: usize,
    indent: usize,
    describe: bool,
}

/// Whatever opens a line is short: the checks read this much of what follows a run, so a long line costs
/// no more than its length.
const LOOK_AHEAD: usize = 256;

fn restore_line(line: &str) -> Option<String> {
    let mut breaks: Vec<Break> = Vec::new();
    // Rows of `kubectl get pods` follow its header or its command, or open the line when the header was left
    // out (`| grep`); with `-A` each row opens with its namespace.
    let pods_header = line.contains("READY") && line.contains("STATUS")
        || line.contains("kubectl get po")
        || PODS_ROW.is_match(line.trim_start());
    let namespaced = line.contains("NAMESPACE") || line.contains(" -A");
    // The last key seen: a resource's amount is a container's under `Limits:`, a node's under `Capacity:`.
    let mut section = "";
    for c in CANDIDATE.captures_iter(line) {
        let (mut run, start) = (c["run"].len(), c.name("start").expect("start group"));
        let mut from = start.start() - run;
        let tail = ahead(&line[start.start()..]);
        let (indent, describe) = if FIELD_VALUE.is_match(tail) {
            section = tail.split(':').next().unwrap_or("");
            (Some(describe_indent(section, run - 1)), true)
        } else if RESOURCE.is_match(tail) && run > 1 {
            let indent = if matches!(section, "Limits" | "Requests") {
                6
            } else {
                2
            };
            (Some(indent), true)
        } else if EVENT_ROW.is_match(tail)
            || CONTAINER_NAME.is_match(tail)
            || (CONDITION_ROW.is_match(tail) && run > 1)
        {
            (Some(2), true)
        } else if pods_header && PODS_ROW.is_match(tail) {
            // With `-A` the row opens one word earlier, at its namespace.
            if namespaced {
                let before = &line[..from];
                let word = before.rfind(' ').map_or(0, |i| i + 1);
                let kept = before[..word].trim_end().len();
                (from, run) = (kept, word - kept);
            }
            (Some(0).filter(|_| run > 0), false)
        } else if (tail.starts_with("NAME") && !line[..from].ends_with("NAMESPACE"))
            // klog's header after the journal's `host writer[pid]:` is the same line.
            || (LOG_HEAD.is_match(tail)
                && !(KLOG_HEAD.is_match(tail) && line[..from].ends_with(':')))
            || tail.starts_with("LAST SEEN")
            || EVENTS_ROW.is_match(tail)
            || tail.starts_with("$ kubectl")
            || tail.starts_with("# kubectl")
        {
            (Some(0), false)
        } else {
            (None, false)
        };
        // A run that opens the line broke nothing.
        if let Some(indent) = indent.filter(|_| from > 0) {
            breaks.push(Break {
                from,
                run,
                indent,
                describe,
            });
        }
    }
    // Three lost breaks; or one in a line that opens with a describe key (`Events:` glued to its table); or an
    // event row glued to the next.
    let head = line.trim_start();
    let glued_rows = EVENT_ROW.is_match(ahead(head))
        && breaks
            .iter()
            .any(|b| EVENT_ROW.is_match(ahead(&line[b.from + b.run..])));
    // A `Message:` holds what a component said, log lines included: only a describe line ends it.
    let message = head.starts_with("Message:");
    let keyed = FIELD_VALUE.is_match(ahead(head)) && breaks.iter().any(|b| b.describe || !message);
    if breaks.len() < 3 && !keyed && !glued_rows {
        return None;
    }
    let mut out = String::with_capacity(line.len() + breaks.len() * 4);
    let mut at = 0;
    for b in &breaks {
        if b.from < at {
            continue;
        }
        out.push_str(&line[at..b.from]);
        out.push('\n');
        out.push_str(&" ".repeat(b.indent));
        at = b.from + b.run;
    }
    out.push_str(&line[at..]);
    Some(out)
}

/// The first `LOOK_AHEAD` bytes of `s` (cut at a character's boundary).
fn ahead(s: &str) -> &str {
    let mut end = s.len().min(LOOK_AHEAD);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Where `kubectl describe pod` indents a key: the Pod's at the left edge, a container's by four, its state's
/// by six. `Reason:` and `Message:` are both the Pod's and a state's; the spaces the break left say which
/// (a trailing space of the lost line adds to them, so they only tell the edge from deep).
fn describe_indent(key: &str, spaces: usize) -> usize {
    match key {
        "Container ID" | "Image" | "Image ID" | "Port" | "Ports" | "Host Port" | "Host Ports"
        | "Command" | "Args" | "State" | "Last State" | "Ready" | "Restart Count" | "Limits"
        | "Requests" | "Environment" | "Mounts" => 4,
        "Started" | "Finished" | "Exit Code" => 6,
        "Reason" | "Message" if spaces >= 4 => 6,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flattened_describe_gets_its_lines_and_their_indentation_back() {
        let printed = "Name:         cuda\nNamespace:    ml\nStatus:       Pending\nContainers:\n  cuda:\n    Container ID:  \n    Image:         nvidia/cuda\n    State:          Waiting\n      Reason:       ContainerCreating\nConditions:\n  Type           Status\n  PodScheduled   True \nEvents:\n  Type     Reason   Age   From     Message\n  ----     ------   ----  ----     -------\n  Warning  Failed   10s   kubelet  Error: failed to create containerd task: nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown\n";
        let flat = printed.replace('\n', " ");
        let restored = restore_lines(&flat).expect("restored");
        let want: Vec<&str> = printed.lines().map(str::trim_end).collect();
        let got: Vec<&str> = restored.lines().map(str::trim_end).collect();
        // The table's two rows under `Events:` that open with neither a field nor an event stay glued.
        assert_eq!(got[..9], want[..9], "{restored}");
        // A table's heading stays on its key's line (`Conditions:   Type   Status`).
        assert!(got[9].starts_with("Conditions:"), "{restored}");
        assert_eq!(got[10], "  PodScheduled   True", "{restored}");
        assert!(got[11].starts_with("Events:"), "{restored}");
        assert_eq!(got[12], want[15], "{restored}");
    }

    #[test]
    fn a_long_line_of_prose_or_a_message_is_left_alone() {
        let message = format!(
            "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod. {}",
            "x ".repeat(100)
        );
        assert_eq!(restore_lines(&message), None);
        let row = format!(
            "  Warning  FailedScheduling  2m  default-scheduler  Status:  Failed Reason:  x {}",
            "y".repeat(200)
        );
        assert_eq!(restore_lines(&row), None);
    }

    #[test]
    fn a_describe_message_that_holds_a_log_line_stays_one_line() {
        let line = format!(
            "      Message:      failed to create containerd task: error running hook #0: stderr: time=\"2024-02-19T09:42:13+00:00\" level=error msg=\"failed to inject CDI devices: unresolvable CDI devices nvidia.com/gpu=all\": unknown {}",
            "x".repeat(40)
        );
        assert_eq!(restore_lines(&line), None);
    }

    #[test]
    fn a_flattened_pods_listing_without_namespaces_opens_each_row_at_its_name() {
        let flat = "$ kubectl get pods -n gpu-operator NAME                                   READY   STATUS             RESTARTS   AGE nvidia-device-plugin-daemonset-7xk2p   0/1     CrashLoopBackOff   5          3m nvidia-operator-validator-abcde        0/1     Init:0/4           0          3m";
        let restored = restore_lines(flat).expect("restored");
        let lines: Vec<&str> = restored.lines().map(str::trim_end).collect();
        assert!(lines[1].starts_with("NAME"), "{restored}");
        assert!(
            lines[2].starts_with("nvidia-device-plugin-daemonset-7xk2p"),
            "{restored}"
        );
        assert!(lines[2].ends_with("3m"), "{restored}");
        assert!(
            lines[3].starts_with("nvidia-operator-validator-abcde"),
            "{restored}"
        );
    }

    /// A quoted table flattened keeps its quote markers between the lines (volcano-sh/volcano#2633, quoted by the
    /// maintainer); a `>` inside a message stays.
    #[test]
    fn a_flattened_quote_gets_its_lines_back_without_the_markers() {
        let quoted = "> Events:\n>   Type     Reason         Age                 From     Message\n>   ----     ------         ----                ----     -------\n>   Warning  Unschedulable  18s (x12 over 29s)  volcano  1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending, 1 minAvailable; Pending: 1 Unschedulable\n>   Normal   Unschedulable  17s (x13 over 29s)  volcano  resource in cluster is overused\n";
        let restored = restore_lines(&quoted.replace('\n', " ")).expect("restored");
        let got: Vec<&str> = restored.lines().map(str::trim_end).collect();
        assert!(got[0].starts_with("Events:"), "{restored}");
        assert!(!restored.contains(" > "), "{restored}");
        assert!(
            got.iter()
                .any(|l| l.starts_with("  Warning  Unschedulable  18s")),
            "{restored}"
        );
        assert_eq!(
            got.last(),
            Some(
                &"  Normal   Unschedulable  17s (x13 over 29s)  volcano  resource in cluster is overused"
            )
        );
        // Kueue's message (a runbook's) quoted below it keeps its `>`, which has one space after it.
        let kueue = "> couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor cpu-any, previously considered podsets requests (0) + current podset request (1) > maximum capacity (0)\n";
        let both = format!("{quoted}{kueue}").replace('\n', " ");
        let restored = unquoted(&both).expect("unquoted");
        assert!(
            restored.contains("current podset request (1) > maximum capacity (0)"),
            "{restored}"
        );
        // The markers before the table's lines are gone (a line of prose keeps its own: nothing says it opens one).
        assert!(!restored.contains(" >   "), "{restored}");
        // Alone, with no marker before a line's start, it is no flattened quote.
        assert_eq!(unquoted(&kueue.replace('\n', " ")), None);
    }

    /// Flattened onto one line, the printed lines come back as they were (indentation too).
    fn assert_restores(printed: &str) {
        let restored = restore_lines(&printed.replace('\n', " ")).expect("restored");
        let got: Vec<&str> = restored.lines().map(str::trim_end).collect();
        let want: Vec<&str> = printed.lines().collect();
        assert_eq!(got, want, "{restored}");
    }

    #[test]
    fn a_flattened_journal_gets_its_lines_back_with_klog_headers_kept() {
        let printed = "Jul 30 20:39:03 ai-app-8-1-msxf kubelet[45878]: I0730 20:39:03.752799   45878 topology_manager.go:212] \"Topology Admit Handler\"\nJul 30 20:39:03 ai-app-8-1-msxf kubelet[45878]: I0730 20:39:03.752952   45878 manager.go:773] \"Looking for needed resources\" needed=1 resourceName=\"nvidia.com/gpu\"\nOct  4 16:57:28 ip-192-168-160-221 kubelet: I1004 16:57:28.767625    8031 apiserver.go:42] \"Waiting for node sync before watching apiserver pods\"\nJul 30 20:39:03 ai-app-8-1-msxf kubelet[45878]: I0730 20:39:03.804129   45878 manager.go:919] ignoring container \"/system.slice/sssd-ssh.socket\"\n";
        assert_restores(printed);
    }

    #[test]
    fn a_flattened_node_gets_its_resource_lines_back() {
        let printed = "Allocatable:\n  cpu:                32\n  ephemeral-storage:  194465094130\n  hugepages-1Gi:      0\n  hugepages-2Mi:      0\n  memory:             129461548Ki\n  nvidia.com/gpu:     0\n  pods:               110\n";
        assert_restores(printed);
    }

    #[test]
    fn a_flattened_pods_listing_gets_its_rows_back() {
        let flat = format!(
            "$ kubectl get pods -A NAMESPACE     NAME                   READY   STATUS                     RESTARTS   AGE gpu-operator  nvidia-driver-abc      0/1     Init:CrashLoopBackOff      7          12m default       rojin-2q6ld            0/1     UnexpectedAdmissionError   0          4s {}",
            " ".repeat(60)
        );
        let restored = restore_lines(&flat).expect("restored");
        let lines: Vec<&str> = restored.lines().map(str::trim).collect();
        assert_eq!(lines[0], "$ kubectl get pods -A");
        assert!(lines[1].starts_with("NAMESPACE"));
        assert!(lines[2].starts_with("gpu-operator  nvidia-driver-abc"));
        assert!(lines[3].starts_with("default       rojin-2q6ld"));
    }
}
