//! The one error type of the CLI and the exit codes it maps to.

use std::fmt;

/// Exit code for bad input: a missing or unreadable file, bad JSON, a bad field, a bad link.
pub const EXIT_BAD_INPUT: u8 = 2;
/// Exit code for everything else: an output file that cannot be written, a run that fails.
pub const EXIT_FAILURE: u8 = 1;

/// Why a command stopped.
#[derive(Debug)]
pub enum Failure {
    /// The input is wrong; the message names the file and, where there is one, the field.
    Input(String),
    /// Something other than the input failed (writing output, a run that cannot finish).
    Other(String),
    /// stdout was closed early (e.g. `bubblelab run x | head -1`): stop quietly.
    BrokenPipe,
}

impl Failure {
    /// The process exit code for this failure.
    #[must_use]
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Input(_) => EXIT_BAD_INPUT,
            Failure::Other(_) => EXIT_FAILURE,
            Failure::BrokenPipe => 0,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Input(message) | Failure::Other(message) => f.write_str(message),
            Failure::BrokenPipe => f.write_str("stdout was closed"),
        }
    }
}

/// Replaces Rust's panic message with one plain `error:` line.
///
/// Every path of the CLI returns a `Result`, so this only fires on a bug; even then the user
/// sees a short line asking for a report instead of a backtrace hint.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .map(ToString::to_string)
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown cause".to_string());
        let place = info
            .location()
            .map(|l| format!(" ({}:{})", l.file(), l.line()))
            .unwrap_or_default();
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!("error: internal error in bubblelab, please report it: {message}{place}\n")
                .as_bytes(),
        );
    }));
}
