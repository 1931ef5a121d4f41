//! Share links: `<base>/#/<lab>?s=<base64url(deflate(scenario JSON))>`.
//!
//! Decoding is capped (compressed text and inflated JSON), versioned through the scenario
//! format, and every failure is a [`LinkError`] with a message a page can show.

use alloc::format;
use alloc::string::{String, ToString};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

use crate::scenario::{Scenario, ScenarioError};
use crate::tour::Tour;

/// Longest `s=` payload accepted, characters of base64url (≈ 12 KiB of deflate).
pub const MAX_ENCODED_CHARS: usize = 16 * 1024;
/// Largest inflated scenario accepted, bytes.
pub const MAX_JSON_BYTES: usize = 256 * 1024;

/// Why a link could not be opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkError {
    /// The payload is longer than [`MAX_ENCODED_CHARS`].
    TooLong(usize),
    /// Not base64url; names the first bad character position.
    Base64(String),
    /// Not a deflate stream, or it inflates past [`MAX_JSON_BYTES`].
    Deflate(String),
    /// Inflated bytes are not UTF-8.
    Utf8(usize),
    /// The JSON inside is not a valid scenario.
    Scenario(ScenarioError),
    /// The JSON inside is not a valid tour ([`crate::tour`]).
    Tour(ScenarioError),
    /// The link is empty.
    Empty,
    /// A URL without a `#/<lab>?s=…` fragment (the text, shortened).
    NoFragment(String),
    /// A route without an `s=` payload (the route, shortened).
    NoScenario(String),
    /// The link's route names one lab and its scenario another.
    LabMismatch {
        /// Lab in the route.
        route: String,
        /// Lab in the scenario.
        scenario: String,
    },
}

impl core::fmt::Display for LinkError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            LinkError::TooLong(n) => write!(
                f,
                "the link's scenario is {n} characters long; links carry at most {MAX_ENCODED_CHARS}"
            ),
            LinkError::Base64(e) => write!(f, "the link's scenario is not base64url text: {e}"),
            LinkError::Deflate(e) => write!(f, "the link's scenario does not decompress: {e}"),
            LinkError::Utf8(at) => write!(f, "the link's scenario is not UTF-8 text (byte {at})"),
            LinkError::Scenario(e) => write!(f, "the link's scenario is invalid: {e}"),
            LinkError::Tour(e) => write!(f, "the link's tour is invalid: {e}"),
            LinkError::Empty => write!(f, "the link is empty"),
            LinkError::NoFragment(text) => write!(f, "`{text}` has no `#/<lab>?s=…` part"),
            LinkError::NoScenario(route) => {
                write!(f, "`{route}` carries no scenario (no `s=` after `?`)")
            }
            LinkError::LabMismatch { route, scenario } => write!(
                f,
                "the link opens the {route} lab but carries a {scenario} scenario"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for LinkError {}

/// Deflate level: the best ratio (scenarios are small; links should be short).
const LEVEL: u8 = 9;

/// The `s=` payload of a scenario.
#[must_use]
pub fn encode(scenario: &Scenario) -> String {
    deflate_text(&scenario.to_json())
}

/// Decodes an `s=` payload into a validated scenario.
///
/// # Errors
/// A [`LinkError`] saying which layer failed.
pub fn decode(payload: &str) -> Result<Scenario, LinkError> {
    Scenario::from_json(&inflate_text(payload)?).map_err(LinkError::Scenario)
}

/// The `t=` payload of a tour file's text (kept as the teacher wrote it).
#[must_use]
pub fn encode_tour(json: &str) -> String {
    deflate_text(json)
}

/// Decodes a `t=` payload into the tour file's text and the checked tour.
///
/// # Errors
/// A [`LinkError`] saying which layer failed; [`LinkError::Tour`] names the tour's field.
pub fn decode_tour(payload: &str) -> Result<(String, Tour), LinkError> {
    let text = inflate_text(payload)?;
    let tour = Tour::from_json(&text).map_err(LinkError::Tour)?;
    Ok((text, tour))
}

/// The fragment of the page that walks a tour file (`#/tours?t=…`).
#[must_use]
pub fn tour_fragment(json: &str) -> String {
    format!("#/tours?t={}", encode_tour(json))
}

/// base64url of the deflated text.
fn deflate_text(text: &str) -> String {
    URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(
        text.as_bytes(),
        LEVEL,
    ))
}

