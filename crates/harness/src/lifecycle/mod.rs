//! The lives of what a suite starts: [`server`] (a process, its ready probe over its protocol and its
//! verification, both through the engine's blocking [`probe`](shootout_engine::probe)), [`service`] (a database:
//! its ready command or port, its reset), and [`services`], the services of a run, started when a server first
//! needs them, reset before each server, stopped at the end.

pub mod server;
pub mod service;
pub mod services;
