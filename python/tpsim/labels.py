"""Human labels for figures and tables: metric names with units, swept keys with a short name
and unit, and swept values with units (``"5m/s"``, ``"20s"``, ``["5m/s", "5m/s"]``) read as
numbers so that they get a numeric axis.

Everything here is pure Python and deterministic (no matplotlib): the figure code records the
labels and x values it used, and the tests check them.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from . import _tpsim
from .metrics import MetricDisplay, metric_display, metric_name, unit_of  # noqa: F401  (also tpsim.labels' names, as before)

#: Unit families of the scenario format, as the engine defines them (``_tpsim.unit_families``):
#: family -> unit -> factor to the family's SI unit (s, bit/s, B, m, W, Hz, m/s, J, rad).
UNIT_FAMILIES: dict[str, dict[str, float]] = {fam: dict(units) for fam, _, units in _tpsim.unit_families()}
#: How a unit is written on an axis (the scenario's spelling otherwise).
_UNIT_DISPLAY = {"bps": "bit/s", "kbps": "kbit/s", "Mbps": "Mbit/s", "Gbps": "Gbit/s", "us": "µs", "KB": "kB"}
#: Display units of each family, largest first: values are shown in the largest unit in
#: which the largest value is at least 1.
_LADDERS: dict[str, list[tuple[str, float]]] = {
    "duration": [("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)],
    "rate": [("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3), ("bit/s", 1.0)],
    "size": [("MB", 1e6), ("kB", 1e3), ("B", 1.0)],
    "distance": [("km", 1e3), ("m", 1.0)],
    "power": [("W", 1.0), ("mW", 1e-3), ("µW", 1e-6), ("nW", 1e-9), ("pW", 1e-12)],
    "frequency": [("GHz", 1e9), ("MHz", 1e6), ("kHz", 1e3), ("Hz", 1.0)],
    "speed": [("m/s", 1.0)],
    "energy": [("kJ", 1e3), ("J", 1.0), ("mJ", 1e-3)],
    "angle": [("deg", math.pi / 180)],
}
_UNIT_OF: dict[str, str] = {u: fam for fam, units in UNIT_FAMILIES.items() for u in units}
_QUANTITY = re.compile(r"\s*([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)\s*([A-Za-zµ/]+)\s*")


@dataclass(frozen=True)
class Quantity:
    """A value with a unit: ``number`` as written, ``unit`` as written, ``base`` in the
    family's base unit (s, bit/s, B, m, W, Hz, m/s, J)."""

    number: float
    unit: str
    family: str
    base: float


def parse_quantity(value: Any) -> Optional[Quantity]:
    """``"5m/s"`` -> Quantity(5, "m/s", "speed", 5.0); ``None`` for anything else."""
    if not isinstance(value, str):
        return None
    m = _QUANTITY.fullmatch(value)
    if not m or m.group(2) not in _UNIT_OF:
        return None
    number = float(m.group(1))
    if not math.isfinite(number):
        return None
    fam = _UNIT_OF[m.group(2)]
    return Quantity(number, m.group(2), fam, number * UNIT_FAMILIES[fam][m.group(2)])


def decode_cell(value: Any) -> Any:
    """A swept value as stored in a table cell: lists and tables are JSON text there
    (:func:`tpsim.sweep.point_value`); they come back as lists and dicts."""
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _single(value: Any) -> Any:
    """A range written as two equal bounds (``["5m/s", "5m/s"]``, the study's constant speed)
    is that one value."""
    if isinstance(value, list) and len(value) == 2 and value[0] == value[1]:
        return value[0]
    return value


@dataclass
class Axis:
    """How a column's values are drawn on an axis.

    Attributes:
        numeric: every value is a number (or a quantity of one unit family).
        positions: each value's position (its number in ``unit``; None if not numeric).
        unit: the axis unit ("" for plain numbers and categories).
        ticklabels: each value as a tick label (the number without float noise, or the
            category's text).
    """

    numeric: bool
    positions: list[Optional[float]]
    unit: str
    ticklabels: list[str]


