//! Turns one message into the rule findings it contains: normalises the text (prefixes, truncation, wrapping,
//! YAML quoting, markdown), splits a FitError into its per-node items, and asks the rule table about each
//! piece. It does not rank or decide anything about the Pod (that is `diagnose`).

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::fiterror;
use crate::rules::{self, Rule};

/// A rule that explained part of a message.
#[derive(Debug, Clone)]
pub struct Finding {
    pub rule: &'static Rule,
    pub captures: BTreeMap<String, String>,
    /// The FitError item's node count, when the text came from a FitError.
    pub count: Option<u32>,
    /// `N` of `0/N nodes are available`.
    pub nodes_total: Option<u32>,
    /// The FitError event was cut at 1024 bytes.
    pub truncated: bool,
    /// The FitError's counts overlap (old layouts list every failing predicate).
    pub overlapping: bool,
    /// The FitError's preemption part says preemption can help on none of its nodes
    /// ([`fiterror::FitError::preemption_helps_nowhere`]).
    pub preemption_helps_nowhere: bool,
}

/// What one message says.
#[derive(Debug, Clone, Default)]
pub struct Reading {
    pub findings: Vec<Finding>,
    /// Pieces (FitError items or the whole message) that no rule explains.
    pub unexplained: Vec<String>,
    /// The message contained a FitError.
    pub fit_error: bool,
}

/// Normalises a message for matching (messages.md §7.1): strips `(combined from similar events): `, a
/// `spec.containers{…}: ` prefix, markdown emphasis and backticks, YAML's doubled quotes, curly quotes and a
/// trailing `: unknown`; folds every run of white space into one space.
pub fn normalise(message: &str) -> String {
    normalise_with(message, " ")
}

/// As `normalise`, but lines are glued with nothing: for messages a terminal or a ticket hard-wrapped
/// in the middle of a word (`Insufficient nvidia` / `.com/gpu`).
pub fn normalise_glued(message: &str) -> String {
    normalise_with(message, "")
}

fn normalise_with(message: &str, glue: &str) -> String {
    let mut s: Cow<'_, str> = Cow::Borrowed(message);
    if s.contains(['\u{201c}', '\u{201d}', '\u{2018}', '\u{2019}', '`'])
        || s.contains("**")
        || s.contains("''")
    {
        s = Cow::Owned(
            s.replace(['\u{201c}', '\u{201d}'], "\"")
                .replace(['\u{2018}', '\u{2019}'], "'")
                .replace("**", "")
                .replace('`', "")
                .replace("''", "'"),
        );
    }
    // Markdown links a tracker made of domain-like words: `[nvidia.com/gpu](http://nvidia.com/gpu)`.
    if s.contains("](http") {
        static LINK: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
            regex::Regex::new(r"\[([^\]\n]+)\]\(https?://[^)\s]*\)").expect("link regex")
        });
        s = Cow::Owned(LINK.replace_all(&s, "$1").into_owned());
    }
    let mut out = String::with_capacity(s.len());
    for (i, line) in s.split('\n').enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if i > 0 && !out.is_empty() {
            out.push_str(glue);
        }
        let mut last_space = false;
        for c in line.chars() {
            if c.is_whitespace() {
                if !last_space {
                    out.push(' ');
                }
                last_space = true;
            } else {
                out.push(c);
                last_space = false;
            }
        }
    }
    let mut t = out.trim();
    for prefix in ["(combined from similar events): "] {
        if let Some(rest) = t.strip_prefix(prefix) {
            t = rest;
        }
    }
    if t.starts_with("spec.")
        && let Some((head, rest)) = t.split_once("}: ")
        && !head.contains(' ')
    {
        t = rest;
    }
    let t = t.strip_suffix(": unknown").unwrap_or(t);
    t.to_string()
}

