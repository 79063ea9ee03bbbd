use std::ffi::OsString;
use std::time::Duration;

use super::args::*;
use crate::net::endpoint::Host;

fn parsed(args: &[&str]) -> Result<WaitForItPlan, Option<String>> {
    parse(args.iter().map(OsString::from).collect())
}

fn planned(args: &[&str]) -> WaitForItPlan {
    parsed(args).unwrap_or_else(|complaint| panic!("{args:?}: {complaint:?}"))
}

const MISSING: &str = "Error: you need to provide a host and port to test.";

#[test]
fn host_and_port_in_every_form() {
    for args in [
        &["db:5432"][..],
        &["-h", "db", "-p", "5432"],
        &["--host=db", "--port=5432"],
        &["-p", "5432", "--host=db"],
    ] {
        let plan = planned(args);
        assert_eq!((plan.host.as_str(), plan.port.as_str()), ("db", "5432"));
        assert_eq!(plan.timeout, "15");
        assert!(!plan.strict && !plan.quiet && !plan.child && plan.command.is_empty());
    }
}

#[test]
fn a_word_with_a_colon_is_always_host_and_port() {
    let plan = planned(&["-h", "::1", "-p", "80"]);
    assert_eq!((plan.host.as_str(), plan.port.as_str()), ("::1", "80"));
    let plan = planned(&["--host=a:b", "-p", "1"]);
    assert_eq!((plan.host.as_str(), plan.port.as_str()), ("--host=a", "1"));
    let plan = planned(&["a:b:c"]);
    assert_eq!((plan.host.as_str(), plan.port.as_str()), ("a", "b"));
    let plan = planned(&["http://db:80"]);
    assert_eq!((plan.host.as_str(), plan.port.as_str()), ("http", "//db"));
}

#[test]
fn flags_timeout_and_command() {
    let plan = planned(&["-q", "-s", "-t", "3", "db:1", "--", "echo", "a:b", "--"]);
    assert!(plan.quiet && plan.strict);
    assert_eq!(plan.timeout, "3");
    assert_eq!(plan.command, ["echo", "a:b", "--"]);
    let plan = planned(&["--quiet", "--strict", "--timeout=0", "--child", "db:1"]);
    assert!(plan.quiet && plan.strict && plan.child);
    assert_eq!(plan.timeout, "0");
}

#[test]
fn an_empty_value_ends_the_argument_loop() {
    let plan = planned(&["db:1", "-t", "", "--", "echo"]);
    assert_eq!(plan.timeout, "15");
    assert!(plan.command.is_empty());
    assert_eq!(planned(&["db:1", "-t"]).timeout, "15");
    assert_eq!(planned(&["db:1", "--timeout="]).timeout, "15");
    assert_eq!(parsed(&["db:1", "-h"]), Err(Some(MISSING.into())));
}

#[test]
fn timeouts_as_bash_and_timeout_read_them() {
    let after = |s| Deadline::After(Duration::from_secs(s));
    assert_eq!(deadline("15"), after(15));
    assert_eq!(deadline("+2"), after(2));
    assert_eq!(deadline("010"), after(10));
    assert_eq!(deadline("0"), Deadline::Never);
    assert_eq!(deadline("000"), Deadline::Never);
    assert_eq!(deadline("-1"), Deadline::Never);
    for text in ["1.5", "2s", "08", "abc", " 5", "", "-", "0x10"] {
        assert_eq!(deadline(text), Deadline::Unreadable, "{text:?}");
    }
    assert_eq!(deadline("99999999999999999999999"), after(u64::MAX));
}

#[test]
fn ports_as_getaddrinfo_reads_them() {
    assert_eq!(port_number("80"), Ok(80));
    assert_eq!(port_number("080"), Ok(80));
    assert_eq!(port_number("+80"), Ok(80));
    assert_eq!(port_number(" 80"), Ok(80));
    assert_eq!(port_number("65616"), Ok(80));
    assert_eq!(port_number("-1"), Ok(65535));
    assert!(port_number("80x")
        .unwrap_err()
        .contains("unknown TCP service"));
    let services = "# comment\nhttp\t80/tcp\twww # web\nhttp\t80/udp\ndns 53/udp domain\n";
    assert_eq!(service_port(services, "http"), Some(80));
    assert_eq!(service_port(services, "www"), Some(80));
    assert_eq!(service_port(services, "dns"), None);
    assert_eq!(service_port(services, "web"), None);
}

#[test]
fn endpoints_never_refuse_a_host() {
    let ip = endpoint("127.0.0.1", "5").unwrap();
    assert_eq!(ip.host, Host::Ip("127.0.0.1".parse().unwrap()));
    assert_eq!(ip.port, 5);
    let v6 = endpoint("::1", "5").unwrap();
    assert_eq!(v6.host, Host::Ip("::1".parse().unwrap()));
    let odd = endpoint("not a host", "5").unwrap();
    assert_eq!(odd.host, Host::Name("not a host".into()));
    assert!(endpoint("h", "0").unwrap_err().contains("port 0"));
    assert!(endpoint("h", "65536").unwrap_err().contains("port 0"));
}
