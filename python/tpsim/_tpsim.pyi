"""Type stubs of the compiled engine module (PyO3)."""

from typing import Any, Callable, Optional

__version__: str
#: Build fingerprint: a hash of the engine's sources and Cargo.lock, embedded at build time.
__build__: str

class ScenarioError(ValueError):
    """A scenario that cannot be read or is not valid."""

    diagnostics: list[dict[str, Any]]
    source: str

def resolve(text: str, source: str = "<string>") -> str:
    """Validates a scenario; returns it with all defaults resolved, as JSON.

    Raises ScenarioError."""

class RunLimitError(RuntimeError):
    """A run stopped because it exceeded a limit the user set (wall-clock time)."""

def run(text: str, source: str = "<string>", seed: Optional[int] = None, run: int = 0, pcap_dir: Optional[str] = None, max_wall_s: Optional[float] = None, progress: Optional[Callable[[float, float], Any]] = None) -> dict[str, Any]:
    """Runs one replication; returns {flows, network, timeseries, engine_seconds} as plain columns,
    and ``trace`` (the per-packet event trace) with ``[output] trace = true``; with
    ``[output] ns2_trace`` also ``trace`` (with the ns-2 rows and columns) and ``ns2_trace``
    (the format's name); ``animation`` (the network movie's trace) with ``[output] animation =
    true``.
    Checks for signals (KeyboardInterrupt) and ``max_wall_s`` between slices of events, and
    calls ``progress(now_s, end_s)`` (simulated seconds) at most every 0.2 s of wall time.

    Raises ScenarioError, RunLimitError, RuntimeError, KeyboardInterrupt."""

def estimate_memory(text: str, source: str = "<string>") -> list[tuple[str, int]]:
    """The memory one run of the scenario needs, as (part, bytes) pairs.

    Raises ScenarioError."""

def estimate_memory_floor(text: str) -> list[tuple[str, int]]:
    """A lower bound of :func:`estimate_memory` from the text alone (its flows, counted
    without parsing), as (part, bytes) pairs; never raises."""

def unit_families() -> list[tuple[str, str, list[tuple[str, float]]]]:
    """The scenario format's unit families as (family, SI unit, [(unit, factor to the SI
    unit)]), linear units only (no dBm)."""

def json_schema() -> str:
    """JSON Schema of the scenario format."""

def apply_overrides(text: str, overrides_json: str, source: str = "<string>", drop_sweep: bool = True) -> str:
    """Returns the scenario text with [path, value] overrides set (and [sweep] dropped).

    Raises ScenarioError."""

def _panic_for_tests() -> None:
    """Raises RuntimeError from a caught Rust panic (tests only)."""

def bundled_scenarios() -> list[tuple[str, str]]:
    """(file name, text) of the reference study scenarios compiled into the package."""

def embed_files(text: str, source: str = "<string>") -> str:
    """Returns the scenario text with ns-2 `file` references replaced by their content (`text`).

    Raises ScenarioError."""

def ns2_to_toml(
    movement: str,
    traffic: Optional[str] = None,
    movement_name: str = "movement file",
    traffic_name: Optional[str] = None,
    first_id: Optional[int] = None,
    duration_s: Optional[float] = None,
) -> str:
    """Converts ns-2 movement (and traffic) files into a tpsim scenario (TOML text).

    Raises ValueError naming the file and line of a malformed line."""
