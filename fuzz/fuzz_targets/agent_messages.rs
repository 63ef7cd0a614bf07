//! The agent protocol's reader, on whatever arrives on the control channel: the coordinator reads agents'
//! messages (a dial-back connection may come from anyone), an agent reads the coordinator's.
//!
//! Input: the bytes of the channel, read first as an agent's messages, then as the coordinator's. Every
//! message read must write back to a line that reads the same; an agent's seconds and totals are merged as the
//! coordinator merges them, so that a hostile histogram or count reaches the merge.
#![no_main]

use std::io::BufReader;

use libfuzzer_sys::fuzz_target;
use shootout_agents::frame;
use shootout_agents::protocol::{FromAgent, ToAgent};
use shootout_engine::Merge;

fuzz_target!(|data: &[u8]| {
    let mut merge = Merge::new(2);
    let mut input = BufReader::new(data);
    while let Ok(Some(message)) = frame::read::<_, FromAgent>(&mut input, "agent 1") {
        round_trip(&message);
        match message {
            FromAgent::Second(interval) => merge.add_second(0, interval),
            FromAgent::Totals(totals) => merge.add_totals(0, "fuzz", &totals),
            _ => {}
        }
    }
    merge.flush(&mut |_| {});
    let mut input = BufReader::new(data);
    while let Ok(Some(message)) = frame::read::<_, ToAgent>(&mut input, "the coordinator") {
        round_trip(&message);
    }
});

/// Writes `message` as the protocol does and reads it back: the line must read, and write again to itself.
fn round_trip<T: serde::Serialize + serde::de::DeserializeOwned>(message: &T) {
    let mut line = Vec::new();
    frame::write(&mut line, message).expect("a message read writes back");
    let again: T = frame::read(&mut line.as_slice(), "itself").expect("reads back").expect("one message");
    let mut twice = Vec::new();
    frame::write(&mut twice, &again).expect("writes again");
    assert_eq!(String::from_utf8_lossy(&line), String::from_utf8_lossy(&twice), "written, read and written again");
}
