"""What ``mcpgen build`` starts before it loads its source, on the core loading leaves idle.

* A first build of a big source (no models in the cache): the whole process pool, its
  workers loading black and the model generator (``build``, once mcpgen is imported).
* A rebuild of a big source, and any build the ``mcpgen`` command runs: one *spare*
  worker that loads the model generator, ready for the few models a changed operation or
  a small manifest needs. The command forks it first thing (``launch``), before mcpgen's
  own modules are imported, so the two loads run side by side; a build that finds its
  models cached stops it unused.

Only the standard library and ``cache`` are imported here: ``launch`` runs this before
anything else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from mcpgen.format import cache

PRESTART_SOURCE_BYTES = 256_000  # sources this big have hundreds of operations or more

Start = Literal["pool", "spare"]


def plan(source: Path, *, small: bool = False) -> Start | None:
    """What to start for a build of ``source``: None for an unreadable source, and for a
    small one unless ``small`` (the ``mcpgen`` command forks a spare for those too, which
    a schema edit of a small manifest gains from; builds run in this process, tests
    mostly, do not pay its idle loads)."""
    try:
        big = source.stat().st_size >= PRESTART_SOURCE_BYTES
    except OSError:
        return None
    if big and not cache.holds_models():
        return "pool"
    return "spare" if big or small else None


def load_generator() -> None:
    """The spare's warm-up: load the model generator and run it once."""
    from mcpgen.render import models as modelgen

    modelgen.warm()
