"""The example notebooks (examples/notebooks/) run as a user runs them: each
executed cell by cell with nbconvert, in a kernel of this Python with the
client package from the source tree, against its own coordinator and agent
on free loopback ports (test/python/cluster.py). A cell that raises fails
the test; so does an executed notebook whose outputs, or whose experiment on
the server, are not what its cells say they do.

The notebooks steer their experiments while they run (pause, clone, stop,
add), and steering an ended experiment is refused. Their searches are small
enough to end in seconds, so here the agent's workers are slowed by the
executable's fault injection (which only tests switch on, through the
environment): the steering cells then find the runs still going however
loaded the machine is, which the notebooks themselves must not depend on."""
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", ".."))
NOTEBOOKS = os.path.join(SOURCE, "examples", "notebooks")
PACKAGE = os.path.join(SOURCE, "python")
sys.path.insert(0, os.path.join(SOURCE, "test", "python"))
try:
    import cerebro  # noqa: F401
except ImportError:
    sys.path.insert(0, PACKAGE)
    import cerebro  # noqa: F401

from cluster import Cluster, cerebro_binary  # noqa: E402

pytest.importorskip("nbconvert")
pytest.importorskip("ipykernel")

# A kernel spec of our own name, so no kernel of the user's or the system's
# with the usual name "python3" (another interpreter, without torch) is used.
KERNEL = "cerebro-notebook-test"
CELL_TIMEOUT = 120
# Each unit takes this many times as long on the agent's two workers.
QUICKSTART_SLOWDOWN = 3
STEERING_SLOWDOWN = 10


def slowed(factor):
    return {"CEREBRO_FAULT_INJECTION_ENABLE": "i-am-a-test",
            "CEREBRO_FAULTS": "slow_worker=0:%d;slow_worker=1:%d" % (factor, factor)}


@pytest.fixture
def folder():
    path = tempfile.mkdtemp(prefix="cerebro-notebooks-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def start_cluster(folder, slowdown):
    os.makedirs(os.path.join(folder, "cluster"))
    c = Cluster(cerebro_binary(), os.path.join(folder, "cluster"), agent_env=slowed(slowdown))
    try:
        c.start_coordinator()
        c.start_agent("node1", workers=2)
        c.wait_joined("node1")
    except BaseException:
        c.stop()
        print(c.all_logs())
        raise
    return c


def kernel_environment(folder, c):
    """What the notebook server would have: the cluster's address and token in
    the environment, the package on PYTHONPATH, Jupyter's folders and this
    interpreter's kernel spec under `folder`."""
    jupyter = os.path.join(folder, "jupyter")
    spec_dir = os.path.join(jupyter, "kernels", KERNEL)
    os.makedirs(spec_dir)
    with open(os.path.join(spec_dir, "kernel.json"), "w") as f:
        json.dump({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                   "display_name": "Python 3 (cerebro notebook test)", "language": "python"}, f)
    env = dict(os.environ)
    env.update({
        "CEREBRO_URL": c.url,
        "CEREBRO_TOKEN_FILE": c.token_file,
        "PYTHONPATH": os.pathsep.join([PACKAGE] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]),
        "JUPYTER_PATH": jupyter,
        "JUPYTER_DATA_DIR": jupyter,
        "JUPYTER_CONFIG_DIR": os.path.join(folder, "jupyter-config"),
        "JUPYTER_RUNTIME_DIR": os.path.join(folder, "jupyter-runtime"),
        "IPYTHONDIR": os.path.join(folder, "ipython"),
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",  # the kernel debugger's warning about frozen modules
    })
    env.pop("MPLBACKEND", None)  # the kernel's own inline backend draws the figures into the notebook
    env.pop("CEREBRO_CA_FILE", None)
    return env


