//! The file server a run's target lives on, as described in `key=value` lines: the lab's
//! published facts (`lab/up` writes them in its state folder) or a user's own description
//! (`--describe server=FILE`) of a server iomatrix cannot look into.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A server's description, as stored with a run (`environment.server`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerDescription {
    /// Where the facts came from: "lab (DIR/server-facts)", "--describe server=FILE".
    pub described_by: String,
    /// The facts, by key, as written.
    pub facts: BTreeMap<String, String>,
}

/// A description's line that does not read, named by its number (1-based).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {problem}")]
pub struct DescriptionError {
    /// The line's number in the description, from 1.
    pub line: usize,
    /// What is wrong with the line, and how to write it.
    pub problem: String,
}

/// The key a server's RAM is given under: bytes, or a size with a binary suffix (`64g`).
pub const RAM_KEY: &str = "ram_bytes";

/// Reads `key=value` lines: blank lines and `#` comments are skipped; a key is letters,
/// digits, `_`, `-` and `.`, given once; the value is the rest of the line, trimmed. A
/// `ram_bytes` that is no size is refused here, since the cache verdict reads it.
pub fn parse_description(text: &str) -> Result<BTreeMap<String, String>, DescriptionError> {
    let mut facts = BTreeMap::new();
    let mut first_seen: BTreeMap<String, usize> = BTreeMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let err = |problem: String| DescriptionError { line, problem };
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let shown: String = trimmed.chars().take(60).collect();
        let Some((key, value)) = trimmed.split_once('=') else {
            return Err(err(format!("`{shown}` is not KEY=VALUE (e.g. ram_bytes=64g, cpu_model=Xeon E5-2620)")));
        };
        let key = key.trim();
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')) {
            return Err(err(format!(
                "`{}` is no key: a key is letters, digits, `_`, `-` and `.` (e.g. nic_speed)",
                key.chars().take(60).collect::<String>()
            )));
        }
        let value = value.trim();
        if value.chars().any(char::is_control) {
            return Err(err(format!("the value of {key} holds a control character")));
        }
        if let Some(first) = first_seen.insert(key.to_string(), line) {
            return Err(err(format!("{key} is given again (first on line {first}): give each key once")));
        }
        if key == RAM_KEY && size_bytes(value).is_none() {
            return Err(err(format!(
                "{RAM_KEY}={value} is no size: give bytes or a size such as 64g (k, m, g, t: powers of 1024)"
            )));
        }
        facts.insert(key.to_string(), value.to_string());
    }
    Ok(facts)
}

impl ServerDescription {
    /// The server's RAM, where the description gives it.
    pub fn ram_bytes(&self) -> Option<u64> {
        self.facts.get(RAM_KEY).and_then(|v| size_bytes(v)).filter(|b| *b > 0)
    }
}

/// `17179869184`, `16g`, `16G`, `512m` -> bytes; None for anything else.
fn size_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, shift) = match text.char_indices().last()? {
        (i, c) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_lowercase() {
                'k' => 10,
                'm' => 20,
                'g' => 30,
                't' => 40,
                _ => return None,
            };
            (&text[..i], shift)
        }
        _ => (text, 0),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(1u64 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_as_facts_and_comments_and_blanks_are_skipped() {
        let text = "# seed 003's server\ncpu_model = Xeon E5-2620\n\nram_bytes=64g\nexport_options=rw,sync\n";
        let facts = parse_description(text).unwrap();
        assert_eq!(facts["cpu_model"], "Xeon E5-2620");
        assert_eq!(facts["export_options"], "rw,sync", "only the first = splits");
        let d = ServerDescription { described_by: "test".into(), facts };
        assert_eq!(d.ram_bytes(), Some(64 << 30));
    }

    #[test]
    fn a_malformed_line_is_refused_by_its_number() {
        let e = parse_description("a=1\n\njust words\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.to_string().starts_with("line 3: `just words` is not KEY=VALUE"), "{e}");
        assert_eq!(parse_description("a b=1").unwrap_err().line, 1);
        assert_eq!(parse_description("=1").unwrap_err().line, 1);
        let again = parse_description("a=1\nb=2\na=3").unwrap_err();
        assert_eq!((again.line, again.problem.contains("first on line 1")), (3, true), "{again}");
        let ram = parse_description("ram_bytes=lots").unwrap_err();
        assert!(ram.problem.contains("no size"), "{ram}");
        assert_eq!(size_bytes("512m"), Some(512 << 20));
        assert_eq!(size_bytes("12x"), None);
        assert_eq!(size_bytes("99999999999999999999"), None);
        assert_eq!(size_bytes("99999999999t"), None, "overflow is no size");
    }
}
