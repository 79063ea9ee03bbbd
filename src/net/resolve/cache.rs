//! Answers kept for their TTL, so a waiter polling a name asks the cluster's DNS once per TTL,
//! not on every attempt. The caps keep a change in the cluster visible soon (a Service created
//! while readygate waits is found within [`MAX_NEGATIVE`]).

use std::time::Duration;

use hickory_proto::rr::RecordType;
use tokio::time::Instant;

use super::message::Answer;

/// The longest an answer with addresses is kept, whatever its TTL.
const MAX_POSITIVE: Duration = Duration::from_secs(30);
/// The longest a negative answer is kept, whatever its SOA says.
const MAX_NEGATIVE: Duration = Duration::from_secs(5);
/// Entries kept at most (a run asks about a few names, each with its search-list candidates
/// and two types); beyond this the oldest go.
const CAPACITY: usize = 64;

/// `(name in lower case, type, answer, expiry)`, oldest first: one run's, kept by its
/// [`Resolver`](super::Resolver).
#[derive(Debug, Default)]
pub struct Cache(Vec<(String, RecordType, Answer, Instant)>);

impl Cache {
    /// The answer kept for `name` and `qtype`, if it has not expired.
    pub fn get(&mut self, name: &str, qtype: RecordType) -> Option<Answer> {
        let now = Instant::now();
        self.0.retain(|entry| entry.3 > now);
        let mut entries = self.0.iter();
        let found = entries.find(|e| e.1 == qtype && e.0.eq_ignore_ascii_case(name));
        found.map(|entry| entry.2.clone())
    }

    /// Keeps `answer` for `name` and `qtype` (instead of what was kept) for its TTL within the
    /// caps; never a TTL of 0, a negative answer without an SOA (RFC 2308), nor a failure.
    pub fn put(&mut self, name: &str, qtype: RecordType, answer: &Answer) {
        let now = Instant::now();
        self.0
            .retain(|e| e.3 > now && !(e.1 == qtype && e.0.eq_ignore_ascii_case(name)));
        let (ttl, cap) = match answer {
            Answer::Addresses(_, ttl) => (*ttl, MAX_POSITIVE),
            Answer::Negative(Some(ttl)) => (*ttl, MAX_NEGATIVE),
            _ => return,
        };
        if ttl > 0 {
            if self.0.len() >= CAPACITY {
                self.0.remove(0);
            }
            let expiry = now + Duration::from_secs(ttl.into()).min(cap);
            self.0
                .push((name.to_ascii_lowercase(), qtype, answer.clone(), expiry));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;

    use tokio::time::advance;

    use super::*;
    use RecordType::{A, AAAA};

    const S: Duration = Duration::from_secs(1);
    const MS: Duration = Duration::from_millis(1);

    fn addresses(ttl: u32) -> Answer {
        Answer::Addresses(vec![IpAddr::from([10, 0, 0, 1])], ttl)
    }

    #[tokio::test(start_paused = true)]
    async fn answers_are_kept_for_their_ttl_within_the_caps() {
        // The caps as docs/cli.md promises them, not as the constants say.
        let cases = [
            (addresses(5), Some(5 * S)),
            (addresses(3600), Some(30 * S)),
            (addresses(u32::MAX), Some(30 * S)),
            (Answer::Negative(Some(2)), Some(2 * S)),
            (Answer::Negative(Some(300)), Some(5 * S)),
            (Answer::Negative(Some(u32::MAX)), Some(5 * S)),
            (Answer::Negative(None), None),
            (Answer::Negative(Some(0)), None),
            (addresses(0), None),
            (Answer::Failed(2), None),
            (Answer::Truncated, None),
        ];
        for (answer, kept) in cases {
            let mut cache = Cache(Vec::new());
            cache.put("web.default.svc", A, &answer);
            if let Some(kept) = kept {
                advance(kept - MS).await;
                let got = cache.get("WEB.default.svc", A);
                assert_eq!(got.as_ref(), Some(&answer), "{answer:?}");
                assert_eq!(cache.get("web.default.svc", AAAA), None);
                assert_eq!(cache.get("web.other.svc", A), None);
                advance(MS).await;
            }
            assert_eq!(cache.get("web.default.svc", A), None, "{answer:?} expired");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_newer_answer_replaces_the_kept_one_and_room_is_bounded() {
        let mut cache = Cache(Vec::new());
        cache.put("web", A, &addresses(30));
        let moved = Answer::Addresses(vec![IpAddr::from([10, 0, 0, 2])], 10);
        cache.put("web", A, &moved);
        assert_eq!(cache.get("web", A), Some(moved));
        // One that may not be kept drops what was.
        cache.put("web", A, &addresses(0));
        assert_eq!(cache.get("web", A), None);
        for n in 0..CAPACITY * 2 {
            cache.put(&format!("name-{n}"), A, &addresses(30));
        }
        assert_eq!(cache.0.len(), CAPACITY);
        let last = format!("name-{}", CAPACITY * 2 - 1);
        assert!(cache.get(&last, A).is_some());
    }
}
