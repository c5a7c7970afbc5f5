//! IOzone 3.471's `-R` "Excel output" text report: the writer. Its parser
//! lives beside the IOzone importer (`iomatrix_import::iozone_excel`).
//!
//! After the line `Excel output is below:` IOzone prints one block per test:
//!
//! ```text
//!
//! "Writer report"
//!         "4"  "8"  "16"  "32"  "64"  "128"  "256"  "512"  "1024"  "2048"  "4096"  "8192"  "16384"
//! "64"   524487  1638743  2006158  1933893  1879725
//! "128"   1561553  2098744  2027414  2784517  2920861  2660335
//! ```
//!
//! (each row ends with a space). The header always lists every record size
//! IOzone knows, 4 to 16384 KiB. A row carries no record sizes: its values
//! fill the columns from the left, starting at the run's minimum record size.

use crate::matrix::Matrix;

/// Every record size (KiB) IOzone prints in a `-R` header: 4 to 16384.
pub const IOZONE_RECORD_SIZES_KIB: [u64; 13] = [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];

/// The text IOzone prints after `Excel output is below:`, for `matrices` in
/// the order given.
///
/// Each block is a blank line, the title in double quotes, the header of
/// record sizes and one row per file size, exactly as IOzone 3.471 lays them
/// out (including the trailing space on each row). The header is IOzone's
/// fixed 4..16384 list, plus any other record size the matrix holds (IOzone
/// itself never has any). Values are rounded to integers.
///
/// Like IOzone, a row lists its values in ascending record size without
/// saying which record size each belongs to; a parser puts them back from
/// the run's minimum record size up. So a matrix round-trips only if each
/// file's record sizes are consecutive header entries starting at that
/// minimum, which is what IOzone's runs produce.
pub fn excel_report(matrices: &[Matrix]) -> String {
    let mut out = String::new();
    for m in matrices {
        out.push('\n');
        out.push('"');
        out.push_str(&m.title);
        out.push_str("\"\n");

        let mut header: Vec<u64> = IOZONE_RECORD_SIZES_KIB.to_vec();
        header.extend(m.record_sizes());
        header.sort_unstable();
        header.dedup();
        out.push_str("      ");
        for r in header {
            out.push_str(&format!("  \"{r}\""));
        }
        out.push('\n');

        for f in m.file_sizes() {
            out.push_str(&format!("\"{f}\"  "));
            for (_, v) in m.row(f) {
                out.push_str(&format!(" {v:.0} "));
            }
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::MatrixCell;

    #[test]
    fn writes_iozone_row_and_header_whitespace() {
        let m = Matrix {
            title: "Writer report".into(),
            unit: "KB/s".into(),
            cells: vec![
                MatrixCell { file_kib: 64, record_kib: 8, value: 1638743.4 },
                MatrixCell { file_kib: 64, record_kib: 4, value: 524486.6 },
            ],
        };
        let expected = "\n\"Writer report\"\n        \"4\"  \"8\"  \"16\"  \"32\"  \"64\"  \"128\"  \"256\"  \"512\"  \"1024\"  \"2048\"  \"4096\"  \"8192\"  \"16384\"\n\"64\"   524487  1638743 \n";
        assert_eq!(excel_report(&[m]), expected);
    }

    #[test]
    fn header_gains_non_standard_record_sizes() {
        let m = Matrix {
            title: "Reader report".into(),
            unit: "KB/s".into(),
            cells: vec![MatrixCell { file_kib: 64, record_kib: 2, value: 1.0 }],
        };
        let text = excel_report(&[m]);
        let header = text.lines().nth(2).unwrap_or_default();
        assert!(header.starts_with("        \"2\"  \"4\"  \"8\""), "{header}");
    }
}
