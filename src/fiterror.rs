//! Splits a scheduler FitError (`0/N nodes are available: …`) into per-reason (count, reason) items, for every
//! layout in messages.md SCHED-FIT-1: ≤1.25, the 1.26–1.28 `..` ending, 1.29+, 1.32+ absent nodes, the
//! `no new claims to deallocate, ` DRA prefix, the `preemption:` part, PreFilter messages without a count,
//! the 1024-byte ` ...` truncation, the pre-1.9 `No nodes are available that match all of the following
//! predicates::` form, Volcano's `nodes are unavailable`, and cluster-autoscaler's `pod didn't trigger
//! scale-up:`. It knows nothing about what a reason means; the rule table does.

use std::sync::LazyLock;

use regex_automata::meta;
use serde::Serialize;

/// One histogram entry: `3 Insufficient nvidia.com/gpu` → (Some(3), "Insufficient nvidia.com/gpu").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FitItem {
    pub count: Option<u32>,
    pub reason: String,
}

/// A parsed FitError.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FitError {
    /// `N` of `0/N`, when the layout has it.
    pub nodes_total: Option<u32>,
    pub items: Vec<FitItem>,
    /// The PostFilter tail (`preemption: …`), without the leading separator.
    pub post_filter: Option<String>,
    /// The event was cut at 1024 bytes (` ...`) so the histogram may be incomplete.
    pub truncated: bool,
    /// Layouts before the first-failing-filter rule (`… predicates::`, `fit failure summary`) list every
    /// failing predicate per node, so counts overlap.
    pub overlapping: bool,
}

impl FitError {
    /// Whether the preemption part says preemption can help on none of the nodes
    /// (`preemption: 0/N nodes are available: N Preemption is not helpful for scheduling`). Since Kubernetes
    /// 1.34 NodeResourcesFit calls a node short of a resource unresolvable when the Pod asks for more than the
    /// node's allocatable (not only more than is free), so a node short of the GPU then is one that does not
    /// have that many at all; before, a short node was always one that preemption might free.
    pub fn preemption_helps_nowhere(&self) -> bool {
        let (Some(total), Some(tail)) = (self.nodes_total, self.post_filter.as_deref()) else {
            return false;
        };
        let Some(rest) = tail.split_once("preemption: ").map(|(_, r)| r) else {
            return false;
        };
        let rest = rest.trim_end_matches(['.', ' ']);
        rest == format!(
            "0/{total} nodes are available: {total} Preemption is not helpful for scheduling"
        )
    }
}

/// The patterns are ASCII and compiled without Unicode (small automata, cheap start-up); every match starts
/// and ends next to an ASCII character, so its offsets are valid in the `&str`.
fn ascii(pattern: &str) -> meta::Regex {
    crate::rules::capture_regex(pattern).expect("FitError pattern compiles (tested)")
}

static ANCHOR: LazyLock<meta::Regex> = LazyLock::new(|| {
    ascii(
        r"(?:\b0 ?/ ?(?P<n>\d+) nodes are (?:available|unavailable)|\ball nodes are unavailable|\bpod didn't trigger scale-up(?: \([^)]*\))?|\bNo nodes are available that match all of the (?:following )?predicates|\bfit failure summary on nodes\s*):+\s*",
    )
});

static POST_FILTER: LazyLock<meta::Regex> = LazyLock::new(|| {
    ascii(
        r"\.\s+(?:no new claims to deallocate|preemption:|plugin disabled|deallocation of ResourceClaim completed|deletion of ResourceClaim completed|still not schedulable|not eligible due to|no candidate node for preemption)",
    )
});

static OLD_ITEM: LazyLock<meta::Regex> =
    LazyLock::new(|| ascii(r"^(?P<reason>.*?)\s*\((?P<count>\d+)\)$"));

/// Compiles the patterns now (live mode does this while the requests are in flight).
pub fn warm() {
    LazyLock::force(&ANCHOR);
    LazyLock::force(&POST_FILTER);
}

