//! The importers (fio JSON, IOzone -R text, bonnie++ CSV, Bonnie's table, Iometer's CSV): any text is recognised or not, and read
//! as each format, with an error or runs, never a panic.
#![no_main]
use iomatrix_import::{parse, sniff, Format, Options};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = sniff(text);
    for format in Format::ALL {
        let _ = parse(text, format, &Options::default());
        let _ = parse(text, format, &Options { bonnie_chunk: Some(8192), skip_bad_lines: true });
    }
});
