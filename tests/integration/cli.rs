//! The binary itself: help, version, exit codes, stdin, NO_COLOR and pipes, bad input, `rules`/`explain`,
//! and the README's rule catalogue kept in step with the table.

use crate::common::{fixture, insta_settings, run, stderr, stdout};

fn code(o: &std::process::Output) -> i32 {
    o.status.code().expect("exited")
}

#[test]
fn help_and_version() {
    let o = run(&["--help"], None);
    assert_eq!(code(&o), 0);
    assert!(
        stdout(&o).contains("Usage: kubectl gpuwhy"),
        "{}",
        stdout(&o)
    );
    assert!(stdout(&o).contains("--from-file"));
    let o = run(&["--version"], None);
    assert_eq!(code(&o), 0);
    let v = stdout(&o);
    assert!(
        v.starts_with(&format!(
            "kubectl-gpuwhy {} (commit ",
            env!("CARGO_PKG_VERSION")
        )),
        "{v}"
    );
}

#[test]
fn exit_codes_follow_the_contract() {
    let f = |p: &str| fixture(p).to_string_lossy().into_owned();
    assert_eq!(
        code(&run(
            &["--from-file", &f("k8s-v1.37.2/gpu-ok.describe.txt")],
            None
        )),
        0
    );
    assert_eq!(
        code(&run(
            &["--from-file", &f("k8s-v1.37.2/gpu-taint.describe.txt")],
            None
        )),
        1
    );
    assert_eq!(
        code(&run(
            &[
                "--from-file",
                &f("real/028-kai-no-nodes-enough-gpus-bold.txt")
            ],
            None
        )),
        1
    );
    // unknown still blocks
    let o = run(&["--from-file", "-"], Some(b"Warning  FailedScheduling  1m  default-scheduler  0/2 nodes are available: 2 node(s) had a reason nobody has seen."));
    assert_eq!(code(&o), 1);
    assert!(stdout(&o).contains("unknown"));
    // an empty EventList (or one whose items are null) is an answer (nothing happened yet), not the wrong
    // input, and so is a NodeList whose items, as the API prints them, name no kind
    for empty in [
        &br#"{"apiVersion":"v1","kind":"EventList","items":[],"metadata":{}}"#[..],
        br#"{"apiVersion":"v1","kind":"EventList","items":null}"#,
        br#"{"kind":"NodeList","items":[{"metadata":{"name":"n1"},"status":{"allocatable":{"nvidia.com/gpu":"1"}}}]}"#,
    ] {
        let o = run(&["--from-file", "-"], Some(empty));
        assert_eq!(code(&o), 1, "{}", stderr(&o));
        assert!(stdout(&o).contains("unknown"));
    }
    // a plain List says nothing of its items: kindless items with messages are read as text
    let o = run(
        &["--from-file", "-"],
        Some(br#"{"kind":"List","items":[{"message":"0/1 nodes are available: 1 Insufficient nvidia.com/gpu.","reason":"FailedScheduling"}]}"#),
    );
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(
        stdout(&o).contains("insufficient-resource"),
        "{}",
        stdout(&o)
    );
    // usage and input errors
    assert_eq!(code(&run(&[], None)), 2);
    assert_eq!(code(&run(&["--bogus"], None)), 2);
    assert_eq!(code(&run(&["explain", "GW999"], None)), 2);
}

/// Arguments, standard input and the text the error must contain.
type Case = (Vec<String>, Option<Vec<u8>>, &'static str);

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = std::env::temp_dir().join(format!("gpuwhy-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("big.txt");
    {
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(gpuwhy::offline::MAX_INPUT_BYTES + 10).unwrap();
    }
    let cases: Vec<Case> = vec![
        (vec!["-f".into(), "-".into()], Some(vec![]), "is empty"),
        (
            vec!["-f".into(), "-".into()],
            Some(b"\x7fELF\x02\x01\x01\x00\x00\x00".to_vec()),
            "is not text",
        ),
        (
            vec!["-f".into(), "-".into()],
            Some(vec![b'a', 0xff, 0xfe, b'\n']),
            "invalid UTF-8",
        ),
        (
            vec!["-f".into(), "-".into()],
            Some(br#"{"kind":"ConfigMap","apiVersion":"v1"}"#.to_vec()),
            "ConfigMap",
        ),
        (
            vec!["-f".into(), "-".into()],
            Some(
                br#"{"kind":"List","items":[{"kind":"Service","metadata":{"name":"s"}}]}"#.to_vec(),
            ),
            "kind Service",
        ),
        (
            vec!["-f".into(), "-".into()],
            Some(br#"{"items":[{"kind":"Service","metadata":{"name":"s"}}]}"#.to_vec()),
            "kind Service",
        ),
        (
            vec!["-f".into(), "-".into()],
            Some(br#"{"kind":"ServiceList","items":[{"metadata":{"name":"s"}}]}"#.to_vec()),
            "kind Service",
        ),
        (
            vec!["-f".into(), "-".into()],
            Some(br#"{"kind": "Pod", "#.to_vec()),
            "invalid JSON",
        ),
        (
            vec![
                "-f".into(),
                dir.join("missing.txt").to_string_lossy().into_owned(),
            ],
            None,
            "cannot read",
        ),
        (
            vec!["-f".into(), dir.to_string_lossy().into_owned()],
            None,
            "directory",
        ),
        (
            vec!["-f".into(), big.to_string_lossy().into_owned()],
            None,
            "MiB limit",
        ),
    ];
    for (args, input, want) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run(&args, input.as_deref());
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        assert!(err.starts_with("kubectl-gpuwhy: error: "), "{err}");
        assert!(stdout(&o).is_empty());
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn stdin_json_and_pipes_are_plain() {
    let input = std::fs::read(fixture("k8s-v1.37.2/gpu-busy.events.json")).unwrap();
    let o = run(&["--from-file", "-", "-o", "json"], Some(&input));
    assert_eq!(code(&o), 1);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("one JSON object");
    assert_eq!(v["primary"], "insufficient-resource");
    // Piped text is plain even when NO_COLOR is unset; --color always forces it.
    let path = fixture("k8s-v1.37.2/gpu-taint.describe.txt")
        .to_string_lossy()
        .into_owned();
    let plain = run(&["-f", &path], None);
    assert!(!stdout(&plain).contains('\u{1b}'));
    let forced = run(&["-f", &path, "--color", "always"], None);
    assert!(stdout(&forced).contains("\u{1b}["));
    let json = run(&["-f", &path, "--color", "always", "-o", "json"], None);
    assert!(
        !stdout(&json).contains('\u{1b}'),
        "JSON never carries colour"
    );
}

#[test]
fn no_color_env_wins_over_auto() {
    let path = fixture("k8s-v1.37.2/gpu-taint.describe.txt");
    let o = crate::common::gpuwhy()
        .arg("-f")
        .arg(&path)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&o.stdout).contains('\u{1b}'));
}

#[test]
fn rules_and_explain() {
    let _g = insta_settings("cli").bind_to_scope();
    let o = run(&["rules"], None);
    assert_eq!(code(&o), 0);
    insta::assert_snapshot!("rules.txt", stdout(&o));
    let o = run(&["explain", "GW401"], None);
    assert_eq!(code(&o), 0);
    insta::assert_snapshot!("explain-GW401.txt", stdout(&o));
    let by_name = run(&["explain", "untolerated-taint"], None);
    assert!(stdout(&by_name).starts_with("# GW103 untolerated-taint"));
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&run(&["rules", "-o", "json"], None))).unwrap();
    assert_eq!(json.as_array().unwrap().len(), gpuwhy::rules::RULES.len());
}

#[test]
fn readme_catalogue_matches_the_table() {
    let readme = std::fs::read_to_string(crate::common::root().join("README.md")).unwrap();
    let table = stdout(&run(&["rules", "-o", "markdown"], None));
    let start = readme
        .find("<!-- rules:start -->")
        .expect("README has the rules:start marker");
    let end = readme
        .find("<!-- rules:end -->")
        .expect("README has the rules:end marker");
    let in_readme = readme[start + "<!-- rules:start -->".len()..end].trim();
    assert_eq!(
        in_readme,
        table.trim(),
        "README catalogue is stale: paste `kubectl-gpuwhy rules -o markdown` between the markers"
    );
}

#[test]
fn completion_scripts() {
    for shell in ["bash", "zsh", "fish"] {
        let o = run(&["completion", shell], None);
        assert_eq!(code(&o), 0, "{shell}");
        assert!(stdout(&o).contains("kubectl-gpuwhy"), "{shell}");
    }
}
