"""docs/PYTHON.md as a user runs it: in a fresh folder, its install commands
(a venv from Debian's Python, the package installed with pip and no index),
its commands that start a coordinator and an agent, then its Python blocks
in order as one script with the venv's Python, its TOML blocks saved under
the names the page gives them. The page's ports (7070, 8080) become free
ones; nothing else is changed."""
import os
import re
import shutil
import signal
import subprocess
import time


from cluster import SOURCE, cerebro_binary, free_port

PAGE = os.path.join(SOURCE, "docs", "PYTHON.md")


def blocks():
    """(kind, name, text) of every fenced block; `name` is the file a TOML
    block is saved as: the `NAME`: that ends the text before it."""
    with open(PAGE) as f:
        page = f.read()
    found = []
    for m in re.finditer(r"^```(\w*)\n(.*?)^```$", page, re.S | re.M):
        before = page[:m.start()].rstrip()
        named = re.search(r"`([\w.\-]+)`:$", before)
        found.append((m.group(1), named.group(1) if named else None, m.group(2)))
    return found


def test_every_block_is_one_the_guide_test_runs():
    kinds = [kind for kind, _, _ in blocks()]
    assert set(kinds) <= {"sh", "python", "toml"}, kinds
    assert kinds.count("sh") == 2 and kinds[:2] == ["sh", "sh"], "install, then start the cluster, then Python"
    assert kinds.count("python") >= 8
    assert all(name for kind, name, _ in blocks() if kind == "toml"), "each spec block names its file"


def wait_for(log, pattern, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        with open(log, errors="replace") as f:
            if re.search(pattern, f.read()):
                return
        time.sleep(0.2)
    with open(log, errors="replace") as f:
        raise AssertionError("timed out waiting for %r:\n%s" % (pattern, f.read()[-5000:]))


def test_the_guide_runs_as_written(tmp_path):
    binary = cerebro_binary()
    port, http_port = free_port(), free_port()

    def local(text):
        return text.replace("127.0.0.1:7070", "127.0.0.1:%d" % port).replace("127.0.0.1:8080",
                                                                                 "127.0.0.1:%d" % http_port)

    found = [(kind, name, local(text)) for kind, name, text in blocks()]
    shutil.copytree(os.path.join(SOURCE, "python"), tmp_path / "python",
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(HOME=str(tmp_path), PATH=os.path.dirname(os.path.abspath(binary)) + ":/usr/bin:/bin")
    env.setdefault("CEREBRO_CACHE_DIR", str(tmp_path / "prepared-cache"))
    install, start = [text for kind, _, text in found if kind == "sh"]
    done = subprocess.run(["bash", "-e", "-c", install], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=300)
    assert done.returncode == 0, done.stdout
    assert done.stdout.strip().splitlines()[-1] == "0.1.0"
    for kind, name, text in found:
        if kind == "toml":
            (tmp_path / name).write_text(text)
    script = tmp_path / "guide.py"
    script.write_text("\n\n".join(text for kind, _, text in found if kind == "python"))
    log = str(tmp_path / "cluster.log")
    with open(log, "w") as out:
        cluster = subprocess.Popen(["bash", "-e", "-c", start], cwd=tmp_path, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for(log, re.escape("http on http://127.0.0.1:%d/" % http_port), 30)
        wait_for(log, "agent node1 joined", 90)
        run = subprocess.run([str(tmp_path / "cerebro-env" / "bin" / "python"), str(script)], cwd=tmp_path, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=480)
        with open(log, errors="replace") as f:
            logs = f.read()[-4000:]
        assert run.returncode == 0, run.stdout[-8000:] + "\n--- cluster\n" + logs
    finally:
        try:
            os.killpg(cluster.pid, signal.SIGKILL)  # the group the block's bash leads: its coordinator and agent
        except ProcessLookupError:
            pass
        cluster.wait()
    printed = run.stdout
    assert "{'api': 'v1', 'version': '0.1.0'}" in printed
    assert "['node1']" in printed
    assert "smooth_mlp.pt (2, 10)" in printed
    assert "[experiment] epochs 2" in printed, "the SpecError example names the key and line"
    assert "404" in printed
    assert re.search(r"^paused: True\n[\s\S]*^config 1: stopped\n[\s\S]*^paused: False\n", printed, re.M)
    for written in ("metrics.csv", "report.html", "best_model.pt"):
        assert (tmp_path / written).stat().st_size > 0, written
