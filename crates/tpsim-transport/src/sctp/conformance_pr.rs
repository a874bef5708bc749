//! PR-SCTP conformance cases (RFC 3758).
