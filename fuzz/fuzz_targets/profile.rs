//! File-size profiles (`scan --save-profile`, read by `run fileserver --profile`): any bytes are
//! refused with a reason or give a profile that draws sizes.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(profile) = iomatrix_tree::Profile::from_json(bytes, "fuzz") {
        let _ = profile.draw(0);
        let _ = profile.draw(u64::MAX);
        let _ = profile.share_of_files_between(0, u64::MAX);
    }
});
