import os as _os; HERE = _os.path.dirname(_os.path.abspath(__file__)); ROOT = _os.path.dirname(_os.path.dirname(HERE))
import sys; sys.path.insert(0, ROOT); sys.path.insert(0, HERE)
import json
from h import run
steps = json.load(open(sys.argv[1]))
print(run([(d, {}) for d in steps]))