def fmt_number(v: float) -> str:
    """A number without float noise: ``30.000000000000004`` -> ``30``, ``0.1`` -> ``0.1``."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return str(v)
    if not math.isfinite(v):
        return str(v)
    s = f"{v:.6g}"
    if "e" in s:
        mant, exp = s.split("e")
        return f"{mant}e{int(exp)}"
    return s


def fmt_seconds(ns: int) -> str:
    """A duration in integer nanoseconds as seconds, exactly and without float noise
    (``30000000000`` -> ``"30s"``, ``20166666636`` -> ``"20.166666636s"``)."""
    ns = int(ns)
    whole, frac = divmod(abs(ns), 10**9)
    text = str(whole) + (f".{frac:09d}".rstrip("0") if frac else "")
    return ("-" if ns < 0 else "") + text + "s"


def axis_for(values: Sequence[Any]) -> Axis:
    """The axis of a column's distinct values (in order): numbers stay numbers; quantities of
    one unit family become numbers in one display unit (the values' own unit when they all
    share it, else the family's most readable one); two-element ranges with equal bounds are
    that value; anything else is categorical."""
    vals = [_single(decode_cell(v)) for v in values]
    if vals and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
        nums = [float(v) for v in vals]
        if all(math.isfinite(n) for n in nums):
            return Axis(True, nums, "", [fmt_number(v) for v in vals])
    qs = [parse_quantity(v) for v in vals]
    if vals and all(q is not None for q in qs) and len({q.family for q in qs}) == 1:  # type: ignore[union-attr]
        units = {q.unit for q in qs}  # type: ignore[union-attr]
        if len(units) == 1:
            unit = next(iter(units))
            pos = [q.number for q in qs]  # type: ignore[union-attr]
        else:
            fam = qs[0].family  # type: ignore[union-attr]
            top = max(abs(q.base) for q in qs)  # type: ignore[union-attr]
            unit, factor = next(((u, f) for u, f in _LADDERS[fam] if top >= f), _LADDERS[fam][-1])
            pos = [q.base / factor for q in qs]  # type: ignore[union-attr]
        return Axis(True, pos, _UNIT_DISPLAY.get(unit, unit), [fmt_number(p) for p in pos])
    return Axis(False, [None] * len(vals), "", [value_text(v) for v in values])


def value_text(value: Any) -> str:
    """A swept value as short text: ``["5m/s", "5m/s"]`` -> ``5m/s``, ``["5m/s", "10m/s"]``
    -> ``5m/s–10m/s``, a table by its ``kind``, numbers without float noise."""
    v = decode_cell(value)
    if isinstance(v, list) and len(v) == 2 and all(isinstance(e, str) for e in v):
        return v[0] if v[0] == v[1] else f"{v[0]}–{v[1]}"
    if isinstance(v, dict):
        return str(v.get("kind", json.dumps(v, separators=(",", ":"))))
    if isinstance(v, float):
        return fmt_number(v)
    if isinstance(v, list):
        return "[" + ", ".join(value_text(e) for e in v) + "]"
    return str(v)


def size_text(n: float) -> str:
    """A size in bytes for people: ``"512 kB"``, ``"3.2 MB"``, ``"1.5 GB"`` (SI units)."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


#: Short names of swept keys: (pattern of the dotted key, name). ``{i}`` in a name is the
#: key's first array index (shown only when it is not 0).
_KEY_NAMES: list[tuple[str, str]] = [
    (r"case", "case"),
    (r"nodes\.mobility\.speed", "node speed"),
    (r"nodes\.mobility\.pause", "pause time"),
    (r"nodes\.count", "nodes"),
    (r"sensors\.interval", "reporting interval"),
    (r"sensors\.size", "report size"),
    (r"sensors\.transport", "transport"),
    (r"background\.flows", "background flows"),
    (r"background\.transport", "background transport"),
    (r"background\.(rate|interval|size)", "background {leaf}"),
    (r"flows\.(\d+)\.transport", "transport{flow}"),
    (r"flows\.(\d+)\.app\.size", "message size{flow}"),
    (r"flows\.(\d+)\.app\.interval", "send interval{flow}"),
    (r"flows\.(\d+)\.app\.rate", "sending rate{flow}"),
    (r"flows\.(\d+)\.app\.kind", "application{flow}"),
    (r"flows\.(\d+)\.app", "application{flow}"),
    (r"flows\.(\d+)\.dst", "destination node{flow}"),
    (r"flows\.(\d+)\.src", "source node{flow}"),
    (r"links\.(\d+)\.rate", "link rate{link}"),
    (r"links\.(\d+)\.delay", "link delay{link}"),
    (r"links\.(\d+)\.queue", "queue limit{link}"),
    (r"links\.(\d+)\.loss", "loss probability{link}"),
    (r"flows\.(\d+)\.app\.streams", "streams{flow}"),
    (r"flows\.(\d+)\.copies", "competing flows{flow}"),
    (r"flows\.(\d+)\.stagger", "start spacing{flow}"),
    (r"links\.(\d+)\.aqm", "queue discipline{link}"),
    (r"radio\.aqm", "queue discipline"),
    (r"flows\.(\d+)\.sctp\.receive_buffer", "receive window{flow}"),
    (r"flows\.(\d+)\.tcp\.receive_window", "receive window{flow}"),
    (r"simulation\.stack", "stack"),
    (r"radio\.data_rate", "data rate"),
    (r"radio\.tx_range", "transmission range"),
    (r"radio\.standard", "802.11 standard"),
    (r"routing\.protocol", "routing protocol"),
    (r"energy\.initial", "initial energy"),
    (r"simulation\.duration", "duration"),
]


def key_name(key: str, flow_index: bool = False) -> str:
    """A swept key's short name: ``nodes.mobility.speed`` -> ``node speed``,
    ``flows.1.app.size`` -> ``message size (flow 1)`` (flow 0 is named only with
    ``flow_index``); a linked key ``"a + b + ..."``: the name of its first key, without flow
    or link number (the others follow it: ``flows.0.app.size + flows.1.app.size +
    flows.0.tcp.packet_size`` -> ``message size``); other keys: the last name, spaced."""
    if "+" in key:
        return _key_name(key.split("+")[0].strip(), False, False)
    return _key_name(key, flow_index, True)


def _key_name(key: str, flow_index: bool, numbered: bool) -> str:
    for pat, name in _KEY_NAMES:
        m = re.fullmatch(pat, key)
        if m:
            idx = next((g for g in m.groups() if g and g.isdigit()), None)
            leaf = key.rsplit(".", 1)[-1].replace("_", " ")
            if not numbered:
                idx = None
            shown = idx is not None and (idx != "0" or flow_index)
            return name.format(flow=f" (flow {idx})" if shown else "",
                               link=f" (link {idx})" if idx not in (None, "0") else "", leaf=leaf)
    if key == "flow_direction":
        return "flow direction"
    if key == "transport":
        return "transport"
    if key == "role":
        return "flow role"
    segs = [s for s in key.split(".") if not s.isdigit()]
    return (segs[-1] if segs else key).replace("_", " ")


def key_label(key: str, values: Sequence[Any], flow_index: bool = False) -> str:
    """An axis label for a swept key: its short name and, for quantities, the unit:
    ``node speed (m/s)`` (``flow_index``: as :func:`key_name`)."""
    ax = axis_for(values)
    name = key_name(key, flow_index)
    return f"{name} ({ax.unit})" if ax.unit else name


def did_you_mean(name: str, choices: list[str]) -> str:
    """`` (did you mean A or B?)``: choices whose dotted key or short name contains ``name``
    (``speed`` -> ``nodes.mobility.speed``), then close spellings; empty if none."""
    import difflib

    low = name.lower()
    close = [c for c in choices if low and (low in c.lower().split(".") or low in key_name(c).lower().split())]
    close += [c for c in difflib.get_close_matches(name, choices, n=3, cutoff=0.5) if c not in close]
    close = close[:3]
    return f" (did you mean {' or '.join(close)}?)" if close else ""
