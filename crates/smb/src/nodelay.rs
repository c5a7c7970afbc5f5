//! TCP_NODELAY on the smb crate's connection to the server.
//!
//! The smb crate (smb-transport 0.12.1) sends each request as several
//! `write_all` calls on its TCP socket (the 4-byte transport header, then
//! each part of the message) and never sets TCP_NODELAY. With Nagle's
//! algorithm the kernel holds the second small segment until the server
//! acknowledges the first, and the server delays that acknowledgement
//! (~40 ms on Linux): every small request, a READ above all, waited that
//! long. The crate offers no hook for socket options (`ConnectionConfig`
//! has none, and `Client` builds its own `TcpTransport`), so once a session
//! is up the socket is found among this process's descriptors by the
//! address it is connected to, and the option is set there.

use std::io;
use std::mem::{size_of, MaybeUninit};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

/// Sets TCP_NODELAY on every TCP socket in the calling thread's file table
/// connected to one of `peers`, and returns how many it set. Other
/// sessions to the same server that share the table get it too, which is
/// what they need as well.
///
/// The thread's table, not the process's: a client thread of the harness
/// has a file table of its own (coord's `own_file_table`), and
/// `/proc/self/fd` lists the main thread's, where this thread's socket is
/// not (a socket the main thread opened to the same server would be found
/// instead, and the client's own left with Nagle on).
pub fn set_on_sockets_connected_to(peers: &[SocketAddr]) -> io::Result<usize> {
    let mut set = 0;
    for entry in std::fs::read_dir(FD_FOLDER)?.flatten() {
        let Some(fd) = entry.file_name().to_str().and_then(|n| n.parse::<libc::c_int>().ok()) else { continue };
        // Only sockets ("socket:[inode]"); anything else is skipped without a system call on it.
        if !std::fs::read_link(entry.path()).is_ok_and(|target| target.to_string_lossy().starts_with("socket:")) {
            continue;
        }
        if is_tcp(fd) && peer_of(fd).is_some_and(|peer| peers.contains(&peer)) && set_nodelay(fd) {
            set += 1;
        }
    }
    Ok(set)
}

/// The calling thread's descriptors (Linux 3.17 and later).
pub const FD_FOLDER: &str = "/proc/thread-self/fd";

// SAFETY (the three functions below): each passes the kernel a descriptor
// number and pointers to local buffers of exactly the length it passes with
// them, which the kernel writes at most `len` bytes into; nothing is owned,
// closed or kept. The descriptor may have been closed, or reused by another
// thread, since it was listed: then the call fails (EBADF, ENOTSOCK) or acts
// on whatever socket now has that number, and all it can change there is
// the TCP_NODELAY option of a TCP socket connected to the SMB server: a
// timing option, never memory.

fn is_tcp(fd: libc::c_int) -> bool {
    let mut kind: libc::c_int = 0;
    let mut len = size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: see above; `kind` is a c_int and `len` its size.
    let rc = unsafe { libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_TYPE, (&raw mut kind).cast(), &mut len) };
    rc == 0 && kind == libc::SOCK_STREAM
}

fn peer_of(fd: libc::c_int) -> Option<SocketAddr> {
    let mut storage = MaybeUninit::<libc::sockaddr_storage>::zeroed();
    let mut len = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: see above; `storage` is a sockaddr_storage, large enough for any address, and `len` its size.
    if unsafe { libc::getpeername(fd, storage.as_mut_ptr().cast(), &mut len) } != 0 {
        return None;
    }
    // SAFETY: zero-initialised plain data, partly filled in by the kernel: every bit pattern is valid.
    let storage = unsafe { storage.assume_init() };
    match libc::c_int::from(storage.ss_family) {
        libc::AF_INET if len as usize >= size_of::<libc::sockaddr_in>() => {
            // SAFETY: the family says the storage holds a sockaddr_in, and the kernel wrote all of it.
            let v4: libc::sockaddr_in = unsafe { std::ptr::read((&raw const storage).cast()) };
            let ip = Ipv4Addr::from(u32::from_be(v4.sin_addr.s_addr));
            Some(SocketAddr::V4(SocketAddrV4::new(ip, u16::from_be(v4.sin_port))))
        }
        libc::AF_INET6 if len as usize >= size_of::<libc::sockaddr_in6>() => {
            // SAFETY: the family says the storage holds a sockaddr_in6, and the kernel wrote all of it.
            let v6: libc::sockaddr_in6 = unsafe { std::ptr::read((&raw const storage).cast()) };
            let ip = Ipv6Addr::from(v6.sin6_addr.s6_addr);
            Some(SocketAddr::V6(SocketAddrV6::new(ip, u16::from_be(v6.sin6_port), v6.sin6_flowinfo, v6.sin6_scope_id)))
        }
        _ => None,
    }
}

fn set_nodelay(fd: libc::c_int) -> bool {
    let on: libc::c_int = 1;
    let len = size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: see above; `on` is a c_int and `len` its size.
    unsafe { libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, (&raw const on).cast(), len) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd;

    #[test]
    fn nodelay_is_set_on_the_socket_connected_to_the_peer_and_on_no_other() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let other = TcpListener::bind("127.0.0.1:0").unwrap();
        let to_server = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let to_other = TcpStream::connect(other.local_addr().unwrap()).unwrap();
        assert!(!to_server.nodelay().unwrap() && !to_other.nodelay().unwrap(), "Nagle is on by default");
        assert_eq!(peer_of(to_server.as_raw_fd()), Some(listener.local_addr().unwrap()));
        let set = set_on_sockets_connected_to(&[listener.local_addr().unwrap()]).unwrap();
        assert_eq!(set, 1);
        assert!(to_server.nodelay().unwrap());
        assert!(!to_other.nodelay().unwrap(), "a socket to another address is left alone");
    }

    #[test]
    fn a_thread_with_a_file_table_of_its_own_finds_its_own_socket() {
        // As a harness client thread: its table unshared, then its session opened on it.
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let server = listener.local_addr().unwrap();
        let (set, nodelay) = std::thread::spawn(move || {
            // SAFETY: gives this test thread a private copy of its file table; nothing else is touched.
            assert_eq!(unsafe { libc::unshare(libc::CLONE_FILES) }, 0);
            let to_server = TcpStream::connect(server).unwrap();
            let set = set_on_sockets_connected_to(&[server]).unwrap();
            (set, to_server.nodelay().unwrap())
        })
        .join()
        .unwrap();
        assert_eq!(set, 1, "the socket in the thread's own table is found");
        assert!(nodelay);
    }
}
