#!/usr/bin/env python3
"""`cerebro ui DIR` serves the dashboard and the API, read only, over the run
directories under DIR after their runs have ended: two embedded runs in
DIR/runs/ and one `run --ui` folder (its run under experiments/<id>/) are
listed as completed, their details, units and files are read, and every change
(pause, a submission) is refused with 403.

usage: test_ui_dir.py CEREBRO_BINARY"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

from cerebro_test_support import request, wait_for

SPEC = """[experiment]
name = "{name}"
epochs = 1
seed = 3
[data]
source = "idx"
path = "/usr/share/datasets/fashion-mnist"
limit = 1000
[cluster]
workers = 1
[space]
model = ["mlp"]
hidden = [[16]]
lr = [0.001]
"""


def run(binary, tmp, name, *extra):
    spec = os.path.join(tmp, name + ".toml")
    with open(spec, "w") as f:
        f.write(SPEC.format(name=name))
    done = subprocess.run([binary, "run", spec, *extra], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def main():
    binary = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="cerebro-ui-dir-")
    runs = os.path.join(tmp, "runs")
    run(binary, tmp, "first", "--out", os.path.join(runs, "first"))
    run(binary, tmp, "second", "--out", os.path.join(runs, "second"))
    run(binary, tmp, "shown", "--ui", "0", "--out", os.path.join(tmp, "shown"))

    log_path = os.path.join(tmp, "ui.log")
    with open(log_path, "w") as log:
        ui = subprocess.Popen([binary, "ui", tmp, "--listen", "0"], stdout=log, stderr=subprocess.STDOUT)
    try:
        def output():
            with open(log_path) as f:
                return f.read()
        m = wait_for("the ui's address and token", lambda: re.search(
            r"dashboard: (http://127\.0\.0\.1:\d+)/\?token=[0-9a-f]+\napi token: ([0-9a-f]+) ", output()), 30,
            poll=0.1, logs=output)
        wait_for("the list of runs", lambda: "(read only) until Ctrl-C" in output(), 10, logs=output)
        base, token = m.group(1), m.group(2)
        assert "serving 3 runs under " + tmp in output(), output()

        status, answer = request(base, token, "GET", "/api/v1/experiments")
        assert status == 200, answer
        names = sorted(e["name"] for e in answer["experiments"])
        assert names == ["first", "second", "shown"], answer
        assert all(e["status"] == "completed" for e in answer["experiments"]), answer
        assert all(e["units_done"] == e["units_total"] > 0 and e["progress"] == 1 for e in answer["experiments"]), answer
        for e in answer["experiments"]:
            status, detail = request(base, token, "GET", f"/api/v1/experiments/{e['id']}")
            assert status == 200 and detail["best"] is not None and len(detail["configs"]) == 1, detail
            status, units = request(base, token, "GET", f"/api/v1/experiments/{e['id']}/units")
            assert status == 200 and units["count"] >= 1, units
            status, summary = request(base, token, "GET", f"/api/v1/experiments/{e['id']}/files/summary.json")
            assert status == 200 and "best" in summary, summary

        experiment = answer["experiments"][0]["id"]
        status, refused = request(base, token, "POST", f"/api/v1/experiments/{experiment}/pause", "")
        assert status == 403 and "only shows finished runs" in refused["error"], (status, refused)
        status, refused = request(base, token, "POST", "/api/v1/experiments", SPEC.format(name="new"))
        assert status == 403, (status, refused)
        status, refused = request(base, "wrong-token", "GET", "/api/v1/experiments")
        assert status == 401, (status, refused)

        ui.send_signal(signal.SIGINT)
        assert ui.wait(timeout=20) == 0, output()
    finally:
        if ui.poll() is None:
            ui.kill()
            ui.wait()
    empty = subprocess.run([binary, "ui", os.path.join(tmp, "runs", "first", "state")], capture_output=True,
                           text=True, timeout=30)
    assert empty.returncode == 1 and "no run directory" in empty.stderr, empty.stderr
    print("ui over 3 finished runs: listed, read, and changes refused")


if __name__ == "__main__":
    main()