def execute(name, folder, c):
    """Runs examples/notebooks/<name> in a copy under `folder` (its files are
    written there) and returns the executed notebook's JSON."""
    work = os.path.join(folder, "work")
    out = os.path.join(folder, "executed")
    os.makedirs(work)
    shutil.copy(os.path.join(NOTEBOOKS, name), work)
    argv = [sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute",
            "--ExecutePreprocessor.kernel_name=" + KERNEL, "--ExecutePreprocessor.timeout=%d" % CELL_TIMEOUT,
            "--output-dir", out, os.path.join(work, name)]
    started = time.monotonic()
    process = subprocess.Popen(argv, cwd=work, env=kernel_environment(folder, c), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # nbconvert and the kernel it started
        output, _ = process.communicate()
        output += "\n(nbconvert killed after 300 s)"
    print("%s: executed in %.1f s" % (name, time.monotonic() - started))
    if process.returncode != 0:
        print(c.all_logs())
        pytest.fail("%s did not run to its end (nbconvert exit %s):\n%s" % (name, process.returncode, output[-8000:]))
    with open(os.path.join(out, name)) as f:
        notebook = json.load(f)
    # The kernel that ran it is this interpreter (the one with torch and the notebook packages).
    assert notebook["metadata"]["language_info"]["version"] == platform.python_version()
    return notebook


def code_cell(notebook, needle):
    """The one code cell whose source holds `needle`."""
    cells = [c for c in notebook["cells"] if c["cell_type"] == "code" and needle in "".join(c["source"])]
    assert len(cells) == 1, "one cell holds %r, not %d" % (needle, len(cells))
    return cells[0]


def text(cell, stream="stdout"):
    return "".join("".join(o["text"]) for o in cell["outputs"] if o["output_type"] == "stream" and o["name"] == stream)


def html(cell):
    return "".join("".join(o["data"]["text/html"]) for o in cell["outputs"]
                   if o["output_type"] in ("execute_result", "display_data") and "text/html" in o.get("data", {}))


def images(notebook):
    return sum(1 for c in notebook["cells"] if c["cell_type"] == "code" for o in c["outputs"]
               if "image/png" in o.get("data", {}))


def board_rows(printed):
    """{config: (status, params text)} of a printed Leaderboard."""
    rows = {}
    for line in printed.splitlines():
        m = re.match(r"^\s*(\d+|-)\s+(\d+)\s+(\w+)\s+(\S+)\s+(.*)$", line)
        if m:
            rows[int(m.group(2))] = (m.group(3), m.group(5))
    return rows


def the_experiment(c, name):
    client = c.client()
    found = [e for e in client.experiments() if e["name"] == name]
    assert len(found) == 1, "one %s experiment on the server: %s" % (name, client.experiments())
    return client.attach(found[0]["id"])


def test_quickstart(folder):
    c = start_cluster(folder, QUICKSTART_SLOWDOWN)
    try:
        nb = execute("quickstart.ipynb", folder, c)
        experiment = the_experiment(c, "quickstart")
        detail = experiment.info()
    finally:
        c.stop()
    # The server: the grid's two configs and the clone of the best, all trained to the end.
    assert detail["status"] == "completed"
    configs = {k["config"]: k for k in detail["configs"]}
    assert sorted(configs) == [0, 1, 2], configs
    assert all(k["status"] == "completed" and len(k["epochs"]) == 2 for k in configs.values()), configs
    # The notebook: paused after the first epoch, the clone made from the best config then.
    paused = html(code_cell(nb, "experiment.pause()"))
    assert 'class="cerebro-experiment"' in paused and "running (paused)" in paused, paused
    best = re.search(r"best so far: config (\d+) with lr (\S+)", text(code_cell(nb, "board.best")))
    assert best, "the best config after the first epoch is named"
    cloned = text(code_cell(nb, "experiment.clone("))
    assert cloned.splitlines() == ["config 2 is a clone of config %s with lr %s" % (
        best.group(1), configs[2]["params"]["lr"]), "paused: False"], cloned
    assert abs(configs[2]["params"]["lr"] - float(best.group(2)) / 3) < 1e-12
    final_board = board_rows(text(code_cell(nb, "final = experiment.wait(progress=True)")))
    assert {k: v[0] for k, v in final_board.items()} == {0: "completed", 1: "completed", 2: "completed"}
    assert "units" in text(code_cell(nb, "final = experiment.wait(progress=True)"), "stderr"), "the progress"
    # Two pictures of the curves, one of the predictions.
    assert images(nb) == 3
    right = re.search(r"right: (\d+) of 8", text(code_cell(nb, "experiment.predict(images)")))
    assert right and int(right.group(1)) >= 3, "trained, it beats chance (1 in 10) by far"


def test_steering(folder):
    c = start_cluster(folder, STEERING_SLOWDOWN)
    try:
        nb = execute("steering.ipynb", folder, c)
        experiment = the_experiment(c, "steering")
        detail = experiment.info()
        configs = {k["config"]: k for k in detail["configs"]}
        actions = {n: experiment.config(n).info()["actions"] for n in configs}
    finally:
        c.stop()
    assert detail["status"] == "completed" and detail["paused"] is False
    # The grid's four configs, one of them stopped by hand, and the added one.
    assert sorted(configs) == [0, 1, 2, 3, 4], configs
    stopped = [n for n, k in configs.items() if k["status"] == "stopped"]
    assert len(stopped) == 1 and stopped[0] != 4, configs
    assert actions[stopped[0]], "the stop is recorded on the config"
    assert all(k["status"] == "completed" and len(k["epochs"]) == 3 for n, k in configs.items() if n != stopped[0])
    assert len(configs[stopped[0]]["epochs"]) < 3, "it was stopped before its end"
    assert (configs[4]["params"]["hidden"], configs[4]["params"]["lr"]) == ([256], 0.002)
    # The notebook's account of it.
    status = text(code_cell(nb, 'detail["paused"]'))
    assert status.startswith("running paused: True"), status
    assert "paused: False" in text(code_cell(nb, "experiment.resume()"))
    assert "stopping config %d " % stopped[0] in text(code_cell(nb, ".stop()"))
    assert text(code_cell(nb, "experiment.add(")).startswith("added config 4 ")
    table = html(next(k for k in nb["cells"] if "".join(k["source"]).strip() == "experiment"))
    assert 'class="cerebro-experiment"' in table and table.count("<tr>") >= 4 + 5 + 1, table
    final_board = board_rows(text(code_cell(nb, "final = experiment.wait(progress=True)")))
    assert sorted(final_board) == [0, 1, 2, 3, 4] and final_board[stopped[0]][0] == "stopped"
    # The downloads, written beside the notebook.
    report = os.path.join(folder, "work", "steering-report.html")
    with open(report) as f:
        assert f.read(200).lstrip().lower().startswith("<!doctype html")
    assert re.search(r"best config \d+ test accuracy 0\.\d+", text(code_cell(nb, "experiment.summary()")))
