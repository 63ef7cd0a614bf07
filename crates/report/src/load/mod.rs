//! One `shootout load` run, as people read it: [`summary`] computes each figure once from the result, [`text`]
//! prints the terminal summary, and [`html`] draws its page (its per-second charts of the whole seconds alone,
//! [`crate::statistics::seconds`]).

pub mod html;
pub mod summary;
pub mod text;
