//! Two lexical rules of SPARQL (§19.8) that spargebra's parser, which has
//! no separate lexer, does not apply; a light token scan applies them
//! before parsing:
//!
//! - the longest-token rule: `?x<?a&&?b>?y` holds the IRI `<?a&&?b>`, not
//!   two comparisons. The scan puts spaces around every IRI reference, and
//!   when one holds a `?` or `$` it also gives a probe: the same text with
//!   those replaced by `Q`. If the query parses and the probe does not, the
//!   parser read a variable inside an IRI: the query is invalid;
//! - keywords are case-insensitive, `TRUE` and `FALSE` included, so the
//!   scan lowercases those two.
//!
//! Only spaces are added and only case changes, so a position in the
//! rewritten text maps back to the query by counting the added spaces.

/// The rewritten query and, per line, the rewritten columns (in chars)
/// where a space was added.
pub(crate) struct Rewritten {
    pub(crate) text: String,
    /// The text with `?`/`$` inside IRIs replaced, when there are any.
    pub(crate) probe: Option<String>,
    added: Vec<Vec<usize>>,
}

impl Rewritten {
    /// Maps a 0-based (line, char column) of the rewritten text to the query's.
    pub(crate) fn original_column(&self, line: usize, column: usize) -> usize {
        let added = self.added.get(line).map_or(0, |columns| columns.iter().filter(|&&c| c < column).count());
        column - added
    }
}

/// Applies both rules.
pub(crate) fn rewrite(query: &str) -> Rewritten {
    let chars: Vec<char> = query.chars().collect();
    let mut text = String::with_capacity(query.len() + 16);
    let mut added = vec![Vec::new()];
    let mut column = 0; // in the rewritten text, chars
    let mut push = |text: &mut String, added: &mut Vec<Vec<usize>>, c: char, inserted: bool| {
        if inserted {
            if let Some(line) = added.last_mut() {
                line.push(column);
            }
        }
        text.push(c);
        if c == '\n' {
            added.push(Vec::new());
            column = 0;
        } else {
            column += 1;
        }
    };
    let mut probe_spans = Vec::new(); // byte spans of IRIs holding `?`/`$`
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let end = match c {
            '#' => chars[i..].iter().position(|&c| c == '\n').map_or(chars.len(), |n| i + n),
            '\'' | '"' => string_end(&chars, i),
            '?' | '$' => i + 1 + chars[i + 1..].iter().take_while(|&&c| is_name_char(c)).count(),
            '<' => match iri_end(&chars, i) {
                Some(end) => {
                    push(&mut text, &mut added, ' ', true);
                    for &c in &chars[i..end] {
                        push(&mut text, &mut added, c, false);
                    }
                    if chars[i..end].iter().any(|&c| c == '?' || c == '$') {
                        probe_spans.push((text.len() - (end - i), text.len()));
                    }
                    push(&mut text, &mut added, ' ', true);
                    i = end;
                    continue;
                }
                None => i + 1,
            },
            c if is_name_char(c) || c == ':' => {
                let mut end = i + chars[i..].iter().take_while(|&&c| is_name_char(c) || c == ':' || c == '.').count();
                while end > i + 1 && chars[end - 1] == '.' {
                    end -= 1; // a triple's final dot
                }
                let word: String = chars[i..end].iter().collect();
                let after_prefix = i > 0 && matches!(chars[i - 1], '@' | '^');
                if !after_prefix && (word.eq_ignore_ascii_case("true") || word.eq_ignore_ascii_case("false")) {
                    for c in word.to_ascii_lowercase().chars() {
                        push(&mut text, &mut added, c, false);
                    }
                    i = end;
                    continue;
                }
                end
            }
            _ => i + 1,
        };
        for &c in &chars[i..end.max(i + 1).min(chars.len())] {
            push(&mut text, &mut added, c, false);
        }
        i = end.max(i + 1);
    }
    let probe = (!probe_spans.is_empty()).then(|| {
        let mut probe = text.clone().into_bytes();
        for (start, end) in probe_spans {
            for byte in &mut probe[start..end] {
                if matches!(*byte, b'?' | b'$') {
                    *byte = b'Q';
                }
            }
        }
        String::from_utf8_lossy(&probe).into_owned()
    });
    Rewritten { text, probe, added }
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-' || c == '%' || c == '\\' || !c.is_ascii() && !c.is_whitespace()
}

/// One past the end of the string starting at `start` (a quote), or the
/// end of input when unterminated (the parser then reports it).
fn string_end(chars: &[char], start: usize) -> usize {
    let quote = chars[start];
    let long = chars.get(start + 1) == Some(&quote) && chars.get(start + 2) == Some(&quote);
    let mut i = start + if long { 3 } else { 1 };
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            c if c == quote && (!long || (chars.get(i + 1) == Some(&quote) && chars.get(i + 2) == Some(&quote))) => {
                return i + if long { 3 } else { 1 };
            }
            '\n' | '\r' if !long => return i,
            _ => i += 1,
        }
    }
    chars.len()
}

/// One past the `>` of an IRIREF starting at `start`, if one starts there.
fn iri_end(chars: &[char], start: usize) -> Option<usize> {
    for (n, &c) in chars[start + 1..].iter().enumerate() {
        match c {
            '>' => return Some(start + n + 2),
            '<' | '"' | '{' | '}' | '|' | '^' | '`' | '\\' => return None,
            c if c <= ' ' => return None,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spaces_iris_and_lowercases_booleans() {
        let rewritten = rewrite("FILTER(?x<?a&&?b>?y) # <not an iri>\nASK { ?s ?p FALSE, \"TRUE<x>\", :True, ?false, True. }");
        assert_eq!(rewritten.text, "FILTER(?x <?a&&?b> ?y) # <not an iri>\nASK { ?s ?p false, \"TRUE<x>\", :True, ?false, true. }");
        assert_eq!(rewritten.original_column(0, 9), 9);
        assert_eq!(rewritten.original_column(0, 20), 18);
        assert_eq!(rewritten.original_column(1, 5), 5);
        assert_eq!(rewritten.probe.as_deref().and_then(|probe| probe.lines().next()), Some("FILTER(?x <Qa&&Qb> ?y) # <not an iri>"));
        assert!(rewrite("SELECT * { ?s <http://a/p> ?o }").probe.is_none());
    }
}
