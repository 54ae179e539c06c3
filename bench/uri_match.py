"""Time matching hostile URIs against resource templates: the runtime's matcher of a
checkout given as OLD (``python bench/uri_match.py OLD_REPO``) against this one's,
alternating, best of 3. A URI is the template's scheme and a fill repeated to N characters
that never completes a match, so a backtracking matcher tries every split. Past
``MAX_URI`` (4,096) the server matches nothing; the last column is this checkout's pattern
run on 100,000 characters all the same, to show its time stays linear."""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path
from types import ModuleType

CASES = [  # (template, fill)
    ("app://{+a}{b}x", "a"),
    ("app://{+a}{+b}{+c}x", "a"),
    ("app://{+a}/{b}/{+c}x", "a/"),
    ("app://{+a}x{b}y{+c}z", "xay"),
    ("app://{+a}x{b}y{+c}z{d}w{+e}v", "xayzaw"),
    ("app://{+a}/raw/{+b}/end", "/raw/"),
]
SIZES = (1000, 4000)
SLOW = 5.0  # seconds: a size past one this slow is not tried (cubic: 78 s at 4,000)


def load(repo: str) -> ModuleType:
    path = Path(repo) / "mcpgen/runtime/uri.py"
    spec = importlib.util.spec_from_file_location(f"uri_{abs(hash(repo))}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def best(module: ModuleType, template: str, uri: str, capped: bool = True) -> float:
    pattern, names = module.to_regex(template), module.variables(template)
    times = []
    for _ in range(3):
        started = time.perf_counter()
        if capped:
            assert module.match(pattern, names, uri) is None
        else:
            assert pattern.fullmatch(uri) is None
        times.append(time.perf_counter() - started)
        if times[-1] > SLOW:
            break
    return min(times)


def main() -> None:
    old, new = load(sys.argv[1]), load(str(Path(__file__).parent.parent))
    print(f"{'template':32} {'chars':>5} {'old ms':>10} {'new ms':>7} {'new, 100k uncapped':>19}")
    for template, fill in CASES:
        skip_old = False
        for size in SIZES:
            uri = "app://" + fill * (size // len(fill))
            a = float("nan") if skip_old else best(old, template, uri)
            b = best(new, template, uri)
            skip_old = skip_old or a > SLOW
            line = f"{template:32} {size:>5} {a * 1000:>10.2f} {b * 1000:>7.3f}"
            print(line, end="" if size == SIZES[-1] else "\n")
        huge = "app://" + fill * (100_000 // len(fill))
        print(f" {best(new, template, huge, capped=False) * 1000:>15.2f} ms")


if __name__ == "__main__":
    main()
