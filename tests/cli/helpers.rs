//! What the test modules share: a sandbox per test (a target folder and its
//! own results database), `iomatrix` runs and their checks, and fixtures on
//! real file systems (tmpfs, loop-mounted ext4/xfs/btrfs, loop devices).
//!
//! A case that cannot run here (not root, a tool missing, no loop devices)
//! calls [`skip`] with the reason and returns; the fixtures below do that
//! themselves and return `None`. Each skipped case is listed at the end of
//! this test binary's run (after libtest's summary), and with `CI=true` the
//! binary fails: `.ci/run` installs everything, so nothing may skip there
//! (see the `iomatrix-testkit` crate). A test that runs all it names
//! elsewhere (the temporary folder when it may not mount tmpfs) is not a skip:
//! it uses [`Mount::try_virtual_fs`].

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub use iomatrix_testkit::skip;

/// `--busy-threshold`'s environment default. Tests run beside each other (CI has 2 cores): each
/// would read the others' work as a busy machine and store its cells disturbed. So every command
/// a test starts sets it `off` (`Sandbox::cmd`, and each test that starts the binary through
/// another program: setpriv, prlimit, strace, time, taskset, unshare, faketime, mpirun); the
/// tests of the rule itself (`tests/machine/trust_machine.rs`, a binary of their own) turn it back on.
pub const BUSY_VAR: &str = "IOMATRIX_BUSY_THRESHOLD";

/// A private folder with a target inside and its own results database.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        // The binary's first sandbox: the MPI build starts in the background (tests/cli/mpi.rs).
        crate::mpi::start_build_early();
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("target")).unwrap();
        Sandbox { dir }
    }
    pub fn target(&self) -> PathBuf {
        self.dir.path().join("target")
    }
    pub fn db(&self) -> PathBuf {
        self.dir.path().join("results.sqlite")
    }
    /// `iomatrix` with this sandbox's database, run in the sandbox, its busy rule off ([`BUSY_VAR`]).
    pub fn cmd(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_iomatrix"));
        c.env("IOMATRIX_DB", self.db()).current_dir(self.dir.path()).stdin(Stdio::null());
        c.env(BUSY_VAR, "off");
        c
    }
    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().expect("run iomatrix")
    }
    /// `run iozone --target <target>` plus `args`; must succeed.
    pub fn iozone_ok(&self, args: &[&str]) -> Output {
        let target = self.target();
        let mut all = vec!["run", "iozone", "--target", target.to_str().unwrap()];
        all.extend_from_slice(args);
        let out = self.run(&all);
        assert_success(&out);
        out
    }
    pub fn show_json(&self, run: i64) -> Value {
        let out = self.run(&["show", &run.to_string(), "--json"]);
        assert_success(&out);
        serde_json::from_slice(&out.stdout).expect("show --json is JSON")
    }
    pub fn runs_json(&self) -> Value {
        let out = self.run(&["runs", "--json"]);
        assert_success(&out);
        serde_json::from_slice(&out.stdout).expect("runs --json is JSON")
    }
    pub fn last_run(&self) -> Value {
        let runs = self.runs_json();
        let id = runs["runs"].as_array().unwrap().last().expect("a stored run")["id"].as_i64().unwrap();
        self.show_json(id)
    }
    /// Working folders iomatrix left in the target.
    pub fn leftovers(&self) -> Vec<PathBuf> {
        leftovers(&self.target())
    }
}

pub fn leftovers(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("iomatrix-"))
                .collect()
        })
        .unwrap_or_default()
}

