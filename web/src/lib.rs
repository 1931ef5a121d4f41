//! bubblelab-web: the Yew playground over bubblelab-core.
//!
//! * `app`: the route enum and one page per route (home, one folder per lab);
//! * `components`: pieces every lab uses (report view, canvas timeline, charts, form fields,
//!   share/export buttons, file upload);
//! * `browser`: the few browser calls (URL hash, downloads, clipboard) in one place;
//! * `worker`: the Web Worker the simulations run in, its protocol and the page's handle on it.
//!
//! Everything here is wasm32-only; the crate is empty on the host.
#![cfg(target_arch = "wasm32")]

pub mod app;
pub mod browser;
pub mod components;
pub mod worker;

pub use app::App;

/// Mounts [`App`] on `<body>` and routes panics to the console (nothing should panic; if
/// something does, the message says where).
pub fn start() {
    std::panic::set_hook(Box::new(|info| {
        gloo::console::error!(format!("bubblelab panicked: {info}"));
    }));
    yew::Renderer::<App>::new().render();
}
