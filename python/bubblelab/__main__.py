"""``python -m bubblelab sweep …``: the Python package's command line (sweeps, on Ray too)."""

import sys

from .sweep import main

if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or args[0] != "sweep":
        print("usage: python -m bubblelab sweep SWEEP.json [--output F] [--ray ADDRESS] [--workers N] [--resume]", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(args[1:]))
