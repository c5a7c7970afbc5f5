//! The exit codes of `iomatrix`, in one place that imports nothing of the
//! binary: 0 done, 1 the run failed for a cause other than its clients (the
//! database, the working folder, iomatrix itself), 2 a usage error (bad
//! input), 3 clients (threads, MPI ranks, or a suite's connections) failed:
//! the run is `partial` (every cell ran, under `--on-client-error continue`)
//! or `failed` (it stopped at the first failure, under abort), 4 every cell
//! ran but `--verify` found data mismatches, 5 `compare --fail-if-slower`
//! found figures slower beyond its threshold, 6 `compare --fail-if-slower`
//! could not check every figure it was asked about (none slower), 128 + N
//! stopped by signal N (129 SIGHUP, 130 Ctrl-C, 143 SIGTERM).

use iomatrix_core::UsageError;

pub const FAILED: u8 = 1;
pub const USAGE: u8 = 2;
pub const CLIENTS_LOST: u8 = 3;
pub const DATA_MISMATCHES: u8 = 4;
/// `compare --fail-if-slower`: B is slower than A beyond the threshold and the noise.
pub const SLOWER: u8 = 5;
/// `compare --fail-if-slower`: none slower, but figures asked about could not be checked (not in
/// B, left out as not whole, too few samples): a gate never passes on what it did not check.
pub const NOT_CHECKED: u8 = 6;
/// Interrupted, when no signal number is known.
pub const INTERRUPTED: u8 = 130;

/// A run that ended because its clients failed (a server that stopped answering, a full disk,
/// a rank that died): the target's or the clients' fault, told apart from iomatrix's own (exit 1)
/// by exit 3, whatever `--on-client-error` said and whatever launched the run.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ClientsFailed(pub String);

/// A usage error anywhere in the chain means the user can fix the input: exit 2; a run whose
/// clients failed: exit 3; anything else: exit 1.
pub fn code_for(err: &anyhow::Error) -> u8 {
    if err.chain().any(is_usage) {
        USAGE
    } else if err.chain().any(|e| e.downcast_ref::<ClientsFailed>().is_some()) {
        CLIENTS_LOST
    } else {
        FAILED
    }
}

/// Whether `e` is a usage error, itself or as a crate's error that is one and says it in its own
/// words (a transparent variant, whose chain does not hold the usage error).
fn is_usage(e: &(dyn std::error::Error + 'static)) -> bool {
    e.is::<UsageError>() || e.downcast_ref::<iomatrix_guard::OutputError>().is_some_and(|o| o.usage().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;
    use iomatrix_guard::OutputError;

    #[test]
    fn a_usage_error_inside_a_crate_error_still_exits_2() {
        let refused =
            anyhow::Error::from(OutputError::Refused(UsageError::new("-o r.html: that is the results database")));
        assert_eq!(code_for(&refused), USAGE);
        assert_eq!(
            refused.to_string(),
            "-o r.html: that is the results database",
            "the message stays the usage error's"
        );
        let wrapped =
            Err::<(), _>(OutputError::Refused(UsageError::new("bad"))).context("writing the report").unwrap_err();
        assert_eq!(code_for(&wrapped), USAGE);
        let failed = anyhow::Error::from(OutputError::Failed("-o r.html: cannot write r.html: disk full".into()));
        assert_eq!(code_for(&failed), FAILED);
        assert_eq!(code_for(&anyhow::Error::from(ClientsFailed("client 1 failed".into()))), CLIENTS_LOST);
    }
}
