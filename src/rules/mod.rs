//! The rule table's types and matcher. A rule is declared once, in `table.rs`, with its id, name, category,
//! gate, pattern (named captures are the extractors), summary, explanation, next commands, fix and fixtures.
//! This module compiles the patterns once (one multi-pattern automaton) and answers "which rule explains
//! this text"; it does not rank causes or read facts (that is `diagnose`).

mod table;

use std::collections::BTreeMap;
use std::sync::LazyLock;

use std::sync::Mutex;

use regex_automata::{
    Input, MatchKind, PatternID, PatternSet, hybrid, meta,
    nfa::thompson::{self, WhichCaptures},
    util::syntax,
};
use serde::Serialize;

pub use table::RULES;

/// The rule for a program's own error (GW528): it says that some container ran, not which one, so the
/// diagnosis weighs it after every other cause and never gives it to a Pod that was not placed.
pub const WORKLOAD_ERROR: &str = "GW528";

/// Whether a rule reads what a running workload or its node reports about itself (`table::WORKLOAD_REPORT`):
/// it does not say this Pod was scheduled, is never a Pending Pod's, and yields to a cause at an earlier gate.
pub fn is_workload_report(id: &str) -> bool {
    table::WORKLOAD_REPORT.contains(&id)
}

/// The lines that end a finished run of the installer whose log a rule reads (`table::LOG_ENDS`); empty for
/// other rules.
pub fn log_end_lines(id: &str) -> &'static [&'static str] {
    table::LOG_ENDS
        .iter()
        .find(|(rule, _)| *rule == id)
        .map_or(&[], |(_, ends)| ends)
}

/// Whether a rule reads a harmless line that says nothing of the Pod (`table::NOISE`).
pub fn is_noise(id: &str) -> bool {
    table::NOISE.iter().any(|(n, _)| *n == id)
}

/// Whether `line` comes from the component whose other lines harmless rule `id` stands for (`table::NOISE`).
pub fn is_noise_line(id: &str, line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    table::NOISE
        .iter()
        .find(|(n, _)| *n == id)
        .is_some_and(|(_, words)| words.iter().any(|w| lower.contains(w)))
}

/// Whether a rule reads the reporter's own words, not a component's message.
pub fn is_hearsay(id: &str) -> bool {
    table::HEARSAY.contains(&id)
}

/// Whether rule `specific` explains the failure that rule `general` reports, and says more about it.
pub fn refines(specific: &str, general: &str) -> bool {
    table::REFINES.contains(&(specific, general))
}

/// Whether a rule reads a GPU-stack component's own log, not the scheduler's word about the Pod.
pub fn reads_component_log(id: &str) -> bool {
    table::COMPONENT_LOG.contains(&id)
}

/// The fixed category ids of DESIGN §2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    Taint,
    InsufficientResource,
    HandlerMissing,
    RuntimeclassNotFound,
    DevicePlugin,
    RuntimeHook,
    NodeAffinity,
    InvalidSpec,
    Quota,
    Other,
    Unknown,
    None,
}

impl Category {
    pub const ALL: [Category; 12] = [
        Category::Taint,
        Category::InsufficientResource,
        Category::HandlerMissing,
        Category::RuntimeclassNotFound,
        Category::DevicePlugin,
        Category::RuntimeHook,
        Category::NodeAffinity,
        Category::InvalidSpec,
        Category::Quota,
        Category::Other,
        Category::Unknown,
        Category::None,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Category::Taint => "taint",
            Category::InsufficientResource => "insufficient-resource",
            Category::HandlerMissing => "handler-missing",
            Category::RuntimeclassNotFound => "runtimeclass-not-found",
            Category::DevicePlugin => "device-plugin",
            Category::RuntimeHook => "runtime-hook",
            Category::NodeAffinity => "node-affinity",
            Category::InvalidSpec => "invalid-spec",
            Category::Quota => "quota",
            Category::Other => "other",
            Category::Unknown => "unknown",
            Category::None => "none",
        }
    }
}

/// The gate that stopped the Pod (DESIGN §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Gate {
    Admission,
    Scheduling,
    DeviceAdmission,
    Runtime,
    None,
    Unknown,
}

impl Gate {
    pub fn as_str(self) -> &'static str {
        match self {
            Gate::Admission => "admission",
            Gate::Scheduling => "scheduling",
            Gate::DeviceAdmission => "device-admission",
            Gate::Runtime => "runtime",
            Gate::None => "none",
            Gate::Unknown => "unknown",
        }
    }
}

/// Where a next command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Where {
    Cluster,
    Node,
}

/// A next-command template. Placeholders are `{capture}` or a context field (see `CONTEXT_FIELDS`).
#[derive(Debug)]
pub struct Next {
    pub command: &'static str,
    pub place: Where,
    pub why: &'static str,
}

/// One rule. See `table.rs` for the conventions every field follows.
#[derive(Debug)]
pub struct Rule {
    /// Stable id, never reused: GW1xx scheduling, GW2xx admission, GW3xx device admission, GW4xx runtime,
    /// GW5xx causes that are not GPU gates.
    pub id: &'static str,
    /// Kebab-case name of the cause.
    pub name: &'static str,
    pub category: Category,
    pub gate: Gate,
    /// The signals this text arrives in (documentation, printed by `explain`).
    pub looks_at: &'static str,
    /// Case-insensitive regex; named captures become `details`.
    pub pattern: &'static str,
    /// One line, lowercase, no trailing period; placeholders as in `next`.
    pub summary: &'static str,
    /// Markdown under the fixed headings `## What it means`, `## Why it happens`, `## How to fix`.
    pub explanation: &'static str,
    pub next: &'static [Next],
    pub fix: Option<&'static str>,
    /// A real message this rule must explain, verbatim.
    pub example: &'static str,
    /// Where `example` comes from: a messages.md entry id or a URL.
    pub example_source: &'static str,
    /// A real, similar message this rule must not explain.
    pub near_miss: &'static str,
}

