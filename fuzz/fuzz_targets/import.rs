//! The importers (fio JSON, IOzone -R text, bonnie++ CSV, Bonnie's table, Iometer's CSV, mdtest's
//! output, a published table): any text is recognised or not, and read as each format, with an error or
//! runs, never a panic.
#![no_main]
use iomatrix_import::{parse, Importers, Options};
use libfuzzer_sys::fuzz_target;

/// The importers of the suites that have them, as the command table registers them.
fn importers() -> Importers {
    Importers::new(
        [
            iomatrix_iozone::import::IMPORTERS,
            iomatrix_access::import::IMPORTERS,
            iomatrix_bonnie::import::IMPORTERS,
            iomatrix_metadata::import::IMPORTERS,
        ]
        .concat(),
        vec![
            iomatrix_iozone::import::PUBLISHED,
            iomatrix_access::import::PUBLISHED,
            iomatrix_bonnie::import::PUBLISHED,
            iomatrix_metadata::import::PUBLISHED,
        ],
    )
}

fuzz_target!(|text: &str| {
    let importers = importers();
    let _ = importers.sniff(text);
    for importer in importers.all() {
        let _ = parse(text, importer, &Options::default());
        let _ = parse(text, importer, &Options { chunk_size: Some(8192), skip_bad_lines: true });
    }
});
