use crate::UsageError;

/// One item of a classic Unix command line of one-letter flags, as IOzone
/// and bonnie++ read theirs: `-Rab out.xlsx` is `R`, `a`, `b out.xlsx`;
/// `-s512m` is `s 512m`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShortFlag {
    /// A flag without a value (`-R`).
    Switch(char),
    /// A flag and its value, joined (`-s512m`) or the next argument (`-s 512m`).
    Value(char, String),
    /// A whole argument the tool reads as one word (IOzone's `-+n`, `--allow-cache`).
    Word(String),
    /// An argument that is not a flag (these tools take none; the caller says so).
    Operand(String),
}

/// The error for an [`ShortFlag::Operand`]: these tools take only flags.
pub fn unexpected_operand(tool: &str, arg: &str) -> UsageError {
    UsageError::new(format!("{tool}: unexpected argument '{arg}': {tool} takes only flags (see iomatrix {tool} -h)"))
}

/// Splits `args` into flags. `takes_value` names the letters that take a
/// value (the rest of the cluster, or else the next argument); `is_word`
/// picks arguments to pass through whole. `tool` names the tool in errors.
pub fn short_flags(
    tool: &str,
    args: &[String],
    takes_value: impl Fn(char) -> bool,
    is_word: impl Fn(&str) -> bool,
) -> Result<Vec<ShortFlag>, UsageError> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if is_word(arg) {
            out.push(ShortFlag::Word(arg.clone()));
            continue;
        }
        let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.is_empty()) else {
            out.push(ShortFlag::Operand(arg.clone()));
            continue;
        };
        let chars: Vec<char> = cluster.chars().collect();
        for (j, &flag) in chars.iter().enumerate() {
            if !takes_value(flag) {
                out.push(ShortFlag::Switch(flag));
                continue;
            }
            let value = if j + 1 < chars.len() {
                chars[j + 1..].iter().collect()
            } else if i < args.len() {
                i += 1;
                args[i - 1].clone()
            } else {
                return Err(UsageError::new(format!("{tool}: -{flag} needs a value (see iomatrix {tool} -h)")));
            };
            out.push(ShortFlag::Value(flag, value));
            break;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ShortFlag::*;

    fn parse(line: &str) -> Result<Vec<ShortFlag>, UsageError> {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        short_flags("iozone", &args, |c| matches!(c, 'b' | 's'), |a| a.starts_with("-+"))
    }

    #[test]
    fn clusters_values_and_words() {
        assert_eq!(
            parse("-Rab out.xlsx -s512m -+n -e").unwrap(),
            [
                Switch('R'),
                Switch('a'),
                Value('b', "out.xlsx".into()),
                Value('s', "512m".into()),
                Word("-+n".into()),
                Switch('e')
            ]
        );
        assert!(parse("-s").unwrap_err().to_string().contains("-s needs a value"));
        assert_eq!(parse("x -e").unwrap(), [Operand("x".into()), Switch('e')]);
    }
}