/// Finds and splits the first FitError in `message`. `None` when the message has none.
pub fn parse(message: &str) -> Option<FitError> {
    // The PostFilter's own `preemption: 0/N nodes are available: …` is not the histogram of the filters: a
    // scheduler log line that puts it first (`status="…, preemption: 0/N …" err="0/N …"`) has the histogram
    // after it.
    let after_preemption = |start: usize| {
        message[..start]
            .trim_end()
            .to_ascii_lowercase()
            .ends_with("preemption:")
    };
    let histogram_anchor = ANCHOR
        .captures_iter(message.as_bytes())
        .find(|c| c.get_match().is_some_and(|m| !after_preemption(m.start())));
    let fell_back = histogram_anchor.is_none();
    let caps = histogram_anchor.or_else(|| {
        let mut first = ANCHOR.create_captures();
        ANCHOR.captures(message.as_bytes(), &mut first);
        Some(first)
    })?;
    let whole = caps.get_match()?;
    let nodes_total = caps
        .get_group_by_name("n")
        .and_then(|span| message.get(span.range())?.parse().ok());
    // A PreFilter failure of the 1.26–1.30 layout has no histogram: its message is the first sentence, and the
    // only node count is the PostFilter's (`waiting for … "claim". no new claims to deallocate, preemption: 0/2
    // nodes are available: …`).
    if fell_back
        && let Some(pf) = POST_FILTER.find(&message.as_bytes()[..whole.start()])
        && !message[..pf.start()].trim().is_empty()
    {
        // A histogram whose head was cut off (`2 node(s) had …, 1 Insufficient …`) still splits on its counts.
        return Some(FitError {
            nodes_total,
            items: split_counted(message[..pf.start()].trim()),
            post_filter: Some(
                message[pf.start() + 1..]
                    .trim()
                    .trim_end_matches('.')
                    .to_string(),
            ),
            truncated: false,
            overlapping: false,
        });
    }
    let lower = message[whole.range()].to_ascii_lowercase();
    let old_style = lower.starts_with("no nodes are available that match")
        || lower.starts_with("fit failure summary");
    let mut body = message[whole.end()..].trim();
    let mut truncated = false;
    if let Some(b) = body
        .strip_suffix(" ...")
        .or_else(|| body.strip_suffix("..."))
    {
        body = b.trim_end();
        truncated = true;
    }
    // The histogram ends at the PostFilter part, or else at the first sentence end (". " not inside a
    // reason: reasons contain dots only within names like nvidia.com/gpu).
    let (histogram, post_filter) = match POST_FILTER.find(body.as_bytes()) {
        Some(m) => (
            &body[..m.start()],
            Some(
                body[m.start() + 1..]
                    .trim()
                    .trim_end_matches('.')
                    .to_string(),
            ),
        ),
        None => match body.find(". ") {
            Some(i) => (&body[..i], None),
            None => (body, None),
        },
    };
    let histogram = histogram.trim().trim_end_matches(['.', '"', '\'']).trim();
    let items = if old_style {
        split_old(histogram)
    } else {
        split_counted(histogram)
    };
    // Old schedulers listed every failing predicate per node: counts that add up past N overlap. (A node
    // may list several `Insufficient` reasons in any version, so those count once, at their largest.)
    let overlapping = old_style
        || nodes_total.is_some_and(|n| {
            let insufficient =
                |i: &&FitItem| i.reason.to_ascii_lowercase().starts_with("insufficient ");
            let others: u32 = items
                .iter()
                .filter(|i| !insufficient(i))
                .filter_map(|i| i.count)
                .sum();
            let widest = items
                .iter()
                .filter(insufficient)
                .filter_map(|i| i.count)
                .max()
                .unwrap_or(0);
            others + widest > n
        });
    Some(FitError {
        nodes_total,
        items,
        post_filter: post_filter.filter(|p| !p.is_empty()),
        truncated,
        overlapping,
    })
}

/// Splits on `, ` only where a count follows (`, 2 Insufficient …`): reasons may contain commas.
fn split_counted(histogram: &str) -> Vec<FitItem> {
    let mut items = Vec::new();
    let mut start = 0;
    let bytes = histogram.as_bytes();
    let mut i = 0;
    while i + 2 < bytes.len() {
        if bytes[i] == b',' && bytes[i + 1] == b' ' && starts_with_count(&histogram[i + 2..]) {
            push_item(&mut items, &histogram[start..i]);
            start = i + 2;
            i += 2;
            continue;
        }
        i += 1;
    }
    push_item(&mut items, &histogram[start..]);
    items
}

fn starts_with_count(s: &str) -> bool {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && s.as_bytes().get(digits) == Some(&b' ')
}

fn push_item(items: &mut Vec<FitItem>, raw: &str) {
    let raw = raw.trim();
    if raw.is_empty() {
        return;
    }
    if starts_with_count(raw) {
        let (n, rest) = raw.split_once(' ').unwrap_or((raw, ""));
        items.push(FitItem {
            count: n.parse().ok(),
            reason: rest.trim().to_string(),
        });
    } else {
        items.push(FitItem {
            count: None,
            reason: raw.to_string(),
        });
    }
}

