//! Tours: predict, run, compare with the run, read why. `#/tours` lists the shipped tours and
//! opens a teacher's tour file; `#/tours/<id>` walks a shipped tour, `#/tours?t=<payload>` a
//! shared one ([`bubblelab_core::share::tour_fragment`]). Each step asks a question, takes the
//! learner's prediction (a number in the metric's unit, or one of the options), runs the step's
//! scenario in the worker, then shows the prediction beside the run's answer, the explanation
//! and the Report.

use std::rc::Rc;

use bubblelab_core::report::Report;
use bubblelab_core::share;
use bubblelab_core::tour::{self, Answer, Guess, Measured, Tour};
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

use crate::components::report_view::ReportView;
use crate::components::timeline::Shared;
use crate::worker::client::{use_worker, Outcome, RunRequest, RunStatus};

/// Which tour the route opens.
#[derive(Clone, Debug, PartialEq)]
pub enum Opened {
    /// The list of tours.
    List,
    /// A shipped tour, by id.
    Builtin(String),
    /// A tour link's `t=` payload.
    Link(String),
}

/// Properties of [`Tours`].
#[derive(Properties, PartialEq)]
pub struct ToursProps {
    /// What the route opens.
    pub opened: Opened,
}

/// The tours page: the list, or one tour walked step by step.
#[function_component(Tours)]
pub fn tours(props: &ToursProps) -> Html {
    let loaded: Result<Option<(String, Tour)>, String> = match &props.opened {
        Opened::List => Ok(None),
        Opened::Builtin(id) => match tour::find(id) {
            Some(t) => t
                .tour()
                .map(|tour| Some((t.json.to_string(), tour)))
                .map_err(|e| format!("the tour `{id}` is broken: {e}")),
            None => Err(format!("no tour called `{id}`")),
        },
        Opened::Link(payload) => share::decode_tour(payload)
            .map(Some)
            .map_err(|e| e.to_string()),
    };
    match loaded {
        Ok(Some((json, tour))) => {
            // Keyed by the file, so another tour starts at its first step.
            let key = json.clone();
            html! { <TourWalk {key} json={AttrValue::from(json)} tour={Rc::new(tour)} /> }
        }
        Ok(None) => html! { <TourList error={None::<String>} /> },
        Err(message) => html! { <TourList error={Some(message)} /> },
    }
}

/// Properties of [`TourList`].
#[derive(Properties, PartialEq)]
struct TourListProps {
    /// Why the tour asked for could not be opened.
    error: Option<String>,
}

/// The shipped tours by lab, and a file input for a tour of one's own.
#[function_component(TourList)]
fn tour_list(props: &TourListProps) -> Html {
    let file_error = use_state(|| None::<String>);
    let reader = use_mut_ref(|| None::<gloo::file::callbacks::FileReader>);
    let on_file = {
        let (file_error, reader) = (file_error.clone(), reader.clone());
        Callback::from(move |e: Event| {
            let input: HtmlInputElement = e.target_unchecked_into();
            let Some(file) = input.files().and_then(|f| f.get(0)) else {
                return;
            };
            let name = file.name();
            let file_error = file_error.clone();
            let task = gloo::file::callbacks::read_as_text(&file.into(), move |text| {
                match text
                    .map_err(|e| e.to_string())
                    .and_then(|t| Tour::from_json(&t).map(|_| t).map_err(|e| e.to_string()))
                {
                    Ok(text) => crate::browser::set_hash(&share::tour_fragment(&text)),
                    Err(message) => file_error.set(Some(format!("{name}: {message}"))),
                }
            });
            *reader.borrow_mut() = Some(task);
        })
    };
    let tours: Vec<(&str, Tour)> = tour::all()
        .filter_map(|t| t.tour().ok().map(|tour| (t.id, tour)))
        .collect();
    html! {
        <section class="page" id="tours">
            <h1>{ "Tours: predict, then run" }</h1>
            <p class="lede">{ "Each tour walks one lab's key idea from the simplest case to its source's headline. \
                At every step you predict a number or a winner, run the scenario, and compare your \
                prediction with the run before the explanation opens." }</p>
            if let Some(message) = &props.error {
                <div class="banner error" role="alert">{ message }</div>
            }
            <ul class="tour-list">
                { for tours.iter().map(|(id, t)| html! {
                    <li class="tour-card" data-tour={*id}>
                        <h2><a href={format!("#/tours/{id}")}>{ &t.title }</a></h2>
                        <p class="muted">{ format!("{} lab · {} steps", t.lab, t.steps.len()) }</p>
                        <p>{ &t.summary }</p>
                    </li>
                }) }
            </ul>
            <h2>{ "A tour of your own" }</h2>
            <p>{ "A tour is a JSON file: a lab, then steps, each a preset or scenario (or the step before, \
                edited with PATH=VALUE assignments), a question, the answer check and the explanation. \
                The files in static/tours/ are examples; docs/TOURS.md describes every field. Open one \
                here to walk it and get a link to share it." }</p>
            <label for="tour-file">{ "Open a tour file " }</label>
            <input type="file" id="tour-file" accept=".json,application/json" onchange={on_file} />
            if let Some(message) = &*file_error {
                <div class="banner error" role="alert" id="tour-file-error">{ message }</div>
            }
        </section>
    }
}

