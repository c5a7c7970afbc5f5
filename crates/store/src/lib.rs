//! iomatrix-store
