//! Scenario form fields bound to one Scenario field each, showing validation messages inline.
//!
//! A field reports the text the user typed; the page turns it into a scenario and validates
//! it, and passes back the message for this field's path, if any. Text that is not a number
//! stays in the box with its message, so nothing the user typed is lost.

use bubblelab_core::Scenario;
use web_sys::HtmlInputElement;
use yew::prelude::*;

/// Properties of [`NumberField`].
#[derive(Properties, PartialEq)]
pub struct NumberFieldProps {
    /// Scenario field path, e.g. `pipeline.micro_batches`; the element id is [`field_id`]'s.
    pub path: AttrValue,
    /// Label with unit.
    pub label: AttrValue,
    /// Current text.
    pub value: AttrValue,
    /// Help text shown on hover.
    #[prop_or_default]
    pub help: AttrValue,
    /// Smallest value for the spinner.
    #[prop_or_default]
    pub min: Option<f64>,
    /// Largest value for the spinner.
    #[prop_or_default]
    pub max: Option<f64>,
    /// Spinner step.
    #[prop_or(AttrValue::Static("any"))]
    pub step: AttrValue,
    /// The input's type: `number` (default), or `text` for list fields such as `cap-8, concur`.
    #[prop_or(AttrValue::Static("number"))]
    pub input_type: AttrValue,
    /// Whether to show a slider beside the box.
    #[prop_or_default]
    pub slider: bool,
    /// Validation message for this field, if any.
    #[prop_or_default]
    pub error: Option<String>,
    /// Called with the new text on every change.
    pub on_change: Callback<String>,
}

/// The element id of field `path` of lab `lab`: `field-<last part>` (`micro_batches` →
/// `field-micro_batches`), or, where two rows of the lab's field table end in the same part,
/// `field-<path, dots as dashes>` (`systems.pos.replay_s` → `field-systems-pos-replay_s`), so
/// that no two fields of a page share an id.
#[must_use]
pub fn field_id(lab: &str, path: &str) -> String {
    let last = |p: &str| p.rsplit('.').next().unwrap_or(p).to_string();
    let part = last(path);
    let shared = Scenario::fields_of(lab)
        .iter()
        .filter(|f| last(f.path) == part)
        .count()
        > 1;
    if shared {
        format!("field-{}", path.replace('.', "-"))
    } else {
        format!("field-{part}")
    }
}

/// A number box (and optional slider) with its inline error.
#[function_component(NumberField)]
pub fn number_field(props: &NumberFieldProps) -> Html {
    let (lab, path) = props.path.split_once('.').unwrap_or(("", &props.path));
    let id = field_id(lab, path);
    let oninput = {
        let cb = props.on_change.clone();
        Callback::from(move |e: InputEvent| {
            cb.emit(e.target_unchecked_into::<HtmlInputElement>().value());
        })
    };
    let slider_input = oninput.clone();
    let fmt = |v: Option<f64>| v.map(|v| AttrValue::from(v.to_string()));
    html! {
        <div class={classes!("field", props.error.as_ref().map(|_| "invalid"))} title={props.help.clone()}>
            <label for={id.clone()}>{ props.label.clone() }</label>
            <div class="inputs">
                <input id={id.clone()} type={props.input_type.clone()} value={props.value.clone()} step={props.step.clone()}
                    min={fmt(props.min)} max={fmt(props.max)} {oninput} />
                if props.slider {
                    <input type="range" aria-label={props.label.clone()} value={props.value.clone()}
                        min={fmt(props.min)} max={fmt(props.max)} step={props.step.clone()} oninput={slider_input} />
                }
            </div>
            if let Some(message) = &props.error {
                <p class="field-error" data-field={props.path.clone()}>{ message.clone() }</p>
            }
        </div>
    }
}

/// Properties of [`CheckboxGroup`].
#[derive(Properties, PartialEq)]
pub struct CheckboxGroupProps {
    /// Scenario field path.
    pub path: AttrValue,
    /// Group label.
    pub label: AttrValue,
    /// (id, label, checked) per option; element ids are `<last path part>-<id>`.
    pub options: Vec<(String, String, bool)>,
    /// Validation message for this field (or one of its entries), if any.
    #[prop_or_default]
    pub error: Option<String>,
    /// Called with (option id, checked).
    pub on_toggle: Callback<(String, bool)>,
}

/// A group of checkboxes bound to a list field.
#[function_component(CheckboxGroup)]
pub fn checkbox_group(props: &CheckboxGroupProps) -> Html {
    let prefix = props.path.rsplit('.').next().unwrap_or("").to_string();
    html! {
        <fieldset class={classes!("field", "checks", props.error.as_ref().map(|_| "invalid"))}>
            <legend>{ props.label.clone() }</legend>
            { for props.options.iter().map(|(id, label, checked)| {
                let element_id = format!("{prefix}-{id}");
                let cb = props.on_toggle.clone();
                let option = id.clone();
                let onchange = Callback::from(move |e: Event| {
                    cb.emit((option.clone(), e.target_unchecked_into::<HtmlInputElement>().checked()));
                });
                html! {
                    <label for={element_id.clone()}>
                        <input id={element_id} type="checkbox" checked={*checked} {onchange} />
                        { label.clone() }
                    </label>
                }
            }) }
            if let Some(message) = &props.error {
                <p class="field-error" data-field={props.path.clone()}>{ message.clone() }</p>
            }
        </fieldset>
    }
}
