//! Readers of real request traces into agents (from `&str`, never files): the Mooncake
//! conversation trace (sessions rebuilt from shared prefix-block hashes) and the Azure LLM
//! inference trace (arrival times and token counts; one single-turn agent per request).

pub mod azure;
pub mod mooncake;

use alloc::string::String;

/// A trace that cannot be read: the 1-based line (or CSV row), the field, and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// 1-based line of the file (0 = the file as a whole).
    pub line: usize,
    /// Field or column, if one is at fault.
    pub field: Option<String>,
    /// What was expected and what was found.
    pub message: String,
}

impl core::fmt::Display for TraceError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match (self.line, &self.field) {
            (0, None) => write!(f, "{}", self.message),
            (0, Some(c)) => write!(f, "column `{c}`: {}", self.message),
            (l, None) => write!(f, "line {l}: {}", self.message),
            (l, Some(c)) => write!(f, "line {l}, `{c}`: {}", self.message),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for TraceError {}

impl TraceError {
    pub(crate) fn new(line: usize, field: Option<&str>, message: impl Into<String>) -> Self {
        TraceError {
            line,
            field: field.map(String::from),
            message: message.into(),
        }
    }
}

crate::kinds! {
    /// Trace formats the lab reads.
    pub enum TraceFormat as "request trace format" {
        /// Mooncake's JSON Lines (`timestamp`, `input_length`, `output_length`, `hash_ids`).
        Mooncake = "mooncake", "Mooncake conversation trace (JSON Lines with hash_ids)";
        /// Azure LLM inference CSV (`TIMESTAMP,ContextTokens,GeneratedTokens`).
        Azure = "azure", "Azure LLM inference CSV (TIMESTAMP,ContextTokens,GeneratedTokens)";
    }
}

/// Guesses the format from the first non-blank characters.
#[must_use]
pub fn detect(text: &str) -> Option<TraceFormat> {
    let t = text.trim_start();
    if t.starts_with('{') {
        Some(TraceFormat::Mooncake)
    } else if t.to_ascii_lowercase().starts_with("timestamp") {
        Some(TraceFormat::Azure)
    } else {
        None
    }
}

/// Reads `text` in `format`.
///
/// # Errors
/// [`TraceError`] naming the line and field of the first bad record.
pub fn parse(format: TraceFormat, text: &str) -> Result<super::Workload, TraceError> {
    match format {
        TraceFormat::Mooncake => mooncake::parse(text),
        TraceFormat::Azure => azure::parse(text),
    }
}
