//! pcap tracing of point-to-point links: one file per link, each packet recorded when it
//! starts serialization, with real header bytes and checksums.

use crate::packet::Packet;
use crate::EngineError;
use std::fs::File;
use std::io::BufWriter;
use std::net::Ipv4Addr;
use std::path::Path;
use tpsim_core::SimTime;
use tpsim_transport::Header as _;
use tpsim_transport::L4Header;
use tpsim_wire::pcap::{PcapWriter, LINKTYPE_IPV4, LINKTYPE_PPP};
use tpsim_wire::{SizeConvention, IPV4_HEADER_LEN, PPP_PROTO_IPV4, UDP_HEADER_LEN};

/// How a file frames its packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Framing {
    Ppp,
    RawIp,
    Radiotap,
}

/// LINKTYPE_IEEE802_11_RADIOTAP: a radiotap header, then the 802.11 frame.
pub const LINKTYPE_IEEE802_11_RADIOTAP: u32 = 127;

/// The open pcap files of a run.
#[derive(Default)]
pub struct PcapTracer {
    writers: Vec<(PcapWriter<BufWriter<File>>, Framing)>,
    buf: Vec<u8>,
    error: Option<std::io::Error>,
}

impl PcapTracer {
    /// Opens `dir/link<link>.pcap`. Under the `standard` convention the file has PPP framing
    /// (LINKTYPE_PPP with the 2-byte protocol field); under `ns2`, where links add no framing,
    /// raw IPv4 (LINKTYPE_IPV4).
    pub fn open(&mut self, dir: &Path, link: u32, sizes: SizeConvention) -> Result<u32, EngineError> {
        std::fs::create_dir_all(dir)?;
        let ppp = sizes == SizeConvention::Standard;
        let f = BufWriter::new(File::create(dir.join(format!("link{link}.pcap")))?);
        let w = PcapWriter::new(f, if ppp { LINKTYPE_PPP } else { LINKTYPE_IPV4 })?;
        self.writers.push((w, if ppp { Framing::Ppp } else { Framing::RawIp }));
        Ok(self.writers.len() as u32 - 1)
    }

    /// Opens `dir/node<node>.pcap` (`node<node>-ch<channel>.pcap` for one radio of a node with
    /// radios on several channels) for 802.11 frames with radiotap headers (the frames the radio
    /// sends, when they start, and the frames it receives correctly, when they end).
    pub fn open_wifi(&mut self, dir: &Path, node: u32, channel: Option<u32>) -> Result<u32, EngineError> {
        std::fs::create_dir_all(dir)?;
        let name = match channel {
            Some(c) => format!("node{node}-ch{c}.pcap"),
            None => format!("node{node}.pcap"),
        };
        let f = BufWriter::new(File::create(dir.join(name))?);
        let w = PcapWriter::new(f, LINKTYPE_IEEE802_11_RADIOTAP)?;
        self.writers.push((w, Framing::Radiotap));
        Ok(self.writers.len() as u32 - 1)
    }

