//! Running a suite: [`runner`] loops over repeats, servers and levels with progress and Ctrl-C, and shares the
//! pieces of a server's turn (start, one trial, stop) with [`search`], each server's capacity search; [`trial`]
//! is the load of one level while the trees are sampled; [`settle`] waits for a server to come back to rest
//! between a search's probes.

pub mod runner;
pub mod search;
pub mod settle;
pub mod trial;
