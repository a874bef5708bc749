"""Draws tpsim's figures from their specs and returns their files' bytes: the matplotlib
half of :mod:`tpsim.plot`, which computes the specs (what to draw, as plain data) from the
tables.

A spec is a dict of lists, numbers and text only, so it crosses process boundaries: the
report draws its figures in render worker processes (:mod:`tpsim._pool` starts them), which
load this file by path and import only the standard library, numpy, matplotlib and Pillow
(not polars, not the rest of tpsim); importing this module imports no matplotlib until a
figure is drawn. The same spec gives the same file bytes in any process: every
figure is drawn with matplotlib's default settings plus :data:`STYLE` (a user's matplotlibrc
or runtime rcParams do not apply), PNG and PDF metadata carry no dates or versions.

Spec (all lengths in inches, coordinates in data units)::

    {"size": [w, h], "nrows": r, "ncols": c, "sharey": bool, "suptitle": str | None,
     "panels": [panel, ...],              # r x c, row by row; None: an unused (hidden) slot
     "legend": {"entries": [label, ...], "ncols": n, "rows_planned": k, "handlelength": l} | None}

    panel = {"title": str | None, "title_size": pt | None, "xlabel": str | None,
             "ylabel": str | None, "xscale": "linear" | "log",
             "xticks": [pos, ...] | None, "xticklabels": [str, ...], "xtick_rotation": deg,
             "xtick_ha": "center" | "right", "minor_off": bool,
             "items": [item, ...],       # drawn in order
             "legend": {"entries": [...], "loc": str, "frameon": bool, "framealpha": a,
                        "fontsize": pt | None, "handlelength": l} | None}

    item = {"kind": "line", "x": [...], "y": [...], "color", "marker", "linestyle",
            "linewidth", "drawstyle", "zorder", "label", "yerr": [[down...], [up...]] | None}
         | {"kind": "band", "x", "lo", "hi", "color", "alpha", "step": "post" | None, "zorder", "label"}
         | {"kind": "bar", "x", "height", "width", "color", "hatch", "yerr", "label"}
         | {"kind": "hline", "y", "color", "linewidth"}
         | {"kind": "note", "text"}      # centred in the panel

Legend entries name the items' ``label``; ``None`` values in ``y``, ``lo``, ``hi`` are gaps.
"""

from __future__ import annotations

import io
import math
import os
import pickle
import struct
import sys
import time
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Optional

# matplotlib is imported when a figure is drawn (the report's own process only frames jobs).

#: Okabe & Ito (2008) colour-blind-safe palette (blue, vermillion, bluish green, reddish
#: purple, orange, sky blue, black, yellow).
OKABE_ITO = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]
#: The figures' font, "tpsim Sans" (:func:`font_file`), then DejaVu Sans for any character it
#: lacks.
FONT_FAMILY = ["tpsim Sans", "DejaVu Sans"]
#: Unicode ranges "tpsim Sans" keeps: Basic Latin to Latin Extended-B, Greek, General
#: Punctuation, super- and subscripts, currency, letterlike symbols, number forms, arrows,
#: mathematical operators.
FONT_RANGES = [(0x20, 0x24F), (0x370, 0x3FF), (0x2000, 0x20CF), (0x2100, 0x22FF)]
#: Version of how "tpsim Sans" is made (part of its cached file's name).
FONT_RECIPE = 1
#: Resolution of PNG output (screens and the report).
PNG_DPI = 200
#: File formats :func:`save` writes.
FORMATS = ("png", "svg", "pdf")
#: matplotlib settings of every tpsim figure (over matplotlib's defaults): TrueType (Type 42)
#: fonts embedded in PDF and PostScript, small print sizes, the palette.
STYLE: dict[str, Any] = {
    "font.family": FONT_FAMILY,
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "legend.title_fontsize": 7,
    "lines.linewidth": 1.2,
    "lines.markersize": 4,
    "errorbar.capsize": 2,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.5,
    "axes.prop_cycle": f"cycler('color', {OKABE_ITO!r})",
    "savefig.dpi": PNG_DPI,
    "figure.dpi": PNG_DPI,
    "svg.hashsalt": "tpsim",
}
#: File metadata without dates or versions: the same figure gives the same bytes.
METADATA = {"png": {"Software": None}, "svg": {"Date": None}, "pdf": {"CreationDate": None, "Producer": None}}

