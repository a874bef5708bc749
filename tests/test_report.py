"""The report of study D loads in headless Chromium with no console error and every figure."""

from __future__ import annotations

import html

import pytest

from conftest import ROOT, cli, require_tool


def test_report_in_headless_chromium(tmp_path):
    chromium = require_tool("chromium")
    driver_path = require_tool("chromedriver")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    scenario = (ROOT / "scenarios" / "study-d-wired-voip.toml").read_text()
    # User text must be escaped: put markup in the description.
    scenario = scenario.replace('description = "', 'description = "<script>alert(1)</script> & <b>bold</b> ')
    f = tmp_path / "d.toml"
    f.write_text(scenario)
    out = tmp_path / "o"
    p = cli("run", str(f), "-o", str(out), "--runs", "3", "--sweep", "links.0.delay=10ms,50ms")
    assert p.returncode == 0, p.stderr
    report = out / "report.html"
    text = report.read_text()
    assert "<script>" not in text and html.escape("<script>alert(1)</script>") in text
    n_figures = len(list((out / "figures").glob("*.png")))
    assert n_figures >= 8

    opts = Options()
    opts.binary_location = chromium
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]:
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=opts)
    try:
        driver.get(report.as_uri())
        assert "tpsim report" in driver.title
        imgs = driver.find_elements("css selector", "figure img")
        assert len(imgs) == n_figures
        for img in imgs:
            ok = driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", img)
            assert ok, img.get_attribute("alt")
        errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        assert errors == []
        for needle in ["Metric definitions", "Scenario with all defaults resolved", "master seed", "Sweep points"]:
            assert needle in driver.page_source
    finally:
        driver.quit()
