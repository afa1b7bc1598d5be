"""The client against a real coordinator and agent on 127.0.0.1 (cluster.py):
a small Fashion-MNIST experiment submitted, steered, waited for and
collected; a training template scripted here, uploaded, trained across a
coordinator restart and reattached; HTTPS; and every refusal as its error."""
import csv
import gzip
import os
import re
import shutil
import struct
import subprocess
import time
from typing import Dict

import pytest

import cerebro
from cluster import FASHION_MNIST, UPLOAD_MAX_MB, Cluster, cerebro_binary, small_spec

torch = pytest.importorskip("torch")

SPACE = 'model = ["mlp"]\nhidden = [[32]]\nlr = [0.002, 0.001]\n'


def idx_images(count):
    """The first `count` Fashion-MNIST test images as uint8 [count, 1, 28, 28] and their labels."""
    with gzip.open(os.path.join(FASHION_MNIST, "t10k-images-idx3-ubyte.gz")) as f:
        _, _, rows, cols = struct.unpack(">iiii", f.read(16))
        pixels = torch.frombuffer(bytearray(f.read(count * rows * cols)), dtype=torch.uint8)
    with gzip.open(os.path.join(FASHION_MNIST, "t10k-labels-idx1-ubyte.gz")) as f:
        f.read(8)
        labels = torch.frombuffer(bytearray(f.read(count)), dtype=torch.uint8).long()
    return pixels.reshape(count, 1, rows, cols), labels


def pause_when_placed(cluster, experiment, seconds=120):
    """Pauses as soon as the experiment's data is placed (503 until then),
    asking every 0.1 s (a client without retries of its own)."""
    quick = cerebro.Experiment(cluster.client(retries=0), experiment.id)
    deadline = time.time() + seconds
    while True:
        try:
            return quick.pause()
        except cerebro.Unavailable:
            if time.time() > deadline:
                raise
            time.sleep(0.1)


def wait_until(what, check, seconds=120, poll=0.2):
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = check()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError("timed out waiting for " + what)


class SmoothMlp(torch.nn.Module):
    """A training template: label-smoothed cross-entropy and its own accuracy metric."""

    def __init__(self):
        super().__init__()
        self.hidden = torch.nn.Linear(784, 32)
        self.out = torch.nn.Linear(32, 10)

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x.flatten(1))))

    def loss(self, output, target):
        return torch.nn.functional.cross_entropy(output, target, label_smoothing=0.1)

    def metrics(self, output, target) -> Dict[str, torch.Tensor]:
        return {"accuracy": (output.argmax(1) == target).float().mean()}


@pytest.fixture(scope="module")
def client(cluster):
    return cluster.client()


@pytest.fixture(scope="module")
def steered(cluster):
    """Experiment A, steered while paused (test_steering), then run to its end."""
    return cluster.client().submit(small_spec(SPACE, name="steered"))


def test_the_server_is_this_clients_version_and_has_the_agent(client):
    assert client.version() == {"version": cerebro.__version__, "api": "v1"}
    agents = client.agents()
    assert [(a["name"], a["workers"]) for a in agents] == [("node1", 1)]


def test_steering_pause_stop_clone_add_resume(client, steered, cluster):
    assert steered.id.startswith("steered-")
    assert pause_when_placed(cluster, steered)["paused"] is True
    with pytest.raises(cerebro.Conflict, match="already paused"):
        steered.pause()
    info = steered.info()
    assert info["paused"] is True and info["status"] == "running"
    assert [c["params"]["lr"] for c in sorted(info["configs"], key=lambda c: c["config"])] == [0.002, 0.001]
    stopped = steered.config(1).stop()
    assert (stopped["config"], stopped["status"]) == (1, "stopped")
    with pytest.raises(cerebro.Conflict, match="already ended"):
        steered.config(1).stop()
    clone = steered.clone(0, lr=0.0005)
    assert (clone.created["cloned_from"], clone.created["params"]["lr"]) == (0, 0.0005)
    added = steered.add(lr=0.003)
    assert added.created["cloned_from"] == -1
    assert sorted(c["config"] for c in steered.info()["configs"]) == [0, 1, clone.id, added.id]
    assert steered.resume()["paused"] is False
    final = steered.wait(progress=False, timeout=300)
    assert final["status"] == "completed" and final["progress"] == 1.0
    board = steered.leaderboard()
    assert {r["config"]: r["status"] for r in board} == {0: "completed", 1: "stopped", clone.id: "completed",
                                                          added.id: "completed"}
    ranked = [r["val_accuracy"] for r in board if r["val_accuracy"] is not None]
    assert ranked == sorted(ranked, reverse=True), "best first"
    assert board.best["config"] == final["best"]["config"]
    curves = steered.curves()
    assert [e["epoch"] for e in curves[0]] == [0, 1] and [e["epoch"] for e in curves[added.id]] == [0, 1]
    actions = steered.config(1).info()["actions"]
    assert actions, "the stop is recorded on the config"
    assert steered.id in [e["id"] for e in client.experiments()]


