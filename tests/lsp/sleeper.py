"""A stand-in for `serq run` in the tests: sleeps, then prints a small JSON report."""

import json
import sys
import time

time.sleep(float(sys.argv[2]) if len(sys.argv) > 2 else 0)
print(json.dumps({"program": sys.argv[1].endswith(".sq"), "turns": 3, "stages": {"server": 0.8}}))
