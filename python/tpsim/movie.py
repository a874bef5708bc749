"""The network movie: one run of ``animation.parquet`` (``[output] animation = true``) as a
self-contained HTML player (inline SVG and JavaScript, no network access): nodes moving,
their radio ranges on hover, the hops packets took (coloured by flow, fading over
:data:`TRAIL_S`), drops ringed in the colour of their reason, next-hop changes, nodes that
die or go down, play/pause/seek/speed, and a plot of each flow's delivered throughput with
a time cursor shared with the map (click the plot to seek). ``tpsim animate DIR`` writes it
alone; the report embeds it. Same table, same page: nothing in it depends on the time or
place it was made."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Optional

import polars as pl

#: Version of the player's data.
MOVIE_FORMAT = 1
#: Seconds of simulated time over which a hop stays drawn, fading.
TRAIL_S = 2.0
#: The plot's throughput is the mean over this many simulated seconds (at least a frame).
PLOT_MEAN_S = 5.0
#: Playback speeds offered (simulated seconds per second), and the one selected at first.
SPEEDS = (1, 2, 5, 10, 20, 50)
DEFAULT_SPEED = 10
#: Flow colours: Okabe-Ito (as the figures), then four of Paul Tol's muted scheme; cycled.
FLOW_COLORS = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
               "#882255", "#44AA99", "#999933", "#AA4499"]
#: Colour of each drop reason (the network table's ``drops_<reason>`` suffixes): the eight of
#: Okabe-Ito, a grey, Paul Tol's wine and indigo, any two at least 20 apart in CIEDE2000 (the
#: three "down" reasons share one, as do the three of the queue disciplines).
REASON_COLORS = {
    "queue": "#E69F00", "mac_retry": "#D55E00", "link_break": "#0072B2", "no_route": "#CC79A7", "ttl": "#777777",
    "energy": "#000000", "link_error": "#009E73", "queue_timeout": "#F0E442", "arp": "#56B4E9",
    "link_down": "#882255", "interface_down": "#882255", "node_down": "#882255",
    "aqm_early": "#332288", "aqm_forced": "#332288", "aqm_sojourn": "#332288",
}


class NoMovie(ValueError):
    """The results hold no movie trace (the run did not set ``[output] animation = true``),
    or not for the point and run asked for."""


def movie_runs(res: Any) -> list[tuple[int, int]]:
    """The (point, run) pairs that have a movie trace, in order."""
    if not res.has("animation"):
        return []
    pairs = res.scan("animation").select("point", "run").unique().sort(["point", "run"]).collect()
    return [(int(p), int(r)) for p, r in pairs.iter_rows()]


def _r(v: Optional[float], digits: int = 1) -> Optional[float]:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    x = round(float(v), digits)
    return int(x) if x == int(x) else x


def movie_data(res: Any, point: Optional[int] = None, run: Optional[int] = None) -> dict[str, Any]:
    """The player's data for one run (default: the first with a movie trace), as plain JSON
    values: positions as keyframes per node, per-frame hops, drops and deliveries as flat
    arrays, route changes and node events.

    Raises:
        NoMovie: without a movie trace, or none for ``point``/``run``.
    """
    have = movie_runs(res)
    if not have:
        raise NoMovie("no network movie trace (animation.parquet): run with --set output.animation=true")
    if point is None and run is None:
        point, run = have[0]
    elif point is None:
        point = next((p for p, r in have if r == run), have[0][0])
    elif run is None:
        run = next((r for p, r in have if p == point), have[0][1])
    if (point, run) not in have:
        listed = ", ".join(f"point {p} run {r}" for p, r in have[:12]) + (" ..." if len(have) > 12 else "")
        raise NoMovie(f"no network movie trace for point {point} run {run}; it has {listed}")
    a = res.scan("animation").filter((pl.col("point") == point) & (pl.col("run") == run)).collect()
    of = {k: a.filter(pl.col("kind") == k) for k in ("position", "range", "cs_range", "node", "hop", "drop",
                                                      "delivery", "route")}
    pos = of["position"].sort(["node", "time_s"])
    n = int(a["node"].max()) + 1
    end = float(pos["time_s"].max()) if pos.height else float(a["time_s"].max() or 0.0)
    spans = a["span_s"].drop_nulls()
    step = float(spans[0]) if len(spans) else max(0.5, end / 2000)
    frames = max(1, math.ceil(end / step - 1e-9))

    keyframes: list[list[float]] = [[] for _ in range(n)]
    for node, t, x, y in pos.select("node", "time_s", "x_m", "y_m").iter_rows():
        keyframes[node] += [_r(t, 3), _r(x), _r(y)]
    xs = pos["x_m"].to_list()
    ys = pos["y_m"].to_list()
    if not xs or (min(xs) == max(xs) and min(ys) == max(ys)):
        # No positions (a wired scenario without placement): the nodes on a circle.
        keyframes = [[0, _r(100 + 90 * math.cos(2 * math.pi * i / max(n, 1))),
                      _r(100 + 90 * math.sin(2 * math.pi * i / max(n, 1)))] for i in range(n)]
        xs, ys = [k[1] for k in keyframes] or [0], [k[2] for k in keyframes] or [0]
    ranges: Optional[list] = None
    if of["range"].height:
        rx = dict(of["range"].select("node", "range_m").iter_rows())
        cs = dict(of["cs_range"].select("node", "range_m").iter_rows())
        ranges = [[_r(rx.get(i)), _r(cs.get(i))] for i in range(n)]

    # Flow directions: those of the flows table of this run, then any only the trace names.
    flows_tbl = res.flows.filter((pl.col("point") == point) & (pl.col("run") == run)) if res.flows.height else res.flows
    dirs: list[tuple[int, str]] = []
    info: dict[tuple[int, str], dict[str, Any]] = {}
    for r in (flows_tbl.sort(["flow", "direction"]).iter_rows(named=True) if flows_tbl.height else []):
        k = (int(r["flow"]), str(r["direction"]))
        dirs.append(k)
        info[k] = r
    for f, d in a.select("flow", "direction").drop_nulls().unique().sort(["flow", "direction"]).iter_rows():
        if (f, d) not in info:
            dirs.append((int(f), str(d)))
            info[(int(f), str(d))] = {}
    index = {k: i for i, k in enumerate(dirs)}
    flows = []
    for i, k in enumerate(dirs):
        r = info[k]
        label = f"flow {k[0]}" + (f" {k[1]}" if k[1] != "fwd" else "")
        if r.get("src") is not None:
            label += f" ({r['src']}\u2192{r['dst']}, {r.get('transport', '')})"
        flows.append({"label": label, "src": r.get("src"), "dst": r.get("dst"), "role": r.get("role"),
                      "color": FLOW_COLORS[i % len(FLOW_COLORS)]})

    def fidx(f: Any, d: Any) -> int:
        return -1 if f is None else index[(int(f), str(d))]

    def frame(t: float) -> int:
        return min(frames - 1, int(math.floor(t / step + 1e-9)))

    hops: list = []
    for t, node, peer, f, d, p in of["hop"].sort(["time_s", "node", "peer", "flow", "direction"], nulls_last=True) \
            .select("time_s", "node", "peer", "flow", "direction", "packets").iter_rows():
        hops += [frame(t), node, peer, fidx(f, d), p]
    reasons = sorted(set(of["drop"]["reason"].drop_nulls().to_list()))
    ridx = {r: i for i, r in enumerate(reasons)}
    drops: list = []
    for t, node, reason, f, d, p in of["drop"].sort(["time_s", "node", "reason", "flow", "direction"], nulls_last=True) \
            .select("time_s", "node", "reason", "flow", "direction", "packets").iter_rows():
        drops += [frame(t), node, ridx[reason], fidx(f, d), p]
    deliv: list = []
    for t, f, d, p, b in of["delivery"].sort(["time_s", "flow", "direction"]) \
            .select("time_s", "flow", "direction", "packets", "bytes").iter_rows():
        deliv += [frame(t), fidx(f, d), p, b]
    routes: list = []
    for t, node, f, d, old, new in of["route"].sort(["time_s", "node", "flow", "direction"]) \
            .select("time_s", "node", "flow", "direction", "old_peer", "peer").iter_rows():
        routes += [_r(t, 4), node, fidx(f, d), old, new]
    events = [[_r(t, 4), node, why] for t, node, why in
              of["node"].sort(["time_s", "node"]).select("time_s", "node", "reason").iter_rows()]
    return {
        "format": MOVIE_FORMAT,
        "point": point, "run": run, "n": n, "step": step, "end": _r(end, 4), "frames": frames, "trail": TRAIL_S,
        "plot_mean": PLOT_MEAN_S,
        "area": [_r(min(xs)), _r(min(ys)), _r(max(xs)), _r(max(ys))],
        "pos": keyframes, "ranges": ranges, "flows": flows,
        "reasons": reasons, "reason_colors": [REASON_COLORS.get(r, "#555555") for r in reasons],
        "hops": hops, "drops": drops, "deliv": deliv, "routes": routes, "events": events,
    }


def movie_fragment(data: dict[str, Any], title: str = "", url_time: bool = False) -> str:
    """The player as an HTML fragment (a ``<section class="tpsim-movie">`` with its style,
    data and script; templates/movie.html.j2 and movie.js) to put in any page; several can
    share a page. ``data``: :func:`movie_data`'s; ``title`` heads it (default: the point and
    run), escaped. ``url_time``: the player opens at the time in the page's URL fragment
    (``#t=12.5``, simulated seconds) and keeps the fragment at the time shown when seeked or
    paused (for a page holding only this player).

    Raises:
        ValueError: if ``data`` holds a NaN or an infinity (not JSON).
    """
    from ._html import environment, package_file

    return environment().get_template("movie.html.j2").render(
        data=data, title=title, speeds=SPEEDS, default_speed=DEFAULT_SPEED, trail_s=TRAIL_S, plot_mean_s=PLOT_MEAN_S,
        url_time=url_time, script=package_file("movie.js"))


def movie_page(data: dict[str, Any], title: str) -> str:
    """A whole HTML page holding the player (``tpsim animate``; templates/movie_page.html.j2),
    headed by ``title`` (escaped); ``page.html#t=12.5`` opens it at 12.5 s. Raises as
    :func:`movie_fragment`."""
    from markupsafe import Markup

    from ._html import environment

    fragment = Markup(movie_fragment(data, url_time=True))
    return environment().get_template("movie_page.html.j2").render(title=title, fragment=fragment)


def movie_title(res: Any, data: dict[str, Any]) -> str:
    """The movie's title: the scenario's name, the point's swept values and the run."""
    base = getattr(res, "base", None)
    name = getattr(base, "name", None) or "tpsim run"
    params = ""
    for p in getattr(res, "points", []) or []:
        if p.index == data["point"] and p.params:
            params = ", ".join(f"{k} = {json.dumps(v)}" for k, v in p.params.items())
    return f"{name}: " + (f"{params}, " if params else f"point {data['point']}, ") + f"run {data['run']}"


def write_movie(res: Any, path: Path, point: Optional[int] = None, run: Optional[int] = None) -> Path:
    """Writes the movie of one run (default: the first with a movie trace) to ``path``
    atomically; returns the path.

    Raises:
        NoMovie: as :func:`movie_data`.
        OSError: if it cannot be written.
    """
    from .files import atomic_write_text

    data = movie_data(res, point, run)
    atomic_write_text(Path(path), movie_page(data, movie_title(res, data)))
    return Path(path)


__all__ = ["movie_data", "movie_fragment", "movie_page", "movie_runs", "movie_title", "write_movie", "NoMovie",
           "MOVIE_FORMAT", "TRAIL_S"]
