//! Sizes (`64k`, `1.5g`), size lists (`4k,64k..1m`), durations (`30s`) and rate limits (`100Mbit`):
//! any text gives a value or an error, never a panic or a hang.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = text.parse::<iomatrix_core::ByteSize>();
    let _ = iomatrix_core::ByteSize::parse_with_default_unit(text, 1024);
    let _ = iomatrix_core::parse_size_list(text, 1024);
    let _ = iomatrix_core::parse_duration(text);
    let _ = text.parse::<iomatrix_core::BackendKind>();
    let _ = iomatrix_analysis::Limit::parse_rate(text);
});
