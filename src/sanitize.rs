//! Makes untrusted text (event messages, pasted input, object names) safe for a terminal: strips ANSI/OSC
//! escape sequences, C0/C1 control characters, bidirectional overrides and zero-width characters. It does not
//! judge content.

/// Returns `s` with every escape sequence and control character removed. Newlines survive when
/// `keep_newlines` is set (multi-line hook stderr); tabs always become a single space.
pub fn clean(s: &str, keep_newlines: bool) -> String {
    strip(s, keep_newlines, false)
}

/// Pasted text as the readers take it: escapes and control characters removed, newlines and tabs kept (they
/// carry the layout of tables and logs). `None` when there is nothing to remove.
pub fn layout(s: &str) -> Option<String> {
    (!s.is_ascii()
        || s.bytes()
            .any(|b| b < 0x20 && b != b'\n' && b != b'\t' || b == 0x7f))
    .then(|| strip(s, true, true))
    .filter(|out| out.len() != s.len())
}

fn strip(s: &str, keep_newlines: bool, keep_tabs: bool) -> String {
    // Fast path: printable ASCII needs nothing (the bulk of event text).
    if s.bytes().all(|b| (0x20..0x7f).contains(&b))
        || (!s.is_ascii() && s.chars().all(|c| !needs_work(c)))
    {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    // What ends a line: a newline where they are kept, else a space.
    let line_end = if keep_newlines { '\n' } else { ' ' };
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            // C1 CSI behaves like ESC [. The C1 string introducers (OSC, DCS, PM, APC) are dropped on their
            // own: a bare U+009D is what a closing quote becomes when UTF-8 is read as windows-1252, and
            // taking it for a string's start would drop the text after it.
            '\u{9b}' if complete_csi(chars.clone()) => skip_csi(&mut chars),
            '\r' if chars.peek() == Some(&'\n') => {}
            // A carriage return alone ends a line (old Mac text, a progress bar's redraw); so do NEL, the
            // Unicode line and paragraph separators, form feed and vertical tab.
            '\r' | '\u{85}' | '\u{2028}' | '\u{2029}' | '\u{b}' | '\u{c}' => out.push(line_end),
            '\n' if keep_newlines => out.push('\n'),
            '\t' if keep_tabs => out.push('\t'),
            '\n' | '\t' => out.push(' '),
            c if is_bidi(c) || is_zero_width(c) => {}
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// `s` with every line end a newline: a run of carriage returns before a newline (CRLF, CRCRLF) or alone, NEL,
/// U+2028, U+2029, form feed and vertical tab. `None` when it has none of them.
pub fn unix_line_ends(s: &str) -> Option<String> {
    let breaks = |c: char| {
        matches!(
            c,
            '\r' | '\u{85}' | '\u{2028}' | '\u{2029}' | '\u{b}' | '\u{c}'
        )
    };
    // A byte scan first: an 85 MiB EventList has none of them.
    let ascii_break = memchr::memchr3(b'\r', 0x0b, 0x0c, s.as_bytes()).is_some();
    if !ascii_break && (s.is_ascii() || !s.contains(['\u{85}', '\u{2028}', '\u{2029}'])) {
        return None;
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                let mut run = 1;
                while chars.peek() == Some(&'\r') {
                    chars.next();
                    run += 1;
                }
                // Before a newline the run is one line end; alone, each carriage return is one.
                if chars.peek() != Some(&'\n') {
                    out.extend(std::iter::repeat_n('\n', run));
                }
            }
            c if breaks(c) => out.push('\n'),
            c => out.push(c),
        }
    }
    Some(out)
}

/// Single-line form: newlines become spaces.
pub fn line(s: &str) -> String {
    clean(s, false)
}

fn needs_work(c: char) -> bool {
    c.is_control() || is_bidi(c) || is_zero_width(c) || matches!(c, '\u{2028}' | '\u{2029}')
}

/// Characters that take no width (zero-width space, joiners, word joiner and the invisible operators, byte-order
/// mark, soft hyphen, the Mongolian separators, Hangul fillers, variation selectors, interlinear annotation marks,
/// tag characters): a web page puts some where a line
/// may break, and on a terminal they hide what a text holds.
pub(crate) fn is_zero_width(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200d}' | '\u{2060}'..='\u{2064}' | '\u{206a}'..='\u{206f}' | '\u{feff}' | '\u{ad}'
        | '\u{34f}' | '\u{115f}' | '\u{1160}' | '\u{3164}' | '\u{ffa0}' | '\u{180b}'..='\u{180f}'
        | '\u{fe00}'..='\u{fe0f}' | '\u{fff9}'..='\u{fffb}' | '\u{e0000}'..='\u{e007f}' | '\u{e0100}'..='\u{e01ef}')
}