    /// Records an 802.11 frame: radiotap (flags: FCS included; rate), the MAC header of its
    /// kind (IEEE 802.11-2020 §9.3), for DATA frames LLC/SNAP (RFC 1042) and the IP packet,
    /// then the FCS (CRC-32). Written with LLC/SNAP under both size conventions so that
    /// dissectors decode down to IP.
    /// `payload`: the real UDP payload of a routing control packet (AODV, OLSR), written
    /// instead of zeros (and with a real UDP header under either size convention).
    pub fn write_wifi(
        &mut self,
        idx: u32,
        now: SimTime,
        f: &tpsim_mac::Frame,
        p: Option<&Packet>,
        payload: Option<&[u8]>,
    ) {
        use tpsim_mac::FrameKind;
        let mut b = std::mem::take(&mut self.buf);
        b.clear();
        // Radiotap (radiotap.org): version 0, pad, length 10, present = Flags | Rate.
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(&10u16.to_le_bytes());
        b.extend_from_slice(&0x0000_0006u32.to_le_bytes());
        b.push(0x10); // flags: the frame includes the FCS
        b.push((f.rate.bps() / 500_000) as u8); // rate in 500 kbit/s units
        let start = b.len();
        let mac = |a: u32| -> [u8; 6] {
            if a == tpsim_mac::BROADCAST {
                [0xff; 6]
            } else {
                let x = a.to_be_bytes();
                [0x02, 0x00, x[0], x[1], x[2], x[3]]
            }
        };
        let dur = (f.duration_nav.0 / 1000).min(32767) as u16;
        let fc: [u8; 2] = match f.kind {
            FrameKind::Data => [0x08, if f.retry { 0x08 } else { 0x00 }],
            FrameKind::Ack => [0xd4, 0x00],
            FrameKind::Cts => [0xc4, 0x00],
            FrameKind::Rts => [0xb4, 0x00],
        };
        b.extend_from_slice(&fc);
        b.extend_from_slice(&dur.to_le_bytes());
        b.extend_from_slice(&mac(f.dst));
        match f.kind {
            FrameKind::Data => {
                b.extend_from_slice(&mac(f.src));
                b.extend_from_slice(&[0x02, 0x00, 0xff, 0xff, 0xff, 0xff]); // BSSID of the IBSS
                b.extend_from_slice(&(f.seq << 4).to_le_bytes());
                match p {
                    Some(p) if p.is_arp() => {
                        let ethertype = tpsim_wire::arp::ETHERTYPE_ARP.to_be_bytes();
                        b.extend_from_slice(&[0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00, ethertype[0], ethertype[1]]);
                        let at = b.len();
                        b.resize(at + tpsim_wire::arp::ARP_PACKET_LEN, 0);
                        let request = p.ctrl == crate::packet::ARP_REQUEST;
                        let node = |a: Ipv4Addr| crate::wifi::wifi_radio(a).unwrap_or(tpsim_mac::BROADCAST);
                        tpsim_wire::arp::ArpRepr {
                            op: if request { 1 } else { 2 },
                            sender_hw: mac(node(p.ip.src)),
                            sender_ip: p.ip.src,
                            target_hw: if request { [0; 6] } else { mac(node(p.ip.dst)) },
                            target_ip: p.ip.dst,
                        }
                        .emit(&mut b[at..]);
                    }
                    _ => {
                        b.extend_from_slice(&[0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00, 0x08, 0x00]);
                        if let Some(p) = p {
                            emit_ip(&mut b, p, payload);
                        }
                    }
                }
            }
            FrameKind::Rts => b.extend_from_slice(&mac(f.src)),
            FrameKind::Ack | FrameKind::Cts => {}
        }
        let fcs = crc32fast::hash(&b[start..]);
        b.extend_from_slice(&fcs.to_le_bytes());
        if let Err(e) = self.writers[idx as usize].0.write_packet(now.as_nanos(), &b) {
            self.error.get_or_insert(e);
        }
        self.buf = b;
    }

    /// Records `p` as it starts on the wire at `now`. I/O errors are kept and reported by
    /// [`PcapTracer::finish`].
    pub fn write(&mut self, idx: u32, now: SimTime, p: &Packet) {
        let mut b = std::mem::take(&mut self.buf);
        b.clear();
        if self.writers[idx as usize].1 == Framing::Ppp {
            b.extend_from_slice(&PPP_PROTO_IPV4.to_be_bytes());
        }
        emit_ip(&mut b, p, None);
        if let Err(e) = self.writers[idx as usize].0.write_packet(now.as_nanos(), &b) {
            self.error.get_or_insert(e);
        }
        self.buf = b;
    }

    /// Flushes every file.
    pub fn finish(&mut self) -> Result<(), EngineError> {
        for (w, _) in self.writers.drain(..) {
            w.finish()?;
        }
        match self.error.take() {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }
}

/// Appends the IP packet `p` as bytes: real IPv4 and transport headers with checksums, a
/// zero payload (tpsim carries no application data) unless a UDP `payload` is given.
fn emit_ip(b: &mut Vec<u8>, p: &Packet, payload: Option<&[u8]>) {
    let ip_start = b.len();
    if let (Some(data), L4Header::Udp(h)) = (payload, &p.seg.header) {
        let total = IPV4_HEADER_LEN as usize + UDP_HEADER_LEN as usize + data.len();
        b.resize(ip_start + total, 0);
        let mut ip = p.ip;
        ip.total_len = total as u16;
        ip.emit(&mut b[ip_start..]);
        h.emit(&ip, data, &mut b[ip_start + IPV4_HEADER_LEN as usize..]);
        return;
    }
    let total = (p.ip.total_len as usize).max(IPV4_HEADER_LEN as usize);
    b.resize(ip_start + total, 0);
    let mut ip = p.ip;
    ip.total_len = total as u16;
    ip.emit(&mut b[ip_start..]);
    let l4 = ip_start + IPV4_HEADER_LEN as usize;
    p.seg.header.emit_zeroed(&ip, &mut b[l4..]);
}
