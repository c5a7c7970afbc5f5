//! What a run records of the file server behind its target: the lab's published facts where the
//! target is the lab's server, or the user's `--describe server=FILE` where iomatrix cannot look
//! into the server. Both are `key=value` lines ([`iomatrix_environment::parse_description`]),
//! read through the bounded reader.

use super::target::Target;
use iomatrix_core::UsageError;
use iomatrix_environment::ServerDescription;
use iomatrix_guard::read::{read_text, Input};
use std::path::{Path, PathBuf};

/// A server description: a few dozen lines.
pub const DESCRIPTION: Input = Input {
    what: "server description (key=value lines)",
    max_bytes: 1 << 20,
    max_line: Some(64 << 10),
    bound: "bound of a server description",
    raise: None,
    stream: None,
};

/// The lab's facts file in its state folder (`lab/up` writes it; lab/README.md).
pub const LAB_FACTS: &str = "server-facts";

/// `--describe server=FILE` (repeatable in form, one server): the description read and checked
/// now, before anything is made. A malformed line is refused naming the file and the line.
pub fn from_flags(given: &[String]) -> Result<Option<ServerDescription>, UsageError> {
    let mut found: Option<ServerDescription> = None;
    for g in given {
        let Some(("server", file)) = g.split_once('=').map(|(k, v)| (k.trim(), v.trim())) else {
            return Err(UsageError::new(format!(
                "--describe '{}': write --describe server=FILE (a file of key=value lines describing the server, \
                 e.g. ram_bytes=64g, cpu_model=..., export_options=...)",
                iomatrix_core::text::printable(g)
            )));
        };
        if file.is_empty() {
            return Err(UsageError::new("--describe server=: name the file after `server=`"));
        }
        if found.is_some() {
            return Err(UsageError::new("--describe server=FILE is given twice: a run has one server; give it once"));
        }
        found = Some(read(Path::new(file), format!("--describe server={file}"))?);
    }
    Ok(found)
}

fn read(path: &Path, described_by: String) -> Result<ServerDescription, UsageError> {
    let text = read_text(path, &DESCRIPTION).map_err(|e| UsageError::new(format!("{described_by}: {e}")))?;
    let facts = iomatrix_environment::parse_description(&text).map_err(|e| {
        UsageError::new(format!(
            "{described_by}: {}: {e}; each line is KEY=VALUE, `#` starts a comment",
            path.display()
        ))
    })?;
    Ok(ServerDescription { described_by, facts })
}

/// The lab's server, where the target is on it: the server's address (`nfs://`, `smb://`) is the
/// `address` the lab published in `$IOMATRIX_LAB_STATE/server-facts`, or the target folder lies
/// in one of the lab's FUSE mounts of it (`DIR/mnt/`). None where no lab is named or the target
/// is elsewhere; a facts file that does not read is said, and not used.
pub fn of_lab(target: &Target) -> Option<ServerDescription> {
    let state = PathBuf::from(std::env::var_os("IOMATRIX_LAB_STATE")?);
    let file = state.join(LAB_FACTS);
    if !file.exists() {
        return None;
    }
    let described = match read(&file, format!("lab ({})", file.display())) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("iomatrix: warning: the lab's server facts are not recorded: {e}");
            return None;
        }
    };
    let on_lab = match target {
        Target::Server(s) | Target::ServerTree(s) => {
            let address = described.facts.get("address")?;
            s.host() == address || s.address().is_some_and(|a| a.to_string() == *address)
        }
        Target::Folder(folder) | Target::Tree(folder) => {
            let mounts = std::fs::canonicalize(state.join("mnt")).ok()?;
            std::fs::canonicalize(folder).is_ok_and(|f| f.starts_with(&mounts))
        }
        Target::Device(_) => false,
    };
    on_lab.then_some(described)
}

/// What `lab/up` writes of each client host's link: a line per host, `NAME<TAB>RATE`, the rate
/// the host receives at (the switch's end of its veth; "not shaped" where none).
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub const LAB_HOST_LINKS: &str = "host-links";

/// The rate this host receives at, as the lab that made it says (`$IOMATRIX_LAB_STATE/host-links`,
/// by this host's name); None outside the lab's hosts.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub fn lab_receive_rate() -> Option<String> {
    let state = PathBuf::from(std::env::var_os("IOMATRIX_LAB_STATE")?);
    let text = std::fs::read_to_string(state.join(LAB_HOST_LINKS)).ok()?;
    let name = rustix::system::uname().nodename().to_string_lossy().into_owned();
    receive_rate_of(&text, &name)
}

#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
fn receive_rate_of(text: &str, host: &str) -> Option<String> {
    text.lines()
        .filter_map(|l| l.split_once('\t'))
        .find(|(name, _)| *name == host)
        .map(|(_, rate)| rate.trim().to_string())
}

#[cfg(test)]
mod host_links {
    #[test]
    fn a_host_finds_its_own_line_and_no_other() {
        let text = "iomx-7-host1\tnot shaped\niomx-7-host3\t10Mbit\n";
        assert_eq!(super::receive_rate_of(text, "iomx-7-host3").as_deref(), Some("10Mbit"));
        assert_eq!(super::receive_rate_of(text, "iomx-7-host2"), None);
    }
}