fn is_bidi(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
}

fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        Some('[') => skip_csi(chars),
        Some(']') | Some('P') | Some('X') | Some('^') | Some('_') => skip_string(chars),
        // Two-character sequences (ESC c, ESC 7, ESC ( B …): drop the intermediates and the final byte.
        Some(c) if ('\u{20}'..='\u{2f}').contains(&c) => {
            while let Some(&n) = chars.peek() {
                chars.next();
                if !('\u{20}'..='\u{2f}').contains(&n) {
                    break;
                }
            }
        }
        _ => {}
    }
}

/// Whether a whole CSI sequence (parameters, intermediates, a final byte) follows on the same line: a bare
/// U+009B is also what latin-1 makes of the second byte of `ś`, `ě` or `Л`, and is then dropped alone.
fn complete_csi(mut chars: std::iter::Peekable<std::str::Chars<'_>>) -> bool {
    for c in chars.by_ref() {
        match c {
            '\u{30}'..='\u{3f}' | '\u{20}'..='\u{2f}' => {}
            '\u{40}'..='\u{7e}' => return true,
            _ => return false,
        }
    }
    false
}

fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    // Parameter and intermediate bytes, then one final byte in 0x40..=0x7e.
    for c in chars.by_ref() {
        if ('\u{40}'..='\u{7e}').contains(&c) {
            break;
        }
        if !('\u{20}'..='\u{3f}').contains(&c) {
            break;
        }
    }
}

fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    // Until BEL, ST (ESC \) or C1 ST; an unterminated string ends with its line, which stays.
    while let Some(&c) = chars.peek() {
        if c == '\n' {
            break;
        }
        chars.next();
        match c {
            '\u{7}' | '\u{9c}' => break,
            '\u{1b}' => {
                if chars.peek() == Some(&'\\') {
                    chars.next();
                }
                break;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_csi_osc_and_controls() {
        assert_eq!(line("a\u{1b}[31mred\u{1b}[0m b"), "ared b");
        assert_eq!(line("x\u{1b}]0;title\u{7}y"), "xy");
        assert_eq!(
            line("x\u{1b}]8;;http://e\u{1b}\\link\u{1b}]8;;\u{1b}\\y"),
            "xlinky"
        );
        assert_eq!(line("a\u{0}b\u{7}c\u{8}d"), "abcd");
        assert_eq!(line("a\u{9b}2Jb"), "ab");
        assert_eq!(line("evil\u{202e}txt"), "eviltxt");
        assert_eq!(line("tab\tand\nnewline\r\n"), "tab and newline ");
        assert_eq!(clean("one\ntwo", true), "one\ntwo");
        assert_eq!(
            layout("a\tb\r\nc\u{1b}[1md\u{202e}").as_deref(),
            Some("a\tb\ncd")
        );
        assert_eq!(layout("a\tb\nc ✓"), None);
        // A lone carriage return (and the other line ends) ends a line; CRLF is one.
        assert_eq!(
            layout("a\rb\r\nc\u{2028}d\u{85}e").as_deref(),
            Some("a\nb\nc\nd\ne")
        );
        assert_eq!(line("a\rb"), "a b");
        assert_eq!(
            unix_line_ends("a\r\r\nb\rc\u{c}d").as_deref(),
            Some("a\nb\nc\nd")
        );
        assert_eq!(unix_line_ends("a\nb"), None);
        // A bare U+009B (mojibake of `ś`) is dropped alone and keeps the line end after it.
        assert_eq!(
            layout("co\u{c5}\u{9b}\nKeyError").as_deref(),
            Some("co\u{c5}\nKeyError")
        );
        // A bare C1 string introducer (mojibake of a closing quote) is dropped alone; an unterminated OSC
        // ends with its line.
        assert_eq!(
            layout("say \u{e2}\u{80}\u{9d}.\nnext").as_deref(),
            Some("say \u{e2}.\nnext")
        );
        assert_eq!(layout("x\u{1b}]0;title\nnext").as_deref(), Some("x\nnext"));
    }

    #[test]
    fn zero_width_characters_are_removed() {
        assert_eq!(
            line("nvi\u{200b}dia\u{feff} g\u{2060}pu\u{200d}"),
            "nvidia gpu"
        );
        assert_eq!(line("g\u{ad}p\u{61c}u\u{e0041}\u{180e}\u{fffa}"), "gpu");
    }

    #[test]
    fn plain_text_is_untouched() {
        let s = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. ünïcode ✓";
        assert_eq!(line(s), s);
    }

    #[test]
    fn trailing_escape_does_not_panic() {
        assert_eq!(line("a\u{1b}"), "a");
        assert_eq!(line("a\u{1b}["), "a");
        assert_eq!(line("a\u{1b}]unterminated"), "a");
    }
}