/// Properties of [`TourWalk`].
#[derive(Properties, PartialEq)]
struct TourWalkProps {
    /// The tour file's text (for its share link).
    json: AttrValue,
    /// The tour.
    tour: Rc<Tour>,
}

/// One run of a step: the Report, and the answer it gave (or why it gave none).
#[derive(Clone, PartialEq)]
struct StepRun {
    /// The step it ran (a run that ends after the learner moved on is not shown).
    step: usize,
    report: Shared<Report>,
    measured: Result<Measured, String>,
    guess: Option<Guess>,
}

/// A tour, one step at a time.
#[function_component(TourWalk)]
fn tour_walk(props: &TourWalkProps) -> Html {
    let index = use_state(|| 0_usize);
    let guess_text = use_state(String::new);
    let run = use_state(|| None::<StepRun>);
    let error = use_state(|| None::<String>);
    let worker = use_worker();
    let tour = props.tour.clone();
    let i = *index;
    let step = &tour.steps[i];
    let go_to = {
        let (index, guess_text, run, error) = (
            index.clone(),
            guess_text.clone(),
            run.clone(),
            error.clone(),
        );
        move |k: usize| {
            let (index, guess_text, run, error) = (
                index.clone(),
                guess_text.clone(),
                run.clone(),
                error.clone(),
            );
            Callback::from(move |_: MouseEvent| {
                index.set(k);
                guess_text.set(String::new());
                run.set(None);
                error.set(None);
            })
        }
    };
    let on_run = {
        let (tour, worker, run, error, guess_text) = (
            tour.clone(),
            worker.clone(),
            run.clone(),
            error.clone(),
            guess_text.clone(),
        );
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let step = &tour.steps[i];
            let guess = match parse_guess(&step.answer, &guess_text) {
                Ok(g) => g,
                Err(message) => {
                    error.set(Some(message));
                    return;
                }
            };
            error.set(None);
            let (tour, run, error) = (tour.clone(), run.clone(), error.clone());
            worker.run(
                RunRequest::run(&tour.steps[i].scenario, Vec::new()),
                Callback::from(move |outcome: Outcome| {
                    match outcome.map(crate::worker::Output::into_report) {
                        Ok(Some(report)) => {
                            let measured =
                                tour.steps[i].measure(i, &report).map_err(|e| e.to_string());
                            run.set(Some(StepRun {
                                step: i,
                                report: Shared(Rc::new(report)),
                                measured,
                                guess: guess.clone(),
                            }));
                        }
                        Ok(None) => error.set(Some("the worker answered without a Report".into())),
                        Err(failure) => error.set(Some(failure.to_string())),
                    }
                }),
            );
        })
    };
    let on_number = {
        let guess_text = guess_text.clone();
        Callback::from(move |e: InputEvent| {
            let input: HtmlInputElement = e.target_unchecked_into();
            guess_text.set(input.value());
        })
    };
    let on_choice = {
        let guess_text = guess_text.clone();
        Callback::from(move |e: Event| {
            let select: HtmlSelectElement = e.target_unchecked_into();
            guess_text.set(select.value());
        })
    };
    let input = match &step.answer {
        Answer::Number { tolerance, .. } => html! {
            <>
                <label for="tour-guess">{ format!("Your prediction (a run within ±{tolerance} counts as right; leave empty to just run)") }</label>
                <input id="tour-guess" type="text" inputmode="decimal" value={(*guess_text).clone()} oninput={on_number} />
            </>
        },
        Answer::Choice { options, .. } => html! {
            <>
                <label for="tour-guess">{ "Your prediction" }</label>
                <select id="tour-guess" onchange={on_choice}>
                    <option value="" selected={guess_text.is_empty()}>{ "(no prediction)" }</option>
                    { for options.iter().map(|(label, _)| html! {
                        <option value={label.clone()} selected={*guess_text == *label}>{ label }</option>
                    }) }
                </select>
            </>
        },
    };
    let steps_nav = html! {
        <ol class="tour-steps" aria-label="Steps">
            { for tour.steps.iter().enumerate().map(|(k, s)| html! {
                <li>
                    <button type="button" class="tour-step-link" aria-current={(k == i).then_some("step")} onclick={go_to(k)}>
                        { format!("{}. {}", k + 1, s.title) }
                    </button>
                </li>
            }) }
        </ol>
    };
    let result = (*run)
        .clone()
        .filter(|r| r.step == i)
        .map(|r| step_result(step, &r));
    html! {
        <section class="page" id="tour" data-step={i.to_string()}>
            <p><a href="#/tours">{ "← All tours" }</a></p>
            <h1>{ &tour.title }</h1>
            <p class="lede">{ &tour.summary }</p>
            { steps_nav }
            <form class="tour-question" onsubmit={on_run} aria-labelledby="tour-step-title">
                <h2 id="tour-step-title">{ format!("Step {} of {}: {}", i + 1, tour.steps.len(), step.title) }</h2>
                if !step.set.is_empty() {
                    <p class="muted">{ format!("This step changes: {}", step.set.join(", ")) }</p>
                }
                <p class="question">{ &step.question }</p>
                { input }
                <button type="submit" id="tour-run">{ "Run" }</button>
                <a href={share::fragment(&step.scenario)}>{ "Open this step in the lab" }</a>
            </form>
            <RunStatus worker={worker.clone()} unit="runs" error={(*error).clone()} />
            { result.unwrap_or_default() }
            <p class="tour-nav">
                if i > 0 {
                    <button type="button" id="tour-prev" onclick={go_to(i - 1)}>{ "← Previous step" }</button>
                }
                if i + 1 < tour.steps.len() {
                    <button type="button" id="tour-next" onclick={go_to(i + 1)}>{ "Next step →" }</button>
                }
                <a id="tour-link" href={share::tour_fragment(&props.json)}>{ "Link to this tour" }</a>
            </p>
        </section>
    }
}

