//! pcap tracing of point-to-point links: one file per link, each packet recorded when it
//! starts serialization, with real header bytes and checksums.

use crate::packet::Packet;
use crate::EngineError;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use tpsim_core::SimTime;
use tpsim_transport::L4Header;
use tpsim_wire::pcap::{PcapWriter, LINKTYPE_IPV4, LINKTYPE_PPP};
use tpsim_wire::{SizeConvention, IPV4_HEADER_LEN, PPP_PROTO_IPV4, UDP_HEADER_LEN};

/// The open pcap files of a run.
#[derive(Default)]
pub struct PcapTracer {
    writers: Vec<(PcapWriter<BufWriter<File>>, bool)>,
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
        self.writers.push((w, ppp));
        Ok(self.writers.len() as u32 - 1)
    }

    /// Records `p` as it starts on the wire at `now`. I/O errors are kept and reported by
    /// [`PcapTracer::finish`].
    pub fn write(&mut self, idx: u32, now: SimTime, p: &Packet) {
        let (w, ppp) = &mut self.writers[idx as usize];
        let b = &mut self.buf;
        b.clear();
        if *ppp {
            b.extend_from_slice(&PPP_PROTO_IPV4.to_be_bytes());
        }
        let ip_start = b.len();
        let total = (p.ip.total_len as usize).max(IPV4_HEADER_LEN as usize);
        b.resize(ip_start + total, 0);
        let mut ip = p.ip;
        ip.total_len = total as u16;
        ip.emit(&mut b[ip_start..]);
        let l4 = ip_start + IPV4_HEADER_LEN as usize;
        match p.seg.header {
            L4Header::Udp(h) => {
                let udp_len = total - IPV4_HEADER_LEN as usize;
                if udp_len >= UDP_HEADER_LEN as usize {
                    // The payload bytes are zeros: tpsim does not carry application data.
                    let payload = vec_zeros(udp_len - UDP_HEADER_LEN as usize);
                    h.emit(&ip, payload, &mut b[l4..]);
                }
            }
            L4Header::Tcp(h) => {
                let tcp_len = total - IPV4_HEADER_LEN as usize;
                // Under `ns2` sizes the IP length counts no TCP options: trace the SYN without.
                let h = if tcp_len < h.header_len() as usize {
                    h.without_options()
                } else {
                    h
                };
                let hl = h.header_len() as usize;
                if tcp_len >= hl {
                    // The payload bytes are zeros, as for UDP.
                    h.emit(&ip, vec_zeros(tcp_len - hl), &mut b[l4..]);
                }
            }
        }
        if let Err(e) = w.write_packet(now.as_nanos(), b) {
            self.error.get_or_insert(e);
        }
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

static ZEROS: [u8; 65536] = [0; 65536];

fn vec_zeros(n: usize) -> &'static [u8] {
    &ZEROS[..n.min(ZEROS.len())]
}
