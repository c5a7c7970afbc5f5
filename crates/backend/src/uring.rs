//! Linux io_uring behind the queued seam.
//!
//! Requests are pushed onto the submission queue in `submit` and handed to the
//! kernel in groups of up to [`default_submit_batch`] (or
//! [`QueuedFile::submit_batch`]) as they are prepared; the group that fills
//! the queue goes in with the wait for a completion, in `reap` (one
//! `io_uring_enter` for both). Buffers and the file are registered with the
//! ring where the kernel allows it (`IORING_OP_READ_FIXED`/`WRITE_FIXED`,
//! `IOSQE_FIXED_FILE`); otherwise plain `IORING_OP_READ`/`WRITE` on the fd.

use crate::open::open_file;
use crate::queued::{check_buffer_len, check_reap, check_request, invalid, Completion, QueuedFile, Request, Submitted};
use crate::{AlignedBuf, OpenHow, DIRECT_ALIGN};
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use iomatrix_core::BackendKind;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

type Ring = IoUring<squeue::Entry, cqueue::Entry>;

/// `IORING_ENTER_GETEVENTS` (include/uapi/linux/io_uring.h), which the io-uring
/// crate keeps private: with it, an enter also runs deferred completions.
const IORING_ENTER_GETEVENTS: u32 = 1;

/// The kernel's cap on ring entries (`IORING_MAX_ENTRIES` in io_uring/io_uring.h,
/// unchanged since Linux 5.4). [`probe_io_uring`] measures the real limit.
pub const IORING_MAX_ENTRIES: u32 = 32768;

/// What io_uring offers on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UringSupport {
    /// A buffer could be registered (`IORING_REGISTER_BUFFERS`). A file's own
    /// registration can still fail when `depth * buffer_len` exceeds
    /// `RLIMIT_MEMLOCK`; [`UringFile::registered`] tells.
    pub registered_buffers: bool,
    /// A file could be registered (`IORING_REGISTER_FILES`).
    pub registered_files: bool,
    /// The largest queue depth (ring entries) the kernel accepts:
    /// [`IORING_MAX_ENTRIES`] on every kernel with IORING_OP_READ. Memory
    /// permitting: where ring memory is charged to RLIMIT_MEMLOCK (unprivileged
    /// users), a deep ring can still fail to open with ENOMEM.
    pub max_depth: u32,
}

/// What io_uring offers on this machine, probed at run time (never panics):
/// `Ok(details)`, or `Err(reason)` such as "io_uring_setup failed: Operation
/// not permitted (kernel.io_uring_disabled=2)". Probed once per process.
pub fn probe_io_uring() -> Result<UringSupport, UringUnavailable> {
    static PROBED: OnceLock<Result<UringSupport, UringUnavailable>> = OnceLock::new();
    PROBED.get_or_init(probe_uncached).clone()
}

/// Why io_uring cannot be used here (kept once per process, so the system's error is kept as text).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UringUnavailable {
    /// io_uring_setup failed.
    #[error("io_uring_setup failed: {error}{hint}")]
    Setup {
        /// The system's error.
        error: String,
        /// The likely cause, " (kernel.io_uring_disabled=2)", or empty.
        hint: String,
    },
    /// The kernel cannot list io_uring's operations (IORING_REGISTER_PROBE), with its error.
    #[error("io_uring cannot list its operations (IORING_REGISTER_PROBE: {0}); kernel older than 5.6?")]
    NoProbe(String),
    /// The operation's name, `IORING_OP_READ_FIXED`.
    #[error("io_uring on this kernel lacks {0}")]
    Lacks(&'static str),
}

