//! PR-SCTP pair property tests.
