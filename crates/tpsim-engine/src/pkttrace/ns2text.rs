//! The ns-2 trace text of packet-trace rows (`[output] ns2_trace`), written while the run
//! goes: ns-2's old (CMU) wireless format, the wireless format of its `use-newtrace`, and its
//! wired format (the mapping of rows to lines: docs/ns2-trace.md).
//!
//! * old: `s 1.000000000 _0_ AGT  --- 0 cbr 540 [0 0 0 0] ------- [0:49152 3:1024 64 0] [0] 0 0`
//! * new: `s -t 1.000000000 -Hs 0 -Hd -2 -Ni 0 ... -Nl AGT -Nw --- ... -It cbr -Il 540 ...`
//! * wired: `+ 0.1 0 1 cbr 128 ------- 0 0.49152 1.1024 0 0`
//!
//! Every line is made from one row, in row order, so the same run gives the same bytes
//! whatever the batches. The Python module `tpsim.ns2trace` writes the same lines from a
//! stored `trace.parquet` (`tpsim ns2-trace`); the test suite checks that the two agree byte
//! for byte.

use super::{Layer, PacketKind, PacketTrace, TraceEvent, NO_NODE, NO_REASON, NS2_MESSAGES};
use crate::metrics::{DropReason, FlowKey};
use crate::packet::NO_DIR;
use std::fmt;
use std::io::{self, Write};
use tpsim_scenario::Ns2Trace;

/// Packet types that the lines treat apart.
const AODV: &str = super::NS2_AODV;
const OLSR: &str = super::NS2_OLSR;
const ARP: &str = super::NS2_ARP;

/// One row's values, as the lines use them.
struct Row<'a> {
    ns: u64,
    event: u8,
    node: u32,
    layer: u8,
    kind: u8,
    flow: Option<u32>,
    packet: Option<u32>,
    size_b: u32,
    reason: u8,
    uid: u32,
    hop: Option<u32>,
    src: Option<u32>,
    dst: Option<u32>,
    sport: u16,
    dport: u16,
    ttl: u8,
    ptype: &'static str,
    /// The routing or ARP message's name, `""` for none.
    message: &'a str,
}

impl Row<'_> {
    fn type_name(&self) -> &'static str {
        self.ptype
    }

    fn mac_frame(&self) -> bool {
        matches!(self.ptype, "RTS" | "CTS" | "ACK")
    }

    /// ns-2's "number of forwards": routers passed so far, from the TTL (transport packets).
    fn hops(&self) -> u8 {
        if self.kind == PacketKind::Data as u8 || self.kind == PacketKind::Transport as u8 {
            tpsim_wire::ip::DEFAULT_TTL.saturating_sub(self.ttl)
        } else {
            0
        }
    }

    /// (destination, source, ethertype) of the 802.11 header of a MAC row (-1: broadcast).
    fn mac_header(&self, ev: char) -> (i64, i64, u32) {
        if self.mac_frame() {
            return (opt(self.dst, -1), opt(self.src, -1), 0);
        }
        // A DATA frame: to the next hop (sent, or discarded by the sender's MAC) or to this
        // node (received), or broadcast.
        let sent = ev != 'r';
        let broadcast = self.dst.is_none() || (sent && self.hop.is_none());
        let ether = if self.ptype == ARP { 0x806 } else { 0x800 };
        if sent {
            (
                if broadcast { -1 } else { opt(self.hop, -1) },
                i64::from(self.node),
                ether,
            )
        } else {
            (
                if broadcast { -1 } else { i64::from(self.node) },
                opt(self.hop, -1),
                ether,
            )
        }
    }

    /// The IP part's next hop: the receiver of a MAC send or MAC discard, this node for what
    /// it receives.
    fn next_hop(&self, ev: char, layer: &str) -> i64 {
        if layer == "MAC" && ev != 'r' {
            opt(self.hop, 0)
        } else if ev == 'r' {
            i64::from(self.node)
        } else {
            0
        }
    }

    /// An ARP message's target field: the destination for a reply, else 0.
    fn arp_target(&self) -> i64 {
        if self.message == "REPLY" {
            opt(self.dst, -1).max(0)
        } else {
            0
        }
    }
}

/// `v`, or `none` if absent.
fn opt(v: Option<u32>, none: i64) -> i64 {
    v.map_or(none, i64::from)
}

