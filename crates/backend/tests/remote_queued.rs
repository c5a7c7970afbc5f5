//! Queued I/O for protocol clients with one request per connection, on an
//! in-memory server whose every call takes a while: a session pool of N
//! keeps N requests truly in flight, data round-trips, sessions come back.

use iomatrix_backend::{
    Completion, OneAtATime, QueuedFile, RemoteEntry, RemoteFs, RemoteKind, Request, SessionPool, Submitted,
};
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One file on a shared "server"; every read and write takes `DELAY`, and
/// the server counts how many are under way at once.
#[derive(Clone, Default)]
struct Server {
    data: Arc<Mutex<Vec<u8>>>,
    busy: Arc<AtomicUsize>,
    peak: Arc<AtomicUsize>,
}

const DELAY: Duration = Duration::from_millis(100);

struct Session(Server);

impl Session {
    fn serve<T>(&self, work: impl FnOnce(&mut Vec<u8>) -> T) -> T {
        let now = self.0.busy.fetch_add(1, Ordering::SeqCst) + 1;
        self.0.peak.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(DELAY);
        let out = work(&mut self.0.data.lock().unwrap());
        self.0.busy.fetch_sub(1, Ordering::SeqCst);
        out
    }
}

impl RemoteFs for Session {
    fn target(&self) -> String {
        "mem://server".into()
    }
    fn describe(&self) -> serde_json::Value {
        serde_json::json!({ "protocol": "MEM" })
    }
    fn mkdir(&mut self, _: &str) -> io::Result<()> {
        Ok(())
    }
    fn rmdir(&mut self, _: &str) -> io::Result<()> {
        Ok(())
    }
    fn create(&mut self, _: &str) -> io::Result<u64> {
        Ok(1)
    }
    fn create_new(&mut self, _: &str) -> io::Result<u64> {
        Ok(1)
    }
    fn stat(&mut self, path: &str) -> io::Result<RemoteEntry> {
        Ok(RemoteEntry { name: path.into(), kind: RemoteKind::File, size: self.0.data.lock().unwrap().len() as u64 })
    }
    fn read_dir(&mut self, _: &str) -> io::Result<Vec<RemoteEntry>> {
        Ok(Vec::new())
    }
    fn open(&mut self, path: &str) -> io::Result<u64> {
        if path == "missing" {
            return Err(io::Error::new(io::ErrorKind::NotFound, "mem://server: missing: no such file"));
        }
        Ok(1)
    }
    fn remove(&mut self, _: &str) -> io::Result<()> {
        Ok(())
    }
    fn read_at(&mut self, _: u64, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.serve(|d| buf.copy_from_slice(&d[offset as usize..offset as usize + buf.len()]));
        Ok(())
    }
    fn write_at(&mut self, _: u64, buf: &[u8], offset: u64) -> io::Result<()> {
        self.serve(|d| d[offset as usize..offset as usize + buf.len()].copy_from_slice(buf));
        Ok(())
    }
    fn flush(&mut self, _: u64) -> io::Result<()> {
        Ok(())
    }
    fn close(&mut self, _: u64) -> io::Result<()> {
        Ok(())
    }
}

fn reap_all(file: &mut dyn QueuedFile, n: usize) -> Vec<Completion> {
    let mut done = Vec::new();
    while done.len() < n {
        file.reap(1, &mut done).unwrap();
    }
    done
}

#[test]
fn a_session_pool_keeps_depth_requests_in_flight_and_data_round_trips() {
    let server = Server { data: Arc::new(Mutex::new(vec![0; 4 * 4096])), ..Server::default() };
    let spare: Arc<Mutex<Vec<Box<dyn RemoteFs>>>> =
        Arc::new(Mutex::new((0..4).map(|_| Box::new(Session(server.clone())) as Box<dyn RemoteFs>).collect()));
    let mut pool = SessionPool::open(&spare, 4, "f", 4096, "4 MEM connections".into()).unwrap();
    assert_eq!(spare.lock().unwrap().len(), 0, "the workers hold the sessions");
    for slot in 0..4 {
        pool.buffer(slot).fill(slot as u8 + 1);
    }
    let begun = Instant::now();
    for slot in 0..4 {
        let req = Request { slot, write: true, offset: slot as u64 * 4096, len: 4096 };
        assert_eq!(pool.submit(req).unwrap(), Submitted::Queued);
    }
    assert_eq!(pool.in_flight(), 4);
    let done = reap_all(&mut pool, 4);
    assert!(done.iter().all(|c| matches!(c.result, Ok(4096))));
    assert_eq!(server.peak.load(Ordering::SeqCst), 4, "the server saw four requests at once");
    assert!(begun.elapsed() < 3 * DELAY, "four requests took {:?}, not four times {DELAY:?}", begun.elapsed());
    // Read back in the other order, into whichever slot is free.
    for slot in 0..4 {
        let req = Request { slot, write: false, offset: (3 - slot) as u64 * 4096, len: 4096 };
        pool.submit(req).unwrap();
    }
    for c in reap_all(&mut pool, 4) {
        assert_eq!(pool.buffer(c.slot)[..], [(4 - c.slot) as u8; 4096][..]);
    }
    assert_eq!(pool.describe(), "4 MEM connections");
    Box::new(pool).close().unwrap();
    assert_eq!(spare.lock().unwrap().len(), 4, "the sessions come back for the next cell");
}

#[test]
fn a_pool_names_a_file_it_cannot_open_and_one_at_a_time_finishes_in_submit() {
    let server = Server { data: Arc::new(Mutex::new(vec![7; 8192])), ..Server::default() };
    let spare: Arc<Mutex<Vec<Box<dyn RemoteFs>>>> =
        Arc::new(Mutex::new(vec![Box::new(Session(server.clone())), Box::new(Session(server.clone()))]));
    let err = SessionPool::open(&spare, 2, "missing", 4096, String::new()).err().expect("no such file");
    assert!(err.to_string().contains("mem://server: missing"), "{err}");
    assert_eq!(spare.lock().unwrap().len(), 2, "the sessions come back after a failed open");
    assert!(SessionPool::open(&spare, 3, "f", 4096, String::new()).is_err(), "only two sessions are connected");

    let mut session = Session(server.clone());
    let mut one = OneAtATime::open(&mut session, "f", 4096, "one at a time".into()).unwrap();
    assert_eq!(one.submit(Request { slot: 0, write: false, offset: 4096, len: 4096 }).unwrap(), Submitted::Done);
    assert_eq!(one.submit(Request { slot: 0, write: false, offset: 0, len: 4096 }).unwrap(), Submitted::Busy);
    let done = reap_all(&mut one, 1);
    assert!(matches!(done[0].result, Ok(4096)));
    assert_eq!(one.buffer(0)[..], [7u8; 4096][..]);
    Box::new(one).close().unwrap();
}