def test_the_best_model_downloads_loads_and_predicts_as_cerebro_predict_does(steered, tmp_path):
    final = steered.wait(progress=False)
    model = steered.best_model()
    assert isinstance(model, torch.jit.ScriptModule)
    saved = steered.best_model(tmp_path / "best.pt")
    info = steered.model_info()
    assert info["task"] == "classification" and info["sample_shape"] == [1, 28, 28]
    images, labels = idx_images(300)
    probabilities = steered.predict(images)
    assert probabilities.shape == (300, 10)
    assert torch.allclose(probabilities.sum(1), torch.ones(300), atol=1e-5)
    accuracy = (probabilities.argmax(1) == labels).float().mean().item()
    assert accuracy > 0.5, "trained on 2000 examples it beats chance by far (%.3f)" % accuracy
    # The same probabilities as the command line's predict over the same images.
    out = tmp_path / "predictions.csv"
    subprocess.run([cerebro_binary(), "predict", str(saved), FASHION_MNIST, "--out", str(out)], check=True,
                   capture_output=True)
    with open(out) as f:
        rows = list(csv.DictReader(f))[:300]
    columns = [k for k in rows[0] if k.startswith("p_")]
    theirs = torch.tensor([[float(r[k]) for k in columns] for r in rows])
    assert torch.allclose(probabilities.double(), theirs.double(), atol=1e-4)
    # A config's own model, and the run's files.
    assert isinstance(steered.config(final["best"]["config"]).model(), torch.jit.ScriptModule)
    summary = steered.summary()
    assert summary["best"]["id"] == final["best"]["config"] and "test_accuracy" in summary["best"]
    header = steered.metrics_csv().splitlines()[0]
    assert "config" in header and "val_accuracy" in header
    page = steered.report(tmp_path / "report.html").read_text()
    assert page.lstrip().lower().startswith("<!doctype html") and "<svg" in page


def test_a_wrong_token_is_an_auth_error(cluster):
    with pytest.raises(cerebro.AuthError) as e:
        cluster.client(token="not-the-token", token_file=None).experiments()
    assert e.value.status == 401


def test_a_bad_spec_names_the_key_and_line(client):
    text = small_spec(SPACE, name="bad").replace("epochs = 2\n", 'epochs = "2"\n')
    assert text.splitlines()[2] == 'epochs = "2"'
    with pytest.raises(cerebro.SpecError) as e:
        client.submit(text)
    assert e.value.status == 400
    assert (e.value.key, e.value.line) == ("[experiment] epochs", 3)
    assert "epochs" in e.value.problems[0]["message"]
    assert "bad" not in [x["name"] for x in client.experiments()], "nothing was started"


def test_an_unknown_experiment_or_config_is_not_found(client, steered):
    with pytest.raises(cerebro.NotFound, match="no-such-1"):
        client.attach("no-such-1")
    with pytest.raises(cerebro.NotFound):
        cerebro.Experiment(client, "no-such-1").pause()
    with pytest.raises(cerebro.NotFound, match="42"):
        steered.config(42).info()


def test_an_oversized_upload_is_too_large(client):
    size = UPLOAD_MAX_MB * 1024 * 1024 + 1
    with pytest.raises(cerebro.TooLarge) as e:
        client.submit(small_spec(SPACE, name="huge"), files={"huge.bin": bytes(size)})
    assert e.value.status == 413
    assert "huge" not in [x["name"] for x in client.experiments()]


def test_a_model_file_that_is_not_torchscript_is_an_error_naming_it(client, tmp_path):
    (tmp_path / "notes.pt").write_text("these are notes, not a model\n")
    spec = small_spec('model = ["notes.pt"]\nlr = [0.001]\n', name="notes")
    (tmp_path / "notes.toml").write_text(spec)
    with pytest.raises(cerebro.SpecError, match="notes.pt"):
        client.submit(tmp_path / "notes.toml")
    # The server refuses it too when a client sends it anyway (here, without the client's check).
    from cerebro import multipart
    body, content_type = multipart.encode(spec, {"notes.pt": b"these are notes, not a model\n"})
    try:
        answer = client._json("POST", "/api/v1/experiments", body=body, content_type=content_type, spec=True)
    except cerebro.CerebroError as refused:
        assert refused.status == 400 and "notes.pt" in refused.message
    else:
        # Accepted, the run refuses the model when it loads it, naming the file.
        with pytest.raises(cerebro.ExperimentFailed, match="notes.pt"):
            cerebro.Experiment(client, answer["id"]).wait(progress=False, timeout=180)


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    if not shutil.which("openssl"):
        pytest.skip("needs openssl")
    folder = tmp_path_factory.mktemp("tls")

    def run(*args):
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
        "-subj", "/CN=cerebro-test-ca")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "node.key", "-out", "node.csr", "-subj", "/CN=localhost")
    (folder / "san.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    run("x509", "-req", "-in", "node.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "node.pem",
        "-days", "2", "-extfile", "san.cnf")
    return folder


