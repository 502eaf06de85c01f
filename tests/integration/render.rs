//! The renderers: one diagnosis of each shape (blocked with a node-side command, clear, unknown) in text,
//! markdown and JSON; colour only when asked; hostile input never reaches the output as a control character.

use gpuwhy::diagnose::Diagnosis;
use gpuwhy::render::{Format, Styles, render};

use crate::common::{diagnose_file, fixture, insta_settings};

fn rendered(ds: &[Diagnosis], format: Format, styles: &Styles) -> String {
    let mut out = Vec::new();
    render(ds, format, styles, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

const CASES: &[&str] = &[
    "k8s-v1.37.2/gpu-handler.describe.txt",
    "k8s-v1.37.2/gpu-taint.describe.txt",
    "k8s-v1.37.2/gpu-ok.describe.txt",
    "k8s-v1.37.2/gpu-quota.deployment.describe.txt",
];

#[test]
fn text_markdown_and_json() {
    let _g = insta_settings("render").bind_to_scope();
    for case in CASES {
        let ds = diagnose_file(&fixture(case));
        let name = case
            .rsplit('/')
            .next()
            .unwrap()
            .replace(".describe.txt", "");
        for (format, ext) in [
            (Format::Text, "txt"),
            (Format::Markdown, "md"),
            (Format::Json, "json"),
        ] {
            let out = rendered(&ds, format, &Styles::default());
            assert!(
                !out.contains('\u{1b}'),
                "{case} {ext}: plain output has no escape"
            );
            insta::assert_snapshot!(format!("{name}.{ext}"), out);
        }
    }
}

#[test]
fn colour_only_with_the_coloured_stylesheet() {
    let _g = insta_settings("render").bind_to_scope();
    let ds = diagnose_file(&fixture("k8s-v1.37.2/gpu-taint.describe.txt"));
    let coloured = rendered(&ds, Format::Text, &Styles::colored());
    assert!(coloured.contains("\u{1b}["), "coloured text has escapes");
    insta::assert_snapshot!("gpu-taint.coloured.txt", coloured);
}

#[test]
fn json_has_the_contract_fields() {
    let ds = diagnose_file(&fixture("k8s-v1.37.2/gpu-handler.describe.txt"));
    let v: serde_json::Value =
        serde_json::from_str(&rendered(&ds, Format::Json, &Styles::default())).unwrap();
    assert_eq!(v["schema"], "gpuwhy/v1");
    assert_eq!(v["target"]["kind"], "Pod");
    assert_eq!(v["target"]["source"], "file");
    assert_eq!(v["gate"], "runtime");
    assert_eq!(v["primary"], "handler-missing");
    let c = &v["causes"][0];
    for key in [
        "category", "rule", "gate", "summary", "evidence", "details", "next",
    ] {
        assert!(c.get(key).is_some(), "cause lacks {key}");
    }
    assert_eq!(c["details"]["handler"], "nvidia");
    assert!(c["evidence"][0]["source"].is_string() && c["evidence"][0]["text"].is_string());
    assert!(
        c["next"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["where"] == "node")
    );
    assert!(v["gaps"].is_array());
    let many = diagnose_file(&fixture("formats/pods.list.json"));
    let v: serde_json::Value =
        serde_json::from_str(&rendered(&many, Format::Json, &Styles::default())).unwrap();
    assert_eq!(v["schema"], "gpuwhy/v1");
    assert!(v["items"].as_array().unwrap().len() > 3);
}

#[test]
fn hostile_text_is_neutralised_in_every_format() {
    let hostile = "Warning  FailedScheduling  1m  default-scheduler  0/1 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu\u{1b}]0;pwned\u{7}: x\u{1b}[2J}.\u{1b}[31m red \u{9b}6n \u{202e}evil\u{0}\r\n";
    let (_, evs) = gpuwhy::offline::parse(hostile, "paste").unwrap();
    let ds: Vec<Diagnosis> = evs.iter().map(gpuwhy::diagnose::diagnose).collect();
    assert_eq!(ds[0].primary.as_str(), "taint");
    for format in [Format::Text, Format::Markdown, Format::Json] {
        let out = rendered(&ds, format, &Styles::default());
        for bad in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}', '\u{0}', '\r'] {
            assert!(!out.contains(bad), "{format:?} output contains {:?}", bad);
        }
        assert!(
            !out.contains("\\u001b") && !out.contains("\\u0007"),
            "{format:?}: escaped control characters in JSON"
        );
    }
}

/// Characters that must never reach the output: controls (but the newline), bidirectional overrides and
/// isolates, and the invisible ones that hide what a text holds.
fn hidden(c: char) -> bool {
    (c != '\n' && c.is_control())
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200b}'..='\u{200f}'
            | '\u{61c}' | '\u{2060}' | '\u{feff}' | '\u{ad}' | '\u{2028}' | '\u{2029}' | '\u{e0000}'..='\u{e007f}')
}

fn first_primary(ds: &[Diagnosis]) -> String {
    ds.first()
        .map_or_else(|| "-".to_string(), |d| d.primary.as_str().to_string())
}

