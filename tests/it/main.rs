//! readygate's integration tests: one binary, each module a user's session with the real
//! `readygate` executable against real listeners on 127.0.0.1 and real files.

mod support;

mod bad_input;
mod cli;
mod dns;
mod echoed;
mod examples;
mod expectations;
mod fanout;
mod grpc;
mod hostile;
mod hung_mount;
mod in_step;
mod install;
mod k8s;
mod k8s_bounds;
mod k8s_watch;
mod kubelet_parity;
mod lines;
mod on_exit;
mod pacing;
mod parser_properties;
mod protocols;
mod real_servers;
mod security;
mod serve;
mod serve_hostile;
mod sidecar;
mod signals;
mod stable_for;
mod static_root;
mod tls;
mod usage_names;
mod wait_for;
mod wait_for_it;
mod wrong_protocol;
