//! bonnie++'s command line (`iomatrix bonnie -d DIR -s 1024 -n 16 ...`): the input's lines are the
//! arguments. A plan that parses is validated against a 24 GiB machine, as the run would.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let args: Vec<String> = text.lines().map(str::to_string).collect();
    if let Ok(invocation) = iomatrix_bonnie::front::parse(&args) {
        let _ = invocation.plan.validate(24 << 30);
    }
});
