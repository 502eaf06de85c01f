//! Output: text, JSON and markdown renderers. Every function takes finished diagnoses and a writer; none
//! reads the environment or decides colour (that was decided once in `config` and arrives as `Styles`).

mod json;
mod markdown;
mod styles;
mod text;

use std::io::{self, Write};

pub use styles::Styles;

use crate::diagnose::Diagnosis;

/// `-o` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
    Markdown,
}

/// Renders one diagnosis as an object, or several as `{"schema": …, "items": […]}`.
pub fn render(
    diagnoses: &[Diagnosis],
    format: Format,
    styles: &Styles,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Json => json::render(diagnoses, out),
        Format::Markdown => markdown::render(diagnoses, out),
        Format::Text => text::render(diagnoses, styles, out),
    }
}

/// Text for a terminal or a ticket: control characters stripped, newlines kept only where asked.
fn safe(s: &str) -> String {
    crate::sanitize::line(s)
}

fn target_label(d: &Diagnosis) -> String {
    let t = &d.target;
    match (&t.namespace, &t.name) {
        (Some(ns), Some(n)) => format!("{} {}/{}", t.kind, safe(ns), safe(n)),
        (None, Some(n)) => format!("{} {}", t.kind, safe(n)),
        _ => "input".to_string(),
    }
}
