//! A size-capped file upload: reads the chosen files and hands them over as (name, bytes)
//! pairs, or says which file was refused and why. [`texts`] turns them into UTF-8 text with an
//! error naming the file and the byte.

use std::cell::RefCell;
use std::rc::Rc;

use gloo::file::callbacks::FileReader;
use gloo::file::File;
use web_sys::HtmlInputElement;
use yew::prelude::*;

/// A file's name and its bytes.
type NamedBytes = (String, Vec<u8>);

/// The files as UTF-8 text, or an error naming the first file that is not text.
///
/// # Errors
/// `<file>: not UTF-8 text (byte N)`.
pub fn texts(files: Vec<NamedBytes>) -> Result<Vec<(String, String)>, String> {
    files
        .into_iter()
        .map(|(name, bytes)| match String::from_utf8(bytes) {
            Ok(text) => Ok((name, text)),
            Err(e) => Err(format!(
                "{name}: not UTF-8 text (byte {})",
                e.utf8_error().valid_up_to()
            )),
        })
        .collect()
}

/// Properties of [`FileUpload`].
#[derive(Properties, PartialEq)]
pub struct FileUploadProps {
    /// Element id of the `<input type=file>`.
    pub id: AttrValue,
    /// Label.
    pub label: AttrValue,
    /// Whether several files may be chosen.
    #[prop_or_default]
    pub multiple: bool,
    /// `accept` attribute, e.g. `.json`.
    #[prop_or_default]
    pub accept: AttrValue,
    /// Largest file accepted, bytes.
    pub max_bytes: u64,
    /// Most files accepted at once.
    #[prop_or(32)]
    pub max_files: u32,
    /// Called with every file's (name, bytes) once all are read.
    pub on_load: Callback<Vec<NamedBytes>>,
    /// Called with a message when a file is refused.
    pub on_error: Callback<String>,
}

/// A file input that reads files under a size cap.
#[function_component(FileUpload)]
pub fn file_upload(props: &FileUploadProps) -> Html {
    // Readers must stay alive until they finish.
    let readers = use_mut_ref(Vec::<FileReader>::new);
    let onchange = {
        let on_load = props.on_load.clone();
        let on_error = props.on_error.clone();
        let max_bytes = props.max_bytes;
        let max_files = props.max_files;
        Callback::from(move |e: Event| {
            let input: HtmlInputElement = e.target_unchecked_into();
            let Some(list) = input.files() else { return };
            let files: Vec<File> = (0..list.length())
                .filter_map(|i| list.get(i))
                .map(File::from)
                .collect();
            input.set_value("");
            if files.is_empty() {
                return;
            }
            if files.len() > max_files as usize {
                on_error.emit(format!(
                    "{} files chosen; at most {max_files} at once",
                    files.len()
                ));
                return;
            }
            if let Some(big) = files.iter().find(|f| f.size() > max_bytes) {
                on_error.emit(format!(
                    "{}: {} bytes is over the {max_bytes}-byte limit",
                    big.name(),
                    big.size()
                ));
                return;
            }
            let total = files.len();
            let results: Rc<RefCell<Vec<Option<NamedBytes>>>> =
                Rc::new(RefCell::new(vec![None; total]));
            let failed = Rc::new(RefCell::new(false));
            let mut new_readers = Vec::new();
            for (i, file) in files.into_iter().enumerate() {
                let name = file.name();
                let results = results.clone();
                let failed = failed.clone();
                let on_load = on_load.clone();
                let on_error = on_error.clone();
                new_readers.push(gloo::file::callbacks::read_as_bytes(&file, move |read| {
                    if *failed.borrow() {
                        return;
                    }
                    match read {
                        Ok(text) => {
                            results.borrow_mut()[i] = Some((name, text));
                            if results.borrow().iter().all(Option::is_some) {
                                let all = results.borrow_mut().drain(..).flatten().collect();
                                on_load.emit(all);
                            }
                        }
                        Err(e) => {
                            *failed.borrow_mut() = true;
                            on_error.emit(format!("{name}: could not be read ({e})"));
                        }
                    }
                }));
            }
            *readers.borrow_mut() = new_readers;
        })
    };
    html! {
        <label class="upload">
            { props.label.clone() }
            <input id={props.id.clone()} type="file" multiple={props.multiple} accept={props.accept.clone()} {onchange} />
        </label>
    }
}
