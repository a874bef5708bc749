//! The per-ACK sample of ns-2's one-way TCP sender ([`crate::Socket::ack_sample`]).

use super::Ns2TcpSocket;

impl Ns2TcpSocket {
    /// The per-ACK sample of the sender: `cwnd_packets` (without Reno's inflation, as the
    /// time series), `ssthresh_packets`, `srtt_s` in whole ticks; all `None` at the sink.
    pub fn ack_sample(&self) -> crate::AckSample {
        let Some(s) = self.sender() else {
            return crate::AckSample::default();
        };
        crate::AckSample {
            acks: self.stats.acks_received,
            rtt_samples: s.rtt_samples,
            rtt_sum_ns: s.rtt_sum_ns,
            cwnd_packets: Some(s.cwnd),
            ssthresh_packets: Some(s.ssthresh as f64),
            srtt_s: s.srtt(&self.ns2).map(|d| d.as_secs_f64()),
            ..crate::AckSample::default()
        }
    }
}
