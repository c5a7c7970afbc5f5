//! Queued I/O on a server for protocol clients that carry one request at a
//! time per connection (nfs3_client's calls take `&mut self`):
//!
//! - [`OneAtATime`]: depth 1 on the client's own session; each request is
//!   performed inside `submit`, as [`crate::Immediate`] does for local files.
//! - [`SessionPool`]: depth N on N sessions, each driven by a thread of its
//!   own with one request in flight, so the server sees N requests at once.
//!
//! Neither is a local backend: [`QueuedFile::kind`] answers psync, the kind
//! every run on a server records, whose conditions name the protocol client.

use crate::queued::{check_buffer_len, check_reap, check_request, invalid};
use crate::{AlignedBuf, Completion, QueuedFile, RemoteFile, RemoteFs, Request, Submitted};
use iomatrix_core::BackendKind;
use std::io;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Depth 1 on one session: `submit` performs the request.
pub struct OneAtATime<'a> {
    file: Option<RemoteFile<'a>>,
    buf: AlignedBuf,
    done: Option<Completion>,
    described: String,
}

impl<'a> OneAtATime<'a> {
    /// Opens the existing file `path` on `fs`. `described` says how requests go, for reports.
    pub fn open(
        fs: &'a mut dyn RemoteFs,
        path: &str,
        buffer_len: usize,
        described: String,
    ) -> io::Result<OneAtATime<'a>> {
        check_buffer_len(buffer_len)?;
        let buf = AlignedBuf::try_new(buffer_len, "the request buffer")?;
        let file = RemoteFile::open(fs, path)?;
        Ok(OneAtATime { file: Some(file), buf, done: None, described })
    }
}

impl QueuedFile for OneAtATime<'_> {
    fn kind(&self) -> BackendKind {
        BackendKind::Psync
    }
    fn depth(&self) -> usize {
        1
    }
    fn describe(&self) -> String {
        self.described.clone()
    }
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        assert!(slot == 0, "slot {slot} is out of range: one request at a time has one slot (0)");
        self.buf.as_mut_slice()
    }
    fn submit(&mut self, req: Request) -> io::Result<Submitted> {
        check_request(&req, 1, self.buf.len())?;
        if self.done.is_some() {
            return Ok(Submitted::Busy);
        }
        let file = self.file.as_mut().ok_or_else(|| invalid("the file is closed".into()))?;
        let data = &mut self.buf.as_mut_slice()[..req.len];
        let outcome = if req.write {
            crate::RecordIo::write_at(file, data, req.offset)
        } else {
            crate::RecordIo::read_at(file, data, req.offset)
        };
        self.done = Some(Completion { slot: req.slot, result: outcome.map(|()| req.len) });
        Ok(Submitted::Done)
    }
    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        check_reap(min, self.in_flight())?;
        out.extend(self.done.take());
        Ok(())
    }
    fn in_flight(&self) -> usize {
        usize::from(self.done.is_some())
    }
    fn flush_to_storage(&mut self) -> io::Result<()> {
        self.file.as_mut().ok_or_else(|| invalid("the file is closed".into()))?.flush()
    }
    fn close(mut self: Box<Self>) -> io::Result<()> {
        if let Some(file) = self.file.take() {
            file.close()?;
        }
        match self.done.take() {
            Some(Completion { result: Err(e), .. }) => Err(e),
            _ => Ok(()),
        }
    }
}

/// A request handed to a worker, with the slot's buffer.
struct Job {
    req: Request,
    buf: AlignedBuf,
}

/// A worker's answer: the buffer comes back with the outcome.
struct Done {
    slot: usize,
    buf: AlignedBuf,
    result: io::Result<usize>,
}

enum FromWorker {
    Opened(io::Result<()>),
    Done(Done),
}

/// Depth N on N sessions to the same server: one worker thread per session,
/// each with the file open and one request in flight. Requests wait in one
/// queue that the idle workers take from. The sessions go back to `spare` at
/// close (or drop), to serve the next cell.
pub struct SessionPool {
    depth: usize,
    buffers: Vec<Option<AlignedBuf>>,
    jobs: Option<mpsc::Sender<Job>>,
    answers: mpsc::Receiver<FromWorker>,
    workers: Vec<JoinHandle<Option<io::Error>>>,
    in_flight: usize,
    ready: Vec<Completion>,
    described: String,
}

