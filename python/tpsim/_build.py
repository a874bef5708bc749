"""The engine build's fingerprint, without importing more than the engine module (``tpsim
--version`` needs only this)."""

from . import _tpsim


def build_id() -> str:
    """The engine build's fingerprint: the version and a hash of the engine's sources and
    Cargo.lock taken when it was compiled (``"0.1.0+1a2b3c4d5e6f7a8b"``)."""
    return f"{_tpsim.__version__}+{_tpsim.__build__}"
