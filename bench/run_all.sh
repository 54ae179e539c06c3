#!/usr/bin/env bash
# Run every benchmark on its defaults (or --quick), logs and JSON in bench/out/.
#   bash bench/run_all.sh [--quick]
set -u
cd "$(dirname "$0")/.."
PY=${PYTHON:-/work/venv/bin/python}
mkdir -p bench/out
for script in calls throughput start build; do
  echo "== $script $*"
  "$PY" "bench/$script.py" "$@" --json "bench/out/$script.json" 2>&1 | tee "bench/out/$script.log" | sed -n '/^median/,$p'
done
"$PY" bench/synthetic_spec.py "$@" -o bench/out/synthetic-spec.json