pub fn text(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A run's standard output without the summary every run ends with (a front end's own output,
/// IOzone's `-R` report or bonnie++'s CSV lines, comes right before it).
pub fn before_summary(stdout: &str) -> &str {
    // The blank line that sets the summary apart is the summary's too.
    stdout.rfind("\nsummary of run #").map_or(stdout, |end| stdout[..end].trim_end_matches('\n'))
}

pub fn assert_success(out: &Output) {
    let (stdout, stderr) = text(out);
    assert!(out.status.success(), "iomatrix failed ({:?})\nstdout:\n{stdout}\nstderr:\n{stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Exit code 2 with one clear line naming `needle`, and no panic.
pub fn assert_usage_error(out: &Output, needle: &str) {
    let (_, stderr) = text(out);
    assert_eq!(out.status.code(), Some(2), "expected exit 2 for usage error, stderr:\n{stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"), "{stderr}");
    let error_lines: Vec<&str> =
        stderr.lines().filter(|l| l.starts_with("iomatrix: error:") || l.starts_with("error:")).collect();
    assert_eq!(error_lines.len(), 1, "one error line expected:\n{stderr}");
    assert!(stderr.contains(needle), "error should mention '{needle}':\n{stderr}");
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

pub fn have(tool: &str) -> bool {
    Command::new("sh").args(["-c", &format!("command -v {tool}")]).output().is_ok_and(|o| o.status.success())
}

fn sh(cmd: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(cmd).args(args).output().map_err(|e| format!("{cmd}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{cmd} {args:?}: {}", String::from_utf8_lossy(&out.stderr)))
    }
}

/// A mount made by a test, unmounted (and its loop device freed) on drop,
/// also when the test fails.
pub struct Mount {
    pub point: PathBuf,
    _holder: tempfile::TempDir,
}

impl Mount {
    /// Root only: `mount -t FSTYPE -o OPTIONS FSTYPE <tmp>`; `None` (a skip,
    /// with the reason) where that cannot be done.
    pub fn virtual_fs(fstype: &str, options: &str) -> Option<Mount> {
        Mount::try_virtual_fs(fstype, options).map_err(skip).ok()
    }

    /// As [`Mount::virtual_fs`], but the reason it could not is returned, not
    /// recorded as a skip: for a test that then runs elsewhere.
    pub fn try_virtual_fs(fstype: &str, options: &str) -> Result<Mount, String> {
        if !is_root() {
            return Err(format!("mounting {fstype} needs root"));
        }
        let holder = tempfile::tempdir().unwrap();
        let point = holder.path().join("mnt");
        std::fs::create_dir(&point).unwrap();
        let mut args = vec!["-t", fstype];
        if !options.is_empty() {
            args.extend(["-o", options]);
        }
        args.extend([fstype, point.to_str().unwrap()]);
        sh("mount", &args).map(|()| Mount { point, _holder: holder }).map_err(|e| format!("cannot mount {fstype}: {e}"))
    }

    /// Root only: an ext4 image of `mib` MiB, loop-mounted (the loop device
    /// is released by `umount` through autoclear).
    pub fn ext4(mib: u64) -> Option<Mount> {
        Mount::image("ext4", mib)
    }

    /// Root only: a `fstype` image (ext4, xfs, btrfs) of `mib` MiB, loop-mounted.
    pub fn image(fstype: &str, mib: u64) -> Option<Mount> {
        let mkfs = format!("mkfs.{fstype}");
        if !is_root() || !have(&mkfs) || !Path::new("/dev/loop-control").exists() {
            skip(format!("a loop-mounted {fstype} needs root, {mkfs} and loop devices"));
            return None;
        }
        let holder = tempfile::tempdir().unwrap();
        let image = holder.path().join("fs.img");
        let point = holder.path().join("mnt");
        std::fs::create_dir(&point).unwrap();
        std::fs::File::create(&image).unwrap().set_len(mib << 20).unwrap();
        let force = if fstype.starts_with("ext") { "-F" } else { "-f" };
        if let Err(e) = sh(&mkfs, &["-q", force, image.to_str().unwrap()]) {
            skip(format!("cannot make a {fstype} file system: {e}"));
            return None;
        }
        match sh("mount", &["-o", "loop", image.to_str().unwrap(), point.to_str().unwrap()]) {
            Ok(()) => Some(Mount { point, _holder: holder }),
            Err(e) => {
                skip(format!("cannot loop-mount {fstype}: {e}"));
                None
            }
        }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let p = self.point.to_str().unwrap().to_string();
        if sh("umount", &[&p]).is_err() {
            let _ = sh("umount", &["-l", &p]);
        }
    }
}

/// Cells of a stored run (from `show --json`).
pub fn cells(run: &Value) -> Vec<Value> {
    run["run"]["cell_results"].as_array().cloned().unwrap_or_default()
}

/// A loop device over a fresh image file, detached on drop (also when the
/// test fails). Root only. The image lives on a tmpfs of its own: iomatrix
/// refuses a raw device over a file on the results database's file system.
pub struct LoopDevice {
    pub device: PathBuf,
    pub image: PathBuf,
    _fs: Mount,
}

impl LoopDevice {
    /// An image of `mib` MiB, every byte `fill`, attached to a free loop device.
    pub fn new(mib: u64, fill: u8) -> Option<LoopDevice> {
        if !is_root() || !have("losetup") || !Path::new("/dev/loop-control").exists() {
            skip("a loop device needs root, losetup and /dev/loop-control");
            return None;
        }
        let fs = Mount::virtual_fs("tmpfs", &format!("size={}m", mib + 1))?;
        let image = fs.point.join("raw.img");
        std::fs::write(&image, vec![fill; (mib << 20) as usize]).unwrap();
        let out = Command::new("losetup").args(["-f", "--show"]).arg(&image).output().unwrap();
        if !out.status.success() {
            skip(format!("losetup: {}", String::from_utf8_lossy(&out.stderr)));
            return None;
        }
        let device = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        Some(LoopDevice { device, image, _fs: fs })
    }

    pub fn path(&self) -> &str {
        self.device.to_str().unwrap()
    }
}

impl Drop for LoopDevice {
    /// Detached before its tmpfs is unmounted (the fields drop after this).
    fn drop(&mut self) {
        let _ = sh("losetup", &["-d", self.path()]);
    }
}

/// A mount of an existing device at a fresh folder, unmounted on drop.
pub struct DeviceMount {
    point: tempfile::TempDir,
}

impl DeviceMount {
    pub fn new(device: &str) -> Result<DeviceMount, String> {
        let point = tempfile::tempdir().unwrap();
        sh("mount", &[device, point.path().to_str().unwrap()])?;
        Ok(DeviceMount { point })
    }
}

impl Drop for DeviceMount {
    fn drop(&mut self) {
        let _ = sh("umount", &[self.point.path().to_str().unwrap()]);
    }
}

/// A child process killed on drop, so a failing test leaves nothing running.
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn stored_cells(sb: &Sandbox) -> i64 {
    stored_cells_in(&sb.db())
}

/// The cells stored in the database `db` so far (0 while it does not exist or is busy), for threads
/// that watch a run from beside it.
pub fn stored_cells_in(db: &Path) -> i64 {
    let Ok(conn) = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY) else {
        return 0;
    };
    conn.query_row("SELECT COUNT(*) FROM cells", [], |r| r.get(0)).unwrap_or(0)
}

/// Waits (at most 60 s) until the running child has stored `n` cells.
pub fn wait_for_cells(sb: &Sandbox, child: &mut Running, n: i64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while stored_cells(sb) < n {
        assert!(child.0.try_wait().unwrap().is_none(), "the run ended before {n} cells were stored");
        assert!(Instant::now() < deadline, "no {n} cells stored within 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn wait_for_exit(child: &mut Running) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "iomatrix did not exit within 60 s of the signal");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Kill moments for the crash tests, reproducible from the seed each test prints (and takes from
/// an environment variable to replay a failure).
pub struct Moments(iomatrix_random::Generator);

impl Moments {
    pub fn new(seed: u64) -> Moments {
        Moments(iomatrix_random::Generator::seeded(seed))
    }
    /// In (0, 1].
    pub fn next_fraction(&mut self) -> f64 {
        self.0.unit()
    }
}

/// Waits until a two-cell run's second cell is under way: its first cell stored in the sandbox's
/// database and, in `served` (the folder a lab server serves), a file bigger than the first cell's
/// `first_file` bytes: the second cell writing. Bounded by 60 s; fails if the run ends first.
/// For fault tests that must strike during the second cell (a fixed sleep was either too short on a
/// loaded machine or seconds wasted on a quiet one). Returns how long it waited, for the message.
pub fn wait_for_second_cell(sb: &Sandbox, child: &mut Child, served: &Path, first_file: u64) -> Duration {
    let begun = Instant::now();
    let deadline = begun + Duration::from_secs(60);
    while stored_cells(sb) < 1 || largest_file(served) <= first_file {
        assert!(child.try_wait().unwrap().is_none(), "the run ended before its second cell wrote");
        assert!(Instant::now() < deadline, "the second cell wrote nothing past {first_file} bytes within 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!(
        "the second cell wrote past {first_file} bytes {:.1} s after the wait began",
        begun.elapsed().as_secs_f64()
    );
    begun.elapsed()
}

/// The size of the largest file under `dir` (0 for none).
fn largest_file(dir: &Path) -> u64 {
    let mut largest = 0;
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        match e.file_type() {
            Ok(t) if t.is_dir() => largest = largest.max(largest_file(&e.path())),
            Ok(t) if t.is_file() => largest = largest.max(e.metadata().map_or(0, |m| m.len())),
            _ => {}
        }
    }
    largest
}

/// Runs `cmd` (a browser, a tool) to its end and returns its output, killed by its PID past
/// `limit` so a hung child fails its test instead of hanging CI.
pub fn bounded_child(mut cmd: Command, limit: Duration) -> Output {
    let child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start a child");
    let pid = child.id() as i32;
    let begun = Instant::now();
    let waiter = std::thread::spawn(move || child.wait_with_output().unwrap());
    while !waiter.is_finished() {
        if begun.elapsed() > limit {
            // SAFETY: kill(2) on the child this test started; no memory involved.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("{:?} ran past {limit:?}: killed", cmd.get_program());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    waiter.join().unwrap()
}

/// Which of the blkio (cgroup v1) throttle's limits a [`ThrottledDevice`] sets.
// Every limit the throttle has, whether or not a test sets it yet (the write and byte limits are
// issue 52's next tests').
#[allow(dead_code)]
#[derive(Clone, Copy, Debug)]
pub enum ThrottleLimit {
    ReadIops,
    WriteIops,
    ReadBytesPerSecond,
    WriteBytesPerSecond,
}

impl ThrottleLimit {
    fn file(self) -> &'static str {
        match self {
            ThrottleLimit::ReadIops => "blkio.throttle.read_iops_device",
            ThrottleLimit::WriteIops => "blkio.throttle.write_iops_device",
            ThrottleLimit::ReadBytesPerSecond => "blkio.throttle.read_bps_device",
            ThrottleLimit::WriteBytesPerSecond => "blkio.throttle.write_bps_device",
        }
    }
}

/// A loop device whose requests, from the processes started by [`ThrottledDevice::command`], a
/// blkio throttle limits: a device of known physics for the tests that check rates and latencies
/// (curves, latency targets, steady state). Root only, cgroup v1's blkio controller mounted at
/// /sys/fs/cgroup/blkio. The throttle holds O_DIRECT requests; it does not hold buffered writeback,
/// so the tests use direct I/O. It works in slices: most requests complete at once and a few wait
/// up to about 100 ms for the next slice, so means obey Little's law and percentiles follow slices.
/// The cgroup is removed on drop (after the test's processes ended), also when the test fails.
pub struct ThrottledDevice {
    pub device: LoopDevice,
    cgroup: PathBuf,
    major_minor: String,
    /// One throttled device at a time in this test binary: two tests of rates and latencies
    /// side by side (each with its loop device's worker and its clients) measured each other on
    /// CI's 2 cores, and failed together.
    _one_at_a_time: std::sync::MutexGuard<'static, ()>,
}

/// Held by each [`ThrottledDevice`] for its life.
static THROTTLED: std::sync::Mutex<()> = std::sync::Mutex::new(());

const BLKIO_ROOT: &str = "/sys/fs/cgroup/blkio";

impl ThrottledDevice {
    /// A loop device of `mib` MiB (every byte `fill`), in a cgroup of its own with no limit yet.
    pub fn new(mib: u64, fill: u8) -> Option<ThrottledDevice> {
        if !Path::new(BLKIO_ROOT).join("blkio.throttle.read_iops_device").exists() {
            skip("a throttled device needs cgroup v1's blkio controller at /sys/fs/cgroup/blkio");
            return None;
        }
        // A test that failed while holding it poisoned it; the device it held is gone all the same.
        let one_at_a_time = THROTTLED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let device = LoopDevice::new(mib, fill)?;
        let major_minor = Self::major_minor(device.path());
        let cgroup = Path::new(BLKIO_ROOT).join(format!("iomatrix-test-{}-{}", std::process::id(), unique()));
        std::fs::create_dir(&cgroup).unwrap_or_else(|e| panic!("cannot make the cgroup {}: {e}", cgroup.display()));
        Some(ThrottledDevice { device, cgroup, major_minor, _one_at_a_time: one_at_a_time })
    }

    /// "MAJOR:MINOR" of a block device, as the throttle files take it.
    fn major_minor(device: &str) -> String {
        use std::os::unix::fs::MetadataExt;
        let rdev = std::fs::metadata(device).unwrap().rdev();
        format!("{}:{}", libc::major(rdev), libc::minor(rdev))
    }

    /// Sets `limit` to `per_second` (0 lifts it). Takes effect at once, also for a running process:
    /// the stall tests lower it mid-run and raise it again.
    pub fn set(&self, limit: ThrottleLimit, per_second: u64) {
        let file = self.cgroup.join(limit.file());
        std::fs::write(&file, format!("{} {per_second}\n", self.major_minor))
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", file.display()));
    }

    pub fn path(&self) -> &str {
        self.device.path()
    }

    /// `program ARGS...` started inside the cgroup: a shell moves itself in, then execs the
    /// program, so the program's first request is already throttled. The busy threshold is off, as
    /// in every test command ([`BUSY_VAR`]).
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new("sh");
        let procs = self.cgroup.join("cgroup.procs");
        cmd.arg("-c").arg(format!("echo $$ > '{}' && exec \"$@\"", procs.display())).arg("sh").arg(program);
        cmd.env(BUSY_VAR, "off");
        cmd
    }
}

impl Drop for ThrottledDevice {
    /// The cgroup can be removed only once empty: a process the test left is moved to the root.
    fn drop(&mut self) {
        if let Ok(procs) = std::fs::read_to_string(self.cgroup.join("cgroup.procs")) {
            for pid in procs.lines() {
                let _ = std::fs::write(Path::new(BLKIO_ROOT).join("cgroup.procs"), pid);
            }
        }
        for _ in 0..50 {
            if std::fs::remove_dir(&self.cgroup).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        eprintln!("could not remove the cgroup {}", self.cgroup.display());
    }
}

/// A number no other fixture of this process has had.
fn unique() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// A PNG's size and its distinct colours (RGB, or what the image has of them): what a test of a
/// screenshot looks at (many colours, not a blank page; a chart's colour on it).
pub fn png_colours(path: &Path) -> ((u32, u32), std::collections::BTreeSet<Vec<u8>>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let step = info.color_type.samples();
    let colours = buf[..info.buffer_size()].chunks(step).map(|p| p[..3.min(step)].to_vec()).collect();
    ((info.width, info.height), colours)
}
