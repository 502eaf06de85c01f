//! The engine on real text: every pasted fixture under tests/fixtures/real/ must give the primary cause its
//! MANIFEST names; every fixture (real pastes, the real control plane's captures, each input format and each
//! rule's example) is snapshotted as a structured Diagnosis.

use gpuwhy::diagnose::Diagnosis;
use gpuwhy::rules::RULES;

use crate::common::{diagnose_file, fixture, insta_settings};

fn one(ds: &[Diagnosis]) -> serde_json::Value {
    match ds {
        [d] => serde_json::to_value(d).unwrap(),
        many => serde_json::json!({"schema": "gpuwhy/v1", "items": many}),
    }
}

#[test]
fn real_pastes_give_the_manifest_primary() {
    let manifest = std::fs::read_to_string(fixture("real/MANIFEST.tsv")).unwrap();
    let mut failures = Vec::new();
    let mut total = 0;
    for line in manifest.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (file, want) = (cols[0], cols[1]);
        total += 1;
        let ds = diagnose_file(&fixture(&format!("real/{file}")));
        let got = ds[0].primary.as_str();
        if got != want {
            failures.push(format!("{file}: want {want}, got {got}"));
        }
    }
    assert!(total >= 40, "the manifest lists {total} pastes");
    assert!(
        failures.is_empty(),
        "{} of {total} wrong:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A GPU-stack log is the answer only when it complains: AWS Neuron's kernel driver without its `timed out`
/// line is its ordinary start, and the paste then says nothing a rule or the GPU stack explains.
#[test]
fn a_gpu_stack_log_without_a_complaint_is_no_answer() {
    let text = std::fs::read_to_string(fixture(
        "real/s66001-bottlerocket-inf1-neuron-resource-not-published.txt",
    ))
    .unwrap();
    let primary = |t: &str| {
        let (_, evs) = gpuwhy::offline::parse(t, "paste").unwrap();
        gpuwhy::diagnose::diagnose_all(&evs)[0]
            .primary
            .as_str()
            .to_string()
    };
    assert_eq!(primary(&text), "device-plugin");
    let calm: String = text
        .lines()
        .filter(|l| !l.contains("timed out"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(calm, text);
    assert_eq!(primary(&calm), "unknown");
}

/// The NVIDIA installer's `ERROR: Unable to open 'kernel/dkms.conf' for copying` is in nearly every driver
/// container's log that goes on to install the driver (here an OpenShift 4.6 install's, committed with its
/// notes): it is no complaint of the GPU stack.
#[test]
fn an_installers_dkms_conf_line_is_no_complaint() {
    let log = "Installing NVIDIA driver kernel modules...\n+ nvidia-installer --kernel-module-only --no-drm --ui=none --no-nouveau-check\n\nWARNING: The nvidia-drm module will not be installed. As a result, DRM-KMS will not function with this installation of the NVIDIA driver.\n\n\nERROR: Unable to open 'kernel/dkms.conf' for copying (No such file or directory)\n\n\n+ echo 'Done, now waiting for signal'\nDone, now waiting for signal\n";
    assert_eq!(primary(log), "unknown");
    // Another complaint of the installer's in the same log still stops the node's GPU stack.
    let failed = log.replace(
        "ERROR: Unable to open 'kernel/dkms.conf' for copying (No such file or directory)",
        "ERROR: Unable to open 'kernel/dkms.conf' for copying (No such file or directory)\nmodprobe: ERROR: could not insert 'nvidia': Required key not available",
    );
    assert_eq!(primary(&failed), "device-plugin");
}

/// A real paste under tests/fixtures/real.
fn real(name: &str) -> String {
    std::fs::read_to_string(fixture(&format!("real/{name}"))).unwrap()
}

/// A rule's example text, from the table.
fn example(id: &str) -> String {
    gpuwhy::rules::RULES
        .iter()
        .find(|r| r.id == id)
        .unwrap()
        .example
        .to_string()
}

/// A GPU stack that is not installed (its Helm chart, OpenShift's Driver Toolkit) explains the scheduler's
/// `Insufficient nvidia.com/gpu` beside it; a node launch the cloud refused (Karpenter) is what to fix only when
/// a placement reason shuts out every existing node, not beside a device plugin that cannot start.
#[test]
fn what_explains_a_gpu_shortfall_and_when_a_refused_launch_is_the_answer() {
    let short = real("009-azure-insufficient-gpu-events.txt");
    assert_eq!(primary(&short), "insufficient-resource");
    for stack in [
        real("s143004-microk8s-gpu-operator-helm-download-failed.txt"),
        real("s144007-openshift-driver-toolkit-nfd-too-old-alert.txt"),
    ] {
        assert_eq!(
            primary(&format!("{stack}\n{short}")),
            "device-plugin",
            "{stack}"
        );
    }
    let karpenter = real("s143007-karpenter-fleet-error-security-group-subnet.txt");
    assert_eq!(primary(&karpenter), "other");
    let launch = karpenter
        .lines()
        .find(|l| l.contains("with fleet error(s)"))
        .unwrap();
    let plugin = example("GW122");
    assert_eq!(primary(&plugin), "device-plugin");
    assert_eq!(primary(&format!("{plugin}\n\n{launch}\n")), "device-plugin");
    assert_eq!(
        primary(&format!("{short}\n{launch}\n")),
        "insufficient-resource"
    );
    // A system pool's taint and a selector that together shut out every node: the refused launch is the answer.
    let placed_out = "0/3 nodes are available: 1 node(s) had untolerated taint {CriticalAddonsOnly: true}, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.";
    assert_eq!(primary(&format!("{placed_out}\n\n{launch}\n")), "other");
}

/// The first cause's rule id of a paste.
fn first_rule(text: &str) -> Option<&'static str> {
    let (_, evs) = gpuwhy::offline::parse(text, "paste").unwrap();
    gpuwhy::diagnose::diagnose_all(&evs)[0].causes[0].rule
}

/// A CUDA image's banner that it finds no driver (GW461) is what a GPU cause leaves behind: it yields to the
/// cause at an earlier gate and to a GPU cause at its own; alone it is the answer. A containerd error cut off
/// inside the handler's name yields to the same error in full.
#[test]
fn a_cuda_banner_and_a_cut_off_handler_yield_to_what_says_more() {
    let banner = real("s125003-cuda-image-driver-not-detected-no-toolkit.txt");
    assert_eq!(first_rule(&banner), Some("GW461"));
    for (other, id) in [
        (real("009-azure-insufficient-gpu-events.txt"), "GW105"),
        (example("GW301"), "GW301"),
        (example("GW401"), "GW401"),
        (
            real("s148004-gke-ubuntu-driver-installer-log-stops.txt"),
            "GW180",
        ),
    ] {
        assert_eq!(
            first_rule(&format!("{banner}\n{other}\n")),
            Some(id),
            "{other}"
        );
        assert_eq!(
            first_rule(&format!("{other}\n{banner}\n")),
            Some(id),
            "{other}"
        );
    }
    let cut = real("s147004-containerd2-no-runtime-truncated.txt");
    let (_, evs) =
        gpuwhy::offline::parse(&format!("{cut}\n{}\n", example("GW401")), "paste").unwrap();
    let d = &gpuwhy::diagnose::diagnose_all(&evs)[0];
    assert_eq!(d.causes[0].rule, Some("GW401"));
    assert_eq!(d.causes[0].details["handler"], "nvidia", "{d:#?}");
    assert_eq!(
        d.causes.iter().filter(|c| c.rule == Some("GW401")).count(),
        1
    );
}

/// A driver installer's log that stops short is the answer (the GPU Operator's driver container, GKE's
/// installer); the same log that goes on to the installer's last line is not.
#[test]
fn a_driver_installer_log_is_the_answer_only_when_it_stops_short() {
    for (short, end) in [
        (
            real("s148004-gke-ubuntu-driver-installer-log-stops.txt"),
            "Verifying Nvidia installation... DONE.\nUpdating host's ld cache... DONE.",
        ),
        (
            real("s148005-gke-cos-gpu-installer-log-stops.txt"),
            "Finished installing the drivers.",
        ),
        (example("GW155"), "Done, now waiting for signal"),
    ] {
        assert_eq!(primary(&short), "device-plugin", "{short}");
        assert_eq!(primary(&format!("{short}\n{end}\n")), "unknown", "{short}");
        // Several nodes' logs in one paste (`kubectl logs --prefix`): one node's finished run does not hide
        // another's that stops short; the same node's last line does.
        let prefixed = |pod: &str, text: &str| -> String {
            text.lines()
                .map(|l| format!("[pod/{pod}/installer] {l}\n"))
                .collect()
        };
        let stuck = prefixed("installer-a1", &short);
        assert_eq!(
            primary(&format!("{stuck}{}", prefixed("installer-b2", end))),
            "device-plugin",
            "{short}"
        );
        assert_eq!(
            primary(&format!("{stuck}{}", prefixed("installer-a1", end))),
            "unknown",
            "{short}"
        );
        // The same two logs pasted each under its own `kubectl logs POD` command.
        let under =
            |pod: &str, text: &str| format!("$ kubectl logs -n gpu-operator {pod}\n{text}\n");
        let stuck = under("installer-a1", &short);
        assert_eq!(
            primary(&format!("{stuck}{}", under("installer-b2", end))),
            "device-plugin",
            "{short}"
        );
        assert_eq!(
            primary(&format!("{stuck}{}", under("installer-a1", end))),
            "unknown",
            "{short}"
        );
        // One Pod's containers are one run: the GPU Operator's driver Pod waits in its manager and ends in its
        // driver container (`--all-containers --prefix`).
        let in_container = |ctr: &str, text: &str| -> String {
            text.lines()
                .map(|l| format!("[pod/installer-a1/{ctr}] {l}\n"))
                .collect()
        };
        assert_eq!(
            primary(&format!(
                "{}{}",
                in_container("manager", &short),
                in_container("driver", end)
            )),
            "unknown",
            "{short}"
        );
        // A note in the paste is no command: the log goes on under it. The same Pod's log read again with its
        // container named is the same log.
        assert_eq!(
            primary(&format!("{stuck}# ... (about 200 lines cut) ...\n{end}\n")),
            "unknown",
            "{short}"
        );
        assert_eq!(
            primary(&format!(
                "{stuck}$ kubectl logs -n gpu-operator installer-a1 -c installer | tail -2\n{end}\n"
            )),
            "unknown",
            "{short}"
        );
        // A command of another kind ends the log above it: an end line under it does not finish that log.
        assert_eq!(
            primary(&format!("{stuck}$ kubectl get pods -A\n{end}\n")),
            "device-plugin",
            "{short}"
        );
    }
}

/// `kubectl logs --prefix` names each line's Pod: a GPU-stack log read by whose it is (the device plugin's
/// start-up that stops short) is read so with the component's name only in the prefix, and another
/// component's name in a writer is no word against it.
#[test]
fn a_prefixed_log_is_read_by_the_pod_its_prefix_names() {
    let writer = "[pod/nvidia-device-plugin-daemonset-x2v9k/nvidia-device-plugin-ctr]";
    let log: String = [
        "I0501 10:00:00.000000       1 main.go:178] Starting FS watcher.",
        "I0501 10:00:00.100000       1 main.go:185] Starting OS watcher.",
        "I0501 10:00:00.200000       1 main.go:200] Starting Plugins.",
    ]
    .iter()
    .map(|l| format!("{writer} {l}\n"))
    .collect();
    let (_, evs) = gpuwhy::offline::parse(&log, "paste").unwrap();
    let d = &gpuwhy::diagnose::diagnose_all(&evs)[0];
    assert_eq!(d.primary.as_str(), "device-plugin", "{d:#?}");
    // The driver container's failure beside the DCGM exporter's start: the exporter's name is no word about the
    // driver's log.
    let driver = "[pod/nvidia-driver-daemonset-7x2kq/nvidia-driver-ctr] ERROR: Installation has failed.  Please see the file '/var/log/nvidia-installer.log' for details.  You may find suggestions on fixing installation problems in the README available on the Linux driver download page at www.nvidia.com.\n";
    let exporter = "[pod/nvidia-dcgm-exporter-4kq9z/nvidia-dcgm-exporter] time=\"2024-05-01T10:00:00Z\" level=info msg=\"DCGM successfully initialized!\"\n";
    assert_eq!(primary(&format!("{driver}{exporter}")), "device-plugin");
    // The same lines with no word of whose they are say nothing.
    let bare: String = log
        .lines()
        .map(|l| format!("{}\n", &l[writer.len() + 1..]))
        .collect();
    assert_eq!(primary(&bare), "unknown");
    // Pasted under the command that printed them, beside another Pod's log (so the paste is no one Pod's), a
    // failure in the plugin's log that does not name the plugin is the plugin's (an image the node cannot run);
    // under the workload's own command, or after the reporter's words, it is the workload's.
    let plugin = "root@node:~# kubectl logs -n kube-system nvidia-device-plugin-daemonset-x2v9k";
    let failure = "I0501 10:00:00.000000       1 main.go:178] Starting FS watcher.\nstandard_init_linux.go:228: exec user process caused: exec format error";
    let trainer = "root@node:~# kubectl logs trainer-0\nI0501 10:00:01.000000       1 train.go:12] waiting for the GPU";
    assert_eq!(
        primary(&format!("{plugin}\n{failure}\n{trainer}\n")),
        "device-plugin"
    );
    assert_eq!(
        primary(&format!("{trainer}\n{failure}\n{plugin}\n")),
        "other"
    );
    for intro in [
        "But my training pod keeps crashing, its log is just:",
        "\nThe training pod crashes right away, its log:",
    ] {
        assert_eq!(
            primary(&format!(
                "{plugin}\n{}\n{intro}\n{failure}\n",
                bare.trim_end()
            )),
            "other",
            "{intro}"
        );
    }
}

/// The real pastes under tests/fixtures/real, in name order.
fn real_pastes() -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(fixture("real"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    files
}

/// A summary names what the text gave: a placeholder without a value has words to stand in for it, and no
/// `<name>` (which a command keeps for the reader to fill in) is left in a sentence.
#[test]
fn no_summary_of_a_real_paste_keeps_a_placeholder() {
    let placeholder = regex::Regex::new(r"<[a-z_]+>").unwrap();
    let mut left = Vec::new();
    for path in real_pastes() {
        let text = std::fs::read_to_string(&path).unwrap();
        let (_, evs) = gpuwhy::offline::parse(&text, "paste").unwrap();
        for d in gpuwhy::diagnose::diagnose_all(&evs) {
            for c in &d.causes {
                if let Some(m) = placeholder.find(&c.summary) {
                    let name = path.file_name().unwrap().to_string_lossy();
                    left.push(format!("{name} {:?}: {}", c.rule, m.as_str()));
                }
                // A next command may leave a name that the reader knows and the paste did not give (`<pod>`,
                // `<node>`); never one that the tool derives, such as a JSONPath of the resource.
                for n in &c.next {
                    for m in placeholder.find_iter(&n.command) {
                        if m.as_str().contains("jsonpath") || m.as_str() == "<resource>" {
                            let name = path.file_name().unwrap().to_string_lossy();
                            left.push(format!("{name} {:?} next: {}", c.rule, m.as_str()));
                        }
                    }
                }
            }
        }
    }
    assert!(left.is_empty(), "{}", left.join("\n"));
}

/// The primary cause of the first diagnosis of a paste.
fn primary(text: &str) -> &'static str {
    let (_, evs) = gpuwhy::offline::parse(text, "paste").unwrap();
    gpuwhy::diagnose::diagnose_all(&evs)[0].primary.as_str()
}

#[test]
fn real_pastes_read_the_same_however_the_ticket_carried_them() {
    type Carry = fn(&str) -> String;
    let carried: [(&str, Carry); 18] = [
        ("fenced", |t| {
            format!("Here is what I see:\n```\n{t}\n```\nAny idea?\n")
        }),
        ("quoted", |t| {
            t.lines().map(|l| format!("> {l}\n")).collect()
        }),
        ("quoted twice", |t| {
            t.lines().map(|l| format!("> > {l}\n")).collect()
        }),
        ("indented", |t| {
            t.lines().map(|l| format!("    {l}\n")).collect()
        }),
        ("crlf", |t| t.replace('\n', "\r\n")),
        ("tabs", |t| {
            let runs = regex::Regex::new(" {2,}").unwrap();
            runs.replace_all(t, "\t").into_owned()
        }),
        ("nbsp", |t| t.replace("  ", "\u{a0} ")),
        ("squeezed", |t| {
            let runs = regex::Regex::new("[ \t]+").unwrap();
            runs.replace_all(t, " ").into_owned()
        }),
        ("double-spaced", |t| t.replace('\n', "\n\n")),
        // Wrapped in another markup's code markers, glued to the first and last lines.
        ("html pre", |t| format!("<pre><code>{t}</code></pre>\n")),
        ("bbcode", |t| format!("[code]{t}[/code]\n")),
        ("jira", |t| format!("{{noformat}}\n{t}\n{{noformat}}\n")),
        // Through a mail client or a word processor: curly quotes, and zero-width spaces where a line may break.
        ("typeset", |t| {
            let mut open = true;
            t.chars()
                .map(|c| match c {
                    '"' => {
                        open = !open;
                        if open { '\u{201d}' } else { '\u{201c}' }
                    }
                    '\'' => '\u{2019}',
                    c => c,
                })
                .collect::<String>()
                .replace("  ", " \u{200b} ")
        }),
        // Copied from a page's source or a ticket system's export, with HTML's escapes.
        ("html-escaped", |t| {
            t.replace('&', "&amp;")
                .replace('"', "&quot;")
                .replace('\'', "&#39;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
        }),
        // Written in a rich-text editor and exported as markdown, which escapes each character markdown would
        // read as formatting outside the paste's code blocks.
        ("markdown export", |t| {
            let mut fenced = false;
            let mut out = String::new();
            for line in t.split_inclusive('\n') {
                let fence = line.trim_start().starts_with("```");
                fenced ^= fence;
                if fence || fenced {
                    out.push_str(line);
                } else {
                    out.push_str(
                        &line
                            .replace('\\', "\\\\")
                            .replace('_', "\\_")
                            .replace('*', "\\*")
                            .replace('[', "\\[")
                            .replace(']', "\\]"),
                    );
                }
            }
            out
        }),
        // Captured with a terminal's colours (`script`, a CI log, kubecolor).
        ("coloured", |t| {
            let words =
                regex::Regex::new(r"\b(Warning|Normal|Error|Failed|failed|error)\b").unwrap();
            format!(
                "\u{1b}]0;gpu-node\u{7}{}\u{1b}[0m",
                words.replace_all(t, "\u{1b}[1;31m$1\u{1b}[0m")
            )
        }),
        // Printed by `kubectl logs --prefix` (several Pods' logs at once), which names each line's Pod.
        ("kubectl logs --prefix", |t| {
            t.lines()
                .map(|l| format!("[pod/gpu-0/main] {l}\n"))
                .collect()
        }),
        // Copied from a terminal 80 columns wide that cut every longer line.
        ("hard-wrapped", |t| {
            let mut out = String::new();
            for line in t.lines() {
                let chars: Vec<char> = line.chars().collect();
                for piece in chars.chunks(80) {
                    out.extend(piece);
                    out.push('\n');
                }
                if chars.is_empty() {
                    out.push('\n');
                }
            }
            out
        }),
    ];
    let mut changed = Vec::new();
    let files = real_pastes();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let want = primary(&text);
        for (how, carry) in &carried {
            // A copy double-spaces a paste of three lines or fewer no differently from three paragraphs.
            if *how == "double-spaced" && text.lines().filter(|l| !l.trim().is_empty()).count() < 4
            {
                continue;
            }
            // An export's backslashes make a JSON document something else; that JSON is read as it is.
            if *how == "markdown export" && text.trim_start().starts_with('{') {
                continue;
            }
            // A program's log does not quote itself as markdown: the quote is the ticket's, around the log.
            if *how == "kubectl logs --prefix" && text.trim_start().starts_with('>') {
                continue;
            }
            let got = primary(&carry(&text));
            if got != want {
                let name = path.file_name().unwrap().to_string_lossy();
                changed.push(format!("{name} {how}: {want} became {got}"));
            }
        }
    }
    assert!(files.len() > 300, "{} pastes", files.len());
    assert!(changed.is_empty(), "{}", changed.join("\n"));
}

/// The validator's checks run in order; the one that loops now (`CrashLoopBackOff`) says which failed, not one
/// whose last run failed before it passed (`Last State: Error` under `State: Completed`).
#[test]
fn a_validator_check_is_named_by_the_one_that_loops_now() {
    let paste = r#"Name:             nvidia-operator-validator-x7k2p
Namespace:        gpu-operator
Node:             gpu-node-1/10.0.0.5
Status:           Pending
Controlled By:    DaemonSet/nvidia-operator-validator
Init Containers:
  driver-validation:
    Container ID:  containerd://1111
    Image:         nvcr.io/nvidia/cloud-native/gpu-operator-validator:v23.9.1
    State:          Terminated
      Reason:       Completed
      Exit Code:    0
    Last State:     Terminated
      Reason:       Error
      Exit Code:    1
    Ready:          True
  toolkit-validation:
    Container ID:  containerd://2222
    Image:         nvcr.io/nvidia/cloud-native/gpu-operator-validator:v23.9.1
    State:          Waiting
      Reason:       CrashLoopBackOff
    Last State:     Terminated
      Reason:       Error
      Exit Code:    1
    Ready:          False
Containers:
  nvidia-operator-validator:
    Container ID:
    Image:          nvcr.io/nvidia/cloud-native/gpu-operator-validator:v23.9.1
    State:          Waiting
      Reason:       PodInitializing
Events:
  Type     Reason   Age                  From     Message
  ----     ------   ----                 ----     -------
  Warning  BackOff  2m (x50 over 12m)    kubelet  Back-off restarting failed container
"#;
    let (_, evs) = gpuwhy::offline::parse(paste, "paste").unwrap();
    let d = &gpuwhy::diagnose::diagnose_all(&evs)[0];
    assert_eq!(d.primary.as_str(), "runtime-hook");
    assert!(
        d.causes[0].summary.contains("toolkit-validation"),
        "{}",
        d.causes[0].summary
    );
    // Without the loop the check that failed last is named.
    let recovered = paste.replace("Waiting\n      Reason:       CrashLoopBackOff", "Running");
    let (_, evs) = gpuwhy::offline::parse(&recovered, "paste").unwrap();
    let d = &gpuwhy::diagnose::diagnose_all(&evs)[0];
    assert_ne!(d.primary.as_str(), "runtime-hook", "{d:?}");
}

/// A ticket field that drops line breaks turns a paste into one line; the readers restore the lines of
/// describe, event, get-pods and log output. Some pastes hold other text whose lines cannot be told apart
/// once glued (prose, YAML, jsonpath output, node listings): this counts the real pastes whose primary still
/// changes, and fails if a change makes more of them change. Lower the bound when a change lowers the count.
#[test]
fn flattened_real_pastes_mostly_read_the_same() {
    const STILL_CHANGE: usize = 24;
    let mut changed = Vec::new();
    let files = real_pastes();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let (want, got) = (primary(&text), primary(&text.replace('\n', " ")));
        if got != want {
            let name = path.file_name().unwrap().to_string_lossy();
            changed.push(format!("{name}: {want} became {got}"));
        }
    }
    assert!(files.len() > 300, "{} pastes", files.len());
    assert!(
        changed.len() <= STILL_CHANGE,
        "{} flattened pastes change (at most {STILL_CHANGE}):\n{}",
        changed.len(),
        changed.join("\n")
    );
}

#[test]
fn real_pastes_snapshot() {
    let _g = insta_settings("offline").bind_to_scope();
    insta::glob!("../fixtures/real", "*.txt", |path| {
        insta::assert_json_snapshot!("real", one(&diagnose_file(path)));
    });
}

#[test]
fn control_plane_captures_snapshot() {
    // Captures from the lab are regenerated on each run: names with random suffixes are masked.
    let mut settings = insta_settings("offline");
    settings.add_filter(r"(gpu-[a-z-]+)-[0-9a-f]{8,10}(-[a-z0-9]{5})?", "$1-<hash>");
    let _g = settings.bind_to_scope();
    const CAPTURED: &str = "*.{describe.txt,events.json,events.v1.json,pod.json,stderr.txt,containerd.txt,rs-events.json}";
    insta::glob!("../fixtures/k8s-v1.37.2", CAPTURED, |path| {
        insta::assert_json_snapshot!("k8s-v1.37.2", one(&diagnose_file(path)));
    });
    insta::glob!("../fixtures/k8s-v1.34.4", CAPTURED, |path| {
        insta::assert_json_snapshot!("k8s-v1.34.4", one(&diagnose_file(path)));
    });
    insta::glob!("../fixtures/k8s-v1.30.14", CAPTURED, |path| {
        insta::assert_json_snapshot!("k8s-v1.30.14", one(&diagnose_file(path)));
    });
}

#[test]
fn control_plane_captures_classify_as_the_lab_intends() {
    // (file, gate, primary from v1.37.2's and v1.34.4's texts, primary from v1.30.14's). Where they differ,
    // v1.30's scheduler named the GPU taint (`untolerated taint {nvidia.com/gpu: present}`) and the newer ones do
    // not: from the message alone, only v1.30's shows that the node left is a tainted GPU node. v1.34.4's texts
    // add `no new claims to deallocate, ` before the preemption part, and read as v1.37.2's do.
    for (file, gate, newer, at_v1_30) in [
        ("gpu-ok.describe.txt", "none", "none", "none"),
        (
            "gpu-busy.describe.txt",
            "scheduling",
            "insufficient-resource",
            "insufficient-resource",
        ),
        (
            "gpu-busy.events.v1.json",
            "scheduling",
            "insufficient-resource",
            "insufficient-resource",
        ),
        // From v1.34 the scheduler calls a node with no GPU allocatable unresolvable, so preemption helps on no
        // node: the message alone then says the GPU is not advertised. v1.30's says preemption found no victims
        // on the L4 node, as for the busy A100.
        (
            "gpu-none.pod.json",
            "scheduling",
            "device-plugin",
            "insufficient-resource",
        ),
        (
            "gpu-none.describe.txt",
            "scheduling",
            "device-plugin",
            "insufficient-resource",
        ),
        ("gpu-taint.describe.txt", "scheduling", "taint", "taint"),
        ("gpu-taint.pod.json", "scheduling", "taint", "taint"),
        (
            "gpu-taint.events.json",
            "scheduling",
            "node-affinity",
            "taint",
        ),
        (
            "gpu-mixed.describe.txt",
            "scheduling",
            "insufficient-resource",
            "taint",
        ),
        (
            "gpu-mixed.events.v1.json",
            "scheduling",
            "insufficient-resource",
            "taint",
        ),
        (
            "gpu-handler.describe.txt",
            "runtime",
            "handler-missing",
            "handler-missing",
        ),
        (
            "gpu-handler.events.json",
            "runtime",
            "handler-missing",
            "handler-missing",
        ),
        (
            "gpu-handler.containerd.txt",
            "runtime",
            "handler-missing",
            "handler-missing",
        ),
        (
            "gpu-req-ne-limit.stderr.txt",
            "admission",
            "invalid-spec",
            "invalid-spec",
        ),
        (
            "gpu-req-no-limit.stderr.txt",
            "admission",
            "invalid-spec",
            "invalid-spec",
        ),
        (
            "gpu-fraction.stderr.txt",
            "admission",
            "invalid-spec",
            "invalid-spec",
        ),
        (
            "gpu-rc-missing.stderr.txt",
            "admission",
            "runtimeclass-not-found",
            "runtimeclass-not-found",
        ),
        (
            "gpu-rc-missing.rs.describe.txt",
            "admission",
            "runtimeclass-not-found",
            "runtimeclass-not-found",
        ),
        (
            "gpu-rc-missing.rs-events.json",
            "admission",
            "runtimeclass-not-found",
            "runtimeclass-not-found",
        ),
        ("gpu-quota.stderr.txt", "admission", "quota", "quota"),
        ("gpu-quota.rs.describe.txt", "admission", "quota", "quota"),
    ] {
        for (version, primary) in [
            ("v1.37.2", newer),
            ("v1.34.4", newer),
            ("v1.30.14", at_v1_30),
        ] {
            let ds = diagnose_file(&fixture(&format!("k8s-{version}/{file}")));
            assert_eq!(
                (ds[0].primary.as_str(), ds[0].gate.as_str()),
                (primary, gate),
                "{version}/{file}"
            );
        }
    }
}

#[test]
fn input_formats_snapshot() {
    let _g = insta_settings("offline").bind_to_scope();
    insta::glob!("../fixtures/formats", "*.{txt,json,jsonl,yaml}", |path| {
        insta::assert_json_snapshot!("format", one(&diagnose_file(path)));
    });
}

#[test]
fn input_formats_are_detected_without_being_named() {
    use gpuwhy::offline::{Format, parse};
    for (file, format, targets) in [
        ("formats/pod.yaml", Format::Yaml, 1),
        ("formats/events.yaml", Format::Yaml, 1),
        ("formats/events-v1-multidoc.yaml", Format::Yaml, 1),
        ("formats/events.jsonl", Format::Json, 1),
        ("formats/pod-and-events.list.json", Format::Json, 1),
        ("formats/get-events-all.txt", Format::Text, 0),
        ("formats/describe-events-no-header.txt", Format::Text, 1),
        ("formats/containerd-log.txt", Format::Text, 1),
        ("formats/error-records.txt", Format::Text, 1),
        ("formats/json-then-text.txt", Format::Text, 1),
        ("k8s-v1.37.2/gpu-taint.describe.txt", Format::Describe, 1),
    ] {
        let text = std::fs::read_to_string(fixture(file)).unwrap();
        let (got, evs) = parse(&text, file).unwrap();
        assert_eq!(got, format, "{file}");
        if targets > 0 {
            assert_eq!(evs.len(), targets, "{file}");
        } else {
            assert!(
                evs.len() > 5,
                "{file}: a table about many objects gives one target each, got {}",
                evs.len()
            );
        }
    }
}

#[test]
fn every_rule_example_snapshot() {
    let _g = insta_settings("rules").bind_to_scope();
    for r in RULES {
        let (_, evs) = gpuwhy::offline::parse(r.example, r.id).unwrap();
        let d = gpuwhy::diagnose::diagnose(&evs[0]);
        assert!(
            d.causes.iter().any(|c| c.rule == Some(r.id)),
            "{}: example not explained",
            r.id
        );
        insta::assert_json_snapshot!(format!("example-{}", r.id), d);
    }
}

#[test]
fn the_autoscalers_gpu_shortfall_names_node_groups_only_when_it_is_the_only_reason() {
    let summary = |name: &str| {
        let path = format!("{}/tests/fixtures/real/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(path).unwrap();
        let (_, evs) = gpuwhy::offline::parse(&text, "paste").unwrap();
        gpuwhy::diagnose::diagnose_all(&evs)[0].causes[0]
            .summary
            .clone()
    };
    // `it wouldn't fit if a new node is added: 6 Insufficient nvidia.com/gpu` counts node groups.
    let alone = summary("aa033-ca-notriggerscaleup-gpu-scale-from-zero.txt");
    assert!(alone.contains("in 6 node group(s)"), "{alone}");
    // Beside a group at its maximum size, the groups may lack something else: the nodes' reading stays.
    let beside = summary("031-autoscaler-mig-wrapped-notriggerscaleup.txt");
    assert!(!beside.contains("node group(s)"), "{beside}");
}
