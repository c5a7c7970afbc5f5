//! A stored run's environment as types: the machine, the target, the client hosts of an MPI run
//! and the server described, as `show`, `compare` and the reports read them. The store's one
//! reader ([`iomatrix_store::reader`](../../iomatrix_store/reader/index.html)) turns a run's
//! stored JSON into these; nothing above it reads the JSON by key.
//!
//! Stored runs of any age read: every field is optional or has a default, and a field holding
//! something of another type reads as absent ([`lenient`]), as the string-keyed reads these
//! replace did (`v["ram_bytes"].as_u64()` is None for text). A fact shown as stored
//! ([`Fact`]) keeps what it held, whatever its type, so the text shown stays byte for byte.

use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;

/// One stored fact as it was stored: text, another JSON value kept as its JSON text (a number,
/// `true`), null, or absent. What the text of a stored run shows of a fact it does not interpret.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Fact {
    /// The key is not there.
    #[default]
    Absent,
    /// The key holds null.
    Null,
    /// The key holds text.
    Text(String),
    /// The key holds a number, a boolean, a list or an object: its JSON text.
    Other(String),
}

impl Fact {
    /// The fact for people: its text, the JSON text of anything else, "unknown" for null or absent.
    pub fn shown(&self) -> String {
        match self {
            Fact::Absent | Fact::Null => "unknown".into(),
            Fact::Text(s) | Fact::Other(s) => s.clone(),
        }
    }

    /// The fact as JSON text: text quoted, "null" for null or absent.
    pub fn json(&self) -> String {
        match self {
            Fact::Absent | Fact::Null => "null".into(),
            Fact::Text(s) => serde_json::Value::String(s.clone()).to_string(),
            Fact::Other(s) => s.clone(),
        }
    }

    /// The text, where the fact is text.
    pub fn text(&self) -> Option<&str> {
        match self {
            Fact::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The whole number, where the fact is one that fits a u64.
    pub fn whole(&self) -> Option<u64> {
        match self {
            Fact::Other(s) => s.parse().ok(),
            _ => None,
        }
    }

    /// Whether the fact is the boolean `true`.
    pub fn is_true(&self) -> bool {
        matches!(self, Fact::Other(s) if s == "true")
    }

    /// Whether the key holds null or is not there.
    pub fn is_null(&self) -> bool {
        matches!(self, Fact::Absent | Fact::Null)
    }

    /// Whether the key is there at all (null included).
    pub fn is_present(&self) -> bool {
        !matches!(self, Fact::Absent)
    }
}

impl<'de> Deserialize<'de> for Fact {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match serde_json::Value::deserialize(d)? {
            serde_json::Value::Null => Fact::Null,
            serde_json::Value::String(s) => Fact::Text(s),
            other => Fact::Other(other.to_string()),
        })
    }
}

/// A stored field of its declared type, or the type's default where it holds something else
/// (or nothing): the rule that lets stored runs of any age read, the same one the stored figures
/// use. For `deserialize_with`.
pub use iomatrix_core::figures::or_default as lenient;

/// A stored JSON object of type `T`, None for anything else there (null, text, a list): an
/// object that holds fields of other types still reads, those fields absent.
pub fn lenient_object<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    Ok(match serde_json::Value::deserialize(d)? {
        object @ serde_json::Value::Object(_) => serde_json::from_value(object).ok(),
        _ => None,
    })
}

/// A stored list whose items are objects of type `T`; an item of another kind reads as
/// `T::default()` (every field absent), as an index into it did. None where no list is stored.
pub fn lenient_list<'de, D, T>(d: D) -> Result<Option<Vec<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: serde::de::DeserializeOwned + Default,
{
    Ok(match serde_json::Value::deserialize(d)? {
        serde_json::Value::Array(items) => Some(
            items
                .into_iter()
                .map(|item| match item {
                    object @ serde_json::Value::Object(_) => serde_json::from_value(object).unwrap_or_default(),
                    _ => T::default(),
                })
                .collect(),
        ),
        _ => None,
    })
}

