//! PR-SCTP (RFC 3758) between two endpoints, with the harness of `pair_tests`: 10 % random
//! loss in both directions plus some duplication and reordering, both ends announcing PR-SCTP,
//! messages with a 200 ms lifetime or a retransmission limit (mixed with reliable ones). The
//! properties, checked on every case:
//!
//! * no DATA chunk is sent at or after its message's creation + lifetime, nor retransmitted
//!   more often than its limit (every packet the sender emits, lost or not, is checked);
//! * every message is delivered exactly once or abandoned by its sender; none twice; a message
//!   both abandoned and delivered had been sent whole first (its acknowledgement was lost);
//!   ordered messages arrive in order within their stream;
//! * the association ends, without heartbeats (so that a state with no timer running would
//!   stall and fail): cleanly, both ends closed and every message settled (delivered or
//!   abandoned); an end may close on an ABORT, drawn by a late packet that reaches its peer
//!   after that one closed (RFC 9260 §8.4), harmless by then. Random loss may also make an end
//!   give up, exactly when an error counter passes its limit (checked as in `pair_tests`):
//!   at most 1 % of the cases may end so.
//!
//! `PROPTEST_CASES` sets the number of cases per property (default 1,000 each).

use super::pair_tests::{arb_msgs, Msg, Pair, Scenario};
use super::*;
use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use tpsim_core::SimDuration;
use tpsim_wire::SizeConvention;

/// A lossy path (10 % loss each way, up to 5 % duplicates and 10 % reordered) and messages both
/// ways whose policy `pr` draws (a quarter of them reliable).
fn arb_pr_scenario(pr: impl Strategy<Value = PrPolicy> + Clone + 'static) -> impl Strategy<Value = Scenario> {
    let with_pr = move |msgs: BoxedStrategy<Vec<Msg>>| {
        let pr = pr.clone();
        msgs.prop_flat_map(move |m| {
            let n = m.len();
            (
                Just(m),
                proptest::collection::vec(prop_oneof![1 => Just(PrPolicy::Reliable), 3 => pr.clone()], n),
            )
        })
        .prop_map(|(mut m, p)| {
            for (x, p) in m.iter_mut().zip(p) {
                x.pr = p;
            }
            m
        })
    };
    (
        prop_oneof![
            Just(SctpProfile::Rfc9260),
            Just(SctpProfile::Rfc4960),
            Just(SctpProfile::Ns2)
        ],
        prop_oneof![Just(1500u32), 300u32..1600],
        1u64..80,
        1u16..=8,
        0u8..=5,
        0u8..=10,
        any::<u64>(),
    )
        .prop_flat_map(move |(profile, mtu, latency_ms, streams, dup, reorder, seed)| {
            (
                with_pr(arb_msgs(mtu, streams, 60).boxed()),
                with_pr(arb_msgs(mtu, streams, 10).boxed()),
            )
                .prop_map(move |(c, s)| Scenario {
                    profile,
                    mtu,
                    latency_ms,
                    streams,
                    msgs: [c, s],
                    loss: 10,
                    dup,
                    reorder,
                    seed,
                    sizes: SizeConvention::Standard,
                    blackout: None,
                    pr_sctp: true,
                    heartbeats: false,
                })
        })
}

/// Runs the cases of `sc`; returns (messages abandoned, messages delivered) over all of them.
fn run_cases(sc: impl Strategy<Value = Scenario>) -> (u64, u64) {
    use std::cell::Cell;
    let (abandoned, delivered, gave_up) = (Cell::new(0u64), Cell::new(0u64), Cell::new(0u64));
    let mut runner = TestRunner::new(ProptestConfig {
        cases: crate::proptest_cases(1000),
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    runner
        .run(&sc, |sc| {
            let mut p = Pair::new(sc);
            p.run()?;
            if p.net.socks.iter().any(|s| s.sctp_stats().gave_up > 0) {
                // At a counter's limit (`Pair::check_end`): the messages went with it.
                gave_up.set(gave_up.get() + 1);
                return Ok(());
            }
            for (i, s) in p.net.socks.iter().enumerate() {
                prop_assert!(s.pr_negotiated());
                prop_assert_eq!(s.state(), State::Closed);
                prop_assert_eq!(p.settled(i), p.messages(i), "end {}: messages not settled", i);
                abandoned.set(abandoned.get() + s.sctp_stats().abandoned_messages);
            }
            delivered.set(delivered.get() + p.apps.iter().map(|a| a.got.len() as u64).sum::<u64>());
            Ok(())
        })
        .unwrap();
    let cases = crate::proptest_cases(1000) as u64;
    assert!(
        gave_up.get() * 100 <= cases,
        "{} of {cases} cases gave up",
        gave_up.get()
    );
    (abandoned.get(), delivered.get())
}

/// Timed reliability with a 200 ms lifetime (RFC 3758 §4.1) under 10 % loss: the properties of
/// the module docs; messages are abandoned in some cases (else the property would be vacuous).
#[test]
fn timed_messages_never_sent_after_their_lifetime() {
    let (abandoned, delivered) = run_cases(arb_pr_scenario(Just(PrPolicy::Lifetime(SimDuration::from_millis(200)))));
    eprintln!("sctp PR-SCTP lifetime property: {abandoned} messages abandoned, {delivered} delivered");
    if crate::proptest_cases(1000) >= 100 {
        assert!(
            abandoned > 0 && delivered > 0,
            "abandoned {abandoned}, delivered {delivered}"
        );
    }
}

/// Limited retransmissions (RFC 7496 §3.1), 0 to 2 allowed, under 10 % loss: the properties of
/// the module docs.
#[test]
fn limited_retransmissions_never_exceeded() {
    let (abandoned, delivered) = run_cases(arb_pr_scenario((0u32..=2).prop_map(PrPolicy::Retransmissions)));
    eprintln!("sctp PR-SCTP retransmissions property: {abandoned} messages abandoned, {delivered} delivered");
    if crate::proptest_cases(1000) >= 100 {
        assert!(
            abandoned > 0 && delivered > 0,
            "abandoned {abandoned}, delivered {delivered}"
        );
    }
}
