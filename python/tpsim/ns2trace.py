"""ns-2 trace files from tpsim's packet trace (``[output] ns2_trace``, docs/ns2-trace.md).

The engine records the packet trace with the hop events and columns the ns-2 formats need
(``uid``, ``hop``, ``src``, ``sport``, ``dst``, ``dport``, ``ttl``, ``ns2_type``,
``message``); this module writes one run's rows as text in one of three formats:

* ``"old"``: ns-2's old (CMU) wireless format,
  ``s 1.000000000 _0_ AGT  --- 0 cbr 540 [0 0 0 0] ------- [0:49152 3:1024 64 0] [0] 0 0``;
* ``"new"``: the wireless format of ns-2's ``use-newtrace`` (``-t`` tag/value pairs);
* ``"wired"``: the wired format, ``+ 0.1 0 1 cbr 128 ------- 0 0.49152 1.1024 0 0``.

Every line is made from one trace row, in row order (the engine's event order), so the same
run always gives the same bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator, Optional, Union

import polars as pl

#: The formats :func:`lines` writes.
FORMATS = ("old", "new", "wired")

#: The columns the writer needs besides the packet trace's own.
NS2_COLUMNS = ("uid", "hop", "src", "sport", "dst", "dport", "ttl", "ns2_type", "message")

#: tpsim's initial IP TTL (tpsim_wire::ip::DEFAULT_TTL): ns-2's "number of forwards" is
#: written as 64 - TTL for packets of a transport.
DEFAULT_TTL = 64

#: Drop reason -> (ns-2 trace layer, ns-2 reason code). ns-2 has no code for energy, the
#: "down" reasons and the queue disciplines': they are tpsim's own (docs/ns2-trace.md).
DROPS = {
    "queue": ("IFQ", "IFQ"),
    "arp": ("IFQ", "ARP"),
    "queue_timeout": ("IFQ", "TOUT"),
    "mac_retry": ("MAC", "RET"),
    "link_error": ("MAC", "ERR"),
    "no_route": ("RTR", "NRTE"),
    "ttl": ("RTR", "TTL"),
    "link_break": ("RTR", "CBK"),
    "energy": ("MAC", "EGY"),
    "link_down": ("IFQ", "DWN"),
    "interface_down": ("IFQ", "DWN"),
    "node_down": ("IFQ", "DWN"),
    "aqm_early": ("IFQ", "AQM"),
    "aqm_forced": ("IFQ", "AQM"),
    "aqm_sojourn": ("IFQ", "AQM"),
}

#: (event, layer) -> (ns-2 event letter, ns-2 trace layer) of the wireless formats; rows not
#: listed (ARP at the link layer, which the MAC rows show, and the wired hop events) are
#: not written.
WIRELESS = {
    ("send", "transport"): ("s", "AGT"),
    ("receive", "transport"): ("r", "AGT"),
    ("send", "ip"): ("s", "RTR"),
    ("receive", "ip"): ("r", "RTR"),
    ("forward", "ip"): ("f", "RTR"),
    ("mac_send", "mac"): ("s", "MAC"),
    ("mac_receive", "mac"): ("r", "MAC"),
}

#: tpsim event -> ns-2 wired event letter.
WIRED = {"enqueue": "+", "dequeue": "-", "arrive": "r", "drop": "d"}

#: AODV message type numbers (RFC 3561 §5; ns-2 writes a HELLO's as 0x1).
AODV_TYPES = {"REQUEST": 0x2, "REPLY": 0x4, "ERROR": 0x8, "RREP-ACK": 0x10, "HELLO": 0x1}
#: OLSR message type numbers (RFC 3626 §18.4).
OLSR_TYPES = {"HELLO": 1, "TC": 2}

_MAC_CONTROL = ("RTS", "CTS", "ACK")


def has_ns2_columns(trace: pl.DataFrame) -> bool:
    """Whether ``trace`` was recorded with ``[output] ns2_trace`` (has the ns-2 columns)."""
    return all(c in trace.columns for c in NS2_COLUMNS)


def _time9(t: float) -> str:
    """Seconds with 9 decimals (the trace's nanoseconds, exactly)."""
    ns = round(t * 1e9)
    return f"{ns // 1_000_000_000}.{ns % 1_000_000_000:09d}"


def _time_short(t: float) -> str:
    """Seconds as the wired format writes them: no trailing zeros (``0.1``, ``10``)."""
    s = _time9(t).rstrip("0")
    return s[:-1] if s.endswith(".") else s


def _n(v: Optional[int], none: int = -1) -> int:
    return none if v is None else v


def _hops(r: dict) -> int:
    """ns-2's "number of forwards": routers passed so far, from the TTL (transport packets)."""
    return max(0, DEFAULT_TTL - r["ttl"]) if r["kind"] in ("data", "transport") else 0


def _mac_header(r: dict, ev: str) -> tuple[int, int, int]:
    """(destination, source, ethertype) of the 802.11 header of a MAC row (-1: broadcast)."""
    ptype = r["ns2_type"]
    if ptype in _MAC_CONTROL:
        return _n(r["dst"]), _n(r["src"]), 0
    # A DATA frame: to the next hop (sent, or discarded by the sender's MAC) or to this
    # node (received), or broadcast.
    sent = ev != "r"
    broadcast = r["dst"] is None or (sent and r["hop"] is None)
    if sent:
        dst, src = (-1 if broadcast else r["hop"]), r["node"]
    else:
        dst, src = (-1 if broadcast else r["node"]), _n(r["hop"])
    return dst, src, 0x806 if ptype == "ARP" else 0x800


def _mac_hex(v: int) -> str:
    return "ffffffff" if v < 0 else f"{v:x}"


def _next_hop(r: dict, ev: str, layer: str) -> int:
    """The IP part's next hop: the receiver of a MAC send or discard, this node for what it
    receives."""
    if layer == "MAC" and ev != "r":
        return _n(r["hop"], 0)
    if ev == "r":
        return r["node"]
    return 0


def _drop_layer(reason: Optional[str]) -> tuple[str, str]:
    return DROPS.get(reason or "", ("IFQ", "---"))


def _old_line(r: dict, ev: str, layer: str, why: str) -> str:
    ptype = r["ns2_type"]
    head = f"{ev} {_time9(r['time_s'])} _{r['node']}_ {layer:>3} {why:>4} {r['uid']} {ptype} {r['size_b']}"
    if layer == "MAC":
        d, s, et = _mac_header(r, ev)
        mac = f"[0 {_mac_hex(d)} {_mac_hex(s)} {et:x}]"
    else:
        mac = "[0 0 0 0]"
    if ptype in _MAC_CONTROL:
        return f"{head} {mac}"
    msg = r["message"] or ""
    if ptype == "ARP":
        dst = _n(r["dst"])
        return f"{head} {mac} ------- [{msg} {r['src']}/{r['src']} {max(dst, 0) if msg == 'REPLY' else 0}/{dst}]"
    ip = f"[{_n(r['src'])}:{r['sport']} {_n(r['dst'])}:{r['dport']} {r['ttl']} {_next_hop(r, ev, layer)}]"
    seq = _n(r["packet"], 0)
    if ptype == "AODV":
        tail = f"[0x{AODV_TYPES.get(msg, 0):x}] ({msg})"
    elif ptype == "OLSR":
        tail = f"[0x{OLSR_TYPES.get(msg, 0):x}] ({msg})"
    elif ptype in ("tcp", "ack"):
        tail = f"[{seq} 0] {_hops(r)} 0"
    else:
        tail = f"[{seq}] {_hops(r)} 0"
    return f"{head} {mac} ------- {ip} {tail}"


def _new_line(r: dict, ev: str, layer: str, why: str) -> str:
    ptype = r["ns2_type"]
    node = r["node"]
    if layer == "MAC" and ev != "r":
        hd = _n(r["hop"], -2)
    elif ev == "r":
        hd = node
    else:
        hd = -2
    if layer == "MAC":
        d, s, et = _mac_header(r, ev)
        mac = f"-Ma 0 -Md {_mac_hex(d)} -Ms {_mac_hex(s)} -Mt {et:x}"
    else:
        mac = "-Ma 0 -Md 0 -Ms 0 -Mt 0"
    head = (f"{ev} -t {_time9(r['time_s'])} -Hs {node} -Hd {hd} -Ni {node} -Nx 0.00 -Ny 0.00 -Nz 0.00 "
            f"-Ne -1.000000 -Nl {layer} -Nw {why} {mac}")
    if ptype in _MAC_CONTROL:
        return head
    msg = r["message"] or ""
    fid = _n(r["flow"])
    ip = (f"-Is {_n(r['src'])}.{r['sport']} -Id {_n(r['dst'])}.{r['dport']} -It {ptype} -Il {r['size_b']} "
          f"-If {fid} -Ii {r['uid']} -Iv {r['ttl']}")
    seq = _n(r["packet"], 0)
    if ptype == "AODV":
        tail = f"-P aodv -Pt 0x{AODV_TYPES.get(msg, 0):x} -Pc {msg}"
    elif ptype == "OLSR":
        tail = f"-P olsr -Pt 0x{OLSR_TYPES.get(msg, 0):x} -Pc {msg}"
    elif ptype == "ARP":
        dst = _n(r["dst"])
        tail = f"-P arp -Po {msg} -Pms {r['src']} -Ps {r['src']} -Pmd {max(dst, 0) if msg == 'REPLY' else 0} -Pd {dst}"
    elif ptype in ("tcp", "ack"):
        tail = f"-Pn tcp -Ps {seq} -Pa 0 -Pf {_hops(r)} -Po 0"
    else:
        tail = f"-Pn {ptype} -Pi {seq} -Pf {_hops(r)} -Po 0"
    return f"{head} {ip} {tail}"


def _wired_line(r: dict, ev: str) -> str:
    node, hop = r["node"], _n(r["hop"])
    frm, to = (hop, node) if ev == "r" else (node, hop)
    return (f"{ev} {_time_short(r['time_s'])} {frm} {to} {r['ns2_type']} {r['size_b']} ------- {_n(r['flow'])} "
            f"{_n(r['src'])}.{r['sport']} {_n(r['dst'])}.{r['dport']} {_n(r['packet'], 0)} {r['uid']}")


def lines(trace: pl.DataFrame, fmt: str = "old") -> Iterator[str]:
    """The ns-2 trace lines (without newlines) of one run's packet trace ``trace`` (rows in
    the engine's order, with the ns-2 columns) in format ``fmt`` (``"old"``, ``"new"`` or
    ``"wired"``).

    Raises:
        ValueError: for an unknown format, or a trace recorded without ``[output] ns2_trace``.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown ns-2 trace format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if not has_ns2_columns(trace):
        raise ValueError("this packet trace has no ns-2 columns: record it with [output] ns2_trace = "
                         "\"old\", \"new\" or \"wired\" (or --set output.ns2_trace=old)")
    for r in trace.iter_rows(named=True):
        event = r["event"]
        if fmt == "wired":
            ev = WIRED.get(event)
            if ev is not None:
                yield _wired_line(r, ev)
            continue
        if event == "drop":
            layer, why = _drop_layer(r["reason"])
            ev = "D" if fmt == "old" else "d"
        else:
            m = WIRELESS.get((event, r["layer"]))
            if m is None:
                continue
            (ev, layer), why = m, "---"
        yield _old_line(r, ev, layer, why) if fmt == "old" else _new_line(r, ev, layer, why)


def write(trace: pl.DataFrame, path: Union[str, Path], fmt: str = "old") -> int:
    """Writes :func:`lines` of one run's ``trace`` to ``path`` (``\\n`` line ends, ASCII);
    returns the number of lines.

    Raises:
        ValueError: as :func:`lines`.
        OSError: if the file cannot be written.
    """
    n = 0
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with open(p, "w", encoding="ascii", newline="\n") as f:
        for line in lines(trace, fmt):
            f.write(line)
            f.write("\n")
            n += 1
    return n


def default_format(trace: pl.DataFrame) -> str:
    """``"wired"`` for a trace without radio frames (a wired scenario), else ``"old"``."""
    return "old" if trace.filter(pl.col("event") == "mac_send").height else "wired"


def run_trace(trace: Any, point: int = 0, run: int = 0) -> Any:
    """The rows of one run (``point``, ``run``) of a results' packet trace (a DataFrame or a
    LazyFrame, returned as the same), in their order."""
    return trace.filter((pl.col("point") == point) & (pl.col("run") == run))


def file_name(point: int, run: int) -> str:
    """Where a results directory keeps run (``point``, ``run``)'s ns-2 trace, relative to it."""
    return f"ns2/p{point}-run{run}.tr"
