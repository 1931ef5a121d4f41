//! The playground's Web Worker: runs the simulations the lab pages post to it
//! (`bubblelab_web::worker`), off the page's main thread.

#[cfg(target_arch = "wasm32")]
fn main() {
    std::panic::set_hook(Box::new(|info| {
        gloo::console::error!(format!("bubblelab worker panicked: {info}"));
    }));
    bubblelab_web::worker::serve::start();
}

/// The worker only runs in a browser; on the host this binary does nothing.
#[cfg(not(target_arch = "wasm32"))]
fn main() {}
