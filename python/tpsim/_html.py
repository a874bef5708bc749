"""The Jinja2 environment of tpsim's HTML pages (the report, the network movie): the
templates and the files they embed are package data in ``templates/``, and every value put
in a page is escaped unless it is marked as markup."""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: The directory of the templates and of the files they embed.
TEMPLATES = Path(__file__).parent / "templates"


def environment() -> Any:
    """A Jinja2 environment over :data:`TEMPLATES`, autoescaping, failing on an undefined
    name; ``tojson`` writes compact JSON (no NaN) that can sit inside a ``<script>``."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.policies["json.dumps_kwargs"] = {"separators": (",", ":"), "allow_nan": False}
    return env


def package_file(name: str) -> str:
    """The text of the file ``name`` of :data:`TEMPLATES` (UTF-8), as markup: embedded as it
    is, not escaped (a script or a style sheet of the package, never user input).

    Raises:
        OSError: if it cannot be read (a broken installation).
    """
    from markupsafe import Markup

    return Markup((TEMPLATES / name).read_text(encoding="utf-8"))
