//! The playground's entry point: mounts the Yew app on the page's `<body>`.

#[cfg(target_arch = "wasm32")]
fn main() {
    bubblelab_web::start();
}

/// The page only runs in a browser; on the host this binary does nothing.
#[cfg(not(target_arch = "wasm32"))]
fn main() {}
