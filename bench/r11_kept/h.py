import os as _os; HERE = _os.path.dirname(_os.path.abspath(__file__)); ROOT = _os.path.dirname(_os.path.dirname(HERE))
import sys; sys.path.insert(0, ROOT)
"""In-process differential harness: warm-cache import vs empty-cache import after each step."""
import json, os, tempfile, copy
from dataclasses import asdict
from pathlib import Path
from mcpgen.load import load_text
from mcpgen.openapi import import_openapi
from mcpgen.openapi import importer as imod

BUILT = []
_real = imod._Importer.build
def _counted(self, cand, name):
    BUILT.append(f"{cand.method} {cand.url}")
    return _real(self, cand, name)
imod._Importer.build = _counted

def result(text, folder, options, name="api.json"):
    doc = load_text(text, name, folder, json_first=name.endswith(".json"))
    r = import_openapi(doc, copy.deepcopy(options) if options is not None else {}, keep=True)
    return (r.tools, [asdict(o) for o in r.operations], r.defs, r.def_origins,
            [(str(p.level), str(p.location), p.field, p.message) for p in r.problems],
            r.resources, r.renamed)

def run(steps, name="api.json", verbose=True, extra_files=None):
    """steps: list of (text_or_dict, options). Returns list of diffs."""
    folder = Path(tempfile.mkdtemp())
    warm = tempfile.mkdtemp()
    bad = []
    for i, (doc, options) in enumerate(steps):
        text = doc if isinstance(doc, str) else (__import__("yaml").safe_dump(doc, sort_keys=False) if name.endswith(".yaml") else json.dumps(doc, indent=1))
        (folder / name).write_text(text)
        for fname, ftext in (extra_files or {}).items():
            (folder / fname).write_text(ftext)
        os.environ["MCPGEN_CACHE_DIR"] = warm
        BUILT.clear()
        a = result(text, folder, options, name)
        built = list(BUILT)
        os.environ["MCPGEN_CACHE_DIR"] = tempfile.mkdtemp()
        b = result(text, folder, options, name)
        same = a == b
        if verbose:
            print(f"step {i}: {'SAME' if same else 'DIFF'} built={built}")
        if not same:
            labels = ["tools", "ops", "defs", "origins", "problems", "resources", "renamed"]
            for lab, x, y in zip(labels, a, b):
                if x != y:
                    print("  differs in", lab)
                    if lab == "problems":
                        print("   warm-only:", [p for p in x if p not in y])
                        print("   fresh-only:", [p for p in y if p not in x])
                        if set(map(str,x)) == set(map(str,y)): print("   (order only)")
                    elif lab == "ops":
                        for ox, oy in zip(x, y):
                            if ox != oy:
                                print("   op", ox["tool"], {k: (ox[k], oy[k]) for k in ox if ox[k] != oy[k]})
                    elif lab in ("tools", "defs"):
                        print("   warm:", json.dumps(x, sort_keys=True)[:1500])
                        print("   fresh:", json.dumps(y, sort_keys=True)[:1500])
            bad.append(i)
    return bad
