//! Standard output for every command: a reader that went away (`| head`)
//! is not an error.

use std::io::Write;

/// Writes `text` to stdout and flushes it. Control characters other than newline and tab, which
/// iomatrix never prints itself, are escaped (`\e`): text stored from outside (a label, a machine
/// name, an imported field) can never move the cursor or recolour the terminal.
pub fn print(text: &str) -> anyhow::Result<()> {
    let text = terminal_safe(text);
    if CAPTURED.with_borrow_mut(|held| held.as_mut().map(|held| held.push_str(&text)).is_some()) {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

thread_local! {
    /// What [`print`] wrote on this thread while [`captured`] holds it.
    static CAPTURED: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` with what it prints through [`print`] on this thread held instead of written, and
/// returns both: `iomatrix serve` shows on a page exactly the text a command prints in a
/// terminal, made by the same code.
pub fn captured<T>(f: impl FnOnce() -> T) -> (T, String) {
    let before = CAPTURED.with_borrow_mut(|held| held.replace(String::new()));
    let result = f();
    let text = CAPTURED.with_borrow_mut(|held| std::mem::replace(held, before)).unwrap_or_default();
    (result, text)
}

/// `text` with every control character but newline and tab escaped.
fn terminal_safe(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for line in text.split_inclusive('\n') {
        let (body, end) = line.strip_suffix('\n').map_or((line, ""), |b| (b, "\n"));
        for part in body.split('\t').enumerate() {
            if part.0 > 0 {
                out.push('\t');
            }
            out.push_str(&iomatrix_core::text::printable(part.1));
        }
        out.push_str(end);
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn captured_text_is_what_print_would_write() {
        let (result, text) = super::captured(|| {
            super::print("one\n").unwrap();
            let ((), inner) = super::captured(|| super::print("inner\n").unwrap());
            assert_eq!(inner, "inner\n");
            super::print("two \u{1b}[31m\n").unwrap();
            7
        });
        assert_eq!((result, text.as_str()), (7, "one\ntwo \\e[31m\n"));
    }

    #[test]
    fn newlines_and_tabs_stay_other_control_characters_are_escaped() {
        assert_eq!(super::terminal_safe("a\tb\nc\n"), "a\tb\nc\n");
        assert_eq!(super::terminal_safe("red \u{1b}[31mx\r\n"), "red \\e[31mx\\r\n");
        assert_eq!(super::terminal_safe("\\ stays \u{7}"), "\\\\ stays \\u{7}");
    }
}