def test_https_with_the_clusters_own_certificate(tls_files, tmp_path):
    secure = Cluster(cerebro_binary(), str(tmp_path))
    secure.url = secure.url.replace("http://", "https://")
    folder = str(tls_files)
    argv = [secure.binary, "coordinator", "--listen", "127.0.0.1:%d" % secure.port, "--state", secure.state,
            "--token-file", secure.token_file, "--http", "127.0.0.1:%d" % secure.http_port,
            "--tls-cert", os.path.join(folder, "node.pem"), "--tls-key", os.path.join(folder, "node.key"),
            "--tls-ca", os.path.join(folder, "ca.pem")]
    secure.coordinator, log = secure._spawn(argv, "coordinator-tls.log", secure.env)
    try:
        secure.wait_for_log(log, re.escape("http on " + secure.url), 30)
        trusted = secure.client(ca_file=os.path.join(folder, "ca.pem"))
        assert trusted.version()["version"] == cerebro.__version__
        assert trusted.agents() == []
        with pytest.raises(cerebro.TLSError, match="certificate"):
            secure.client(ca_file=None).agents()
    finally:
        secure.stop()



def test_an_embedded_run_with_ui_is_reached_with_its_printed_url_and_api_token(tmp_path):
    spec = tmp_path / "tiny.toml"
    spec.write_text(small_spec(SPACE, name="tiny"))
    env = dict(os.environ, CEREBRO_FAULT_INJECTION_ENABLE="i-am-a-test", CEREBRO_FAULTS="slow_worker=0:20")
    env.setdefault("CEREBRO_CACHE_DIR", str(tmp_path / "prepared-cache"))
    log = tmp_path / "run.log"
    with open(log, "w") as out:
        run = subprocess.Popen([cerebro_binary(), "run", str(spec), "--ui", "0", "--out", str(tmp_path / "run")],
                               stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        printed = wait_until("the dashboard URL and the API token", lambda: re.search(
            r"dashboard: (http://127\.0\.0\.1:\d+/)\?token=\w+\napi token: (\w+) ", log.read_text()), 60)
        url, token = printed.group(1), printed.group(2)
        # The link's token is a browser's one-time login: the client drops it and sends the API token.
        client = cerebro.Client(printed.group(0).split()[1], token=token)
        assert client.url == url
        assert client.version()["version"] == cerebro.__version__
        [entry] = client.experiments()
        assert entry["name"] == "tiny"
        assert client.attach(entry["id"]).info()["metric"] == "val_accuracy"
    finally:
        run.kill()
        run.wait()


# Last: it restarts the coordinator. Its unfinished experiment resumes; the finished ones above stay
# listed and readable.
def test_a_template_trains_across_a_coordinator_restart_and_is_reattached(client, cluster):
    finished = [e["id"] for e in client.experiments() if e["status"] == "completed"]
    assert finished, "the tests above finished experiments"
    x = torch.rand(2, 1, 28, 28)
    template = cerebro.Template(SmoothMlp(), (x, torch.tensor([1, 2])))
    spec = {"experiment": {"name": "template", "epochs": 2, "seed": 5, "metric": "val_accuracy",
                           "metric_goal": "maximize"},
            "data": {"source": "idx", "path": FASHION_MNIST, "limit": 2000},
            "cluster": {"workers": 1},
            "space": {"model": [template], "lr": [0.003]}}
    experiment = client.submit(spec)
    assert experiment.id.startswith("template-")
    # Paused, so that it is surely unfinished when the coordinator stops.
    pause_when_placed(cluster, experiment)
    cluster.restart_coordinator()
    # A new client finds it by id; the old objects keep working (their requests were retried).
    again = cluster.client().attach(experiment.id)
    after = {e["id"]: e["status"] for e in cluster.client().experiments()}
    assert all(after.get(id) == "completed" for id in finished), after
    assert cluster.client().attach(finished[0]).leaderboard(), "a finished run's results are still read"
    if again.info()["paused"]:
        again.resume()
    final = again.wait(progress=False, timeout=300)
    assert final["status"] == "completed"
    assert experiment.status() == "completed"
    epochs = final["configs"][0]["epochs"]
    # The template is named as the submission named it, not by the server's upload path.
    model = final["configs"][0]["params"]["model"]
    assert model.endswith(".pt") and not model.startswith("/"), model
    assert again.leaderboard()[0]["params"]["model"] == model
    assert [e["epoch"] for e in epochs] == [0, 1] and all(0 < e["val_accuracy"] <= 1 for e in epochs)
    best = again.best_model()
    assert hasattr(best, "loss") and hasattr(best, "metrics"), "the best model is the template itself"
    assert again.summary()["best"]["test_accuracy"] > 0.3
