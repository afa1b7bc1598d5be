"""What the Python test scripts (test/scripts/test_api_*.py) share: the API
request, waiting for a condition, a free port, an embedded cluster with its
dashboard (`cerebro repl --ui 0`) and a headless Chromium for it. The scripts
run as `python3 test/scripts/NAME.py`, so this module sits beside them on
their path."""
import json
import os
import random
import re
import socket
import subprocess
import time
import urllib.error
import urllib.request


def small_fashion_spec(name, epochs, lrs, limit=2000):
    """A small Fashion-MNIST experiment: one mlp config per learning rate of `lrs`."""
    return f"""[experiment]
name = "{name}"
epochs = {epochs}
seed = 3
[data]
source = "idx"
path = "/usr/share/datasets/fashion-mnist"
limit = {limit}
[space]
model = ["mlp"]
hidden = [[16]]
lr = [{", ".join(str(lr) for lr in lrs)}]
"""


def request(base, token, method, path, body=None):
    """(status, JSON answer) of an API request with `token` as the bearer; an
    HTTP error is an answer too."""
    data = body.encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Authorization": "Bearer " + token})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def wait_for(what, check, seconds=120, poll=0.2, logs=None):
    """check()'s first true value, asked every `poll` seconds; after `seconds`
    an AssertionError naming `what` (with logs() appended when given)."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = check()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError("timed out waiting for " + what + ("\n" + logs() if logs else ""))


def free_port():
    """A loopback port nobody listens on, drawn below the kernel's ephemeral
    range (the rule of tools/child_process.hpp's free_port()): a port from
    bind(0) is an ephemeral one, which the kernel may hand to the next process
    that binds 0 or connects before the process it was meant for listens."""
    def bindable(port):
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                return None
            return s.getsockname()[1]
    ephemeral_low = 32768
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            ephemeral_low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    low = 20000
    if ephemeral_low > low + 1000:
        for _ in range(200):
            port = bindable(random.randrange(low, ephemeral_low))
            if port:
                return port
    return bindable(0)


class ReplWithDashboard:
    """`cerebro repl --workers 2 --state TMP/state --ui 0`: an embedded cluster
    serving the dashboard and the API, its output in TMP/repl.log. `url` is the
    dashboard's, `link_token` the printed link's one-time token (it logs one
    browser in), `token` the API token for programs. `env` is added to this
    process's environment (e.g. CEREBRO_FAULTS to slow the units down)."""

    def __init__(self, binary, tmp, env=None):
        self.driver = None
        self.log = open(os.path.join(tmp, "repl.log"), "w+")
        self.process = subprocess.Popen(
            [binary, "repl", "--workers", "2", "--state", os.path.join(tmp, "state"), "--ui", "0"],
            stdin=subprocess.PIPE, stdout=self.log, stderr=subprocess.STDOUT, env=dict(os.environ, **(env or {})),
            text=True)
        try:
            m = wait_for("the dashboard URL and API token", lambda: re.search(
                r"dashboard: (http://127\.0\.0\.1:\d+/)\?token=([0-9a-f]+)\napi token: ([0-9a-f]+) ", self.output()),
                20, poll=0.1, logs=self.output)
        except BaseException:
            self.close(failed=False)
            raise
        self.url, self.link_token, self.token = m.group(1), m.group(2), m.group(3)
        self.base = self.url.rstrip("/")

    def output(self):
        """Everything the REPL printed so far."""
        self.log.seek(0)
        return self.log.read()

    def request(self, method, path, body=None):
        return request(self.base, self.token, method, path, body)

    def command(self, line):
        """Types `line` at the REPL."""
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def browser(self):
        """A headless Chromium (headless_chrome()) that close() ends."""
        self.driver = headless_chrome()
        return self.driver

    def close(self, failed, failure_screenshot=None):
        """Ends the browser and the REPL. When the test `failed`: the page's
        screenshot goes to `failure_screenshot` and the end of the REPL's
        output is printed."""
        if self.driver:
            if failed and failure_screenshot:
                self.driver.save_screenshot(failure_screenshot)
            self.driver.quit()
        self.process.kill()
        self.process.wait()
        if failed:
            print(self.output()[-4000:])


def headless_chrome():
    """A Selenium driver for Debian's headless Chromium, 1400x1500, that can
    reach only this machine (a dead proxy for everything else; localhost
    bypasses proxies)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    options = Options()
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1500",
                 "--proxy-server=127.0.0.1:9"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


class CoordinatorWithAgent:
    """`cerebro coordinator --http 127.0.0.1:0` with the token `token` and
    one agent of `workers` workers joined, their output in TMP/*.log. `base`
    is the API's URL (no trailing slash); `env` is added to both processes'
    environment (e.g. CEREBRO_FAULTS to slow the units down)."""

    def __init__(self, binary, tmp, token, workers=1, env=None, coordinator_args=()):
        self.tmp, self.token, self.processes, self.log_paths = tmp, token, [], []
        self.env = dict(os.environ, **(env or {}))
        self.token_file = os.path.join(tmp, "cluster.token")
        with open(self.token_file, "w") as f:
            f.write(token + "\n")
        os.chmod(self.token_file, 0o600)
        port = free_port()
        try:
            self._start("coordinator", [binary, "coordinator", "--listen", f"127.0.0.1:{port}", "--state",
                                        os.path.join(tmp, "state"), "--token-file", self.token_file, "--http",
                                        "127.0.0.1:0", *coordinator_args])
            http = wait_for("the coordinator's HTTP port", lambda: re.search(
                r"http on http://127\.0\.0\.1:(\d+)/", self.log("coordinator")), 20, poll=0.25, logs=self.logs)
            self.base = f"http://127.0.0.1:{http.group(1)}"
            self._start("agent", [binary, "agent", "--join", f"127.0.0.1:{port}", "--token-file", self.token_file,
                                  "--workers", str(workers), "--data-dir", os.path.join(tmp, "agent-data"),
                                  "--name", "node1"])
            wait_for("the agent", lambda: "agent node1 joined" in self.log("coordinator"), 60, poll=0.25,
                     logs=self.logs)
        except BaseException:
            self.close()
            raise

    def _start(self, name, argv):
        path = os.path.join(self.tmp, name + ".log")
        self.log_paths.append(path)
        self.processes.append(subprocess.Popen(argv, stdout=open(path, "w"), stderr=subprocess.STDOUT,
                                               env=self.env))

    def log(self, name):
        with open(os.path.join(self.tmp, name + ".log")) as f:
            return f.read()

    def logs(self):
        """The end of every process' output, for a failure's message."""
        return "".join(f"--- {p}\n" + open(p).read()[-3000:] for p in self.log_paths)

    def request(self, method, path, body=None):
        return request(self.base, self.token, method, path, body)

    def close(self):
        for p in self.processes:
            p.kill()
            p.wait()