fn probe_uncached() -> Result<UringSupport, UringUnavailable> {
    let ring = Ring::builder().build(1).map_err(|e| setup_error(&e))?;
    let mut probe = io_uring::Probe::new();
    ring.submitter().register_probe(&mut probe).map_err(|e| UringUnavailable::NoProbe(e.to_string()))?;
    for (code, name) in [
        (opcode::Read::CODE, "IORING_OP_READ"),
        (opcode::Write::CODE, "IORING_OP_WRITE"),
        (opcode::ReadFixed::CODE, "IORING_OP_READ_FIXED"),
        (opcode::WriteFixed::CODE, "IORING_OP_WRITE_FIXED"),
    ] {
        if !probe.is_supported(code) {
            return Err(UringUnavailable::Lacks(name));
        }
    }
    drop(ring);
    let (registered_buffers, registered_files) = probe_registration();
    Ok(UringSupport { registered_buffers, registered_files, max_depth: probe_max_depth() })
}

/// Registers one buffer and one file (a memfd) with a small ring.
fn probe_registration() -> (bool, bool) {
    // Declared before the ring, so dropped after it: the registration never
    // outlives the memory it names.
    let mut buf = AlignedBuf::new(DIRECT_ALIGN);
    let Ok(ring) = Ring::builder().build(1) else { return (false, false) };
    let iov = libc::iovec { iov_base: buf.as_mut_slice().as_mut_ptr().cast(), iov_len: buf.len() };
    // SAFETY: iov describes `buf`, which is live and unused until after `ring`
    // (and with it the registration) is dropped; no I/O is ever issued.
    let buffers = unsafe { ring.submitter().register_buffers(&[iov]) }.is_ok();
    let files = rustix::fs::memfd_create("iomatrix-uring-probe", rustix::fs::MemfdFlags::CLOEXEC)
        .is_ok_and(|fd| ring.submitter().register_files(&[fd.as_raw_fd()]).is_ok());
    (buffers, files)
}

/// The most entries a ring may have. A ring one entry above
/// [`IORING_MAX_ENTRIES`] is refused with EINVAL before the kernel allocates
/// anything, which confirms the documented limit without building (and
/// charging to RLIMIT_MEMLOCK) a ring of that size. A kernel that accepts
/// more has raised the limit; IORING_SETUP_CLAMP then reports the new one.
fn probe_max_depth() -> u32 {
    match Ring::builder().build(IORING_MAX_ENTRIES + 1) {
        // EINVAL as expected; anything else (ENOMEM) leaves the documented limit.
        Err(_) => IORING_MAX_ENTRIES,
        Ok(ring) => {
            drop(ring);
            Ring::builder().setup_clamp().build(u32::MAX).map_or(IORING_MAX_ENTRIES + 1, |r| r.params().sq_entries())
        }
    }
}

/// How completions reach the thread that waits for them, by what the
/// kernel accepted when the ring was set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TaskRun {
    /// `IORING_SETUP_SINGLE_ISSUER | DEFER_TASKRUN` (6.1+, with COOP_TASKRUN):
    /// completions are run only when this thread enters the kernel to wait
    /// for them, never by interrupting it; the ring's one thread is ours.
    Deferred,
    /// `IORING_SETUP_COOP_TASKRUN` (5.19+): completions are run when this
    /// thread next enters the kernel instead of by interrupting it.
    Cooperative,
    /// Neither: every completion from another CPU interrupts this thread (an IPI).
    Interrupting,
}

/// A ring of `entries`, set up as fio 3.33 sets up its own where the kernel
/// allows (COOP_TASKRUN, SINGLE_ISSUER, DEFER_TASKRUN): a deep queue of
/// direct I/O then pays no IPI per completion. The ring must be used by the
/// thread that made it, which every suite's client does (it opens, drives
/// and closes its file on its own thread).
fn build_ring(entries: u32) -> io::Result<(Ring, TaskRun)> {
    let refused = |e: &io::Error| e.raw_os_error() == Some(libc::EINVAL);
    match Ring::builder().setup_coop_taskrun().setup_single_issuer().setup_defer_taskrun().build(entries) {
        Ok(ring) => return Ok((ring, TaskRun::Deferred)),
        Err(e) if refused(&e) => {}
        Err(e) => return Err(io::Error::new(e.kind(), setup_error(&e))),
    }
    match Ring::builder().setup_coop_taskrun().build(entries) {
        Ok(ring) => return Ok((ring, TaskRun::Cooperative)),
        Err(e) if refused(&e) => {}
        Err(e) => return Err(io::Error::new(e.kind(), setup_error(&e))),
    }
    Ring::builder()
        .build(entries)
        .map(|ring| (ring, TaskRun::Interrupting))
        .map_err(|e| io::Error::new(e.kind(), setup_error(&e)))
}

