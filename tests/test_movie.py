"""The network movie (``[output] animation = true``, ``tpsim animate``): a study C run's movie
plays in headless Chromium without console errors, seeks, shows radio ranges on hover (whole,
inside the map), opens at the URL's ``#t=``; labels stay readable over drop rings; drop
reasons get distinct colours; the report embeds it; a directory without the trace gets one
clear error line; the same run gives the same file."""

from __future__ import annotations

import itertools
import json
import math
import re
import time
from pathlib import Path

import polars as pl
import pytest

from conftest import ROOT, SCENARIOS, cli, once, one_link, require_tool

#: Study C shortened to one point (UDP main flow, 8 background flows, 10 m/s, ns-2 agents),
#: one run of 60 s, with the movie's trace.
STUDY_C = ["run", str(SCENARIOS / "study-c-manet-speed.toml"), "--runs", "1", "-q",
           "--set", "simulation.duration=60s", "--set", "output.animation=true",
           "--sweep", "nodes.mobility.speed=[10m/s,10m/s]", "--sweep", "background.flows=8",
           "--sweep", "flows.0.transport=udp", "--sweep", "simulation.stack=ns2"]


@pytest.fixture(scope="module")
def study_c(tmp_path_factory) -> Path:
    """The output directory of the shortened study C run, with ``movie.html`` written by
    ``tpsim animate``: made once per test session (the xdist workers share it; tests only
    read it)."""

    def make(d: Path) -> list:
        done = []
        for args in (STUDY_C + ["-o", str(d)], ["animate", str(d)]):
            p = cli(*args)
            done.append([p.returncode, p.stdout, p.stderr])
            if p.returncode != 0:
                break
        return done

    d, done = once(tmp_path_factory, "movie-study-c", make)
    for code, _, err in done:
        assert code == 0, err
    assert len(done) == 2
    assert done[1][1].strip() == str(d / "movie.html")
    return d


def _browser():
    chromium = require_tool("chromium")
    driver_path = require_tool("chromedriver")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = chromium
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1200,1000"]:
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver_path), options=opts)


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for the tests that load a page, seek and read it (each loads its
    page again)."""
    driver = _browser()
    yield driver
    driver.quit()


def _errors(driver) -> list:
    return [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]


def _positions(driver, root) -> list[tuple[str, str]]:
    return driver.execute_script(
        "return Array.from(arguments[0].querySelectorAll('.mv-node')).map(c => [c.getAttribute('cx'), c.getAttribute('cy')]);",
        root)


def _wait(predicate, timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def _plays(driver, root) -> None:
    """Checks that the player at ``root`` starts at frame 0 and advances when played: the
    frame, the time shown and the nodes' positions change, and stop when paused."""
    assert root.get_attribute("data-frame") == "0"
    assert root.get_attribute("data-playing") == "0"
    time_text = root.find_element("css selector", ".mv-time").text
    before = _positions(driver, root)
    assert len(before) == 50 and all(x is not None for x, _ in before)
    root.find_element("css selector", ".mv-play").click()
    assert _wait(lambda: int(root.get_attribute("data-frame")) >= 4), root.get_attribute("data-frame")
    assert root.get_attribute("data-playing") == "1"
    assert root.find_element("css selector", ".mv-time").text != time_text
    after = _positions(driver, root)
    moved = sum(a != b for a, b in zip(before, after))
    assert moved > 40, f"only {moved} of 50 nodes moved"  # every node moves at 10 m/s
    root.find_element("css selector", ".mv-play").click()  # pause
    assert root.get_attribute("data-playing") == "0"
    paused = root.get_attribute("data-frame")
    time.sleep(0.4)
    assert root.get_attribute("data-frame") == paused


