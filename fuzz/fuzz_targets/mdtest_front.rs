//! mdtest's command line (`iomatrix mdtest -n 1000 -u -d DIR ...`): the input's lines are the
//! arguments. Options that parse become a plan (or a refusal), and a plan's counts and header
//! are worked out, as the run would.
#![no_main]
use iomatrix_metadata::front::{options, plan};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let args: Vec<String> = text.lines().map(str::to_string).collect();
    if let Ok(parsed) = options::parse(&args) {
        if let Ok(p) = plan::plan(&parsed) {
            let _ = plan::items_per_client(&p);
            let _ = plan::tree_folders(&p.tree);
        }
    }
});