/// Explains a failing io_uring_setup(2): disabled by sysctl, blocked by
/// seccomp, or missing from the kernel.
fn setup_error(e: &io::Error) -> UringUnavailable {
    let sysctl = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled").ok();
    let hint = match (sysctl.as_deref().map(str::trim), e.raw_os_error()) {
        (Some(v), _) if v != "0" => format!(" (kernel.io_uring_disabled={v})"),
        (_, Some(libc::EPERM)) => " (blocked by seccomp or kernel.io_uring_disabled?)".to_string(),
        (_, Some(libc::ENOSYS)) => " (kernel without io_uring, or blocked by seccomp)".to_string(),
        (_, Some(libc::ENOMEM)) => " (RLIMIT_MEMLOCK too low for the ring?)".to_string(),
        _ => String::new(),
    };
    UringUnavailable::Setup { error: e.to_string(), hint }
}

#[derive(Debug, Clone, Copy)]
enum Slot {
    Free,
    /// Owned by the kernel (queued or running); `done` bytes moved so far.
    InKernel {
        req: Request,
        done: usize,
    },
    /// Finished; its completion waits in `finished` for `reap`.
    Finished,
}

/// A file driven through an io_uring with up to `depth` requests in flight.
///
/// Short transfers are resubmitted for the remainder, so a completion always
/// covers the whole request; a read that reaches the end of the file (0 bytes)
/// completes with `UnexpectedEof`, a write that moves 0 bytes with `WriteZero`.
/// Negative results become `io::Error::from_raw_os_error(-res)`.
///
/// `flush_to_storage` waits for everything in flight, then calls plain
/// `fsync(2)`: with nothing in flight an `IORING_OP_FSYNC` would cost the same
/// one system call.
///
/// The ring is set up without SINGLE_ISSUER/DEFER_TASKRUN, so the file may move
/// between threads.
pub struct UringFile {
    // Declared before `bufs`: the ring (and the kernel's registration of the
    // buffers) goes first when the struct is dropped.
    ring: Ring,
    /// Taken by `close`, which checks the error of `close(2)`.
    file: Option<File>,
    fd: RawFd,
    bufs: Vec<AlignedBuf>,
    slots: Vec<Slot>,
    buffer_len: usize,
    /// Slots in `Slot::InKernel`.
    in_kernel: usize,
    /// Completions not yet handed out by `reap`.
    finished: Vec<Completion>,
    fixed_bufs: bool,
    fixed_file: bool,
    /// Why registration failed, for `describe`.
    notes: Vec<String>,
    /// How long `reap` asks the kernel for completions without sleeping
    /// before it waits ([`QueuedFile::poll_completions`]); None: it waits at once.
    poll: Option<Duration>,
    /// Requests are handed to the kernel once this many are queued
    /// ([`QueuedFile::submit_batch`]; [`default_submit_batch`] of the depth).
    submit_batch: usize,
}

/// How many prepared requests the ring hands to the kernel at once, by queue
/// depth, unless the caller says otherwise: depth/8, at least 1, at most 8.
///
/// Why not the whole batch a reap freed, in one call: the kernel plugs a batch
/// of more than two requests and starts none of them until it has prepared
/// all, so a device fed by one worker (a loop device, a network block device)
/// runs dry meanwhile and completions come back in bursts. Measured on ext4
/// over a loop device at depth 32, 4 KiB O_DIRECT: groups of 4 gave about
/// 1.3x (reads) to 1.6x (writes) the IOPS of whole batches, in iomatrix and in
/// fio alike (`--iodepth_batch_submit`); at depth 8 one request at a time did
/// best for reads and no worse for writes; at depth 128 groups of 8 matched
/// whole batches, while one at a time lost a quarter to the system calls.
/// bench/README.md ("Submitting in groups") has the runs.
pub fn default_submit_batch(depth: usize) -> usize {
    (depth / 8).clamp(1, 8)
}

