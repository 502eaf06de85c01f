//! Shell completion scripts: bash, zsh and fish for `kubectl-gpuwhy` itself (clap_complete), and the
//! `kubectl_complete-gpuwhy` helper that kubectl ≥1.26 runs for `kubectl gpuwhy <TAB>`. It owns the helper's
//! protocol and its generation from `cli::command()`; it does not run anything.
//!
//! kubectl's side of the protocol (k8s.io/kubectl/pkg/cmd/plugin/plugin_completion.go): for
//! `kubectl gpuwhy ARGS… <TAB>`, kubectl looks up `kubectl_complete-gpuwhy` on PATH and runs it with ARGS followed
//! by the word being completed (`""` for a new word), in kubectl's environment. Each non-empty stdout line is a
//! candidate (`word<TAB>description`); a last line `:<n>` is a cobra ShellCompDirective. A non-zero exit means no
//! candidates. The helper is a POSIX sh script, so it needs no second binary and no Rust at completion time.

use std::fmt::Write as _;
use std::io::{self, Write};

use clap::builder::ValueHint;

use crate::cli::{self, Shell};
use crate::rules::RULES;

/// The file name kubectl looks for on PATH to complete `kubectl gpuwhy`.
pub const KUBECTL_HELPER: &str = "kubectl_complete-gpuwhy";

/// The timeout the helper gives each `kubectl get` it runs, so a slow cluster never hangs the shell.
pub const LIST_TIMEOUT: &str = "2s";

/// Writes the completion script for `shell`.
pub fn write(shell: Shell, out: &mut dyn Write) -> io::Result<()> {
    let generator = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
        Shell::Kubectl => return out.write_all(kubectl_helper().as_bytes()),
    };
    let mut cmd = cli::command();
    clap_complete::generate(generator, &mut cmd, "kubectl-gpuwhy", out);
    Ok(())
}

/// What a flag's value is completed with.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// `enum:<key>`: the flag's possible values, printed by `gw_enum <key>`.
    Enum(String),
    /// File names (the shell's own completion, directive 0).
    File,
    /// Namespaces from the cluster.
    Namespace,
    /// Context names from the kubeconfig.
    Context,
    /// The kubeconfig path: file names, and remembered for the cluster queries.
    Kubeconfig,
    /// Free text: nothing to offer.
    Any,
}

impl Kind {
    fn as_shell(&self) -> String {
        match self {
            Kind::Enum(key) => format!("enum:{key}"),
            Kind::File => "file".into(),
            Kind::Namespace => "namespace".into(),
            Kind::Context => "context".into(),
            Kind::Kubeconfig => "kubeconfig".into(),
            Kind::Any => "any".into(),
        }
    }
}

#[derive(Debug)]
struct Flag {
    /// `--long`, its visible aliases and `-s`, as typed.
    spellings: Vec<String>,
    help: String,
    /// `None` for a switch.
    value: Option<Kind>,
}

#[derive(Debug)]
struct Scope {
    /// `""` for `kubectl gpuwhy` itself, else the subcommand's name.
    name: String,
    about: String,
    flags: Vec<Flag>,
    /// Candidates for the scope's first positional argument (the root's are Pods, from the cluster).
    args: Vec<(String, String)>,
}

/// The whole command line, as the helper needs it.
#[derive(Debug)]
struct Model {
    scopes: Vec<Scope>,
    /// Enum keys and their `(value, help)` pairs, in first-seen order.
    enums: Vec<(String, Vec<(String, String)>)>,
}

/// One line of help: the first sentence, without control characters or tabs (they would break the protocol).
fn one_line(text: &str) -> String {
    let first = text.split('\n').next().unwrap_or("");
    let first = match first.find(". ") {
        Some(i) => &first[..i],
        None => first,
    };
    // clap's own -h/--help text ends with this pointer, which means nothing in a completion menu.
    let first = first
        .trim_end()
        .trim_end_matches(" (see more with '--help')");
    let clean: String = first
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    clean.trim().trim_end_matches('.').to_string()
}

fn help_of(arg: &clap::Arg) -> String {
    arg.get_help()
        .map(|h| one_line(&h.to_string()))
        .unwrap_or_default()
}

