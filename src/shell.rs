//! Shell command lines pasted in text: which lines are commands, and which Pod a pasted `kubectl logs` or
//! `kubectl exec` reads. Both the text reader (whose log is under a command) and the diagnosis (what an exec in
//! the Pod printed) ask it, so the command line is parsed in one place.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use crate::evidence::{is_dns_label, is_dns_subdomain};

/// What a pasted `kubectl logs` or `kubectl exec` command reads: the Pod (`None` for a selector or another kind,
/// `ds/…`, where kubectl picks a Pod the paste does not name), its namespace and container, and for an exec the
/// command run in it (`nvidia-smi -L`), as written.
#[derive(Debug, Default, PartialEq)]
pub struct PodCommand {
    pub pod: Option<String>,
    pub namespace: Option<String>,
    pub container: Option<String>,
    pub command: String,
}

/// A pasted kubectl command line, as its words and the index of `kubectl` (or `oc`, `k`, …) among them: only a
/// shell prompt (`user@host:~$`, `(base) me@mac dir %`, `➜  dir git:(main) ✗`, `C:\Users\me>`), `sudo`, an
/// environment variable (`KUBECONFIG=… kubectl`) or a distribution's wrapper may come before it, so a sentence
/// that mentions `oc logs` is not a command.
fn kubectl_command(line: &str) -> Option<(Vec<&str>, usize)> {
    let tokens = words(line);
    let at = tokens.iter().position(|t| {
        matches!(
            *t,
            "kubectl" | "oc" | "k" | "microk8s.kubectl" | "kubectl.exe" | "oc.exe"
        )
    })?;
    let after_prompt = prompt_end(&tokens[..at]);
    let wrapper = |t: &str| {
        matches!(
            t,
            "sudo" | "-E" | "microk8s" | "k3s" | "k0s" | "-" | "*" | "~"
        ) || is_assignment(t)
    };
    tokens[after_prompt..at]
        .iter()
        .all(|t| wrapper(t))
        .then_some((tokens, at))
}

/// `NAME=value` before a command, as the shell reads it (`KUBECONFIG=/etc/rancher/k3s/k3s.yaml`).
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        name.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')
            && name
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
    })
}

/// A pasted command line's words: split at whitespace and at the backticks of a markdown span, with cmd.exe's
/// prompt (`C:\Users\me>kubectl …`, no space after it) a word of its own.
fn words(line: &str) -> Vec<&str> {
    static CMD_PROMPT: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\s*[A-Za-z]:\\[^>\s]*>").expect("cmd.exe prompt"));
    let (prompt, rest) = match CMD_PROMPT.find(line) {
        Some(m) => (Some(m.as_str().trim_start()), &line[m.end()..]),
        None => (None, line),
    };
    prompt
        .into_iter()
        .chain(rest.split(|c: char| c.is_whitespace() || c == '`'))
        .filter(|t| !t.is_empty())
        .collect()
}

/// The index of the first word after a shell prompt among `words` (`user@host:~$`, `#`, `%`, `>`), or 0. An
/// oh-my-zsh prompt (`➜  dir git:(main) ✗`) ends after its directory and its git state.
fn prompt_end(words: &[&str]) -> usize {
    let end = words
        .iter()
        .rposition(|t| t.ends_with(['$', '#', '%', '>']) || *t == "➜")
        .map_or(0, |p| p + 1);
    if end == 0 || words[end - 1] != "➜" {
        return end;
    }
    // `➜ helm …` (a prompt without the directory) goes straight to the command.
    let command = |t: &str| {
        matches!(
            t,
            "kubectl" | "oc" | "k" | "helm" | "microk8s" | "k3s" | "k0s" | "sudo"
        )
    };
    // A directory named like a command (`➜  helm git:(main) ✗ kubectl …`) is one when the prompt goes on.
    let prompt_goes_on = words
        .get(end + 1)
        .is_some_and(|t| t.starts_with("git:(") || *t == "✗" || command(t));
    let mut end = end
        + usize::from(
            words
                .get(end)
                .is_some_and(|t| !command(t) || prompt_goes_on),
        );
    if words.get(end).is_some_and(|t| t.starts_with("git:(")) {
        end += 1;
    }
    if words.get(end) == Some(&"✗") {
        end += 1;
    }
    end.min(words.len())
}

