//! Where a suite's clients keep their files: on this machine (a local
//! folder or a mounted share), or on a server reached through iomatrix's
//! own protocol client. One type for every suite.

use crate::RemoteFs;
use std::io;

/// Connects a fresh session to the run's server: every client (and every
/// connection of the file-server load, every seeker of Bonnie) has its own,
/// as separate machines would.
pub type Connect<'a> = dyn Fn() -> io::Result<Box<dyn RemoteFs>> + Sync + 'a;

/// Where files are, at one level of a run: the whole run's, or (after
/// [`Place::of_client`]) one client's.
#[derive(Clone)]
pub enum Place<'a> {
    /// Local paths: the coordinator gives each client its own folder
    /// (`client-N` of the run's working folder).
    Local,
    /// On a server.
    Remote {
        /// Opens a session to the server (one per client, as separate machines would).
        connect: &'a Connect<'a>,
        /// The folder on the server at this level (`""` is the target's own folder).
        folder: String,
    },
}

impl<'a> Place<'a> {
    /// Whether the files are on a server.
    pub fn is_remote(&self) -> bool {
        matches!(self, Place::Remote { .. })
    }

    /// Client `rank`'s place: on a server its own folder `client-N` below
    /// this one; locally unchanged (the coordinator made the client's folder).
    #[must_use]
    pub fn of_client(&self, rank: usize) -> Place<'a> {
        match self {
            Place::Local => Place::Local,
            Place::Remote { connect, folder } => {
                Place::Remote { connect: *connect, folder: below(folder, &client_folder(rank)) }
            }
        }
    }

    /// The folder on the server at this level, or None locally.
    pub fn remote_folder(&self) -> Option<&str> {
        match self {
            Place::Local => None,
            Place::Remote { folder, .. } => Some(folder),
        }
    }

    /// A fresh session to the server, or None locally.
    pub fn connect(&self) -> Option<io::Result<Box<dyn RemoteFs>>> {
        match self {
            Place::Local => None,
            Place::Remote { connect, .. } => Some(connect()),
        }
    }
}

/// The name of client `rank`'s own folder, wherever it is: clients never
/// share a file name (seed 001's collisions).
pub fn client_folder(rank: usize) -> String {
    format!("client-{rank}")
}

/// `name` inside `folder` on a server (`folder` may be the target's own, `""`).
pub fn below(folder: &str, name: &str) -> String {
    if folder.is_empty() {
        name.to_string()
    } else {
        format!("{folder}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_works_below_the_run_folder_on_a_server_and_in_its_own_folder_locally() {
        let connect = || Err(io::Error::other("no server in this test"));
        let run = Place::Remote { connect: &connect, folder: "iomatrix-1-2".into() };
        assert_eq!(run.of_client(3).remote_folder(), Some("iomatrix-1-2/client-3"));
        let tree = Place::Remote { connect: &connect, folder: String::new() };
        assert_eq!(tree.of_client(0).remote_folder(), Some("client-0"));
        assert!(Place::Local.of_client(5).remote_folder().is_none());
        assert!(run.connect().is_some_and(|c| c.is_err()) && Place::Local.connect().is_none());
    }
}
