//! How a ticket carried a paste, undone: a terminal capture's colours, HTML escapes, a markdown export's
//! backslashes, a mail client's curly quotes and zero-width spaces, a web page's no-break spaces and double
//! spacing, code markers (markdown fences, `<pre>`, `[code]`, Jira's `{code}`), a quote's `> `, a block's
//! indentation and a terminal's hard wrap. Each reader returns `None` when the paste does not carry its mark, so
//! the others see the text as it was.

use std::sync::LazyLock;

use regex::Regex;

use super::text;

/// Returns `s` without the escape sequences a terminal capture holds (colours, a title, a cursor move), keeping
/// every other character, so a paste captured with colours (`script`, a CI log, kubecolor) keeps the layout it
/// was printed in; `None` when it has no ESC. Only ESC-introduced sequences go: a bare C1 character is what a
/// curly quote becomes when a page decodes UTF-8 as windows-1252 (`â€` and U+009D), and it stays (the
/// per-message `clean` drops it). A sequence never reaches past its line, and a malformed one loses only its ESC.
pub(super) fn uncolour(s: &str) -> Option<String> {
    // A byte search: a scan of every char would cost more than reading an 85 MB EventList.
    if !s.as_bytes().contains(&0x1b) {
        return None;
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('\u{1b}') {
        out.push_str(&rest[..at]);
        let seq = &rest[at + 1..];
        rest = &seq[escape_len(seq)..];
    }
    out.push_str(rest);
    Some(out)
}

/// The length of the escape sequence after an ESC (without the ESC), within its line; 0 when it is malformed.
/// Every byte it counts is ASCII, so the length ends on a character boundary.
fn escape_len(seq: &str) -> usize {
    let b = seq.as_bytes();
    match b.first() {
        // CSI: parameter and intermediate bytes, then one final byte.
        Some(b'[') => {
            let body = b[1..]
                .iter()
                .take_while(|c| (0x20..=0x3f).contains(*c))
                .count();
            match b.get(1 + body) {
                Some(c) if (0x40..=0x7e).contains(c) => 2 + body,
                _ => 0,
            }
        }
        // OSC (a title, a hyperlink): up to BEL or ST on the same line.
        Some(b']') => {
            let line = &b[1..b.iter().position(|c| *c == b'\n').unwrap_or(b.len())];
            match line.iter().position(|c| *c == 0x07 || *c == 0x1b) {
                Some(end) if line[end] == 0x07 => 2 + end,
                Some(end) if line.get(end + 1) == Some(&b'\\') => 3 + end,
                _ => 0,
            }
        }
        // Short sequences (ESC 7, ESC =, ESC ( B): intermediate bytes, then one final byte.
        Some(_) => {
            let body = b.iter().take_while(|c| (0x20..=0x2f).contains(*c)).count();
            match b.get(body) {
                Some(c) if (0x30..=0x7e).contains(c) => 1 + body,
                _ => 0,
            }
        }
        None => 0,
    }
}

/// The HTML character references a page's source or a ticket system's export puts in place of quotes, angle
/// brackets, ampersands and no-break spaces, read back as those characters; `None` when there are none. The
/// references are only the ones HTML escaping writes, so an ampersand in a message stays as it is.
pub(super) fn unescape_html(input: &str) -> Option<String> {
    const REFERENCES: &[(&str, char)] = &[
        ("&quot;", '"'),
        ("&#34;", '"'),
        ("&#x22;", '"'),
        ("&apos;", '\''),
        ("&#39;", '\''),
        ("&#039;", '\''),
        ("&#x27;", '\''),
        ("&lt;", '<'),
        ("&#60;", '<'),
        ("&gt;", '>'),
        ("&#62;", '>'),
        ("&nbsp;", ' '),
        ("&#160;", ' '),
        ("&amp;", '&'),
        ("&#38;", '&'),
    ];
    let reference_at = |rest: &str| {
        REFERENCES
            .iter()
            .find(|(r, _)| {
                rest.len() >= r.len()
                    && rest.as_bytes()[..r.len()].eq_ignore_ascii_case(r.as_bytes())
            })
            .copied()
    };
    let first = input
        .match_indices('&')
        .find(|(i, _)| reference_at(&input[*i..]).is_some())?
        .0;
    let mut out = String::with_capacity(input.len());
    out.push_str(&input[..first]);
    let mut rest = &input[first..];
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        match reference_at(rest) {
            Some((r, c)) => {
                out.push(c);
                rest = &rest[r.len()..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    Some(out)
}

/// A paste that went through a rich-text editor's markdown export (Notion, Confluence, a chat client), which
/// puts a backslash before each character markdown would read as formatting: `default\_runtime\_name`,
/// `nvidia.com/gpu\*`, and doubles each backslash. Read back when the paste carries the export's mark (`\_`, `\*`,
/// `\[` or `\]`, which no component prints); a backslash before anything else (a JSON string's `\"`) stays.
/// An export leaves a fenced code block as it was, so the lines inside fences stay too.
pub(super) fn unescape_markdown(input: &str) -> Option<String> {
    // A fence's line is three backticks or tildes and at most an info string (`yaml`), not a traceback's
    // `~~~~^^` marker.
    let is_fence = |l: &str| {
        let l = l.trim();
        ["```", "~~~"].iter().any(|f| {
            l.strip_prefix(f).is_some_and(|info| {
                info.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '_' | '.'))
            })
        })
    };
    // A fence that is never closed is no block: the prose after it is the export's as well.
    let balanced = input.split_inclusive('\n').filter(|l| is_fence(l)).count() % 2 == 0;
    let is_fence = |l: &str| balanced && is_fence(l);
    // Each line with whether it lies outside a fence (a fence's own line counts as inside).
    let mut fenced = false;
    let lines: Vec<(&str, bool)> = input
        .split_inclusive('\n')
        .map(|l| {
            if is_fence(l) {
                fenced = !fenced;
                (l, false)
            } else {
                (l, !fenced)
            }
        })
        .collect();
    let marked = |l: &str| ["\\_", "\\*", "\\[", "\\]"].iter().any(|m| l.contains(m));
    if !lines.iter().any(|&(l, outside)| outside && marked(l)) {
        return None;
    }
    let mut out = String::with_capacity(input.len());
    for (line, outside) in lines {
        if !outside {
            out.push_str(line);
            continue;
        }
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match (c, chars.peek()) {
                ('\\', Some('\\' | '_' | '*' | '[' | ']' | '#' | '`' | '~' | '<' | '>' | '|')) => {
                    out.extend(chars.next());
                }
                (c, _) => out.push(c),
            }
        }
    }
    Some(out)
}

/// A paste as a word processor, a mail client or a web page typeset it, put back as a terminal printed it: curly
/// quotes become straight ones (when `quotes`), and the zero-width characters a page puts where a line may break
/// go.
pub(super) fn untypeset(input: &str, quotes: bool) -> Option<String> {
    let curly = |c: char| {
        quotes
            && matches!(
                c,
                '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{2018}' | '\u{2019}'
            )
    };
    if !input.contains(|c| crate::sanitize::is_zero_width(c) || curly(c)) {
        return None;
    }
    Some(
        input
            .chars()
            .filter_map(|c| match c {
                '\u{201c}' | '\u{201d}' | '\u{201e}' if quotes => Some('"'),
                '\u{2018}' | '\u{2019}' if quotes => Some('\''),
                c if crate::sanitize::is_zero_width(c) => None,
                c => Some(c),
            })
            .collect(),
    )
}

/// A paste copied from a web page as it was printed: no-break spaces become spaces, and a paste that the copy
/// double-spaced (a blank line after every line) gets its lines back together.
pub(super) fn respace(input: &str) -> Option<String> {
    let nbsp = input.contains('\u{a0}');
    let mut lines = input.lines().peekable();
    let mut filled = 0;
    let mut adjacent = false;
    while let Some(l) = lines.next() {
        if !l.trim().is_empty() {
            filled += 1;
            adjacent |= lines.peek().is_some_and(|n| !n.trim().is_empty());
        }
        if adjacent {
            break;
        }
    }
    // Paragraphs of prose between blank lines are not a double-spaced listing or log.
    let double_spaced =
        !adjacent && filled >= 4 && input.lines().filter(|l| is_prose(l)).count() * 2 < filled;
    if !nbsp && !double_spaced {
        return None;
    }
    let text = if nbsp {
        input.replace('\u{a0}', " ")
    } else {
        input.to_string()
    };
    if !double_spaced {
        return Some(text);
    }
    // One blank line was the copy's; two were the paste's own break.
    let mut out = Vec::new();
    let mut blanks = 0;
    for l in text.lines() {
        if l.trim().is_empty() {
            blanks += 1;
            continue;
        }
        if blanks > 1 {
            out.push("");
        }
        blanks = 0;
        out.push(l);
    }
    Some(out.join("\n"))
}

/// Whether a line reads as a sentence of the reporter's (ten words or more, ending as a sentence does), not
/// as a line of output.
fn is_prose(line: &str) -> bool {
    let t = line.trim_end();
    t.split_whitespace().nth(9).is_some() && (t.ends_with(['.', ':', '?', '!']) || t.contains(". "))
}

/// A paste without the code markers a ticket wraps it in: markdown's fences (```` ``` ````, ```` ```yaml ````,
/// `~~~`), HTML's `<pre>` and `<code>`, BBCode's `[code]` and Jira's `{code}` and `{noformat}`. The markers are not
/// part of what any component printed, but they do end a record; a marker glued to the paste's first or last
/// line leaves that line as it was printed.
pub(super) fn unfence(input: &str) -> Option<String> {
    static OPEN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)^\s*(?:<pre\b[^>]*>\s*(?:<code\b[^>]*>)?|<code\b[^>]*>|\[code(?:=[\w-]+)?\]|\{code(?::[^}\n]*)?\}|\{noformat(?::[^}\n]*)?\})")
            .expect("open marker regex")
    });
    static CLOSE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)(?:</code>\s*</pre>|</pre>|</code>|\[/code\]|\{code\}|\{noformat\})\s*$")
            .expect("close marker regex")
    });
    let fenced = input.contains("```") || input.contains("~~~");
    static MARKER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)<pre\b|<code\b|\[/?code\b|\{code\b|\{noformat\b").expect("marker regex")
    });
    let marked = MARKER.is_match(input);
    if !fenced && !marked {
        return None;
    }
    let is_fence = |l: &str| {
        let t = l.trim();
        let rest = t
            .strip_prefix("```")
            .or_else(|| t.strip_prefix("~~~"))
            .map(|r| r.trim_start_matches(['`', '~']).trim());
        // An info string is one word (`yaml`, `console`); text after the backticks is the paste itself.
        rest.is_some_and(|r| {
            r.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '_' | '.'))
        })
    };
    // A fence ends what came before it (the reporter's words, another paste) as a blank line does.
    let mut out: Vec<&str> = Vec::new();
    for line in input.lines() {
        if fenced && is_fence(line) {
            out.push("");
            continue;
        }
        if !marked {
            out.push(line);
            continue;
        }
        let mut line = line;
        if let Some(m) = OPEN.find(line) {
            out.push("");
            line = &line[m.end()..];
            if line.trim().is_empty() {
                continue;
            }
        }
        match CLOSE.find(line) {
            Some(m) => {
                if !line[..m.start()].trim().is_empty() {
                    out.push(&line[..m.start()]);
                }
                out.push("");
            }
            None => out.push(line),
        }
    }
    Some(out.join("\n"))
}

