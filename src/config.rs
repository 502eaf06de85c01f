//! Resolves the parsed flags and the environment (NO_COLOR, whether stdout is a terminal) into `Config`,
//! once. Nothing after this reads the environment for output decisions.

use std::time::Duration;

use crate::cli::{Args, ColorChoice, Command, Shell};
use crate::collect::TargetSpec;
use crate::collect::client::KubeOptions;
use crate::render::{Format, Styles};

/// What to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Read the cluster.
    Live {
        target: TargetSpec,
        kube: KubeOptions,
    },
    /// Diagnose pasted text from a path, or `-` for stdin.
    Offline {
        path: String,
    },
    Rules {
        format: Format,
    },
    Explain {
        id: String,
    },
    Completion {
        shell: Shell,
    },
}

#[derive(Debug, Clone)]
pub struct Config {
    pub mode: Mode,
    pub format: Format,
    pub color: bool,
}

impl Config {
    pub fn styles(&self) -> Styles {
        if self.color && self.format == Format::Text {
            Styles::colored()
        } else {
            Styles::default()
        }
    }
}

/// The environment facts `resolve` needs, read by `main` (so tests can fake them).
#[derive(Debug, Clone, Default)]
pub struct Env {
    pub no_color: bool,
    pub stdout_is_terminal: bool,
}

impl Env {
    pub fn from_process() -> Env {
        use std::io::IsTerminal;
        Env {
            no_color: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
            stdout_is_terminal: std::io::stdout().is_terminal(),
        }
    }
}

/// Resolves flags and environment into a Config, or a usage error.
pub fn resolve(args: Args, env: &Env) -> Result<Config, crate::Error> {
    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => env.stdout_is_terminal && !env.no_color,
    };
    let (mode, format) = match args.command {
        Some(Command::Rules { output }) => (Mode::Rules { format: output }, output),
        Some(Command::Explain { id }) => (Mode::Explain { id }, Format::Text),
        Some(Command::Completion { shell }) => (Mode::Completion { shell }, Format::Text),
        None => match (args.from_file, args.target) {
            (Some(path), _) => (Mode::Offline { path }, args.output),
            (None, Some(target)) => {
                let kube = KubeOptions {
                    kubeconfig: args.kubeconfig,
                    context: args.context,
                    namespace: args.namespace,
                    request_timeout: parse_duration(&args.request_timeout)?,
                };
                (
                    Mode::Live {
                        target: TargetSpec::parse(&target)?,
                        kube,
                    },
                    args.output,
                )
            }
            (None, None) => {
                return Err(crate::Error::Usage(
                    "nothing to diagnose: give a POD (or TYPE/NAME), or --from-file PATH (- for stdin); see --help".into(),
                ));
            }
        },
    };
    Ok(Config {
        mode,
        format,
        color: color && format == Format::Text,
    })
}

/// kubectl's `--request-timeout`: `30s`, `1m`, `1h`, `500ms`, a bare number of seconds; `0` means none.
pub fn parse_duration(s: &str) -> Result<Option<Duration>, crate::Error> {
    let bad = || {
        crate::Error::Usage(format!(
            "invalid --request-timeout {:?}: use e.g. 30s, 1m, 500ms",
            crate::sanitize::line(s)
        ))
    };
    let s = s.trim();
    let (num, unit) = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .map_or((s, "s"), |i| (&s[..i], &s[i..]));
    let n: f64 = num.parse().map_err(|_| bad())?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(bad()),
    };
    if !secs.is_finite() || secs < 0.0 {
        return Err(bad());
    }
    Ok((secs > 0.0).then(|| Duration::from_secs_f64(secs)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn cfg(argv: &[&str], env: Env) -> Config {
        resolve(Args::try_parse_from(argv).unwrap(), &env).unwrap()
    }

    #[test]
    fn durations() {
        assert_eq!(
            parse_duration("30s").unwrap(),
            Some(Duration::from_secs(30))
        );
        assert_eq!(parse_duration("2").unwrap(), Some(Duration::from_secs(2)));
        assert_eq!(
            parse_duration("500ms").unwrap(),
            Some(Duration::from_millis(500))
        );
        assert_eq!(parse_duration("1m").unwrap(), Some(Duration::from_secs(60)));
        assert_eq!(parse_duration("0").unwrap(), None);
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("5d").is_err());
    }

    #[test]
    fn a_target_means_live_mode() {
        let c = cfg(
            &[
                "x",
                "gpu-busy",
                "-n",
                "gpu-lab",
                "--context",
                "admin",
                "--request-timeout",
                "2s",
            ],
            Env::default(),
        );
        match c.mode {
            Mode::Live { target, kube } => {
                assert_eq!(target, TargetSpec::Pod("gpu-busy".into()));
                assert_eq!(kube.namespace.as_deref(), Some("gpu-lab"));
                assert_eq!(kube.request_timeout, Some(Duration::from_secs(2)));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn colour_is_decided_once() {
        let tty = Env {
            no_color: false,
            stdout_is_terminal: true,
        };
        assert!(cfg(&["x", "-f", "-"], tty.clone()).color);
        assert!(
            !cfg(
                &["x", "-f", "-"],
                Env {
                    no_color: true,
                    ..tty.clone()
                }
            )
            .color
        );
        assert!(!cfg(&["x", "-f", "-"], Env::default()).color);
        assert!(cfg(&["x", "-f", "-", "--color", "always"], Env::default()).color);
        assert!(!cfg(&["x", "-f", "-", "--color", "never"], tty.clone()).color);
        assert!(
            !cfg(&["x", "-f", "-", "-o", "json", "--color", "always"], tty).color,
            "json never has colour"
        );
    }
}