/// Reads one message: every finding and every unexplained piece.
pub fn read(message: &str) -> Reading {
    let spaced = normalise(message);
    let mut reading = read_normalised(&spaced);
    if !reading.unexplained.is_empty() && message.contains('\n') {
        // A second look with the lines glued, for words a wrap cut in two.
        let glued = read_normalised(&normalise_glued(message));
        if glued.unexplained.len() < reading.unexplained.len() {
            reading = glued;
        }
    }
    // A line that blocks nothing (a harmless warning) explains itself, not the block it came in: the block's
    // other lines are read on their own.
    if !reading.findings.is_empty()
        && message.contains('\n')
        && reading.findings.iter().all(|f| rules::is_noise(f.rule.id))
    {
        // A line of the harmless rule's own, or one more from the component that printed it.
        let harmless = |line: &str| {
            let found = rules::all_matches(&normalise(line));
            reading.findings.iter().any(|f| {
                found.iter().any(|r| r.id == f.rule.id) || rules::is_noise_line(f.rule.id, line)
            })
        };
        let lines: Vec<&str> = message.lines().collect();
        let rest: Vec<&str> = lines.iter().copied().filter(|l| !harmless(l)).collect();
        // Only when a line was taken out (a harmless line a wrap split matches the block, not a line).
        let rest = (rest.len() < lines.len()).then(|| rest.join("\n"));
        if let Some(rest) = rest.filter(|r| !r.trim().is_empty()) {
            let more = read(&rest);
            if more.findings.is_empty() {
                if crate::diagnose::looks_like_error(&rest) {
                    reading.unexplained.push(normalise(&rest));
                }
            } else {
                reading.findings = more.findings;
                reading.unexplained = more.unexplained;
            }
        }
    }
    reading
}