/// A line that starts another command in a pasted terminal session: a kubectl command, or a shell prompt
/// (`$ nvidia-smi`, `root@node:~# journalctl …`, `[root@node ~]# …`) before a command. A bare `# ` is not one:
/// it opens YAML comments, markdown headings and notes (`# ... 200 lines cut ...`) as often as a root shell.
pub fn is_command_line(line: &str) -> bool {
    static PROMPT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:\(\S+\) )?(?:\$ \S|\S+@\S+?[:~]\S*[$#] ?\S|\[\S+@\S+ [^\]]*\][$#] ?\S)")
            .expect("prompt")
    });
    PROMPT.is_match(line) || kubectl_command(line).is_some()
}

/// A command run against the cluster, on a line of its own above what it printed: a kubectl command, or a
/// cluster tool's (`helm install …`, `microk8s enable gpu`, `k3s ctr images ls`), after a prompt or none. A
/// prompt before another program (`root@node:~# nvidia-smi …`) is not one: its output may be on the same line.
pub fn is_cluster_command(line: &str) -> bool {
    if kubectl_command(line).is_some() {
        return true;
    }
    let words = words(line);
    // A prompt is one to four words (`$`, `root@node:~#`, `(base) me@mac dir %`).
    let after_prompt = prompt_end(&words[..words.len().min(4)]);
    matches!(
        words.get(after_prompt).copied(),
        Some("helm" | "microk8s" | "k3s" | "k0s")
    ) && words.len() > after_prompt + 1
}

/// Pasted lines with a command typed over several lines (`kubectl logs POD \` then `-c ctr`) joined into its
/// first line; the lines that continue it are `None`. Only a command line's trailing backslash continues it.
pub fn join_continued<'a>(lines: &[&'a str]) -> Vec<Option<Cow<'a, str>>> {
    let continues = |l: &str| l.trim_end().ends_with('\\');
    let mut out = Vec::with_capacity(lines.len());
    let mut i = 0;
    while let Some(&line) = lines.get(i) {
        if !(continues(line) && is_command_line(line)) {
            out.push(Some(Cow::Borrowed(line)));
            i += 1;
            continue;
        }
        let mut joined = String::new();
        let mut end = i;
        for (n, l) in lines[i..].iter().enumerate() {
            // bash's continuation prompt (`> `) starts each further line of a terminal's copy.
            let l = if n == 0 {
                l.trim_end()
            } else {
                let l = l.trim();
                l.strip_prefix("> ").unwrap_or(l)
            };
            let more = continues(l);
            joined.push_str(l.strip_suffix('\\').unwrap_or(l).trim_end());
            joined.push(' ');
            end += 1;
            if !more {
                break;
            }
        }
        joined.truncate(joined.trim_end().len());
        out.push(Some(Cow::Owned(joined)));
        out.extend((i + 1..end).map(|_| None));
        i = end;
    }
    out
}

/// What a pasted `kubectl logs` command reads: `$ kubectl logs -n ns pod -c ctr`, `oc logs -f pod/name`, `sudo
/// k3s kubectl logs …`, `microk8s.kubectl logs pod ctr`, `k logs …`. Text that is not such a command is `None`.
pub fn logs_command(line: &str) -> Option<PodCommand> {
    pod_command(line, "logs")
}

/// What a pasted `kubectl exec` command runs, and in which Pod: `kubectl exec -it pod -- nvidia-smi -L`, `oc exec
/// pod/name -c ctr -- bash -c 'nvidia-smi'`, and the old form without `--` (`kubectl exec pod nvidia-smi`).
pub fn exec_command(line: &str) -> Option<PodCommand> {
    pod_command(line, "exec")
}