/// A MAC address as the lines write it: hexadecimal, `ffffffff` for broadcast.
struct MacAddr(i64);

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 < 0 {
            f.write_str("ffffffff")
        } else {
            write!(f, "{:x}", self.0)
        }
    }
}

/// A value written as Python writes an optional one (`None` when absent).
struct Raw(Option<u32>);

impl fmt::Display for Raw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(v) => write!(f, "{v}"),
            None => f.write_str("None"),
        }
    }
}

/// Seconds with 9 decimals (the row's nanoseconds, exactly).
struct Time9(u64);

impl fmt::Display for Time9 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:09}", self.0 / 1_000_000_000, self.0 % 1_000_000_000)
    }
}

/// Seconds as the wired format writes them: no trailing zeros (`0.1`, `10`).
struct TimeShort(u64);

impl fmt::Display for TimeShort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (secs, mut frac) = (self.0 / 1_000_000_000, self.0 % 1_000_000_000);
        if frac == 0 {
            return write!(f, "{secs}");
        }
        let mut width = 9;
        while frac % 10 == 0 {
            frac /= 10;
            width -= 1;
        }
        write!(f, "{secs}.{frac:0width$}")
    }
}

/// The ns-2 trace layer and reason code of a drop (ns-2 has no code for the energy, link,
/// interface, node and queue-discipline reasons: they are tpsim's own).
fn drop_codes(reason: u8) -> (&'static str, &'static str) {
    match DropReason::ALL.get(reason as usize) {
        Some(DropReason::Queue) => ("IFQ", "IFQ"),
        Some(DropReason::Arp) => ("IFQ", "ARP"),
        Some(DropReason::QueueTimeout) => ("IFQ", "TOUT"),
        Some(DropReason::MacRetry) => ("MAC", "RET"),
        Some(DropReason::LinkError) => ("MAC", "ERR"),
        Some(DropReason::NoRoute) => ("RTR", "NRTE"),
        Some(DropReason::Ttl) => ("RTR", "TTL"),
        Some(DropReason::LinkBreak) => ("RTR", "CBK"),
        Some(DropReason::Energy) => ("MAC", "EGY"),
        Some(DropReason::LinkDown | DropReason::InterfaceDown | DropReason::NodeDown) => ("IFQ", "DWN"),
        Some(DropReason::AqmEarly | DropReason::AqmForced | DropReason::AqmSojourn) => ("IFQ", "AQM"),
        None => ("IFQ", "---"),
    }
}

/// The event letter and ns-2 layer of a wireless row that is not a drop; `None` for rows the
/// wireless formats do not show (ARP at the link layer, which the MAC rows show, and the
/// wired hop events).
fn wireless_event(event: u8, layer: u8) -> Option<(char, &'static str)> {
    const SEND: u8 = TraceEvent::Send as u8;
    const RECEIVE: u8 = TraceEvent::Receive as u8;
    const FORWARD: u8 = TraceEvent::Forward as u8;
    const MAC_SEND: u8 = TraceEvent::MacSend as u8;
    const MAC_RECEIVE: u8 = TraceEvent::MacReceive as u8;
    const TRANSPORT: u8 = Layer::Transport as u8;
    const IP: u8 = Layer::Ip as u8;
    const MAC: u8 = Layer::Mac as u8;
    match (event, layer) {
        (SEND, TRANSPORT) => Some(('s', "AGT")),
        (RECEIVE, TRANSPORT) => Some(('r', "AGT")),
        (SEND, IP) => Some(('s', "RTR")),
        (RECEIVE, IP) => Some(('r', "RTR")),
        (FORWARD, IP) => Some(('f', "RTR")),
        (MAC_SEND, MAC) => Some(('s', "MAC")),
        (MAC_RECEIVE, MAC) => Some(('r', "MAC")),
        _ => None,
    }
}

/// The wired format's event letter of a row (`None`: not shown).
fn wired_event(event: u8) -> Option<char> {
    match event {
        e if e == TraceEvent::Enqueue as u8 => Some('+'),
        e if e == TraceEvent::Dequeue as u8 => Some('-'),
        e if e == TraceEvent::Arrive as u8 => Some('r'),
        e if e == TraceEvent::Drop as u8 => Some('d'),
        _ => None,
    }
}

