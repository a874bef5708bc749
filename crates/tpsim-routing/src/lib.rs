//! tpsim-routing: ad hoc routing protocols as sans-IO state machines.
//!
//! # Read first
//!
//! * RFC 3561, Ad hoc On-Demand Distance Vector (AODV) routing: [`aodv`].
//! * RFC 3626, Optimized Link State Routing (OLSR): [`olsr`].
//!
//! # Shape
//!
//! Every protocol follows the sans-IO contract of tpsim (docs/models.md): it never reads a clock,
//! never schedules events and never touches a socket. The engine feeds it control messages
//! received from a neighbour, link-layer feedback (a unicast frame to a next hop failed after
//! its retries) and timer expiries, asks it for next hops, and after every input polls
//! `poll_transmit` (control messages to send, broadcast or to one neighbour), `poll_event`
//! (data packets released or dropped, routes found) and `poll_timeout` (the next time it wants
//! to be called), in that order.
//!
//! Addresses are the nodes' IPv4 interface addresses ([`Addr`]). Control messages are typed;
//! each has its on-the-wire length (the UDP payload: AODV on port 654, OLSR on port 698) and an
//! `emit` into real bytes used only when a pcap trace is written.
//!
//! Depends only on `tpsim-core`.

pub mod aodv;
pub mod olsr;

pub use std::net::Ipv4Addr as Addr;

/// Where a control message goes on the link: to every neighbour in range, or to one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinkDest {
    /// Link-layer broadcast (no MAC ACK, no link failure feedback).
    Broadcast,
    /// Unicast to this neighbour (MAC ACK and retries; failure comes back as link feedback).
    Unicast(Addr),
}

/// UDP port of AODV control messages (RFC 3561 §4).
pub const AODV_PORT: u16 = 654;
/// UDP port of OLSR packets (RFC 3626 §3.1).
pub const OLSR_PORT: u16 = 698;
