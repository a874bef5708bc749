//! Queue disciplines from the scenario's `aqm` tables, and the flow hash FQ-CoDel classifies by.

use tpsim_aqm::{CodelConfig, FqCodelConfig, PieConfig, Pkt, Qdisc, RedConfig};
use tpsim_core::rng::splitmix64;
use tpsim_core::RngStream;
use tpsim_scenario::Aqm;
use tpsim_transport::Header;

use crate::packet::{Packet, PacketId};

/// The discipline `aqm` asks for (DropTail of `queue` packets without it), on a transmitter
/// of `rate_bps` bit/s (RED's idle-time decay) whose largest packet is `mtu_bytes` on the
/// wire (CoDel's `MAXPACKET`), drawing from `rng`.
pub fn qdisc(aqm: Option<&Aqm>, queue: u32, rate_bps: u64, mtu_bytes: u32, rng: RngStream) -> Qdisc {
    match aqm {
        None => Qdisc::DropTail(tpsim_aqm::DropTail::new(queue as usize)),
        Some(Aqm::Droptail(k)) => Qdisc::DropTail(tpsim_aqm::DropTail::new(k.limit.unwrap_or(queue) as usize)),
        Some(Aqm::Red(k)) => {
            let mut c = RedConfig {
                link_rate_bps: rate_bps as f64,
                ..RedConfig::default()
            };
            set(&mut c.min_th, k.min_th);
            set(&mut c.max_th, k.max_th);
            set(&mut c.w_q, k.w_q);
            set(&mut c.max_p, k.max_p);
            set(&mut c.gentle, k.gentle);
            set(&mut c.mean_pkt_bytes, k.mean_packet.map(|b| b.0 as u32));
            set(&mut c.ecn, k.ecn);
            set(&mut c.limit, k.limit.map(|l| l as usize));
            Qdisc::Red(tpsim_aqm::Red::new(c, rng))
        }
        Some(Aqm::Codel(k)) => {
            let mut c = CodelConfig {
                max_packet: mtu_bytes,
                ..CodelConfig::default()
            };
            set(&mut c.target, k.target.map(|d| d.sim()));
            set(&mut c.interval, k.interval.map(|d| d.sim()));
            set(&mut c.ecn, k.ecn);
            set(&mut c.limit, k.limit.map(|l| l as usize));
            Qdisc::Codel(tpsim_aqm::Codel::new(c))
        }
        Some(Aqm::FqCodel(k)) => {
            let mut c = FqCodelConfig {
                max_packet: mtu_bytes,
                ..FqCodelConfig::default()
            };
            set(&mut c.flows, k.flows);
            set(&mut c.quantum, k.quantum.map(|b| b.0 as u32));
            set(&mut c.limit, k.limit.map(|l| l as usize));
            set(&mut c.target, k.target.map(|d| d.sim()));
            set(&mut c.interval, k.interval.map(|d| d.sim()));
            set(&mut c.ecn, k.ecn);
            Qdisc::FqCodel(tpsim_aqm::FqCodel::new(c))
        }
        Some(Aqm::Pie(k)) => {
            let mut c = PieConfig::default();
            set(&mut c.qdelay_ref, k.target.map(|d| d.sim()));
            set(&mut c.t_update, k.t_update.map(|d| d.sim()));
            set(&mut c.alpha, k.alpha);
            set(&mut c.beta, k.beta);
            set(&mut c.max_burst, k.max_burst.map(|d| d.sim()));
            set(&mut c.ecn, k.ecn);
            set(&mut c.limit, k.limit.map(|l| l as usize));
            Qdisc::Pie(tpsim_aqm::Pie::new(c, rng))
        }
    }
}

/// Overrides a default with a key's value, if given.
fn set<T>(field: &mut T, v: Option<T>) {
    if let Some(v) = v {
        *field = v;
    }
}

/// What discipline `q` needs to know of packet `id` (`p`), `bytes` long on the wire: the flow
/// hash only for FQ-CoDel, whether it is ECN-capable.
pub fn pkt(q: &Qdisc, id: PacketId, p: &Packet, bytes: u32) -> Pkt {
    Pkt {
        id: id.0,
        bytes,
        flow: if matches!(q, Qdisc::FqCodel(_)) {
            flow_hash(p)
        } else {
            0
        },
        ect: p.ip.ecn.is_ect(),
        ce: false,
    }
}

/// A hash of the packet's 5-tuple (addresses, protocol, ports): equal for every packet of one
/// flow direction, spread over the 32 bits (SplitMix64's output function).
pub fn flow_hash(p: &Packet) -> u32 {
    let (sport, dport) = (p.seg.header.src_port(), p.seg.header.dst_port());
    let addrs = (u64::from(u32::from(p.ip.src)) << 32) | u64::from(u32::from(p.ip.dst));
    let rest = (u64::from(p.ip.protocol as u8) << 32) | (u64::from(sport) << 16) | u64::from(dport);
    splitmix64(splitmix64(addrs) ^ rest) as u32
}
