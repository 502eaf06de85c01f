//! `-o markdown`: a report to paste into a ticket. Untrusted text goes only into fenced blocks (with a
//! fence longer than any backtick run inside) or escaped table cells; there is never colour.

use std::io::{self, Write};

use super::{safe, target_label};
use crate::diagnose::Diagnosis;
use crate::rules::{Category, Where};

pub(super) fn render(diagnoses: &[Diagnosis], out: &mut dyn Write) -> io::Result<()> {
    for (i, d) in diagnoses.iter().enumerate() {
        if i > 0 {
            writeln!(out, "\n---\n")?;
        }
        one(d, out)?;
    }
    Ok(())
}

fn cell(s: &str) -> String {
    safe(s)
        .replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('`', "\\`")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn fence(body: &str, lang: &str, out: &mut dyn Write) -> io::Result<()> {
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let f = "`".repeat(longest.max(2) + 1);
    writeln!(out, "{f}{lang}")?;
    for l in body.lines() {
        writeln!(out, "{}", safe(l))?;
    }
    writeln!(out, "{f}")
}

fn one(d: &Diagnosis, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "### gpuwhy: {}\n", cell(&target_label(d)))?;
    writeln!(out, "| gate | cause | rule |")?;
    writeln!(out, "|---|---|---|")?;
    if d.primary == Category::None && d.causes.is_empty() {
        writeln!(out, "| none | nothing blocks it | |")?;
    }
    for (i, c) in d.causes.iter().enumerate() {
        let mark = if i == 0 { "**" } else { "" };
        let rule = match (c.rule, c.name) {
            (Some(id), Some(n)) => format!("{id} `{n}`"),
            _ => "none".into(),
        };
        writeln!(
            out,
            "| {} | {mark}{}{mark}: {} | {} |",
            c.gate.as_str(),
            c.category.as_str(),
            cell(&c.summary),
            rule
        )?;
    }
    if let Some(c) = d.causes.first() {
        if !c.evidence.is_empty() {
            writeln!(out, "\n**Evidence**\n")?;
            let body: Vec<String> = c
                .evidence
                .iter()
                .map(|e| {
                    let src = serde_json::to_value(e.source)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default();
                    format!(
                        "[{src}{}] {}",
                        e.reason
                            .as_deref()
                            .map(|r| format!(" {r}"))
                            .unwrap_or_default(),
                        e.text
                    )
                })
                .collect();
            fence(&body.join("\n"), "text", out)?;
        }
        if !c.next.is_empty() {
            writeln!(out, "\n**Next**\n")?;
            let body: Vec<String> = c
                .next
                .iter()
                .map(|n| match n.place {
                    Where::Node => format!("# on the node: {}\n{}", n.why, n.command),
                    Where::Cluster => format!("# {}\n{}", n.why, n.command),
                })
                .collect();
            fence(&body.join("\n"), "sh", out)?;
        }
        if let Some(fix) = &c.fix {
            writeln!(out, "\n**Fix**\n")?;
            fence(fix, "yaml", out)?;
        }
    }
    if !d.gaps.is_empty() {
        writeln!(out, "\n**Could not check**\n")?;
        for g in &d.gaps {
            writeln!(out, "- {}: {}", cell(&g.check), cell(&g.reason))?;
        }
    }
    Ok(())
}