/// Names that may appear unquoted in the generated `case` patterns and candidate lists.
fn is_plain(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The visible possible values of `arg`, with their help.
fn possible_values(arg: &clap::Arg) -> Vec<(String, String)> {
    arg.get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set() && is_plain(v.get_name()))
        .map(|v| {
            (
                v.get_name().to_string(),
                v.get_help()
                    .map(|h| one_line(&h.to_string()))
                    .unwrap_or_default(),
            )
        })
        .collect()
}

fn kind_of(
    arg: &clap::Arg,
    scope: &str,
    enums: &mut Vec<(String, Vec<(String, String)>)>,
) -> Option<Kind> {
    if !arg.get_action().takes_values() {
        return None;
    }
    let long = arg.get_long().unwrap_or("");
    match long {
        "namespace" => return Some(Kind::Namespace),
        "context" => return Some(Kind::Context),
        "kubeconfig" => return Some(Kind::Kubeconfig),
        _ => {}
    }
    let values = possible_values(arg);
    if !values.is_empty() {
        let key = format!("{scope}:{}", arg.get_id().as_str());
        enums.push((key.clone(), values));
        return Some(Kind::Enum(key));
    }
    let by_name = arg.get_value_names().is_some_and(|names| {
        names
            .iter()
            .any(|n| matches!(n.as_str(), "PATH" | "FILE" | "MANIFEST" | "DIR"))
    });
    match arg.get_value_hint() {
        ValueHint::FilePath
        | ValueHint::AnyPath
        | ValueHint::DirPath
        | ValueHint::ExecutablePath => Some(Kind::File),
        _ if by_name => Some(Kind::File),
        _ => Some(Kind::Any),
    }
}

fn scope_of(
    cmd: &clap::Command,
    name: &str,
    enums: &mut Vec<(String, Vec<(String, String)>)>,
) -> Scope {
    let mut flags = Vec::new();
    let mut args = Vec::new();
    for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        if arg.is_positional() {
            if arg.get_index() == Some(1) {
                args = possible_values(arg);
            }
            continue;
        }
        let mut spellings = Vec::new();
        if let Some(long) = arg.get_long() {
            spellings.push(format!("--{long}"));
        }
        for alias in arg.get_visible_aliases().unwrap_or_default() {
            spellings.push(format!("--{alias}"));
        }
        if let Some(short) = arg.get_short() {
            spellings.push(format!("-{short}"));
        }
        spellings.retain(|s| is_plain(s));
        if spellings.is_empty() {
            continue;
        }
        let value = kind_of(arg, name, enums);
        flags.push(Flag {
            spellings,
            help: help_of(arg),
            value,
        });
    }
    if name == "explain" {
        args = RULES
            .iter()
            .map(|r| (r.id.to_string(), r.name.to_string()))
            .collect();
    }
    Scope {
        name: name.to_string(),
        about: cmd
            .get_about()
            .map(|a| one_line(&a.to_string()))
            .unwrap_or_default(),
        flags,
        args,
    }
}

fn model() -> Model {
    let mut cmd = cli::command();
    cmd.build();
    let mut enums = Vec::new();
    let mut scopes = vec![scope_of(&cmd, "", &mut enums)];
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && is_plain(s.get_name()))
    {
        scopes.push(scope_of(sub, sub.get_name(), &mut enums));
    }
    Model { scopes, enums }
}

/// Appends a quoted heredoc that prints `lines` (`word<TAB>help`), indented for a `case` arm.
fn heredoc(s: &mut String, lines: impl IntoIterator<Item = (String, String)>) {
    s.push_str("cat <<'GPUWHY_EOF'\n");
    for (word, help) in lines {
        if help.is_empty() {
            let _ = writeln!(s, "{word}");
        } else {
            let _ = writeln!(s, "{word}\t{help}");
        }
    }
    s.push_str("GPUWHY_EOF\n");
}

