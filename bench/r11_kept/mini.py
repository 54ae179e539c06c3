import os as _os; HERE = _os.path.dirname(_os.path.abspath(__file__)); ROOT = _os.path.dirname(_os.path.dirname(HERE))
import sys; sys.path.insert(0, ROOT); sys.path.insert(0, HERE)
import json, copy, io, contextlib
from h import run
def bad(steps):
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            return bool(run([(d, {}) for d in steps], verbose=False))
        except Exception:
            return False
def paths_of(node, prefix=()):
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            out.append((*prefix, k)); out += paths_of(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.append((*prefix, i)); out += paths_of(v, (*prefix, i))
    return out
def delete(doc, path):
    doc = copy.deepcopy(doc); node = doc
    try:
        for p in path[:-1]: node = node[p]
        del node[path[-1]]
    except (KeyError, IndexError, TypeError):
        return doc, False
    return doc, True
steps = json.load(open(sys.argv[1]))
if len(sys.argv) > 2:
    a, b = map(int, sys.argv[2].split(","))
    steps = [steps[a], steps[b]]
assert bad(steps), "not reproduced"
changed = True
while changed:
    changed = False
    # try dropping whole steps
    for i in range(len(steps) - 1):
        trial = steps[:i] + steps[i+1:]
        if len(trial) >= 2 and bad(trial):
            steps = trial; changed = True; break
    for path in sorted(set(p for d in steps for p in paths_of(d)), key=len):
        if path[0] in ("openapi", "info", "servers"): continue
        trial, any_ = [], False
        for d in steps:
            nd, ok = delete(d, path); trial.append(nd); any_ |= ok
        if any_ and bad(trial):
            steps = trial; changed = True
print(json.dumps(steps))