def test_study_c_movie_plays_seeks_and_shows_ranges_in_headless_chromium(study_c):
    from selenium.webdriver.common.action_chains import ActionChains

    page = study_c / "movie.html"
    text = page.read_text(encoding="utf-8")
    # Self-contained: nothing fetched from anywhere.
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    driver = _browser()
    try:
        driver.get(page.as_uri())
        root = driver.find_element("css selector", ".tpsim-movie")
        frames = int(root.get_attribute("data-frames"))
        assert frames == 130  # (60 s + 5 s drain) / 0.5 s
        _plays(driver, root)
        # Seek to 30 s with the slider: the flows (started by 10 s) have hops drawn there.
        driver.execute_script("var s = arguments[0].querySelector('.mv-seek'); s.value = 60;"
                              "s.dispatchEvent(new Event('input'));", root)
        assert root.get_attribute("data-frame") == "60"
        assert float(root.get_attribute("data-time")) == 30.0
        assert int(root.get_attribute("data-hops")) > 0
        assert root.find_element("css selector", ".mv-time").text == "30.00 s"
        # Hovering a node shows its receive and carrier-sense ranges (ns-2's 250 m, 550 m).
        circles = ("Array.from(arguments[0].querySelectorAll('.mv-range, .mv-cs-range'))"
                   ".filter(c => c.getAttribute('visibility') === 'visible').map(c => +c.getAttribute('r'))")
        assert driver.execute_script(f"return {circles};", root) == []
        node = driver.find_elements("css selector", ".mv-node")[3]
        ActionChains(driver).move_to_element(node).perform()
        radii = sorted(driver.execute_script(f"return {circles};", root))
        assert len(radii) == 2 and abs(radii[0] - 250) < 1 and abs(radii[1] - 550) < 1, radii
        assert "node 3" in root.find_element("css selector", ".mv-info").text
        # Clicking the plot seeks too: its middle is half the run.
        plot = root.find_element("css selector", ".mv-plot")
        ActionChains(driver).move_to_element(plot).click().perform()
        assert abs(float(root.get_attribute("data-time")) - 32.5) < 5
        assert _errors(driver) == []
    finally:
        driver.quit()


def test_the_report_embeds_the_movie_and_it_plays(study_c):
    report = study_c / "report.html"
    text = report.read_text(encoding="utf-8")
    assert 'id="movie"' in text and 'href="#movie"' in text
    driver = _browser()
    try:
        driver.get(report.as_uri())
        roots = driver.find_elements("css selector", "#movie .tpsim-movie")
        assert len(roots) == 1
        driver.execute_script("arguments[0].scrollIntoView();", roots[0])
        _plays(driver, roots[0])
        assert _errors(driver) == []
    finally:
        driver.quit()