/// The text inside a payload, each layer capped and checked.
fn inflate_text(payload: &str) -> Result<String, LinkError> {
    if payload.len() > MAX_ENCODED_CHARS {
        return Err(LinkError::TooLong(payload.len()));
    }
    let compressed = URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .map_err(|e| LinkError::Base64(e.to_string()))?;
    let json = miniz_oxide::inflate::decompress_to_vec_with_limit(&compressed, MAX_JSON_BYTES)
        .map_err(|e| match e.status {
            miniz_oxide::inflate::TINFLStatus::HasMoreOutput => {
                LinkError::Deflate(format!("it inflates past {MAX_JSON_BYTES} bytes"))
            }
            _ => LinkError::Deflate("the data is cut short or corrupted".into()),
        })?;
    String::from_utf8(json).map_err(|e| LinkError::Utf8(e.utf8_error().valid_up_to()))
}

/// The URL fragment (`#/<lab>?s=…`) that opens `scenario`.
#[must_use]
pub fn fragment(scenario: &Scenario) -> String {
    format!("#/{}?s={}", scenario.lab(), encode(scenario))
}

/// A full share URL: `base` (e.g. `http://127.0.0.1:8080`) followed by `/` and the fragment.
#[must_use]
pub fn link(base: &str, scenario: &Scenario) -> String {
    format!("{}/{}", base.trim_end_matches('/'), fragment(scenario))
}

/// The fragment of a compare link: the lab on run B (`s=`) with run A pinned beside it (`a=`).
#[must_use]
pub fn compare_fragment(a: &Scenario, b: &Scenario) -> String {
    format!("{}&a={}", fragment(b), encode(a))
}

/// A parsed route: `#/` is home, `#/<lab>` a lab with its default scenario, `#/<lab>?s=…` a lab
/// with a shared scenario, `…&a=…` with a run pinned beside it to compare.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// Lab name, or empty for the home page.
    pub lab: String,
    /// The `s=` payload, if any.
    pub payload: Option<String>,
    /// The `a=` payload of a compare link's pinned run, if any.
    pub pinned: Option<String>,
    /// The `t=` payload of a tour link, if any.
    pub tour: Option<String>,
}

/// Splits a URL fragment (with or without the leading `#`) into a [`Route`].
#[must_use]
pub fn parse_fragment(fragment: &str) -> Route {
    let f = fragment.trim_start_matches('#').trim_start_matches('/');
    let (path, query) = f.split_once('?').unwrap_or((f, ""));
    let value = |key: &str| {
        query
            .split('&')
            .find_map(|kv| kv.strip_prefix(key))
            .map(ToString::to_string)
    };
    Route {
        lab: path.trim_end_matches('/').to_string(),
        payload: value("s="),
        pinned: value("a="),
        tour: value("t="),
    }
}

/// Decodes the scenario of a route, checking it belongs to the route's lab.
///
/// # Errors
/// A [`LinkError`] from [`decode`], or [`LinkError::LabMismatch`].
pub fn decode_for_lab(lab: &str, payload: &str) -> Result<Scenario, LinkError> {
    let scenario = decode(payload)?;
    if scenario.lab() != lab {
        return Err(LinkError::LabMismatch {
            route: lab.to_string(),
            scenario: scenario.lab().to_string(),
        });
    }
    Ok(scenario)
}