/// A run's environment as stored: the machine (flattened beside `target`), the target, and
/// where they were recorded, the client hosts of an MPI run and the server described.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StoredEnvironment {
    /// The machine's `uname` release ([`crate::Machine::kernel`]).
    pub kernel: Fact,
    /// The first CPU model name of `/proc/cpuinfo`.
    pub cpu_model: Fact,
    /// The CPUs the process could use, as stored (0 when unknown).
    pub cpu_count: Fact,
    /// The machine's memory in bytes; None when absent or not a number.
    #[serde(deserialize_with = "lenient")]
    pub ram_bytes: Option<u64>,
    /// The target and its mount; None in a run that stored none or one that does not read.
    #[serde(deserialize_with = "lenient_object")]
    pub target: Option<StoredTarget>,
    /// Each MPI rank's host; None for a run whose clients were threads of one process.
    #[serde(deserialize_with = "lenient_list")]
    pub client_hosts: Option<Vec<StoredClientHost>>,
    /// The server described (`--describe server=FILE` or the lab's facts); None when none was.
    #[serde(deserialize_with = "lenient_object")]
    pub server: Option<StoredServer>,
}

impl StoredEnvironment {
    /// The environment of a stored run's JSON; every fact absent where it does not read.
    pub fn of(stored: &serde_json::Value) -> StoredEnvironment {
        lenient_object(stored).ok().flatten().unwrap_or_default()
    }
}

/// The target and its mount, as stored ([`crate::TargetInfo`]).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StoredTarget {
    /// The target's file system type, e.g. "ext4".
    pub fs_type: Fact,
    /// The mount's source, e.g. "/dev/loop0" or a server.
    pub mount_source: Fact,
    /// The mount's options, as mountinfo lists them.
    pub mount_options: Fact,
    /// The file system's size in bytes; None when absent or not a number.
    #[serde(deserialize_with = "lenient")]
    pub total_bytes: Option<u64>,
    /// The block device under the mount; None where there is none or it does not read.
    #[serde(deserialize_with = "lenient_object")]
    pub block_device: Option<StoredBlockDevice>,
    /// A raw device's identity, where one is stored: `rerun` refuses one that does not read
    /// (the reason in `Err`).
    #[serde(deserialize_with = "identity_as_stored")]
    pub device_identity: Option<Result<crate::DeviceIdentity, String>>,
}

/// A stored device identity, or why it does not read; strict, since `rerun` proves a device by it.
fn identity_as_stored<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Result<crate::DeviceIdentity, String>>, D::Error> {
    let stored = serde_json::Value::deserialize(d)?;
    Ok(Some(serde_json::from_value(stored).map_err(|e| e.to_string())))
}

/// The block device under the target's mount, as stored ([`crate::BlockDevice`]).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StoredBlockDevice {
    /// The device's kernel name, e.g. "loop0p1".
    pub name: Fact,
    /// A partition's start alignment in bytes; None for a whole disk or where not stored.
    #[serde(deserialize_with = "lenient")]
    pub alignment_bytes: Option<u64>,
}

/// One MPI rank and its host, as stored.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StoredClientHost {
    /// The rank's number in the MPI job.
    pub rank: Fact,
    /// The name of the host the rank ran on.
    pub host: Fact,
    /// The address the rank's host is reached at.
    pub address: Fact,
    /// What the rank recorded of its host ([`crate::HostEnvironment`]); None in runs stored
    /// before hosts were described.
    #[serde(deserialize_with = "lenient_object")]
    pub environment: Option<StoredHost>,
}

