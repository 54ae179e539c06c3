"""End-to-end: `python -m mcpgen build` warm vs fresh after each edit; diff -r and stderr."""
import os as _os; HERE = _os.path.dirname(_os.path.abspath(__file__)); ROOT = _os.path.dirname(_os.path.dirname(HERE))
import sys; sys.path.insert(0, HERE)
import json, os, random, subprocess, tempfile, shutil
from pathlib import Path

def build(doc_path, out, cache):
    env = {**os.environ, "MCPGEN_CACHE_DIR": cache}
    p = subprocess.run([sys.executable, "-m", "mcpgen", "build", str(doc_path), "-o", str(out)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stderr.replace(str(out), "OUT")

def run_steps(steps, name="api.json", label=""):
    d = Path(tempfile.mkdtemp(prefix="r11e2e-"))
    warm = d / "warm-cache"
    bad = []
    for i, doc in enumerate(steps):
        text = doc if isinstance(doc, str) else json.dumps(doc, indent=1)
        (d / name).write_text(text)
        rw, ew = build(d / name, d / f"w{i}", str(warm))
        rf, ef = build(d / name, d / f"f{i}", str(d / f"fresh{i}"))
        diff = subprocess.run(["diff", "-r", str(d / f"w{i}"), str(d / f"f{i}")], capture_output=True, text=True).stdout
        if rw != rf or ew != ef or diff:
            bad.append(i)
            print(f"{label} step {i}: rc {rw}/{rf} stderr_same={ew == ef} diff_lines={len(diff.splitlines())}", flush=True)
            if ew != ef:
                import difflib
                print("\n".join(list(difflib.unified_diff(ew.splitlines(), ef.splitlines(), "warm", "fresh", lineterm="", n=0))[:12]))
            print(diff[:800])
    if not bad:
        shutil.rmtree(d)
    return bad

if __name__ == "__main__":
    import fuzz
    start, count = int(sys.argv[1]), int(sys.argv[2])
    for seed in range(start, start + count):
        rng = random.Random(seed)
        steps = [fuzz.gen_doc(rng)]
        for _ in range(3):
            steps.append(fuzz.edit(rng, steps[-1]))
        bad = run_steps(steps, label=f"seed {seed}")
        print("seed", seed, "bad" if bad else "ok", bad, flush=True)
