//! Server targets (`nfs://host[:port]/export/path`, `smb://user@host:port/share/path`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(url) = iomatrix_nfs::NfsUrl::parse(text) {
        // What is printed parses back to the same target.
        assert_eq!(iomatrix_nfs::NfsUrl::parse(&url.to_string()).as_ref(), Ok(&url), "{text:?}");
    }
    let _ = iomatrix_smb::SmbUrl::parse(text, || Ok(None));
});