_font_added = False


def _cache_dir() -> Path:
    """tpsim's cache directory: ``$XDG_CACHE_HOME/tpsim`` (default ``~/.cache/tpsim``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tpsim"


def font_file() -> Optional[Path]:
    """The file of "tpsim Sans", made once per machine in :func:`_cache_dir` (``None`` if it
    cannot be made: the figures then use DejaVu Sans).

    "tpsim Sans" is matplotlib's DejaVu Sans (the same outlines, metrics, hinting and kerning)
    cut down with fontTools to :data:`FONT_RANGES` and without the OpenType layout tables
    (GSUB, GPOS, GDEF) and MATH; the legacy ``kern`` table kerns the same pairs, and there are
    no ligatures ("fi" is two letters). Embedding a subset of it in a PDF (Type 42) takes
    about a tenth of the time DejaVu Sans takes. The Bitstream Vera licence of DejaVu asks a
    modified font for another name, hence its own. The file's name carries a hash of the
    DejaVu Sans it was made from, so a new matplotlib makes a new one."""
    import hashlib

    from matplotlib import font_manager

    try:
        src = Path(font_manager.findfont(font_manager.FontProperties(family="DejaVu Sans"), fallback_to_default=False))
        digest = hashlib.sha256(src.read_bytes() + bytes([FONT_RECIPE])).hexdigest()[:16]
        path = _cache_dir() / f"tpsim-sans-{digest}.ttf"
        if not path.is_file():
            _make_font(src, path)
        return path
    except Exception:  # no cache directory, fontTools failed: DejaVu Sans does the same, slower
        return None


def _make_font(src: Path, path: Path) -> None:
    """Writes "tpsim Sans" (:func:`font_file`) made from DejaVu Sans ``src`` to ``path``,
    atomically (render workers may make it at the same time)."""
    import tempfile

    from fontTools import subset
    from fontTools.ttLib import TTFont

    font = TTFont(src, recalcTimestamp=False)
    opts = subset.Options()
    opts.layout_features = []
    opts.name_IDs = ["*"]
    opts.name_languages = ["*"]
    opts.notdef_outline = True
    opts.glyph_names = True
    opts.recommended_glyphs = True
    opts.hinting = True
    opts.legacy_kern = True
    opts.drop_tables += ["GSUB", "GPOS", "GDEF", "MATH", "FFTM"]
    sub = subset.Subsetter(opts)
    sub.populate(unicodes=[u for lo, hi in FONT_RANGES for u in range(lo, hi + 1)])
    sub.subset(font)
    for rec in font["name"].names:
        if rec.nameID in (1, 4, 16):
            rec.string = "tpsim Sans"
        elif rec.nameID == 3:
            rec.string = "tpsim Sans Book (DejaVu Sans cut down for tpsim)"
        elif rec.nameID == 6:
            rec.string = "tpsimSans"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tpsim-sans-", suffix=".ttf", dir=path.parent)
    os.close(fd)
    try:
        font.save(tmp)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _add_font() -> None:
    global _font_added
    if not _font_added:
        from matplotlib import font_manager

        _font_added = True
        path = font_file()
        if path is not None:
            font_manager.fontManager.addfont(str(path))


@contextmanager
def style():
    """matplotlib's defaults plus :data:`STYLE`, library warnings (layout, fonts) silenced."""
    import matplotlib.style

    _add_font()
    with warnings.catch_warnings(), matplotlib.style.context(["default", STYLE]):
        warnings.simplefilter("ignore")
        yield


def _figure(size):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=size)
    FigureCanvasAgg(fig)
    return fig


def _nan(values: Iterable[Optional[float]]) -> list[float]:
    return [math.nan if v is None else v for v in values]


