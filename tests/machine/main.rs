//! The machine's state tests (issue 50), in a test binary of their own. Their quiet cells must
//! find a quiet machine: in the `cli` binary every other test beside them (two at a time on CI's
//! two cores) is other processes' load, which the rule rightly calls busy. Cargo runs test
//! binaries one after another, so here nothing of the suite runs beside them; within this binary
//! they take turns (`one_at_a_time`). Skipped cases are listed at the end, as in `cli`.

// The end-to-end binary's helpers, shared whole: this binary uses some of them.
#[allow(dead_code)]
#[path = "../cli/helpers.rs"]
mod helpers;

/// `helpers::Sandbox` starts the MPI build of the `cli` binary's MPI tests; none run here.
mod mpi {
    pub fn start_build_early() {}
}

mod trust_machine;
