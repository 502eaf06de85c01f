//! Distribution: `plugin.yaml` checked against every rule of krew's manifest validator (and the krew-index review
//! rules in research/anchors.md §(b)), rendered the way krew-release-bot renders it, and installed the way
//! `kubectl krew install --manifest --archive` installs it: the real release archive from `scripts/package`, the real
//! sha256, unpacked into a krew-like store with the `kubectl-gpuwhy` symlink, and run through the real kubectl
//! v1.37.2. The `kubectl_complete-gpuwhy` helper is then installed as the caveats say and asked through the real
//! `kubectl __complete` against the control plane. Also: the workflow files parse and agree with the manifest.
//! Nothing here skips: a missing tool or cluster is a failure.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

use crate::cluster::{LAB_NAMESPACE, cluster};

const PLUGIN: &str = "gpuwhy";
const BIN: &str = "kubectl-gpuwhy";
const REPO_URL: &str = "https://github.com/gpuwhy/kubectl-gpuwhy";

/// The 11 os/arch pairs krew supports (validate-krew-manifest's allPlatforms).
const KREW_PLATFORMS: [(&str, &str); 11] = [
    ("windows", "386"),
    ("windows", "amd64"),
    ("windows", "arm64"),
    ("linux", "386"),
    ("linux", "amd64"),
    ("linux", "arm"),
    ("linux", "arm64"),
    ("linux", "ppc64le"),
    ("darwin", "386"),
    ("darwin", "amd64"),
    ("darwin", "arm64"),
];

/// The platforms gpuwhy ships, each exactly once.
const SHIPPED: [(&str, &str); 6] = [
    ("linux", "amd64"),
    ("linux", "arm64"),
    ("darwin", "amd64"),
    ("darwin", "arm64"),
    ("windows", "amd64"),
    ("windows", "arm64"),
];

