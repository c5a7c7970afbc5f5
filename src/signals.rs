//! Ctrl-C and SIGTERM: the first asks the run to stop after the requests in
//! flight (finished cells are kept, the working folder removed); a second
//! exits at once (the database stays consistent: every cell is its own transaction).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

pub static STOP: AtomicBool = AtomicBool::new(false);
static SIGNALS: AtomicUsize = AtomicUsize::new(0);

/// Installs the handler once; later calls return the same flag.
pub fn install() -> anyhow::Result<&'static AtomicBool> {
    static INSTALLED: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
    let mut installed = INSTALLED.lock().unwrap_or_else(|e| e.into_inner());
    if *installed {
        return Ok(&STOP);
    }
    *installed = true;
    ctrlc::set_handler(|| {
        if SIGNALS.fetch_add(1, Ordering::SeqCst) == 0 {
            STOP.store(true, Ordering::SeqCst);
            eprintln!("\niomatrix: stopping after the current requests (finished cells are kept); press Ctrl-C again to quit at once");
        } else {
            std::process::exit(crate::app::EXIT_INTERRUPTED.into());
        }
    })?;
    Ok(&STOP)
}
