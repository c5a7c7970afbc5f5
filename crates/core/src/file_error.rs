//! Errors in a file the user wrote (study files, personality files): the line,
//! and for a misspelt name the nearest valid one.

use std::ops::Range;

/// What is wrong with a file, with where.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{message}", .line.map(|line| format!("line {line}: ")).unwrap_or_default())]
pub struct FileError {
    /// 1-based; None when the error is about the whole file.
    pub line: Option<usize>,
    /// What is wrong, and the fix where there is one.
    pub message: String,
}

impl FileError {
    /// An error at byte range `span` of `text`.
    pub fn at(text: &str, span: Range<usize>, message: impl Into<String>) -> FileError {
        FileError { line: Some(line_of(text, span.start)), message: message.into() }
    }

    /// A parser's error (e.g. toml's `span()` and `message()`) as one line with
    /// its line number. serde's "unknown field `ordr`, expected one of `version`,
    /// ..." becomes "unknown key `ordr`; did you mean `order`? (valid here: ...)".
    pub fn parsed(text: &str, span: Option<Range<usize>>, message: &str) -> FileError {
        let line = span.map(|s| line_of(text, s.start));
        let mut message = message.trim().to_string();
        if let Some(rest) = message.strip_prefix("unknown field `") {
            if let Some((wrong, expected)) = rest.split_once('`') {
                let valid: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
                message = format!("unknown key `{wrong}`{}", did_you_mean(wrong, valid));
            }
        }
        FileError { line, message }
    }
}

/// The 1-based line of byte `offset`.
pub fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

/// The closest of `valid` to `wrong`, if close enough to be a typo.
pub fn nearest<'a>(wrong: &str, valid: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    valid
        .into_iter()
        .map(|v| (strsim::damerau_levenshtein(wrong, v), v))
        .filter(|(d, v)| *d <= 2.max(v.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, v)| v)
}

/// `; did you mean `x`? (valid here: a, b)`, or ` (valid here: a, b)` when no
/// valid name is close to `wrong`: the tail of an "unknown name" message.
pub fn did_you_mean<'a>(wrong: &str, valid: impl IntoIterator<Item = &'a str>) -> String {
    let all: Vec<&str> = valid.into_iter().collect();
    match nearest(wrong, all.iter().copied()) {
        Some(n) => format!("; did you mean `{n}`? (valid here: {})", all.join(", ")),
        None => format!(" (valid here: {})", all.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_wants_a_close_name() {
        assert_eq!(nearest("fil-size", ["file-size", "records"]), Some("file-size"));
        assert_eq!(nearest("zzzzzz", ["file-size", "records"]), None);
    }

    #[test]
    fn an_unknown_field_becomes_an_unknown_key_with_its_line_and_the_nearest_name() {
        let text = "a = 1\nordr = 2\n";
        let e = FileError::parsed(text, Some(6..10), "unknown field `ordr`, expected one of `order`, `name`\n");
        assert_eq!(e.line, Some(2));
        assert_eq!(e.message, "unknown key `ordr`; did you mean `order`? (valid here: order, name)");
        assert_eq!(e.to_string(), "line 2: unknown key `ordr`; did you mean `order`? (valid here: order, name)");
        let e = FileError::parsed(text, None, "invalid type: string");
        assert_eq!((e.line, e.to_string()), (None, "invalid type: string".to_string()));
    }
}
