//! One `shootout load` run, as people read it: [`summary`] computes each figure once from the result, [`text`]
//! prints the terminal summary, [`html`] draws its page, and [`seconds`] picks the whole seconds its per-second
//! charts draw.

pub mod html;
pub mod seconds;
pub mod summary;
pub mod text;