def _item(ax, it: dict[str, Any]):
    kind = it["kind"]
    if kind == "line":
        yerr = it.get("yerr")
        kw = dict(color=it.get("color"), marker=it.get("marker"), linestyle=it.get("linestyle", "-"),
                  zorder=it.get("zorder", 2), label=it.get("label"))
        if it.get("linewidth") is not None:
            kw["linewidth"] = it["linewidth"]
        if yerr is not None and any(v for side in yerr for v in side):
            return ax.errorbar(it["x"], _nan(it["y"]), yerr=yerr, elinewidth=0.8, **kw)
        return ax.plot(it["x"], _nan(it["y"]), drawstyle=it.get("drawstyle", "default"), **kw)[0]
    if kind == "band":
        return ax.fill_between(it["x"], _nan(it["lo"]), _nan(it["hi"]), step=it.get("step"), color=it["color"],
                               alpha=it.get("alpha", 0.3), linewidth=0, zorder=it.get("zorder", 1), label=it.get("label"))
    if kind == "bar":
        return ax.bar(it["x"], it["height"], width=it["width"], color=it["color"], edgecolor="black", linewidth=0.4,
                      hatch=it.get("hatch") or None, yerr=it.get("yerr"), label=it.get("label"),
                      error_kw={"elinewidth": 0.8, "capsize": 2, "ecolor": "black"})
    if kind == "hline":
        return ax.axhline(it["y"], color=it.get("color", "black"), linewidth=it.get("linewidth", 0.5))
    if kind == "note":
        return ax.text(0.5, 0.5, it["text"], transform=ax.transAxes, ha="center", va="center", color="0.4")
    raise ValueError(f"unknown item kind {kind!r}")


def _fit_legend(fig, handles: list, labels: list[str], ncols: int, rows_planned: int, **kw: Any):
    """A legend below the panels in as many columns (at most ``ncols``) as fit the figure's
    width; the figure grows by the rows added beyond ``rows_planned``. :func:`_layout` puts
    it in place."""
    renderer = fig.canvas.get_renderer()
    n = max(ncols, 1)
    for n in range(max(ncols, 1), 0, -1):
        leg = fig.legend(handles, labels, loc="lower center", ncols=n, frameon=False, **kw)
        if n == 1 or leg.get_window_extent(renderer).width <= 0.98 * fig.bbox.width:
            break
        leg.remove()
    extra = math.ceil(len(labels) / n) - rows_planned
    if extra > 0:
        fig.set_figheight(fig.get_figheight() + 0.17 * extra)
    return leg


#: Space around the figure's content and between panels, points.
PAD_PT = 4.0


