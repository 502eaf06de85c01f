//! Resolves the parsed flags and the environment (NO_COLOR, whether stdout is a terminal) into `Config`,
//! once. Nothing after this reads the environment for output decisions.

use crate::cli::{Args, ColorChoice, Command, Shell};
use crate::render::{Format, Styles};

/// What to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
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
        None => match args.from_file {
            Some(path) => (Mode::Offline { path }, args.output),
            None => {
                return Err(crate::Error::Usage(
                    "nothing to diagnose: give --from-file PATH (or - for stdin); see --help"
                        .into(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn cfg(argv: &[&str], env: Env) -> Config {
        resolve(Args::try_parse_from(argv).unwrap(), &env).unwrap()
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
