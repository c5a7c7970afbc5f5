//! `iomatrix mdtest`: mdtest 4.x's command line ([`options`]) turned into a metadata plan
//! ([`plan`]), run as `run metadata` runs, and printed in mdtest's layout ([`output`]).

pub mod options;
pub mod output;
pub mod plan;
