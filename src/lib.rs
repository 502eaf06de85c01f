//! kubectl-gpuwhy explains why a GPU Pod will not start. Data flows one way:
//! argv → `cli` → `config::Config` → `Evidence` (from `collect` or `offline`) → `rules` (via `classify`)
//! → `diagnose` → `render`. Everything from `Evidence` on is pure; only `main.rs` touches the process.

pub mod catalog;
pub mod classify;
pub mod cli;
pub mod collect;
pub mod completion;
pub mod config;
pub mod diagnose;
pub mod error;
pub mod evidence;
pub mod fiterror;
pub mod offline;
pub mod par;
pub mod render;
pub mod rules;
pub mod sanitize;
pub mod shell;

pub use error::{Error, Result};

use std::io::Write;

use config::{Config, Mode};
use diagnose::Diagnosis;

/// What a run found, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing blocks (exit 0).
    Clear,
    /// A blocking cause was diagnosed, including `unknown` (exit 1).
    Blocked,
}

impl Outcome {
    pub fn of(diagnoses: &[Diagnosis]) -> Outcome {
        if diagnoses.iter().any(Diagnosis::is_blocked) {
            Outcome::Blocked
        } else {
            Outcome::Clear
        }
    }
}

/// Diagnoses pasted text (already read) and renders it.
pub fn run_text(config: &Config, input: &str, what: &str, out: &mut dyn Write) -> Result<Outcome> {
    let (_, evidence) = offline::parse(input, what)?;
    let diagnoses = diagnose::diagnose_all(&evidence);
    render::render(&diagnoses, config.format, &config.styles(), out)?;
    Ok(Outcome::of(&diagnoses))
}

/// Compiles the rule set and the FitError reader on another core, so that it is ready by the time the
/// cluster has answered (compiling it is most of a short run). Only live mode waits on the network; a local run
/// compiles where it first needs the set (a second thread would only compete with the reading).
fn warm_in_background() {
    // A thread the OS refuses (a pids limit) is no error: the patterns then compile where first used.
    let _ = std::thread::Builder::new().spawn(|| {
        rules::warm();
        fiterror::warm();
    });
}

/// Runs live mode: connect, collect (bounded by the request timeout), diagnose, render.
pub async fn run_live(config: &Config, out: &mut dyn Write) -> Result<Outcome> {
    let Mode::Live { target, kube } = &config.mode else {
        return run_local(config, out);
    };
    warm_in_background();
    let work = async {
        let (client, namespace) = collect::client::connect(kube).await?;
        collect::collect(&client, &namespace, target).await
    };
    let evidence = match kube.request_timeout {
        // Each request is bounded by the client; the whole run by that many times the requests the target's
        // collection makes one after another (a slow server that trickles an answer keeps a read alive).
        Some(t) => {
            let steps = collect::requests_in_sequence(target);
            let limit = t * steps;
            tokio::time::timeout(limit, work)
                .await
                .map_err(|_| Error::Unreachable {
                    verb: "get",
                    resource: "the cluster".into(),
                    message: format!(
                        "timed out after {limit:?} ({steps} requests in sequence, each up to --request-timeout)"
                    ),
                })??
        }
        None => work.await?,
    };
    let diagnoses = diagnose::diagnose_all(&evidence);
    render::render(&diagnoses, config.format, &config.styles(), out)?;
    Ok(Outcome::of(&diagnoses))
}

/// Runs the modes that need no cluster.
pub fn run_local(config: &Config, out: &mut dyn Write) -> Result<Outcome> {
    match &config.mode {
        Mode::Live { .. } => Err(Error::Usage("live mode runs through run_live".into())),
        Mode::Offline { path } => {
            let (what, bytes) = offline::read_source(path)?;
            let text = offline::decode(bytes, &what)?;
            run_text(config, &text, &what, out)
        }
        Mode::Rules { format } => {
            catalog::rules(*format, out)?;
            Ok(Outcome::Clear)
        }
        Mode::Explain { id } => {
            let rule = rules::by_id(id).ok_or_else(|| Error::UnknownRule {
                id: sanitize::line(id),
            })?;
            catalog::explain(rule, out)?;
            Ok(Outcome::Clear)
        }
        Mode::Completion { shell } => {
            completion::write(*shell, out)?;
            Ok(Outcome::Clear)
        }
    }
}
