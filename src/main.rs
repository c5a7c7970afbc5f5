//! `iomatrix`: the program (src/lib.rs) as a binary.

fn main() -> std::process::ExitCode {
    iomatrix::main()
}