impl UringFile {
    /// Opens `path` with a ring of `depth` entries and `depth` aligned buffers
    /// of `buffer_len` bytes. With `register`, buffers and file are registered
    /// with the ring where the kernel allows (see [`registered`](Self::registered));
    /// without, plain reads and writes on the fd (to measure what registration buys).
    pub fn open(path: &Path, how: &OpenHow, depth: usize, buffer_len: usize, register: bool) -> io::Result<Self> {
        if depth == 0 {
            return Err(invalid(format!(
                "io_uring queue depth must be at least 1 and at most the kernel's limit \
                 (IORING_MAX_ENTRIES, normally {IORING_MAX_ENTRIES}); got 0"
            )));
        }
        let support = probe_io_uring().map_err(|reason| io::Error::new(io::ErrorKind::Unsupported, reason))?;
        if depth > support.max_depth as usize {
            return Err(invalid(format!(
                "io_uring queue depth {depth} exceeds the most entries this kernel accepts for a ring \
                 ({}, IORING_MAX_ENTRIES)",
                support.max_depth
            )));
        }
        check_buffer_len(buffer_len)?;
        if u32::try_from(buffer_len).is_err() {
            return Err(invalid(format!("io_uring buffer size {buffer_len} exceeds one request's limit (4 GiB)")));
        }
        let mut bufs = iomatrix_core::alloc::try_with_capacity(depth, "the queue's buffers")?;
        for _ in 0..depth {
            bufs.push(AlignedBuf::try_new(buffer_len, &format!("{depth} request buffers of {buffer_len} bytes"))?);
        }
        let file = open_file(path, how)?;
        let (ring, task_run) = build_ring(depth as u32)?;
        let mut this = UringFile {
            ring,
            fd: file.as_raw_fd(),
            file: Some(file),
            bufs,
            slots: vec![Slot::Free; depth],
            buffer_len,
            in_kernel: 0,
            finished: Vec::with_capacity(depth),
            fixed_bufs: false,
            fixed_file: false,
            notes: Vec::new(),
            poll: None,
            submit_batch: default_submit_batch(depth),
        };
        match task_run {
            TaskRun::Deferred => {}
            TaskRun::Cooperative => this.notes.push("no IORING_SETUP_DEFER_TASKRUN (kernel older than 6.1)".into()),
            TaskRun::Interrupting => {
                this.notes.push("no IORING_SETUP_COOP_TASKRUN (kernel older than 5.19)".to_string());
            }
        }
        if register {
            this.register();
        } else {
            this.notes.push("registration off".to_string());
        }
        Ok(this)
    }

    fn register(&mut self) {
        let iovecs: Vec<libc::iovec> = self
            .bufs
            .iter_mut()
            .map(|b| libc::iovec { iov_base: b.as_mut_slice().as_mut_ptr().cast(), iov_len: b.len() })
            .collect();
        if iovecs.len() > usize::from(u16::MAX) + 1 {
            // A fixed buffer's index is 16 bits wide.
            self.notes.push(format!("{} buffers are too many to register", iovecs.len()));
        } else {
            // SAFETY: the iovecs describe the heap blocks of `self.bufs`, which
            // do not move when `self` moves and are freed only after `self.ring`
            // (declared first, so dropped first) has released the registration.
            match unsafe { self.ring.submitter().register_buffers(&iovecs) } {
                Ok(()) => self.fixed_bufs = true,
                Err(e) => self.notes.push(format!("register_buffers failed: {e}")),
            }
        }
        match self.ring.submitter().register_files(&[self.fd]) {
            Ok(()) => self.fixed_file = true,
            Err(e) => self.notes.push(format!("register_files failed: {e}")),
        }
    }

