//! Pieces every lab page uses.

pub mod axis;
pub mod canvas;
pub mod chart;
pub mod compare;
pub mod export;
pub mod fields;
pub mod lab_chrome;
pub mod lab_page;
pub mod params_form;
pub mod report_view;
pub mod timeline;
pub mod upload;
