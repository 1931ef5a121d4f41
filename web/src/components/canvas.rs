//! A canvas sized for the screen: CSS size in px, backing store at the device pixel ratio.

use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

/// Sizes `canvas` to `width` × `height` CSS px (backing store at the device pixel ratio), and
/// returns its 2-D context scaled to CSS px and cleared; `None` when the browser gives none.
#[must_use]
pub fn fixed_size_context(
    canvas: &HtmlCanvasElement,
    width: f64,
    height: f64,
) -> Option<CanvasRenderingContext2d> {
    let dpr = gloo::utils::window().device_pixel_ratio().max(1.0);
    canvas.set_width((width * dpr) as u32);
    canvas.set_height((height * dpr) as u32);
    let _ = canvas.set_attribute("style", &format!("width:{width}px;height:{height}px"));
    let ctx = canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())?;
    let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    ctx.clear_rect(0.0, 0.0, width, height);
    Some(ctx)
}

/// The colours a canvas draws its text and rules in, read from the page's CSS variables
/// (`static/style.css`), so that canvases follow the dark scheme as the rest of the page does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Theme {
    /// Text (`--fg`).
    pub fg: String,
    /// Axis labels (`--tick`).
    pub tick: String,
    /// Grid rules (`--line`).
    pub line: String,
}

impl Theme {
    /// The theme in force for `element`; the light scheme's colours where a variable is unset.
    #[must_use]
    pub fn of(element: &web_sys::Element) -> Theme {
        let style = gloo::utils::window()
            .get_computed_style(element)
            .ok()
            .flatten();
        let read = |name: &str, fallback: &str| {
            style
                .as_ref()
                .and_then(|s| s.get_property_value(name).ok())
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| fallback.to_string())
        };
        Theme {
            fg: read("--fg", "#0f172a"),
            tick: read("--tick", "#475569"),
            line: read("--line", "#e2e8f0"),
        }
    }
}
