//! tshark dissects tpsim's SCTP packets (RFC 9260 §3): one packet of each chunk type tpsim
//! emits, an INIT and an INIT ACK listing two IPv4 addresses, plus two bundles, inside IPv4 in
//! a pcap written by [`tpsim_wire::pcap`], read with the CRC32c checksum verified (RFC 9260
//! §6.8, Appendix A). Every chunk type must appear, every checksum be good, every address be
//! dissected and no packet be malformed. PR-SCTP (RFC 3758): a FORWARD TSN with Stream/Sequence
//! pairs, and INIT and INIT ACK with the Forward-TSN-Supported parameter. Skipped, with a
//! message, when tshark is not installed (CI installs it).

use std::net::Ipv4Addr;
use std::process::Command;
use tpsim_wire::pcap::{PcapWriter, LINKTYPE_IPV4};
use tpsim_wire::sctp::{
    chunk_type, AddrList, ControlChunk, DataChunk, DataFlags, ErrorCause, ForwardTsnChunk, InitChunk, Payload,
    SackChunk, StateCookie, PARAM_FORWARD_TSN_SUPPORTED,
};
use tpsim_wire::{IpProtocol, Ipv4Repr, SctpRepr, IPV4_HEADER_LEN};

/// Wireshark's `PROTO_CHECKSUM_E_GOOD` (epan/proto.h), the value of `sctp.checksum.status`.
const CHECKSUM_GOOD: &str = "1";

fn init() -> InitChunk {
    InitChunk {
        initiate_tag: 0x1234_5678,
        a_rwnd: 65536,
        outbound_streams: 4,
        inbound_streams: 65535,
        initial_tsn: 0x1234_5678,
        addresses: AddrList::default(),
        forward_tsn: false,
    }
}

/// The addresses of the multi-homed INIT and INIT ACK (RFC 9260 §3.3.2.1).
const ADDRS: [Ipv4Addr; 2] = [Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 2, 1)];

/// The FORWARD TSN of the packets: New Cumulative TSN 4242, streams 3 and 9 skipped up to SSN
/// 17 and 2.
fn forward_tsn() -> ForwardTsnChunk {
    let mut f = ForwardTsnChunk::new(4242);
    assert!(f.push(3, 17) && f.push(9, 2));
    f
}

fn data(tsn: u32, flags: DataFlags, len: u16) -> DataChunk {
    DataChunk {
        flags,
        tsn,
        stream_id: 1,
        ssn: 7,
        len,
        msg_id: 0,
        payload: Payload::default(),
    }
}