def _layout(fig, axes, legend=None) -> None:
    """Places the panels: margins just wide enough for the tick labels, axis labels, panel
    titles, the figure's title and the legend below. Text is measured on the renderer the PNG
    is then drawn with (its text metrics are computed once)."""
    import matplotlib as mpl

    r = fig.canvas.get_renderer()
    k = 72.0 / fig.dpi  # pixels -> points
    W, H = (v * 72.0 for v in fig.get_size_inches())

    def size(t) -> tuple[float, float]:
        if t is None or not t.get_visible() or not t.get_text():
            return 0.0, 0.0
        bb = t.get_window_extent(r)
        return bb.width * k, bb.height * k

    def ticklabels(axis) -> list:
        lo, hi = sorted(axis.get_view_interval())
        eps = (hi - lo) * 1e-9
        return [(loc, lab) for loc, lab in zip(axis.get_majorticklocs(), axis.get_majorticklabels())
                if lo - eps <= loc <= hi + eps and lab.get_visible() and lab.get_text()]

    rc = mpl.rcParams
    xoff = rc["xtick.major.size"] + rc["xtick.major.pad"]
    yoff = rc["ytick.major.size"] + rc["ytick.major.pad"]
    labelpad, titlepad = rc["axes.labelpad"], rc["axes.titlepad"]
    nrows, ncols = axes.shape
    left = bottom = top = 0.0
    wsp = hsp = 0.0
    reach = []  # (column, x tick label's reach left and right of its tick in points, its place 0..1)
    for i in range(nrows):
        for j in range(ncols):
            ax = axes[i, j]
            if not ax.get_visible():
                continue
            yt = max((size(t)[0] for _, t in ticklabels(ax.yaxis)), default=0.0)
            yl = size(ax.yaxis.label)[0]
            y_need = (yt + yoff if yt else 0.0) + (yl + labelpad if yl else 0.0)
            xts = ticklabels(ax.xaxis)
            xt = max((size(t)[1] for _, t in xts), default=0.0)
            xl = size(ax.xaxis.label)[1]
            x_need = (xt + xoff if xt else 0.0) + (xl + labelpad if xl else 0.0)
            th = size(ax.title)[1]
            t_need = th + titlepad if th else 0.0
            if j == 0:
                left = max(left, y_need)
            else:
                wsp = max(wsp, y_need)
            below = i + 1 < nrows and axes[i + 1, j].get_visible()
            if below:
                hsp = max(hsp, x_need)
            else:
                bottom = max(bottom, x_need)
            if i == 0:
                top = max(top, t_need)
            else:
                hsp = max(hsp, t_need + x_need)
            lo, hi = sorted(ax.get_xlim())
            log = ax.xaxis.get_scale() == "log"
            for loc, lab in xts[:1] + xts[-1:]:
                if log:
                    f = (math.log10(loc) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
                else:
                    f = (loc - lo) / (hi - lo)
                w = size(lab)[0]
                ha = lab.get_horizontalalignment()
                reach.append((j, {"right": w, "center": w / 2}.get(ha, 0.0), {"left": w, "center": w / 2}.get(ha, 0.0), f))
    sup = getattr(fig, "_suptitle", None)
    sh = size(sup)[1]
    if sh:
        top += sh + PAD_PT
    lh = legend.get_window_extent(r).height * k if legend is not None else 0.0
    if lh:
        bottom += lh + PAD_PT
    left, right, top, bottom = left + PAD_PT, PAD_PT, top + PAD_PT, bottom + PAD_PT
    wsp += 2 * PAD_PT
    hsp += 2 * PAD_PT
    # x tick labels reaching past the ends of their panel (a rotated first category, the last
    # number of an axis): room in the margin, or between the panels.
    for _ in range(2):
        aw = (W - left - right - (ncols - 1) * wsp) / ncols
        for j, to_left, to_right, f in reach:
            past_l = to_left - f * aw
            past_r = to_right - (1 - f) * aw
            if j == 0:
                left = max(left, past_l + PAD_PT)
            else:
                wsp = max(wsp, past_l + 2 * PAD_PT)
            if j == ncols - 1:
                right = max(right, past_r + PAD_PT)
            else:
                wsp = max(wsp, past_r + 2 * PAD_PT)
    aw = (W - left - right - (ncols - 1) * wsp) / ncols
    ah = (H - top - bottom - (nrows - 1) * hsp) / nrows
    fig.subplots_adjust(left=left / W, right=1 - right / W, bottom=bottom / H, top=1 - top / H,
                        wspace=wsp / aw if ncols > 1 else 0.0, hspace=hsp / ah if nrows > 1 else 0.0)
    if sup is not None:
        sup.set_y(1 - PAD_PT / H)
        sup.set_verticalalignment("top")
    if legend is not None:
        legend.set_bbox_to_anchor((0.5, PAD_PT / H), transform=fig.transFigure)


def draw(spec: dict[str, Any]):
    """The matplotlib figure of a spec (see the module's doc), laid out (:func:`_layout`)."""
    with style():
        return _build(spec)


def _build(spec: dict[str, Any]):
    fig = _figure(tuple(spec["size"]))
    nrows, ncols = spec.get("nrows", 1), spec.get("ncols", 1)
    axes = fig.subplots(nrows, ncols, sharey=spec.get("sharey", False), squeeze=False)
    handles: dict[str, Any] = {}
    for ax, panel in zip(axes.flat, spec["panels"]):
        if panel is None:
            ax.set_visible(False)
            continue
        for it in panel["items"]:
            h = _item(ax, it)
            if it.get("label") is not None:
                handles.setdefault(it["label"], h)
        if panel.get("xscale", "linear") != "linear":
            ax.set_xscale(panel["xscale"])
        if panel.get("xticks") is not None:
            ax.set_xticks(panel["xticks"], panel.get("xticklabels"), rotation=panel.get("xtick_rotation", 0),
                          ha=panel.get("xtick_ha", "center"))
        if panel.get("minor_off"):
            ax.minorticks_off()
        if panel.get("title"):
            ax.set_title(panel["title"], fontsize=panel.get("title_size"))
        if panel.get("xlabel"):
            ax.set_xlabel(panel["xlabel"])
        if panel.get("ylabel"):
            ax.set_ylabel(panel["ylabel"])
        leg = panel.get("legend")
        if leg:
            entries = [e for e in leg["entries"] if e in handles]
            if entries:
                ax.legend([handles[e] for e in entries], entries, loc=leg.get("loc", "best"),
                          frameon=leg.get("frameon", True), framealpha=leg.get("framealpha", 0.8),
                          fontsize=leg.get("fontsize"), handlelength=leg.get("handlelength", 2.0))
    for ax, panel in zip(axes.flat, spec["panels"]):
        yb = panel.get("ybounds") if panel is not None else None
        if yb:
            # The metric's range, in the figure's unit: autoscaling's margins stop at it. Once
            # every panel is drawn, so that shared y axes span them all.
            lo, hi = ax.get_ylim()
            ax.set_ylim(max(lo, yb[0]), hi if yb[1] is None else min(hi, yb[1]))
    for ax in list(axes.flat)[len(spec["panels"]):]:
        ax.set_visible(False)
    if spec.get("suptitle"):
        fig.suptitle(spec["suptitle"])
    leg = spec.get("legend")
    legend = None
    if leg:
        entries = [e for e in leg["entries"] if e in handles]
        if entries:
            legend = _fit_legend(fig, [handles[e] for e in entries], entries, leg.get("ncols", 2),
                                 leg.get("rows_planned", 0), handlelength=leg.get("handlelength", 2.0))
    _layout(fig, axes, legend)
    return fig


#: zlib level of PNG files: 3 writes them in about half the time of the default (6), 7 %
#: larger.
PNG_COMPRESS_LEVEL = 3


def _png(fig) -> bytes:
    """The figure as PNG at its dpi (:data:`PNG_DPI`): RGB (figures are opaque), no text
    chunks, the resolution recorded."""
    from PIL import Image

    fig.canvas.draw()
    w, h = fig.canvas.get_width_height(physical=True)
    img = Image.frombuffer("RGBA", (w, h), fig.canvas.buffer_rgba(), "raw", "RGBA", 0, 1).convert("RGB")
    buf = io.BytesIO()
    img.save(buf, format="png", compress_level=PNG_COMPRESS_LEVEL, dpi=(fig.dpi, fig.dpi))
    return buf.getvalue()


def _bytes(fig, formats: Iterable[str]) -> dict[str, bytes]:
    out = {}
    for ext in formats:
        if ext not in FORMATS:
            raise ValueError(f"unknown figure format {ext!r}; formats: {', '.join(FORMATS)}")
        if ext == "png" and fig.dpi == PNG_DPI:
            out[ext] = _png(fig)
            continue
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, metadata=METADATA[ext], dpi=PNG_DPI if ext == "png" else "figure")
        out[ext] = buf.getvalue()
    return out


