"""``python -m tpsim`` is the ``tpsim`` command."""

from .cli import main

main()