/// The packets: each chunk type alone (DATA, INIT, INIT ACK, SACK with Gap Ack Blocks and
/// duplicate TSNs, HEARTBEAT, HEARTBEAT ACK, ABORT with and without a cause, SHUTDOWN,
/// SHUTDOWN ACK, SHUTDOWN COMPLETE, COOKIE ECHO, COOKIE ACK, ERROR), then COOKIE ECHO with
/// DATA and SACK with two DATA chunks (one needing padding). The chunk types each holds.
fn packets() -> Vec<(SctpRepr, Vec<u8>)> {
    let tag = 0x0bad_cafe;
    let mut cookie = StateCookie::default();
    for (k, b) in cookie.0.iter_mut().enumerate() {
        *b = k as u8 * 7 + 1;
    }
    let mut sack = SackChunk::new(1000, 60000);
    assert!(sack.push_gap(2, 3) && sack.push_gap(5, 9));
    assert!(sack.push_dup(998) && sack.push_dup(1000));
    let control = |c: ControlChunk, t: u32| {
        let mut p = SctpRepr::new(5000, 80, t);
        p.control = Some(c);
        p
    };
    let mut out = Vec::new();
    let mut d = SctpRepr::new(5000, 80, tag);
    assert!(d.data.push(data(1001, DataFlags::WHOLE, 100)));
    out.push((d, vec![chunk_type::DATA]));
    out.push((control(ControlChunk::Init(init()), 0), vec![chunk_type::INIT]));
    out.push((
        control(ControlChunk::InitAck(init(), cookie), tag),
        vec![chunk_type::INIT_ACK],
    ));
    // A multi-homed endpoint's INIT and INIT ACK: IPv4 Address parameters (the INIT ACK's
    // before its State Cookie), with Forward-TSN-Supported after them.
    let multi = InitChunk {
        addresses: AddrList::from_slice(&ADDRS),
        forward_tsn: true,
        ..init()
    };
    out.push((control(ControlChunk::Init(multi), 0), vec![chunk_type::INIT]));
    out.push((
        control(ControlChunk::InitAck(multi, cookie), tag),
        vec![chunk_type::INIT_ACK],
    ));
    let mut s = SctpRepr::new(80, 5000, tag);
    s.sack = Some(sack);
    out.push((s, vec![chunk_type::SACK]));
    let one = |c: ControlChunk, ty: u8| (control(c, tag), vec![ty]);
    out.push(one(ControlChunk::Heartbeat(123_456_789), chunk_type::HEARTBEAT));
    out.push(one(ControlChunk::HeartbeatAck(123_456_789), chunk_type::HEARTBEAT_ACK));
    out.push(one(
        ControlChunk::Abort {
            t: false,
            cause: Some(ErrorCause::USER_ABORT),
        },
        chunk_type::ABORT,
    ));
    out.push(one(ControlChunk::Abort { t: true, cause: None }, chunk_type::ABORT));
    out.push(one(ControlChunk::Shutdown(1000), chunk_type::SHUTDOWN));
    out.push(one(ControlChunk::ShutdownAck, chunk_type::SHUTDOWN_ACK));
    out.push(one(
        ControlChunk::ShutdownComplete { t: false },
        chunk_type::SHUTDOWN_COMPLETE,
    ));
    out.push(one(ControlChunk::CookieEcho(cookie), chunk_type::COOKIE_ECHO));
    out.push(one(ControlChunk::CookieAck, chunk_type::COOKIE_ACK));
    out.push(one(ControlChunk::Error(ErrorCause::STALE_COOKIE), chunk_type::ERROR));
    out.push(one(ControlChunk::Error(ErrorCause::INVALID_STREAM), chunk_type::ERROR));
    // Bundles (RFC 9260 §6.10): COOKIE ECHO + DATA; SACK + DATA + DATA, the last padded.
    let mut b = control(ControlChunk::CookieEcho(cookie), tag);
    assert!(b.data.push(data(1002, DataFlags::BEGIN, 1000)));
    out.push((b, vec![chunk_type::COOKIE_ECHO, chunk_type::DATA]));
    let mut b = SctpRepr::new(80, 5000, tag);
    b.sack = Some(sack);
    assert!(b.data.push(data(1003, DataFlags::default(), 1000)));
    assert!(b.data.push(data(1004, DataFlags::END.with(DataFlags::UNORDERED), 3)));
    out.push((b, vec![chunk_type::SACK, chunk_type::DATA, chunk_type::DATA]));
    // PR-SCTP (RFC 3758 §3.1, §3.2): INIT and INIT ACK with Forward-TSN-Supported; FORWARD TSN
    // alone and bundled ahead of SACK and DATA (§3.5 F2).
    let pr = InitChunk {
        forward_tsn: true,
        ..init()
    };
    out.push((control(ControlChunk::Init(pr), 0), vec![chunk_type::INIT]));
    out.push((
        control(ControlChunk::InitAck(pr, cookie), tag),
        vec![chunk_type::INIT_ACK],
    ));
    out.push(one(ControlChunk::ForwardTsn(forward_tsn()), chunk_type::FORWARD_TSN));
    let mut b = control(ControlChunk::ForwardTsn(forward_tsn()), tag);
    b.sack = Some(sack);
    assert!(b.data.push(data(4243, DataFlags::WHOLE, 10)));
    out.push((b, vec![chunk_type::FORWARD_TSN, chunk_type::SACK, chunk_type::DATA]));
    out
}

/// The pcap: raw IPv4 (LINKTYPE_IPV4), one packet every millisecond.
fn pcap(packets: &[(SctpRepr, Vec<u8>)]) -> Vec<u8> {
    let mut w = PcapWriter::new(Vec::new(), LINKTYPE_IPV4).expect("in memory");
    for (k, (p, _)) in packets.iter().enumerate() {
        let len = (IPV4_HEADER_LEN + p.packet_len()) as usize;
        let ip = Ipv4Repr {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            protocol: IpProtocol::Sctp,
            ttl: 64,
            ident: k as u16,
            total_len: len as u16,
            ecn: tpsim_wire::Ecn::NotEct,
        };
        let mut b = vec![0u8; len];
        ip.emit(&mut b);
        p.emit(&mut b[IPV4_HEADER_LEN as usize..]);
        // What tpsim writes parses back (the same CRC32c tshark checks).
        assert_eq!(
            SctpRepr::parse(&b[IPV4_HEADER_LEN as usize..]).map(|r| r.control),
            Ok(p.control)
        );
        w.write_packet(k as u64 * 1_000_000, &b).expect("in memory");
    }
    w.finish().expect("in memory")
}

