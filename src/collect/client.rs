//! Builds the kube client the way kubectl would: `--kubeconfig` (one file) or `KUBECONFIG` (a colon list,
//! merged) or `~/.kube/config`, then in-cluster; `--context`; the namespace defaults to the context's;
//! `--request-timeout` bounds connect, read and write. This and `main` are the only places that read the
//! environment for the cluster.

use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::error::{Error, Result};

/// Cluster options as resolved from the flags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KubeOptions {
    pub kubeconfig: Option<String>,
    pub context: Option<String>,
    pub namespace: Option<String>,
    pub request_timeout: Option<Duration>,
}

/// A client and the namespace to use.
pub async fn connect(opts: &KubeOptions) -> Result<(kube::Client, String)> {
    let options = KubeConfigOptions {
        context: opts.context.clone(),
        cluster: None,
        user: None,
    };
    let mut config = match &opts.kubeconfig {
        Some(path) => {
            let kc = Kubeconfig::read_from(path)
                .map_err(|e| Error::KubeConfig(format!("{path}: {e}")))?;
            kube::Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(|e| Error::KubeConfig(e.to_string()))?
        }
        None if opts.context.is_some() => kube::Config::from_kubeconfig(&options)
            .await
            .map_err(|e| Error::KubeConfig(e.to_string()))?,
        None => kube::Config::infer()
            .await
            .map_err(|e| Error::KubeConfig(e.to_string()))?,
    };
    if let Some(t) = opts.request_timeout {
        config.connect_timeout = Some(t);
        config.read_timeout = Some(t);
        config.write_timeout = Some(t);
    }
    if let Ok(v) =
        http::HeaderValue::from_str(&format!("kubectl-gpuwhy/{}", env!("CARGO_PKG_VERSION")))
    {
        config.headers.push((http::header::USER_AGENT, v));
    }
    let namespace = opts
        .namespace
        .clone()
        .unwrap_or_else(|| config.default_namespace.clone());
    let client = kube::Client::try_from(config).map_err(|e| Error::KubeConfig(e.to_string()))?;
    Ok((client, namespace))
}
