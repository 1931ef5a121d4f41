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
