"""Entry point of the bundle: the `inspector` CLI (no command opens the GUI)."""

import sys

from inspector_app.cli import main

if __name__ == "__main__":
    sys.exit(main())
