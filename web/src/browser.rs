//! Browser calls used by the pages: the URL hash, downloads and the clipboard. Each returns
//! quietly on failure (a page must never crash because, say, the clipboard is unavailable).

use wasm_bindgen::JsCast;

/// The current URL fragment, including `#` (empty if none).
#[must_use]
pub fn hash() -> String {
    gloo::utils::window().location().hash().unwrap_or_default()
}

/// The page's URL up to (not including) the fragment, e.g. `http://127.0.0.1:8080/`.
#[must_use]
pub fn base_url() -> String {
    let href = gloo::utils::window().location().href().unwrap_or_default();
    match href.split_once('#') {
        Some((base, _)) => base.to_string(),
        None => href,
    }
}

/// Navigates to a fragment (fires `hashchange`, so the app switches page).
pub fn set_hash(fragment: &str) {
    let _ = gloo::utils::window().location().set_hash(fragment);
}

/// Replaces the URL fragment without a navigation or a `hashchange` event.
pub fn replace_hash(fragment: &str) {
    if let Ok(history) = gloo::utils::window().history() {
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(fragment));
    }
}

/// Offers `contents` as a file download named `filename`.
pub fn download(filename: &str, mime: &str, contents: &str) {
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(contents));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    let document = gloo::utils::document();
    if let Ok(element) = document.create_element("a") {
        if let Ok(anchor) = element.dyn_into::<web_sys::HtmlAnchorElement>() {
            anchor.set_href(&url);
            anchor.set_download(filename);
            anchor.click();
        }
    }
    // Revoke later: revoking at once can cancel the download that the click started.
    gloo::timers::callback::Timeout::new(10_000, move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    })
    .forget();
}

/// Copies text to the clipboard when the browser allows it.
pub fn copy_to_clipboard(text: &str) {
    let clipboard = gloo::utils::window().navigator().clipboard();
    let _ = clipboard.write_text(text);
}