/// The learner's prediction read from the input; `None` when left empty.
fn parse_guess(answer: &Answer, text: &str) -> Result<Option<Guess>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    match answer {
        Answer::Number { .. } => text
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .map(|v| Some(Guess::Number(v)))
            .ok_or_else(|| format!("your prediction `{text}` is not a number (e.g. 0.25)")),
        Answer::Choice { .. } => Ok(Some(Guess::Choice(text.to_string()))),
    }
}

/// The run's answer beside the prediction, the explanation and the Report.
fn step_result(step: &tour::Step, run: &StepRun) -> Html {
    let verdict = match (&run.measured, &run.guess) {
        (Err(message), _) => html! { <div class="banner error" role="alert">{ message }</div> },
        (Ok(measured), Some(guess)) => {
            let right = step.judge(guess, measured);
            html! {
                <p class={classes!("verdict", if right { "right" } else { "wrong" })} id="tour-verdict" data-right={right.to_string()}>
                    { format!("{} You predicted {guess}; the run gives {}.", if right { "✓ Right." } else { "✗ Not quite." }, measured.display()) }
                </p>
            }
        }
        (Ok(measured), None) => html! {
            <p class="verdict" id="tour-verdict">{ format!("The run gives {}.", measured.display()) }</p>
        },
    };
    let values = match &run.measured {
        Ok(Measured::Choice { values, .. }) => html! {
            <ul class="tour-values">
                { for values.iter().map(|(label, v)| html! {
                    <li>{ format!("{label}: {}", bubblelab_core::report::format_number(*v)) }</li>
                }) }
            </ul>
        },
        _ => html! {},
    };
    html! {
        <section class="tour-answer" aria-live="polite" aria-label="The run's answer">
            { verdict }
            { values }
            <p class="explanation" id="tour-explanation">{ step.explanation() }</p>
            <ReportView report={run.report.clone()} />
        </section>
    }
}
