//! The playground's one module. On the page it mounts the Yew app on `<body>`; loaded again by
//! `static/bubblelab-worker.js` in a dedicated Web Worker, it answers the page's runs instead
//! (`bubblelab_web::worker::serve`). One module for both means the browser downloads it once.

#[cfg(target_arch = "wasm32")]
fn main() {
    use wasm_bindgen::JsCast;
    if js_sys::global()
        .dyn_ref::<web_sys::DedicatedWorkerGlobalScope>()
        .is_some()
    {
        std::panic::set_hook(Box::new(|info| {
            gloo::console::error!(format!("bubblelab worker panicked: {info}"));
        }));
        bubblelab_web::worker::serve::start();
    } else {
        bubblelab_web::start();
    }
}

/// The playground only runs in a browser; on the host this binary does nothing.
#[cfg(not(target_arch = "wasm32"))]
fn main() {}