/// A rank's host, as stored ([`crate::HostEnvironment`]).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StoredHost {
    /// The host's `uname` release.
    pub kernel: Fact,
    /// The host's first CPU model name.
    pub cpu_model: Fact,
    /// The CPUs the rank's process could use.
    pub cpu_count: Fact,
    /// The host's memory in bytes; None when absent or not a number.
    #[serde(deserialize_with = "lenient")]
    pub ram_bytes: Option<u64>,
    /// The file system of the rank's folder; None where not stored.
    #[serde(deserialize_with = "lenient_object")]
    pub folder: Option<StoredFolder>,
    /// The interface the rank's traffic takes; None where not stored.
    #[serde(deserialize_with = "lenient_object")]
    pub nic: Option<StoredNic>,
}

/// The file system of a rank's folder, as stored ([`crate::FolderFacts`]).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StoredFolder {
    /// The folder's path on the host, or the server's URL.
    pub path: Fact,
    /// Its file system type, or the protocol client.
    pub fs_type: Fact,
    /// Its mount's source, or the server.
    pub mount_source: Fact,
}

/// A rank's network interface, as stored ([`crate::Nic`]).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StoredNic {
    /// The interface's name, e.g. "eth0".
    pub name: Fact,
    /// The address whose route chose the interface.
    pub toward: Fact,
    /// The interface's driver, or "unknown".
    pub driver: Fact,
    /// The rate the host sends at (a tbf qdisc's), "not shaped", or "unknown (...)".
    pub link_rate: Fact,
    /// The link speed the driver reports, in Mbit/s; None where it reports none.
    #[serde(deserialize_with = "lenient")]
    pub speed_mbps: Option<u64>,
    /// The interface's MTU in bytes; None where unreadable.
    #[serde(deserialize_with = "lenient")]
    pub mtu: Option<u64>,
    /// The rate the host receives at, where whoever shaped the link said; None where nobody did.
    #[serde(deserialize_with = "lenient")]
    pub receive_rate: Option<String>,
}

/// The server described, as stored ([`crate::ServerDescription`]).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StoredServer {
    /// Where the facts came from, e.g. "lab (DIR/server-facts)" or "--describe server=FILE".
    pub described_by: Fact,
    /// The facts by key; empty where none read.
    #[serde(deserialize_with = "lenient")]
    pub facts: BTreeMap<String, Fact>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn facts_read_as_stored_and_other_types_read_as_absent() {
        let env = StoredEnvironment::of(&json!({
            "kernel": "6.18", "cpu_count": 4, "cpu_model": null, "ram_bytes": "lots",
            "target": {"total_bytes": 10, "block_device": {"name": "sda1", "alignment_bytes": "x"}},
            "client_hosts": [{"rank": 0, "host": "h", "environment": 3}, 7],
            "server": {"described_by": "lab", "facts": {"ram_bytes": "64g"}}
        }));
        assert_eq!(env.kernel.shown(), "6.18");
        assert_eq!(
            (env.cpu_count.shown(), env.cpu_count.whole(), env.cpu_count.json()),
            ("4".into(), Some(4), "4".into())
        );
        assert_eq!((env.cpu_model.shown(), env.cpu_model.json()), ("unknown".into(), "null".into()));
        assert_eq!(env.ram_bytes, None, "text where a number belongs reads as absent");
        let target = env.target.unwrap();
        assert_eq!(target.total_bytes, Some(10));
        assert_eq!(target.block_device.unwrap().alignment_bytes, None);
        let hosts = env.client_hosts.unwrap();
        assert_eq!(hosts.len(), 2, "an item that is no object still counts, its facts absent");
        assert_eq!((hosts[0].rank.json(), hosts[0].host.text()), ("0".into(), Some("h")));
        assert_eq!(hosts[0].environment, None);
        assert_eq!(hosts[1], StoredClientHost::default());
        assert_eq!(env.server.unwrap().facts["ram_bytes"].text(), Some("64g"));
        assert_eq!(StoredEnvironment::of(&json!("not an object")), StoredEnvironment::default());
        assert_eq!(StoredEnvironment::of(&json!({})).client_hosts, None);
    }
}
