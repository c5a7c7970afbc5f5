//! Every reader of an input file against what is not one (issue 30, finding 7):
//! /dev/zero, a 10 GiB sparse file, a FIFO with no writer, binary data and a
//! single 100 MB line. Each gets exit 2 naming the problem, within 2 s and
//! under 300 MB of peak memory, and nothing is stored. Today's readers: study
//! files, personality files (also through `personalities show`), dbench load
//! files, size profiles (`run fileserver --profile`, and a personality's
//! `dist = "scan"`), the MPI hostfile (`--hosts`), and imports.

use crate::helpers::*;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a refusal may take, and the most memory it may use.
const WITHIN: Duration = Duration::from_secs(2);
const PEAK_KIB: i64 = 300 * 1024;

/// What a finished child did: exit code, standard error, wall time, peak resident KiB.
struct Measured {
    code: Option<i32>,
    stderr: String,
    took: Duration,
    peak_kib: i64,
}

/// Runs `cmd` to its end (killed after 20 s), measuring its wall time and peak resident memory
/// (the kernel's rusage of the child). An address-space limit keeps a reader that regresses
/// from taking the machine's memory (it then fails, and so does the test).
fn measured(mut cmd: Command) -> Measured {
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    // SAFETY: setrlimit(2) is async-signal-safe and touches only the child, between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit { rlim_cur: 4 << 30, rlim_max: 4 << 30 };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let started = Instant::now();
    let mut child = cmd.spawn().expect("start iomatrix");
    let pid = child.id() as libc::pid_t;
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut status = 0;
    // SAFETY: rusage is plain data, filled by wait4.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: wait4(2) on our own child, with valid pointers; std's Child is not waited on
        // after this (it is forgotten below), so the pid is reaped once.
        let done = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        assert!(done >= 0, "wait4: {}", std::io::Error::last_os_error());
        if done == pid {
            break;
        }
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            // SAFETY: as above, blocking: the child was just killed.
            unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let took = started.elapsed();
    std::mem::forget(child);
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    Measured { code, stderr: reader.join().unwrap(), took, peak_kib: usage.ru_maxrss }
}

