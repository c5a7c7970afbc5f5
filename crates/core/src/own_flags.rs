//! iomatrix's own long flags on a tool's command line (`iomatrix iozone`,
//! `iomatrix bonnie`): `--label`, `--db`, `--json`, `--verify` and
//! `--compressible`, read here once for every front end.

use crate::{ShortFlag, UsageError};
use std::path::PathBuf;

/// What iomatrix's own flags asked for, beside the tool's flags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnFlags {
    /// `--label KEY=VALUE` (repeatable), unchecked: the caller parses them.
    pub labels: Vec<String>,
    /// `--db PATH`: the results database, over the global `--db`.
    pub db: Option<PathBuf>,
    /// `--json`: the stored run as JSON instead of tables.
    pub json: bool,
    /// `--verify`: stamped blocks, read back and checked.
    pub verify: bool,
    /// `--compressible PCT`: % of each written 4k block that is zeros.
    pub compressible: Option<u8>,
}

/// A front end, as its errors name it.
#[derive(Debug, Clone, Copy)]
pub struct FrontEnd {
    /// The tool, first word of each error: `iozone`, `bonnie`.
    pub tool: &'static str,
    /// A label to show when `--label` has no value: `cache=1`.
    pub label_example: &'static str,
}

impl OwnFlags {
    /// Takes `word` if it is one of iomatrix's own flags, with its value
    /// (`--db PATH`, `--db=PATH`) from `rest` where it is the next argument.
    /// Ok(false): not ours, for the front end to read or refuse.
    pub fn take(
        &mut self,
        front: FrontEnd,
        word: &str,
        rest: &mut impl Iterator<Item = ShortFlag>,
    ) -> Result<bool, UsageError> {
        let tool = front.tool;
        let (flag, attached) = match word.split_once('=') {
            Some((flag, value)) => (flag, Some(value.to_string())),
            None => (word, None),
        };
        let example = match flag {
            "--json" | "--verify" if attached.is_none() => {
                if flag == "--json" {
                    self.json = true;
                } else {
                    self.verify = true;
                }
                return Ok(true);
            }
            "--label" => front.label_example,
            "--db" => "/var/tmp/results.sqlite",
            "--compressible" => "50",
            _ => return Ok(false),
        };
        let value = match attached {
            Some(value) => value,
            None => match rest.next() {
                Some(ShortFlag::Operand(value)) => value,
                _ if flag == "--compressible" => {
                    return Err(UsageError::new(format!(
                        "{tool}: --compressible needs a percentage, e.g. --compressible {example}"
                    )))
                }
                _ => return Err(UsageError::new(format!("{tool}: {flag} needs a value, e.g. {flag} {example}"))),
            },
        };
        match flag {
            "--label" => self.labels.push(value),
            "--db" => self.db = Some(PathBuf::from(value)),
            _ => {
                let pct = parse_compressible(&value).map_err(|e| UsageError::new(format!("{tool}: {e}")))?;
                self.compressible = Some(pct);
            }
        }
        Ok(true)
    }
}

/// `--compressible PCT` as the front ends read it: a whole percentage, 0..=100.
pub fn parse_compressible(text: &str) -> Result<u8, String> {
    text.parse::<u8>()
        .ok()
        .filter(|&pct| pct <= 100)
        .ok_or_else(|| format!("--compressible {text}: give a percentage from 0 (incompressible) to 100"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const IOZONE: FrontEnd = FrontEnd { tool: "iozone", label_example: "cache=1" };

    fn read(line: &str) -> Result<OwnFlags, UsageError> {
        let mut own = OwnFlags::default();
        let mut words = line.split_whitespace().map(|w| {
            if w.starts_with("--") {
                ShortFlag::Word(w.into())
            } else {
                ShortFlag::Operand(w.into())
            }
        });
        while let Some(word) = words.next() {
            let ShortFlag::Word(w) = word else { panic!("{word:?} is not a flag") };
            if !own.take(IOZONE, &w, &mut words)? {
                return Err(UsageError::new(format!("not ours: {w}")));
            }
        }
        Ok(own)
    }

    #[test]
    fn values_come_attached_or_as_the_next_word() {
        let own =
            read("--label cache=1 --label=site=lab --db /tmp/r.sqlite --json --verify --compressible=30").unwrap();
        assert_eq!(own.labels, ["cache=1", "site=lab"]);
        assert_eq!(own.db, Some(PathBuf::from("/tmp/r.sqlite")));
        assert!(own.json && own.verify);
        assert_eq!(own.compressible, Some(30));
        assert_eq!(read("--db=/a --compressible 0").unwrap().compressible, Some(0));
    }

    #[test]
    fn a_missing_or_wrong_value_is_named_with_an_example() {
        let err = |line: &str| read(line).unwrap_err().to_string();
        assert_eq!(err("--label"), "iozone: --label needs a value, e.g. --label cache=1");
        assert_eq!(err("--db --json"), "iozone: --db needs a value, e.g. --db /var/tmp/results.sqlite");
        assert_eq!(err("--compressible"), "iozone: --compressible needs a percentage, e.g. --compressible 50");
        assert_eq!(
            err("--compressible 101"),
            "iozone: --compressible 101: give a percentage from 0 (incompressible) to 100"
        );
        assert!(err("--compressible=-1").contains("from 0 (incompressible) to 100"));
        // Not ours: left to the front end, which names the flag it does not know.
        assert_eq!(err("--json=yes"), "not ours: --json=yes");
        assert_eq!(err("--labels x"), "not ours: --labels");
    }
}
