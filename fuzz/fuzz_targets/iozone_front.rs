//! IOzone's command line (`iomatrix iozone -a -s 64m -r 4k -i 0 ...`): the input's lines are the
//! arguments. A plan that parses is validated and its cells listed, as the run would.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let args: Vec<String> = text.lines().map(str::to_string).collect();
    if let Ok(invocation) = iomatrix_iozone::front::parse(&args) {
        if invocation.plan.validate().is_ok() {
            let _ = invocation.plan.cells();
        }
    }
});
