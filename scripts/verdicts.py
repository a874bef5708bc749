#!/usr/bin/env python3
"""The verdict on every finding of the reference studies' papers, computed from the studies'
outputs, for docs/studies.md ("Findings, finding by finding").

    python scripts/verdicts.py [--results DIR] [--studies a,b,c,d,e] [--run]
                               [--ns2-readme PATH] [--doc PATH | -]

Each finding of the papers (the list below, one entry per claim) is measured on tpsim's
outputs of its study, in the published view (the papers' simulator semantics: ns-2.35's agents
with their default sizes for A, C and D, INET's TCP defaults for B; E has one view) and in the
modern view (tpsim's RFC models), with the mean and 95 % CI over replications where the claim
is a number. ns-2.35's value comes from the reference runs' tables (``../shared/ns2/README.md``
beside the repository, or ``--ns2-readme``), where it has one. The verdict is computed: the
claim holds in the published view ("reproduced"), or it does not, and the entry names why,
either an artefact of the paper's simulator or setup ("cause in the paper") or a known defect
of tpsim ("cause in tpsim").

``--run`` first runs the studies (``tpsim study X -o DIR/X``; stored runs are reused) into
``--results`` (default ``benches/.cache/studies``); otherwise their outputs must be there. The
table goes between ``<!-- verdicts:begin -->`` and ``<!-- verdicts:end -->`` in ``--doc``
(default docs/studies.md; ``-`` prints it).
"""

from __future__ import annotations

import argparse
import math
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

import polars as pl

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- verdicts:begin -->", "<!-- verdicts:end -->"


# --- measuring -----------------------------------------------------------------------------


def ci(values: Sequence[float], metric: str = "") -> tuple[float, Optional[float], Optional[float]]:
    """Mean and 95 % CI of one metric's values over replications (tpsim's own intervals)."""
    from tpsim.tables import mean_cis

    return mean_cis(metric, [list(values)])[0]


def num(v: float) -> str:
    """Three significant digits, whole numbers from 100 on."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{float(f'{v:.3g}'):g}"


def with_ci(values: Sequence[float], metric: str = "") -> str:
    m, lo, hi = ci(values, metric)
    return num(m) + (f" [{num(lo)}, {num(hi)}]" if lo is not None and hi is not None and len(values) > 1 else "")


def per_run(df: pl.DataFrame, by: list[str], expr: pl.Expr) -> dict[tuple, list[float]]:
    """``expr`` per run within each group of ``by``: group -> the runs' values, in run order."""
    g = df.group_by([*by, "run"]).agg(expr.alias("v")).sort([*by, "run"])
    out: dict[tuple, list[float]] = {}
    for r in g.iter_rows(named=True):
        out.setdefault(tuple(r[k] for k in by), []).append(r["v"])
    return out


def means(d: dict[tuple, list[float]]) -> dict[tuple, float]:
    return {k: sum(v) / len(v) for k, v in d.items()}


def overlap(a: Sequence[float], b: Sequence[float], metric: str = "") -> bool:
    """Whether the 95 % CIs of two samples overlap."""
    _, alo, ahi = ci(a, metric)
    _, blo, bhi = ci(b, metric)
    if None in (alo, ahi, blo, bhi):
        return ci(a)[0] == ci(b)[0]
    return alo <= bhi and blo <= ahi


# --- ns-2.35's reference tables ------------------------------------------------------------


def ns2_rows(readme: Optional[Path]) -> dict[str, dict[str, float]]:
    """The rows of the reference runs' tables by label (``A_tcp_I5``), their numbers."""
    rows: dict[str, dict[str, float]] = {}
    if readme is None or not readme.is_file():
        return rows
    header: Optional[list[str]] = None
    for line in readme.read_text(encoding="utf-8").splitlines():
        if line.startswith("| label |"):
            header = [c.strip() for c in line.strip().strip("|").split("|")]
        elif header and line.startswith("| ") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            vals = {}
            for h, c in zip(header[1:], cells[1:]):
                try:
                    vals[h] = float(c.replace(",", ""))
                except ValueError:
                    pass
            rows[cells[0]] = vals
        elif not line.startswith("|"):
            header = None
    return rows


# --- the findings --------------------------------------------------------------------------


@dataclass
class Measured:
    published: str
    modern: str
    ns2: str
    #: The claim holds in the published view; or the part that holds, as text.
    holds: bool


@dataclass
class Finding:
    id: str
    study: str
    claim: str
    paper: str
    measure: Callable[["Inputs"], Measured]
    #: Why the claim does not hold in the published view: "cause in the paper: ..." or
    #: "cause in tpsim: ...".
    otherwise: str


@dataclass
class Inputs:
    flows: dict[str, pl.DataFrame]
    network: dict[str, pl.DataFrame]
    timeseries: dict[str, pl.DataFrame]
    ns2: dict[str, dict[str, float]]