/// The `kubectl_complete-gpuwhy` script (POSIX sh), generated from `cli::command()` and the rule table.
pub fn kubectl_helper() -> String {
    let m = model();
    let mut s = String::new();
    s.push_str(&HEADER.replace("@VERSION@", cli::VERSION));

    s.push_str("\n# ---- generated from the command line definition ----\n\n");
    s.push_str("gw_is_subcommand() {\n  case $1 in\n");
    let subs: Vec<&Scope> = m.scopes.iter().filter(|sc| !sc.name.is_empty()).collect();
    if !subs.is_empty() {
        let names: Vec<&str> = subs.iter().map(|sc| sc.name.as_str()).collect();
        let _ = writeln!(s, "  {}) return 0 ;;", names.join("|"));
    }
    s.push_str("  esac\n  return 1\n}\n\n");

    s.push_str("gw_subcommands() {\n");
    heredoc(
        &mut s,
        subs.iter().map(|sc| (sc.name.clone(), sc.about.clone())),
    );
    s.push_str("}\n\n");

    s.push_str("# gw_flags SCOPE: the flags of SCOPE (\"\" is kubectl gpuwhy itself, else a subcommand).\n");
    s.push_str("gw_flags() {\n  case $1 in\n");
    for sc in &m.scopes {
        let _ = writeln!(s, "  '{}')", sc.name);
        heredoc(
            &mut s,
            sc.flags
                .iter()
                .flat_map(|f| f.spellings.iter().map(|sp| (sp.clone(), f.help.clone()))),
        );
        s.push_str("  ;;\n");
    }
    s.push_str("  esac\n}\n\n");

    s.push_str("# gw_kind SCOPE FLAG: what FLAG's value is (enum:KEY, file, namespace, context, kubeconfig, any);\n");
    s.push_str("# nothing for a switch. -n/--namespace, --context and --kubeconfig are always understood.\n");
    s.push_str("gw_kind() {\n  case \"$1 $2\" in\n");
    for sc in &m.scopes {
        for f in &sc.flags {
            if let Some(kind) = &f.value {
                let pats: Vec<String> = f
                    .spellings
                    .iter()
                    .map(|sp| format!("'{} {}'", sc.name, sp))
                    .collect();
                let _ = writeln!(s, "  {}) echo {} ;;", pats.join("|"), kind.as_shell());
            }
        }
    }
    s.push_str("  *' -n'|*' --namespace') echo namespace ;;\n");
    s.push_str("  *' --context') echo context ;;\n");
    s.push_str("  *' --kubeconfig') echo kubeconfig ;;\n");
    s.push_str("  esac\n}\n\n");

    s.push_str("# gw_enum KEY: the values of an enum flag.\n");
    s.push_str("gw_enum() {\n  case $1 in\n");
    for (key, values) in &m.enums {
        let _ = writeln!(s, "  '{key}')");
        heredoc(&mut s, values.iter().cloned());
        s.push_str("  ;;\n");
    }
    s.push_str("  esac\n}\n\n");

    s.push_str("# gw_args SCOPE: candidates for a subcommand's first argument.\n");
    s.push_str("gw_args() {\n  case $1 in\n");
    for sc in subs.iter().filter(|sc| !sc.args.is_empty()) {
        let _ = writeln!(s, "  '{}')", sc.name);
        heredoc(&mut s, sc.args.iter().cloned());
        s.push_str("  ;;\n");
    }
    s.push_str("  esac\n}\n");

    s.push_str(&BODY.replace("@TIMEOUT@", LIST_TIMEOUT));
    s
}

const HEADER: &str = r#"#!/bin/sh
# kubectl_complete-gpuwhy: completion for `kubectl gpuwhy` in kubectl 1.26 or later.
# Generated by `kubectl gpuwhy completion kubectl` from kubectl-gpuwhy @VERSION@;
# generate it again after an upgrade.
#
# Install it as an executable named kubectl_complete-gpuwhy in a directory on PATH:
#   f="${KREW_ROOT:-$HOME/.krew}/bin/kubectl_complete-gpuwhy"
#   kubectl gpuwhy completion kubectl > "$f" && chmod +x "$f"
#
# For `kubectl gpuwhy ARGS... <TAB>`, kubectl runs this file with ARGS and then the word being completed
# ("" for a new word). It prints one candidate per line (word, TAB, description) and then a directive line:
# ":4" (no file names) or ":0" (let the shell complete file names). Pod, namespace and context names come
# from kubectl, with the -n/--namespace, --context and --kubeconfig given in ARGS and a short timeout.

