//! Queue disciplines: the `aqm` table of a link or of the radio.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::*;

/// The queue discipline of each direction of a link (or of each radio interface):
/// `aqm = { kind = "codel" }`, with the discipline's keys beside `kind`. Every key has its
/// published default (docs/models.md). Without `aqm`, the queue is DropTail with `queue`
/// packets.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Aqm {
    /// DropTail: a FIFO that drops arrivals when full.
    Droptail(DroptailKeys),
    /// Random Early Detection in gentle mode (Floyd & Jacobson 1993; ns-3's `RedQueueDisc`
    /// defaults).
    Red(RedKeys),
    /// Controlled Delay (RFC 8289).
    Codel(CodelKeys),
    /// Flow-queue CoDel (RFC 8290).
    FqCodel(FqCodelKeys),
    /// Proportional Integral controller Enhanced (RFC 8033; ns-3's `PieQueueDisc` defaults).
    Pie(PieKeys),
}

/// DropTail's keys.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DroptailKeys {
    /// Queue limit, packets. Default: the link's (or radio's) `queue`.
    pub limit: Option<u32>,
}

/// RED's keys.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedKeys {
    /// Minimum threshold of the average queue, packets. Default 5.
    pub min_th: Option<f64>,
    /// Maximum threshold of the average queue, packets. Default 15.
    pub max_th: Option<f64>,
    /// Weight of the average's moving average (w_q). Default 0.002.
    pub w_q: Option<f64>,
    /// Drop probability at the maximum threshold (max_p). Default 0.02 (ns-3's LInterm 50;
    /// ns-2's linterm_ 10 gives 0.1).
    pub max_p: Option<f64>,
    /// Gentle mode: the probability rises from max_p to 1 between max_th and 2 max_th.
    /// Default true.
    pub gentle: Option<bool>,
    /// Mean packet size the idle-time decay of the average assumes. Default "500B".
    pub mean_packet: Option<Bytes>,
    /// Mark ECN-capable packets instead of dropping them early. Default false.
    pub ecn: Option<bool>,
    /// Queue limit, packets. Default 25 (ns-3).
    pub limit: Option<u32>,
}

/// CoDel's keys.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodelKeys {
    /// Acceptable standing queue delay. Default "5ms".
    pub target: Option<Duration>,
    /// Window the delay must stay above target in before drops start. Default "100ms".
    pub interval: Option<Duration>,
    /// Mark ECN-capable packets instead of dropping them. Default false.
    pub ecn: Option<bool>,
    /// Queue limit, packets. Default 1000 (Linux).
    pub limit: Option<u32>,
}

/// FQ-CoDel's keys.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FqCodelKeys {
    /// Flow queues. Default 1024.
    pub flows: Option<u32>,
    /// Bytes each queue sends per round. Default "1514B".
    pub quantum: Option<Bytes>,
    /// Packets in all queues together. Default 10240.
    pub limit: Option<u32>,
    /// Each queue's CoDel target. Default "5ms".
    pub target: Option<Duration>,
    /// Each queue's CoDel interval. Default "100ms".
    pub interval: Option<Duration>,
    /// Mark ECN-capable packets instead of dropping them. Default false.
    pub ecn: Option<bool>,
}

/// PIE's keys.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PieKeys {
    /// Target queueing delay (QDELAY_REF). Default "15ms".
    pub target: Option<Duration>,
    /// Period of the drop probability's update (T_UPDATE). Default "15ms".
    pub t_update: Option<Duration>,
    /// Weight of the delay's deviation from target (alpha), Hz. Default 0.125.
    pub alpha: Option<f64>,
    /// Weight of the delay's trend (beta), Hz. Default 1.25.
    pub beta: Option<f64>,
    /// Burst allowed through without drops (MAX_BURST). Default "150ms".
    pub max_burst: Option<Duration>,
    /// Mark ECN-capable packets instead of dropping them while the probability is at most
    /// 10 % (RFC 8033 §5.1). Default false.
    pub ecn: Option<bool>,
    /// Queue limit, packets. Default 25 (ns-3).
    pub limit: Option<u32>,
}

