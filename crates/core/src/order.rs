//! The one ordering rule for names that carry values: cells are listed by their parameters'
//! values (queue depth 1, 4, 16, 32; sizes 4k < 64k < 1m; read% and random% as numbers), never
//! as text, which puts qd=16 before qd=4 and 1m before 4k.

use std::cmp::Ordering;

/// A piece of a name: text, or a number (a size with its unit, in bytes).
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Piece<'a> {
    /// Digits, with a size's unit (k, m, g, t) applied: "64k" is 65536.
    Number(u128),
    /// Anything else, compared as text.
    Text(&'a str),
}

/// Compares two names with every number in them by its value and every size ("4k", "1m", as
/// [`crate::ByteSize`] prints them) by its bytes: "qd=4 read=70%" before "qd=16 read=0%",
/// "4k..64k" before "1m..4m". Text between the numbers compares as text. Names that compare equal
/// so ("04", "4") fall back to their text, so the order is total and agrees with equality.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    pieces(a).cmp(&pieces(b)).then_with(|| a.cmp(b))
}

fn pieces(name: &str) -> Vec<Piece<'_>> {
    let bytes = name.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let start = at;
        if bytes[at].is_ascii_digit() {
            while at < bytes.len() && bytes[at].is_ascii_digit() {
                at += 1;
            }
            let digits = &name[start..at];
            // Too many digits for u128 only where no cell's name goes: the largest then.
            let mut value = digits.parse::<u128>().unwrap_or(u128::MAX);
            if let Some(scale) = size_unit(bytes, at) {
                value = value.saturating_mul(scale);
                at += 1;
            }
            out.push(Piece::Number(value));
        } else {
            while at < bytes.len() && !bytes[at].is_ascii_digit() {
                at += 1;
            }
            out.push(Piece::Text(&name[start..at]));
        }
    }
    out
}

/// The scale of a size's unit right after digits ("k" in "64k"), where it ends a word: "4k" and
/// "4k.." are sizes, "4kb" and "ext4" are not.
fn size_unit(bytes: &[u8], at: usize) -> Option<u128> {
    let scale = match bytes.get(at)? {
        b'k' => 1u128 << 10,
        b'm' => 1 << 20,
        b'g' => 1 << 30,
        b't' => 1 << 40,
        _ => return None,
    };
    let ends_word = bytes.get(at + 1).is_none_or(|c| !c.is_ascii_alphanumeric());
    ends_word.then_some(scale)
}

#[cfg(test)]
mod tests {
    use super::natural_cmp;
    use std::cmp::Ordering;

    fn sorted(names: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = names.iter().map(|s| (*s).to_string()).collect();
        v.sort_by(|a, b| natural_cmp(a, b));
        v
    }

    #[test]
    fn queue_depths_sort_by_value_not_as_text() {
        let mixes = [
            "qd=16 read=100% random=0%",
            "qd=4 read=100% random=0%",
            "qd=32 read=100% random=0%",
            "qd=1 read=100% random=0%",
        ];
        assert_eq!(
            sorted(&mixes),
            [
                "qd=1 read=100% random=0%",
                "qd=4 read=100% random=0%",
                "qd=16 read=100% random=0%",
                "qd=32 read=100% random=0%"
            ]
        );
    }

    #[test]
    fn shares_sort_as_numbers_after_the_depth() {
        let mixes = [
            "qd=4 read=100% random=0%",
            "qd=4 read=70% random=100%",
            "qd=4 read=0% random=5%",
            "qd=1 read=100% random=0%",
        ];
        assert_eq!(
            sorted(&mixes),
            [
                "qd=1 read=100% random=0%",
                "qd=4 read=0% random=5%",
                "qd=4 read=70% random=100%",
                "qd=4 read=100% random=0%"
            ]
        );
        assert_eq!(sorted(&["random=100%", "random=25%", "random=5%"]), ["random=5%", "random=25%", "random=100%"]);
    }

    #[test]
    fn sizes_sort_by_bytes() {
        assert_eq!(sorted(&["1m", "64k", "4k", "1g", "512"]), ["512", "4k", "64k", "1m", "1g"]);
        assert_eq!(sorted(&["1m..4m (3 sizes)", "4k..64k (5 sizes)"]), ["4k..64k (5 sizes)", "1m..4m (3 sizes)"]);
        assert_eq!(
            natural_cmp("4k", "4096"),
            Ordering::Greater,
            "equal bytes: the text decides, so the order is total"
        );
    }

    #[test]
    fn words_are_not_sizes_and_text_compares_as_text() {
        assert_eq!(sorted(&["ext4", "xfs", "btrfs"]), ["btrfs", "ext4", "xfs"]);
        assert_eq!(sorted(&["3m", "4kb"]), ["4kb", "3m"], "4kb is 4 then text, 3m is 3 MiB");
        assert_eq!(sorted(&["cluster=10", "cluster=9", "cluster=x"]), ["cluster=9", "cluster=10", "cluster=x"]);
        assert_eq!(natural_cmp("", "qd=1"), Ordering::Less);
        assert_eq!(natural_cmp("qd=4", "qd=4"), Ordering::Equal);
        assert_eq!(natural_cmp("04", "4"), "04".cmp("4"), "equal values: the text decides");
    }
}