/// kubectl's flags that take no value, for any verb and for `logs` and `exec` each; every other flag written
/// without `=` takes the next word (`exec -f FILE`, `exec -p POD`, but `logs -f` and `logs -p` take none).
const GLOBAL_BOOLEAN: &[&str] = &[
    "-h",
    "--help",
    "--insecure-skip-tls-verify",
    "--match-server-version",
    "--warnings-as-errors",
    "--disable-compression",
];
const LOGS_BOOLEAN: &[&str] = &[
    "-f",
    "--follow",
    "-p",
    "--previous",
    "--timestamps",
    "--all-containers",
    "--all-pods",
    "--prefix",
    "--ignore-errors",
    "--insecure-skip-tls-verify-backend",
];
const EXEC_BOOLEAN: &[&str] = &["-i", "--stdin", "-t", "--tty", "-q", "--quiet"];

/// `kubectl VERB [flags] POD [CONTAINER|COMMAND…] [-- COMMAND…]`, pflag's way: flags anywhere before `--`,
/// booleans grouped (`-fn ns` is `-f -n ns`, `-it`), a value attached (`-nkube-system`) or after `=`.
fn pod_command(line: &str, verb: &str) -> Option<PodCommand> {
    let (tokens, at) = kubectl_command(line)?;
    let verbs = if verb == "exec" {
        EXEC_BOOLEAN
    } else {
        LOGS_BOOLEAN
    };
    let boolean = |flag: &str| GLOBAL_BOOLEAN.contains(&flag) || verbs.contains(&flag);
    let mut out = PodCommand::default();
    let mut positional = Vec::new();
    let mut seen_verb = false;
    // `--` right after the flags: the Pod comes from a flag (`-f FILE`, `-p POD`), not a word.
    let mut unnamed = false;
    let mut i = at + 1;
    while let Some(&word) = tokens.get(i) {
        if seen_verb && verb == "exec" && (word == "--" || positional.len() == 2) {
            // Everything after `--`, or after the Pod and a first word of the old form, is the command.
            let from = if word == "--" { i + 1 } else { i };
            unnamed = positional.is_empty();
            positional.extend(tokens[from..].iter().copied());
            break;
        }
        // A pipe, a redirection (`2>&1`) or the next command ends it, glued to a word or not (`pod|grep x`).
        // A `<placeholder>` is a word of its own.
        let placeholder = word.len() > 2 && word.starts_with('<') && word.ends_with('>');
        let end = word.find(['|', '>', ';', '&']).filter(|_| !placeholder);
        let t = word[..end.unwrap_or(word.len())].trim_matches(['"', '\'', '\\']);
        if t.is_empty() || t == "--" || (end.is_some() && t.bytes().all(|b| b.is_ascii_digit())) {
            break;
        }
        if t.len() > 1
            && let Some(flag) = t.strip_prefix('-')
        {
            let flag = flag
                .trim_start_matches(|c: char| !flag.starts_with('-') && boolean(&format!("-{c}")));
            if flag.is_empty() {
                i += 1;
                continue;
            }
            let (name, inline) = match flag.split_once('=') {
                Some((f, v)) => (format!("-{f}"), Some(v)),
                None if !flag.starts_with('-') && flag.chars().nth(1).is_some() => {
                    let (letter, value) =
                        flag.split_at(flag.chars().next().map_or(0, char::len_utf8));
                    (format!("-{letter}"), Some(value))
                }
                None => (format!("-{flag}"), None),
            };
            if matches!(name.as_str(), "-l" | "--selector") {
                return seen_verb.then(PodCommand::default);
            }
            if boolean(&name) {
                i += 1;
                continue;
            }
            let value = inline
                .or_else(|| tokens.get(i + 1).copied())
                .map(|v| v.trim_matches(['"', '\'', '\\']));
            match name.as_str() {
                "-n" | "--namespace" => out.namespace = value.map(str::to_string),
                "-c" | "--container" => out.container = value.map(str::to_string),
                // exec's old `-p POD`.
                "-p" | "--pod" => out.pod = value.map(str::to_string),
                _ => {}
            }
            i += if inline.is_some() { 1 } else { 2 };
            continue;
        }
        if !seen_verb {
            if t != verb {
                return None;
            }
            seen_verb = true;
        } else {
            positional.push(t);
        }
        if end.is_some() {
            break;
        }
        i += 1;
    }
    if !seen_verb {
        return None;
    }
    out.namespace = out.namespace.filter(|n| is_dns_label(n));
    out.container = out.container.filter(|c| is_dns_label(c));
    // `kubectl exec -p POD -- CMD` names its Pod by the flag, `-f FILE` by a file: every word is the command's.
    if out.pod.is_some() || unnamed {
        out.command = positional.join(" ");
        return Some(out);
    }
    let Some((first, rest)) = positional.split_first() else {
        return Some(out);
    };
    if verb == "exec" {
        out.command = rest.join(" ");
    }
    let (kind, name) = first.split_once('/').unwrap_or(("pod", first));
    if !matches!(kind, "pod" | "pods" | "po") {
        return Some(PodCommand {
            command: out.command,
            ..Default::default()
        });
    }
    // An exec's Pod is only compared with the Pod in question, so a placeholder (`$POD`, `<pod-name>`) or a
    // command substitution stays a Pod the paste does not name; a logs command names the writer of its lines.
    if verb == "logs" && !is_dns_subdomain(name) {
        return None;
    }
    out.pod = Some(name.to_string());
    // `kubectl logs POD CONTAINER`.
    if verb == "logs" && out.container.is_none() {
        out.container = rest
            .first()
            .map(|c| c.to_string())
            .filter(|c| is_dns_label(c));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(pod: &str, ns: Option<&str>, ctr: Option<&str>, command: &str) -> PodCommand {
        PodCommand {
            pod: Some(pod.to_string()),
            namespace: ns.map(str::to_string),
            container: ctr.map(str::to_string),
            command: command.to_string(),
        }
    }

    #[test]
    fn a_pasted_logs_command_says_whose_log_it_is() {
        for (line, want) in [
            (
                "(base) coredump@Deceneu GPU % oc logs nvidia-device-plugin-daemonset-pfrlf -c toolkit-validation -n gpu-operator-resources",
                cmd(
                    "nvidia-device-plugin-daemonset-pfrlf",
                    Some("gpu-operator-resources"),
                    Some("toolkit-validation"),
                    "",
                ),
            ),
            (
                "sudo k3s kubectl logs pod/nvidia-device-plugin-daemonset-6t7sj --namespace=kube-system",
                cmd(
                    "nvidia-device-plugin-daemonset-6t7sj",
                    Some("kube-system"),
                    None,
                    "",
                ),
            ),
            (
                "kubectl logs -n koordinator-system koordlet-fcmn4 |grep GPUEnv",
                cmd("koordlet-fcmn4", Some("koordinator-system"), None, ""),
            ),
            (
                "root@XP005:/home/gpu-monitoring-tools# kubectl logs -f node-exporter-c99c5 -c nvidia-dcgm-exporter",
                cmd(
                    "node-exporter-c99c5",
                    None,
                    Some("nvidia-dcgm-exporter"),
                    "",
                ),
            ),
            (
                "$ kubectl logs gpu-feature-discovery-2mwxm gpu-feature-discovery",
                cmd(
                    "gpu-feature-discovery-2mwxm",
                    None,
                    Some("gpu-feature-discovery"),
                    "",
                ),
            ),
            (
                "kubectl logs --request-timeout 5s -nkube-system po/nvidia-device-plugin-abc|tail",
                cmd("nvidia-device-plugin-abc", Some("kube-system"), None, ""),
            ),
            (
                "microk8s.kubectl -v 6 logs --as admin nvidia-device-plugin-abc>out.log",
                cmd("nvidia-device-plugin-abc", None, None, ""),
            ),
            (
                "kubectl logs -fn kube-system nvidia-device-plugin-x 2>&1 | grep err",
                cmd("nvidia-device-plugin-x", Some("kube-system"), None, ""),
            ),
            (
                "kubectl logs 'nvidia-device-plugin-x' --disable-compression -c 'toolkit-validation' -n kube-system",
                cmd(
                    "nvidia-device-plugin-x",
                    Some("kube-system"),
                    Some("toolkit-validation"),
                    "",
                ),
            ),
            // Prompts of oh-my-zsh (with a directory and a git state) and cmd.exe, an environment variable, and
            // a boolean flag of kubectl's with a value-like name.
            (
                "➜  gpu-operator git:(master) ✗ oc logs nvidia-device-plugin-x -n kube-system",
                cmd("nvidia-device-plugin-x", Some("kube-system"), None, ""),
            ),
            (
                "➜  helm git:(main) ✗ kubectl logs nvidia-device-plugin-x -n kube-system",
                cmd("nvidia-device-plugin-x", Some("kube-system"), None, ""),
            ),
            (
                "C:\\Users\\me>kubectl logs nvidia-device-plugin-x -n kube-system",
                cmd("nvidia-device-plugin-x", Some("kube-system"), None, ""),
            ),
            (
                "KUBECONFIG=/etc/rancher/k3s/k3s.yaml kubectl logs nvidia-device-plugin-x -n kube-system",
                cmd("nvidia-device-plugin-x", Some("kube-system"), None, ""),
            ),
            (
                "kubectl logs --insecure-skip-tls-verify-backend nvidia-device-plugin-x -c toolkit-validation",
                cmd(
                    "nvidia-device-plugin-x",
                    None,
                    Some("toolkit-validation"),
                    "",
                ),
            ),
        ] {
            assert_eq!(logs_command(line), Some(want), "{line}");
        }
        // A flag mangled by an editor's autocorrect (`-—previous`, `-–context`) or one of another alphabet is a
        // flag like any other, not a byte to cut.
        for line in [
            "kubectl logs nvidia-device-plugin-x -—previous",
            "kubectl logs -é nvidia-device-plugin-x",
        ] {
            assert!(logs_command(line).is_some(), "{line}");
        }
        // (kubectl itself takes `-–context`'s dash for a flag and `prod` for the verb.)
        assert_eq!(
            logs_command("kubectl -–context prod logs nvidia-device-plugin-x"),
            None
        );
        // A selector or another kind reads no one Pod; prose and other commands are no logs command.
        for line in [
            "kubectl logs -n gpu-operator -l app=nvidia-operator-validator -c driver-validation",
            "kubectl logs ds/nvidia-device-plugin-daemonset -n kube-system",
        ] {
            assert_eq!(logs_command(line), Some(PodCommand::default()), "{line}");
        }
        for line in [
            "Then I ran oc logs on the plugin pod",
            "kubectl get pods -A",
            "kubectl get pods | kubectl logs x",
            "kubectl exec -it x -- nvidia-smi",
        ] {
            assert_eq!(logs_command(line), None, "{line}");
        }
    }

    #[test]
    fn a_pasted_exec_command_says_what_runs_in_which_pod() {
        for (line, want) in [
            (
                "$ kubectl exec -it gpu-pod -- nvidia-smi -L",
                cmd("gpu-pod", None, None, "nvidia-smi -L"),
            ),
            (
                "kubectl -n ml exec -ti pod/trainer-0 -c main -- bash -c 'nvidia-smi -L'",
                cmd(
                    "trainer-0",
                    Some("ml"),
                    Some("main"),
                    "bash -c 'nvidia-smi -L'",
                ),
            ),
            // The old form: the words after the Pod are the command, flags among them too.
            (
                "root@master:~# kubectl exec cuda-test nvidia-smi -L",
                cmd("cuda-test", None, None, "nvidia-smi -L"),
            ),
            (
                "kubectl exec --namespace=gpu gpu-pod -- nvidia-smi -L GPU 0: Tesla T4 (UUID: GPU-1)",
                cmd(
                    "gpu-pod",
                    Some("gpu"),
                    None,
                    "nvidia-smi -L GPU 0: Tesla T4 (UUID: GPU-1)",
                ),
            ),
        ] {
            assert_eq!(exec_command(line), Some(want), "{line}");
        }
        // kubectl picks a DaemonSet's or a Deployment's Pod: the paste names none.
        assert_eq!(
            exec_command("kubectl exec -n gpu-operator ds/nvidia-driver-daemonset -- nvidia-smi"),
            Some(PodCommand {
                command: "nvidia-smi".into(),
                ..Default::default()
            })
        );
        // A placeholder or a command substitution is a Pod the paste does not name, not no command.
        for (line, pod) in [
            ("kubectl exec -it $POD -- nvidia-smi -L", "$POD"),
            ("kubectl exec -it <pod-name> -- nvidia-smi -L", "<pod-name>"),
            (
                "kubectl exec $(kubectl get pods -l app=cuda -o name) -- nvidia-smi -L",
                "$(kubectl",
            ),
        ] {
            let exec = exec_command(line).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(exec.pod.as_deref(), Some(pod), "{line}");
            assert!(exec.command.contains("nvidia-smi -L"), "{line}");
        }
        // exec's `-f` is `--filename` and `-p` the old `--pod`: they take a value, unlike logs' `-f` and `-p`.
        assert_eq!(
            exec_command("kubectl exec -f pod.yaml -- nvidia-smi -L").map(|e| e.pod),
            Some(None)
        );
        assert_eq!(
            exec_command("kubectl exec -p gpu-pod -c main -- nvidia-smi -L"),
            Some(cmd("gpu-pod", None, Some("main"), "nvidia-smi -L"))
        );
        for line in [
            "I ran kubectl exec into the pod and nvidia-smi works",
            "kubectl logs gpu-pod",
        ] {
            assert_eq!(exec_command(line), None, "{line}");
        }
    }

    #[test]
    fn cluster_commands() {
        for line in [
            " oc get pods",
            "helm upgrade --install gpu-operator nvidia/gpu-operator -n gpu-operator",
            "$ microk8s enable gpu",
            "root@node:~# k3s ctr images ls",
            "[eje@localhost ~]$ oc get node -o wide",
            "(base) me@mac dir % helm install gpu-operator nvidia/gpu-operator",
            "➜ helm install gpu-operator nvidia/gpu-operator -n gpu-operator",
            "➜  gpu-operator git:(main) ✗ helm upgrade gpu-operator nvidia/gpu-operator",
        ] {
            assert!(is_cluster_command(line), "{line}");
        }
        for line in [
            "root@gpu-node:~# nvidia-smi Failed to initialize NVML: Driver/library version mismatch",
            "helm",
            "kubectl: error: unknown flag",
            "Error: failed to create FS watcher: too many open files",
        ] {
            assert!(!is_cluster_command(line), "{line}");
        }
    }

    #[test]
    fn command_lines() {
        for line in [
            "$ nvidia-smi",
            "root@node:~# journalctl -u kubelet",
            "[root@node ~]# crictl ps",
            " oc get pods",
            "sudo k3s kubectl get nodes",
            "# kubectl get pods",
        ] {
            assert!(is_command_line(line), "{line}");
        }
        for line in [
            "# ... 200 lines cut ...",
            "kubectl: error: unknown flag",
            "Then I ran oc logs on the plugin pod",
        ] {
            assert!(!is_command_line(line), "{line}");
        }
    }

    #[test]
    fn a_command_typed_over_several_lines_is_one() {
        let lines = [
            "$ kubectl logs p \\",
            "    -n ns \\",
            "  -c ctr",
            "error: x \\",
            "next",
        ];
        let joined: Vec<_> = join_continued(&lines)
            .into_iter()
            .map(|l| l.map(|l| l.into_owned()))
            .collect();
        assert_eq!(
            joined,
            [
                Some("$ kubectl logs p -n ns -c ctr".to_string()),
                None,
                None,
                // A backslash at the end of what a command printed continues nothing.
                Some("error: x \\".to_string()),
                Some("next".to_string()),
            ]
        );
        assert_eq!(
            logs_command("$ kubectl logs p -n ns -c ctr"),
            Some(cmd("p", Some("ns"), Some("ctr"), ""))
        );
        let prompted = ["$ kubectl logs p \\", "> -n ns \\", "> -c ctr"];
        assert_eq!(
            join_continued(&prompted)[0].as_deref(),
            Some("$ kubectl logs p -n ns -c ctr")
        );
    }
}
