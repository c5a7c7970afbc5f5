//! Allocations whose size a user chose (a record, a count of files, a
//! queue depth): asked for with `try_reserve`, so that memory the machine
//! does not have is an error naming what wanted it, never an abort
//! (exit 134) in the allocator.

/// Memory that could not be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot allocate {} for {what}: this machine has not that much memory free", crate::human::bytes(*.bytes))]
pub struct AllocError {
    /// What it was for: "the record buffer", "the fileset's table of 1000000000 files".
    pub what: String,
    /// How many bytes were asked for.
    pub bytes: u64,
}

impl From<AllocError> for std::io::Error {
    fn from(e: AllocError) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::OutOfMemory, e.to_string())
    }
}

/// `n` copies of `value` in a vector, or an error naming `what`.
pub fn try_filled<T: Clone>(n: usize, value: T, what: &str) -> Result<Vec<T>, AllocError> {
    let mut v = try_with_capacity(n, what)?;
    v.resize(n, value);
    Ok(v)
}

/// An empty vector with room for `n`, or an error naming `what`.
pub fn try_with_capacity<T>(n: usize, what: &str) -> Result<Vec<T>, AllocError> {
    let mut v = Vec::new();
    try_grow(&mut v, n, what)?;
    Ok(v)
}

/// Room for `more` in `v`, or an error naming `what`.
pub fn try_grow<T>(v: &mut Vec<T>, more: usize, what: &str) -> Result<(), AllocError> {
    v.try_reserve_exact(more).map_err(|_| AllocError {
        what: what.to_string(),
        bytes: (more as u64).saturating_mul(std::mem::size_of::<T>().max(1) as u64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_cannot_be_had_is_an_error_not_an_abort() {
        let e = try_filled(usize::MAX / 16, 0u64, "a table").unwrap_err();
        assert_eq!(e.what, "a table");
        assert!(e.to_string().starts_with("cannot allocate"), "{e}");
        // More than any machine's address space: refused by the allocator, not the capacity check.
        let e = try_filled(1usize << 45, 0u8, "a 32 TiB buffer").unwrap_err();
        assert!(e.to_string().contains("32 TiB buffer"), "{e}");
        assert_eq!(try_filled(3, 7u8, "three").unwrap(), vec![7, 7, 7]);
    }
}
