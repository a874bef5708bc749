"""Writes python/tpsim/fonts/tpsim-sans.ttf, the font of tpsim's figures (run from the
checkout's root: ``python scripts/make_report_font.py``).

It is matplotlib's DejaVu Sans (same outlines, metrics, hinting and kerning) cut down to the
characters figures use (Latin, Greek, punctuation, arrows, letterlike and mathematical
symbols) and without the OpenType layout tables (GSUB, GPOS, GDEF) and MATH: the legacy
``kern`` table kerns the same pairs, and there are no ligatures (a PDF embeds each ligature
glyph in a font subset of its own). Embedding a subset of it in a PDF (Type 42) takes about a
fifteenth of the time DejaVu Sans takes; text looks the same but for "fi", "fl" and the like,
now two letters. Characters it lacks fall back to DejaVu Sans (``_draw.STYLE["font.family"]``). The Bitstream
Vera licence asks for a new name: "tpsim Sans". Its licence is beside it
(python/tpsim/fonts/LICENSE_DEJAVU).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTFont
from matplotlib import font_manager

OUT = Path(__file__).resolve().parent.parent / "python" / "tpsim" / "fonts"
FAMILY = "tpsim Sans"
#: Unicode blocks kept: Basic Latin to Latin Extended-B, Greek, General Punctuation,
#: super- and subscripts, currency, letterlike symbols, number forms, arrows, mathematical
#: operators.
RANGES = [(0x20, 0x24F), (0x370, 0x3FF), (0x2000, 0x20CF), (0x2100, 0x22FF)]


def main() -> None:
    src = Path(font_manager.findfont(font_manager.FontProperties(family="DejaVu Sans"), fallback_to_default=False))
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
    sub.populate(unicodes=[u for lo, hi in RANGES for u in range(lo, hi + 1)])
    sub.subset(font)
    for rec in font["name"].names:
        if rec.nameID in (1, 4, 16):
            rec.string = FAMILY
        elif rec.nameID == 3:
            rec.string = FAMILY + " Book (DejaVu Sans cut down for tpsim)"
        elif rec.nameID == 6:
            rec.string = FAMILY.replace(" ", "")
    OUT.mkdir(parents=True, exist_ok=True)
    font.save(OUT / "tpsim-sans.ttf")
    shutil.copyfile(src.with_name("LICENSE_DEJAVU"), OUT / "LICENSE_DEJAVU")
    print(OUT / "tpsim-sans.ttf", (OUT / "tpsim-sans.ttf").stat().st_size, "bytes,", len(font.getGlyphOrder()), "glyphs")


if __name__ == "__main__":
    main()