/// License file names krew accepts at the top of the install directory (case-insensitive).
const LICENSE_NAMES: [&str; 8] = [
    "license",
    "license.txt",
    "license.md",
    "licenses",
    "licenses.txt",
    "licenses.md",
    "copying",
    "copying.txt",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn template() -> String {
    let p = root().join("plugin.yaml");
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The release tag of this build: `v` + the crate version.
fn tag() -> String {
    format!("v{}", env!("CARGO_PKG_VERSION"))
}

// ------------------------------------------------------------------------------------------------ sha256

/// SHA-256 (FIPS 180-4), lowercase hex. Written out here so the emulated krew checks the archive with code of its
/// own, not with the `sha256sum` that scripts/package used to write checksums.txt.
fn sha256_hex(data: &[u8]) -> String {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let mut msg = data.to_vec();
    let bits = (data.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bits.to_be_bytes());
    for block in msg.chunks_exact(64) {
        let mut w = [0u32; 64];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            hh = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *x = x.wrapping_add(y);
        }
    }
    h.iter().map(|x| format!("{x:08x}")).collect()
}

#[test]
fn sha256_matches_the_standard_vectors() {
    assert_eq!(
        sha256_hex(b""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(
        sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(
        sha256_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    );
}

// ------------------------------------------------------------------------------------------------ rendering

/// Renders the template as krew-release-bot does (pkg/source/template.go): `{{ .TagName }}` becomes the tag, and
/// `{{addURIAndSha "URL" .TagName }}` becomes `uri: URL` (its own `{{ .TagName }}` rendered) plus, on the next line
/// at four spaces, `sha256: <sha of the asset>`. Any other action is an error: the bot would need it explained.
fn render(template: &str, tag: &str, sha_of: &dyn Fn(&str) -> String) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        // The action ends at the first `}}` outside a quoted string.
        let mut in_quote = false;
        let mut end = None;
        let bytes = after.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'"' => in_quote = !in_quote,
                b'\\' if in_quote => i += 1,
                b'}' if !in_quote && bytes.get(i + 1) == Some(&b'}') => {
                    end = Some(i);
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        let end = end.ok_or_else(|| format!("unterminated action at {:?}", &rest[start..]))?;
        let action = after[..end].trim();
        if action == ".TagName" {
            out.push_str(tag);
        } else if let Some(args) = action.strip_prefix("addURIAndSha ") {
            let args = args.trim();
            let url_tpl = args
                .strip_prefix('"')
                .and_then(|a| a.strip_suffix("\" .TagName"))
                .ok_or_else(|| format!("addURIAndSha wants \"URL\" .TagName, got {action:?}"))?;
            let url = render(url_tpl, tag, &|_| {
                unreachable!("no addURIAndSha inside a URL")
            })?;
            out.push_str(&format!("uri: {url}\n    sha256: {}", sha_of(&url)));
        } else {
            return Err(format!(
                "template action {action:?} is neither .TagName nor addURIAndSha"
            ));
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

fn parse_yaml(text: &str, what: &str) -> Value {
    serde_norway::from_str(text).unwrap_or_else(|e| panic!("{what} is not YAML: {e}\n{text}"))
}

/// A stand-in sha256 for archives this test does not build (other platforms): lowercase, 64 hex digits.
fn stand_in_sha(uri: &str) -> String {
    sha256_hex(uri.as_bytes())
}

fn rendered_with_stand_ins() -> Value {
    let text =
        render(&template(), &tag(), &stand_in_sha).unwrap_or_else(|e| panic!("plugin.yaml: {e}"));
    parse_yaml(&text, "the rendered plugin.yaml")
}

// ------------------------------------------------------------------------------------------------ the validator

fn s<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut cur = v;
    for k in path {
        cur = cur.get(k)?;
    }
    cur.as_str()
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

/// krew's semver (internal/installation/semver): a `v` prefix, then MAJOR.MINOR.PATCH with optional pre-release
/// and build parts, no leading zeros.
fn is_krew_semver(v: &str) -> bool {
    let Some(rest) = v.strip_prefix('v') else {
        return false;
    };
    let (core, _build) = rest.split_once('+').unwrap_or((rest, ""));
    let (core, pre) = match core.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (core, None),
    };
    let nums: Vec<&str> = core.split('.').collect();
    let num_ok = |n: &&str| {
        !n.is_empty()
            && n.bytes().all(|b| b.is_ascii_digit())
            && (n.len() == 1 || !n.starts_with('0'))
    };
    nums.len() == 3
        && nums.iter().all(num_ok)
        && pre.is_none_or(|p| {
            !p.is_empty()
                && p.split('.').all(|x| {
                    !x.is_empty() && x.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                })
        })
}

fn is_safe_plugin_name(name: &str) -> bool {
    const WINDOWS_FORBIDDEN: [&str; 22] = [
        "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8",
        "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
    ];
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
        && !WINDOWS_FORBIDDEN
            .iter()
            .any(|f| f.eq_ignore_ascii_case(name))
}

/// Whether a label selector (matchLabels + matchExpressions) selects `os`/`arch`, as metav1.LabelSelectorAsSelector
/// does. `Err` for a selector krew could not convert.
fn selects(sel: &Value, os: &str, arch: &str) -> Result<bool, String> {
    let labels = BTreeMap::from([("os", os), ("arch", arch)]);
    if let Some(ml) = sel.get("matchLabels") {
        for (k, v) in ml.as_object().ok_or("matchLabels is not a map")? {
            let v = v
                .as_str()
                .ok_or_else(|| format!("matchLabels.{k} is not a string"))?;
            if labels.get(k.as_str()) != Some(&v) {
                return Ok(false);
            }
        }
    }
    if let Some(me) = sel.get("matchExpressions") {
        for e in me.as_array().ok_or("matchExpressions is not a list")? {
            let key = s(e, &["key"]).ok_or("matchExpression without key")?;
            let values: Vec<&str> = e
                .get("values")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let have = labels.get(key).copied();
            let ok = match s(e, &["operator"]).ok_or("matchExpression without operator")? {
                "In" => have.is_some_and(|h| values.contains(&h)),
                "NotIn" => have.is_none_or(|h| !values.contains(&h)),
                "Exists" => have.is_some(),
                "DoesNotExist" => have.is_none(),
                op => return Err(format!("operator {op} is not a label selector operator")),
            };
            if !ok {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// The Rust target `scripts/package` and the release workflow use for a krew os/arch.
fn rust_target(os: &str, arch: &str) -> Option<&'static str> {
    Some(match (os, arch) {
        ("linux", "amd64") => "x86_64-unknown-linux-musl",
        ("linux", "arm64") => "aarch64-unknown-linux-musl",
        ("darwin", "amd64") => "x86_64-apple-darwin",
        ("darwin", "arm64") => "aarch64-apple-darwin",
        ("windows", "amd64") => "x86_64-pc-windows-msvc",
        ("windows", "arm64") => "aarch64-pc-windows-msvc",
        _ => return None,
    })
}

fn archive_name(tag: &str, os: &str, arch: &str) -> String {
    let ext = if os == "windows" { "zip" } else { "tar.gz" };
    format!(
        "{BIN}-{tag}-{}.{ext}",
        rust_target(os, arch).unwrap_or("unknown")
    )
}

/// Every rule of krew's validator (validation.ValidatePlugin + validate-krew-manifest) and of the krew-index review,
/// applied to a rendered manifest that would be saved as `<file_stem>.yaml`. Returns every violation.
fn violations(m: &Value, file_stem: &str, tag: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let mut err = |e: String| errs.push(e);

    // Strict decoding: krew's DecodePluginFile rejects unknown fields.
    for k in keys(m) {
        if !["apiVersion", "kind", "metadata", "spec"].contains(&k) {
            err(format!("unknown top-level field {k}"));
        }
    }
    if s(m, &["apiVersion"]) != Some("krew.googlecontainertools.github.com/v1alpha2") {
        err(format!("apiVersion is {:?}", s(m, &["apiVersion"])));
    }
    if s(m, &["kind"]) != Some("Plugin") {
        err(format!("kind is {:?}", s(m, &["kind"])));
    }
    if !is_safe_plugin_name(file_stem) {
        err(format!("the plugin name {file_stem:?} is not allowed"));
    }
    if s(m, &["metadata", "name"]) != Some(file_stem) {
        err(format!(
            "metadata.name {:?} is not the file name {file_stem:?}",
            s(m, &["metadata", "name"])
        ));
    }
    let spec = m.get("spec").cloned().unwrap_or(Value::Null);
    for k in keys(&spec) {
        if ![
            "version",
            "homepage",
            "shortDescription",
            "description",
            "caveats",
            "platforms",
        ]
        .contains(&k)
        {
            err(format!("unknown field spec.{k}"));
        }
    }

    // version
    match s(&spec, &["version"]) {
        None | Some("") => err("spec.version is not set".into()),
        Some(v) if !is_krew_semver(v) => {
            err(format!("spec.version {v:?} is not a v-prefixed semver"))
        }
        Some(v) if v != tag => err(format!("spec.version {v:?} is not the release tag {tag:?}")),
        Some(_) => {}
    }

    // shortDescription
    match s(&spec, &["shortDescription"]) {
        None | Some("") => err("spec.shortDescription is not set".into()),
        Some(sd) => {
            if sd.contains(['\r', '\n']) {
                err("spec.shortDescription has a line break".into());
            }
            if sd.chars().count() > 50 {
                err(format!(
                    "spec.shortDescription is {} characters (max 50)",
                    sd.chars().count()
                ));
            }
            if sd.to_lowercase().contains("kubectl") || sd.to_lowercase().contains("plugin") {
                err("spec.shortDescription has redundant words (kubectl, plugin)".into());
            }
        }
    }

    // description: wrapped at 80 columns, what it does, no usage examples or flag lists.
    match s(&spec, &["description"]) {
        None | Some("") => err("spec.description is not set".into()),
        Some(d) => {
            for line in d.lines() {
                if line.chars().count() > 80 {
                    err(format!("spec.description line over 80 columns: {line:?}"));
                }
                let t = line.trim_start();
                if t.starts_with('$') || t.starts_with("kubectl ") || t.starts_with("```") {
                    err(format!("spec.description has a usage example: {line:?}"));
                }
                if t.split_whitespace()
                    .any(|w| w.starts_with('-') && w.len() > 1)
                {
                    err(format!("spec.description lists flags: {line:?}"));
                }
                let lower = t.to_lowercase();
                if lower.starts_with("usage") || lower.starts_with("example") {
                    err(format!("spec.description has a usage section: {line:?}"));
                }
            }
            if d.lines().filter(|l| !l.trim().is_empty()).count() < 2 {
                err("spec.description should explain what the plugin does, in a few lines".into());
            }
        }
    }

    // caveats: line length as validate-krew-manifest warns, and the two things gpuwhy's users must do.
    match s(&spec, &["caveats"]) {
        None => err("spec.caveats is missing (RBAC and completion)".into()),
        Some(c) => {
            for line in c.lines() {
                if line.chars().count() > 80 && line.trim().contains(' ') {
                    err(format!("spec.caveats line over 80 columns: {line:?}"));
                }
            }
            let flat = c.split_whitespace().collect::<Vec<_>>().join(" ");
            for need in [
                "get pods",
                "list events",
                "nodes",
                "runtimeclasses",
                "clusterpolicies.nvidia.com",
                "kubectl_complete-gpuwhy",
                "kubectl gpuwhy completion kubectl >",
                "chmod +x",
            ] {
                if !flat.contains(need) {
                    err(format!("spec.caveats does not mention {need:?}"));
                }
            }
        }
    }

    // homepage: the repo, which krew-release-bot also checks for ownership (https://github.com/<owner>/…).
    match s(&spec, &["homepage"]) {
        Some(h) if h == REPO_URL => {}
        other => err(format!("spec.homepage is {other:?}, not {REPO_URL}")),
    }

    // platforms
    let platforms = spec
        .get("platforms")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if platforms.is_empty() {
        err("spec.platforms is empty".into());
    }
    for (i, p) in platforms.iter().enumerate() {
        for k in keys(p) {
            if !["selector", "uri", "sha256", "bin", "files"].contains(&k) {
                err(format!("platforms[{i}]: unknown field {k}"));
            }
        }
        let uri = s(p, &["uri"]).unwrap_or("");
        if uri.is_empty() {
            err(format!("platforms[{i}]: uri is not set"));
        } else if !(uri.ends_with(".tar.gz") || uri.ends_with(".zip")) {
            err(format!(
                "platforms[{i}]: uri {uri} is neither .tar.gz nor .zip (krew unpacks only those)"
            ));
        }
        match s(p, &["sha256"]) {
            None | Some("") => err(format!("platforms[{i}]: sha256 is not set")),
            Some(h)
                if !(h.len() == 64
                    && h.bytes()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))) =>
            {
                err(format!(
                    "platforms[{i}]: sha256 {h:?} does not match ^[a-f0-9]{{64}}$"
                ))
            }
            Some(_) => {}
        }
        let bin = s(p, &["bin"]).unwrap_or("");
        if bin.is_empty() {
            err(format!("platforms[{i}]: bin is not set"));
        }
        if let Some(files) = p.get("files") {
            match files.as_array() {
                Some(f) if !f.is_empty() => {
                    for op in f {
                        if s(op, &["from"]).unwrap_or("").is_empty()
                            || s(op, &["to"]).unwrap_or("").is_empty()
                        {
                            err(format!("platforms[{i}]: a files entry lacks from or to"));
                        }
                    }
                }
                _ => err(format!(
                    "platforms[{i}]: files has to be unspecified or non-empty"
                )),
            }
        }
        let Some(sel) = p.get("selector").filter(|v| !v.is_null()) else {
            err(format!("platforms[{i}]: nil selector"));
            continue;
        };
        let ml = sel.get("matchLabels");
        let me = sel.get("matchExpressions");
        if ml.is_none() && me.and_then(Value::as_array).is_none_or(|a| a.is_empty()) {
            err(format!("platforms[{i}]: empty selector"));
        }
        for k in keys(sel) {
            if !["matchLabels", "matchExpressions"].contains(&k) {
                err(format!(
                    "platforms[{i}]: selector field {k} is not a label selector field"
                ));
            }
        }
        let mut label_keys: Vec<String> = ml
            .map(|v| keys(v).into_iter().map(String::from).collect())
            .unwrap_or_default();
        if let Some(exprs) = me.and_then(Value::as_array) {
            label_keys.extend(
                exprs
                    .iter()
                    .filter_map(|e| s(e, &["key"]).map(String::from)),
            );
        }
        for k in &label_keys {
            if k != "os" && k != "arch" {
                err(format!(
                    "platforms[{i}]: selector key {k:?} not supported (only os and arch)"
                ));
            }
        }
        if ml.is_some_and(|v| keys(v).is_empty()) {
            err(format!("platforms[{i}]: matchLabels specified but empty"));
        }
        if me.is_some_and(|v| v.as_array().is_none_or(|a| a.is_empty())) {
            err(format!(
                "platforms[{i}]: matchExpressions specified but empty"
            ));
        }
        let matched: Vec<(&str, &str)> = KREW_PLATFORMS
            .iter()
            .copied()
            .filter(|(os, arch)| {
                selects(sel, os, arch).unwrap_or_else(|e| {
                    err(format!("platforms[{i}]: {e}"));
                    false
                })
            })
            .collect();
        if matched.is_empty() {
            err(format!(
                "platforms[{i}]: selector matches no supported platform"
            ));
        }
        // gpuwhy's own rules: one os/arch per platform, the archive scripts/package makes, the right bin.
        if let [(os, arch)] = matched[..] {
            let want = format!(
                "{REPO_URL}/releases/download/{tag}/{}",
                archive_name(tag, os, arch)
            );
            if rust_target(os, arch).is_none() {
                err(format!(
                    "platforms[{i}]: {os}/{arch} is not a platform gpuwhy builds"
                ));
            } else if uri != want {
                err(format!(
                    "platforms[{i}]: uri {uri} is not the release asset {want}"
                ));
            }
            let want_bin = if os == "windows" {
                format!("{BIN}.exe")
            } else {
                BIN.to_string()
            };
            if bin != want_bin {
                err(format!(
                    "platforms[{i}]: bin {bin:?} should be {want_bin:?} on {os}"
                ));
            }
        } else if !matched.is_empty() {
            err(format!(
                "platforms[{i}]: selector matches several platforms {matched:?}; use one os and one arch"
            ));
        }
    }
    // No supported os/arch may be selected twice, and every shipped one exactly once.
    for (os, arch) in KREW_PLATFORMS {
        let hits: Vec<usize> = platforms
            .iter()
            .enumerate()
            .filter(|(_, p)| {
                p.get("selector")
                    .is_some_and(|sel| selects(sel, os, arch).unwrap_or(false))
            })
            .map(|(i, _)| i)
            .collect();
        if hits.len() > 1 {
            err(format!("platforms {hits:?} overlap on {os}/{arch}"));
        }
        if hits.is_empty() && SHIPPED.contains(&(os, arch)) {
            err(format!("no platform for {os}/{arch}"));
        }
    }
    errs
}

#[test]
fn plugin_yaml_is_a_krew_release_bot_template_with_two_kinds_of_action() {
    let t = template();
    assert!(
        t.lines().any(|l| l == "  version: {{ .TagName }}"),
        "spec.version must be the tag"
    );
    let uris = t.matches("{{addURIAndSha \"").count();
    assert_eq!(uris, SHIPPED.len(), "one addURIAndSha per shipped platform");
    for line in t.lines().filter(|l| l.contains("{{addURIAndSha")) {
        assert!(
            line.starts_with("    {{addURIAndSha \""),
            "addURIAndSha sits at 4 spaces (the bot indents sha256 so): {line:?}"
        );
        assert!(
            line.contains("/releases/download/{{ .TagName }}/kubectl-gpuwhy-{{ .TagName }}-"),
            "{line}"
        );
        assert!(line.ends_with("\" .TagName }}"), "{line}");
    }
    // Every action is one the bot knows, and renders.
    render(&t, "v9.9.9", &stand_in_sha).expect("renders");
    assert!(
        render("a {{ .Version }}", "v1.0.0", &stand_in_sha).is_err(),
        "the renderer refuses unknown actions"
    );
}

#[test]
fn rendered_plugin_yaml_passes_every_krew_rule() {
    let m = rendered_with_stand_ins();
    let errs = violations(&m, PLUGIN, &tag());
    assert!(
        errs.is_empty(),
        "plugin.yaml breaks krew rules:\n  {}",
        errs.join("\n  ")
    );
    // And the rendered text is what the bot would produce: uri, then sha256 on the next line at the same indent.
    let text = render(&template(), &tag(), &stand_in_sha).expect("renders");
    for (a, b) in text
        .lines()
        .zip(text.lines().skip(1))
        .filter(|(a, _)| a.trim_start().starts_with("uri: "))
    {
        assert_eq!(
            a.find("uri"),
            b.find("sha256"),
            "uri and sha256 at one indent:\n{a}\n{b}"
        );
    }
}

#[test]
fn the_krew_rules_catch_broken_manifests() {
    let good = rendered_with_stand_ins();
    let t = tag();
    assert!(violations(&good, PLUGIN, &t).is_empty());
    type Breaker = fn(&mut Value);
    let cases: [(&str, Breaker, &str); 16] = [
        (
            "wrong apiVersion",
            |m| m["apiVersion"] = "krew.googlecontainertools.github.com/v1alpha1".into(),
            "apiVersion",
        ),
        ("wrong kind", |m| m["kind"] = "Plugins".into(), "kind"),
        (
            "name is not the file",
            |m| m["metadata"]["name"] = "gpu-why".into(),
            "file name",
        ),
        (
            "no v prefix",
            |m| m["spec"]["version"] = "0.1.0".into(),
            "semver",
        ),
        (
            "short description too long",
            |m| m["spec"]["shortDescription"] = "x".repeat(51).into(),
            "max 50",
        ),
        (
            "short description line break",
            |m| m["spec"]["shortDescription"] = "a\nb".into(),
            "line break",
        ),
        (
            "description too wide",
            |m| m["spec"]["description"] = format!("{}\nsecond line", "word ".repeat(17)).into(),
            "80 columns",
        ),
        (
            "usage example",
            |m| m["spec"]["description"] = "Explains things.\n  $ kubectl gpuwhy my-pod\n".into(),
            "usage example",
        ),
        (
            "uppercase sha",
            |m| m["spec"]["platforms"][0]["sha256"] = "A".repeat(64).into(),
            "sha256",
        ),
        (
            "tar.xz",
            |m| m["spec"]["platforms"][0]["uri"] = "https://example.com/x.tar.xz".into(),
            ".tar.gz nor .zip",
        ),
        (
            "no bin",
            |m| m["spec"]["platforms"][0]["bin"] = "".into(),
            "bin is not set",
        ),
        (
            "windows bin without .exe",
            |m| m["spec"]["platforms"][4]["bin"] = BIN.into(),
            ".exe",
        ),
        (
            "extra selector key",
            |m| m["spec"]["platforms"][0]["selector"]["matchLabels"]["libc"] = "musl".into(),
            "not supported",
        ),
        (
            "overlap",
            |m| m["spec"]["platforms"][1]["selector"]["matchLabels"]["arch"] = "amd64".into(),
            "overlap",
        ),
        (
            "os-only selector",
            |m| {
                m["spec"]["platforms"][0]["selector"] =
                    serde_json::json!({"matchLabels": {"os": "linux"}});
            },
            "several platforms",
        ),
        (
            "empty files",
            |m| m["spec"]["platforms"][0]["files"] = serde_json::json!([]),
            "non-empty",
        ),
    ];
    for (what, breaker, expect) in cases {
        let mut m = good.clone();
        breaker(&mut m);
        let errs = violations(&m, PLUGIN, &t);
        assert!(
            errs.iter().any(|e| e.contains(expect)),
            "{what}: expected an error containing {expect:?}, got {errs:?}"
        );
    }
    // matchExpressions are understood too.
    let mut m = good.clone();
    m["spec"]["platforms"][0]["selector"] = serde_json::json!({"matchExpressions": [
        {"key": "os", "operator": "In", "values": ["linux"]}, {"key": "arch", "operator": "In", "values": ["amd64"]}]});
    assert!(
        violations(&m, PLUGIN, &t).is_empty(),
        "{:?}",
        violations(&m, PLUGIN, &t)
    );
    assert!(
        !violations(&good, "CON", &t).is_empty(),
        "windows reserved names"
    );
}

// ------------------------------------------------------------------------------------------------ packaging + install

/// krew's os/arch for this machine (Go's GOOS/GOARCH names).
fn host_platform() -> (&'static str, &'static str) {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    (os, arch)
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n--- stderr ---\n{}\n--- stdout ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    out
}

fn last_line(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string()
}

/// The real kubectl of the newest version from tests/cluster/build (cached; warm = instant). Not /usr/bin/kubectl.
fn kubectl() -> &'static Path {
    static KUBECTL: OnceLock<PathBuf> = OnceLock::new();
    KUBECTL.get_or_init(|| {
        let out = run(Command::new(root().join("tests/cluster/build"))
            .env("GPUWHY_K8S_VERSION", crate::cluster::NEWEST));
        let k = PathBuf::from(last_line(&out)).join("kubectl");
        assert!(
            k.is_file(),
            "tests/cluster/build gave no kubectl at {}",
            k.display()
        );
        k
    })
}

/// This test process's scratch directory under target/tmp (made once); ones older than an hour are removed.
fn scratch() -> &'static Path {
    static SCRATCH: OnceLock<PathBuf> = OnceLock::new();
    SCRATCH.get_or_init(|| {
        let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        if let Ok(entries) = std::fs::read_dir(&base) {
            for e in entries.flatten() {
                let stale = e.file_name().to_string_lossy().starts_with("krew-")
                    && e.metadata()
                        .and_then(|m| m.modified())
                        .is_ok_and(|t| t.elapsed().is_ok_and(|d| d.as_secs() > 3600));
                if stale {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let mine = base.join(format!("krew-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&mine);
        std::fs::create_dir_all(&mine).expect("create scratch dir");
        mine
    })
}

/// An emulated `kubectl krew install --manifest=<rendered> --archive=<archive>` for this machine.
#[derive(Debug)]
struct Installed {
    /// KREW_ROOT: `store/gpuwhy/<version>/…`, `bin/kubectl-gpuwhy` → the store, `receipts/`.
    krew_root: PathBuf,
    archive: PathBuf,
    manifest: Value,
}

impl Installed {
    fn bin_dir(&self) -> PathBuf {
        self.krew_root.join("bin")
    }

    fn install_dir(&self) -> PathBuf {
        self.krew_root.join("store").join(PLUGIN).join(tag())
    }

    /// The real kubectl with only krew's bin dir (then the system's) on PATH, as a new krew user has it.
    fn kubectl(&self, extra_path: &[&Path]) -> Command {
        let mut dirs = vec![self.bin_dir()];
        dirs.extend(extra_path.iter().map(|p| p.to_path_buf()));
        dirs.extend(["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from));
        let mut cmd = Command::new(kubectl());
        cmd.env("PATH", std::env::join_paths(dirs).expect("PATH"));
        cmd.env_remove("KUBECONFIG");
        cmd.env("HOME", &self.krew_root);
        cmd
    }
}

fn installed() -> &'static Installed {
    static INSTALLED: OnceLock<Installed> = OnceLock::new();
    INSTALLED.get_or_init(install)
}

fn install() -> Installed {
    let (os, arch) = host_platform();
    let target =
        rust_target(os, arch).unwrap_or_else(|| panic!("gpuwhy ships no build for {os}/{arch}"));
    let dir = scratch().join("install");
    let dist = dir.join("dist");
    let t = tag();

    // 1. The release archive, made by the same script the release workflow runs, from the binary cargo built.
    let out = run(Command::new(root().join("scripts/package"))
        .args([target, &t, env!("CARGO_BIN_EXE_kubectl-gpuwhy")])
        .env("DIST_DIR", &dist));
    let archive = PathBuf::from(last_line(&out));
    assert_eq!(
        archive,
        dist.join(archive_name(&t, os, arch)),
        "scripts/package names the archive as plugin.yaml does"
    );
    let bytes = std::fs::read(&archive).expect("read archive");
    let sha = sha256_hex(&bytes);
    let sums = std::fs::read_to_string(dist.join("checksums.txt")).expect("checksums.txt");
    let name = archive.file_name().and_then(|n| n.to_str()).expect("name");
    assert!(
        sums.lines().any(|l| l == format!("{sha}  {name}")),
        "checksums.txt has {sha}  {name}:\n{sums}"
    );

    // 2. The manifest, rendered as krew-release-bot renders it: the real sha256 for this archive.
    let own_uri = format!("{REPO_URL}/releases/download/{t}/{name}");
    let text = render(&template(), &t, &|uri| {
        if uri == own_uri {
            sha.clone()
        } else {
            stand_in_sha(uri)
        }
    })
    .expect("plugin.yaml renders");
    let manifest = parse_yaml(&text, "the rendered plugin.yaml");
    let errs = violations(&manifest, PLUGIN, &t);
    assert!(
        errs.is_empty(),
        "rendered manifest breaks krew rules: {errs:?}"
    );
    let rendered = dir.join("gpuwhy.yaml");
    std::fs::write(&rendered, &text).expect("write rendered manifest");

    // 3. krew install: the one platform whose selector matches this machine, the archive's sha256, its type.
    let platforms = manifest["spec"]["platforms"].as_array().expect("platforms");
    let matching: Vec<&Value> = platforms
        .iter()
        .filter(|p| selects(&p["selector"], os, arch).expect("selector"))
        .collect();
    assert_eq!(matching.len(), 1, "exactly one platform for {os}/{arch}");
    let platform = matching[0];
    assert_eq!(
        platform["sha256"].as_str(),
        Some(sha.as_str()),
        "krew: checksum does not match"
    );
    assert_eq!(platform["uri"].as_str(), Some(own_uri.as_str()));
    let gzip = bytes.starts_with(&[0x1f, 0x8b]);
    let zip = bytes.starts_with(b"PK\x03\x04");
    assert!(
        gzip || zip,
        "krew detects only application/x-gzip and application/zip"
    );
    assert_eq!(
        zip,
        own_uri.ends_with(".zip"),
        "the archive's type is the one its name says"
    );

    let krew_root = dir.join("krew");
    let staging = dir.join("krew-downloads");
    std::fs::create_dir_all(&staging).expect("staging");
    if gzip {
        run(Command::new("tar")
            .arg("-xzf")
            .arg(&archive)
            .arg("-C")
            .arg(&staging));
    } else {
        run(Command::new("unzip")
            .arg("-q")
            .arg(&archive)
            .arg("-d")
            .arg(&staging));
    }
    // No `files`: krew's default is from "*" to ".", i.e. everything into store/<plugin>/<version>.
    assert!(
        platform.get("files").is_none(),
        "files is left out (krew extracts everything, LICENSE included)"
    );
    let install_dir = krew_root
        .join("store")
        .join(PLUGIN)
        .join(manifest["spec"]["version"].as_str().expect("version"));
    std::fs::create_dir_all(install_dir.parent().expect("parent")).expect("store");
    std::fs::rename(&staging, &install_dir).expect("move into the store");

    // The entrypoint: inside the install dir, present, linked as kubectl-<name with - as _> by a relative symlink.
    let bin = platform["bin"].as_str().expect("bin");
    let entry = install_dir.join(bin);
    assert!(
        entry.starts_with(&install_dir) && !bin.contains(".."),
        "bin stays inside the install dir"
    );
    assert!(
        entry.is_file(),
        "krew: source binary {} cannot be found in extracted archive",
        entry.display()
    );
    let bin_dir = krew_root.join("bin");
    std::fs::create_dir_all(&bin_dir).expect("bin dir");
    let link = bin_dir.join(format!("kubectl-{}", PLUGIN.replace('-', "_")));
    let rel = Path::new("..")
        .join("store")
        .join(PLUGIN)
        .join(tag())
        .join(bin);
    symlink(&rel, &link);
    std::fs::create_dir_all(krew_root.join("receipts")).expect("receipts");
    std::fs::copy(&rendered, krew_root.join("receipts").join("gpuwhy.yaml")).expect("receipt");

    Installed {
        krew_root,
        archive,
        manifest,
    }
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) {
    std::os::unix::fs::symlink(target, link)
        .unwrap_or_else(|e| panic!("symlink {}: {e}", link.display()));
}

#[cfg(not(unix))]
fn symlink(target: &Path, link: &Path) {
    panic!(
        "the krew emulation runs on unix only ({} → {})",
        link.display(),
        target.display()
    );
}

#[test]
fn krew_install_from_the_release_archive_extracts_license_and_readme() {
    let inst = installed();
    let dir = inst.install_dir();
    let names: Vec<String> = std::fs::read_dir(&dir)
        .expect("install dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names
            .iter()
            .any(|n| LICENSE_NAMES.contains(&n.to_lowercase().as_str())),
        "krew-index requires a LICENSE file extracted at install; the install dir has {names:?}"
    );
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        ["LICENSE", "README.md", BIN],
        "the archive holds the binary, LICENSE and README.md"
    );
    let license = std::fs::read_to_string(dir.join("LICENSE")).expect("LICENSE");
    assert_eq!(
        license,
        std::fs::read_to_string(root().join("LICENSE")).expect("repo LICENSE")
    );
    assert!(
        license.contains("Apache License"),
        "LICENSE is the Apache-2.0 text"
    );
    let link = inst.bin_dir().join(BIN);
    let target = std::fs::read_link(&link).expect("kubectl-gpuwhy is a symlink");
    assert!(
        target.is_relative(),
        "krew links relatively: {}",
        target.display()
    );
    assert!(inst.archive.is_file());
    assert_eq!(inst.manifest["metadata"]["name"], PLUGIN);
}

#[test]
fn kubectl_runs_the_krew_installed_plugin_version_and_help() {
    let inst = installed();
    let out = run(inst.kubectl(&[]).args(["gpuwhy", "--version"]));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.trim(),
        format!("kubectl-gpuwhy {}", gpuwhy::cli::VERSION),
        "version and commit"
    );
    assert!(gpuwhy::cli::VERSION.starts_with(&format!("{} (commit ", env!("CARGO_PKG_VERSION"))));
    assert!(
        !gpuwhy::cli::VERSION.contains("(commit )"),
        "the commit is recorded"
    );

    let out = run(inst.kubectl(&[]).args(["gpuwhy", "--help"]));
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("Usage: kubectl gpuwhy"),
        "help names the kubectl invocation:\n{help}"
    );
    for sub in ["rules", "explain", "completion"] {
        assert!(help.contains(sub), "help lists {sub}:\n{help}");
    }

    let out = run(inst.kubectl(&[]).args(["plugin", "list"]));
    let list = String::from_utf8_lossy(&out.stdout);
    let link = inst.bin_dir().join(BIN);
    assert!(
        list.contains(&link.display().to_string()),
        "kubectl plugin list finds the krew link:\n{list}"
    );
}

// ------------------------------------------------------------------------------------------------ completion

/// Installs the completion helper exactly as the caveats say (through the krew-installed plugin), once.
fn completion_helper() -> &'static Path {
    static HELPER: OnceLock<PathBuf> = OnceLock::new();
    HELPER.get_or_init(|| {
        let inst = installed();
        let caveats = inst.manifest["spec"]["caveats"].as_str().expect("caveats");
        assert!(
            caveats.contains("kubectl gpuwhy completion kubectl > \"$f\" && chmod +x \"$f\""),
            "{caveats}"
        );
        let f = inst.bin_dir().join(gpuwhy::completion::KUBECTL_HELPER);
        // The caveats' indented lines are the commands; run them as they stand.
        let script: Vec<&str> = caveats
            .lines()
            .filter(|l| l.starts_with("  "))
            .map(str::trim)
            .collect();
        assert!(
            script.iter().any(|l| l.contains("kubectl_complete-gpuwhy")),
            "caveats commands: {script:?}"
        );
        let script = script.join("\n");
        let kubectl_dir = kubectl().parent().expect("kubectl dir");
        run(Command::new("sh")
            .arg("-c")
            .arg(&script)
            .env("KREW_ROOT", &inst.krew_root)
            .env(
                "PATH",
                std::env::join_paths([
                    inst.bin_dir().as_path(),
                    kubectl_dir,
                    Path::new("/usr/bin"),
                    Path::new("/bin"),
                ])
                .expect("PATH"),
            ));
        assert!(f.is_file(), "the caveats' commands made {}", f.display());
        f
    })
}

/// `kubectl __complete gpuwhy ARGS…` through the real kubectl, with the helper on PATH, against the cluster.
fn complete(args: &[&str], kubeconfig_env: bool) -> (Vec<String>, String) {
    let c = cluster();
    let inst = installed();
    completion_helper();
    let kubectl_dir = kubectl().parent().expect("kubectl dir");
    let mut cmd = inst.kubectl(&[kubectl_dir]);
    cmd.arg("__complete").arg("gpuwhy").args(args);
    if kubeconfig_env {
        cmd.env("KUBECONFIG", &c.kubeconfig);
    }
    let out = run(&mut cmd);
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    (lines, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn words(lines: &[String]) -> Vec<&str> {
    lines
        .iter()
        .map(|l| l.split('\t').next().unwrap_or(""))
        .collect()
}

#[test]
fn kubectl_completes_lab_pod_names_through_the_helper() {
    let (lines, stderr) = complete(&["-n", LAB_NAMESPACE, ""], true);
    let w = words(&lines);
    for pod in ["gpu-busy", "gpu-taint"] {
        assert!(
            w.contains(&pod),
            "{pod} missing from `kubectl __complete gpuwhy -n gpu-lab \"\"`: {lines:?}\n{stderr}"
        );
    }
    assert!(
        !w.contains(&"rules"),
        "after a flag, no subcommand (clap rejects it): {lines:?}"
    );
    assert_eq!(w.last(), Some(&":4"), "no file names for a Pod: {lines:?}");
    assert!(stderr.contains("ShellCompDirectiveNoFileComp"), "{stderr}");

    // A prefix, and the connection flags passed through: --kubeconfig and --context as typed, no KUBECONFIG;
    // the restricted context's namespace is gpu-lab.
    let kc = cluster().kubeconfig.display().to_string();
    let (lines, stderr) = complete(
        &["--kubeconfig", &kc, "--context", "restricted", "gpu-t"],
        false,
    );
    let w = words(&lines);
    assert!(
        w.contains(&"gpu-taint"),
        "--kubeconfig/--context passed through: {lines:?}\n{stderr}"
    );
    assert!(
        w[..w.len() - 1].iter().all(|p| p.starts_with("gpu-t")),
        "filtered by prefix: {lines:?}"
    );

    // Without the namespace, the admin context's default namespace has none of the lab's Pods.
    let (lines, _) = complete(&[""], true);
    let w = words(&lines);
    assert!(!w.contains(&"gpu-busy"), "the namespace matters: {lines:?}");
    for sub in ["rules", "explain", "completion"] {
        assert!(w.contains(&sub), "{sub} missing from a new word: {lines:?}");
    }

    // Namespace values come from the cluster too.
    let (lines, _) = complete(&["-n", "gpu-"], true);
    assert!(words(&lines).contains(&LAB_NAMESPACE), "{lines:?}");
}

#[test]
fn kubectl_completes_flags_and_values_through_the_helper() {
    let (lines, stderr) = complete(&["--"], true);
    let w = words(&lines);
    for flag in ["--output", "--from-file", "--color", "--help", "--version"] {
        assert!(
            w.contains(&flag),
            "{flag} missing from `kubectl __complete gpuwhy --`: {lines:?}\n{stderr}"
        );
    }
    assert!(
        w.iter().all(|x| x.starts_with("--") || x.starts_with(':')),
        "{w:?}"
    );
    assert_eq!(w.last(), Some(&":4"));
    let (lines, _) = complete(&["-o", ""], true);
    assert_eq!(words(&lines), ["text", "json", "markdown", ":4"]);
    let (lines, _) = complete(&["completion", ""], true);
    assert_eq!(words(&lines), ["bash", "zsh", "fish", "kubectl", ":4"]);
}

// ------------------------------------------------------------------------------------------------ workflows

fn workflow(name: &str) -> Value {
    let p = root().join(".github/workflows").join(name);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let v = parse_yaml(&text, name);
    assert!(
        v.get("on").is_some(),
        "{name}: `on` is a key (YAML 1.2, not the boolean true)"
    );
    let jobs = v["jobs"]
        .as_object()
        .unwrap_or_else(|| panic!("{name}: no jobs"));
    for (id, job) in jobs {
        assert!(
            job.get("runs-on").is_some(),
            "{name}: job {id} has no runs-on"
        );
        let steps = job["steps"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: job {id} has no steps"));
        for st in steps {
            assert!(
                st.get("uses").is_some() != st.get("run").is_some(),
                "{name}/{id}: a step has one of uses/run: {st}"
            );
        }
    }
    v
}

fn all_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(all_text).collect::<Vec<_>>().join("\n"),
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| format!("{k}: {}", all_text(v)))
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

#[test]
fn ci_workflow_runs_fmt_clippy_and_the_tests() {
    let ci = workflow("ci.yml");
    let text = all_text(&ci);
    for need in [
        "cargo fmt --check",
        "cargo clippy --all-targets",
        "-D warnings",
        ".ci/run",
    ] {
        assert!(text.contains(need), "ci.yml lacks {need:?}");
    }
}

#[test]
fn release_workflow_builds_packages_and_publishes_what_plugin_yaml_names() {
    let rel = workflow("release.yml");
    let tags = &rel["on"]["push"]["tags"];
    assert!(
        tags.as_array().is_some_and(|t| t
            .iter()
            .any(|x| x.as_str().is_some_and(|s| s.starts_with('v')))),
        "on: push: tags: v*"
    );
    let text = all_text(&rel);
    for (os, arch) in SHIPPED {
        let target = rust_target(os, arch).expect("target");
        assert!(
            text.contains(target),
            "release.yml does not build {target} ({os}/{arch})"
        );
    }
    for need in [
        "scripts/package",
        "checksums.txt",
        "rajatjindal/krew-release-bot@",
        "krew_template_file: plugin.yaml",
        "GPUWHY_COMMIT",
    ] {
        assert!(text.contains(need), "release.yml lacks {need:?}");
    }
}

#[test]
fn package_script_refuses_bad_input() {
    let bin = env!("CARGO_BIN_EXE_kubectl-gpuwhy");
    let dir = scratch().join("refuse");
    for args in [
        vec!["x86_64-unknown-linux-musl", "0.1.0", bin],
        vec!["x86_64-unknown-linux-musl", "v0.1", bin],
        vec!["not a target", "v0.1.0", bin],
        vec![
            "x86_64-unknown-linux-musl",
            "v0.1.0",
            "/nonexistent/kubectl-gpuwhy",
        ],
    ] {
        let out = Command::new(root().join("scripts/package"))
            .args(&args)
            .env("DIST_DIR", &dir)
            .output()
            .expect("run");
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?} should be refused: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
