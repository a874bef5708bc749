"""``python -m tpsim`` is the ``tpsim`` command."""

from .cli import main

if __name__ == "__main__":
    main()
