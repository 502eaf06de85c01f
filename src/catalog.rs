//! Prints the rule table: `rules` (text, markdown for the README, JSON) and `explain ID`. Reads only the
//! static table.

use std::io::{self, Write};

use crate::render::Format;
use crate::rules::{RULES, Rule, Where, shown_template};

/// `kubectl gpuwhy rules`.
pub fn rules(format: Format, out: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Text => {
            for r in RULES {
                writeln!(
                    out,
                    "{}  {:<42} {:<22} {:<16} {}",
                    r.id,
                    r.name,
                    r.category.as_str(),
                    r.gate.as_str(),
                    shown_template(r.summary)
                )?;
            }
        }
        Format::Markdown => {
            writeln!(out, "| id | name | category | gate | summary |")?;
            writeln!(out, "|---|---|---|---|---|")?;
            for r in RULES {
                writeln!(
                    out,
                    "| {} | `{}` | {} | {} | {} |",
                    r.id,
                    r.name,
                    r.category.as_str(),
                    r.gate.as_str(),
                    shown_template(r.summary).replace('|', "\\|")
                )?;
            }
        }
        Format::Json => {
            let items: Vec<serde_json::Value> = RULES.iter().map(rule_json).collect();
            serde_json::to_writer_pretty(&mut *out, &items)?;
            writeln!(out)?;
        }
    }
    Ok(())
}

fn rule_json(r: &Rule) -> serde_json::Value {
    serde_json::json!({
        "id": r.id, "name": r.name, "category": r.category, "gate": r.gate, "looks_at": r.looks_at,
        "pattern": r.pattern, "summary": r.summary,
        "next": r.next.iter().map(|n| serde_json::json!({"command": n.command, "where": n.place, "why": n.why})).collect::<Vec<_>>(),
        "fix": r.fix, "example": r.example, "example_source": r.example_source, "near_miss": r.near_miss,
    })
}

/// `kubectl gpuwhy explain ID`.
pub fn explain(r: &Rule, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "# {} {}\n", r.id, r.name)?;
    writeln!(
        out,
        "category: {}    gate: {}",
        r.category.as_str(),
        r.gate.as_str()
    )?;
    writeln!(out, "looks at: {}", r.looks_at)?;
    writeln!(out, "summary:  {}\n", shown_template(r.summary))?;
    writeln!(out, "{}\n", r.explanation)?;
    writeln!(out, "## Next commands")?;
    for n in r.next {
        let place = if n.place == Where::Node {
            " (on the node)"
        } else {
            ""
        };
        writeln!(out, "  {}{}\n      {}", n.command, place, n.why)?;
    }
    if let Some(fix) = r.fix {
        writeln!(out, "\n## Fix\n{fix}")?;
    }
    writeln!(out, "\n## Pattern\n  {}", r.pattern)?;
    writeln!(
        out,
        "\n## Example ({})\n  {}",
        r.example_source,
        r.example.replace('\n', "\n  ")
    )?;
    writeln!(out, "\n## Near miss (must not match)\n  {}", r.near_miss)?;
    Ok(())
}
