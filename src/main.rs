//! The process shell: parse flags, resolve them once, run, print, map the outcome to an exit code
//! (0 clear, 1 blocked, 2 usage or input error, 3 cluster unreachable). No logic lives here.
#![allow(clippy::print_stderr)]

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use gpuwhy::cli::Args;
use gpuwhy::config::{self, Env};
use gpuwhy::{Error, Outcome};

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let config = match config::resolve(args, &Env::from_process()) {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = match config.mode {
        gpuwhy::config::Mode::Live { .. } => match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(rt) => rt.block_on(gpuwhy::run_live(&config, &mut out)),
            Err(e) => Err(Error::Output(e)),
        },
        _ => gpuwhy::run_local(&config, &mut out),
    };
    let flushed = out.flush();
    match (result, flushed) {
        (Ok(outcome), Ok(())) => ExitCode::from(if outcome == Outcome::Blocked { 1 } else { 0 }),
        (Err(Error::Output(e)), _) | (Ok(_), Err(e))
            if e.kind() == std::io::ErrorKind::BrokenPipe =>
        {
            ExitCode::from(0)
        }
        (Err(e), _) => fail(&e),
        (Ok(_), Err(e)) => fail(&Error::Output(e)),
    }
}

fn fail(e: &Error) -> ExitCode {
    eprintln!(
        "kubectl-gpuwhy: error: {}",
        gpuwhy::sanitize::line(&e.to_string())
    );
    ExitCode::from(e.exit_code())
}