/// A paste whose every line is indented alike (a markdown code block, a quote in an email) without that
/// indent: a describe's own indentation is what tells its sections apart.
pub(super) fn dedent(input: &str) -> Option<String> {
    let indent = input
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches([' ', '\t']).len())
        .min()?;
    if indent == 0 {
        return None;
    }
    Some(
        input
            .lines()
            .map(|l| l.get(indent..).unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// A paste quoted as markdown (`> ` on most lines) without the quote markers.
pub(super) fn unquote(input: &str) -> Option<String> {
    let lines: Vec<&str> = input.lines().filter(|l| !l.trim().is_empty()).collect();
    let quoted = lines.iter().filter(|l| l.starts_with('>')).count();
    if lines.is_empty() || quoted * 2 < lines.len() {
        return None;
    }
    // A reply quotes a quote (`> > `): every level goes.
    let strip = |mut l: &str| {
        while let Some(rest) = l.strip_prefix("> ").or_else(|| l.strip_prefix('>')) {
            l = rest;
        }
        l.to_string()
    };
    Some(input.lines().map(strip).collect::<Vec<_>>().join("\n"))
}

/// A paste that a terminal hard-wrapped (every long line cut at the same column) with its lines whole again.
/// The column is the longest line's length when two or more lines reach it, or when one does and that
/// length is a terminal's default 80 columns; a line of that length is glued to the next unless the next
/// reads as a line of its own: it starts a record or a describe field, opens as the line does (the same
/// template), is indented after an indented line, repeats it, or lines up with it as the next row of a table
/// does; a box's rows and borders (`| … |`, `+---+`) are whole lines. A terminal starts what it cut off at the
/// first column, in the middle of whatever it was.
pub(super) fn rejoin_wrapped(input: &str) -> Option<String> {
    const NARROWEST: usize = 60;
    const TERMINAL_DEFAULT: usize = 80;
    let width = |l: &str| l.chars().count();
    let lines: Vec<&str> = input.lines().collect();
    let columns = lines.iter().map(|l| width(l)).max()?;
    let reached = lines.iter().filter(|l| width(l) == columns).count();
    if columns < NARROWEST || (reached < 2 && columns != TERMINAL_DEFAULT) {
        return None;
    }
    let boxed = |l: &str| {
        let t = l.trim();
        let edge = |c: Option<char>| matches!(c, Some('|' | '+' | '│' | '┃' | '╎'));
        edge(t.chars().next()) && edge(t.chars().last())
    };
    // An indented line (YAML, a describe field) followed by another indented one is a document's structure;
    // a terminal's continuation starts at the first column, and only a cut in a table's padding indents it.
    let indented = |l: &str| l.starts_with(' ') || l.starts_with('\t');
    // A cut at a space leaves that one space at the head of the next line: ` error: …` or ` failed to …` there
    // is a sentence's second half (`Err :connection| error: desc = …`), not a record of its own.
    let cut_at_space = |l: &str| {
        l.strip_prefix(' ')
            .is_some_and(|t| t.starts_with("error:") || t.starts_with("failed to "))
    };
    let own_line = |line: &str, next: &str| {
        next == line
            || boxed(line)
            || (indented(line) && next.starts_with("  "))
            || (text::starts_record(next) && !cut_at_space(next))
            || LINE_HEAD.is_match(next)
            || same_opening(line, next)
            || same_columns(line, next)
    };
    // For each line of the longest length followed by text: whether it was cut there.
    let cuts: Vec<Option<bool>> = (0..lines.len())
        .map(|i| {
            let next = lines.get(i + 1).copied().unwrap_or("");
            (width(lines[i]) == columns && !next.trim().is_empty())
                .then(|| !own_line(lines[i], next))
        })
        .collect();
    // Lines of one template that happen to share the longest length are followed by more of their own
    // kind as often as not; a terminal's cut lines seldom are.
    let cut = cuts.iter().filter(|c| **c == Some(true)).count();
    let whole = cuts.iter().filter(|c| **c == Some(false)).count();
    if cut == 0 || whole >= cut {
        return None;
    }
    let mut out = String::with_capacity(input.len());
    for (line, cut) in lines.iter().zip(&cuts) {
        out.push_str(line);
        if *cut != Some(true) {
            out.push('\n');
        }
    }
    Some(out)
}

/// The head of a line that the record starts do not name: a `2022/11/14` date, a dmesg `[  38.77]` stamp, a
/// logrus `ERRO[0000]` level, or a describe field (`Status:  Pending`). (Not a lowercase `program: ` name: a
/// cut word's tail reads as one.)
static LINE_HEAD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:\d{4}[-/]\d\d[-/]\d\d|\[\s*\d+\.\d+\]|[A-Z]{4}\[\d+\]|[A-Z][A-Za-z ]{0,30}:\s)",
    )
    .expect("line head")
});