/// Context fields a template may use besides the pattern's captures.
pub const CONTEXT_FIELDS: &[&str] = &[
    "pod",
    "namespace",
    "node",
    "nodes_total",
    "count",
    "owner",
    "container",
    "resource",
    "runtimeclass",
    "handler",
    "taint",
    "resource_jsonpath",
];

struct Compiled {
    /// Every pattern in one forward lazy DFA that only says which patterns match: no captures, no reverse
    /// automaton, no prefilter (those made building it most of a short run).
    set: hybrid::dfa::DFA,
    /// The lazy DFA's state cache, kept across searches (the states a search built serve the next one).
    cache: Mutex<hybrid::dfa::Cache>,
    /// Each rule's own regex, compiled the first time the set says it matches.
    each: Vec<std::sync::OnceLock<meta::Regex>>,
}

/// Kubernetes messages are ASCII where it matters, so the patterns are compiled without Unicode: `.`, `\s`,
/// `\w`, `\b`, negated classes and case folding work on bytes. That keeps the automata, and start-up, small
/// (Unicode classes and case folding made compiling the set most of a run). Non-ASCII text still matches
/// byte by byte; captures are read back lossily.
fn syntax_config() -> syntax::Config {
    syntax::Config::new().unicode(false).utf8(false)
}

/// A regex read for its captures (a rule's, the FitError reader's): a message is short, so the bounded
/// backtracker (or the PikeVM) reads it quickly, and only those two engines are built.
pub(crate) fn capture_regex(pattern: &str) -> Result<meta::Regex, Box<meta::BuildError>> {
    meta::Regex::builder()
        .configure(
            meta::Config::new()
                .auto_prefilter(false)
                .onepass(false)
                .hybrid(false)
                .dfa(false),
        )
        .syntax(syntax_config().case_insensitive(true))
        .build(pattern)
        .map_err(Box::new)
}

static COMPILED: LazyLock<Compiled> = LazyLock::new(|| {
    let patterns: Vec<String> = RULES.iter().map(|r| folded(r.pattern)).collect();
    let set = hybrid::dfa::DFA::builder()
        .configure(
            hybrid::dfa::DFA::config()
                .match_kind(MatchKind::All)
                .minimum_cache_clear_count(None),
        )
        .syntax(syntax_config())
        .thompson(thompson::Config::new().which_captures(WhichCaptures::None))
        .build_many(&patterns)
        .expect("every rule pattern compiles (tested)");
    let cache = Mutex::new(set.create_cache());
    let each = RULES.iter().map(|_| std::sync::OnceLock::new()).collect();
    Compiled { set, cache, each }
});

fn each(idx: usize) -> &'static meta::Regex {
    COMPILED.each[idx]
        .get_or_init(|| capture_regex(RULES[idx].pattern).expect("rule pattern compiles (tested)"))
}

