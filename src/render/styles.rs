//! The colour stylesheet. `Styles::default()` is plain; `Styles::colored()` is used only when `config`
//! decided colour is on. Renderers never consult the terminal or the environment themselves.

use owo_colors::Style;

#[derive(Debug, Clone, Default)]
pub struct Styles {
    pub heading: Style,
    pub blocked: Style,
    pub ok: Style,
    pub category: Style,
    pub rule: Style,
    pub command: Style,
    pub dim: Style,
    pub warn: Style,
}

impl Styles {
    pub fn colored() -> Styles {
        Styles {
            heading: Style::new().bold(),
            blocked: Style::new().red().bold(),
            ok: Style::new().green().bold(),
            category: Style::new().yellow().bold(),
            rule: Style::new().cyan(),
            command: Style::new().bold(),
            dim: Style::new().dimmed(),
            warn: Style::new().yellow(),
        }
    }
}
