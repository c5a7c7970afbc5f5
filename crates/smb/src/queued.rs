//! Queued I/O on one SMB session: up to `depth` READ/WRITE requests in
//! flight at once (SMB2 grants credits for concurrent requests), as tasks of
//! the session's own single-threaded runtime. The tasks run while `reap`
//! waits, so a request goes out at the next `reap` after its `submit` (the
//! access runner reaps right after submitting) and its completion is seen as
//! soon as its answer arrives.

use crate::{err, SmbFs};
use iomatrix_backend::{
    check_buffer_len, check_reap, check_request, AlignedBuf, Completion, QueuedFile, Request, Submitted,
};
use iomatrix_core::BackendKind;
use smb::{FileAccessMask, FileCreateArgs, ReadAt, Resource, WriteAt};
use std::io;
use std::sync::Arc;
use tokio::task::JoinSet;

/// A request's outcome with the slot's buffer, handed back by its task.
struct Done {
    slot: usize,
    buf: AlignedBuf,
    result: io::Result<usize>,
}

pub(crate) struct SmbQueued<'a> {
    fs: &'a mut SmbFs,
    file: Option<Arc<smb::File>>,
    path: String,
    depth: usize,
    buffer_len: usize,
    buffers: Vec<Option<AlignedBuf>>,
    tasks: JoinSet<Done>,
    ready: Vec<Completion>,
}

impl<'a> SmbQueued<'a> {
    pub(crate) fn open(fs: &'a mut SmbFs, path: &str, depth: usize, buffer_len: usize) -> io::Result<SmbQueued<'a>> {
        check_buffer_len(buffer_len)?;
        let access = FileAccessMask::new().with_generic_read(true).with_generic_write(true);
        let Resource::File(file) = fs.open_with(path, &FileCreateArgs::make_open_existing(access), "opening")? else {
            return Err(err(&fs.url, path, "not a file"));
        };
        Ok(SmbQueued {
            fs,
            file: Some(Arc::new(file)),
            path: path.to_string(),
            depth,
            buffer_len,
            buffers: (0..depth).map(|_| Some(AlignedBuf::new(buffer_len))).collect(),
            tasks: JoinSet::new(),
            ready: Vec::new(),
        })
    }

    /// Waits for the next task to finish and files its completion.
    fn wait_one(&mut self) -> io::Result<()> {
        let joined = self.fs.runtime.block_on(self.tasks.join_next());
        match joined {
            Some(Ok(done)) => {
                self.file_done(done);
                Ok(())
            }
            Some(Err(e)) => Err(err(&self.fs.url, "a request's task", e)),
            None => Err(io::Error::other("no request in flight (a bug)")),
        }
    }

    fn file_done(&mut self, Done { slot, buf, result }: Done) {
        self.buffers[slot] = Some(buf);
        self.ready.push(Completion { slot, result });
    }

    /// Waits for every request in flight, and closes the file.
    fn finish(&mut self) -> io::Result<()> {
        while !self.tasks.is_empty() {
            self.wait_one()?;
        }
        let Some(file) = self.file.take() else { return Ok(()) };
        let file = Arc::try_unwrap(file).map_err(|_| io::Error::other("a finished request still holds the file"))?;
        let _inside = self.fs.runtime.enter();
        self.fs.block(&format!("CLOSE {}", self.path), file.close())
    }
}

/// Moves the whole request, in as many READs or WRITEs as the server's
/// sizes need, within `timeout`; errors name the server and the request.
async fn transfer(
    file: &smb::File,
    buf: &mut [u8],
    req: Request,
    url: &crate::SmbUrl,
    path: &str,
    timeout: std::time::Duration,
) -> io::Result<usize> {
    let op = if req.write { "WRITE" } else { "READ" };
    let whole = async {
        let mut done = 0;
        while done < req.len {
            let at = req.offset + done as u64;
            let what = format!("{op} {path} at byte {at}");
            let n = if req.write {
                file.write_at(&buf[done..req.len], at).await
            } else {
                file.read_at(&mut buf[done..req.len], at).await
            }
            .map_err(|e| err(url, &what, e))?;
            if n == 0 {
                let why = if req.write { "the server wrote nothing" } else { "the file ends there" };
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, err(url, &what, why).to_string()));
            }
            done += n;
        }
        Ok(done)
    };
    match tokio::time::timeout(timeout, whole).await {
        Ok(result) => result,
        Err(_) => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            err(
                url,
                &format!("{op} {path} at byte {}", req.offset),
                format!("no answer within {} s", timeout.as_secs()),
            )
            .to_string(),
        )),
    }
}

impl QueuedFile for SmbQueued<'_> {
    /// No local backend: runs on a server record psync, and their conditions name the protocol client.
    fn kind(&self) -> BackendKind {
        BackendKind::Psync
    }
    fn depth(&self) -> usize {
        self.depth
    }
    fn describe(&self) -> String {
        match self.depth {
            1 => "one request at a time on one SMB session".to_string(),
            n => format!("up to {n} requests in flight at once on one SMB session"),
        }
    }
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.buffers[slot].as_mut().map(AlignedBuf::as_mut_slice).unwrap_or_else(|| panic!("slot {slot} is in flight"))
    }
    fn submit(&mut self, req: Request) -> io::Result<Submitted> {
        check_request(&req, self.depth, self.buffer_len)?;
        let Some(mut buf) = self.buffers[req.slot].take() else {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("slot {} is still in flight", req.slot)));
        };
        let file = Arc::clone(self.file.as_ref().ok_or_else(|| io::Error::other("the file is closed"))?);
        let (url, path, timeout) = (self.fs.url.clone(), self.path.clone(), self.fs.timeout);
        let _inside = self.fs.runtime.enter();
        self.tasks.spawn(async move {
            let result = transfer(&file, buf.as_mut_slice(), req, &url, &path, timeout).await;
            Done { slot: req.slot, buf, result }
        });
        Ok(Submitted::Queued)
    }
    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        check_reap(min, self.in_flight())?;
        while self.ready.len() < min {
            self.wait_one()?;
        }
        while let Some(joined) = self.tasks.try_join_next() {
            let done = joined.map_err(|e| err(&self.fs.url, "a request's task", e))?;
            self.file_done(done);
        }
        out.append(&mut self.ready);
        Ok(())
    }
    fn in_flight(&self) -> usize {
        self.tasks.len() + self.ready.len()
    }
    fn flush_to_storage(&mut self) -> io::Result<()> {
        while !self.tasks.is_empty() {
            self.wait_one()?;
        }
        let file = Arc::clone(self.file.as_ref().ok_or_else(|| io::Error::other("the file is closed"))?);
        self.fs.block(&format!("FLUSH {}", self.path), file.flush())
    }
    fn close(mut self: Box<Self>) -> io::Result<()> {
        let finished = self.finish();
        let unreaped = self.ready.drain(..).find_map(|c| c.result.err());
        finished?;
        unreaped.map_or(Ok(()), Err)
    }
}

impl Drop for SmbQueued<'_> {
    fn drop(&mut self) {
        // Dropped without close (an error on the way): end the tasks and close the file inside the runtime,
        // where the smb crate does its cleanup.
        let _inside = self.fs.runtime.enter();
        self.tasks.abort_all();
        while self.fs.runtime.block_on(self.tasks.join_next()).is_some() {}
        if let Some(file) = self.file.take().and_then(|f| Arc::try_unwrap(f).ok()) {
            let _ = self.fs.block("CLOSE", file.close());
        }
    }
}
