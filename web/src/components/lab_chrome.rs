//! Pieces every lab page shows around its form: the banner for a link that could not be
//! opened, and the preset menu.

use bubblelab_core::{presets, Scenario};
use web_sys::HtmlSelectElement;
use yew::prelude::*;

/// Properties of [`LinkErrorBanner`].
#[derive(Properties, PartialEq)]
pub struct LinkErrorBannerProps {
    /// Why the link could not be opened, if it could not.
    pub message: Option<String>,
}

/// Explains a broken or tampered share link; the page shows its default scenario below.
#[function_component(LinkErrorBanner)]
pub fn link_error_banner(props: &LinkErrorBannerProps) -> Html {
    match &props.message {
        Some(message) => html! {
            <div class="banner error" id="link-error" role="alert">
                <strong>{ "This link could not be opened. " }</strong>{ message.clone() }
                { " Showing the default scenario instead." }
            </div>
        },
        None => html! {},
    }
}

/// Properties of [`PresetSelect`].
#[derive(Properties, PartialEq)]
pub struct PresetSelectProps {
    /// The lab whose presets are listed.
    pub lab: AttrValue,
    /// The scenario on screen (JSON), to name its preset when it is one unchanged.
    #[prop_or_default]
    pub shown: Option<AttrValue>,
    /// Called with the chosen preset's id and scenario.
    pub on_pick: Callback<(&'static str, Scenario)>,
}

/// The menu of a lab's presets (`select#preset`, options valued by preset id).
#[function_component(PresetSelect)]
pub fn preset_select(props: &PresetSelectProps) -> Html {
    let onchange = {
        let on_pick = props.on_pick.clone();
        Callback::from(move |e: Event| {
            let id = e.target_unchecked_into::<HtmlSelectElement>().value();
            if let Some(preset) = presets::find(&id) {
                if let Ok(scenario) = preset.scenario() {
                    on_pick.emit((preset.id, scenario));
                }
            }
        })
    };
    let matching = use_memo((props.lab.clone(), props.shown.clone()), |(lab, shown)| {
        let shown = Scenario::from_json(shown.as_ref()?).ok()?;
        presets::for_lab(lab)
            .find(|p| p.scenario().ok().as_ref() == Some(&shown))
            .map(|p| p.id)
    });
    // The preset equal to the scenario on screen, if one is.
    let selected = *matching;
    // The menu's value (a property: a `selected` attribute does not move a menu the user has
    // touched) follows the preset chosen, else the scenario on screen; while nothing is on
    // screen yet, it is left alone.
    let menu = use_node_ref();
    {
        let menu = menu.clone();
        let target = selected.or(props.shown.is_some().then_some(""));
        use_effect_with(target, move |target| {
            if let (Some(target), Some(menu)) = (target, menu.cast::<HtmlSelectElement>()) {
                menu.set_value(target);
            }
            || ()
        });
    }
    html! {
        <div class="field">
            <label for="preset">{ "Preset" }</label>
            <select id="preset" ref={menu} {onchange}>
                <option value="">{ "— custom / choose a preset —" }</option>
                { for presets::for_lab(&props.lab).map(|p| html! {
                    <option value={p.id}>{ p.title }</option>
                }) }
            </select>
        </div>
    }
}

/// Properties of [`Controls`].
#[derive(Properties, PartialEq)]
pub struct ControlsProps {
    /// The form's presets, fields and uploads.
    pub children: Html,
}

/// Widest screen, CSS px, on which the form starts folded (a phone: the picture and the
/// findings come first, the form follows them, folded until asked for).
const PHONE_MAX_PX: f64 = 900.0;

/// A lab's form (`form.controls`): its fields fold away behind "Scenario settings", open on a
/// wide screen and folded on a phone.
#[function_component(Controls)]
pub fn controls(props: &ControlsProps) -> Html {
    let open = use_state(|| {
        gloo::utils::window()
            .inner_width()
            .ok()
            .and_then(|w| w.as_f64())
            .is_none_or(|w| w > PHONE_MAX_PX)
    });
    html! {
        <form class="controls" onsubmit={Callback::from(|e: SubmitEvent| e.prevent_default())}>
            <details class="fold" open={*open}>
                <summary>{ "Scenario settings" }</summary>
                { props.children.clone() }
            </details>
        </form>
    }
}
