"""``python -m zorder`` runs the command-line interface."""

from __future__ import annotations

from zorder.cli import main

if __name__ == "__main__":
    main()
