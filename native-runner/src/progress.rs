//! The CLI's one progress bar: on stderr, drawn only once a run has taken a second (short runs
//! print nothing extra), never on stdout.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A hidden bar counting `what` (e.g. "policies", "sweep points"), with `{msg}` after the count
/// when the caller sets one; it shows itself after a second unless finished by then.
#[must_use]
pub fn bar(what: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{{spinner}} {{elapsed:>3}} [{{bar:30}}] {{pos}}/{{len}} {what}{{msg}}"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    let shown = bar.clone();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(1));
        if !shown.is_finished() {
            shown.set_draw_target(ProgressDrawTarget::stderr());
            shown.enable_steady_tick(std::time::Duration::from_millis(120));
        }
    });
    bar
}

/// Moves `bar` to `done` of `total`, the `progress(done, total)` callback of the core's runs.
pub fn update(bar: &ProgressBar, done: usize, total: usize) {
    bar.set_length(total as u64);
    bar.set_position(done as u64);
}