# Callers that follow cobra's own convention put __complete first; kubectl does not. No Pod is named so.
if [ "${1-}" = __complete ]; then shift; fi
"#;

const BODY: &str = r#"
# ---- the completion logic ----

gw_tab=$(printf '\t')

# gw_filter PREFIX: the candidate lines (stdin) whose word starts with PREFIX.
gw_filter() {
  while IFS= read -r gw_line; do
    case ${gw_line%%"$gw_tab"*} in
    "$1"*) printf '%s\n' "$gw_line" ;;
    esac
  done
}

# gw_prepend TEXT: prefixes every non-empty line of stdin with TEXT.
gw_prepend() {
  while IFS= read -r gw_line; do
    if [ -n "$gw_line" ]; then printf '%s%s\n' "$1" "$gw_line"; fi
  done
}

# gw_kubectl ARGS...: kubectl with the connection flags seen on the command line; stderr is dropped.
gw_kubectl() {
  if [ -n "$gw_ns" ]; then set -- "$@" --namespace "$gw_ns"; fi
  if [ -n "$gw_ctx" ]; then set -- "$@" --context "$gw_ctx"; fi
  if [ -n "$gw_kubeconfig" ]; then set -- "$@" --kubeconfig "$gw_kubeconfig"; fi
  kubectl "$@" 2>/dev/null
}

# gw_names TYPE: the names of TYPE objects in the namespace.
gw_names() {
  gw_kubectl get "$1" --request-timeout=@TIMEOUT@ -o custom-columns=:metadata.name --no-headers
}

# gw_set KIND VALUE: remembers a namespace, context or kubeconfig given on the command line.
gw_set() {
  case $1 in
  namespace) gw_ns=$2 ;;
  context) gw_ctx=$2 ;;
  kubeconfig)
    gw_kubeconfig=$2
    case $gw_kubeconfig in "~/"*) gw_kubeconfig=$HOME/${gw_kubeconfig#"~/"} ;; esac
    ;;
  esac
}

# gw_values KIND TYPED PREFIX: completes a flag's value; PREFIX ("--flag=") is put back in front.
gw_values() {
  case $1 in
  enum:*) gw_enum "${1#enum:}" | gw_prepend "$3" | gw_filter "$3$2" ;;
  namespace) gw_names namespaces | gw_prepend "$3" | gw_filter "$3$2" ;;
  context)
    if [ -n "$gw_kubeconfig" ]; then
      kubectl config get-contexts -o name --kubeconfig "$gw_kubeconfig" 2>/dev/null
    else
      kubectl config get-contexts -o name 2>/dev/null
    fi | gw_prepend "$3" | gw_filter "$3$2"
    ;;
  file|kubeconfig) gw_directive=0 ;;
  esac
}

gw_scope='' gw_ns='' gw_ctx='' gw_kubeconfig='' gw_want='' gw_dashdash='' gw_npos=0 gw_nflags=0
while [ $# -gt 1 ]; do
  gw_word=$1
  shift
  if [ -n "$gw_want" ]; then
    gw_set "$gw_want" "$gw_word"
    gw_want=''
    continue
  fi
  if [ -n "$gw_dashdash" ]; then
    gw_npos=$((gw_npos + 1))
    continue
  fi
  case $gw_word in
  --) gw_dashdash=1 ;;
  --*=*)
    gw_nflags=$((gw_nflags + 1))
    gw_set "$(gw_kind "$gw_scope" "${gw_word%%=*}")" "${gw_word#*=}"
    ;;
  -n?*)
    gw_nflags=$((gw_nflags + 1))
    gw_value=${gw_word#-n}
    gw_set namespace "${gw_value#=}"
    ;;
  -?*)
    gw_nflags=$((gw_nflags + 1))
    gw_want=$(gw_kind "$gw_scope" "$gw_word")
    ;;
  *)
    if [ -z "$gw_scope" ] && [ "$gw_npos" -eq 0 ] && [ "$gw_nflags" -eq 0 ] && gw_is_subcommand "$gw_word"; then
      gw_scope=$gw_word
    else
      gw_npos=$((gw_npos + 1))
    fi
    ;;
  esac
