//! Shell completion scripts: bash, zsh and fish for `kubectl-gpuwhy` itself, and the
//! `kubectl_complete-gpuwhy` helper that kubectl ≥1.26 runs for `kubectl gpuwhy <TAB>`.

use std::io::{self, Write};

use crate::cli::{self, Shell};

/// Writes the completion script for `shell`.
pub fn write(shell: Shell, out: &mut dyn Write) -> io::Result<()> {
    let mut cmd = cli::command();
    let generator = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
        Shell::Kubectl => return Err(io::Error::other("completion kubectl is not built yet")),
    };
    clap_complete::generate(generator, &mut cmd, "kubectl-gpuwhy", out);
    Ok(())
}
