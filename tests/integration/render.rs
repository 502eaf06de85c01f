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

/// Every real paste and every input format, cut short at eight places, salted with escape sequences and control characters (also at the
/// start of every JSON or YAML value), with CRLF line ends, with one line dropped and with its case flipped: no reader, rule or renderer panics, and no
/// control character but the newline reaches any format.
#[test]
fn mangled_real_pastes_never_panic_nor_leak_controls() {
    let salt = [
        "\u{1b}[2J",
        "\u{1b}]0;t\u{7}",
        "\u{0}",
        "\r",
        "\u{9b}1m",
        "\u{202e}",
        "\u{8}",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (seed >> 33) as usize % n.max(1)
    };
    let mut files: Vec<_> = ["real", "formats", "k8s-v1.37.2"]
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
    let (mut variants, mut read) = (0, 0);
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let cuts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        let mut mangled = Vec::new();
        for k in 1..8 {
            mangled.push(text[..cuts[cuts.len() * k / 8]].to_string());
        }
        let mut at: Vec<usize> = salt.iter().map(|_| cuts[next(cuts.len())]).collect();
        at.sort_unstable_by(|a, b| b.cmp(a));
        let mut salted = text.clone();
        for (s, &i) in salt.iter().zip(&at) {
            salted.insert_str(i, s);
        }
        mangled.push(salted);
        mangled.push(text.replace('\n', "\r\n"));
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
        // Every JSON string value and every YAML (or describe) value opens with a bidi override and an escape.
        mangled.push(text.replace("\": \"", "\": \"\u{202e}\\u001b[2J\\u009b1m"));
        mangled.push(text.replace(": ", ": \u{202e}\u{1b}[2J"));
        mangled.push(text.to_uppercase());
        mangled.push(text.to_lowercase());
        for m in &mangled {
            variants += 1;
            let Ok((_, evs)) = gpuwhy::offline::parse(m, "paste") else {
                continue;
            };
            read += 1;
            let ds = gpuwhy::diagnose::diagnose_all(&evs);
            for format in [Format::Text, Format::Markdown, Format::Json] {
                let out = rendered(&ds, format, &Styles::default());
                if let Some(c) = out.chars().find(|&c| {
                    c != '\n' && (c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c))
                }) {
                    panic!("{}: {format:?} output holds {c:?}", path.display());
                }
                if format == Format::Json {
                    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
                    assert!(
                        !has_control(&v),
                        "{}: JSON holds an escaped control character",
                        path.display()
                    );
                }
            }
        }
    }
    assert!(
        read * 10 > variants * 9,
        "{read} of {variants} variants read"
    );
}

fn has_control(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::String(s) => s.chars().any(|c| c != '\n' && c.is_control()),
        serde_json::Value::Array(items) => items.iter().any(has_control),
        serde_json::Value::Object(map) => map
            .iter()
            .any(|(k, v)| has_control(&k.as_str().into()) || has_control(v)),
        _ => false,
    }
}
