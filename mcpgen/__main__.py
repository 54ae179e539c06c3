"""``python -m mcpgen`` and the ``mcpgen`` console script.

The CLI is imported inside the ``try`` so that Ctrl-C while it is still importing (before
its own handler exists) is the same one line and exit status 130, never a traceback."""

import gc
import sys


def main() -> None:
    try:
        from mcpgen.cli import run

        run()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    finally:
        # The process ends: what the command made goes with it, and the collector's last
        # pass at exit need not walk it (GitHub, one operation changed: ~60 ms of 1.5 s)
        gc.freeze()


if __name__ == "__main__":
    main()
