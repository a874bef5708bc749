//! The radio energy model through the engine: exact energy of a scripted schedule, and a node
//! that runs out at the predicted instant and then neither sends nor receives.

mod common;

use common::sim;
use tpsim_engine::{DropReason, RunResult};

/// Two nodes 100 m apart, ns-2 sizes, node 0 sends a 512-byte UDP packet every second from
/// t = 1 s to node 1; 10 s + 2 s of drain; powers tx 1.5 W, rx 1.0 W, idle 0.1 W.
fn scenario(initial_j: f64, death: bool) -> String {
    format!(
        "[simulation]\nduration = \"10s\"\ndrain = \"2s\"\nsizes = \"ns2\"\n\
         [output]\nbin = \"1s\"\n\
         [nodes]\ncount = 2\nplacement = {{ kind = \"explicit\", positions = [[\"0m\", \"0m\"], [\"100m\", \"0m\"]] }}\n\
         [radio]\n\
         [energy]\ninitial = \"{initial_j:e}J\"\ntx = \"1.5W\"\nrx = \"1W\"\nidle = \"0.1W\"\ndeath = {death}\n\
         [[flows]]\nsrc = 0\ndst = 1\ntransport = \"udp\"\napp = {{ kind = \"cbr\", size = \"512B\", interval = \"1s\", start = \"1s\" }}\n"
    )
}

/// Airtimes at 1 Mbit/s behind the 192 µs long PLCP: DATA = 512 B IP packet + 34 B of MAC
/// overhead (ns-2), ACK = 14 B.
const DATA_S: f64 = 192e-6 + 546.0 * 8.0 / 1e6;
const ACK_S: f64 = 192e-6 + 14.0 * 8.0 / 1e6;
const END_S: f64 = 12.0;

fn node_energy(r: &RunResult, node: u32) -> f64 {
    let t = &r.timeseries;
    (0..t.series.len())
        .filter(|&i| t.series[i] == "energy_consumed_j" && t.node[i] == Some(node))
        .map(|i| t.value[i].unwrap())
        .sum()
}

#[test]
fn scripted_schedule_costs_exactly_its_energy() {
    let r = sim(&scenario(1000.0, false), 1);
    let k = r.flows[0].tx_packets as f64;
    assert_eq!(r.flows[0].tx_packets, 9);
    assert_eq!(r.flows[0].rx_packets, 9);
    assert_eq!(r.network.mac_frames, 18, "DATA + ACK per packet, nothing else");
    // Sender: transmits DATA, senses the ACK, idles otherwise; the receiver the other way.
    let sender = 1.5 * k * DATA_S + 1.0 * k * ACK_S + 0.1 * (END_S - k * (DATA_S + ACK_S));
    let receiver = 1.0 * k * DATA_S + 1.5 * k * ACK_S + 0.1 * (END_S - k * (DATA_S + ACK_S));
    let (e0, e1) = (node_energy(&r, 0), node_energy(&r, 1));
    assert!((e0 - sender).abs() < 1e-9, "sender {e0} J vs {sender} J");
    assert!((e1 - receiver).abs() < 1e-9, "receiver {e1} J vs {receiver} J");
    let total = r.network.energy_consumed_j_total.unwrap();
    assert!((total - sender - receiver).abs() < 1e-9, "total {total}");
    assert!((r.network.energy_consumed_j_mean.unwrap() - total / 2.0).abs() < 1e-12);
    assert_eq!(r.network.first_node_death_s, None);
}

#[test]
fn a_node_that_runs_out_stops_sending_and_receiving() {
    // Idle costs nothing here, so that only the sender (which spends more per packet than
    // the receiver) runs out: enough for the middle of its 5th DATA frame (sent at t = 5 s).
    let before_5th = 1.5 * 4.0 * DATA_S + 1.0 * 4.0 * ACK_S;
    let initial = before_5th + 1.5 * DATA_S / 2.0;
    let r = sim(&scenario(initial, true).replace("idle = \"0.1W\"", "idle = \"0W\""), 1);
    let death = r.network.first_node_death_s.expect("the sender dies");
    let expect = 5.0 + DATA_S / 2.0;
    // Within one tick of simulated time (1 ns; the death is rounded up to the tick).
    assert!(
        (death - expect).abs() <= 1.5e-9,
        "died at {death} s, expected {expect} s"
    );
    assert_eq!(r.network.dead_nodes, 1);
    let f = &r.flows[0];
    // Four packets delivered; the 5th frame is cut short and not decoded; the 5th packet and
    // the four generated after the death are dropped for lack of energy.
    assert_eq!(f.tx_packets, 9);
    assert_eq!(f.rx_packets, 4);
    assert_eq!(r.network.drops[DropReason::Energy as usize], 5);
    assert_eq!(r.network.mac_frames, 4 * 2 + 1);
    // The dead node's account stops at its initial energy, and its residual reads 0 after.
    assert!(
        (node_energy(&r, 0) - initial).abs() < 1e-6,
        "{} vs {initial}",
        node_energy(&r, 0)
    );
    let t = &r.timeseries;
    for i in 0..t.series.len() {
        if t.series[i] == "energy_residual_j" && t.node[i] == Some(0) && t.time_s[i] >= 5.0 {
            assert_eq!(t.value[i], Some(0.0));
        }
    }
}

#[test]
fn a_receiver_that_runs_out_stops_receiving() {
    // Make the receiver the one that dies: it pays 20 W to receive. It dies 1 ms into the
    // 3rd DATA frame, which then is neither decoded nor acknowledged.
    let text = scenario(0.0, true).replace("rx = \"1W\"", "rx = \"20W\"");
    let used_2 = 20.0 * 2.0 * DATA_S + 1.5 * 2.0 * ACK_S + 0.1 * (3.0 - 2.0 * (DATA_S + ACK_S));
    let prop = 100.0 / 299_792_458.0;
    let initial = used_2 + 0.1 * prop + 20.0 * 1e-3;
    let r = sim(
        &text.replace("initial = \"0e0J\"", &format!("initial = \"{initial:e}J\"")),
        1,
    );
    let death = r.network.first_node_death_s.expect("the receiver dies");
    assert!((death - (3.0 + prop + 1e-3)).abs() < 1e-8, "died at {death}");
    assert_eq!(r.flows[0].rx_packets, 2);
    // The sender retries the unacknowledged frames to the retry limit and drops them.
    assert!(r.network.drops[DropReason::MacRetry as usize] >= 1, "{:?}", r.network);
}