/// The hostile inputs, made in `dir`: (what, path, what the refusal names).
fn hostile_inputs(dir: &Path) -> Vec<(&'static str, PathBuf, &'static [&'static str])> {
    let sparse = dir.join("sparse-10g");
    std::fs::File::create(&sparse).unwrap().set_len(10 << 30).unwrap();
    let fifo = dir.join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    let binary = dir.join("binary.bin");
    std::fs::write(&binary, (0..512 * 1024u32).map(|i| (i.wrapping_mul(7919) >> 3) as u8).collect::<Vec<u8>>())
        .unwrap();
    let long_line = dir.join("one-line.txt");
    {
        use std::io::Write;
        let mut f = std::io::BufWriter::new(std::fs::File::create(&long_line).unwrap());
        let chunk = vec![b'a'; 1 << 20];
        for _ in 0..100 {
            f.write_all(&chunk).unwrap();
        }
    }
    vec![
        ("/dev/zero", PathBuf::from("/dev/zero"), &["/dev/zero is a device"]),
        ("a 10 GiB sparse file", sparse, &["10737418240 bytes, more than the"]),
        ("a FIFO with no writer", fifo, &["is a FIFO"]),
        ("binary data", binary, &["binary data (a NUL byte at offset"]),
        // Refused by its size where the bound is below 100 MB, else by its line.
        ("a single 100 MB line", long_line, &["104857600 bytes, more than the", "line 1 is longer than a line"]),
    ]
}

#[test]
fn every_reader_refuses_hostile_inputs_at_once_in_little_memory() {
    let sb = Sandbox::new();
    let dir = sb.dir.path().join("inputs");
    std::fs::create_dir(&dir).unwrap();
    let inputs = hostile_inputs(&dir);
    let target = sb.target();
    let t = target.to_str().unwrap().to_string();
    // A personality whose file sizes come from a size profile: the profile is FILE.
    let with_profile = |file: &Path| -> PathBuf {
        let p = dir.join("with-profile.toml");
        std::fs::write(
            &p,
            format!(
                "version = 1\nname = \"p\"\ndescription = \"d\"\nconnections = 1\nrecord = \"4k\"\n[[fileset]]\n\
                 name = \"f\"\nfiles = 10\nsize = {{ dist = \"scan\", profile = \"{}\" }}\n[[phase]]\nname = \"run\"\n\
                 duration = \"1s\"\n[[phase.flow]]\nname = \"read\"\nops = [{{ op = \"open\" }}, {{ op = \"read\", \
                 size = \"whole\" }}, {{ op = \"close\" }}]\n",
                file.display()
            ),
        )
        .unwrap();
        p
    };
    type Reader<'a> = (&'static str, Box<dyn Fn(&Path) -> Vec<String> + 'a>);
    let s = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<String>>();
    let f = |p: &Path| p.display().to_string();
    let readers: Vec<Reader> = vec![
        ("study run", Box::new(|p| s(&["study", "run", &f(p)]))),
        ("personalities show", Box::new(|p| s(&["personalities", "show", &f(p)]))),
        ("run personality FILE", Box::new(|p| s(&["run", "personality", &f(p), "--target", &t]))),
        (
            "run personality --dbench-loadfile",
            Box::new(|p| s(&["run", "personality", "--dbench-loadfile", &f(p), "--target", &t])),
        ),
        ("import", Box::new(|p| s(&["import", &f(p)]))),
        ("import --format published", Box::new(|p| s(&["import", "--format", "published", &f(p)]))),
        ("run fileserver --profile", Box::new(|p| s(&["run", "fileserver", "--profile", &f(p), "--target", &t]))),
        ("a personality's scan profile", Box::new(|p| s(&["personalities", "show", &f(&with_profile(p))]))),
        ("run --hosts (the hostfile)", Box::new(|p| s(&["run", "iozone", "--target", &t, "--hosts", &f(p)]))),
    ];
    let mut failures = Vec::new();
    let mut worst = (Duration::ZERO, 0i64);
    for (reader, args) in &readers {
        for (input, path, needles) in &inputs {
            let mut cmd = sb.cmd();
            cmd.args(args(path));
            let m = measured(cmd);
            worst = (worst.0.max(m.took), worst.1.max(m.peak_kib));
            let named = needles.iter().any(|n| m.stderr.contains(n));
            let one_error = m.stderr.lines().filter(|l| l.starts_with("iomatrix: error:")).count() == 1;
            let clean = !m.stderr.contains("panicked") && !m.stderr.contains("RUST_BACKTRACE");
            if m.code != Some(2) || !named || !one_error || !clean || m.took > WITHIN || m.peak_kib > PEAK_KIB {
                failures.push(format!(
                    "{reader} on {input}: exit {:?} in {:?}, peak {} KiB:\n{}",
                    m.code, m.took, m.peak_kib, m.stderr
                ));
            }
        }
    }
    eprintln!(
        "{} readers x {} inputs: slowest refusal {:?}, largest peak {} KiB",
        readers.len(),
        inputs.len(),
        worst.0,
        worst.1
    );
    assert!(
        failures.is_empty(),
        "{} of {} refusals failed:\n{}",
        failures.len(),
        readers.len() * inputs.len(),
        failures.join("\n")
    );
    // Nothing was stored, nothing made in the target.
    assert!(!sb.db().exists(), "a refused input opened the results database");
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
}

#[test]
fn import_of_standard_input_is_bounded_by_its_line_too() {
    // `head -c 100M /dev/zero | tr '\0' a | iomatrix import -`: one endless line, refused at the
    // line bound long before the size bound, in little memory.
    let sb = Sandbox::new();
    let mut feeder = Command::new("sh")
        .args(["-c", "head -c 104857600 /dev/zero | tr '\\0' a"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("sh");
    let mut cmd = sb.cmd();
    cmd.args(["import", "-"]);
    let stdin = feeder.stdout.take().unwrap();
    cmd.stdin(stdin);
    let mut child_cmd = cmd;
    child_cmd.stdout(Stdio::null());
    let started = Instant::now();
    let out = child_cmd.output().unwrap();
    let took = started.elapsed();
    let _ = feeder.kill();
    let _ = feeder.wait();
    assert_usage_error(&out, "standard input (-): line 1 is longer than a line of a results file can be");
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert!(!sb.db().exists());
}
