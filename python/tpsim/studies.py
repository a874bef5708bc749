"""The reference studies (docs/studies.md) shipped as scenario files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from . import _tpsim
from .scenario import Scenario, load

#: short name -> (scenario file name, one-line description)
STUDIES: dict[str, tuple[str, str]] = {
    "a": ("study-a-sensor-interval.toml", "Study A: sensor network against the reporting interval, AODV (ns-2); UDP, TCP and SCTP"),
    "b": ("study-b-olsr-speed.toml", "Study B: TCP (INET's defaults and RFC) against SCTP with 1-5 streams over OLSR, against relay speed (OMNeT++/INET)"),
    "c": ("study-c-manet-speed.toml", "Study C: MANET flow over AODV against speed, with/without background (ns-2.32); UDP, TCP, SCTP and TFRC"),
    "d": ("study-d-wired-voip.toml", "Study D: transport protocols on a wired VoIP link (ns-2.35); UDP, TCP, SCTP, TFRC and DCCP (CCID 2, 3)"),
    "e": ("study-e-sctp-streams-window.toml", "Study E: SCTP with 1-16 streams against TCP NewReno, Tahoe and SACK over AODV, against the receive window (QualNet)"),
    "f": ("study-f-cc-aqm.toml", "Study F: TCP NewReno, CUBIC, BBR v1/v3, Vegas and Westwood+ under DropTail, RED, CoDel and FQ-CoDel (with and without ECN), 1-4 flows, over a wired bottleneck and an 802.11 chain"),
}


def scenario_dirs() -> list[Path]:
    """Where study scenarios are looked up first, in order: ``$TPSIM_SCENARIOS`` and
    ``./scenarios`` (a checkout); the copies compiled into the package come last."""
    dirs = []
    if os.environ.get("TPSIM_SCENARIOS"):
        dirs.append(Path(os.environ["TPSIM_SCENARIOS"]))
    dirs.append(Path.cwd() / "scenarios")
    return dirs


def find(name: str) -> Optional[Scenario]:
    """The scenario of study ``name`` (``d``, ``study-d`` or the file's stem), or None.

    Raises:
        ScenarioError: if the file found is not a valid scenario.
    """
    key = name.lower().removeprefix("study-").removeprefix("study_")
    files = [STUDIES[key][0]] if key in STUDIES else [f"{name}.toml", name]
    for d in scenario_dirs():
        for f in files:
            p = d / f
            if p.is_file():
                return load(p)
    bundled = dict(_tpsim.bundled_scenarios())
    for f in files:
        if f in bundled:
            return Scenario(bundled[f], f"<tpsim>/scenarios/{f}")
    return None