def views(one: Callable[[str], tuple[str, bool]], ns2: str = "—", published: str = "ns2",
          modern: str = "modern") -> Measured:
    """A finding measured in both views by ``one(view)`` -> (text, the claim holds); the
    verdict comes from the published view."""
    pub, ok = one(published)
    mod, _ = one(modern)
    return Measured(pub, mod, ns2, ok)


INTERVALS = ["1s", "2s", "5s", "10s", "20s"]
A_VIEWS = {"published": "ns2", "modern": "modern"}


def _a(x: Inputs, stack: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    return (x.flows["a"].filter(pl.col("simulation.stack") == stack),
            x.network["a"].filter(pl.col("simulation.stack") == stack))


def _a_by_interval(x: Inputs, stack: str, table: str, expr: pl.Expr) -> dict[tuple, list[float]]:
    f, n = _a(x, stack)
    return per_run(f if table == "flows" else n, ["sensors.transport", "sensors.interval"], expr)


def _a_avg(x: Inputs, stack: str, table: str, expr: pl.Expr) -> dict[str, list[float]]:
    """Per transport, each run's mean over the five intervals."""
    d = _a_by_interval(x, stack, table, expr)
    out: dict[str, list[float]] = {}
    for t in ("udp", "tcp", "sctp"):
        runs = [d[(t, i)] for i in INTERVALS]
        out[t] = [sum(v) / len(v) for v in zip(*runs)]
    return out


def _ns2_a(x: Inputs, col: str, tcp_label: str = "A_tcp_I{i}") -> dict[str, list[Optional[float]]]:
    lab = {"udp": "A_udp_I{i}", "tcp": tcp_label, "sctp": "A_sctp_I{i}"}
    return {t: [x.ns2.get(lab[t].format(i=i[:-1]), {}).get(col) for i in INTERVALS] for t in lab}


def _ns2_a_avg(x: Inputs, col: str, unit: str = "", note: str = " (TCP at the message size)",
               tcp_label: str = "A_tcp_I{i}") -> str:
    """ns-2.35's ``col`` per transport averaged over the five intervals; "—" without them all."""
    ns = _ns2_a(x, col, tcp_label)
    if any(v is None for vs in ns.values() for v in vs):
        return "—"
    return "; ".join(f"{t.upper()} {num(sum(v) / 5)}{unit}" for t, v in ns.items()) + note


def a_throughput(x: Inputs) -> Measured:
    thr = pl.col("throughput_ip_kbps").sum()
    texts, above = {}, {}
    for view, stack in A_VIEWS.items():
        m = means(_a_by_interval(x, stack, "flows", thr))
        above[view] = [i for i in INTERVALS[1:] if m[("tcp", i)] > m[("udp", i)]]
        texts[view] = (f"TCP {'/'.join(num(m[('tcp', i)]) for i in INTERVALS)}; UDP {'/'.join(num(m[('udp', i)]) for i in INTERVALS)}; "
                       + ("TCP above at I = " + ", ".join(i[:-1] for i in above[view]) + " s" if above[view] else "TCP above at no I"))
    ns = _ns2_a(x, "thr kbit/s", "Ax_tcp_I{i}_size1000")
    ns_text = "—"
    if all(v is not None for v in ns["tcp"] + ns["udp"]):
        ns_above = [i for i, a, b in zip(INTERVALS, ns["tcp"], ns["udp"]) if i != "1s" and a > b]
        ns_text = (f"TCP {'/'.join(num(v) for v in ns['tcp'])}; UDP {'/'.join(num(v) for v in ns['udp'])}; "
                   + ("TCP above at I = " + ", ".join(i[:-1] for i in ns_above) + " s" if ns_above else "TCP above at no I"))
    return Measured(texts["published"], texts["modern"], ns_text, above["published"] == INTERVALS[1:])


def a_average_order(x: Inputs) -> Measured:
    def one(stack: str) -> tuple[str, bool]:
        avg = _a_avg(x, stack, "flows", pl.col("throughput_ip_kbps").sum())
        m = {t: sum(v) / len(v) for t, v in avg.items()}
        return "; ".join(f"{t.upper()} {with_ci(avg[t])}" for t in ("udp", "tcp", "sctp")), m["udp"] > m["tcp"] > m["sctp"]
    return views(one, _ns2_a_avg(x, "thr kbit/s", note="", tcp_label="Ax_tcp_I{i}_size1000"))


def _a_order(x: Inputs, col: str, ns2_col: str, ns2_note: str = "", rising: bool = False) -> Measured:
    """A network metric averaged over I: UDP lowest and SCTP highest (``rising``: each
    transport's higher at I = 20 s than at 1 s); ns-2.35's average of ``ns2_col`` beside it."""
    expr = pl.col(col).mean()

    def one(stack: str) -> tuple[str, bool]:
        avg = _a_avg(x, stack, "network", expr)
        m = {t: sum(v) / len(v) for t, v in avg.items()}
        ok = m["udp"] < m["tcp"] < m["sctp"]
        if rising:
            by = means(_a_by_interval(x, stack, "network", expr))
            ok = ok and all(by[(t, "20s")] > by[(t, "1s")] for t in ("udp", "tcp", "sctp"))
        return "; ".join(f"{t.upper()} {with_ci(avg[t])}" for t in ("udp", "tcp", "sctp")), ok
    return views(one, _ns2_a_avg(x, ns2_col, note=f"{ns2_note} (TCP at the message size)"))


def a_routing_load(x: Inputs) -> Measured:
    return _a_order(x, "normalized_routing_load", "NRL", rising=True)


def a_mac_load(x: Inputs) -> Measured:
    return _a_order(x, "mac_load", "MAC load")


def a_drops(x: Inputs) -> Measured:
    return _a_order(x, "total_drops", "drops", " per run, every layer")


def a_delay(x: Inputs) -> Measured:
    def one(stack: str) -> tuple[str, bool]:
        avg = _a_avg(x, stack, "flows", pl.col("packet_delay_mean_s").mean() * 1000)
        m = {t: sum(v) / len(v) for t, v in avg.items()}
        return "; ".join(f"{t.upper()} {with_ci(avg[t])} ms" for t in ("udp", "tcp", "sctp")), m["udp"] < m["sctp"] < m["tcp"]
    return views(one, _ns2_a_avg(x, "delay ms", unit=" ms"))


def a_energy(x: Inputs) -> Measured:
    def one(stack: str) -> tuple[str, bool]:
        by = means(_a_by_interval(x, stack, "network", pl.col("energy_consumed_j_mean").mean()))
        avg = _a_avg(x, stack, "network", pl.col("energy_consumed_j_mean").mean())
        m = {t: sum(v) / len(v) for t, v in avg.items()}
        falls = by[("udp", "20s")] < by[("udp", "1s")]
        text = (f"UDP {num(by[('udp', '1s')])} → {num(by[('udp', '20s')])} J; averaged "
                + ", ".join(f"{t.upper()} {num(m[t])}" for t in ("udp", "tcp", "sctp")))
        return text, falls and m["udp"] == min(m.values())
    udp = _ns2_a(x, "energy J/node")["udp"]
    return views(one, f"UDP {num(udp[0])} → {num(udp[-1])} J" if None not in udp else "—")


# B: TCP as published is the case "TCP (INET)", under the RFC models "TCP (RFC)"; SCTP is the
# same in both views.
B_TCP = {"published": "TCP (INET)", "modern": "TCP (RFC)"}
SPEED = "nodes.mobility.speed"


def _b(x: Inputs, case: str) -> dict[tuple, list[float]]:
    f = x.flows["b"].filter(pl.col("case") == case)
    return per_run(f, [SPEED], pl.col("goodput_kbps").sum())


def _speeds(x: Inputs) -> list[str]:
    vals = x.flows["b"][SPEED].unique().to_list()
    return sorted(vals, key=lambda v: float(re.match(r'\["?([\d.]+)', v).group(1)))


def b_first_data(x: Inputs) -> Measured:
    ts = x.timeseries["b"]
    first = (ts.filter((pl.col("series") == "goodput_kbps") & (pl.col("value") > 0))
             .group_by("point", "run").agg(pl.col("time_s").min())["time_s"].to_list())
    text = f"{with_ci(first)} s (first bin with data)"
    return Measured(text, text, "—", ci(first)[0] > 5)


def b_speed(x: Inputs) -> Measured:
    def one(case: str) -> tuple[str, bool]:
        d = _b(x, case)
        sp = _speeds(x)
        ok = all(overlap(d[(a,)], d[(b,)]) for a in sp for b in sp)
        return f"{case}: " + " / ".join(with_ci(d[(s,)]) for s in sp) + " kbit/s (5 → 70 km/h)", ok
    return views(one, published=B_TCP["published"], modern=B_TCP["modern"])


def _b_loss(x: Inputs, case: str) -> tuple[str, list[float]]:
    """Segment loss of ``case`` in %: its range over the speeds (means) and every run's value."""
    d = per_run(x.flows["b"].filter(pl.col("case") == case), [SPEED], pl.col("segment_loss_rate").mean() * 100)
    allv = [v for vs in d.values() for v in vs]
    return f"{case} {num(min(means(d).values()))}–{num(max(means(d).values()))} % (5 → 70 km/h)", allv


def b_tcp_loss(x: Inputs) -> Measured:
    pub, tcp = _b_loss(x, B_TCP["published"])
    mod, _ = _b_loss(x, B_TCP["modern"])
    return Measured(pub, mod, "—", max(tcp) < 1.0)


def b_sctp_loss(x: Inputs) -> Measured:
    text, sctp = _b_loss(x, "SCTP, 1 stream")
    return Measured(text, text, "—", 30 < ci(sctp)[0] < 70)


def b_ack_overhead(x: Inputs) -> Measured:
    f = x.flows["b"]

    def one(case: str) -> tuple[str, bool]:
        ack = [v for vs in per_run(f.filter(pl.col("case") == case), [SPEED], pl.col("ack_overhead").mean()).values() for v in vs]
        tcp, sctp = means(_b(x, case)), means(_b(x, "SCTP, 1 stream"))
        better = all(sctp[k] > tcp[k] for k in tcp)
        return (f"{case} ACK overhead {with_ci(ack)}; SCTP above TCP at {sum(sctp[k] > tcp[k] for k in tcp)} of {len(tcp)} speeds",
                abs(ci(ack)[0] - 1) < 0.05 and better)
    return views(one, published=B_TCP["published"], modern=B_TCP["modern"])


def b_rtt(x: Inputs) -> Measured:
    f = x.flows["b"]

    def rtt(case: str) -> list[float]:
        return [v for vs in per_run(f.filter(pl.col("case") == case), [SPEED], pl.col("rtt_mean_s").mean() * 1000).values() for v in vs]

    s1, s5 = rtt("SCTP, 1 stream"), rtt("SCTP, 5 streams")
    tail = f"; SCTP 1 stream {with_ci(s1)}, 5 streams {with_ci(s5)} ms"
    pub, mod = rtt(B_TCP["published"]), rtt(B_TCP["modern"])
    ok = ci(pub)[0] < 10 and 50 <= ci(s1)[0] <= 300 and ci(s5)[0] > 500
    return Measured(f"TCP {with_ci(pub)} ms{tail}", f"TCP {with_ci(mod)} ms{tail}", "—", ok)


def b_streams(x: Inputs) -> Measured:
    cases = [f"SCTP, {n} stream" + ("s" if n > 1 else "") for n in range(1, 6)]
    g = {c: _b(x, c) for c in cases}
    sp = _speeds(x)
    ok = all(overlap(g[a][(s,)], g[b][(s,)]) for s in sp for a in cases for b in cases)
    m = {c: sum(means(g[c]).values()) / len(sp) for c in cases}
    text = "goodput averaged over speeds " + " / ".join(num(m[c]) for c in cases) + " kbit/s (1 → 5 streams)"
    return Measured(text, text, "—", ok)


# C: the main flow (role "main"); the published view is ns-2.35's agents as they are, without
# the quirk switches (ns2_quirks), which the verdicts name.
C_SPEEDS = ['["5m/s", "5m/s"]', '["10m/s", "10m/s"]', '["20m/s", "20m/s"]']


def _c(x: Inputs, stack: str, transport: str, col: str, scale: float = 1.0) -> dict[tuple, list[float]]:
    f = x.flows["c"].filter((pl.col("simulation.stack") == stack) & (pl.col("flows.0.transport") == transport)
                            & (pl.col("role") == "main"))
    return per_run(f, ["background.flows", SPEED], pl.col(col).mean() * scale)


def _c_text(d: dict[tuple, list[float]], unit: str) -> str:
    m = means(d)
    return "; ".join(f"bg {bg}: " + "/".join(num(m[(bg, s)]) for s in C_SPEEDS) for bg in (0, 8)) + f" {unit}"


def _ns2_c(x: Inputs, t: str, col: str) -> str:
    vals = {bg: [x.ns2.get(f"C_{t}_v{v}_bg{bg}", {}).get(col) for v in (5, 10, 20)] for bg in (0, 8)}
    if any(v is None for vs in vals.values() for v in vs):
        return "—"
    return "; ".join(f"bg {bg}: " + "/".join(num(v) for v in vs) for bg, vs in vals.items())


def c_tfrc_throughput(x: Inputs) -> Measured:
    def one(stack: str) -> tuple[str, bool]:
        d = _c(x, stack, "tfrc", "throughput_ip_kbps")
        m = means(d)
        low = all(v < 5 for v in m.values())
        rising = all(m[(bg, C_SPEEDS[-1])] > m[(bg, C_SPEEDS[0])] for bg in (0, 8))
        return _c_text(d, "kbit/s (5/10/20 m/s)"), low and rising
    return views(one, _ns2_c(x, "tfrc", "thr kbit/s"))


def c_sctp_throughput(x: Inputs) -> Measured:
    def one(stack: str) -> tuple[str, bool]:
        d = _c(x, stack, "sctp", "throughput_ip_kbps")
        return _c_text(d, "kbit/s"), any(v > 20 for v in means(d).values())
    return views(one, _ns2_c(x, "sctp", "thr kbit/s"))


def c_delay(x: Inputs) -> Measured:
    def one(stack: str) -> tuple[str, bool]:
        tf = means(_c(x, stack, "tfrc", "packet_delay_mean_s", 1000))
        sc = means(_c(x, stack, "sctp", "packet_delay_mean_s", 1000))
        ok = all(tf[(bg, C_SPEEDS[-1])] < tf[(bg, C_SPEEDS[0])] and sc[(bg, C_SPEEDS[-1])] > sc[(bg, C_SPEEDS[0])] for bg in (0, 8))
        ok = ok and all(sc[(8, s)] > sc[(0, s)] for s in C_SPEEDS)
        text = ("TFRC " + "; ".join(f"bg {bg}: " + "/".join(num(tf[(bg, s)]) for s in C_SPEEDS) for bg in (0, 8))
                + " ms; SCTP " + "; ".join(f"bg {bg}: " + "/".join(num(sc[(bg, s)]) for s in C_SPEEDS) for bg in (0, 8)) + " ms")
        return text, ok
    return views(one, f"TFRC {_ns2_c(x, 'tfrc', 'delay ms')} ms; SCTP {_ns2_c(x, 'sctp', 'delay ms')} ms")


def c_conclusion(x: Inputs) -> Measured:
    def one(stack: str) -> tuple[str, bool]:
        thr = {t: sum(means(_c(x, stack, t, "throughput_ip_kbps")).values()) / 6 for t in ("sctp", "tfrc")}
        dl = {t: sum(means(_c(x, stack, t, "packet_delay_mean_s", 1000)).values()) / 6 for t in ("sctp", "tfrc")}
        text = (f"throughput SCTP {num(thr['sctp'])}, TFRC {num(thr['tfrc'])} kbit/s; "
                f"delay SCTP {num(dl['sctp'])}, TFRC {num(dl['tfrc'])} ms (averaged over the six points)")
        return text, thr["sctp"] > thr["tfrc"] and dl["tfrc"] < dl["sctp"]
    return views(one)


# D: at the paper's 128 B; flows of both directions together.
D_T = "flows.0.transport + flows.1.transport"
D_SIZE = "flows.0.app.size + flows.1.app.size"


def _d(x: Inputs, stack: str, size: str = "128B") -> dict[str, dict]:
    f = x.flows["d"].filter((pl.col("simulation.stack") == stack) & (pl.col(D_SIZE) == size))
    out = {}
    for t in f[D_T].unique(maintain_order=True).to_list():
        g = f.filter(pl.col(D_T) == t)
        out[t] = {"delay_ms": (g["packet_delay_mean_s"] * g["rx_segments"]).sum() / max(g["rx_segments"].sum(), 1) * 1000,
                  "jitter_ms": g["jitter_ipdv_s"].mean() * 1000, "sent": g["tx_segments"].sum(), "recv": g["rx_segments"].sum(),
                  "gen": g["tx_packets"].sum(), "bytes": g["tx_ip_bytes"].sum(), "max": g["packet_size_max_b"].max(),
                  "thr": g["throughput_ip_kbps"].mean()}
    return out


def d_delay(x: Inputs) -> Measured:
    def one(stack: str) -> tuple[str, bool]:
        d = _d(x, stack)
        ok = abs(d["udp"]["delay_ms"] - 54) < 0.5 and d["udp"]["jitter_ms"] == min(v["jitter_ms"] for v in d.values())
        ok = ok and d["tcp"]["delay_ms"] == max(v["delay_ms"] for v in d.values())
        return "; ".join(f"{t} {num(v['delay_ms'])}" for t, v in d.items()) + " ms", ok
    ns = "; ".join(f"{t} {num(x.ns2[lab]['delay ms'])}" for t, lab in
                   (("tcp", "Dx_tcp_default"), ("tfrc", "Dx_tfrc_default"), ("dccp-ccid3", "Dx_dccp3_default"))
                   if lab in x.ns2)
    return views(one, ns + " ms (default sizes)" if ns else "—")


def d_counts(x: Inputs) -> Measured:
    def one(stack: str) -> tuple[str, bool]:
        d = _d(x, stack)
        u, t, s = d["udp"], d["tcp"], d["sctp"]
        text = (f"UDP {u['sent']} packets, {u['bytes']:,} B; TCP {t['gen']} generated, {t['sent']} sent, {t['recv']} received, "
                f"{num(t['max'])}-B packets; SCTP {s['sent']} packets, {s['bytes']:,} B, up to {num(s['max'])} B")
        ok = (abs(u["sent"] - 992) <= 10 and t["max"] == 1040 and abs(t["sent"] - 638) <= 64 and abs(s["sent"] - 204) <= 20
              and s["max"] == 1472)
        return text, ok
    ns = "—"
    if "Dx_tcp_default" in x.ns2 and "D_sctp" in x.ns2:
        ns = (f"TCP {num(x.ns2['Dx_tcp_default']['data pkts sent'])} sent, {num(x.ns2['Dx_tcp_default']['recv'])} received "
              f"(default sizes); SCTP {num(x.ns2['D_sctp']['data pkts sent'])} packets")
    return views(one, ns)


def d_throughput(x: Inputs) -> Measured:
    def one(stack: str) -> tuple[str, bool]:
        d = _d(x, stack)
        top = max(d, key=lambda t: d[t]["thr"])
        low = min(d, key=lambda t: d[t]["thr"])
        grows = all(_d(x, stack, "512B")[t]["thr"] > _d(x, stack, "64B")[t]["thr"] for t in d)
        text = (f"highest {top} ({num(d[top]['thr'])} kbit/s), lowest {low} ({num(d[low]['thr'])}); "
                + ("throughput grows with size for every transport" if grows else "throughput does not grow with size for every transport"))
        return text, top == "tcp" and low.startswith("dccp") and grows
    return views(one)


# E: one view (tpsim's models with the paper's SCTP initial cwnd; QualNet's other defaults are
# not modelled).
E_W = "flows.0.sctp.receive_buffer + flows.0.tcp.receive_window"
E_WINDOWS = ["2KB", "4KB", "8KB", "16KB", "32KB", "64KB"]


def _e(x: Inputs, col: str, agg: str = "mean") -> dict[tuple, list[float]]:
    return per_run(x.flows["e"], ["case", E_W], getattr(pl.col(col), agg)())


def e_window(x: Inputs) -> Measured:
    g = means(_e(x, "goodput_kbps"))
    r = means(_e(x, "retransmissions"))
    cases = [c for c in {k[0] for k in g} if c.startswith("SCTP")]
    best = {c: max(E_WINDOWS, key=lambda w: g[(c, w)]) for c in cases}
    n4 = sum(b == "4KB" for b in best.values())
    more = all(r[(c, "64KB")] >= r[(c, "4KB")] for c in cases)
    text = (f"best window per SCTP case: {', '.join(f'{c[6:]}: {best[c]}' for c in sorted(cases, key=lambda c: int(c.split()[1])))}; "
            f"retransmissions at 64 KB ≥ at 4 KB in {'every' if more else 'not every'} case")
    return Measured(text, "one view", "—", n4 == len(cases) and more)


def e_streams(x: Inputs) -> Measured:
    g = means(_e(x, "goodput_kbps"))
    few = ["SCTP, 1 stream", "SCTP, 2 streams", "SCTP, 3 streams"]
    many = ["SCTP, 8 streams", "SCTP, 16 streams"]
    ok = all(g[(m, w)] > g[(f, w)] for w in ("4KB", "8KB") for m in many for f in few)
    text = "; ".join(f"{w}: 1–3 streams {'/'.join(num(g[(c, w)]) for c in few)}, 8/16 {'/'.join(num(g[(c, w)]) for c in many)} kbit/s"
                     for w in ("4KB", "8KB"))
    return Measured(text, "one view", "—", ok)


def e_tcp(x: Inputs) -> Measured:
    d = _e(x, "goodput_kbps")
    g = means(d)
    tcp = [w for w in E_WINDOWS if g[("TCP NewReno", w)] > g[("SCTP, 1 stream", w)]]
    at2 = g[("TCP NewReno", "2KB")] > 1.5 * g[("SCTP, 1 stream", "2KB")]
    text = (f"TCP NewReno above SCTP (1 stream) at {', '.join(tcp) or 'no window'}; at 2 KB "
            f"{num(g[('TCP NewReno', '2KB')])} against {num(g[('SCTP, 1 stream', '2KB')])} kbit/s")
    return Measured(text, "one view", "—", len(tcp) >= 4 and at2)


def e_variants(x: Inputs) -> Measured:
    d = _e(x, "goodput_kbps")
    vs = ["TCP NewReno", "TCP Tahoe", "TCP SACK"]
    ok = all(overlap(d[(a, w)], d[(b, w)]) for w in E_WINDOWS for a in vs for b in vs)
    m = means(d)
    text = "; ".join(f"{v[4:]} {num(sum(m[(v, w)] for w in E_WINDOWS) / 6)}" for v in vs) + " kbit/s averaged over windows"
    return Measured(text, "one view", "—", ok)


FINDINGS = [
    Finding("A1", "a", "TCP's throughput above UDP's at I ≥ 2 s", "TCP 63.2/62.1/22.7/14.6/9.88, UDP 106/52.2/21.6/10.5/5.43 kbit/s",
            a_throughput, "cause in the paper: ns-2's padding (each 256-byte report a 1040-byte TCP segment, counted in IP "
            "bytes) puts TCP above UDP from I = 5 s; at I = 2 s neither tpsim nor ns-2.35 reproduces it"),
    Finding("A2", "a", "averaged over I: throughput UDP > TCP > SCTP", "39.1 > 34.5 > 11.8 kbit/s", a_average_order,
            "cause in the paper: its SCTP delivered more than ns-2.35's agent does on this traffic"),
    Finding("A3", "a", "routing load UDP ≪ TCP < SCTP, rising with I", "averaged 8.66 / 56.5 / 82.0", a_routing_load,
            "cause in tpsim: AODV's routing packets for TCP at I = 20 s are 10 % under ns-2.35's (docs/models.md)"),
    Finding("A4", "a", "MAC load UDP < TCP < SCTP", "32.1 / 118 / 161", a_mac_load,
            "cause in tpsim: see A3"),
    Finding("A5", "a", "dropped packets UDP ≪ TCP < SCTP", "≈ 8,100 / 56,000 / 83,000", a_drops,
            "cause in the paper: ns-2 counts every drop event of every layer, collisions at every receiver; "
            "tpsim's total_drops counts packets, so only the order compares"),
    Finding("A6", "a", "delay UDP < SCTP < TCP (averaged)", "29 / 189 / 370 ms", a_delay,
            "cause in the paper: ns-2.35 run as published does not order them so either, so they come from a "
            "setting the paper does not state"),
    Finding("A7", "a", "energy falls with I; UDP lowest on average", "UDP 1.65 → 1.24 J; 1.37 against 1.43, 1.42 J", a_energy,
            "cause in the paper: ns-2.35 with the same MICA2-class powers gives the same flat 2.22 J (idle "
            "listening at the receive power dominates); a falling energy needs a power model the paper does not state"),
    Finding("B1", "b", "first data after about 9 s (OLSR convergence)", "≈ 9 s", b_first_data,
            "cause in tpsim: not identified (an open defect): tpsim's OLSR has its two-hop routes after the first "
            "HELLO exchanges, about 2 s; how INET's OLSR starts is not checked"),
    Finding("B2", "b", "throughput does not depend on speed", "flat over 5–70 km/h", b_speed,
            "cause in the paper: its endpoints reached each other directly (it observed the relays unused), which "
            "its stated settings do not give: at INET's default sensitivity (-85 dBm), 4.5 mW at 2.4 GHz reaches "
            "about 375 m in free space, so tpsim's 500 m path takes two hops, which relays at 70 km/h break more often"),
    Finding("B3", "b", "TCP segment loss ≈ 0.35 %, flat", "0.35 %", b_tcp_loss,
            "cause in tpsim: not identified (an open defect)"),
    Finding("B4", "b", "SCTP segment loss ≈ 48.6 %", "48.6 % (the paper doubts its own statistic)", b_sctp_loss,
            "cause in the paper: a statistic the paper itself doubts; no SCTP in tpsim loses near half its packets here"),
    Finding("B5", "b", "TCP ACK overhead ≈ 100 %; SCTP more throughput than TCP", "≈ 1; SCTP > TCP", b_ack_overhead,
            "cause in tpsim: not identified (an open defect)"),
    Finding("B6", "b", "RTT: TCP < 10 ms; SCTP 50–300 ms (1 stream), ≈ 1 s (5 streams)", "< 10 ms; 50–300 ms; ≈ 1 s", b_rtt,
            "cause in the paper: see B2 (tpsim's two hops; its TCP's 7,504-byte window queues at the relay)"),
    Finding("B7", "b", "the number of streams changes neither throughput nor loss", "no change", b_streams,
            "cause in tpsim: not identified (an open defect)"),
    Finding("C1", "c", "TFRC throughput low, rising with speed", "1.13/1.25/3.75 (bg 0), 1.23/1.23/3.49 (bg 8) kbit/s",
            c_tfrc_throughput, "cause in the paper: ns-2's AODV ignores TFRC's MAC failures, which keeps TFRC on dead "
            "routes and its throughput low (ns-2.35 as published: 2.6–4.6 kbit/s; tpsim with ns2_quirks = "
            "[\"aodv-data-packet-list\"]: PDR 0.16–0.45; docs/models.md)"),
    Finding("C2", "c", "SCTP throughput far above the offered 10 kbit/s", "192.9/11.5/11.5 (bg 0), 0.76/22.7/22.5 (bg 8) kbit/s",
            c_sctp_throughput, "cause in the paper: 10 kbit/s of 1000-byte messages is at most about 10.5 kbit/s of "
            "IP bytes, so its 192.9 and 22.7 kbit/s are a measurement artefact; ns-2.35's SCTP agent stalls on "
            "this traffic (ns2_quirks = [\"sctp-stall\"])"),
    Finding("C3", "c", "delay: TFRC falls with speed; SCTP rises with speed and with background",
            "TFRC 193/147/33.5, 168/159/43.5 ms; SCTP 78.6/79.5/160, 154/221/255 ms", c_delay,
            "cause in the paper: TFRC's part follows ns-2's AODV artefact (C1): ns-2.35 as published, with it, has "
            "TFRC's delay falling with speed without background; SCTP's part cannot be checked, ns-2.35's SCTP agent "
            "stalling on this traffic (C2)"),
    Finding("C4", "c", "SCTP more throughput, TFRC less delay", "conclusion", c_conclusion,
            "cause in the paper: see C1–C3"),
    Finding("D1", "d", "delay UDP 54 ms (lowest jitter); TCP highest", "UDP 54, TCP 611 (growing), SCTP 82.0, TFRC 82.3, DCCP 52.8 ms",
            d_delay, "cause in the paper: its TFRC's 82.25 ms is one 1032-byte packet on an idle link (32.25 + 50 ms), "
            "so its TFRC sent far fewer packets than ns-2.35's Agent/TFRC, whose padded packets overflow the link "
            "(757 ms in ns-2.35, 1,044 ms in tpsim): as published TFRC, not TCP, has the highest delay; its DCCP's "
            "52.75 ms is Requests only (ns2_quirks = [\"dccp-no-listen\"])"),
    Finding("D2", "d", "packet counts and sizes", "UDP 992, 126,976 B; TCP 674/638/634, 1,040 B; SCTP 204, 150,808 B, ≤ 1,472 B",
            d_counts, "cause in the paper: its SCTP sent 204 packets where ns-2.35's Agent/SCTP sends 118 (tpsim 116), "
            "so its SCTP agent or settings differ from ns-2.35's in a way the paper does not state; its TCP's sent "
            "and received counts and UDP's are within 3 % of ns-2.35's and tpsim's"),
    Finding("D3", "d", "TCP highest throughput, DCCP lowest; both grow with packet size", "TCP highest, DCCP lowest",
            d_throughput, "cause in the paper: ns-2's padding makes TCP's and TFRC's packets 1 KB whatever the "
            "message size, so neither's IP throughput grows with it, and TFRC's overflowing link gives it the "
            "highest (D1)"),
    Finding("E1", "e", "a 4 KB window gives the best SCTP throughput; larger windows more retransmissions", "4 KB best",
            e_window, "cause in tpsim: not identified (an open defect); QualNet's SCTP and TCP defaults other than "
            "the paper's initial cwnd are not modelled"),
    Finding("E2", "e", "8 and 16 streams beat 1–3 streams at 4 and 8 KB", "8/16 > 1–3", e_streams,
            "cause in tpsim: not identified (an open defect): the number of streams moves SCTP's goodput by a few "
            "per cent at most; QualNet's SCTP defaults other than the initial cwnd are not modelled"),
    Finding("E3", "e", "TCP slightly above SCTP; at 2 KB TCP much better", "TCP ≳ SCTP; TCP ≫ SCTP at 2 KB", e_tcp,
            "cause in tpsim: not identified (an open defect): TCP is above SCTP at every window, but at 2 KB by "
            "a fifth at most, not by far; QualNet's TCP defaults are not modelled"),
    Finding("E4", "e", "TCP NewReno, Tahoe and SACK perform alike", "alike", e_variants,
            "cause in tpsim: not identified (an open defect)"),
]


# --- the table -----------------------------------------------------------------------------


def load(dirs: dict[str, Path]) -> Inputs:
    """The tables of each study's output directory (study letter -> directory)."""
    import tpsim

    x = Inputs({}, {}, {}, {})
    for s, d in dirs.items():
        res = tpsim.Results.read(d)
        x.flows[s], x.network[s] = res.flows, res.network
        if s == "b":
            x.timeseries[s] = res.timeseries.filter(pl.col("series") == "goodput_kbps")
    return x


def table(x: Inputs, studies: Sequence[str]) -> str:
    """The verdict table (Markdown) of the findings of ``studies``."""
    rows = ["| finding | the paper | tpsim, published view | tpsim, modern view | ns-2.35 | verdict |",
            "|---|---|---|---|---|---|"]
    for f in FINDINGS:
        if f.study not in studies:
            continue
        m = f.measure(x)
        verdict = "reproduced" if m.holds else f"not reproduced, {f.otherwise}"
        rows.append(f"| {f.id}: {f.claim} | {f.paper} | {m.published} | {m.modern} | {m.ns2} | {verdict} |")
    return "\n".join(rows) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", type=Path, default=ROOT / "benches" / ".cache" / "studies")
    ap.add_argument("--studies", default="a,b,c,d,e")
    ap.add_argument("--run", action="store_true", help="run the studies first (stored runs are reused)")
    ap.add_argument("--ns2-readme", type=Path, default=ROOT.parent / "shared" / "ns2" / "README.md")
    ap.add_argument("--doc", default=str(ROOT / "docs" / "studies.md"))
    a = ap.parse_args(argv)
    studies = [s.strip() for s in a.studies.split(",") if s.strip()]
    if a.run:
        for s in studies:
            subprocess.run([sys.executable, "-m", "tpsim", "study", s, "-o", str(a.results / s), "-q"], check=True, cwd=ROOT)
    x = load({s: a.results / s for s in studies})
    x.ns2 = ns2_rows(a.ns2_readme)
    text = table(x, studies)
    if a.doc == "-":
        sys.stdout.write(text)
        return 0
    doc = Path(a.doc)
    old = doc.read_text(encoding="utf-8")
    if BEGIN not in old or END not in old:
        sys.exit(f"{doc}: no {BEGIN} ... {END} markers")
    head, rest = old.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    doc.write_text(head + BEGIN + "\n" + text + END + tail, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
