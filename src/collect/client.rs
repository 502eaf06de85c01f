//! Builds the kube client the way kubectl would: `--kubeconfig` (one file) or `KUBECONFIG` (a colon list,
//! merged) or `~/.kube/config`, then in-cluster; `--context`; the namespace defaults to the context's;
//! `--request-timeout` bounds connect, read and write. This and `main` are the only places that read the
//! environment for the cluster. The client offers HTTP/2 as kubectl does, so the concurrent wave of reads
//! shares one TLS connection instead of opening one per request.

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
    let client = if config.proxy_url.is_some() || config.tls_server_name.is_some() {
        // kube's own stack knows the proxy kinds (HTTP CONNECT, SOCKS5) and the TLS server name
        // override; it speaks HTTP/1.1.
        kube::Client::try_from(config)
    } else {
        http2_client(config)
    }
    .map_err(|e| Error::KubeConfig(e.to_string()))?;
    Ok((client, namespace))
}

/// kube's client stack (base URI, gzip, auth, headers, timeouts) over a connector that negotiates HTTP/2
/// by ALPN and falls back to HTTP/1.1.
fn http2_client(config: kube::Config) -> kube::Result<kube::Client> {
    use hyper_util::client::legacy::connect::HttpConnector;
    use kube::client::ConfigExt;
    use tower::ServiceBuilder;

    let tls = config.rustls_client_config()?;
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    // Small HTTP/2 frames must not wait for a delayed ACK (Nagle), as in Go's client.
    http.set_nodelay(true);
    let builder = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http();
    let https = builder.enable_http1().enable_http2().wrap_connector(http);
    let mut connector = hyper_timeout::TimeoutConnector::new(https);
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    let hyper = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build::<_, kube::client::Body>(connector);
    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .layer(
            tower_http::decompression::DecompressionLayer::new()
                .no_br()
                .no_deflate()
                .no_zstd()
                .gzip(!config.disable_compression),
        )
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .map_err(tower::BoxError::from)
        .service(hyper);
    Ok(kube::Client::new(service, config.default_namespace))
}
