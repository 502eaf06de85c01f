//! `-o json`: the DESIGN §2 shape, one object per target or `{"schema", "items"}` for several.

use std::io::{self, Write};

use crate::diagnose::{Diagnosis, SCHEMA};

#[derive(serde::Serialize)]
struct Items<'a> {
    schema: &'static str,
    items: &'a [Diagnosis],
}

pub(super) fn render(diagnoses: &[Diagnosis], out: &mut dyn Write) -> io::Result<()> {
    match diagnoses {
        [one] => serde_json::to_writer_pretty(&mut *out, one)?,
        many => serde_json::to_writer_pretty(
            &mut *out,
            &Items {
                schema: SCHEMA,
                items: many,
            },
        )?,
    }
    writeln!(out)
}