impl SessionPool {
    /// Starts one worker per session in `sessions` (taken from `spare`,
    /// which must hold at least `depth`), each opening `path`; returns once
    /// every worker has the file open (or the first failure).
    pub fn open(
        spare: &Arc<Mutex<Vec<Box<dyn RemoteFs>>>>,
        depth: usize,
        path: &str,
        buffer_len: usize,
        described: String,
    ) -> io::Result<SessionPool> {
        check_buffer_len(buffer_len)?;
        let sessions: Vec<Box<dyn RemoteFs>> = {
            let mut spare = spare.lock().map_err(|_| invalid("a worker panicked".into()))?;
            if spare.len() < depth {
                return Err(invalid(format!("{depth} sessions are needed, {} are connected", spare.len())));
            }
            let keep = spare.len() - depth;
            spare.drain(keep..).collect()
        };
        let mut buffers = iomatrix_core::alloc::try_with_capacity(depth, "the session pool's buffers")?;
        for _ in 0..depth {
            buffers.push(Some(AlignedBuf::try_new(
                buffer_len,
                &format!("{depth} request buffers of {buffer_len} bytes"),
            )?));
        }
        let (jobs, queue) = mpsc::channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        let (answer, answers) = mpsc::channel::<FromWorker>();
        let mut pool = SessionPool {
            depth,
            buffers,
            jobs: Some(jobs),
            answers,
            workers: Vec::with_capacity(depth),
            in_flight: 0,
            ready: Vec::new(),
            described,
        };
        for (i, fs) in sessions.into_iter().enumerate() {
            let (queue, answer, spare, path) =
                (Arc::clone(&queue), answer.clone(), Arc::clone(spare), path.to_string());
            let spawned = std::thread::Builder::new()
                .name(format!("session-{i}"))
                .spawn(move || serve(fs, &path, &queue, &answer, &spare));
            match spawned {
                Ok(worker) => pool.workers.push(worker),
                // Dropping the pool ends and joins the workers already started.
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!("cannot start the thread of session {i} of {depth}: {e}"),
                    ))
                }
            }
        }
        for _ in 0..depth {
            match pool.answers.recv() {
                Ok(FromWorker::Opened(Ok(()))) => {}
                Ok(FromWorker::Opened(Err(e))) => return Err(e),
                Ok(FromWorker::Done(_)) | Err(_) => {
                    return Err(invalid("a worker ended before opening the file".into()))
                }
            }
        }
        Ok(pool)
    }

    /// Waits for one answer and files it.
    fn take_one(&mut self) -> io::Result<()> {
        match self.answers.recv() {
            Ok(FromWorker::Done(Done { slot, buf, result })) => {
                self.buffers[slot] = Some(buf);
                self.in_flight -= 1;
                self.ready.push(Completion { slot, result });
                Ok(())
            }
            Ok(FromWorker::Opened(_)) => Err(io::Error::other("a worker opened its file twice (a bug)")),
            Err(_) => Err(io::Error::other("every worker of the session pool ended with requests in flight")),
        }
    }

    /// Ends the workers (their sessions go back to the spare list) and
    /// reports the first failure to close a file.
    fn stop(&mut self) -> io::Result<()> {
        self.jobs = None;
        let mut first = None;
        for worker in self.workers.drain(..) {
            match worker.join() {
                Ok(Some(e)) => first = first.or(Some(e)),
                Ok(None) => {}
                Err(_) => first = first.or(Some(io::Error::other("a worker of the session pool panicked"))),
            }
        }
        first.map_or(Ok(()), Err)
    }
}

/// One worker: opens the file, then performs requests until the queue closes.
/// Answers the closing error, if any; gives its session back in every case.
fn serve(
    mut fs: Box<dyn RemoteFs>,
    path: &str,
    queue: &Mutex<mpsc::Receiver<Job>>,
    answer: &mpsc::Sender<FromWorker>,
    spare: &Mutex<Vec<Box<dyn RemoteFs>>>,
) -> Option<io::Error> {
    let closed = match fs.open(path) {
        Err(e) => {
            let _ = answer.send(FromWorker::Opened(Err(e)));
            None
        }
        Ok(handle) => {
            let _ = answer.send(FromWorker::Opened(Ok(())));
            loop {
                // The lock is held only while this worker waits for a request: the others are busy or waiting too.
                let job = match queue.lock() {
                    Ok(q) => q.recv(),
                    Err(_) => break,
                };
                let Ok(Job { req, mut buf }) = job else { break };
                let data = &mut buf.as_mut_slice()[..req.len];
                let outcome = if req.write {
                    fs.write_at(handle, data, req.offset)
                } else {
                    fs.read_at(handle, data, req.offset)
                };
                let done = Done { slot: req.slot, buf, result: outcome.map(|()| req.len) };
                if answer.send(FromWorker::Done(done)).is_err() {
                    break;
                }
            }
            fs.close(handle).err()
        }
    };
    if let Ok(mut spare) = spare.lock() {
        spare.push(fs);
    }
    closed
}

impl QueuedFile for SessionPool {
    fn kind(&self) -> BackendKind {
        BackendKind::Psync
    }
    fn depth(&self) -> usize {
        self.depth
    }
    fn describe(&self) -> String {
        self.described.clone()
    }
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.buffers[slot].as_mut().map(AlignedBuf::as_mut_slice).unwrap_or_else(|| panic!("slot {slot} is in flight"))
    }
    fn submit(&mut self, req: Request) -> io::Result<Submitted> {
        let buffer_len = self.buffers.iter().flatten().map(AlignedBuf::len).next().unwrap_or(req.len);
        check_request(&req, self.depth, buffer_len)?;
        let Some(buf) = self.buffers[req.slot].take() else {
            return Err(invalid(format!("slot {} is still in flight", req.slot)));
        };
        let jobs = self.jobs.as_ref().ok_or_else(|| invalid("the pool is closed".into()))?;
        if let Err(mpsc::SendError(job)) = jobs.send(Job { req, buf }) {
            self.buffers[req.slot] = Some(job.buf);
            return Err(io::Error::other("every worker of the session pool has ended"));
        }
        self.in_flight += 1;
        Ok(Submitted::Queued)
    }
    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        check_reap(min, self.in_flight())?;
        while self.ready.len() < min {
            self.take_one()?;
        }
        while let Ok(FromWorker::Done(Done { slot, buf, result })) = self.answers.try_recv() {
            self.buffers[slot] = Some(buf);
            self.in_flight -= 1;
            self.ready.push(Completion { slot, result });
        }
        out.append(&mut self.ready);
        Ok(())
    }
    fn in_flight(&self) -> usize {
        self.in_flight + self.ready.len()
    }
    fn flush_to_storage(&mut self) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "a session pool does not flush; flush through the client's own session",
        ))
    }
    fn close(mut self: Box<Self>) -> io::Result<()> {
        while self.in_flight > 0 {
            self.take_one()?;
        }
        let unreaped = self.ready.drain(..).find_map(|c| c.result.err());
        self.stop()?;
        unreaped.map_or(Ok(()), Err)
    }
}

impl Drop for SessionPool {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}
