//! The DCF's inputs and outputs: addresses, MSDUs handed down by the upper layer, MAC frames on
//! the air and the events reported upwards.

use tpsim_core::SimDuration;
use tpsim_phy::WifiRate;

/// A MAC address. tpsim numbers interfaces instead of carrying 48-bit IEEE addresses (radio
/// node `k` is address `k`; the optional ARP model, [`crate::arp`], resolves to that number);
/// the engine chooses the numbering.
pub type MacAddr = u32;

/// The broadcast (group) address: frames to it are received by every station in range, never
/// acknowledged and never retried (IEEE 802.11-2020 §10.3.6).
pub const BROADCAST: MacAddr = u32::MAX;

/// One MAC service data unit (an IP packet) handed to the DCF by the upper layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Msdu {
    /// Next-hop MAC address, or [`BROADCAST`].
    pub dst: MacAddr,
    /// Size of the MSDU (the IP packet) in bytes; the DATA frame adds
    /// [`DcfConfig::mac_header_bytes`](crate::DcfConfig::mac_header_bytes).
    pub bytes: u32,
    /// The engine's identifier of the packet; carried in the DATA frame and in the events, never
    /// interpreted by the MAC.
    pub handle: u64,
}

/// Frame type (IEEE 802.11-2020 §9.2.4.1, Type and Subtype; control frames §9.3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameKind {
    /// A DATA frame carrying one MSDU.
    Data,
    /// Acknowledgment (control frame, §9.3.1).
    Ack,
    /// Request to send (control frame, §9.3.1).
    Rts,
    /// Clear to send (control frame, §9.3.1).
    Cts,
}

/// One MAC frame (MPDU) as it goes on the air. `Copy`, so the engine can share it among
/// receivers without allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Frame type.
    pub kind: FrameKind,
    /// Transmitter address (for ACK and CTS, which carry only a receiver address on the air,
    /// the responder: informational).
    pub src: MacAddr,
    /// Receiver address, or [`BROADCAST`].
    pub dst: MacAddr,
    /// Size of the MAC frame in bytes, header and FCS included (the PSDU).
    pub bytes: u32,
    /// PHY rate the frame is sent at.
    pub rate: WifiRate,
    /// PPDU duration: PLCP preamble and header plus the PSDU at `rate`
    /// ([`WifiRate::ppdu_duration`]). The engine keeps the frame on the air this long.
    pub airtime: SimDuration,
    /// The Duration/ID field (§9.2.4.2): how long the medium stays reserved after the end of
    /// this frame. Stations not addressed by the frame set their NAV from it (§10.3.2.4).
    pub duration_nav: SimDuration,
    /// 12-bit sequence number of the MSDU (Sequence Control field, §9.2.4.4) for DATA; for ACK/CTS/RTS the sequence
    /// number of the DATA frame they belong to (informational: control frames carry none).
    pub seq: u16,
    /// Retry subfield of the Frame Control field (§9.2.4.1): set on retransmissions of a DATA frame.
    pub retry: bool,
    /// For DATA, the MSDU's [`Msdu::handle`]; for control frames, the handle of the MSDU whose
    /// exchange they belong to (informational).
    pub handle: u64,
}

/// What the DCF reports to the upper layer and the engine, polled with
/// [`Dcf::poll_event`](crate::Dcf::poll_event).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacEvent {
    /// A DATA frame for this station (or broadcast), not a duplicate: hand the MSDU with this
    /// handle up. `src` is the transmitter.
    Delivered {
        /// The sender's [`Msdu::handle`].
        handle: u64,
        /// Transmitter address.
        src: MacAddr,
    },
    /// The MSDU in service was acknowledged (unicast) or sent (broadcast). The DCF is
    /// [`ready`](crate::Dcf::ready) for the next one.
    TxOk {
        /// The MSDU's handle.
        handle: u64,
    },
    /// The MSDU in service reached its retry limit and was discarded (§10.3.2.12): link-failure
    /// feedback for routing. The DCF is [`ready`](crate::Dcf::ready) for the next one.
    TxFailed {
        /// The MSDU's handle.
        handle: u64,
        /// The next hop that did not answer.
        dst: MacAddr,
        /// Whether the last attempt was an RTS that drew no CTS (the MSDU itself never went
        /// out at that attempt; ns-2 traces the RTS's discard before the packet's).
        rts: bool,
    },
}