    /// Whether (buffers, file) are registered with the ring.
    pub fn registered(&self) -> (bool, bool) {
        (self.fixed_bufs, self.fixed_file)
    }

    /// Requests queued in the ring that the kernel has not been handed yet.
    pub fn unsubmitted(&mut self) -> usize {
        self.ring.submission().len()
    }

    /// Pushes the SQE for what remains of the slot's request.
    fn queue(&mut self, slot: usize) -> io::Result<()> {
        let Slot::InKernel { req, done } = self.slots[slot] else {
            unreachable!("queue() is only called for a slot in the kernel");
        };
        let buf = self.bufs[slot].as_mut_slice()[done..req.len].as_mut_ptr();
        // buffer_len fits u32 (checked at open), and so does every remainder.
        let len = (req.len - done) as u32;
        let offset = req.offset + done as u64;
        // Buffers are registered only when every slot fits the 16-bit index.
        let index = slot as u16;
        macro_rules! entry {
            ($fd:expr) => {
                match (req.write, self.fixed_bufs) {
                    (false, true) => opcode::ReadFixed::new($fd, buf, len, index).offset(offset).build(),
                    (true, true) => opcode::WriteFixed::new($fd, buf, len, index).offset(offset).build(),
                    (false, false) => opcode::Read::new($fd, buf, len).offset(offset).build(),
                    (true, false) => opcode::Write::new($fd, buf, len).offset(offset).build(),
                }
            };
        }
        let entry = if self.fixed_file { entry!(types::Fixed(0)) } else { entry!(types::Fd(self.fd)) };
        let entry = entry.user_data(slot as u64);
        for _ in 0..2 {
            // SAFETY: the entry points into `self.bufs[slot]`, range done..req.len.
            // That heap block stays put and alive: the slot is InKernel until its
            // completion is collected, `buffer()` refuses InKernel slots, nothing
            // else here touches it, and Drop waits for every InKernel slot before
            // the buffers are freed (or leaks them if it cannot). The file (or
            // its registered copy) stays open until `close`, which also waits.
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                return Ok(());
            }
            // Submission queue full: hand the batch to the kernel to make room.
            self.enter(0)?;
        }
        Err(io::Error::other("io_uring submission queue stays full"))
    }

    /// Submits what is queued and waits for `want` completion events. An
    /// interrupted wait (EINTR) returns Ok: callers re-check their condition.
    fn enter(&mut self, want: usize) -> io::Result<()> {
        interrupted_is_done(self.ring.submit_and_wait(want))
    }

    /// Hands what is queued to the kernel and has it post the completions it
    /// holds, without waiting: `io_uring_enter(to_submit, 0, GETEVENTS)`, as
    /// fio's commit does. With DEFER_TASKRUN, completions reach the queue only
    /// through an enter with GETEVENTS, so this is also the polling call.
    fn enter_without_waiting(&mut self) -> io::Result<()> {
        let to_submit = self.ring.submission().len() as u32;
        // SAFETY: no argument pointer is passed (None), so the kernel reads no
        // memory of ours beyond the rings, which `self.ring` keeps mapped; the
        // SQEs it consumes were pushed by `queue` under its own contract.
        interrupted_is_done(unsafe {
            self.ring.submitter().enter::<libc::sigset_t>(to_submit, 0, IORING_ENTER_GETEVENTS, None)
        })
    }

    /// `reap`'s polling phase: asks the kernel for completions until `min`
    /// are in or `budget` has passed since the first ask.
    fn poll_for(&mut self, min: usize, budget: Duration) -> io::Result<()> {
        let start = Instant::now();
        loop {
            self.enter_without_waiting()?;
            self.collect();
            if self.finished.len() >= min || start.elapsed() >= budget {
                return Ok(());
            }
            std::hint::spin_loop();
        }
    }

    /// Takes every completion event the kernel has posted, resubmitting the
    /// remainder of short transfers and moving finished requests to `finished`.
    fn collect(&mut self) {
        loop {
            // A statement of its own, so the queue's borrow ends before queue().
            let Some(cqe) = self.ring.completion().next() else { break };
            let slot = cqe.user_data() as usize;
            let Some(&Slot::InKernel { req, done }) = self.slots.get(slot) else {
                // Not ours; cannot happen, as every SQE carries its slot.
                continue;
            };
            let res = cqe.result();
            let result = if res < 0 {
                Err(io::Error::from_raw_os_error(-res))
            } else if res == 0 {
                Err(end_of_transfer(&req, done))
            } else {
                let done = done + res as usize;
                if done >= req.len {
                    Ok(req.len)
                } else {
                    self.slots[slot] = Slot::InKernel { req, done };
                    match self.queue(slot) {
                        Ok(()) => continue,
                        Err(e) => Err(e),
                    }
                }
            };
            self.slots[slot] = Slot::Finished;
            self.in_kernel -= 1;
            self.finished.push(Completion { slot, result });
        }
    }

    /// Waits until the kernel holds no request of ours.
    fn wait_all(&mut self) -> io::Result<()> {
        while self.in_kernel > 0 {
            self.enter(self.in_kernel)?;
            self.collect();
        }
        Ok(())
    }

    /// Drop's version of `wait_all`: no resubmission, just until the kernel
    /// lets go of every buffer. False if the ring fails.
    fn drain(&mut self) -> bool {
        while self.in_kernel > 0 {
            if self.enter(self.in_kernel).is_err() {
                return false;
            }
            while let Some(cqe) = self.ring.completion().next() {
                if let Some(slot @ Slot::InKernel { .. }) = self.slots.get_mut(cqe.user_data() as usize) {
                    *slot = Slot::Free;
                    self.in_kernel -= 1;
                }
            }
        }
        true
    }
}