/// AODV message type numbers (RFC 3561 §5; ns-2 writes a HELLO's as 0x1).
fn aodv_type(message: &str) -> u32 {
    match message {
        "REQUEST" => 0x2,
        "REPLY" => 0x4,
        "ERROR" => 0x8,
        "RREP-ACK" => 0x10,
        "HELLO" => 0x1,
        _ => 0,
    }
}

/// OLSR message type numbers (RFC 3626 §18.4).
fn olsr_type(message: &str) -> u32 {
    match message {
        "HELLO" => 1,
        "TC" => 2,
        _ => 0,
    }
}

fn old_line(w: &mut dyn Write, r: &Row, ev: char, layer: &str, why: &str) -> io::Result<()> {
    let ptype = r.type_name();
    write!(
        w,
        "{ev} {} _{}_ {layer:>3} {why:>4} {} {ptype} {}",
        Time9(r.ns),
        r.node,
        r.uid,
        r.size_b
    )?;
    if layer == "MAC" {
        let (d, s, et) = r.mac_header(ev);
        write!(w, " [0 {} {} {et:x}]", MacAddr(d), MacAddr(s))?;
    } else {
        w.write_all(b" [0 0 0 0]")?;
    }
    if r.mac_frame() {
        return w.write_all(b"\n");
    }
    if r.ptype == ARP {
        let src = Raw(r.src);
        return writeln!(
            w,
            " ------- [{} {src}/{src} {}/{}]",
            r.message,
            r.arp_target(),
            opt(r.dst, -1)
        );
    }
    write!(
        w,
        " ------- [{}:{} {}:{} {} {}] ",
        opt(r.src, -1),
        r.sport,
        opt(r.dst, -1),
        r.dport,
        r.ttl,
        r.next_hop(ev, layer)
    )?;
    let seq = opt(r.packet, 0);
    match r.ptype {
        AODV => writeln!(w, "[0x{:x}] ({})", aodv_type(r.message), r.message),
        OLSR => writeln!(w, "[0x{:x}] ({})", olsr_type(r.message), r.message),
        // ns-2 prints its TCP header's sequence and ACK numbers for TCP data and ACKs.
        "tcp" | "ack" => writeln!(w, "[{seq} 0] {} 0", r.hops()),
        _ => writeln!(w, "[{seq}] {} 0", r.hops()),
    }
}

fn new_line(w: &mut dyn Write, r: &Row, ev: char, layer: &str, why: &str) -> io::Result<()> {
    let ptype = r.type_name();
    let hd = if layer == "MAC" && ev != 'r' {
        opt(r.hop, -2)
    } else if ev == 'r' {
        i64::from(r.node)
    } else {
        -2
    };
    write!(
        w,
        "{ev} -t {} -Hs {n} -Hd {hd} -Ni {n} -Nx 0.00 -Ny 0.00 -Nz 0.00 -Ne -1.000000 -Nl {layer} -Nw {why} ",
        Time9(r.ns),
        n = r.node
    )?;
    if layer == "MAC" {
        let (d, s, et) = r.mac_header(ev);
        write!(w, "-Ma 0 -Md {} -Ms {} -Mt {et:x}", MacAddr(d), MacAddr(s))?;
    } else {
        w.write_all(b"-Ma 0 -Md 0 -Ms 0 -Mt 0")?;
    }
    if r.mac_frame() {
        return w.write_all(b"\n");
    }
    write!(
        w,
        " -Is {}.{} -Id {}.{} -It {ptype} -Il {} -If {} -Ii {} -Iv {} ",
        opt(r.src, -1),
        r.sport,
        opt(r.dst, -1),
        r.dport,
        r.size_b,
        opt(r.flow, -1),
        r.uid,
        r.ttl
    )?;
    let seq = opt(r.packet, 0);
    match r.ptype {
        AODV => writeln!(w, "-P aodv -Pt 0x{:x} -Pc {}", aodv_type(r.message), r.message),
        OLSR => writeln!(w, "-P olsr -Pt 0x{:x} -Pc {}", olsr_type(r.message), r.message),
        ARP => {
            let src = Raw(r.src);
            writeln!(
                w,
                "-P arp -Po {} -Pms {src} -Ps {src} -Pmd {} -Pd {}",
                r.message,
                r.arp_target(),
                opt(r.dst, -1)
            )
        }
        "tcp" | "ack" => writeln!(w, "-Pn tcp -Ps {seq} -Pa 0 -Pf {} -Po 0", r.hops()),
        _ => writeln!(w, "-Pn {ptype} -Pi {seq} -Pf {} -Po 0", r.hops()),
    }
}

