//! The NFS client's connections with every reply's size bounded.
//!
//! ONC RPC over TCP frames each reply as a record: a 4-byte header whose low 31 bits give the
//! fragment's length, then that many bytes. `nfs3_client` allocates a buffer of that length
//! before it reads the fragment, so a server (or anything at its address) that announced 2 GiB
//! would have the client hold 2 GiB for one reply. [`BoundedConnector`] gives the client
//! connections that read the headers as they pass and refuse a fragment longer than
//! [`MAX_REPLY`] before the client sees its header: no request iomatrix sends asks for more
//! than [`MAX_TRANSFER`] bytes of data, so a longer reply answers none of them.

use nfs3_client::io::{AsyncRead, AsyncWrite};
use nfs3_client::net::Connector;
use nfs3_client::tokio::{TokioConnector, TokioIo};
use std::net::SocketAddr;

/// The most data one READ or WRITE of iomatrix's asks for (a server's larger `rtmax`/`wtmax` is
/// not used beyond it).
pub const MAX_TRANSFER: u32 = 16 << 20;

/// The longest reply fragment taken: a READ of [`MAX_TRANSFER`] bytes with its headers and
/// attributes, with room to spare (a READDIRPLUS asks for at most 256 KiB).
pub const MAX_REPLY: u32 = MAX_TRANSFER + (1 << 20);

/// [`TokioConnector`]'s connections, each reply's fragments bounded by [`MAX_REPLY`].
pub struct BoundedConnector;

impl Connector for BoundedConnector {
    type Connection = Bounded<TokioIo<tokio::net::TcpStream>>;

    async fn connect(&self, addr: SocketAddr) -> std::io::Result<Self::Connection> {
        TokioConnector.connect(addr).await.map(Bounded::new)
    }

    async fn connect_with_port(&self, addr: SocketAddr, local_port: u16) -> std::io::Result<Self::Connection> {
        TokioConnector.connect_with_port(addr, local_port).await.map(Bounded::new)
    }
}

/// A connection whose incoming record headers are read as they pass.
pub struct Bounded<T> {
    inner: T,
    frames: Frames,
}

impl<T> Bounded<T> {
    fn new(inner: T) -> Bounded<T> {
        Bounded { inner, frames: Frames::new(MAX_REPLY) }
    }
}

impl<T: AsyncRead> AsyncRead for Bounded<T> {
    async fn async_read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.async_read(buf).await?;
        self.frames.pass(&buf[..n])?;
        Ok(n)
    }
}

impl<T: AsyncWrite> AsyncWrite for Bounded<T> {
    async fn async_write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.async_write(buf).await
    }
}

/// Where the incoming stream is in its record marking.
#[derive(Debug)]
struct Frames {
    max: u32,
    header: [u8; 4],
    /// Header bytes seen of the next fragment.
    have: usize,
    /// Bytes of the current fragment still to come.
    left: u64,
}

impl Frames {
    fn new(max: u32) -> Frames {
        Frames { max, header: [0; 4], have: 0, left: 0 }
    }

    /// Follows `bytes` through the stream; an error where a header announces a fragment longer
    /// than the bound (the read that completes the header fails, so the client never sizes a
    /// buffer by it).
    fn pass(&mut self, mut bytes: &[u8]) -> std::io::Result<()> {
        while !bytes.is_empty() {
            if self.left > 0 {
                let skip = self.left.min(bytes.len() as u64);
                self.left -= skip;
                bytes = &bytes[skip as usize..];
                continue;
            }
            self.header[self.have] = bytes[0];
            self.have += 1;
            bytes = &bytes[1..];
            if self.have == 4 {
                self.have = 0;
                let length = u32::from_be_bytes(self.header) & 0x7fff_ffff;
                if length > self.max {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!(
                            "the server announced a reply of {length} bytes, more than the {} any request of \
                             iomatrix's can be answered with: refused, not read",
                            self.max
                        ),
                    ));
                }
                self.left = u64::from(length);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(length: u32, last: bool) -> [u8; 4] {
        (length | if last { 0x8000_0000 } else { 0 }).to_be_bytes()
    }

    #[test]
    fn fragments_within_the_bound_pass_however_the_reads_split_them() {
        let mut stream = Vec::new();
        for (length, last) in [(8, false), (0, false), (100, true), (4, true)] {
            stream.extend_from_slice(&header(length, last));
            stream.extend(std::iter::repeat_n(0xee, length as usize));
        }
        for split in [1, 3, 4, 5, 7, stream.len()] {
            let mut frames = Frames::new(100);
            for piece in stream.chunks(split) {
                frames.pass(piece).unwrap();
            }
            assert_eq!((frames.have, frames.left), (0, 0), "split {split}");
        }
    }

    #[test]
    fn a_fragment_past_the_bound_is_refused_at_its_header() {
        let mut frames = Frames::new(MAX_REPLY);
        frames.pass(&header(16, true)).unwrap();
        frames.pass(&[0; 16]).unwrap();
        // 2 GiB - 1 announced: refused on the read that completes the header, split or not.
        frames.pass(&header(0x7fff_ffff, true)[..2]).unwrap();
        let e = frames.pass(&header(0x7fff_ffff, true)[2..]).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("2147483647 bytes"), "{e}");
        let mut frames = Frames::new(MAX_REPLY);
        assert!(frames.pass(&header(MAX_REPLY, true)).is_ok());
        let mut frames = Frames::new(MAX_REPLY);
        assert!(frames.pass(&header(MAX_REPLY + 1, false)).is_err());
    }
}
