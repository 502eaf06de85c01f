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
