//! tshark dissects a pcap holding one DCCP packet of every type (RFC 4340 §5.1), with the
//! options tpsim sends, and finds every checksum good (§9) and no packet malformed. Skipped,
//! with a message, when tshark is not installed.

use std::net::Ipv4Addr;
use std::process::Command;
use tpsim_wire::dccp::{
    AckState, DccpOptions, DccpRepr, DccpType, FeatureOption, FeatureOptionKind, FEATURE_ACK_RATIO, FEATURE_CCID,
    FEATURE_SEND_ACK_VECTOR, RESET_CLOSED,
};
use tpsim_wire::pcap::{PcapWriter, LINKTYPE_IPV4};
use tpsim_wire::{IpProtocol, Ipv4Repr, IPV4_HEADER_LEN};

fn packet(t: DccpType, seq: u64) -> DccpRepr {
    let mut o = DccpOptions::NONE;
    match t {
        DccpType::Request => {
            o.push_feature(FeatureOption {
                kind: FeatureOptionKind::ChangeR,
                feature: FEATURE_CCID,
                value: 2,
            });
            o.push_feature(FeatureOption {
                kind: FeatureOptionKind::ChangeL,
                feature: FEATURE_CCID,
                value: 2,
            });
            o.push_feature(FeatureOption {
                kind: FeatureOptionKind::ChangeR,
                feature: FEATURE_SEND_ACK_VECTOR,
                value: 1,
            });
        }
        DccpType::Response => {
            o.push_feature(FeatureOption {
                kind: FeatureOptionKind::ConfirmL,
                feature: FEATURE_CCID,
                value: 2,
            });
            o.push_feature(FeatureOption {
                kind: FeatureOptionKind::ConfirmR,
                feature: FEATURE_CCID,
                value: 2,
            });
            o.push_feature(FeatureOption {
                kind: FeatureOptionKind::ConfirmL,
                feature: FEATURE_SEND_ACK_VECTOR,
                value: 1,
            });
        }
        DccpType::Ack => {
            o.ack_vector.push(AckState::Received, 5);
            o.ack_vector.push(AckState::NotReceived, 1);
            o.ack_vector.push(AckState::Received, 63);
            o.elapsed_time = Some(1500);
            o.loss_event_rate = Some(100);
            o.receive_rate = Some(16_000);
        }
        DccpType::DataAck => {
            o.ack_vector.push(AckState::Received, 0);
            o.timestamp = Some(123_456);
            o.ndp_count = Some(300);
            o.timestamp_echo = Some((654_321, 10));
            o.push_feature(FeatureOption {
                kind: FeatureOptionKind::ChangeL,
                feature: FEATURE_ACK_RATIO,
                value: 3,
            });
        }
        DccpType::Sync | DccpType::SyncAck => {
            o.push_feature(FeatureOption {
                kind: FeatureOptionKind::ConfirmR,
                feature: FEATURE_ACK_RATIO,
                value: 3,
            });
        }
        _ => {}
    }
    DccpRepr {
        src_port: 49152,
        dst_port: 5001,
        packet_type: t,
        ccval: (seq % 16) as u8,
        seq: (1 << 40) + seq,
        ack: if t.has_ack() { (1 << 33) + seq } else { 0 },
        service_code: if matches!(t, DccpType::Request | DccpType::Response) {
            42
        } else {
            0
        },
        reset_code: if t == DccpType::Reset { RESET_CLOSED } else { 0 },
        options: o,
    }
}

#[test]
fn tshark_dissects_every_dccp_type_with_good_checksums() {
    if Command::new("tshark").arg("-v").output().is_err() {
        eprintln!("tshark not installed: skipping the DCCP dissection test");
        return;
    }
    let path = std::env::temp_dir().join(format!("tpsim_dccp_tshark_{}.pcap", std::process::id()));
    let mut w = PcapWriter::new(std::fs::File::create(&path).unwrap(), LINKTYPE_IPV4).unwrap();
    for t in 0..10u8 {
        let t = DccpType::from_u8(t).unwrap();
        let r = packet(t, t as u64);
        let payload_len = if t.carries_data() { 100 } else { 0 };
        let l4 = r.header_len() as usize + payload_len;
        let ip = Ipv4Repr {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            protocol: IpProtocol::Dccp,
            ttl: 64,
            ident: t as u16,
            total_len: (IPV4_HEADER_LEN as usize + l4) as u16,
            ecn: tpsim_wire::Ecn::NotEct,
        };
        let mut buf = vec![0u8; IPV4_HEADER_LEN as usize + l4];
        ip.emit(&mut buf);
        let payload = vec![0xa5u8; payload_len];
        r.emit(&ip, &payload, &mut buf[IPV4_HEADER_LEN as usize..]);
        w.write_packet(t as u64 * 1_000_000, &buf).unwrap();
    }
    w.finish().unwrap();
    let out = Command::new("tshark")
        .args([
            "-r",
            path.to_str().unwrap(),
            "-o",
            "dccp.check_checksum:TRUE",
            "-T",
            "fields",
        ])
        .args(["-e", "dccp.type", "-e", "dccp.checksum.status", "-e", "_ws.malformed"])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 10, "{text}");
    for (i, l) in lines.iter().enumerate() {
        let f: Vec<&str> = l.split('\t').collect();
        assert_eq!(f[0], i.to_string(), "type of packet {i}: {l}");
        // Checksum status 1 is "Good" (tshark's proto_checksum_status enum).
        assert_eq!(f[1], "1", "checksum status of packet {i}: {l}");
        assert!(f.get(2).is_none_or(|m| m.is_empty()), "packet {i} malformed: {l}");
    }
}