/// Every real paste and every input format, mangled as tickets and terminals mangle them: cut short at eight
/// places; salted with escape sequences, controls and invisible characters (also at the start of every JSON or
/// YAML value, in every object name, and behind a line that makes the paste look like JSON); with CRLF, CRCRLF or
/// CR-only line ends; with one line dropped; with its case flipped. No reader, rule or renderer panics, and nothing
/// `hidden` reaches any format. A paste salted only with what the readers remove, or re-ended, reads as before.
#[test]
fn mangled_real_pastes_never_panic_nor_leak_controls() {
    // Each of these is removed whole, so a paste salted with them is the paste itself.
    let removable = [
        "\u{1b}[2J",
        "\u{1b}]0;t\u{7}",
        "\u{0}",
        "\u{9b}1m",
        "\u{202e}",
        "\u{8}",
        "\u{200b}",
        "\u{2066}",
        "\u{61c}",
        "\u{9d}",
        "\u{feff}",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (seed >> 33) as usize % n.max(1)
    };
    let mut files: Vec<_> = [
        "real",
        "formats",
        "k8s-v1.37.2",
        "k8s-v1.34.4",
        "k8s-v1.30.14",
    ]
    .iter()
    .flat_map(|dir| std::fs::read_dir(fixture(dir)).unwrap())
    .map(|e| e.unwrap().path())
    .filter(|p| {
        p.extension()
            .is_some_and(|e| ["txt", "json", "jsonl", "yaml"].iter().any(|x| e == *x))
    })
    .collect();
    files.sort();
    assert!(files.len() > 300, "{} pastes", files.len());
    let read = |text: &str| {
        gpuwhy::offline::parse(text, "paste")
            .ok()
            .map(|(_, evs)| gpuwhy::diagnose::diagnose_all(&evs))
    };
    let (mut variants, mut parsed, mut changed) = (0, 0, Vec::new());
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let cuts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        let mut salted = text.clone();
        let mut at: Vec<usize> = removable.iter().map(|_| cuts[next(cuts.len())]).collect();
        at.sort_unstable_by(|a, b| b.cmp(a));
        for (s, &i) in removable.iter().zip(&at) {
            salted.insert_str(i, s);
        }
        // Read as the paste itself: salted with what the readers remove, re-ended with CRLF or CR alone.
        // (A JSON document with a raw escape in it is not JSON any more.)
        let json = name.ends_with(".json")
            || name.ends_with(".jsonl")
            || text.trim_start().starts_with('{');
        let same = [
            salted.clone(),
            text.replace('\n', "\r\n"),
            text.replace('\n', "\r"),
            text.replace('\n', "\r\r\n"),
        ];
        let mut mangled: Vec<String> = same.to_vec();
        for k in 1..8 {
            mangled.push(text[..cuts[cuts.len() * k / 8]].to_string());
        }
        let lines: Vec<&str> = text.lines().collect();
        let drop = next(lines.len());
        mangled.push(
            lines
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != drop)
                .map(|(_, l)| *l)
                .collect::<Vec<_>>()
                .join("\n"),
        );
        // Every JSON string value and every YAML (or describe) value opens with a bidi override and an escape;
        // every object name holds hidden characters, also behind a kernel log line that starts like JSON
        // (s65013's first line).
        mangled.push(text.replace("\": \"", "\": \"\u{202e}\\u001b[2J\\u009b1m"));
        mangled.push(text.replace(": ", ": \u{202e}\u{1b}[2J"));
        let names = text.replace("pod/", "pod/\u{202e}\u{200b}\u{7}\u{61c}");
        mangled.push(format!(
            "[  204.009631] nvidia: module verification failed: signature and/or required key missing - tainting kernel\n{names}"
        ));
        mangled.push(names);
        mangled.push(text.to_uppercase());
        mangled.push(text.to_lowercase());
        let want = read(&text).map(|ds| first_primary(&ds));
        for (n, m) in mangled.iter().enumerate() {
            variants += 1;
            let Some(ds) = read(m) else {
                continue;
            };
            parsed += 1;
            if n < same.len() && !json && want.as_deref() != Some(first_primary(&ds).as_str()) {
                changed.push(format!(
                    "{name} (variant {n}): {want:?} became {}",
                    first_primary(&ds)
                ));
            }
            for format in [Format::Text, Format::Markdown, Format::Json] {
                let out = rendered(&ds, format, &Styles::default());
                if let Some(c) = out.chars().find(|&c| hidden(c)) {
                    panic!("{name}: {format:?} output holds {c:?}");
                }
                if format == Format::Json {
                    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
                    assert!(
                        !has_control(&v),
                        "{name}: JSON holds an escaped control character"
                    );
                }
            }
        }
    }
    assert!(
        parsed * 10 > variants * 9,
        "{parsed} of {variants} variants read"
    );
    assert!(
        changed.is_empty(),
        "{} pastes read differently:\n{}",
        changed.len(),
        changed.join("\n")
    );
}

fn has_control(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::String(s) => s.chars().any(hidden),
        serde_json::Value::Array(items) => items.iter().any(has_control),
        serde_json::Value::Object(map) => map
            .iter()
            .any(|(k, v)| has_control(&k.as_str().into()) || has_control(v)),
        _ => false,
    }
}
