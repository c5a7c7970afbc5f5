//! iomatrix-iozone