fn wired_line(w: &mut dyn Write, r: &Row, ev: char) -> io::Result<()> {
    let (node, hop) = (i64::from(r.node), opt(r.hop, -1));
    let (from, to) = if ev == 'r' { (hop, node) } else { (node, hop) };
    writeln!(
        w,
        "{ev} {} {from} {to} {} {} ------- {} {}.{} {}.{} {} {}",
        TimeShort(r.ns),
        r.type_name(),
        r.size_b,
        opt(r.flow, -1),
        opt(r.src, -1),
        r.sport,
        opt(r.dst, -1),
        r.dport,
        opt(r.packet, 0),
        r.uid
    )
}

/// Writes the ns-2 lines of `t`'s rows in the trace's format; `keys[dir]` names flow
/// direction `dir`. Nothing for a trace without the ns-2 columns.
///
/// # Errors
/// Whatever writing to `w` fails with.
pub(super) fn write(t: &PacketTrace, keys: &[&FlowKey], w: &mut dyn Write) -> io::Result<()> {
    let Some(c) = &t.ns2 else { return Ok(()) };
    let fmt = c.format;
    for i in 0..t.len() {
        let dir = t.dir[i];
        let some = |v: u32| (v != NO_NODE).then_some(v);
        let r = Row {
            ns: t.time_ns[i],
            event: t.event[i],
            node: t.node[i],
            layer: t.layer[i],
            kind: t.kind[i],
            flow: (dir != NO_DIR).then(|| keys[dir as usize].flow),
            packet: (dir != NO_DIR).then_some(t.packet[i]),
            size_b: t.size_b[i],
            reason: t.reason[i],
            uid: c.uid[i],
            hop: some(c.hop[i]),
            src: some(c.src[i]),
            dst: some(c.dst[i]),
            sport: c.sport[i],
            dport: c.dport[i],
            ttl: c.ttl[i],
            ptype: c.types[c.ptype[i] as usize],
            message: NS2_MESSAGES.get(c.message[i] as usize).copied().unwrap_or(""),
        };
        if fmt == Ns2Trace::Wired {
            if let Some(ev) = wired_event(r.event) {
                wired_line(w, &r, ev)?;
            }
            continue;
        }
        let (ev, layer, why) = if r.event == TraceEvent::Drop as u8 {
            let (layer, why) = drop_codes(r.reason);
            (if fmt == Ns2Trace::Old { 'D' } else { 'd' }, layer, why)
        } else {
            match wireless_event(r.event, r.layer) {
                Some((ev, layer)) => (ev, layer, "---"),
                None => continue,
            }
        };
        debug_assert!(r.event != TraceEvent::Drop as u8 || r.reason != NO_REASON);
        if fmt == Ns2Trace::Old {
            old_line(w, &r, ev, layer, why)?;
        } else {
            new_line(w, &r, ev, layer, why)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_written_as_ns2_does() {
        assert_eq!(Time9(1_000_000_000).to_string(), "1.000000000");
        assert_eq!(Time9(12_345).to_string(), "0.000012345");
        assert_eq!(TimeShort(100_000_000).to_string(), "0.1");
        assert_eq!(TimeShort(10_000_000_000).to_string(), "10");
        assert_eq!(TimeShort(0).to_string(), "0");
        assert_eq!(TimeShort(1_020_000_000).to_string(), "1.02");
        assert_eq!(TimeShort(123_456_789_001).to_string(), "123.456789001");
    }

    #[test]
    fn broadcast_mac_addresses_are_all_ones() {
        assert_eq!(MacAddr(-1).to_string(), "ffffffff");
        assert_eq!(MacAddr(26).to_string(), "1a");
        assert_eq!(Raw(None).to_string(), "None");
        assert_eq!(Raw(Some(3)).to_string(), "3");
    }

    #[test]
    fn every_drop_reason_has_an_ns2_code() {
        for r in DropReason::ALL {
            assert_ne!(drop_codes(r as u8).1, "---", "{r:?}");
        }
        assert_eq!(drop_codes(NO_REASON), ("IFQ", "---"));
    }
}
