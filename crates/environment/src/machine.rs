//! Facts about the machine: host, kernel, OS, CPU and memory.
//!
//! The parsers take the text of `/proc/meminfo`, `/proc/cpuinfo` and
//! `/etc/os-release` so they can be tested without the real files.

use std::ffi::CStr;

/// What `capture` records about the machine itself.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Machine {
    /// `uname` nodename.
    pub host: String,
    /// `uname` release, e.g. "6.18.0".
    pub kernel: String,
    /// PRETTY_NAME from `/etc/os-release`, or "unknown".
    pub os: String,
    /// `std::env::consts::ARCH`.
    pub arch: String,
    /// The first "model name" in `/proc/cpuinfo`, or "unknown".
    pub cpu_model: String,
    /// CPUs this process may use (`std::thread::available_parallelism`), 0 if unknown.
    pub cpu_count: usize,
    /// MemTotal from `/proc/meminfo` in bytes, 0 if unreadable.
    pub ram_bytes: u64,
    /// The page cache's write-back sysctls (`/proc/sys/vm/dirty_*`) by name, e.g.
    /// "dirty_ratio" -> "20": they decide when cached writes reach the disk. Empty where
    /// unreadable, and in runs stored before they were recorded.
    #[serde(default)]
    pub vm_dirty: std::collections::BTreeMap<String, String>,
}

const UNKNOWN: &str = "unknown";

/// Read every machine fact; anything unreadable becomes "unknown" or 0.
pub(crate) fn read() -> Machine {
    let uts = rustix::system::uname();
    Machine {
        host: cstr_or_unknown(uts.nodename()),
        kernel: cstr_or_unknown(uts.release()),
        os: read_os(),
        arch: std::env::consts::ARCH.to_string(),
        cpu_model: std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|t| parse_cpu_model(&t))
            .unwrap_or_else(|| UNKNOWN.to_string()),
        cpu_count: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        ram_bytes: machine_ram_bytes(),
        vm_dirty: read_vm_dirty(),
    }
}

fn read_vm_dirty() -> std::collections::BTreeMap<String, String> {
    let names = [
        "dirty_background_bytes",
        "dirty_background_ratio",
        "dirty_bytes",
        "dirty_expire_centisecs",
        "dirty_ratio",
        "dirty_writeback_centisecs",
    ];
    names
        .iter()
        .filter_map(|n| {
            let v = std::fs::read_to_string(format!("/proc/sys/vm/{n}")).ok()?;
            Some((n.to_string(), v.trim().to_string()))
        })
        .collect()
}

fn cstr_or_unknown(s: &CStr) -> String {
    let s = s.to_string_lossy();
    if s.is_empty() {
        UNKNOWN.to_string()
    } else {
        s.into_owned()
    }
}

/// PRETTY_NAME from `/etc/os-release` (or `/usr/lib/os-release`, its
/// documented fallback), or "unknown".
fn read_os() -> String {
    ["/etc/os-release", "/usr/lib/os-release"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| parse_os_pretty_name(&t))
        .unwrap_or_else(|| UNKNOWN.to_string())
}

/// MemTotal from `/proc/meminfo` in bytes, 0 if unreadable.
pub fn machine_ram_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| parse_meminfo_total(&t)).unwrap_or(0)
}

/// `MemTotal:  24682416 kB` -> bytes. A value without a unit is bytes.
pub(crate) fn parse_meminfo_total(text: &str) -> Option<u64> {
    let rest = text.lines().find_map(|l| l.strip_prefix("MemTotal:"))?.trim();
    let mut parts = rest.split_whitespace();
    let n: u64 = parts.next()?.parse().ok()?;
    let mult = match parts.next() {
        None => 1,
        Some(u) if u.eq_ignore_ascii_case("kb") => 1024,
        Some(u) if u.eq_ignore_ascii_case("mb") => 1024 * 1024,
        Some(u) if u.eq_ignore_ascii_case("gb") => 1024 * 1024 * 1024,
        Some(_) => return None,
    };
    n.checked_mul(mult)
}

/// The first `model name` in `/proc/cpuinfo`.
pub(crate) fn parse_cpu_model(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let (key, value) = l.split_once(':')?;
        let value = value.trim();
        (key.trim() == "model name" && !value.is_empty()).then(|| value.to_string())
    })
}

/// PRETTY_NAME from os-release text, with shell-style quotes removed.
pub(crate) fn parse_os_pretty_name(text: &str) -> Option<String> {
    let raw = text.lines().find_map(|l| l.trim().strip_prefix("PRETTY_NAME="))?.trim();
    let value = unquote_shell(raw);
    (!value.is_empty()).then_some(value)
}

/// os-release values are shell-quoted: `"a \"b\""`, `'a b'` or bare.
fn unquote_shell(raw: &str) -> String {
    if let Some(inner) = raw.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        return inner.to_string();
    }
    let inner = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')).unwrap_or(raw);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(n @ ('"' | '\\' | '$' | '`')) => out.push(n),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MEMINFO: &str = "MemTotal:       24682416 kB\n\
                           MemFree:        22878608 kB\n\
                           MemAvailable:   23456789 kB\n";

    #[test]
    fn meminfo_total_in_bytes() {
        assert_eq!(parse_meminfo_total(MEMINFO), Some(24682416 * 1024));
        assert_eq!(parse_meminfo_total("MemFree: 1 kB\n"), None);
        assert_eq!(parse_meminfo_total("MemTotal: x kB\n"), None);
        assert_eq!(parse_meminfo_total("MemTotal: 4096\n"), Some(4096));
    }

    #[test]
    fn cpu_model_is_first_model_name() {
        let text = "processor\t: 0\n\
                    vendor_id\t: GenuineIntel\n\
                    cpu family\t: 6\n\
                    model\t\t: 106\n\
                    model name\t: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz\n\
                    stepping\t: 6\n\n\
                    processor\t: 1\n\
                    model name\t: Other CPU\n";
        assert_eq!(parse_cpu_model(text).as_deref(), Some("Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz"));
        // "model" alone must not match, and an ARM cpuinfo has no model name.
        assert_eq!(parse_cpu_model("model\t\t: 106\nCPU part\t: 0xd0c\n"), None);
    }

    #[test]
    fn os_release_pretty_name() {
        let text = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n\
                    NAME=\"Debian GNU/Linux\"\n\
                    VERSION_ID=\"12\"\n\
                    ID=debian\n";
        assert_eq!(parse_os_pretty_name(text).as_deref(), Some("Debian GNU/Linux 12 (bookworm)"));
        assert_eq!(parse_os_pretty_name("PRETTY_NAME='Arch Linux'\n").as_deref(), Some("Arch Linux"));
        assert_eq!(parse_os_pretty_name("PRETTY_NAME=Alpine\n").as_deref(), Some("Alpine"));
        assert_eq!(parse_os_pretty_name(r#"PRETTY_NAME="say \"hi\" \$x""#).as_deref(), Some(r#"say "hi" $x"#));
        assert_eq!(parse_os_pretty_name("NAME=\"x\"\n"), None);
        assert_eq!(parse_os_pretty_name("PRETTY_NAME=\"\"\n"), None);
    }

    #[test]
    fn real_machine_facts_are_plausible() {
        let m = read();
        assert!(!m.host.is_empty());
        assert!(!m.kernel.is_empty());
        assert_eq!(m.arch, std::env::consts::ARCH);
        assert!(m.cpu_count >= 1);
        assert!(m.ram_bytes > 0);
    }
}