/// The scenario of a link as a reader pastes it: a whole URL (`…/#/<lab>?s=…`), its fragment
/// (`#/<lab>?s=…`, `/<lab>?s=…`), `s=…`, or the bare payload. With a route, the scenario must
/// be that lab's.
///
/// # Errors
/// [`LinkError::Empty`], [`LinkError::NoFragment`] for a URL without a route,
/// [`LinkError::NoScenario`] for a route without `s=`, or what [`decode_for_lab`] refuses.
pub fn decode_link(link: &str) -> Result<Scenario, LinkError> {
    let link = link.trim();
    if link.is_empty() {
        return Err(LinkError::Empty);
    }
    let route = if let Some((_, fragment)) = link.split_once('#') {
        Some(format!("#{fragment}"))
    } else if link.contains('?') {
        Some(link.to_string())
    } else if link.contains("://") {
        return Err(LinkError::NoFragment(shorten(link)));
    } else {
        None
    };
    match route {
        Some(fragment) => {
            let route = parse_fragment(&fragment);
            let payload = route
                .payload
                .ok_or_else(|| LinkError::NoScenario(shorten(&fragment)))?;
            decode_for_lab(&route.lab, &payload)
        }
        None => decode(link.strip_prefix("s=").unwrap_or(link)),
    }
}

/// The first 60 characters of `text`, for messages.
fn shorten(text: &str) -> String {
    const MAX_CHARS: usize = 60;
    if text.chars().count() <= MAX_CHARS {
        text.to_string()
    } else {
        let head: String = text.chars().take(MAX_CHARS).collect();
        format!("{head}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labs::pipeline::PipelineParams;

    #[test]
    fn a_link_decodes_from_any_of_the_forms_a_reader_pastes() {
        let s = Scenario::Pipeline(PipelineParams {
            micro_batches: 12,
            ..PipelineParams::default()
        });
        let url = link("https://example.org/bubblelab", &s);
        let payload = encode(&s);
        for form in [
            url.clone(),
            fragment(&s),
            format!("/pipeline?s={payload}"),
            format!("s={payload}"),
            format!("  {payload}\n"),
        ] {
            assert_eq!(decode_link(&form), Ok(s.clone()), "{form}");
        }
        assert_eq!(decode_link(" "), Err(LinkError::Empty));
        assert!(matches!(
            decode_link("https://example.org/"),
            Err(LinkError::NoFragment(_))
        ));
        assert!(matches!(
            decode_link("#/pipeline"),
            Err(LinkError::NoScenario(_))
        ));
        assert!(matches!(
            decode_link(&format!("#/fairness?s={payload}")),
            Err(LinkError::LabMismatch { .. })
        ));
    }

    #[test]
    fn round_trip() {
        let s = Scenario::Pipeline(PipelineParams {
            micro_batches: 12,
            ..PipelineParams::default()
        });
        assert_eq!(decode(&encode(&s)).unwrap(), s);
        let route = parse_fragment(&fragment(&s));
        assert_eq!(route.lab, "pipeline");
        assert_eq!(
            decode_for_lab("pipeline", &route.payload.unwrap()).unwrap(),
            s
        );
    }

    #[test]
    fn every_layer_fails_with_its_own_message() {
        assert!(matches!(decode("!!!"), Err(LinkError::Base64(_))));
        assert!(matches!(decode("AAAA"), Err(LinkError::Deflate(_))));
        let not_json = URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(b"{", 9));
        assert!(matches!(
            decode(&not_json),
            Err(LinkError::Scenario(ScenarioError::Syntax { .. }))
        ));
        let long = "A".repeat(MAX_ENCODED_CHARS + 1);
        assert!(matches!(decode(&long), Err(LinkError::TooLong(_))));
        let bomb = URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(
            &alloc::vec![b' '; MAX_JSON_BYTES + 10],
            9,
        ));
        assert!(bomb.len() < MAX_ENCODED_CHARS);
        assert!(matches!(decode(&bomb), Err(LinkError::Deflate(m)) if m.contains("inflates past")));
    }

    #[test]
    fn routes() {
        assert_eq!(parse_fragment("#/").lab, "");
        assert_eq!(parse_fragment("#/pipeline").payload, None);
        assert_eq!(
            parse_fragment("#/pipeline?x=1&s=abc").payload.as_deref(),
            Some("abc")
        );
    }
}
