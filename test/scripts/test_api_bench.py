#!/usr/bin/env python3
"""tools/api_bench on a tiny spec (the lead runs it on a real one): it starts a
coordinator and an agent, runs quiet and watched, and reports the API's
latency percentiles and both runs' efficiency.

usage: test_api_bench.py SOURCE_DIR CEREBRO_BINARY"""
import json
import os
import subprocess
import sys
import tempfile

from cerebro_test_support import small_fashion_spec

SPEC = small_fashion_spec("benchsmoke", 1, [0.001, 0.002])

source, binary = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="cerebro-api-bench-test-")
spec = os.path.join(tmp, "spec.toml")
open(spec, "w").write(SPEC)
out = os.path.join(tmp, "out")
run = subprocess.run([sys.executable, os.path.join(source, "tools", "api_bench"), "--cerebro", binary, "--spec", spec,
                      "--pollers", "4", "--runs", "2", "--out", out], capture_output=True, text=True, timeout=240)
assert run.returncode == 0, run.stdout + run.stderr
report = json.load(open(os.path.join(out, "results.json")))
assert [r["watched"] for r in report["runs"]] == [False, True], report
watched = report["runs"][1]
assert watched["requests"] > 0, report
assert 0 < watched["p50_ms"] <= watched["p99_ms"] <= watched["max_ms"], report
for r in report["runs"]:
    assert r["wall_s"] > 0 and r["workers"] == 2 and 0 < r["efficiency"], report
assert report["efficiency_ratio"] > 0, report
print("ok:", json.dumps({k: v for k, v in report.items() if k != "runs"}))
