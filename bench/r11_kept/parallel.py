"""Two builds at once through one cache dir (same document; then two documents with the
same name in two folders), each compared with a fresh build."""
import os as _os; HERE = _os.path.dirname(_os.path.abspath(__file__)); ROOT = _os.path.dirname(_os.path.dirname(HERE))
import sys, json, copy, subprocess, os, tempfile
sys.path.insert(0, HERE)
import e2e, fuzz, random
from pathlib import Path
d = Path(tempfile.mkdtemp(prefix="r11-par-")); cache = str(d / "warm")
rng = random.Random(7); v0 = fuzz.gen_doc(rng); v1 = fuzz.edit(rng, v0)
for sub, doc in (("x", v0), ("y", v1)):
    (d / sub).mkdir(); (d / sub / "api.json").write_text(json.dumps(doc, indent=1))
e2e.build(d / "x" / "api.json", d / "cold", cache)
def start(sub, out):
    env = {**os.environ, "MCPGEN_CACHE_DIR": cache}
    return subprocess.Popen([sys.executable, "-m", "mcpgen", "build", str(d / sub / "api.json"), "-o", str(d / out)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
for round_ in range(3):
    procs = [(sub, f"{sub}{round_}{k}", start(sub, f"{sub}{round_}{k}")) for sub in ("x", "y") for k in range(2)]
    for sub, out, p in procs:
        err = p.communicate()[1].replace(str(d / out), "OUT")
        rf, ef = e2e.build(d / sub / "api.json", d / f"fresh-{out}", str(d / f"fc-{out}"))
        diff = subprocess.run(["diff", "-r", str(d / out), str(d / f"fresh-{out}")], capture_output=True, text=True).stdout
        print(round_, out, "rc", p.returncode, rf, "stderr same" if err == ef else "STDERR DIFF", "pkg same" if not diff else "PKG DIFF")
print(sorted(os.listdir(cache)))