/// A pattern with its ASCII letters lowercased (escapes and group names kept), so that the set can match
/// lowercased text case-sensitively: the same matches as case-insensitive, at half the compile cost.
fn folded(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        out.push(c.to_ascii_lowercase());
        match c {
            '\\' => out.extend(chars.next()),
            '(' if chars.as_str().starts_with("?P<") => {
                for n in chars.by_ref() {
                    out.push(n);
                    if n == '>' {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The indexes of the rules whose patterns match `text`, in table order.
fn matching(text: &str) -> Vec<usize> {
    let c = &*COMPILED;
    let mut found = PatternSet::new(c.set.pattern_len());
    let lower = text.to_ascii_lowercase();
    let searched = {
        let mut cache = c.cache.lock().unwrap_or_else(|e| e.into_inner());
        c.set
            .try_which_overlapping_matches(&mut cache, &Input::new(lower.as_bytes()), &mut found)
    };
    let found: Vec<usize> = match searched {
        Ok(()) => found.iter().map(|p| p.as_usize()).collect(),
        // The lazy DFA does not give up as configured; should it, each rule answers for itself.
        Err(_) => (0..RULES.len())
            .filter(|&i| each(i).is_match(text.as_bytes()))
            .collect(),
    };
    found
        .into_iter()
        .filter(|&i| counts_agree(i, text))
        .filter(|&i| RULES[i].id != WORKLOAD_ERROR || workload_error(i, text).is_some())
        .filter(|&i| RULES[i].id != RUNC_MOUNT || !mounts_accelerator_files(i, text))
        .collect()
}

/// GW551 reads runc's refusal of a volume's mount; a mount of the driver's files or device nodes (the NVIDIA
/// runtime's CDI edits, a vendor's hook) is the GPU runtime's, which GW418 and its refinements read.
const RUNC_MOUNT: &str = "GW551";

fn mounts_accelerator_files(idx: usize, text: &str) -> bool {
    let re = each(idx);
    let mut caps = re.create_captures();
    re.captures(text.as_bytes(), &mut caps);
    re.group_info()
        .pattern_names(PatternID::ZERO)
        .flatten()
        .filter_map(|n| caps.get_group_by_name(n))
        .map(|span| String::from_utf8_lossy(&text.as_bytes()[span.range()]).to_ascii_lowercase())
        .any(|path| {
            [
                "/dev/nvidia",
                "libnv",
                "libcuda",
                "/usr/local/cuda",
                "/run/nvidia",
                "/usr/lib/wsl",
                "nvidia-smi",
                "nvidia-container",
                "/dev/dri",
                "/dev/kfd",
                "/dev/accel",
                "/dev/neuron",
            ]
            .iter()
            .any(|w| path.contains(w))
        })
}

/// GW528's error as the program printed it, cut where its line ended (a record's lines arrive joined by
/// spaces) and at 200 characters; `None` when it names the GPU (no GPU visible, too few GPUs for the
/// parallelism asked, a data type the GPU lacks, too little GPU memory): that is not the program's own doing,
/// and a regex cannot say "a line without these words".
fn workload_error(idx: usize, text: &str) -> Option<String> {
    static LINE_END: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(
            r#"\s{2,}|\s(?:Traceback \(|File "|(?:ERROR|INFO|WARNING|DEBUG)\b|\[?\d{4}-\d\d-\d\d|[IWEF]\d{4} \d\d:|usage:)|[.!?'")\]]\s+[A-Z\[]"#,
        )
        .expect("line end regex")
    });
    let re = each(idx);
    let mut caps = re.create_captures();
    re.captures(text.as_bytes(), &mut caps);
    let span = re
        .group_info()
        .pattern_names(PatternID::ZERO)
        .flatten()
        .find_map(|n| caps.get_group_by_name(n))?;
    let error = String::from_utf8_lossy(&text.as_bytes()[span.range()]);
    // A sentence's end followed by a capital (the next line, joined) keeps its punctuation.
    let error = LINE_END
        .find(&error)
        .map_or(&*error, |m| {
            let keep = if m.as_str().starts_with(char::is_whitespace) {
                0
            } else {
                1
            };
            &error[..m.start() + keep]
        })
        .trim();
    let lower = error.to_ascii_lowercase();
    let names_gpu = [
        "gpu",
        "cuda",
        "nvidia",
        "nvml",
        "cudnn",
        "nccl",
        "rocm",
        "device",
        "tensor_parallel",
        "tensor parallel",
        "bfloat16",
    ]
    .iter()
    .any(|w| lower.contains(w));
    // CUDA running out of memory (or failing) in the same record is the failure; a later exception is its
    // cleanup's.
    let record = text.to_ascii_lowercase();
    let gpu_failed = [
        "outofmemoryerror",
        "cuda out of memory",
        "cuda error",
        "no cuda gpus",
    ]
    .iter()
    .any(|w| record.contains(w));
    if names_gpu || gpu_failed {
        return None;
    }
    Some(match error.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &error[..at]),
        None => error.to_string(),
    })
}

/// A regex cannot compare numbers, so GW123's reading of a node's `Capacity:` and `Allocatable:` blocks (its
/// `capacity` and `allocatable` captures) explains the text only where fewer devices are allocatable than
/// present. Every match is weighed: one that holds (or GW123's other wording) is enough.
fn counts_agree(idx: usize, text: &str) -> bool {
    if RULES[idx].id != "GW123" {
        return true;
    }
    let re = each(idx);
    let count = |caps: &regex_automata::util::captures::Captures, name: &str| {
        caps.get_group_by_name(name)
            .and_then(|span| std::str::from_utf8(&text.as_bytes()[span.range()]).ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    re.captures_iter(text.as_bytes()).any(|caps| {
        match (count(&caps, "capacity"), count(&caps, "allocatable")) {
            (Some(capacity), Some(allocatable)) => allocatable < capacity,
            _ => true,
        }
    })
}

/// Compiles the rule set now, so that a later match does not wait for it (live mode does this on another
/// thread while the requests are in flight).
pub fn warm() {
    LazyLock::force(&COMPILED);
}

/// A rule that explained a piece of text, with its captures.
#[derive(Debug, Clone)]
pub struct Match {
    pub rule: &'static Rule,
    pub captures: BTreeMap<String, String>,
}

/// The first rule (in table order) whose pattern matches `text`.
pub fn first_match(text: &str) -> Option<Match> {
    read_matches(text).into_iter().next()
}

/// What a piece of text says: the rule that explains it (a specific rule before a catch-all, a message
/// before the reporter's words), then any of the reporter's words that the first rule does not cover.
pub fn read_matches(text: &str) -> Vec<Match> {
    let found = matching(text);
    let hearsay = |i: &usize| is_hearsay(RULES[*i].id);
    // A general rule yields to a rule that refines it on the same text.
    let refined = |i: &usize| {
        table::REFINES.iter().any(|(specific, general)| {
            *general == RULES[*i].id && found.iter().any(|j| RULES[*j].id == *specific)
        })
    };
    let first = found
        .iter()
        .copied()
        .filter(|i| !refined(i))
        .find(|i| !table::CATCH_ALL.contains(&RULES[*i].id) && !hearsay(i))
        .or_else(|| {
            found
                .iter()
                .copied()
                .filter(|i| !refined(i))
                .find(|i| !hearsay(i))
        })
        .or_else(|| found.first().copied());
    first
        .into_iter()
        .chain(
            found
                .iter()
                .copied()
                .filter(|i| hearsay(i) && Some(*i) != first),
        )
        .filter_map(|idx| captures_of(idx, text))
        .collect()
}

fn captures_of(idx: usize, text: &str) -> Option<Match> {
    let re = each(idx);
    let mut caps = re.create_captures();
    re.captures(text.as_bytes(), &mut caps);
    if !caps.is_match() {
        return None;
    }
    let names = || re.group_info().pattern_names(PatternID::ZERO).flatten();
    let named = |caps: &regex_automata::util::captures::Captures| {
        names().any(|n| caps.get_group_by_name(n).is_some_and(|s| !s.is_empty()))
    };
    // A bare keyword (`UnexpectedAdmissionError` in a status line) says less than the rule's fuller form later in
    // the text (`Allocate failed due to …`): the first match that names something speaks for the rule.
    if !named(&caps)
        && names().next().is_some()
        && let Some(fuller) = re.captures_iter(text.as_bytes()).find(|c| named(c))
    {
        caps = fuller;
    }
    let mut captures = names()
        .filter_map(|n| {
            caps.get_group_by_name(n).map(|span| {
                let field = capture_field(n);
                let value = String::from_utf8_lossy(&text.as_bytes()[span.range()]);
                // A resource name ends in a letter or digit: a dot after it ends the sentence (a message
                // quoted in JSON keeps its final `.` before the closing quote).
                let value = if field == "resource" {
                    value.trim().trim_end_matches('.')
                } else {
                    value.trim()
                };
                (field.to_string(), value.to_string())
            })
        })
        .filter(|(_, v)| !v.is_empty())
        .collect::<BTreeMap<String, String>>();
    if RULES[idx].id == WORKLOAD_ERROR {
        captures.insert("error".into(), workload_error(idx, text)?);
    }
    Some(Match {
        rule: &RULES[idx],
        captures,
    })
}

/// The field a capture fills. A pattern that needs the same field in several alternatives names the others
/// `field_alt`, `field_alt2`, …, since a regex may not use one name twice.
pub fn capture_field(name: &str) -> &str {
    match name.rfind("_alt") {
        Some(i) if name[i + 4..].bytes().all(|b| b.is_ascii_digit()) => &name[..i],
        _ => name,
    }
}

/// Every rule whose pattern matches `text` (for tests and `explain`).
pub fn all_matches(text: &str) -> Vec<&'static Rule> {
    matching(text).into_iter().map(|i| &RULES[i]).collect()
}

/// Looks a rule up by id (case-insensitive) or by name.
pub fn by_id(id: &str) -> Option<&'static Rule> {
    RULES
        .iter()
        .find(|r| r.id.eq_ignore_ascii_case(id) || r.name == id)
}

/// The `{placeholder}` names used in a template.
pub fn placeholders(template: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                if let Some((name, _)) = placeholder(&after[..close]) {
                    out.push(name);
                }
                rest = &after[close + 1..];
            }
            None => break,
        }
    }
    out
}