done
gw_cur=${1-}
gw_directive=4

if [ -n "$gw_want" ]; then
  gw_values "$gw_want" "$gw_cur" ''
elif [ -z "$gw_dashdash" ] && [ "${gw_cur#--*=}" != "$gw_cur" ]; then
  gw_flag=${gw_cur%%=*}
  gw_values "$(gw_kind "$gw_scope" "$gw_flag")" "${gw_cur#*=}" "$gw_flag="
elif [ -z "$gw_dashdash" ] && [ "${gw_cur#-}" != "$gw_cur" ]; then
  gw_flags "$gw_scope" | gw_filter "$gw_cur"
elif [ "$gw_npos" -eq 0 ]; then
  if [ -n "$gw_scope" ]; then
    gw_args "$gw_scope" | gw_filter "$gw_cur"
  else
    case $gw_cur in
    pod/* | pods/* | po/* | deployment/* | deployments/* | deploy/* | job/* | jobs/* | replicaset/* | \
      replicasets/* | rs/* | statefulset/* | statefulsets/* | sts/*)
      gw_type=${gw_cur%%/*}
      gw_names "$gw_type" | gw_prepend "$gw_type/" | gw_filter "$gw_cur"
      ;;
    *)
      if [ "$gw_nflags" -eq 0 ]; then gw_subcommands | gw_filter "$gw_cur"; fi
      gw_names pods | gw_filter "$gw_cur"
      ;;
    esac
  fi
fi
printf ':%s\n' "$gw_directive"
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    fn helper_text() -> String {
        let mut out = Vec::new();
        write(Shell::Kubectl, &mut out).expect("write to a Vec");
        String::from_utf8(out).expect("the helper is UTF-8")
    }

    /// A scratch directory with the helper and a fake `kubectl` that logs its arguments and prints names.
    struct Sandbox {
        dir: PathBuf,
    }

    impl Sandbox {
        fn new(tag: &str) -> Sandbox {
            let dir = std::env::temp_dir()
                .join(format!("gpuwhy-completion-{}-{tag}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("create sandbox");
            std::fs::write(dir.join(KUBECTL_HELPER), helper_text()).expect("write helper");
            let fake = "#!/bin/sh\nprintf '%s\\n' \"$*\" >> \"$(dirname \"$0\")/calls\"\n\
                case \"$1 $2\" in\n\
                'get pods') printf 'gpu-busy\\ngpu-taint\\ncpu-only\\n' ;;\n\
                'get namespaces') printf 'default\\ngpu-lab\\n' ;;\n\
                'get deploy') printf 'trainer\\n' ;;\n\
                'config get-contexts') printf 'admin\\nrestricted\\n' ;;\n\
                esac\n";
            std::fs::write(dir.join("kubectl"), fake).expect("write fake kubectl");
            for f in [KUBECTL_HELPER, "kubectl"] {
                chmod_x(&dir.join(f));
            }
            Sandbox { dir }
        }

        /// Runs the helper with `shell` as kubectl would, and returns (stdout lines, kubectl calls).
        fn run(&self, shell: &str, args: &[&str]) -> (Vec<String>, Vec<String>) {
            let _ = std::fs::remove_file(self.dir.join("calls"));
            let path = format!("{}:/usr/bin:/bin", self.dir.display());
            let out = Command::new(shell)
                .arg(self.dir.join(KUBECTL_HELPER))
                .args(args)
                .env("PATH", path)
                .env("HOME", &self.dir)
                .output()
                .unwrap_or_else(|e| panic!("cannot run {shell}: {e}"));
            assert!(
                out.status.success(),
                "{shell} helper {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                out.stderr.is_empty(),
                "{shell} helper {args:?} wrote stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let lines = String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(str::to_string)
                .collect();
            let calls = std::fs::read_to_string(self.dir.join("calls")).unwrap_or_default();
            (lines, calls.lines().map(str::to_string).collect())
        }
    }

    impl Drop for Sandbox {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    #[cfg(unix)]
    fn chmod_x(p: &Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    #[cfg(not(unix))]
    fn chmod_x(_: &Path) {}

    fn words(lines: &[String]) -> Vec<&str> {
        lines
            .iter()
            .map(|l| l.split('\t').next().unwrap_or(""))
            .collect()
    }

    /// The shells the helper must work in: dash (Debian's sh), and bash as macOS's sh is.
    fn shells() -> Vec<&'static str> {
        let mut v = vec!["sh"];
        if Command::new("bash")
            .arg("-c")
            .arg("true")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            v.push("bash");
        }
        v
    }

    #[test]
    fn helper_lists_every_visible_flag_and_subcommand_of_the_cli() {
        let text = helper_text();
        assert!(text.starts_with("#!/bin/sh\n"));
        assert!(
            text.contains(cli::VERSION),
            "the helper names the version it was generated from"
        );
        let mut cmd = cli::command();
        cmd.build();
        for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
            if let Some(long) = arg.get_long() {
                assert!(
                    text.contains(&format!("\n--{long}")),
                    "--{long} missing from the helper"
                );
            }
        }
        for sub in ["rules", "explain", "completion"] {
            assert!(cmd.find_subcommand(sub).is_some(), "the CLI lost `{sub}`");
            assert!(
                text.contains(&format!("\n{sub}\t")),
                "subcommand {sub} missing from the helper"
            );
        }
    }

    #[test]
    fn helper_is_valid_sh_and_free_of_tabs_inside_words() {
        let sb = Sandbox::new("syntax");
        for shell in shells() {
            let out = Command::new(shell)
                .arg("-n")
                .arg(sb.dir.join(KUBECTL_HELPER))
                .output()
                .expect("sh -n");
            assert!(
                out.status.success(),
                "{shell} -n: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        for line in helper_text().lines() {
            assert!(
                line.matches('\t').count() <= 1,
                "a candidate line has two tabs: {line:?}"
            );
        }
    }

    #[test]
    fn new_word_offers_subcommands_and_pods_without_file_names() {
        let sb = Sandbox::new("root");
        for shell in shells() {
            let (lines, calls) = sb.run(shell, &[""]);
            assert_eq!(
                lines.last().map(String::as_str),
                Some(":4"),
                "{shell}: {lines:?}"
            );
            let w = words(&lines);
            for want in [
                "rules",
                "explain",
                "completion",
                "gpu-busy",
                "gpu-taint",
                "cpu-only",
            ] {
                assert!(w.contains(&want), "{shell}: {want} missing from {lines:?}");
            }
            assert_eq!(
                calls,
                ["get pods --request-timeout=2s -o custom-columns=:metadata.name --no-headers"]
            );

            let (lines, _) = sb.run(shell, &["gpu-"]);
            assert_eq!(
                words(&lines),
                ["gpu-busy", "gpu-taint", ":4"],
                "{shell}: prefix filter"
            );
        }
    }

    #[test]
    fn connection_flags_are_passed_to_kubectl() {
        let sb = Sandbox::new("conn");
        for shell in shells() {
            let (lines, calls) = sb.run(
                shell,
                &[
                    "-n",
                    "gpu-lab",
                    "--context=restricted",
                    "--kubeconfig",
                    "~/k c",
                    "",
                ],
            );
            assert!(words(&lines).contains(&"gpu-busy"), "{shell}: {lines:?}");
            let home = sb.dir.display();
            assert_eq!(
                calls,
                [format!(
                    "get pods --request-timeout=2s -o custom-columns=:metadata.name --no-headers \
                     --namespace gpu-lab --context restricted --kubeconfig {home}/k c"
                )],
                "{shell}"
            );
            let (_, calls) = sb.run(shell, &["--namespace=ml", "-nother", "g"]);
            assert!(
                calls[0].ends_with("--namespace other"),
                "{shell}: the last -n wins: {calls:?}"
            );
            let (_, calls) = sb.run(shell, &["__complete", "-n=ml", ""]);
            assert!(
                calls[0].ends_with("--namespace ml"),
                "{shell}: cobra-style __complete first: {calls:?}"
            );
        }
    }

    #[test]
    fn flags_and_their_values_complete() {
        let sb = Sandbox::new("flags");
        for shell in shells() {
            let (lines, calls) = sb.run(shell, &["--"]);
            let w = words(&lines);
            assert!(
                w.contains(&"--output") && w.contains(&"--from-file") && w.contains(&"--help"),
                "{shell}: {w:?}"
            );
            assert!(
                !w.contains(&"-o"),
                "{shell}: `--` asks for long flags only: {w:?}"
            );
            assert_eq!(w.last(), Some(&":4"));
            assert!(
                calls.is_empty(),
                "{shell}: flags need no cluster: {calls:?}"
            );
            assert!(
                lines.iter().any(|l| l.starts_with("--output\t")),
                "{shell}: flags carry a description"
            );

            let (lines, _) = sb.run(shell, &["-o", ""]);
            assert_eq!(words(&lines), ["text", "json", "markdown", ":4"], "{shell}");
            let (lines, _) = sb.run(shell, &["--output=j"]);
            assert_eq!(words(&lines), ["--output=json", ":4"], "{shell}");
            let (lines, _) = sb.run(shell, &["--from-file", ""]);
            assert_eq!(lines, [":0"], "{shell}: a path falls back to file names");
            let (lines, _) = sb.run(shell, &["-n", ""]);
            assert_eq!(words(&lines), ["default", "gpu-lab", ":4"], "{shell}");
            let (lines, _) = sb.run(shell, &["--context", "r"]);
            assert_eq!(words(&lines), ["restricted", ":4"], "{shell}");
            // After a flag, a pod is still completed, but not subcommands (clap rejects `-o json rules`).
            let (lines, _) = sb.run(shell, &["-o", "json", ""]);
            let w = words(&lines);
            assert!(
                w.contains(&"gpu-busy") && !w.contains(&"rules"),
                "{shell}: {w:?}"
            );
            // One positional only.
            let (lines, calls) = sb.run(shell, &["gpu-busy", ""]);
            assert_eq!(lines, [":4"], "{shell}");
            assert!(calls.is_empty());
        }
    }

    #[test]
    fn subcommands_complete_their_own_arguments() {
        let sb = Sandbox::new("subs");
        for shell in shells() {
            let (lines, calls) = sb.run(shell, &["completion", ""]);
            assert_eq!(
                words(&lines),
                ["bash", "zsh", "fish", "kubectl", ":4"],
                "{shell}"
            );
            assert!(calls.is_empty());
            let (lines, _) = sb.run(shell, &["explain", "GW1"]);
            let w = words(&lines);
            assert!(
                !w.is_empty() && w[..w.len() - 1].iter().all(|id| id.starts_with("GW1")),
                "{shell}: {w:?}"
            );
            assert_eq!(
                w.len() - 1,
                RULES.iter().filter(|r| r.id.starts_with("GW1")).count()
            );
            let (lines, _) = sb.run(shell, &["rules", "-o", "m"]);
            assert_eq!(words(&lines), ["markdown", ":4"], "{shell}");
            let (lines, _) = sb.run(shell, &["rules", "--"]);
            assert!(words(&lines).contains(&"--output"), "{shell}: {lines:?}");
        }
    }

    #[test]
    fn type_slash_name_completes_from_that_type() {
        let sb = Sandbox::new("typed");
        for shell in shells() {
            let (lines, calls) = sb.run(shell, &["deploy/"]);
            assert_eq!(words(&lines), ["deploy/trainer", ":4"], "{shell}");
            assert_eq!(
                calls,
                ["get deploy --request-timeout=2s -o custom-columns=:metadata.name --no-headers"]
            );
        }
    }

    #[test]
    fn bash_zsh_fish_still_come_from_clap() {
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            let mut out = Vec::new();
            write(shell, &mut out).expect("write");
            let text = String::from_utf8(out).expect("utf-8");
            assert!(text.contains("kubectl-gpuwhy"), "{shell:?}");
        }
    }

    #[test]
    fn one_line_keeps_the_first_sentence_without_control_characters() {
        assert_eq!(one_line("Output format."), "Output format");
        assert_eq!(one_line("Read text. `-` reads stdin.\nMore"), "Read text");
        assert_eq!(one_line("a\tb\u{1b}[31m"), "a b [31m");
    }
}
