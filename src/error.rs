//! The one typed error of the crate. Each variant says which file, verb or object failed. Gaps (a forbidden or
//! missing optional read) are not errors: they live in `Evidence::gaps`.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read {path}: {source}")]
    ReadInput {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{what} is larger than the {limit_mib} MiB limit; cut it down to the Pod's describe output or events"
    )]
    InputTooLarge { what: String, limit_mib: u64 },
    #[error("{what} is empty")]
    EmptyInput { what: String },
    #[error("{what} is not text: {why}")]
    NotText { what: String, why: String },
    #[error("{what}: {why}")]
    BadInput { what: String, why: String },
    #[error("unknown rule {id:?}; `kubectl gpuwhy rules` lists them")]
    UnknownRule { id: String },
    #[error("{0}")]
    Usage(String),
    #[error("cannot load kubeconfig: {0}")]
    KubeConfig(String),
    #[error("{verb} {resource} {name}: {message}")]
    NotFound {
        verb: &'static str,
        resource: String,
        name: String,
        message: String,
    },
    #[error("{verb} {resource}: {message}")]
    Unreachable {
        verb: &'static str,
        resource: String,
        message: String,
    },
    #[error("{verb} {resource}: {message}")]
    Api {
        verb: &'static str,
        resource: String,
        message: String,
    },
    #[error("write output: {0}")]
    Output(#[from] std::io::Error),
}

impl Error {
    /// The process exit code for this error (DESIGN §2): 2 usage or input, 3 cluster unreachable.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Unreachable { .. } | Error::Api { .. } => 3,
            _ => 2,
        }
    }
}