/// Pre-1.9 layout: `Insufficient nvidia.com/gpu (3), PodToleratesNodeTaints (1)`.
fn split_old(histogram: &str) -> Vec<FitItem> {
    histogram
        .split(", ")
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            let s = s.trim();
            let mut c = OLD_ITEM.create_captures();
            OLD_ITEM.captures(s.as_bytes(), &mut c);
            let group = |name: &str| c.get_group_by_name(name).and_then(|g| s.get(g.range()));
            match (group("reason"), group("count")) {
                (Some(reason), Some(count)) => FitItem {
                    count: count.parse().ok(),
                    reason: reason.to_string(),
                },
                _ => FitItem {
                    count: None,
                    reason: s.to_string(),
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(f: &FitError) -> Vec<(Option<u32>, &str)> {
        f.items
            .iter()
            .map(|i| (i.count, i.reason.as_str()))
            .collect()
    }

    #[test]
    fn v1_24_layout_with_preemption() {
        let f = parse("0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.").unwrap();
        assert_eq!(f.nodes_total, Some(3));
        assert_eq!(
            items(&f),
            vec![
                (
                    Some(1),
                    "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"
                ),
                (Some(2), "Insufficient nvidia.com/gpu")
            ]
        );
        assert!(f.post_filter.unwrap().starts_with("preemption: 0/3"));
        assert!(!f.truncated);
    }

    #[test]
    fn v1_26_double_period() {
        let f = parse("0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling..").unwrap();
        assert_eq!(
            items(&f),
            vec![
                (Some(1), "Insufficient nvidia.com/gpu"),
                (
                    Some(1),
                    "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"
                )
            ]
        );
        assert_eq!(
            f.post_filter.as_deref(),
            Some(
                "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling"
            )
        );
    }

    #[test]
    fn v1_34_dra_prefix_and_keyless_taint() {
        let f = parse("0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.").unwrap();
        assert_eq!(
            items(&f),
            vec![
                (Some(1), "node(s) had untolerated taint(s)"),
                (Some(2), "Insufficient cpu")
            ]
        );
        assert!(
            f.post_filter
                .unwrap()
                .starts_with("no new claims to deallocate, preemption:")
        );
    }

    #[test]
    fn a_prefilter_message_before_the_preemption_part_is_its_only_item() {
        let f = parse("waiting for dynamic resource controller to create the resourceclaim \"pod0-gpu\". no new claims to deallocate, preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod").unwrap();
        assert_eq!(
            items(&f),
            vec![(
                None,
                "waiting for dynamic resource controller to create the resourceclaim \"pod0-gpu\""
            )]
        );
        assert_eq!(f.nodes_total, Some(2));
        assert!(
            f.post_filter
                .unwrap()
                .starts_with("no new claims to deallocate")
        );
    }

    #[test]
    fn prefilter_message_has_no_count() {
        let f = parse("0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.").unwrap();
        assert_eq!(
            items(&f),
            vec![(None, "pod has unbound immediate PersistentVolumeClaims")]
        );
        let old =
            parse("0/3 nodes are available: 3 pod has unbound immediate PersistentVolumeClaims.")
                .unwrap();
        assert_eq!(
            items(&old),
            vec![(Some(3), "pod has unbound immediate PersistentVolumeClaims")]
        );
    }

    #[test]
    fn absent_nodes_and_commas_inside_reasons() {
        let f = parse("0/5 nodes are available: 1 Insufficient nvidia.com/gpu, 4 node(s) didn't satisfy plugin(s) [NodeAffinity].").unwrap();
        assert_eq!(
            items(&f),
            vec![
                (Some(1), "Insufficient nvidia.com/gpu"),
                (Some(4), "node(s) didn't satisfy plugin(s) [NodeAffinity]")
            ]
        );
        let dra = parse("0/2 nodes are available: 2 resource claim gpu, request a: has subrequests, but the DRAPrioritizedList feature is disabled.").unwrap();
        assert_eq!(items(&dra).len(), 1);
    }

    #[test]
    fn histogram_sorted_as_strings() {
        let f = parse("0/12 nodes are available: 10 Insufficient nvidia.com/gpu, 2 node(s) had untolerated taint {nvidia.com/gpu: present}.").unwrap();
        assert_eq!(
            items(&f),
            vec![
                (Some(10), "Insufficient nvidia.com/gpu"),
                (
                    Some(2),
                    "node(s) had untolerated taint {nvidia.com/gpu: present}"
                )
            ]
        );
    }

    #[test]
    fn truncated_event() {
        let f = parse("0/40 nodes are available: 1 node(s) had untolerated taint {a: b}, 39 Insufficient nvidia.com/gpu. preemption: 0/40 nodes are available: 1 Preemption is not helpful for scheduling, 39 No preemption victims fo ...").unwrap();
        assert!(f.truncated);
        assert_eq!(f.items.len(), 2);
        let cut = parse(
            "0/40 nodes are available: 1 node(s) had untolerated taint {a: b}, 39 Insuffic ...",
        )
        .unwrap();
        assert!(cut.truncated);
        assert_eq!(
            cut.items[1],
            FitItem {
                count: Some(39),
                reason: "Insuffic".into()
            }
        );
    }

    #[test]
    fn old_predicates_layout() {
        let f = parse("No nodes are available that match all of the following predicates:: Insufficient alpha.kubernetes.io/nvidia-gpu (1), PodToleratesNodeTaints (2).").unwrap();
        assert_eq!(f.nodes_total, None);
        assert_eq!(
            items(&f),
            vec![
                (Some(1), "Insufficient alpha.kubernetes.io/nvidia-gpu"),
                (Some(2), "PodToleratesNodeTaints")
            ]
        );
    }

    #[test]
    fn other_schedulers_and_autoscaler() {
        let v = parse("0/4 nodes are unavailable: 4 Insufficient nvidia.com/gpu.").unwrap();
        assert_eq!(v.nodes_total, Some(4));
        assert_eq!(items(&v), vec![(Some(4), "Insufficient nvidia.com/gpu")]);
        let ca = parse("pod didn't trigger scale-up: 2 Insufficient nvidia.com/gpu, 1 node(s) didn't match Pod's node affinity/selector").unwrap();
        assert_eq!(ca.items.len(), 2);
    }

    #[test]
    fn histogram_ends_at_the_first_sentence() {
        let f = parse("0/5 nodes are available: 5 node(s) didn't match Pod's node affinity/selector. pod didn't trigger scale-up: 8 node(s) had taint {a: b}, that the pod didn't tolerate").unwrap();
        assert_eq!(f.items.len(), 1);
    }

    #[test]
    fn overlap_is_detected_from_counts() {
        assert!(parse("0/4 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 NodeUnschedulable, 3 MatchNodeSelector.").unwrap().overlapping);
        assert!(!parse("0/2 nodes are available: 1 Insufficient nvidia.com/gpucores, 1 Insufficient nvidia.com/gpumem, 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }.").unwrap().overlapping);
        assert!(
            !parse(
                "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu."
            )
            .unwrap()
            .overlapping
        );
    }

    #[test]
    fn a_log_line_with_the_preemption_status_first() {
        // kubernetes/kubernetes #141491: the scheduler's log puts the PostFilter's status before the error.
        let line = r#"E0818 03:49:08.258141      15 schedule_one.go:247] "pod anti-affinity after SchedulePod for pod" pod="kube-system/registry-647bbf9878-26bk8" status="no new claims to deallocate, preemption: 0/401 nodes are available: 3 node(s) didn't match pod anti-affinity rules, 398 Preemption is not helpful for scheduling." err="0/401 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 Too many pods, 3 node(s) didn't match pod anti-affinity rules, 397 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, preemption: 0/401 nodes are available: 3 node(s) didn't match pod anti-affinity rules, 398 Preemption is not helpful for scheduling.""#;
        let f = parse(line).unwrap();
        assert_eq!(f.nodes_total, Some(401));
        assert_eq!(
            items(&f),
            vec![
                (Some(1), "Insufficient cpu"),
                (Some(1), "Insufficient memory"),
                (Some(1), "Too many pods"),
                (Some(3), "node(s) didn't match pod anti-affinity rules"),
                (
                    Some(397),
                    "node(s) didn't match Pod's node affinity/selector"
                ),
            ]
        );
        // A message that is only the PostFilter's part still reads.
        let alone =
            "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.";
        assert_eq!(
            items(&parse(alone).unwrap()),
            vec![(Some(2), "Preemption is not helpful for scheduling")]
        );
    }

    #[test]
    fn no_fit_error() {
        assert!(parse("Failed to create pod sandbox: rpc error").is_none());
        assert!(parse("").is_none());
    }
}
