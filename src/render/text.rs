//! Terminal and ticket text: the verdict line, the cause, its evidence, the next commands (node-side ones
//! marked), a fix snippet, the other causes seen, and the checks that could not be made.

use std::io::{self, Write};

use owo_colors::OwoColorize;

use super::{Styles, safe, target_label};
use crate::diagnose::{Cause, Diagnosis};
use crate::rules::{Category, Where};

pub(super) fn render(diagnoses: &[Diagnosis], s: &Styles, out: &mut dyn Write) -> io::Result<()> {
    for (i, d) in diagnoses.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        one(d, s, out)?;
    }
    Ok(())
}

fn one(d: &Diagnosis, s: &Styles, out: &mut dyn Write) -> io::Result<()> {
    let label = target_label(d);
    match d.primary {
        Category::None => {
            writeln!(
                out,
                "{}: {}",
                label.style(s.heading),
                "nothing blocks it".style(s.ok)
            )?;
        }
        primary => {
            writeln!(
                out,
                "{}: {} at {}: {}",
                label.style(s.heading),
                "blocked".style(s.blocked),
                d.gate.as_str(),
                primary.as_str().style(s.category)
            )?;
        }
    }
    if let Some(cause) = d.causes.first() {
        cause_block(cause, s, out)?;
    }
    if d.causes.len() > 1 {
        writeln!(out, "\n{}", "Also seen".style(s.heading))?;
        for c in &d.causes[1..] {
            writeln!(
                out,
                "  {}  {}  {}",
                c.category.as_str().style(s.category),
                safe(&c.summary),
                rule_tag(c).style(s.rule)
            )?;
        }
    }
    if !d.gaps.is_empty() {
        writeln!(out, "\n{}", "Could not check".style(s.heading))?;
        for g in &d.gaps {
            writeln!(
                out,
                "  {}: {}",
                safe(&g.check).style(s.warn),
                safe(&g.reason)
            )?;
        }
    }
    Ok(())
}

fn rule_tag(c: &Cause) -> String {
    match (c.rule, c.name) {
        (Some(id), Some(name)) => format!("[{id} {name}]"),
        _ => "[no rule]".to_string(),
    }
}

fn cause_block(c: &Cause, s: &Styles, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "  {}  {}", safe(&c.summary), rule_tag(c).style(s.rule))?;
    if !c.evidence.is_empty() {
        writeln!(out, "\n{}", "Evidence".style(s.heading))?;
        for e in &c.evidence {
            let source = serde_json::to_value(e.source)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            let reason = e
                .reason
                .as_deref()
                .map(|r| format!(" {}", safe(r)))
                .unwrap_or_default();
            let count = if e.count > 1 {
                format!(" (x{})", e.count)
            } else {
                String::new()
            };
            let mut lines = e.text.lines();
            writeln!(
                out,
                "  {}{}{}: {}",
                source.style(s.dim),
                reason,
                count,
                safe(lines.next().unwrap_or(""))
            )?;
            for l in lines {
                writeln!(out, "      {}", safe(l))?;
            }
        }
    }
    if !c.next.is_empty() {
        writeln!(out, "\n{}", "Next".style(s.heading))?;
        for n in &c.next {
            let place = match n.place {
                Where::Node => "on the node: ",
                Where::Cluster => "",
            };
            writeln!(
                out,
                "  {}{}",
                place.style(s.warn),
                safe(&n.command).style(s.command)
            )?;
            writeln!(out, "      {}", safe(&n.why).style(s.dim))?;
        }
    }
    if let Some(fix) = &c.fix {
        writeln!(out, "\n{}", "Fix".style(s.heading))?;
        for l in fix.lines() {
            writeln!(out, "  {}", safe(l))?;
        }
    }
    Ok(())
}
