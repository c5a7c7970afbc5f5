//! Text that came from outside (labels, machine names, command lines, imported files) on its way
//! to a terminal: a control character is refused where text comes in ([`first_control`]) and
//! escaped where stored text goes out ([`printable`]), so a stored newline cannot draw a fake
//! row and an escape sequence cannot recolour or move the terminal, even from an old database.

use std::borrow::Cow;

/// The first control character of `text` (C0, DEL, C1: what [`char::is_control`] calls one), with
/// its character position (from 1).
pub fn first_control(text: &str) -> Option<(usize, char)> {
    text.chars().enumerate().find(|(_, c)| c.is_control()).map(|(i, c)| (i + 1, c))
}

/// `text` with every control character written as an escape (`\n`, `\t`, `\r`, `\e` for ESC,
/// `\u{85}` for the rest) and a backslash doubled only where text holds a control character;
/// borrowed when there is none.
pub fn printable(text: &str) -> Cow<'_, str> {
    if first_control(text).is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{1b}' => out.push_str("\\e"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A control character as a reader can name it: `newline (\n)`, `ESC (\e, the start of a terminal
/// escape sequence)`, `U+0007`.
pub fn describe_control(c: char) -> String {
    match c {
        '\n' => "a newline (\\n)".into(),
        '\r' => "a carriage return (\\r)".into(),
        '\t' => "a tab (\\t)".into(),
        '\u{1b}' => "ESC (\\e, which starts a terminal escape sequence)".into(),
        c => format!("the control character U+{:04X}", c as u32),
    }
}

/// A command line as a shell takes it back (`iomatrix rerun` splits it with shell rules): words
/// of plain characters as they are (`--label fs=tmp`), others in single quotes.
pub fn command_text<S: AsRef<str>>(words: impl IntoIterator<Item = S>) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./-_".contains(c);
    words
        .into_iter()
        .map(|w| {
            let w = w.as_ref();
            if !w.is_empty() && w.chars().all(plain) {
                w.to_string()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_found_and_escaped() {
        assert_eq!(first_control("fs=ext4"), None);
        assert_eq!(first_control("a\nb"), Some((2, '\n')));
        assert_eq!(first_control("ü\u{85}"), Some((2, '\u{85}')));
        assert!(matches!(printable("plain ü text"), Cow::Borrowed("plain ü text")));
        assert_eq!(printable("x\n    7  2026  iozone\u{1b}[31m"), "x\\n    7  2026  iozone\\e[31m");
        assert_eq!(printable("a\\b\u{7}"), "a\\\\b\\u{7}");
        assert_eq!(printable("\t\r\u{7f}"), "\\t\\r\\u{7f}");
        assert!(describe_control('\u{1b}').starts_with("ESC"));
        assert_eq!(describe_control('\u{7}'), "the control character U+0007");
    }
}