/// A template as a reader of the table sees it: each placeholder by its name alone, without its stand-in words.
pub fn shown_template(template: &str) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else { break };
        out.push_str(&rest[..open + 1]);
        match placeholder(&after[..close]) {
            Some((name, _)) => out.push_str(name),
            None => out.push_str(&after[..close]),
        }
        out.push('}');
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

/// What stands between a template's braces: `name`, or `name|words` where the words stand in when the text
/// gave no value for the name (a summary reads on; a command keeps `<name>` for the reader to fill in).
/// Anything else (a JSON or shell brace) is not a placeholder.
pub fn placeholder(inner: &str) -> Option<(&str, Option<&str>)> {
    let (name, fallback) = match inner.split_once('|') {
        Some((n, f)) => (n, Some(f)),
        None => (inner, None),
    };
    (!name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'))
        .then_some((name, fallback))
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::bytes::Regex;

    #[test]
    fn ids_are_unique_sorted_and_well_formed() {
        let ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(ids, sorted, "rule ids must be unique and sorted");
        for r in RULES {
            assert!(
                r.id.len() == 5
                    && r.id.starts_with("GW")
                    && r.id[2..].bytes().all(|b| b.is_ascii_digit()),
                "{}",
                r.id
            );
            let range = &r.id[2..3];
            let expected = match r.gate {
                Gate::Scheduling => "1",
                Gate::Admission => "2",
                Gate::DeviceAdmission => "3",
                Gate::Runtime => "4",
                // A message that means the Pod got past every gate (it started, then something failed).
                Gate::None => "6",
                _ => "?",
            };
            assert!(
                range == expected || (range == "5" && r.category == Category::Other),
                "{} is in the wrong id range for {:?}",
                r.id,
                r.gate
            );
        }
    }

    #[test]
    fn names_are_unique_kebab_case_causes() {
        let mut names: Vec<&str> = RULES.iter().map(|r| r.name).collect();
        names.sort();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "rule names must be unique");
        for r in RULES {
            assert!(
                r.name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{}",
                r.name
            );
            assert!(
                !r.name.starts_with("fix-") && !r.name.starts_with("add-"),
                "{} names a fix, not a cause",
                r.name
            );
        }
    }

    #[test]
    fn the_reporters_words_come_after_the_message_they_sit_beside() {
        for id in table::HEARSAY {
            let r = by_id(id).unwrap_or_else(|| panic!("{id} is not in the table"));
            // As the engine reads it: a pasted manifest's lines are folded into one.
            let text = crate::classify::normalise(r.example);
            assert_eq!(first_match(&text).map(|m| m.rule.id), Some(r.id));
        }
        // A ticket that quotes the kubelet and says whose the GPUs are: both are read, the message first.
        let text = format!(
            "{} {}",
            by_id("GW301").unwrap().example,
            by_id("GW132").unwrap().example
        );
        let ids: Vec<&str> = read_matches(&text).iter().map(|m| m.rule.id).collect();
        assert_eq!(ids, ["GW301", "GW132"]);
        let alone: Vec<&str> = read_matches(by_id("GW301").unwrap().example)
            .iter()
            .map(|m| m.rule.id)
            .collect();
        assert_eq!(alone, ["GW301"]);
    }

    #[test]
    fn fewer_gpus_allocatable_than_present_is_read_and_equal_counts_are_not() {
        let block = |allocatable: u32| {
            crate::classify::normalise(&format!(
                "Capacity:\n  cpu:  104\n  nvidia.com/gpu:  8\n  pods:  110\nAllocatable:\n  cpu:  104\n  nvidia.com/gpu:  {allocatable}\n  pods:  110"
            ))
        };
        let ids = |t: &str| {
            read_matches(t)
                .iter()
                .map(|m| m.rule.id)
                .collect::<Vec<_>>()
        };
        let m = first_match(&block(6)).expect("6 of 8 allocatable is read");
        assert_eq!(m.rule.id, "GW123");
        assert_eq!(m.captures.get("capacity").map(String::as_str), Some("8"));
        assert_eq!(m.captures.get("allocatable").map(String::as_str), Some("6"));
        assert!(!ids(&block(8)).contains(&"GW123"));
        // Equal counts do not veto the rule's other wording, nor a later block that holds.
        let both = format!("{} Marking it unhealthy", block(8));
        assert_eq!(first_match(&both).map(|m| m.rule.id), Some("GW123"));
        let two = format!("{} {}", block(8), block(7));
        assert_eq!(first_match(&two).map(|m| m.rule.id), Some("GW123"));
    }

    #[test]
    fn catch_alls_yield_only_to_rules_that_match_too() {
        for id in table::CATCH_ALL {
            let r = by_id(id).unwrap_or_else(|| panic!("{id} is not in the table"));
            // As the engine reads it: a pasted manifest's lines are folded into one.
            let text = crate::classify::normalise(r.example);
            assert_eq!(first_match(&text).map(|m| m.rule.id), Some(r.id));
        }
        let gpu_denial = by_id("GW212").unwrap().example;
        assert!(all_matches(gpu_denial).iter().any(|r| r.id == "GW210"));
        assert_eq!(first_match(gpu_denial).unwrap().rule.id, "GW212");
    }

    /// The real texts kept beside the tests: pastes from tickets and the runtime gate's captures.
    fn real_texts() -> Vec<(String, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut dirs = vec![root.join("real")];
        for e in std::fs::read_dir(root.join("runtime")).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            }
        }
        let mut texts = Vec::new();
        for dir in dirs {
            for e in std::fs::read_dir(&dir).unwrap() {
                let path = e.unwrap().path();
                // A runtime's own log (CRI-O's start-up warnings) is kept as `.log`.
                if path.extension().is_some_and(|x| x == "txt" || x == "log") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    texts.push((path.display().to_string(), text));
                }
            }
        }
        texts.sort();
        texts
    }

    #[test]
    fn a_resource_name_keeps_no_sentence_dot() {
        // A FailedScheduling message quoted in a JSON document read as text: `…gpu.","reason":…`.
        let text = r#"{"message":"0/1 nodes are available: 1 Insufficient nvidia.com/gpu.","reason":"FailedScheduling"}"#;
        let reading = crate::classify::read(text);
        let resources: Vec<&str> = reading
            .findings
            .iter()
            .filter_map(|f| f.captures.get("resource").map(String::as_str))
            .collect();
        assert_eq!(resources, ["nvidia.com/gpu"], "{reading:?}");
    }

    #[test]
    fn a_refining_rule_wins_over_the_rule_it_refines() {
        let real = real_texts();
        for (specific, general) in table::REFINES {
            let r = by_id(specific).unwrap_or_else(|| panic!("{specific} is not in the table"));
            assert!(by_id(general).is_some(), "{general} is not in the table");
            // Shown on the rule's example, or else on a real text that both rules match.
            let both = |text: &str| {
                let ids: Vec<&str> = all_matches(&crate::classify::normalise(text))
                    .iter()
                    .map(|r| r.id)
                    .collect();
                ids.contains(specific) && ids.contains(general)
            };
            let (_, text) = std::iter::once(("example".to_string(), r.example.to_string()))
                .chain(real.iter().cloned())
                .find(|(_, t)| both(t))
                .unwrap_or_else(|| {
                    panic!(
                        "neither {specific}'s example nor a real text matches both it and {general}"
                    )
                });
            let read: Vec<&str> = crate::classify::read(&text)
                .findings
                .iter()
                .map(|f| f.rule.id)
                .collect();
            assert!(read.contains(specific), "{specific}: {read:?}");
            assert!(!read.contains(general), "{general} did not yield: {read:?}");
        }
        // The general rule still explains the text alone.
        let amd = by_id("GW146").unwrap().near_miss;
        assert_eq!(
            crate::classify::read(amd)
                .findings
                .iter()
                .map(|f| f.rule.id)
                .collect::<Vec<_>>(),
            ["GW102", "GW105"]
        );
    }

    #[test]
    fn every_pattern_compiles_alone() {
        for r in RULES {
            capture_regex(r.pattern).unwrap_or_else(|e| panic!("{}: {e}", r.id));
        }
        let _ = &*COMPILED;
    }

    /// A workload's reports are runtime findings and no GPU gate, except what a container's GPU tools say
    /// of the GPU they find: a CUDA image's banner that it finds no driver (GW461, what a missing nvidia
    /// runtime leaves behind), `nvidia-smi` without the CUDA library (GW462), ROCm refused `/dev/kfd` (GW463),
    /// CUDA's unknown error at initialisation (GW467).
    #[test]
    fn workload_reports_are_runtime_findings_that_are_no_gpu_gate() {
        assert!(table::WORKLOAD_REPORT.contains(&WORKLOAD_ERROR));
        for id in table::WORKLOAD_REPORT {
            let r = by_id(id).unwrap_or_else(|| panic!("{id} is not in the table"));
            let category = match *id {
                "GW461" => Category::HandlerMissing,
                "GW462" | "GW463" | "GW467" => Category::RuntimeHook,
                _ => Category::Other,
            };
            assert_eq!((r.category, r.gate), (category, Gate::Runtime), "{id}");
        }
    }

    #[test]
    fn component_log_rules_explain_a_node_at_scheduling() {
        for id in table::COMPONENT_LOG {
            let r = RULES
                .iter()
                .find(|r| r.id == *id)
                .unwrap_or_else(|| panic!("{id}"));
            assert!(
                matches!(
                    r.category,
                    Category::DevicePlugin | Category::HandlerMissing
                ),
                "{id}"
            );
            assert_eq!(r.gate, Gate::Scheduling, "{id}");
            assert!(r.looks_at.contains("log"), "{id}: {}", r.looks_at);
        }
    }

    #[test]
    fn a_workload_error_is_read_in_each_of_its_wordings() {
        // argparse (llm-d/llm-d-benchmark#1572), pydantic (ai-dynamo/dynamo#10072), click (tronbyt/server#405).
        for (text, error) in [
            // (the reader drops a ticket's backticks before any rule reads the text)
            (
                "vllm: error: unrecognized arguments: --disable-log-requests",
                "unrecognized arguments: --disable-log-requests",
            ),
            (
                "2026-05-27T04:26:15.289511Z ERROR __main__.main: Failed to parse profiler config: 1 validation error for DynamoGraphDeploymentRequestSpec",
                "1 validation error for DynamoGraphDeploymentRequestSpec",
            ),
            (
                "Error: Invalid value for '--port': 'tcp://10.43.3.59:8000' is not a valid integer.",
                "Invalid value for '--port': 'tcp://10.43.3.59:8000' is not a valid integer.",
            ),
        ] {
            let m = first_match(text).unwrap();
            assert_eq!(m.rule.id, "GW528", "{text}");
            assert_eq!(
                m.captures.get("error").map(String::as_str),
                Some(error),
                "{text}"
            );
        }
        // A record's lines arrive joined: the error is cut where its line ended, and a GPU rule that reads
        // another line of the same record explains it (vllm-project/vllm#15613, s107018; pytorch#…, GW421's example).
        let joined = "ValueError: invalid literal for int() with base 10: 'tcp://10.43.1.39:8000' ERROR 03-27 03:12:01 engine.py:400] invalid literal for int() with base 10: 'tcp://10.43.1.39:8000'";
        let m = first_match(joined).unwrap();
        assert_eq!(
            m.captures.get("error").map(String::as_str),
            Some("ValueError: invalid literal for int() with base 10: 'tcp://10.43.1.39:8000'")
        );
        let gpu = RULES.iter().find(|r| r.id == "GW421").unwrap().example;
        let both = format!(
            "ValueError: invalid literal for int() with base 10: 'tcp://10.43.1.39:8000' {gpu}"
        );
        assert_eq!(first_match(&both).map(|m| m.rule.id), Some("GW421"));
        // A ValueError that names the GPU is not the program's own doing (vllm-project/vllm#946).
        let dtype = "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute capability 7.5.";
        assert_eq!(first_match(dtype).map(|m| m.rule.id), None);
    }

    #[test]
    fn rules_leave_text_that_only_looks_like_theirs_alone() {
        let id = |text: &str| first_match(text).map(|m| m.rule.id);
        // RBAC refusing a device plugin that is not the GPU's, or an event, is not the GPU stack left undone.
        assert_eq!(
            id(
                r#"Failed to list *v1.Node: nodes is forbidden: User "system:serviceaccount:kube-system:sriov-device-plugin" cannot list resource "nodes" in API group "" at the cluster scope"#
            ),
            Some("GW506")
        );
        assert_eq!(
            id(
                r#"Server rejected event (will not retry!): events is forbidden: User "system:serviceaccount:gpu-operator:nvidia-device-plugin" cannot create resource "events" in API group "" in the namespace "default""#
            ),
            Some("GW506")
        );
        // Triton's summary line after a model failed to load says nothing of its own: the line before it does.
        assert_eq!(
            id("error: creating server: Internal - failed to load all models"),
            None
        );
        // nvidia-peermem that a host's modprobe cannot load is GPUDirect RDMA, not the driver container failing.
        assert_eq!(
            id("modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument"),
            None
        );
        // Pod Security refusing a hostPath volume that does not hold the GPU's devices is the policy's business.
        assert_eq!(
            id(
                r#"pods "app-0" is forbidden: violates PodSecurity "baseline:latest": hostPath volumes (volume "drive-data")"#
            ),
            Some("GW210")
        );
        assert_eq!(
            id(
                r#"pods "app-0" is forbidden: violates PodSecurity "baseline:latest": hostPath volumes (volume "dev-dri")"#
            ),
            Some("GW224")
        );
        // nvidia-docker 1.0's error stops where its sentence does, when the next line arrives joined: a command,
        // or the shell's prompt.
        for joined in [
            "nvidia-docker | 2017/01/16 16:55:02 Error: Could not load UVM kernel module $ nvidia-smi Thu Nov 2 10:12:00 2017",
            "nvidia-docker | 2017/01/16 16:55:02 Error: Could not load UVM kernel module jon@pseudotensor:~/h2o4gpu$",
        ] {
            let m = first_match(joined).unwrap();
            assert_eq!(m.rule.id, "GW457");
            assert_eq!(
                m.captures.get("error").map(String::as_str),
                Some("Could not load UVM kernel module"),
                "{joined}"
            );
        }
    }

    #[test]
    fn an_mpi_launcher_that_cannot_resolve_a_worker_is_read_for_open_mpi_4_and_5() {
        let id = |text: &str| first_match(text).map(|m| m.rule.id);
        let ssh = "ssh: Could not resolve hostname lm-horovod-job-worker-5.lm-horovod-job: Name or service not known\n--------------------------------------------------------------------------\n";
        // Open MPI 4's ORTE (volcano-sh/volcano#2226) and Open MPI 5's PRRTE give up in their own words.
        assert_eq!(
            id(&format!(
                "{ssh}ORTE was unable to reliably start one or more daemons."
            )),
            Some("GW538")
        );
        assert_eq!(
            id(&format!(
                "{ssh}PRTE has lost communication with a remote daemon."
            )),
            Some("GW538")
        );
        // PRRTE after ssh was refused is the worker's sshd, not its name.
        assert_eq!(
            id(
                "ssh: connect to host 10.0.0.7 port 22: Connection refused\n--------------------------------------------------------------------------\nPRTE has lost communication with a remote daemon."
            ),
            None
        );
    }

    /// A program that finds no GPU, or a driver older than its CUDA, says so in its framework's words.
    #[test]
    fn a_program_without_its_gpu_is_read_in_each_frameworks_wording() {
        let id = |text: &str| first_match(text).map(|m| m.rule.id);
        for (line, rule) in [
            // PyTorch (Grace9994/CoMoSVC#6).
            ("RuntimeError: No CUDA GPUs are available", "GW421"),
            // A kernel's PTX from a newer CUDA (mit-han-lab/inter-operator-scheduler#4, chelsea0x3b/llama-dfdx#6).
            (
                "Cuda failure: 222 the provided PTX was compiled with an unsupported toolchain.",
                "GW408",
            ),
            (
                "thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: Driver(DriverError(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, \"the provided PTX was compiled with an unsupported toolchain.\"))'",
                "GW408",
            ),
        ] {
            assert_eq!(id(line), Some(rule), "{line}");
        }
        // vLLM's platform detection is information, found or not (vllm-project/vllm#12847; a CPU client logs it too):
        // its failure is `Failed to infer device type`.
        assert_eq!(
            id(
                "INFO 05-14 04:44:35 [__init__.py:243] No platform detected, vLLM is running on UnspecifiedPlatform"
            ),
            None
        );
        assert_eq!(
            id("INFO 08-01 12:38:45 [__init__.py:241] Automatically detected platform cuda."),
            None
        );
    }

    /// A shared GPU asked for more than once: NVIDIA's device plugin's words and GKE's (its time-sharing page).
    #[test]
    fn a_shared_gpu_asked_for_twice_is_read_in_each_plugins_words() {
        for (text, resource) in [
            (
                "Allocate failed due to rpc error: code = Unknown desc = request for 'nvidia.com/gpu: 2' too large: maximum request size for shared resources is 1, which is unexpected",
                "nvidia.com/gpu",
            ),
            (
                "Pod Allocate failed due to rpc error: code = Unknown desc = [invalid request for sharing GPU (time-sharing), at most 1 nvidia.com/gpu can be requested on GPU nodes], which is unexpected",
                "nvidia.com/gpu",
            ),
        ] {
            let m = read_matches(text).into_iter().next().unwrap();
            assert_eq!(m.rule.id, "GW314", "{text}");
            assert_eq!(
                m.captures.get("resource").map(String::as_str),
                Some(resource)
            );
            assert_eq!(m.captures.get("max").map(String::as_str), Some("1"));
        }
    }

    #[test]
    fn kernel_lines_are_read_in_each_kernels_wording() {
        let id = |text: &str| first_match(text).map(|m| m.rule.id);
        // drivers/base/dd.c before Linux 6.x (siderolabs/pkgs#792) and since.
        for (line, pci) in [
            (
                "amdgpu: probe of 0000:04:00.0 failed with error -2",
                "0000:04:00.0",
            ),
            (
                "[   12.345678] amdgpu 0000:03:00.0: probe with driver amdgpu failed with error -22",
                "0000:03:00.0",
            ),
        ] {
            let m = first_match(line).unwrap();
            assert_eq!(m.rule.id, "GW186", "{line}");
            assert_eq!(
                m.captures.get("pci").map(String::as_str),
                Some(pci),
                "{line}"
            );
        }
        // The kernel cuts a task's name to 15 characters: the toolkit's CLI, its ctk and its CDI hook.
        for line in [
            "[4746547.221468] nvidia-containe[2847336]: segfault at 7f6ee8000020 ip 00007f6f24ca1cf2 sp 00007f6ef7ffed60 error 6 in libc.so.6[7f6f24c28000+195000]",
            "[ 1234.567890] nvidia-ctk[4242]: segfault at 0 ip 000055d1c2a3b4c5 sp 00007ffd1a2b3c40 error 4 in nvidia-ctk[55d1c2a00000+1000000]",
            "traps: nvidia-containe[6941] general protection fault ip:7f0aff4d2c6a sp:7ffe08482048 error:0 in libc-2.27.so[7f0aff429000+1e7000]",
        ] {
            assert_eq!(id(line), Some("GW469"), "{line}");
        }
        assert_eq!(
            id(
                "[  317.086889] python3[6941]: segfault at 0 ip 00007f0aff4d2c6a sp 00007ffe08482048 error 4 in libc-2.27.so[7f0aff429000+1e7000]"
            ),
            None
        );
        // nfd-master that does not answer (the network) and that DNS says does not exist (the install).
        let nfd = |err: &str| {
            format!(
                "grpc: addrConn.createTransport failed to connect to {{nfd-master:8080 0  <nil>}}. Err :connection error: desc = \"transport: Error while dialing dial tcp: {err}\". Reconnecting..."
            )
        };
        assert_eq!(id(&nfd("i/o timeout")), Some("GW537"));
        assert_eq!(
            id(&nfd("lookup nfd-master on 10.43.0.10:53: no such host")),
            Some("GW188")
        );
        // The kubelet's device manager that cannot dial a plugin, in 1.25+, 1.21–1.24 and older words.
        for line in [
            "E1125 12:40:01.992461   16582 client.go:69] \"Unable to connect to device plugin client with socket path\" err=\"failed to dial device plugin: context deadline exceeded\" path=\"/var/lib/kubelet/device-plugins/testdevice.sock\"",
            "\"Can't create new endpoint with socket path\" err=\"failed to dial device plugin: context deadline exceeded\" path=\"/var/lib/kubelet/device-plugins/nvidia.sock\"",
            "E0101 00:00:00.000000    1234 endpoint.go:62] Can't create new endpoint with path /var/lib/kubelet/device-plugins/nvidia.sock err failed to dial device plugin: context deadline exceeded",
        ] {
            assert_eq!(id(line), Some("GW189"), "{line}");
        }
        // nvidia-ctk's refusal of the spec it built; systemd's exit line after it is no cause of its own.
        assert_eq!(
            id("nvidia-ctk: level=error msg=\"failed to write spec: invalid CDI Spec:"),
            Some("GW434")
        );
        assert_eq!(
            id(
                "systemd[1]: nvidia-cdi-refresh.service: Main process exited, code=exited, status=1/FAILURE"
            ),
            None
        );
        // Go's resolver without the server (`lookup HOST: …`), and gRPC ≥1.67's address with its balancer
        // attributes, whose braces nest (the form of kubernetes/kubernetes#139744).
        assert_eq!(id(&nfd("lookup nfd-master: no such host")), Some("GW188"));
        assert_eq!(id(&nfd("lookup nfd-master: i/o timeout")), Some("GW537"));
        let v167 = |err: &str| {
            format!(
                "W0321 00:12:49.519655       1 logging.go:55] [core] [Channel #2 SubChannel #4]grpc: addrConn.createTransport failed to connect to {{Addr: \"gpu-operator-node-feature-discovery-master:8080\", ServerName: \"gpu-operator-node-feature-discovery-master:8080\", BalancerAttributes: {{\"<%!p(pickfirstleaf.managedByPickfirstKeyType={{}})>\": \"<%!p(bool=true)>\" }}}}. Err: connection error: desc = \"transport: Error while dialing: dial tcp {err}\""
            )
        };
        assert_eq!(
            id(&v167("10.96.12.7:8080: connect: connection refused")),
            Some("GW184")
        );
        assert_eq!(id(&v167("10.96.12.7:8080: i/o timeout")), Some("GW537"));
        assert_eq!(
            id(&v167(
                ": lookup gpu-operator-node-feature-discovery-master on 10.96.0.10:53: no such host"
            )
            .replace("tcp :", "tcp:")),
            Some("GW188")
        );
    }

    /// containerd's handler error cut off just after the handler's name still names the handler; cut off
    /// inside the name, it names none; the whole message names it too.
    #[test]
    fn a_containerd_handler_error_cut_after_the_name_names_the_handler() {
        let handler = |t: &str| {
            let m = first_match(t).unwrap();
            assert_eq!(m.rule.id, "GW401", "{t}");
            m.captures.get("handler").cloned()
        };
        let head = "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for";
        assert_eq!(
            handler(&format!("{head} \"nvidia\"")).as_deref(),
            Some("nvidia")
        );
        assert_eq!(
            handler(&format!("{head} \"nvidia\"  ")).as_deref(),
            Some("nvidia")
        );
        for cut in ["...", "…", " is", " is configu", " ..."] {
            assert_eq!(
                handler(&format!("{head} \"nvidia\"{cut}")).as_deref(),
                Some("nvidia"),
                "{cut}"
            );
        }
        assert_eq!(handler(&format!("{head} \"nvid")), None);
        assert_eq!(
            handler(&format!("{head} \"nvidia-cdi\" is configured")).as_deref(),
            Some("nvidia-cdi")
        );
        // The name followed by anything but the end is not a cut: no rule claims a made-up sentence.
        assert!(
            first_match(&format!("{head} \"nvidia\" but the node rebooted"))
                .is_none_or(|m| m.rule.id != "GW401")
        );
    }

    #[test]
    fn a_capture_named_field_alt_fills_the_field() {
        let m = first_match("/tmp/cuda-control/src/loader.c:856 can't find library libcuda.so.")
            .unwrap();
        assert_eq!(m.rule.id, "GW420");
        assert_eq!(
            m.captures.get("library").map(String::as_str),
            Some("libcuda.so")
        );
        assert!(!m.captures.contains_key("library_alt"));
        // A third alternative's capture fills the field too; a name that only starts like one does not.
        let m = first_match("logs: `using mps requires --mps-root to be specified.`").unwrap();
        assert_eq!(m.rule.id, "GW145");
        assert!(m.captures.contains_key("why"));
        assert_eq!(capture_field("why_alt2"), "why");
        assert_eq!(capture_field("why_altitude"), "why_altitude");
    }

    #[test]
    fn every_placeholder_has_a_capture_or_context_field() {
        for r in RULES {
            let re = Regex::new(r.pattern).unwrap();
            let caps: Vec<&str> = re.capture_names().flatten().map(capture_field).collect();
            let mut templates = vec![r.summary];
            templates.extend(r.next.iter().map(|n| n.command));
            templates.extend(r.next.iter().map(|n| n.why));
            templates.extend(r.fix);
            for t in templates {
                for p in placeholders(t) {
                    assert!(
                        caps.contains(&p) || CONTEXT_FIELDS.contains(&p),
                        "{}: placeholder {{{p}}} has no capture",
                        r.id
                    );
                }
            }
        }
    }

    #[test]
    fn summaries_and_docs_follow_the_voice() {
        for r in RULES {
            let first = r.summary.chars().next().unwrap();
            assert!(!first.is_uppercase(), "{}: summary starts lowercase", r.id);
            assert!(
                !r.summary.ends_with('.'),
                "{}: summary has no trailing period",
                r.id
            );
            for h in ["## What it means", "## Why it happens", "## How to fix"] {
                assert!(r.explanation.contains(h), "{}: explanation lacks {h}", r.id);
            }
            assert!(!r.next.is_empty(), "{}: at least one next command", r.id);
            for n in r.next {
                match n.place {
                    Where::Cluster => assert!(
                        n.command.starts_with("kubectl "),
                        "{}: cluster commands are kubectl: {}",
                        r.id,
                        n.command
                    ),
                    Where::Node => assert!(
                        !n.command.starts_with("kubectl "),
                        "{}: node commands run on the node",
                        r.id
                    ),
                }
            }
            assert!(
                !r.looks_at.is_empty() && !r.example_source.is_empty(),
                "{}",
                r.id
            );
        }
    }

    #[test]
    fn every_category_but_none_and_unknown_has_a_rule() {
        for c in Category::ALL {
            if matches!(c, Category::None | Category::Unknown) {
                continue;
            }
            assert!(RULES.iter().any(|r| r.category == c), "no rule for {c:?}");
        }
    }

    #[test]
    fn folding_keeps_escapes_and_group_names() {
        assert_eq!(
            folded(r"Insufficient (?P<Res>\S+)\b [A-Z]x"),
            r"insufficient (?P<Res>\S+)\b [a-z]x"
        );
        for r in RULES {
            let re = Regex::new(&folded(r.pattern)).unwrap_or_else(|e| panic!("{}: {e}", r.id));
            assert_eq!(
                re.captures_len(),
                Regex::new(r.pattern).unwrap().captures_len(),
                "{}",
                r.id
            );
        }
    }

    #[test]
    fn placeholder_scanner() {
        assert_eq!(
            placeholders("kubectl describe pod {pod} -n {namespace}"),
            vec!["pod", "namespace"]
        );
        assert_eq!(placeholders("jsonpath='{.spec}'"), Vec::<&str>::new());
    }
}
