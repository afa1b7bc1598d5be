"""A real coordinator (with its HTTP API) and agent on 127.0.0.1 for the
integration tests: free ports, a temporary state folder and token, every
process started here killed at the end (the way test/support/cluster_util.hpp
runs them for the C++ tests)."""
import os
import random
import re
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

# The coordinator's cap on one submission (its spec and files), small so that the oversized-upload test
# sends little.
UPLOAD_MAX_MB = 4

SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOKEN = "s3cret-token-for-python-tests-0123"
FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


def cerebro_binary():
    """$CEREBRO_BINARY (CTest sets it), else the build tree's; skips the test when neither was built."""
    binary = os.environ.get("CEREBRO_BINARY")
    if binary:
        return binary
    binary = os.path.join(SOURCE, "build", "tools", "cerebro")
    if not os.access(binary, os.X_OK):
        pytest.skip("no cerebro binary: set CEREBRO_BINARY or build build/tools/cerebro")
    return binary


def free_port():
    """A loopback port nobody listens on, below the kernel's ephemeral range
    (a bind(0) port is ephemeral: the kernel may hand it to another process
    before the coordinator listens on it)."""
    low, high = 20000, 32768
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            high = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    for _ in range(200):
        port = random.randrange(low, max(high, low + 1000))
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port")


def small_spec(space, name="small", epochs=2, limit=2000, workers=1, extra=""):
    """The quick Fashion-MNIST spec of test/support/e2e_util.hpp small_spec."""
    return ("[experiment]\nname = \"%s\"\nepochs = %d\nseed = 11\n%s[data]\nsource = \"idx\"\npath = \"%s\"\n"
            "limit = %d\n[cluster]\nworkers = %d\n[space]\n%s" % (name, epochs, extra, FASHION_MNIST, limit,
                                                                   workers, space))


class Cluster:
    def __init__(self, binary, folder, agent_env=None, coordinator_args=()):
        self.binary = binary
        self.coordinator_args = list(coordinator_args)
        self.folder = folder
        self.token_file = os.path.join(folder, "token")
        with open(self.token_file, "w") as f:
            f.write(TOKEN + "\n")
        os.chmod(self.token_file, 0o600)
        self.state = os.path.join(folder, "state")
        self.port = free_port()
        self.http_port = free_port()
        self.url = "http://127.0.0.1:%d/" % self.http_port
        self.env = dict(os.environ)
        self.env.setdefault("CEREBRO_CACHE_DIR", os.path.join(folder, "prepared-cache"))
        self.agent_env = dict(self.env, **(agent_env or {}))
        self.coordinator = None
        self.agents = []
        self.logs = []
        self.starts = 0

    def _spawn(self, argv, log_name, env):
        log_path = os.path.join(self.folder, log_name)
        log = open(log_path, "w")
        self.logs.append(log_path)
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                   cwd=self.folder)
        log.close()
        return process, log_path

    def log_text(self, path):
        with open(path, errors="replace") as f:
            return f.read()

    def all_logs(self):
        return "\n".join("--- %s\n%s" % (os.path.basename(p), self.log_text(p)[-6000:]) for p in self.logs)

    def wait_for_log(self, path, pattern, seconds=60):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if re.search(pattern, self.log_text(path)):
                return True
            time.sleep(0.1)
        raise AssertionError("timed out waiting for %r in %s\n%s" % (pattern, path, self.all_logs()))

    def start_coordinator(self):
        self.starts += 1
        self.coordinator, self.coordinator_log = self._spawn(
            [self.binary, "coordinator", "--listen", "127.0.0.1:%d" % self.port, "--state", self.state,
             "--token-file", self.token_file, "--http", "127.0.0.1:%d" % self.http_port,
             "--upload-max-mb", str(UPLOAD_MAX_MB), *self.coordinator_args],
            "coordinator-%d.log" % self.starts, self.env)
        self.wait_for_log(self.coordinator_log, re.escape("http on " + self.url), 30)

    def start_agent(self, name="node1", workers=1):
        process, log = self._spawn(
            [self.binary, "agent", "--join", "127.0.0.1:%d" % self.port, "--token-file", self.token_file,
             "--workers", str(workers), "--data-dir", os.path.join(self.folder, "data-" + name), "--name", name],
            "agent-%s.log" % name, self.agent_env)
        self.agents.append(process)

    def wait_joined(self, name="node1"):
        self.wait_for_log(self.coordinator_log, "agent %s joined" % re.escape(name), 90)

    def restart_coordinator(self):
        """Stops the coordinator (SIGTERM) and starts it again on the same state and ports."""
        self.coordinator.terminate()
        self.coordinator.wait(30)
        self.start_coordinator()

    def client(self, **kw):
        import cerebro
        kw.setdefault("token_file", self.token_file)
        return cerebro.Client(self.url, **kw)

    def stop(self):
        for process in [self.coordinator] + self.agents:
            if process is not None and process.poll() is None:
                process.kill()
                process.wait(30)


def start_with_one_agent(c):
    """Starts the coordinator and agent node1 and waits for it to join; stops both (and prints the logs)
    when that fails."""
    try:
        c.start_coordinator()
        c.start_agent("node1")
        c.wait_joined("node1")
    except BaseException:
        c.stop()
        print(c.all_logs())
        raise


@pytest.fixture(scope="session")
def cluster(request):
    """A coordinator serving the API and one agent with one worker, joined."""
    binary = cerebro_binary()
    folder = tempfile.mkdtemp(prefix="cerebro-python-")
    # The worker runs each unit a few times slower, so an experiment is still
    # running while the tests steer it.
    c = Cluster(binary, folder, agent_env={"CEREBRO_FAULT_INJECTION_ENABLE": "i-am-a-test",
                                          "CEREBRO_FAULTS": "slow_worker=0:4"})
    start_with_one_agent(c)
    yield c
    c.stop()
    failed = request.session.testsfailed
    if failed:
        print(c.all_logs())
    shutil.rmtree(folder, ignore_errors=True)
