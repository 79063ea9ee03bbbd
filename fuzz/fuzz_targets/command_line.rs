//! Fuzzes the option parsers and the whole clap command line: words separated by NUL bytes
//! become an argument vector. Never a panic; every value parser's rejection is one line.

#![no_main]

mod common;

use clap::Parser;
use common::assert_one_line;
use libfuzzer_sys::fuzz_target;
use readygate::{cli, duration, header, matcher, status};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let words: Vec<&str> = text.split('\0').collect();
    for word in &words {
        for result in [
            duration::parse_duration(word).map(drop),
            status::StatusRanges::parse(word).map(drop),
            header::Header::parse(word).map(drop),
            matcher::Matcher::regex(word).map(drop),
        ] {
            if let Err(message) = result {
                assert_one_line(&message);
            }
        }
    }
    let args = std::iter::once("readygate").chain(words.iter().copied());
    if let Err(err) = cli::Cli::try_parse_from(args) {
        let _ = err.to_string();
    }
});
