import sys; sys.path.insert(0, "/work/wt-r11"); sys.path.insert(0, "/work/wt-r11/bench/r11_kept")
import json
from h import run
steps = json.load(open(sys.argv[1]))
print(run([(d, {}) for d in steps]))