/// An `io_uring_enter` that a signal interrupted (EINTR) has still done its
/// part: callers re-check their condition and enter again.
fn interrupted_is_done(entered: io::Result<usize>) -> io::Result<()> {
    match entered {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
        Err(e) => Err(e),
    }
}

/// The error of a transfer that moved 0 bytes: end of file on a read.
fn end_of_transfer(req: &Request, done: usize) -> io::Error {
    if req.write {
        io::Error::new(
            io::ErrorKind::WriteZero,
            format!("write of {} bytes at offset {} stopped after {done} bytes", req.len, req.offset),
        )
    } else {
        io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "read of {} bytes at offset {} reached the end of the file after {done} bytes",
                req.len, req.offset
            ),
        )
    }
}

impl QueuedFile for UringFile {
    fn kind(&self) -> BackendKind {
        BackendKind::IoUring
    }
    fn depth(&self) -> usize {
        self.slots.len()
    }
    fn describe(&self) -> String {
        let mut s = format!(
            "io_uring depth {}, {}, {}, submitted in groups of up to {}",
            self.depth(),
            if self.fixed_bufs { "registered buffers" } else { "plain buffers" },
            if self.fixed_file { "registered file" } else { "plain fd" },
            self.submit_batch.min(self.depth())
        );
        if !self.notes.is_empty() {
            s += &format!(" ({})", self.notes.join("; "));
        }
        s
    }
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        assert!(
            !matches!(self.slots[slot], Slot::InKernel { .. }),
            "the buffer of slot {slot} belongs to the kernel until its request completes"
        );
        self.bufs[slot].as_mut_slice()
    }
    fn submit(&mut self, req: Request) -> io::Result<Submitted> {
        check_request(&req, self.depth(), self.buffer_len)?;
        if self.in_flight() == self.depth() {
            return Ok(Submitted::Busy);
        }
        if !matches!(self.slots[req.slot], Slot::Free) {
            return Err(invalid(format!("slot {} is still in flight; reap its completion first", req.slot)));
        }
        self.slots[req.slot] = Slot::InKernel { req, done: 0 };
        self.in_kernel += 1;
        if let Err(e) = self.queue(req.slot) {
            self.slots[req.slot] = Slot::Free;
            self.in_kernel -= 1;
            return Err(e);
        }
        // A full group goes to the kernel now, unless it filled the queue: then
        // the caller's next step is to wait, and `reap` hands it over with the
        // wait in one system call.
        if self.ring.submission().len() >= self.submit_batch && self.in_flight() < self.depth() {
            self.enter_without_waiting()?;
        }
        Ok(Submitted::Queued)
    }
    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        check_reap(min, self.in_flight())?;
        self.collect();
        if let Some(budget) = self.poll {
            if self.finished.len() < min {
                self.poll_for(min, budget)?;
            }
        }
        while self.finished.len() < min || !self.ring.submission().is_empty() {
            self.enter(min.saturating_sub(self.finished.len()))?;
            self.collect();
        }
        for c in self.finished.drain(..) {
            self.slots[c.slot] = Slot::Free;
            out.push(c);
        }
        Ok(())
    }
    fn reap_within(&mut self, min: usize, wait: Duration, out: &mut Vec<Completion>) -> io::Result<()> {
        check_reap(min, self.in_flight())?;
        self.collect();
        if self.finished.len() < min && !self.ring.params().is_feature_ext_arg() {
            // Before Linux 5.11 the kernel takes no timeout with the wait: ask without waiting.
            self.enter_without_waiting()?;
            self.collect();
            if self.finished.len() < min {
                std::thread::sleep(wait.min(Duration::from_micros(50)));
            }
        } else if self.finished.len() < min {
            let timeout = types::Timespec::from(wait);
            let args = types::SubmitArgs::new().timespec(&timeout);
            match self.ring.submitter().submit_with_args(min - self.finished.len(), &args) {
                Ok(_) => {}
                // The time passed with fewer completions: what the caller asked for.
                Err(e) if e.raw_os_error() == Some(libc::ETIME) || e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
            self.collect();
        }
        while !self.ring.submission().is_empty() {
            self.enter(0)?;
            self.collect();
        }
        for c in self.finished.drain(..) {
            self.slots[c.slot] = Slot::Free;
            out.push(c);
        }
        Ok(())
    }
    fn in_flight(&self) -> usize {
        self.in_kernel + self.finished.len()
    }
    fn poll_completions(&mut self, budget: Duration) -> io::Result<()> {
        self.poll = Some(budget);
        Ok(())
    }
    fn submit_batch(&mut self, requests: usize) -> io::Result<()> {
        if requests == 0 {
            return Err(invalid("io_uring submission groups need at least 1 request; got 0".to_string()));
        }
        self.submit_batch = requests;
        Ok(())
    }
    fn flush_to_storage(&mut self) -> io::Result<()> {
        self.wait_all()?;
        match &self.file {
            Some(f) => f.sync_all(),
            None => Ok(()),
        }
    }
    fn close(mut self: Box<Self>) -> io::Result<()> {
        self.wait_all()?;
        let unreaped = self.finished.drain(..).find_map(|c| c.result.err());
        let mut result = Ok(());
        if self.fixed_file {
            // Drop the ring's reference, so that our close(2) is the last one
            // and reports what the file system reports there.
            result = self.ring.submitter().unregister_files();
            self.fixed_file = false;
        }
        let file = self.file.take();
        drop(self);
        if let Some(file) = file {
            crate::psync::close_checked(file)?;
        }
        result?;
        unreaped.map_or(Ok(()), Err)
    }
}

impl Drop for UringFile {
    fn drop(&mut self) {
        if !self.drain() {
            // The kernel may still be writing into the buffers or reading from
            // them: leak them rather than free memory under it.
            std::mem::forget(std::mem::take(&mut self.bufs));
        }
    }
}
