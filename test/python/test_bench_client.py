"""tools/bench_client at tiny sizes: it runs to the end against the real
binary, prints its table, writes well-formed JSON with positive figures and
leaves no process behind. Its speed goals are reported, not asserted."""
import json
import os
import subprocess
import sys

from cluster import SOURCE, cerebro_binary

TOOL = os.path.join(SOURCE, "tools", "bench_client")


def positive(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def test_bench_client_tiny_run(tmp_path):
    binary = cerebro_binary()
    out = tmp_path / "bench.json"
    answer = subprocess.run(
        [sys.executable, TOOL, "--cerebro", binary, "--configs", "20", "--calls", "5", "--polls", "5",
         "--idle-s", "0.2", "--pairs", "1", "--json", str(out)],
        capture_output=True, text=True, timeout=300)
    assert answer.returncode == 0, answer.stdout + answer.stderr
    assert "leaderboard()" in answer.stdout and "the cost of watching" in answer.stdout

    r = json.loads(out.read_text())
    assert r["params"]["configs"] == 20 and r["params"]["calls"] == 5
    w = r["watched"]
    assert w["run"]["status"] == "completed" and w["run"]["units"] == 40
    assert w["finished_detail"]["configs"] == 20
    lb = w["leaderboard"]
    assert lb["calls"] == 5 and lb["rows"] == 20
    for key in ("p50_ms", "p99_ms", "max_ms"):
        assert positive(lb[key]), (key, lb)
    assert lb["p50_ms"] <= lb["p99_ms"] <= lb["max_ms"]
    assert positive(w["breakdown"]["bytes"]) and positive(w["breakdown"]["total_ms"])
    for key in ("wall_s", "cpu_s", "unit_compute_s"):
        assert positive(w["run"][key]), (key, w["run"])
    assert w["wait"]["polls"] >= 1
    cpu = w["poll_cpu"]
    assert cpu["calls"] == 5 and positive(cpu["threads_cpu_s"]) and positive(cpu["cpu_per_poll_raw_ms"])
    assert cpu["cpu_per_poll_ms"] >= 0

    cost = r["watch_cost"]
    assert cost["polls"] == w["wait"]["polls"]
    assert cost["headline"] in ("live", "finished") and isinstance(cost["met"], bool)
    assert cost["fraction"] >= 0
    assert isinstance(r["leaderboard_goal_met"], bool)

    live = r["live"]
    assert live is not None
    if live.get("poll_cpu"):  # the run may end before it can be paused at these sizes
        assert positive(live["poll_cpu"]["cpu_per_poll_raw_ms"])
        assert live["paused_detail"]["paused"] is True
    else:
        assert "note" in live

    pairs = r["pairs"]
    assert [run["kind"] for run in pairs["runs"]] == ["quiet", "watched"]
    assert all(positive(run["cpu_s"]) and positive(run["wall_s"]) for run in pairs["runs"])
    assert pairs["runs"][0]["polls"] == 0 and pairs["runs"][1]["polls"] >= 1

    # Its folder is gone and no process of it is left.
    assert r["folder"].startswith("/tmp/bench-client-") and not os.path.exists(r["folder"])
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert r["folder"] not in ps
