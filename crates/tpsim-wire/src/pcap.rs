//! Classic libpcap file format writer (the format tshark/Wireshark read).
//!
//! Reference: the "PCAP Capture File Format" (draft-ietf-opsawg-pcap): a 24-byte global
//! header, then per packet a 16-byte record header and the captured bytes. Timestamps are
//! written with nanosecond resolution (magic 0xA1B23C4D).

use std::io::{self, Write};

/// LINKTYPE_PPP: PPP framing, starting with the protocol field here (2 bytes).
pub const LINKTYPE_PPP: u32 = 9;
/// LINKTYPE_IPV4: raw IPv4 packets, no link header.
pub const LINKTYPE_IPV4: u32 = 228;

/// Writes packets to a pcap stream.
pub struct PcapWriter<W: Write> {
    out: W,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the global header for `linktype` (snap length 65535) and returns the writer.
    pub fn new(mut out: W, linktype: u32) -> io::Result<Self> {
        out.write_all(&0xA1B2_3C4Du32.to_le_bytes())?; // nanosecond-resolution magic
        out.write_all(&2u16.to_le_bytes())?;
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&0i32.to_le_bytes())?; // thiszone
        out.write_all(&0u32.to_le_bytes())?; // sigfigs
        out.write_all(&65535u32.to_le_bytes())?; // snaplen
        out.write_all(&linktype.to_le_bytes())?;
        Ok(PcapWriter { out })
    }

    /// Appends one packet captured at `time_ns` nanoseconds.
    pub fn write_packet(&mut self, time_ns: u64, data: &[u8]) -> io::Result<()> {
        let secs = (time_ns / 1_000_000_000) as u32;
        let nanos = (time_ns % 1_000_000_000) as u32;
        self.out.write_all(&secs.to_le_bytes())?;
        self.out.write_all(&nanos.to_le_bytes())?;
        self.out.write_all(&(data.len() as u32).to_le_bytes())?;
        self.out.write_all(&(data.len() as u32).to_le_bytes())?;
        self.out.write_all(data)
    }

    /// Flushes and returns the underlying writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_record_layout() {
        let mut w = PcapWriter::new(Vec::new(), LINKTYPE_IPV4).unwrap();
        w.write_packet(1_500_000_001, &[1, 2, 3]).unwrap();
        let b = w.finish().unwrap();
        assert_eq!(b.len(), 24 + 16 + 3);
        assert_eq!(&b[0..4], &0xA1B2_3C4Du32.to_le_bytes());
        assert_eq!(u32::from_le_bytes(b[20..24].try_into().unwrap()), LINKTYPE_IPV4);
        assert_eq!(u32::from_le_bytes(b[24..28].try_into().unwrap()), 1);
        assert_eq!(u32::from_le_bytes(b[28..32].try_into().unwrap()), 500_000_001);
        assert_eq!(&b[40..], &[1, 2, 3]);
    }
}