def test_a_report_without_the_trace_has_no_movie(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(one_link(duration="2s"))
    p = cli("run", str(f), "-o", str(tmp_path / "o"), "-q")
    assert p.returncode == 0, p.stderr
    text = (tmp_path / "o" / "report.html").read_text(encoding="utf-8")
    assert "tpsim-movie" not in text and 'id="movie"' not in text


def test_animate_fails_with_one_line_without_the_trace(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(one_link(duration="2s"))
    out = tmp_path / "o"
    assert cli("run", str(f), "-o", str(out), "-q", "--no-report").returncode == 0
    p = cli("animate", str(out))
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    assert lines[0].startswith("error: ") and "output.animation=true" in lines[0], lines[0]
    assert not (out / "movie.html").exists()
    # Not a run directory at all.
    p = cli("animate", str(tmp_path / "missing"))
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


def test_animate_names_the_runs_it_has(study_c, tmp_path):
    p = cli("animate", str(study_c), "--run", "3", "-o", str(tmp_path / "m.html"))
    assert p.returncode == 2
    assert p.stderr.strip() == f"error: {study_c}: no network movie trace for point 0 run 3; it has point 0 run 0"
    p = cli("animate", str(study_c), "--run", "0", "-o", str(tmp_path / "m.html"))
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "m.html").is_file()


def test_same_run_same_movie(study_c, tmp_path):
    # The same command again in another directory (run again, not reused), then its movie.
    d = tmp_path / "again"
    p = cli(*STUDY_C, "-o", str(d), "--no-report")
    assert p.returncode == 0, p.stderr
    assert cli("animate", str(d)).returncode == 0
    assert (d / "movie.html").read_bytes() == (study_c / "movie.html").read_bytes()
    a = pl.read_parquet(d / "animation.parquet")
    assert a.equals(pl.read_parquet(study_c / "animation.parquet"))


def test_the_movie_data_agrees_with_the_tables(study_c):
    a = pl.read_parquet(study_c / "animation.parquet")
    flows = pl.read_parquet(study_c / "flows.parquet")
    assert set(a["kind"].unique()) >= {"position", "range", "cs_range", "hop", "drop", "delivery", "route"}
    # First deliveries per flow direction are the flows table's rx_segments.
    got = a.filter(pl.col("kind") == "delivery").group_by("flow", "direction").agg(pl.col("packets").sum())
    want = flows.select("flow", "direction", "rx_segments")
    joined = want.join(got, on=["flow", "direction"], how="left").with_columns(pl.col("packets").fill_null(0))
    assert (joined["packets"] == joined["rx_segments"]).all(), joined
    # The page holds the same counts (its data is the JSON in the page).
    text = (study_c / "movie.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script type="application/json" class="mv-data">(.*?)</script>', text, re.S).group(1))
    assert data["n"] == 50 and data["frames"] == 130
    deliv = data["deliv"]
    assert sum(deliv[i + 2] for i in range(0, len(deliv), 4)) == int(flows["rx_segments"].sum())


def test_every_movie_column_and_kind_is_documented(study_c):
    from tpsim.results import ANIMATION_SCHEMA

    doc = (ROOT / "docs" / "workbench.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Network movie"):]
    a = pl.read_parquet(study_c / "animation.parquet")
    assert list(ANIMATION_SCHEMA) == a.columns[a.columns.index("time_s"):]
    for c in ANIMATION_SCHEMA:
        assert f"`{c}`" in section, c
    for k in a["kind"].unique().to_list() + ["node"]:
        assert f"`{k}`" in section, k


def test_a_wired_run_without_placement_gets_a_movie_with_its_nodes_apart(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(one_link(duration="3s", extra="[output]\nanimation = true"))
    out = tmp_path / "o"
    assert cli("run", str(f), "-o", str(out), "-q", "--no-report").returncode == 0
    p = cli("animate", str(out))
    assert p.returncode == 0, p.stderr
    driver = _browser()
    try:
        driver.get((out / "movie.html").as_uri())
        root = driver.find_element("css selector", ".tpsim-movie")
        pos = _positions(driver, root)
        assert len(pos) == 2 and pos[0] != pos[1]
        # The CBR flow's packets cross the link in the frame at 1 s.
        driver.execute_script("var s = arguments[0].querySelector('.mv-seek'); s.value = 2;"
                              "s.dispatchEvent(new Event('input'));", root)
        assert int(root.get_attribute("data-hops")) == 1
        root.find_element("css selector", ".mv-play").click()
        assert _wait(lambda: root.get_attribute("data-playing") == "0")  # plays to the end and stops
        assert int(root.get_attribute("data-frame")) == int(root.get_attribute("data-frames")) - 1
        assert _errors(driver) == []
    finally:
        driver.quit()


def test_the_page_escapes_its_title_and_data_and_embeds_the_packaged_player():
    from tpsim._html import TEMPLATES
    from tpsim.movie import movie_page

    data = {"point": 0, "run": 0, "frames": 1, "step": 0.5, "n": 1, "end": 0.5,
            "flows": [{"label": "</script><b>x</b>", "color": "#000", "src": 0, "dst": 0}]}
    page = movie_page(data, 'a <b> & "c"')
    assert "<title>a &lt;b&gt; &amp; &#34;c&#34; - tpsim network movie</title>" in page
    assert "<b>" not in page and page.count("</script>") == 2  # the data's "</script>" is \u003c/script\u003e
    got = json.loads(re.search(r'<script type="application/json" class="mv-data">(.*?)</script>', page, re.S).group(1))
    assert got == data
    assert (TEMPLATES / "movie.js").read_text(encoding="utf-8") in page


def _seek(driver, root, frame: int) -> None:
    driver.execute_script("var s = arguments[0].querySelector('.mv-seek'); s.value = arguments[1];"
                          "s.dispatchEvent(new Event('input'));", root, frame)


def test_a_drop_ring_leaves_its_node_label_readable(study_c, browser):
    browser.get((study_c / "movie.html").as_uri())
    root = browser.find_element("css selector", ".tpsim-movie")
    # At the first frame with a drop ring (the run's MAC retry drops), the ringed node's label
    # is painted after the ring and every node and line (a later element paints over an
    # earlier one), with an opaque white halo under its glyphs: a ring or line across it
    # passes under the halo.
    got = browser.execute_script("""
        var root = arguments[0], map = root.querySelector('.mv-map'), s = root.querySelector('.mv-seek');
        var marks = Array.from(map.querySelectorAll('circle:not(.mv-node):not(.mv-range):not(.mv-cs-range)'));
        for (var f = 0; f < +root.getAttribute('data-frames'); f++) {
          s.value = f; s.dispatchEvent(new Event('input'));
          var ring = marks.find(c => c.getAttribute('visibility') === 'visible');
          if (ring) break;
        }
        if (!ring) return null;
        var node = Array.from(map.querySelectorAll('.mv-node')).find(
          c => Math.hypot(c.getAttribute('cx') - ring.getAttribute('cx'), c.getAttribute('cy') - ring.getAttribute('cy')) < 0.01);
        var label = Array.from(map.querySelectorAll('text')).find(e => e.textContent === node.getAttribute('data-node'));
        var after = Array.from(map.querySelectorAll('circle, line')).every(
          e => e.compareDocumentPosition(label) & Node.DOCUMENT_POSITION_FOLLOWING);
        var cs = getComputedStyle(label);
        return [f, after, cs.paintOrder, cs.stroke, parseFloat(cs.strokeWidth) / parseFloat(cs.fontSize)];""",
        root)
    assert got is not None
    _, after, order, stroke, halo = got
    assert after, got
    assert order.startswith("stroke") and stroke == "rgb(255, 255, 255)" and halo >= 0.2, got
    assert _errors(browser) == []


def test_range_circles_fit_in_the_map(study_c, browser):
    browser.get((study_c / "movie.html").as_uri())
    root = browser.find_element("css selector", ".tpsim-movie")
    frames = int(root.get_attribute("data-frames"))
    # Every node's receive and carrier-sense circles (250 m, 550 m; shown on hover) at the
    # start, middle and end lie within the map's viewBox: none is clipped at its edge.
    checked, outside = 0, []
    for frame in (0, frames // 2, frames - 1):
        _seek(browser, root, frame)
        c, bad = browser.execute_script("""
            var root = arguments[0], vb = root.querySelector('.mv-map').viewBox.baseVal, c = 0, bad = [];
            root.querySelectorAll('.mv-node').forEach(function (nd) {
              nd.dispatchEvent(new MouseEvent('mouseenter'));
              root.querySelectorAll('.mv-range[visibility=visible], .mv-cs-range[visibility=visible]').forEach(function (e) {
                var x = +e.getAttribute('cx'), y = +e.getAttribute('cy'), r = +e.getAttribute('r');
                c++;
                if (x - r < vb.x || y - r < vb.y || x + r > vb.x + vb.width || y + r > vb.y + vb.height)
                  bad.push([nd.getAttribute('data-node'), x, y, r, vb.width]);
              });
              nd.dispatchEvent(new MouseEvent('mouseleave'));
            });
            return [c, bad];""", root)
        checked += c
        outside += [[frame] + b for b in bad]
    assert checked == 3 * 50 * 2 and outside == [], outside[:5]
    assert _errors(browser) == []


def _lab(color: str) -> tuple[float, float, float]:
    """CIELAB (D65) of an sRGB ``#RRGGBB``."""
    lin = [(v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4)
           for v in (int(color[i:i + 2], 16) / 255 for i in (1, 3, 5))]
    xyz = [sum(m * c for m, c in zip(row, lin)) / wp for row, wp in
           zip([(0.4124, 0.3576, 0.1805), (0.2126, 0.7152, 0.0722), (0.0193, 0.1192, 0.9505)], (0.95047, 1.0, 1.08883))]
    fx, fy, fz = (v ** (1 / 3) if v > 216 / 24389 else (24389 / 27 * v + 16) / 116 for v in xyz)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def _ciede2000(lab1, lab2) -> float:
    """The CIEDE2000 colour difference (Sharma, Wu and Dalal 2005)."""
    (l1, a1, b1), (l2, a2, b2) = lab1, lab2
    c7 = ((math.hypot(a1, b1) + math.hypot(a2, b2)) / 2) ** 7
    g = 0.5 * (1 - math.sqrt(c7 / (c7 + 25 ** 7)))
    a1, a2 = a1 * (1 + g), a2 * (1 + g)
    c1, c2 = math.hypot(a1, b1), math.hypot(a2, b2)
    h1, h2 = math.degrees(math.atan2(b1, a1)) % 360, math.degrees(math.atan2(b2, a2)) % 360
    dh = 0.0 if c1 * c2 == 0 else (h2 - h1 + 180) % 360 - 180
    d_h = 2 * math.sqrt(c1 * c2) * math.sin(math.radians(dh / 2))
    lm, cm = (l1 + l2) / 2, (c1 + c2) / 2
    hm = h1 + h2 if c1 * c2 == 0 else (h1 + h2) / 2 + (180 if abs(h1 - h2) > 180 else 0)
    t = (1 - 0.17 * math.cos(math.radians(hm - 30)) + 0.24 * math.cos(math.radians(2 * hm))
         + 0.32 * math.cos(math.radians(3 * hm + 6)) - 0.20 * math.cos(math.radians(4 * hm - 63)))
    sl = 1 + 0.015 * (lm - 50) ** 2 / math.sqrt(20 + (lm - 50) ** 2)
    sc, sh = 1 + 0.045 * cm, 1 + 0.015 * cm * t
    rt = -2 * math.sqrt(cm ** 7 / (cm ** 7 + 25 ** 7)) * math.sin(math.radians(60 * math.exp(-((hm - 275) / 25) ** 2)))
    dl, dc = (l2 - l1) / sl, (c2 - c1) / sc
    return math.sqrt(dl ** 2 + dc ** 2 + (d_h / sh) ** 2 + rt * dc * (d_h / sh))


def test_drop_reasons_have_clearly_distinct_colours():
    from tpsim.movie import REASON_COLORS

    # The formula against two of Sharma et al.'s reference pairs.
    assert abs(_ciede2000((50, 2.6772, -79.7751), (50, 0, -82.7485)) - 2.0425) < 1e-4
    assert abs(_ciede2000((50, 2.5, 0), (73, 25, -18)) - 27.1492) < 1e-4
    # Only the three "down" reasons share a colour, and the three of the queue disciplines;
    # any two others differ by at least 20
    # CIEDE2000 (well past "clearly different": about 2 is just noticeable side by side; the
    # old link_break red and mac_retry vermillion were 18.6 apart) and link_break vs mac_retry,
    # the pair most often on screen together, by at least 40.
    groups = [{"link_down", "interface_down", "node_down"}, {"aqm_early", "aqm_forced", "aqm_sojourn"}]
    close = []
    for (r1, c1), (r2, c2) in itertools.combinations(REASON_COLORS.items(), 2):
        d = _ciede2000(_lab(c1), _lab(c2))
        if d < 20 and not any({r1, r2} <= g for g in groups):
            close.append((r1, r2, round(d, 1)))
    assert close == []
    assert _ciede2000(_lab(REASON_COLORS["link_break"]), _lab(REASON_COLORS["mac_retry"])) >= 40


def test_the_movie_opens_at_the_time_in_its_url(study_c, browser):
    page = (study_c / "movie.html").as_uri()
    browser.get("about:blank")  # a load, not a jump within the page
    browser.get(page + "#t=12.5")
    root = browser.find_element("css selector", ".tpsim-movie")
    assert root.get_attribute("data-time") == "12.500" and root.get_attribute("data-frame") == "25"
    assert root.find_element("css selector", ".mv-time").text == "12.50 s"
    # Seeking keeps the time in the address (no history entry each time); editing it seeks.
    entries = browser.execute_script("return history.length;")
    _seek(browser, root, 61)
    _seek(browser, root, 60)
    assert _wait(lambda: browser.execute_script("return location.hash;") == "#t=30")
    assert browser.execute_script("return history.length;") == entries
    browser.execute_script("location.hash = '#t=40.25';")
    assert _wait(lambda: root.get_attribute("data-time") == "40.250"), root.get_attribute("data-time")
    assert root.find_element("css selector", ".mv-time").text == "40.25 s"
    # Past the end: the end.
    browser.get("about:blank")
    browser.get(page + "#t=999")
    root = browser.find_element("css selector", ".tpsim-movie")
    assert root.get_attribute("data-time") == "65.000"
    assert _errors(browser) == []
