//! Fuzzes `Target::parse`: never a panic, a rejection is one line, an accepted target is shown
//! as written (password hidden) and reads back the same.

#![no_main]

mod common;

use common::assert_one_line;
use libfuzzer_sys::fuzz_target;
use readygate::{redact_userinfo, Target};

fuzz_target!(|text: &str| {
    match Target::parse(text) {
        Err(message) => assert_one_line(&message),
        Ok(parsed) => {
            let shown = parsed.to_string();
            assert_eq!(shown, redact_userinfo(text));
            if !text.contains('@') {
                assert_eq!(Target::parse(&shown), Ok(parsed));
            }
        }
    }
});
