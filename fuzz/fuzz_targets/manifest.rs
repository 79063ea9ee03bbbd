//! Fuzzes `inject`'s reading of manifests, which come from anyone's repository: the first byte
//! picks the sidecar (none, or added native, legacy or universal), the rest is the stream (YAML
//! documents or JSON) read, injected as its annotations ask and written, as `inject` does.
//! Never a panic; an error is one line naming the document; a stream injected comes out of a
//! second injection byte for byte (injecting twice is injecting once).

#![no_main]

mod common;
mod sidecar;

use common::assert_one_line;
use libfuzzer_sys::fuzz_target;
use readygate::{inject_manifests, injection_of, Injection, SidecarMode};
use sidecar::injection;

thread_local! {
    /// No sidecar, then the sidecar in each form `inject` adds it in.
    static INJECTIONS: [Injection; 4] = [
        injection_of("example.test/readygate:1", None, SidecarMode::Native)
            .expect("an injection without a sidecar"),
        injection(SidecarMode::Native),
        injection(SidecarMode::Legacy),
        injection(SidecarMode::Universal),
    ];
}

fuzz_target!(|input: &[u8]| {
    let Some((&pick, text)) = input.split_first() else {
        return;
    };
    // inject refuses a stream that is not UTF-8 before reading it.
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    INJECTIONS.with(|injections| {
        let injection = &injections[usize::from(pick) % injections.len()];
        let once = match inject_manifests(text, injection) {
            Ok(once) => once,
            Err(message) => {
                assert_one_line(&message);
                assert!(message.starts_with("document "), "{message:?}");
                return;
            }
        };
        match inject_manifests(&once, injection) {
            Ok(twice) => assert!(twice == once, "injected again:\n{once}\nbecame\n{twice}"),
            Err(message) => panic!("the injected stream is refused: {message}\n{once}"),
        }
    });
});