/// Whether two lines open alike, as lines printed from one template do: the same first word, the same
/// first four characters, or the same indentation when there is some.
fn same_opening(a: &str, b: &str) -> bool {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let word = |l: &str| l.split(' ').next().unwrap_or("").to_owned();
    let head = |l: &str| l.chars().take(4).collect::<String>();
    (!word(a).is_empty() && word(a) == word(b))
        || (head(a).chars().count() == 4 && head(a) == head(b))
        || (indent(a) > 0 && indent(a) == indent(b))
}

/// Whether two lines are rows of one table: two or more columns (text after a run of two or more spaces)
/// start at the same place in both.
fn same_columns(a: &str, b: &str) -> bool {
    let starts = |l: &str| {
        let c: Vec<char> = l.chars().collect();
        (2..c.len())
            .filter(|&i| c[i] != ' ' && c[i - 1] == ' ' && c[i - 2] == ' ')
            .collect::<Vec<usize>>()
    };
    // Both lists ascend: walk them together.
    let (a, b) = (starts(a), starts(b));
    let (mut i, mut j, mut shared) = (0, 0, 0);
    while i < a.len() && j < b.len() && shared < 2 {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    shared >= 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_go_and_the_layout_stays() {
        assert_eq!(
            uncolour("  \u{1b}[31mWarning\u{1b}[0m\tFailed  1m\n\u{1b}]0;title\u{7}next\u{1b}(B")
                .as_deref(),
            Some("  Warning\tFailed  1m\nnext")
        );
        assert_eq!(uncolour("plain\ttext\n"), None);
        // A curly quote decoded as windows-1252 leaves a bare C1 character: the text after it stays.
        assert_eq!(uncolour("\u{e2}\u{20ac}\u{9d} Pending\n0/6 nodes"), None);
        // A malformed sequence loses its ESC only: never the next line, nor the next sequence.
        assert_eq!(
            uncolour("a\u{1b}[\nb\u{1b}[\u{1b}[31mc\u{1b}]0;title\nd").as_deref(),
            Some("a[\nb[c]0;title\nd")
        );
        assert_eq!(uncolour("\u{1b}").as_deref(), Some(""));
    }

    #[test]
    fn a_markdown_export_reads_as_printed() {
        assert_eq!(
            unescape_markdown(
                r#"for `default\_runtime\_name = \"runc\"` \[nvidia.com/gpu\*\] C:\\x\_y"#
            )
            .as_deref(),
            Some(r#"for `default_runtime_name = \"runc\"` [nvidia.com/gpu*] C:\x_y"#)
        );
        // Without the export's mark a backslash is the component's own.
        assert_eq!(unescape_markdown(r#"path C:\x and \"q\""#), None);
        // A fenced block is left as the export left it: its backslashes are the component's.
        let fenced =
            "set default\\_runtime\\_name:\n```\nerr=\"exec: \\\"nvidia\\_ctk\\\"\"\n```\n";
        assert_eq!(
            unescape_markdown(fenced).as_deref(),
            Some("set default_runtime_name:\n```\nerr=\"exec: \\\"nvidia\\_ctk\\\"\"\n```\n")
        );
        // The mark only inside a fence is no export's.
        assert_eq!(unescape_markdown("```\nmsg=a\\_b\n```\n"), None);
        // A fence never closed, and a traceback's `~~~^^` marker, are no blocks.
        assert_eq!(
            unescape_markdown("```\nsee default\\_runtime\\_name\n").as_deref(),
            Some("```\nsee default_runtime_name\n")
        );
        assert_eq!(
            unescape_markdown("    ~~~~~~~^^\nsee default\\_runtime\\_name\n").as_deref(),
            Some("    ~~~~~~~^^\nsee default_runtime_name\n")
        );
    }

    #[test]
    fn a_typeset_paste_reads_as_printed() {
        assert_eq!(
            untypeset(
                "no runtime for \u{201c}nvidia\u{201d} is con\u{200b}figured, didn\u{2019}t",
                true
            )
            .as_deref(),
            Some("no runtime for \"nvidia\" is configured, didn't")
        );
        assert_eq!(untypeset("plain \"text\"", true), None);
        // A manifest keeps its quotes.
        assert_eq!(
            untypeset("description: 'NVIDIA\u{2019}s sample'", false),
            None
        );
    }

    #[test]
    fn html_escapes_are_read_back_and_other_ampersands_stay() {
        assert_eq!(
            unescape_html(
                "no runtime for &quot;nvidia&quot; is configured &amp;&amp; &lt;none&gt;&#39;"
            )
            .as_deref(),
            Some("no runtime for \"nvidia\" is configured && <none>'")
        );
        // `&amp;quot;` was escaped twice: one pass undoes one escape.
        assert_eq!(unescape_html("&amp;quot;").as_deref(), Some("&quot;"));
        assert_eq!(unescape_html("a & b &x; R&D"), None);
        assert_eq!(unescape_html("ends with &").as_deref(), None);
        // A reference's length may end inside a character that is not ASCII.
        assert_eq!(unescape_html("&éééé &lt;").as_deref(), Some("&éééé <"));
    }

    #[test]
    fn a_terminal_hard_wrap_is_undone_and_lines_of_one_template_are_not() {
        // From tests/fixtures/real/s9021-…, cut at 80 columns as a terminal does.
        let line = "2019/11/28 16:07:11 Failed to initialize NVML: could not load NVML library.";
        let whole = "nvidia-kubevirt-gpu-device-plugin: symbol lookup error: nvidia-kubevirt-gpu-device-plugin: undefined symbol: nvmlDeviceGetCount_v2";
        let (head, tail) = whole.split_at(80);
        let wrapped = format!("{line}\n{head}\n{tail}\n");
        assert_eq!(
            rejoin_wrapped(&wrapped).as_deref(),
            Some(format!("{line}\n{whole}\n").as_str())
        );
        // A cut at a space before `error:` (s166003's gRPC line at 80 columns) is a cut; a record indented
        // by one space after a line of the same width stays a record of its own.
        let grpc = "{gpu-operator-node-feature-discovery-master:8080 <nil> 0 <nil>}. Err :connection error:";
        let (head, tail) = grpc.split_at(80);
        assert_eq!(tail, " error:");
        let wrapped = format!("{head}\n{tail}\ndesc = \"transport: Error while dialing\"\n");
        assert_eq!(
            rejoin_wrapped(&wrapped).as_deref(),
            Some(format!("{grpc}\ndesc = \"transport: Error while dialing\"\n").as_str())
        );
        let info = format!(
            "time=\"2024-05-01T10:00:00Z\" level=info msg=\"{}\"",
            "x".repeat(35)
        );
        assert_eq!(info.chars().count(), 80);
        let records = format!(
            "{info}\n E0501 10:00:01.000000 1 main.go:1] Failed to initialize NVML\n{info}\n Warning  FailedScheduling  1s  default-scheduler  0/1 nodes are available\n"
        );
        assert_eq!(rejoin_wrapped(&records), None);
        // Two lines of one width that each stand alone (tests/fixtures/real/s51010-…) stay apart.
        let template = "modprobe: ERROR: could not insert 'ipmi_msghandler': Invalid argument\n\
                        modprobe: ERROR: could not insert 'ipmi_devintf': Invalid argument\n";
        assert_eq!(rejoin_wrapped(template), None);
        // A longest line of another width than a terminal's default, alone, is not a cut.
        assert_eq!(rejoin_wrapped(&format!("{}\nnext\n", "x".repeat(97))), None);
        assert_eq!(
            rejoin_wrapped(&format!("{}\nnext\n", "x".repeat(160))),
            None
        );
        // YAML folded at 80 columns (c001's message, under a key indented by two) is the document's own
        // structure: its continuation is indented.
        let line =
            "  message: 0/10 nodes are available: 1 node(s) had taint {workload: aiml}, that ";
        assert_eq!(line.chars().count(), 80);
        let folded =
            format!("{line}\n    the pod didn't tolerate, 9 Insufficient nvidia.com/gpu.\n");
        assert_eq!(rejoin_wrapped(&folded), None);
        // A box's rows and borders (nvidia-smi's table) are whole lines.
        let border = format!("+{}+", "-".repeat(78));
        let row = format!("| NVIDIA-SMI 535.104.05{}|", " ".repeat(57));
        let table = format!("{border}\n{row}\n{border}\n");
        assert_eq!(rejoin_wrapped(&table), None);
        // Rows of one table line up.
        assert!(same_columns(
            "gpu-operator   nvidia-driver-daemonset   1",
            "gpu-operator   nvidia-device-plugin-ds   5"
        ));
        assert!(!same_columns("a  b", "c  d"));
    }
}
