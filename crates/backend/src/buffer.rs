use iomatrix_random::Generator;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;

/// A heap buffer aligned to [`crate::DIRECT_ALIGN`], so it is usable with O_DIRECT,
/// filled with pseudo-random (incompressible) bytes.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Vec<u8>.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A buffer of `len` bytes (at least one), for sizes the code fixes.
    ///
    /// # Panics
    /// Only if the allocator fails, as `Vec` does; a size the user
    /// chose goes through [`AlignedBuf::try_new`].
    pub fn new(len: usize) -> Self {
        AlignedBuf::try_new(len, "a buffer").unwrap_or_else(|e| panic!("{e}"))
    }

    /// A buffer of `len` bytes (at least one), or an error naming `what`
    /// when the memory cannot be had: never an abort.
    pub fn try_new(len: usize, what: &str) -> Result<Self, iomatrix_core::alloc::AllocError> {
        let refused = || iomatrix_core::alloc::AllocError { what: what.to_string(), bytes: len as u64 };
        let layout = Layout::from_size_align(len.max(1), crate::DIRECT_ALIGN).map_err(|_| refused())?;
        // SAFETY: layout has non-zero size.
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or_else(refused)?;
        let mut buf = AlignedBuf { ptr, layout };
        // Incompressible, and the same bytes for the same length on every run.
        Generator::seeded(len as u64).fill(buf.as_mut_slice());
        Ok(buf)
    }
    /// Its length in bytes (at least one).
    pub fn len(&self) -> usize {
        self.layout.size()
    }
    /// Never: a buffer holds at least one byte (clippy pairs `len` with `is_empty`).
    pub fn is_empty(&self) -> bool {
        false
    }
    /// Its bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr points to layout.size() initialised (zeroed, then filled) bytes we own.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.layout.size()) }
    }
    /// Its bytes, to fill.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this very layout.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_larger_than_memory_is_an_error() {
        let e = AlignedBuf::try_new(1 << 50, "the record buffer").err().expect("1 PiB is not to be had");
        assert!(e.to_string().contains("the record buffer"), "{e}");
        assert!(AlignedBuf::try_new(usize::MAX, "an impossible layout").is_err());
    }

    #[test]
    fn aligned_and_not_constant() {
        let b = AlignedBuf::new(8192 + 3);
        assert_eq!(b.as_slice().as_ptr() as usize % crate::DIRECT_ALIGN, 0);
        assert_eq!(b.len(), 8195);
        let distinct: std::collections::HashSet<u8> = b.as_slice().iter().copied().collect();
        assert!(distinct.len() > 200, "buffer looks compressible: {} distinct bytes", distinct.len());
    }
}