#[test]
fn tshark_dissects_every_chunk_type_with_good_crc32c() {
    if Command::new("tshark").arg("-v").output().is_err() {
        eprintln!("tshark not installed: sctp_tshark skipped");
        return;
    }
    let packets = packets();
    let path = std::env::temp_dir().join(format!("tpsim_sctp_tshark_{}.pcap", std::process::id()));
    std::fs::write(&path, pcap(&packets)).expect("temp file");
    // `sctp.checksum` both selects the algorithm and turns its verification on (tshark 4.x;
    // `tshark -G defaultprefs`: None, Adler 32, CRC 32c, Automatic).
    let out = Command::new("tshark")
        .arg("-r")
        .arg(&path)
        .args(["-o", "sctp.checksum:CRC 32c", "-T", "fields", "-E", "separator=;"])
        .args([
            "-e",
            "sctp.chunk_type",
            "-e",
            "sctp.checksum.status",
            "-e",
            "_ws.malformed",
        ])
        .args(["-e", "sctp.sack_gap_block_start", "-e", "sctp.sack_duplicate_tsn"])
        .args(["-e", "_ws.expert.severity", "-e", "sctp.parameter_ipv4_address"])
        .args(["-e", "sctp.parameter_type", "-e", "sctp.forward_tsn_tsn"])
        .args(["-e", "sctp.forward_tsn_sid", "-e", "sctp.forward_tsn_ssn"])
        .output()
        .expect("tshark runs");
    if std::env::var_os("TPSIM_KEEP_PCAP").is_none() {
        let _ = std::fs::remove_file(&path);
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), packets.len(), "one line per packet:\n{stdout}");
    let mut seen = Vec::new();
    let mut multi_homed = 0;
    for (line, (p, types)) in lines.iter().zip(&packets) {
        let f: Vec<&str> = line.split(';').collect();
        assert_eq!(f.len(), 11, "{line}");
        let got: Vec<u8> = f[0].split(',').map(|t| t.parse().expect("a chunk type")).collect();
        assert_eq!(&got, types, "chunk types of {p:?}");
        assert_eq!(f[1], CHECKSUM_GOOD, "checksum status of {p:?}: {line}");
        assert!(f[2].is_empty(), "malformed: {p:?}: {line}");
        // No error-level expert info (Wireshark's PI_ERROR is 0x800000).
        for sev in f[5].split(',').filter(|s| !s.is_empty()) {
            let sev: u32 = sev.parse().expect("a severity");
            assert!(sev < 0x0080_0000, "expert error on {p:?}: {line}");
        }
        if p.sack.is_some() {
            // Gap Ack Block starts 2 and 5, duplicate TSNs 998 and 1000 (RFC 9260 §3.3.4).
            assert_eq!(f[3], "2,5", "{line}");
            assert_eq!(f[4], "998,1000", "{line}");
        }
        let addrs = match p.control {
            Some(ControlChunk::Init(i)) | Some(ControlChunk::InitAck(i, _)) => i.addresses,
            _ => AddrList::default(),
        };
        let want: Vec<String> = addrs.iter().map(|a| a.to_string()).collect();
        assert_eq!(f[6], want.join(","), "IPv4 Address parameters of {p:?}: {line}");
        if !addrs.is_empty() {
            multi_homed += 1;
        }
        // RFC 3758 §3.1: the parameter is there exactly when the INIT or INIT ACK says so (an
        // INIT ACK's parameters also list its State Cookie, type 7).
        let params: Vec<u16> = f[7]
            .split(',')
            .filter(|t| !t.is_empty())
            .map(|t| u16::from_str_radix(t.trim_start_matches("0x"), 16).expect("a parameter type"))
            .collect();
        let announced = match p.control {
            Some(ControlChunk::Init(i)) | Some(ControlChunk::InitAck(i, _)) => i.forward_tsn,
            _ => false,
        };
        assert_eq!(
            params.contains(&PARAM_FORWARD_TSN_SUPPORTED),
            announced,
            "{p:?}: {line}"
        );
        if let Some(ControlChunk::ForwardTsn(_)) = p.control {
            // RFC 3758 §3.2: New Cumulative TSN, then the Stream/Sequence pairs.
            assert_eq!((f[8], f[9], f[10]), ("4242", "3,9", "17,2"), "{line}");
        }
        seen.extend(got);
    }
    for ty in [
        chunk_type::DATA,
        chunk_type::INIT,
        chunk_type::INIT_ACK,
        chunk_type::SACK,
        chunk_type::HEARTBEAT,
        chunk_type::HEARTBEAT_ACK,
        chunk_type::ABORT,
        chunk_type::SHUTDOWN,
        chunk_type::SHUTDOWN_ACK,
        chunk_type::ERROR,
        chunk_type::COOKIE_ECHO,
        chunk_type::COOKIE_ACK,
        chunk_type::SHUTDOWN_COMPLETE,
        chunk_type::FORWARD_TSN,
    ] {
        assert!(seen.contains(&ty), "chunk type {ty} not dissected");
    }
    assert_eq!(multi_homed, 2, "the multi-address INIT and INIT ACK");
}
