//! Answers kept for as long as their TTL allows, so a waiter polling a name asks the cluster's
//! DNS once per TTL, not on every attempt. The caps keep a change in the cluster visible soon:
//! an address is kept at most [`MAX_POSITIVE`], a "no such name" at most [`MAX_NEGATIVE`] (a
//! Service created while readygate waits is found within that).

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use super::message::{Answer, RecordType};

/// The longest an answer with addresses is kept, whatever its TTL.
pub const MAX_POSITIVE: Duration = Duration::from_secs(30);
/// The longest a negative answer (NXDOMAIN, NODATA) is kept, whatever its SOA says.
pub const MAX_NEGATIVE: Duration = Duration::from_secs(5);
/// Entries kept at most: a run asks about a few names, each with its search-list candidates
/// and two record types; beyond this the oldest go.
const CAPACITY: usize = 64;

/// The process's one cache.
pub static CACHE: Mutex<Cache> = Mutex::new(Cache::new());

/// Answers by name and record type, each with the instant it expires.
#[derive(Debug, Default)]
pub struct Cache {
    /// `(name in lower case, type, answer, expiry)`, oldest first.
    entries: Vec<(String, RecordType, Answer, Instant)>,
}

impl Cache {
    /// An empty cache.
    pub const fn new() -> Cache {
        Cache {
            entries: Vec::new(),
        }
    }

    /// The answer kept for `name` and `qtype`, if it has not expired by `now`.
    pub fn get(&mut self, name: &str, qtype: RecordType, now: Instant) -> Option<Answer> {
        self.entries.retain(|entry| entry.3 > now);
        self.entries
            .iter()
            .find(|(n, t, _, _)| *t == qtype && n.eq_ignore_ascii_case(name))
            .map(|entry| entry.2.clone())
    }

    /// Keeps `answer` for `name` and `qtype` from `now` for as long as [`lifetime`] allows; an
    /// answer that may not be kept removes what was kept before.
    pub fn put(&mut self, name: &str, qtype: RecordType, answer: &Answer, now: Instant) {
        self.entries.retain(|(n, t, _, expiry)| {
            *expiry > now && !(*t == qtype && n.eq_ignore_ascii_case(name))
        });
        let Some(lifetime) = lifetime(answer) else {
            return;
        };
        if self.entries.len() >= CAPACITY {
            self.entries.remove(0);
        }
        let name = name.to_ascii_lowercase();
        self.entries
            .push((name, qtype, answer.clone(), now + lifetime));
    }
}

/// How long `answer` may be kept: its TTL within the caps; `None` for a TTL of 0, a negative
/// answer without an SOA (RFC 2308: not cached), or an answer that is no answer.
pub fn lifetime(answer: &Answer) -> Option<Duration> {
    let (ttl, cap) = match answer {
        Answer::Addresses(_, ttl) => (*ttl, MAX_POSITIVE),
        Answer::NoSuchName(Some(ttl)) | Answer::NoData(Some(ttl)) => (*ttl, MAX_NEGATIVE),
        Answer::NoSuchName(None) | Answer::NoData(None) => return None,
        Answer::Truncated | Answer::Failed(_) => return None,
    };
    (ttl > 0).then(|| Duration::from_secs(ttl.into()).min(cap))
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;

    use tokio::time::advance;

    use super::*;
    use crate::net::resolve::message::{A, AAAA};

    const S: Duration = Duration::from_secs(1);
    const MS: Duration = Duration::from_millis(1);

    fn addresses(ttl: u32) -> Answer {
        Answer::Addresses(vec![IpAddr::from([10, 0, 0, 1])], ttl)
    }

    #[tokio::test(start_paused = true)]
    async fn an_address_is_kept_for_its_ttl() {
        let mut cache = Cache::new();
        cache.put("web.default.svc", A, &addresses(5), Instant::now());
        advance(5 * S - MS).await;
        assert_eq!(
            cache.get("WEB.default.svc", A, Instant::now()),
            Some(addresses(5))
        );
        assert_eq!(cache.get("web.default.svc", AAAA, Instant::now()), None);
        assert_eq!(cache.get("web.other.svc", A, Instant::now()), None);
        advance(MS).await;
        assert_eq!(
            cache.get("web.default.svc", A, Instant::now()),
            None,
            "expired"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_long_ttl_is_capped() {
        let mut cache = Cache::new();
        cache.put("web", A, &addresses(3600), Instant::now());
        let nxdomain = Answer::NoSuchName(Some(300));
        cache.put("gone", A, &nxdomain, Instant::now());
        advance(MAX_NEGATIVE - MS).await;
        assert_eq!(cache.get("gone", A, Instant::now()), Some(nxdomain));
        advance(MS).await;
        assert_eq!(cache.get("gone", A, Instant::now()), None);
        advance(MAX_POSITIVE - MAX_NEGATIVE - MS).await;
        assert!(cache.get("web", A, Instant::now()).is_some());
        advance(MS).await;
        assert_eq!(cache.get("web", A, Instant::now()), None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_negative_answer_is_kept_for_its_soa_ttl_and_only_with_one() {
        let mut cache = Cache::new();
        let nodata = Answer::NoData(Some(2));
        cache.put("web", AAAA, &nodata, Instant::now());
        cache.put("web", A, &Answer::NoSuchName(None), Instant::now());
        assert_eq!(
            cache.get("web", A, Instant::now()),
            None,
            "no SOA: not kept"
        );
        advance(2 * S - MS).await;
        assert_eq!(cache.get("web", AAAA, Instant::now()), Some(nodata));
        advance(MS).await;
        assert_eq!(cache.get("web", AAAA, Instant::now()), None);
    }

    #[tokio::test(start_paused = true)]
    async fn ttl_zero_and_failures_are_not_kept_and_drop_what_was() {
        let mut cache = Cache::new();
        cache.put("web", A, &addresses(30), Instant::now());
        cache.put("web", A, &addresses(0), Instant::now());
        assert_eq!(cache.get("web", A, Instant::now()), None);
        for answer in [
            Answer::NoSuchName(Some(0)),
            Answer::Failed(2),
            Answer::Truncated,
        ] {
            cache.put("web", A, &answer, Instant::now());
            assert_eq!(cache.get("web", A, Instant::now()), None, "{answer:?}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_newer_answer_replaces_the_kept_one_and_room_is_bounded() {
        let mut cache = Cache::new();
        cache.put("web", A, &addresses(30), Instant::now());
        let moved = Answer::Addresses(vec![IpAddr::from([10, 0, 0, 2])], 10);
        cache.put("web", A, &moved, Instant::now());
        assert_eq!(cache.get("web", A, Instant::now()), Some(moved));
        for n in 0..CAPACITY * 2 {
            cache.put(&format!("name-{n}"), A, &addresses(30), Instant::now());
        }
        assert_eq!(cache.entries.len(), CAPACITY);
        let last = format!("name-{}", CAPACITY * 2 - 1);
        assert!(cache.get(&last, A, Instant::now()).is_some());
    }
}
