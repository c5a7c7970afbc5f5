//! The Bonnie suite: bonnie++'s tests of one file system, with bonnie's and
//! bonnie++'s command line.
//!
//! - [`BonniePlan`]: a validated, serialisable plan (file size, chunk,
//!   files, seekers, repeats, seed); [`BonniePlan::validate`] holds
//!   bonnie++'s twice-the-RAM rule.
//! - [`BonnieTest`]: the twelve tests in bonnie++'s order, with their names
//!   and report headings; [`planned_tests`] lists a plan's runs of them.
//! - [`front::parse`]: a `bonnie`/`bonnie++` command line turned into a
//!   [`front::BonnieInvocation`].
//! - [`execute`]: runs a plan from one client or many (threads, or MPI
//!   ranks), each in its own folder `client-r` of the working folder, all
//!   starting every test together, and hands every finished [`BonnieCell`]
//!   (each client's [`BonnieResult`], and the merged figures) to the caller
//!   at once; a client's [`BonnieError`] says what failed and where.
//!   [`execute_at`] does the same with the clients' folders on a server
//!   ([`Place::Remote`]), through iomatrix's own NFS/SMB client.
//! - [`report`] / [`report_for`]: bonnie++'s plain-text tables;
//!   [`csv_lines`]: bonnie++ 2.00a's CSV line (format 1.98), field for field.
//!
//! What each test does (bonnie++'s definitions; opening the file is outside
//! the timing, closing it inside):
//! 1. putc: with [`PerChar::Bonnie`], the file written one byte per call
//!    into a user-space buffer (st_blksize bytes, as C stdio), the buffer
//!    going out by write(2); with [`PerChar::BonniePlus`] (bonnie++ 2.00a),
//!    its first 3 MiB written one write(2) system call per byte, then fsync.
//! 2. write: the file written anew in chunk-sized write(2) calls.
//! 3. rewrite: each chunk read, one byte changed, lseek back, written.
//! 4. getc: the file read one byte per call from a user-space buffer, or
//!    (bonnie++ 2.00a) its first 3 MiB one read(2) per byte, then fsync.
//! 5. read: the file read in chunk-sized read(2) calls.
//! 6. seeks: seeker threads, each with its own descriptor, lseek to random
//!    chunks and read them, writing one in ten back; seeks/s over the time
//!    from the first start to the last finish.
//! 7. create/stat/delete of many files, in sequential and in random order.
//!
//! %CPU is the CPU of every thread doing a test (exact, from the thread
//! CPU clock) over the test's wall time.
#![warn(missing_docs)]

pub mod cli;
mod clients;
mod csv;
mod error;
pub mod figures;
mod files;
pub mod front;
pub mod import;
mod io;
mod local;
mod place;
mod plan;
mod remote;
pub mod render;
mod report;
mod runner;
mod stored;
mod test;
mod timing;

pub use clients::{client_folder, execute, execute_at, BonnieCell, ClientBonnie};
pub use csv::{
    csv_line, csv_lines, csv_version, CsvSource, CSV_BONNIE_PER_CHAR, CSV_FORMAT, CSV_HEADER, CSV_WRITER_PREFIX,
};
pub use error::BonnieError;
pub use figures::BonnieCellFigures;
pub use iomatrix_backend::Place;
pub use plan::{
    BonniePlan, PerChar, BONNIE_PLUS_PER_CHAR, BONNIE_PLUS_SEEKERS, DEFAULT_CHUNK, DEFAULT_FILES, DEFAULT_SEEKERS,
    DEFAULT_SEEKS, FILES_UNIT, MAX_CHUNK, MAX_FILES, UPDATE_EVERY,
};
pub use remote::{per_char_buffers, MAX_PER_CHAR_BUFFER};
pub use report::{report, report_for, report_marked, NotWhole, MIN_TIME_NS};
pub use runner::{DATA_FILE, FILES_DIR};
pub use test::{BonnieResult, BonnieTest};

/// Every (repeat, test) the plan runs, in order; repeats count from 1.
/// For progress totals.
pub fn planned_tests(plan: &BonniePlan) -> Vec<(u32, BonnieTest)> {
    let tests = plan.tests();
    (1..=plan.repeats).flat_map(|r| tests.iter().map(move |&t| (r, t))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_core::{ByteSize, MIB};

    #[test]
    fn planned_tests_repeat_the_set() {
        let mut plan = BonniePlan::new(ByteSize(8 * MIB));
        plan.repeats = 2;
        plan.files = 0;
        let planned = planned_tests(&plan);
        assert_eq!(planned.len(), 12);
        assert_eq!(planned[0], (1, BonnieTest::PutcWrite));
        assert_eq!(planned[6], (2, BonnieTest::PutcWrite));
        assert_eq!(planned[11], (2, BonnieTest::RandomSeeks));
        plan.repeats = 0;
        assert!(planned_tests(&plan).is_empty());
    }
}
