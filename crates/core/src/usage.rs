/// A mistake in what the user asked for: bad flags, impossible plans, a target
/// that cannot be used. Reported as one line; the process exits with code 2.
/// The message names the problem and, where there is one, the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

impl UsageError {
    /// A usage error with this message (the problem, and the fix where there is one).
    pub fn new(msg: impl Into<String>) -> Self {
        UsageError(msg.into())
    }
}

impl From<crate::SizeError> for UsageError {
    fn from(e: crate::SizeError) -> Self {
        UsageError(e.to_string())
    }
}