fn read_normalised(text: &str) -> Reading {
    let mut reading = Reading::default();
    if text.is_empty() {
        return reading;
    }
    if let Some(fit) = fiterror::parse(text) {
        reading.fit_error = true;
        for item in &fit.items {
            match rules::first_match(&item.reason) {
                Some(m) => reading.findings.push(Finding {
                    rule: m.rule,
                    captures: m.captures,
                    count: item.count,
                    nodes_total: fit.nodes_total,
                    truncated: fit.truncated,
                    overlapping: fit.overlapping,
                    preemption_helps_nowhere: fit.preemption_helps_nowhere(),
                }),
                None => reading.unexplained.push(item.reason.clone()),
            }
        }
        // Text before the FitError (a wrapper such as a PodGroup or autoscaler prefix) may hold a cause too.
        if reading.findings.is_empty() && fit.items.is_empty() {
            reading.unexplained.push(text.to_string());
        }
        return reading;
    }
    // Karpenter lists a reason per node pool, separated by "; ": each is a cause of its own. GKE's console
    // lists the scheduler's reasons one `Cannot schedule pods:` line each.
    let pieces: Vec<&str> = if text.contains("; ")
        && (text.contains("did not tolerate") || text.contains("incompatible requirements"))
    {
        text.split("; ").collect()
    } else if text.matches("Cannot schedule pods: ").count() > 1 {
        text.split("Cannot schedule pods: ")
            .filter(|p| !p.trim().is_empty())
            .collect()
    } else {
        vec![text]
    };
    for piece in pieces {
        let matches = rules::read_matches(piece);
        if matches.is_empty() && piece.len() == text.len() {
            reading.unexplained.push(text.to_string());
        }
        reading
            .findings
            .extend(matches.into_iter().map(|m| Finding {
                rule: m.rule,
                captures: m.captures,
                count: None,
                nodes_total: None,
                truncated: false,
                overlapping: false,
                preemption_helps_nowhere: false,
            }));
    }
    reading
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::RULES;

    #[test]
    fn every_rule_explains_its_example() {
        for r in RULES {
            let reading = read(r.example);
            assert!(
                reading.findings.iter().any(|f| f.rule.id == r.id),
                "{} does not explain its own example; got {:?}",
                r.id,
                reading
                    .findings
                    .iter()
                    .map(|f| f.rule.id)
                    .collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn no_rule_explains_its_near_miss() {
        for r in RULES {
            let reading = read(r.near_miss);
            assert!(
                !reading.findings.iter().any(|f| f.rule.id == r.id),
                "{} explains its near miss {:?}",
                r.id,
                r.near_miss
            );
        }
    }

    #[test]
    fn healthy_messages_match_nothing() {
        for healthy in [
            "Successfully assigned ml/trainer-0 to gpu-node-1",
            "Container image \"nvcr.io/nvidia/cuda:12.2.0-base-ubuntu22.04\" already present on machine",
            "Created container cuda",
            "Started container cuda",
            "Pulling image \"nvcr.io/nvidia/cuda:12.2.0-base-ubuntu22.04\"",
            // A reporter's prose (volcano-sh/volcano #4416) that once read as a scheduler plugin's error.
            "I got those content as below when I running \"kubectl describe node controller01\" or \"kubectl describe node ksp-registry\"",
        ] {
            let r = read(healthy);
            assert!(
                r.findings.is_empty(),
                "{healthy} matched {:?}",
                r.findings.iter().map(|f| f.rule.id).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn normalises_prefixes_and_wrapping() {
        assert_eq!(
            normalise("(combined from similar events): Error: x"),
            "Error: x"
        );
        assert_eq!(
            normalise(
                "spec.containers{cuda}: Error: failed to create containerd task: boom: unknown"
            ),
            "Error: failed to create containerd task: boom"
        );
        assert_eq!(
            normalise(
                "node(s) had taint {node.kubernetes.io/disk-pressure:\n        }, that the pod didn''t tolerate."
            ),
            "node(s) had taint {node.kubernetes.io/disk-pressure: }, that the pod didn't tolerate."
        );
        assert_eq!(
            normalise("no runtime for \u{201c}nvidia\u{201d} is configured"),
            "no runtime for \"nvidia\" is configured"
        );
        assert_eq!(
            normalise("**0/1 nodes** are `available`"),
            "0/1 nodes are available"
        );
    }

    #[test]
    fn markdown_links_are_unwrapped() {
        assert_eq!(
            normalise("1 Insufficient [nvidia.com/gpu](http://nvidia.com/gpu),"),
            "1 Insufficient nvidia.com/gpu,"
        );
    }

    #[test]
    fn a_word_cut_by_a_wrap_is_glued_back() {
        let r = read("0/2 nodes are available: 2 Insufficient nvidia\n.com/gpu.");
        assert_eq!(r.findings.len(), 1);
        assert_eq!(r.findings[0].rule.id, "GW105");
        assert_eq!(r.findings[0].captures["resource"], "nvidia.com/gpu");
    }

    #[test]
    fn fit_error_items_each_find_their_rule() {
        let r = read(
            "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.",
        );
        let ids: Vec<(&str, Option<u32>)> =
            r.findings.iter().map(|f| (f.rule.id, f.count)).collect();
        assert_eq!(ids, vec![("GW102", Some(1)), ("GW105", Some(2))]);
        assert!(r.unexplained.is_empty());
        assert_eq!(r.findings[1].nodes_total, Some(3));
    }

    #[test]
    fn taint_texts_of_every_version() {
        for (text, id, key) in [
            (
                "0/1 nodes are available: 1 node(s) had taint {nvidia.com/gpu: present}, that the pod didn't tolerate.",
                "GW103",
                Some("nvidia.com/gpu"),
            ),
            (
                "0/1 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}.",
                "GW103",
                Some("nvidia.com/gpu"),
            ),
            (
                "0/1 nodes are available: 1 node(s) had untolerated taint(s). no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
                "GW104",
                None,
            ),
            (
                "0/1 nodes are available: 1 node(s) had taints that the pod didn't tolerate.",
                "GW104",
                None,
            ),
            (
                "0/1 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/master: }.",
                "GW102",
                Some("node-role.kubernetes.io/master"),
            ),
        ] {
            let r = read(text);
            assert_eq!(r.findings.len(), 1, "{text}");
            assert_eq!(r.findings[0].rule.id, id, "{text}");
            assert_eq!(
                r.findings[0].captures.get("key").map(String::as_str),
                key,
                "{text}"
            );
        }
    }

    #[test]
    fn handler_texts_of_every_runtime() {
        for (text, id) in [
            (
                "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for \"nvidia\" is configured",
                "GW401",
            ),
            (
                "Failed to create pod sandbox: rpc error: code = Unknown desc = unable to get OCI runtime for sandbox \"4a460adf6c2\": no runtime for \"nvidia\" is configured",
                "GW401",
            ),
            (
                "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to find runtime handler nvidia from runtime list map[crun:0xc00047e300 runc:0xc00047ef00]",
                "GW402",
            ),
            (
                "Failed to create pod sandbox: rpc error: code = Unknown desc = RuntimeHandler \"nvidia\" not supported",
                "GW403",
            ),
        ] {
            let r = read(text);
            assert_eq!(r.findings[0].rule.id, id, "{text}");
            assert_eq!(
                r.findings[0].captures.get("handler").map(String::as_str),
                Some("nvidia")
            );
        }
    }

    #[test]
    fn selinux_denials_of_a_gpu_device_name_the_device_and_the_permission() {
        // podman#18497: vainfo in a rootless container maps the render node; the path, not the name, is given.
        let r = read(
            "type=AVC msg=audit(1683468487.052:3337): avc:  denied  { map } for  pid=699282 comm=\"vainfo\" path=\"/dev/dri/renderD128\" dev=\"devtmpfs\" ino=947 scontext=system_u:system_r:container_t:s0:c260,c628 tcontext=system_u:object_r:dri_device_t:s0 tclass=chr_file permissive=0",
        );
        assert_eq!(r.findings[0].rule.id, "GW526");
        assert_eq!(r.findings[0].captures["perm"], "map");
        assert_eq!(r.findings[0].captures["device"], "/dev/dri/renderD128");
        assert_eq!(r.findings[0].captures["type"], "dri_device_t");
    }

    #[test]
    fn scheduling_gated_only_as_the_pods_status() {
        let gated = |text: &str| read(text).findings.iter().any(|f| f.rule.id == "GW115");
        assert!(gated("SchedulingGated"));
        assert!(gated(
            "qwen3-multinode-0-worker-0-worker-wkr-cc52m   0/1     SchedulingGated   0          4m29s"
        ));
        assert!(!gated(
            "The pod is no longer SchedulingGated, it is Pending but kubectl describe shows no events."
        ));
    }

    #[test]
    fn a_pressure_eviction_names_every_condition() {
        // The kubelet's admission prints its node conditions with Go's `%v`: one, or several spaced.
        for (text, want) in [
            ("The node had condition: [DiskPressure]. ", "DiskPressure"),
            (
                "The node had condition: [DiskPressure MemoryPressure]. ",
                "DiskPressure MemoryPressure",
            ),
            (
                "The node was low on resource: ephemeral-storage. Threshold quantity: 15763389861, available: 12139364Ki.",
                "ephemeral-storage",
            ),
        ] {
            let r = read(text);
            assert_eq!(r.findings[0].rule.id, "GW508", "{text}");
            assert_eq!(r.findings[0].captures["resource"], want, "{text}");
        }
    }

    #[test]
    fn lowercase_and_odd_spacing() {
        let r = read("0/4 nodes are available:   4 insufficient nvidia.com/gpu.");
        assert_eq!(r.findings[0].rule.id, "GW105");
        assert_eq!(r.findings[0].count, Some(4));
    }

    #[test]
    fn gpu_resource_names_of_every_vendor() {
        for res in [
            "nvidia.com/gpu",
            "nvidia.com/mig-1g.5gb",
            "nvidia.com/gpu.shared",
            "amd.com/gpu",
            "gpu.intel.com/i915",
            "example.com/fpga",
        ] {
            let r = read(&format!("0/2 nodes are available: 2 Insufficient {res}."));
            assert_eq!(r.findings[0].rule.id, "GW105", "{res}");
            assert_eq!(r.findings[0].captures["resource"], res);
        }
    }

    #[test]
    fn a_manifest_fraction_is_only_a_true_fraction() {
        for (value, fraction) in [
            ("0.5", true),
            ("500m", true),
            ("1500m", true),
            ("1.0", false),
            ("1000m", false),
            ("\"2\"", false),
        ] {
            let r = read(&format!(
                "resources:\n  limits:\n    nvidia.com/gpu: {value}"
            ));
            let found = r.findings.iter().any(|f| f.rule.id == "GW219");
            assert_eq!(found, fraction, "{value}");
        }
    }

    #[test]
    fn a_gpu_resource_listed_with_zero_of_any_vendor() {
        for res in [
            "nvidia.com/gpu",
            "nvidia.com/gpu.shared",
            "nvidia.com/mig-1g.10gb",
            "amd.com/gpu",
            "deepomatic.com/shared-gpu",
        ] {
            let r = read(&format!(
                "Allocatable:\n  cpu:  8\n  {res}:  0\n  pods:  110"
            ));
            assert_eq!(r.findings[0].rule.id, "GW135", "{res}");
            assert_eq!(r.findings[0].captures["resource"], res);
        }
        // Not a GPU, or not zero.
        for line in ["gpu.intel.com/monitoring:  0", "nvidia.com/gpu:  1"] {
            let r = read(&format!("Allocatable:\n  cpu:  8\n  {line}\n  pods:  110"));
            assert!(r.findings.iter().all(|f| f.rule.id != "GW135"), "{line}");
        }
    }
}
