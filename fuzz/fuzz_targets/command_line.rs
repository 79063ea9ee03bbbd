//! Fuzzes the option parsers and the whole clap command line: words separated by NUL bytes
//! become an argument vector. Never a panic; every value parser's rejection is one line.

#![no_main]

mod common;

use clap::Parser;
use common::assert_one_line;
use libfuzzer_sys::fuzz_target;
use readygate::{parse_duration, Cli, Header, Matcher, StatusRanges};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let words: Vec<&str> = text.split('\0').collect();
    for word in &words {
        for result in [
            parse_duration(word).map(drop),
            StatusRanges::parse(word).map(drop),
            Header::parse(word).map(drop),
            Matcher::regex(word).map(drop),
        ] {
            if let Err(message) = result {
                assert_one_line(&message);
            }
        }
    }
    let args = std::iter::once("readygate").chain(words.iter().copied());
    if let Err(err) = Cli::try_parse_from(args) {
        let _ = err.to_string();
    }
});