/// Checks the meaning of an `aqm` table at `path` (limits of at least one packet, positive
/// times, probabilities and weights in range, RED's thresholds in order).
pub(crate) fn validate_aqm(a: &Aqm, path: &[Seg], err: &mut impl FnMut(Vec<Seg>, String)) {
    let mut at = |key: &str, msg: String| {
        let mut p = path.to_vec();
        p.push(Seg::Key(key.to_string()));
        err(p, msg);
    };
    fn positive(key: &str, d: Option<Duration>, at: &mut dyn FnMut(&str, String)) {
        if d.is_some_and(|d| d.0 == 0) {
            at(key, "expected a duration greater than 0".into());
        }
    }
    fn limit(v: Option<u32>, at: &mut dyn FnMut(&str, String)) {
        if v == Some(0) {
            at("limit", "expected a queue limit of at least 1 packet".into());
        }
    }
    match a {
        Aqm::Droptail(k) => limit(k.limit, &mut at),
        Aqm::Red(k) => {
            limit(k.limit, &mut at);
            let (min, max) = (k.min_th.unwrap_or(5.0), k.max_th.unwrap_or(15.0));
            if !(min.is_finite() && min >= 0.0) {
                at(
                    "min_th",
                    format!("expected a threshold of 0 packets or more, found {min}"),
                );
            } else if !(max.is_finite() && max > min) {
                at(
                    "max_th",
                    format!("expected max_th greater than min_th ({min}), found {max}"),
                );
            }
            for (key, v) in [("w_q", k.w_q), ("max_p", k.max_p)] {
                if let Some(v) = v.filter(|v| !(v.is_finite() && *v > 0.0 && *v <= 1.0)) {
                    at(key, format!("expected a value in (0, 1], found {v}"));
                }
            }
            if k.mean_packet.is_some_and(|b| b.0 == 0) {
                at("mean_packet", "expected a size greater than 0B".into());
            }
        }
        Aqm::Codel(k) => {
            limit(k.limit, &mut at);
            positive("target", k.target, &mut at);
            positive("interval", k.interval, &mut at);
        }
        Aqm::FqCodel(k) => {
            limit(k.limit, &mut at);
            positive("target", k.target, &mut at);
            positive("interval", k.interval, &mut at);
            if k.flows == Some(0) {
                at("flows", "expected at least 1 flow queue".into());
            }
            if k.quantum.is_some_and(|b| b.0 == 0) {
                at("quantum", "expected a quantum greater than 0B".into());
            }
        }
        Aqm::Pie(k) => {
            limit(k.limit, &mut at);
            positive("target", k.target, &mut at);
            positive("t_update", k.t_update, &mut at);
            for (key, v) in [("alpha", k.alpha), ("beta", k.beta)] {
                if let Some(v) = v.filter(|v| !(v.is_finite() && *v >= 0.0)) {
                    at(key, format!("expected a weight of 0 or more, found {v}"));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(aqm: &str) -> Result<Link, String> {
        let text = format!("nodes = [0, 1]\nrate = \"10Mbps\"\ndelay = \"20ms\"\naqm = {aqm}\n");
        toml::from_str(&text).map_err(|e| e.to_string())
    }

    #[test]
    fn an_aqm_table_reads_its_kind_and_keys_and_refuses_unknown_ones() {
        let l = link(r#"{ kind = "codel", target = "2ms", ecn = true }"#).unwrap();
        let Some(Aqm::Codel(k)) = l.aqm else {
            panic!("{:?}", l.aqm)
        };
        assert_eq!(
            (k.target.map(|d| d.0), k.ecn, k.interval),
            (Some(2_000_000), Some(true), None)
        );
        assert!(matches!(
            link(r#"{ kind = "fq-codel" }"#).unwrap().aqm,
            Some(Aqm::FqCodel(_))
        ));
        assert!(matches!(
            link(r#"{ kind = "droptail" }"#).unwrap().aqm,
            Some(Aqm::Droptail(_))
        ));
        let e = link(r#"{ kind = "droptail", bogus = 1 }"#).unwrap_err();
        assert!(e.contains("bogus"), "{e}");
        let e = link(r#"{ kind = "codel", targett = "2ms" }"#).unwrap_err();
        assert!(e.contains("targett"), "{e}");
        let e = link(r#"{ kind = "blue" }"#).unwrap_err();
        assert!(e.contains("blue") && e.contains("fq-codel"), "{e}");
        let e = link(r#"{ target = "2ms" }"#).unwrap_err();
        assert!(e.contains("kind"), "{e}");
    }

    #[test]
    fn out_of_range_keys_are_named() {
        let mut found = Vec::new();
        let a = link(r#"{ kind = "red", min_th = 10, max_th = 5, w_q = 0, limit = 0 }"#)
            .unwrap()
            .aqm
            .unwrap();
        validate_aqm(&a, &[Seg::Key("aqm".into())], &mut |p, m| found.push((p, m)));
        let keys: Vec<String> = found.iter().map(|(p, _)| format!("{:?}", p.last().unwrap())).collect();
        assert_eq!(keys.len(), 3, "{found:?}");
        for key in ["max_th", "w_q", "limit"] {
            assert!(keys.iter().any(|k| k.contains(key)), "{key} in {keys:?}");
        }
    }
}
