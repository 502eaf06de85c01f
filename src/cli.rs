//! The command line, as clap parses it. Only raw flags live here; `config` resolves them (and the
//! environment) once into `Config`. Every flag's `///` doc is its help text.

use clap::{Parser, Subcommand, ValueEnum};

use crate::render::Format;

/// `--version` text: the crate version and the commit it was built from.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("GPUWHY_COMMIT"),
    ")"
);

#[derive(Debug, Parser)]
#[command(
    name = "kubectl-gpuwhy",
    bin_name = "kubectl gpuwhy",
    version = VERSION,
    about = "Explain why a GPU Pod will not start: admission, scheduling, device admission or runtime.",
    long_about = "Explain why a GPU Pod will not start. Reads the Pod's events, conditions and container states \
(or pasted text), names the gate that stopped it (admission, scheduling, device admission, runtime), the cause, \
the evidence, and the next command to run.\n\nExit codes: 0 nothing blocks, 1 a blocking cause was found, \
2 usage or input error, 3 the cluster could not be reached.",
    args_conflicts_with_subcommands = true,
    disable_help_subcommand = true
)]
pub struct Args {
    /// The Pod to diagnose: NAME, or TYPE/NAME for the Pods of a workload (deploy/, rs/, job/, sts/).
    #[arg(value_name = "POD | TYPE/NAME")]
    pub target: Option<String>,

    /// Namespace (defaults to the context's namespace).
    #[arg(short = 'n', long, value_name = "NS")]
    pub namespace: Option<String>,

    /// Path to the kubeconfig file (defaults to KUBECONFIG, then ~/.kube/config, then in-cluster).
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<String>,

    /// The kubeconfig context to use.
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,

    /// How long to wait for the cluster before giving up (exit 3): 30s, 1m, 500ms, or seconds; 0 waits forever.
    #[arg(long, value_name = "DURATION", default_value = "30s")]
    pub request_timeout: String,

    /// Read pasted text instead of the cluster: describe output, an events table, Pod/Event JSON or YAML,
    /// bare messages or log lines. `-` reads standard input.
    #[arg(
        long = "from-file",
        short = 'f',
        value_name = "PATH",
        conflicts_with = "target"
    )]
    pub from_file: Option<String>,

    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Text)]
    pub output: Format,

    /// When to colour text output (NO_COLOR and a non-terminal stdout turn `auto` off).
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every rule: id, name, category, gate and summary.
    Rules {
        /// Output format (markdown is the README's catalogue).
        #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Text)]
        output: Format,
    },
    /// Print one rule's explanation, next commands, fix and fixtures.
    Explain {
        /// A rule id (GW103) or name (untolerated-taint).
        id: String,
    },
    /// Print a shell completion script (`kubectl` prints the kubectl_complete-gpuwhy helper).
    Completion {
        /// The shell.
        #[arg(value_enum)]
        shell: Shell,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    /// The `kubectl_complete-gpuwhy` script kubectl ≥1.26 runs to complete plugin arguments.
    Kubectl,
}

/// The clap command, for completion scripts and tests.
pub fn command() -> clap::Command {
    <Args as clap::CommandFactory>::command()
}

#[cfg(test)]
mod tests {
    #[test]
    fn verify_cli() {
        super::command().debug_assert();
    }
}
