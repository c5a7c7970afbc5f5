//! `iomatrix-mpi`: the same program as `iomatrix`, a name of its own for the MPI build
//! (`--features mpi`). The MPI tests build it beside the test build without replacing the
//! `iomatrix` the other tests run; `cargo build --release --features mpi` makes both.

fn main() -> std::process::ExitCode {
    iomatrix::main()
}