def figure_bytes(fig, formats: Iterable[str]) -> dict[str, bytes]:
    """The figure's file content in each format (``png``, ``svg``, ``pdf``)."""
    with style():
        return _bytes(fig, formats)


def render(spec: dict[str, Any], formats: list[str]) -> dict[str, bytes]:
    """Draws a spec and returns its file content in each format."""
    with style():
        return _bytes(_build(spec), formats)


# --- worker processes ---------------------------------------------------------------------
# The parent (tpsim.report) writes jobs to a worker's input pipe and reads the answers from
# its output pipe, each a pickle of plain data behind an 8-byte length:
#   job:    (job id, spec, formats)
#   answer: (job id, {format: file content}, None, CPU s) or (job id, None, error text, CPU s)
# The parent writes the files.
# A worker ends at the end of its input (the parent closed it, or died).


def _read_exact(f, n: int) -> Optional[bytes]:
    buf = b""
    while len(buf) < n:
        chunk = f.read(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def read_frame(f) -> Any:
    """The next message of a pipe (``EOFError`` at its end)."""
    head = _read_exact(f, 8)
    if head is None:
        raise EOFError
    body = _read_exact(f, struct.unpack("<Q", head)[0])
    if body is None:
        raise EOFError
    return pickle.loads(body)


def write_frame(f, obj: Any) -> None:
    body = pickle.dumps(obj, protocol=4)
    f.write(struct.pack("<Q", len(body)) + body)
    f.flush()


def _serve(rfd: int, wfd: int) -> None:
    import traceback

    with os.fdopen(rfd, "rb") as r, os.fdopen(wfd, "wb") as w:
        while True:
            try:
                job = read_frame(r)
            except EOFError:
                return
            jid, spec, formats = job
            cpu = time.process_time()
            try:
                out = (jid, render(spec, formats), None, time.process_time() - cpu)
            except Exception as e:  # the parent draws it again itself, which raises
                out = (jid, None, f"{type(e).__name__}: {e}\n{traceback.format_exc()}", time.process_time() - cpu)
            write_frame(w, out)


#: A small figure of every kind of item (for tests and benchmarks: what a first figure loads).
_WARM_UP = {"size": [2.0, 1.5], "nrows": 1, "ncols": 1, "suptitle": "Warm-up (s)", "panels": [{
    "title": "t", "xlabel": "x (s)", "ylabel": "y (%)", "xticks": [0, 1], "xticklabels": ["0", "1"],
    "items": [{"kind": "line", "x": [0, 1], "y": [0, 1], "yerr": [[0.1, 0.1], [0.1, 0.1]], "color": "#0072B2", "marker": "o",
               "linestyle": "-", "label": "a"},
              {"kind": "line", "x": [0, 1], "y": [1, None], "drawstyle": "steps-post", "color": "#D55E00", "label": "b"},
              {"kind": "band", "x": [0, 1], "lo": [0, 0], "hi": [1, 1], "step": "post", "color": "#009E73", "label": "c"},
              {"kind": "bar", "x": [0.5], "height": [0.5], "width": 0.2, "color": "#CC79A7", "hatch": "//",
               "yerr": [[0.1], [0.1]], "label": "d"},
              {"kind": "hline", "y": 0}, {"kind": "note", "text": "µ–"}],
    "legend": {"entries": ["a", "b", "c", "d"], "loc": "best"}}],
    "legend": {"entries": ["a", "b"], "ncols": 2, "rows_planned": 1}}


def die_with_parent(parent: Optional[int] = None) -> None:
    """Linux: this process is killed when its parent ends (even by SIGKILL); it ends at once
    if the parent already has. (The report's render workers and the runs' worker processes.)
    ``parent``: the pid of the process that started this one (default: ``$TPSIM_PARENT_PID``,
    else the parent now); given, a parent that ended before this call is noticed even though
    this process has already been handed to another parent."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        if parent is None:
            parent = int(os.environ.get("TPSIM_PARENT_PID") or os.getppid())
        try:
            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
            return
        if os.getppid() != parent:  # the parent ended before the call
            os._exit(1)


def worker_main(fds: list[int]) -> None:
    """A render worker: ``fds`` are pairs (input, output) of pipe ends, one pair per worker.
    Imports matplotlib once, then serves the first pair and, on Linux, forks a copy of
    itself (matplotlib already imported) to serve each further pair; elsewhere the parent
    starts one process per pair."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    die_with_parent()
    pairs = list(zip(fds[0::2], fds[1::2]))
    # matplotlib, its PNG and PDF writers and the font imported once, before forking (a
    # figure drawn here first would cost more time than the children save).
    import fontTools.subset  # noqa: F401
    import matplotlib.backends.backend_pdf  # noqa: F401
    import matplotlib.style  # noqa: F401
    import PIL.PngImagePlugin  # noqa: F401

    _figure((1, 1))
    _add_font()
    children = []
    me = os.getpid()
    for i, (rfd, wfd) in enumerate(pairs[1:], 1):
        pid = os.fork()
        if pid == 0:
            die_with_parent(me)
            for j, (a, b) in enumerate(pairs):
                if j != i:
                    os.close(a)
                    os.close(b)
            try:
                _serve(rfd, wfd)
            finally:
                os._exit(0)
        children.append(pid)
    for rfd, wfd in pairs[1:]:
        os.close(rfd)
        os.close(wfd)
    _serve(*pairs[0])
    for pid in children:
        os.waitpid(pid, 0)


if __name__ == "__main__":  # pragma: no cover - started by tpsim.report with its pipes
    worker_main([int(a) for a in sys.argv[1:]])
