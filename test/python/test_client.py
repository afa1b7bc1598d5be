"""The client against a stub server: the version check, submissions (plain
TOML, or multipart with the files a spec names), steering, downloads and
waiting."""
import email.parser
import email.policy
import io
import json

import pytest

import cerebro
from stub import StubServer

DETAIL = {"id": "small-1", "name": "small", "status": "running", "progress": 0.5, "units_done": 2, "units_total": 4,
          "elapsed_s": 10.0, "metric": "val_accuracy", "paused": False,
          "configs": [{"config": 1, "params": {"lr": 0.002, "model": "mlp"}, "status": "running", "error": "",
                       "metric": 0.8, "rank": 1,
                       "epochs": [{"epoch": 0, "train_loss": 1.0, "val_loss": 0.9, "val_accuracy": 0.8, "seconds": 1}]},
                      {"config": 0, "params": {"lr": 0.001, "model": "mlp"}, "status": "running", "error": "",
                       "metric": None, "rank": None, "epochs": []}],
          "best": {"config": 1, "metric": 0.8, "params": {"lr": 0.002}}, "pareto": [], "pareto_objectives": []}


def entry_of(detail):
    """What GET .../status answers: the detail's entry, without the configs."""
    return {k: v for k, v in detail.items() if k not in ("configs", "pareto", "pareto_objectives", "spec")}


def parts_of(request):
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + request.headers["Content-Type"].encode() + b"\r\n\r\n" + request.body)
    return {(p.get_param("name", header="content-disposition"), p.get_filename()): p.get_payload(decode=True)
            for p in message.iter_parts()}


def submitted(request):
    return 201, {"id": "small-1"}


@pytest.fixture
def stub():
    routes = {("POST", "/api/v1/experiments"): submitted, ("GET", "/api/v1/experiments/small-1"): (200, DETAIL),
              ("GET", "/api/v1/experiments/small-1/status"): (200, entry_of(DETAIL))}
    with StubServer(routes) as server:
        yield server


def client_of(stub):
    return cerebro.Client(stub.url, token="t")


@pytest.mark.parametrize("server,accepted", [("0.1.0", True), ("0.1.9", True), ("0.2.0", False),
                                             ("1.1.0", False), ("garbage", False)])
def test_the_first_request_checks_the_servers_major_minor_version(server, accepted):
    routes = {("GET", "/api/v1/version"): (200, {"version": server, "api": "v1"}),
              ("GET", "/api/v1/agents"): (200, {"agents": []})}
    with StubServer(routes) as stub:
        client = client_of(stub)
        if accepted:
            assert client.agents() == []
            assert client.agents() == []
            assert client.version() == {"version": server, "api": "v1"}
            assert stub.paths().count("/api/v1/version") == 1, "checked once"
        else:
            with pytest.raises(cerebro.VersionMismatch) as e:
                client.agents()
            assert server in str(e.value) and "0.1.0" in str(e.value)
            assert "/api/v1/agents" not in stub.paths(), "nothing is asked of a server of another version"


def test_a_server_without_the_version_endpoint_is_older_than_the_client():
    routes = {("GET", "/api/v1/version"): (404, {"error": "no such endpoint: GET /api/v1/version", "status": 404})}
    with StubServer(routes) as stub:
        with pytest.raises(cerebro.VersionMismatch, match="older than this client \\(cerebro 0.1.0\\)"):
            client_of(stub).experiments()


def test_a_wrong_token_is_an_auth_error_at_the_first_request():
    routes = {("GET", "/api/v1/version"): (401, {"error": "this server needs the cluster token", "status": 401})}
    with StubServer(routes) as stub:
        with pytest.raises(cerebro.AuthError, match="needs the cluster token") as e:
            client_of(stub).experiments()
    assert e.value.status == 401


def test_a_spec_without_files_is_sent_as_toml(stub, tmp_path):
    client = client_of(stub)
    experiment = client.submit('[experiment]\nname = "small"\n[space]\nmodel = "mlp"\n')
    assert experiment.id == "small-1" and isinstance(experiment, cerebro.Experiment)
    post = stub.requests[-1]
    assert post.headers["Content-Type"] == "application/toml"
    assert post.body == b'[experiment]\nname = "small"\n[space]\nmodel = "mlp"\n'


def test_a_spec_file_brings_the_relative_files_it_names(stub, tmp_path):
    (tmp_path / "net.pt").write_bytes(b"PK\x03\x04torchscript")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "train.csv").write_text("a,label\n1,x\n")
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "cat").mkdir()
    (tmp_path / "images" / "cat" / "1.png").write_bytes(b"png")
    spec = ('[data]\nsource = "csv"\ntrain = "data/train.csv"\ntest = "/abs/test.csv"\nlabel_column = "label"\n'
            '[space]\nmodel = ["net.pt", "mlp", "missing.pt", "../outside.pt"]\n')
    (tmp_path / "spec.toml").write_text(spec)
    client_of(stub).submit(tmp_path / "spec.toml", files={"extra/w.bin": b"\x00\x01"})
    parts = parts_of(stub.requests[-1])
    assert parts == {("spec", None): spec.encode(), ("file", "net.pt"): b"PK\x03\x04torchscript",
                     ("file", "data/train.csv"): b"a,label\n1,x\n", ("file", "extra/w.bin"): b"\x00\x01"}
    # A directory the spec names goes file by file.
    (tmp_path / "img.toml").write_text('[data]\nsource = "images"\npath = "images"\n[space]\nmodel = "cnn"\n')
    client_of(stub).submit(str(tmp_path / "img.toml"))
    assert ("file", "images/cat/1.png") in parts_of(stub.requests[-1])


def test_a_dict_spec_is_written_as_toml_with_its_name(stub):
    spec = {"experiment": {"epochs": 2}, "data": {"source": "idx", "path": "/data"},
            "space": {"model": ["mlp"], "lr": [0.001, 0.002]}}
    client_of(stub).submit(spec, name="from-python")
    import tomllib
    sent = tomllib.loads(stub.requests[-1].body.decode())
    assert sent == dict(spec, experiment={"epochs": 2, "name": "from-python"})
    assert spec["experiment"] == {"epochs": 2}, "the caller's dict is left as it was"


def test_name_replaces_or_adds_the_experiment_name_in_toml_text(stub):
    client = client_of(stub)
    client.submit('[experiment]\nname = "old"\nepochs = 2\n[space]\nmodel = "mlp"\n', name="new")
    assert stub.requests[-1].body == b'[experiment]\nname = "new"\nepochs = 2\n[space]\nmodel = "mlp"\n'
    client.submit('[experiment]\nepochs = 2\n', name="new")
    assert stub.requests[-1].body == b'[experiment]\nname = "new"\nepochs = 2\n'
    client.submit('[space]\nmodel = "mlp"\n', name='q"uote')
    assert stub.requests[-1].body == b'[space]\nmodel = "mlp"\n\n[experiment]\nname = "q\\"uote"\n'


def test_a_model_file_that_is_not_torchscript_is_refused_before_sending(stub, tmp_path):
    (tmp_path / "net.pt").write_text("print('hello')\n")
    (tmp_path / "spec.toml").write_text('[space]\nmodel = ["net.pt"]\n')
    with pytest.raises(cerebro.SpecError, match="net.pt is not a TorchScript file") as e:
        client_of(stub).submit(tmp_path / "spec.toml")
    assert e.value.key == "[space] model"
    assert stub.paths("POST") == []


def test_a_missing_spec_file_is_not_taken_for_toml_text(stub):
    with pytest.raises(FileNotFoundError, match="no-such.toml"):
        client_of(stub).submit("no-such.toml")


def test_a_bad_spec_answer_is_a_spec_error_with_its_first_problem(stub):
    problems = [{"message": "[data] path must be a string", "key": "[data] path", "line": 4, "column": 8}]
    stub.routes[("POST", "/api/v1/experiments")] = (400, {"error": "the request body:4:8: [data] path must be a "
                                                                    "string", "status": 400, "problems": problems})
    with pytest.raises(cerebro.SpecError) as e:
        client_of(stub).submit("[data]\nsource = 'idx'\n\npath = 3\n")
    assert (e.value.key, e.value.line, e.value.column, e.value.problems) == ("[data] path", 4, 8, problems)


def test_steering_asks_the_documented_endpoints(stub):
    base = "/api/v1/experiments/small-1"
    stub.routes.update({
        ("POST", base + "/pause"): (200, {"paused": True}),
        ("POST", base + "/resume"): (409, {"error": "small-1 is not paused", "status": 409}),
        ("POST", base + "/configs/1/stop"): (200, {"config": 1, "status": "stopped"}),
        ("POST", base + "/configs/0/clone"): (201, {"config": 2, "params": {"lr": 0.0005}, "cloned_from": 0}),
        ("POST", base + "/configs"): (201, {"config": 3, "params": {}, "cloned_from": -1}),
        ("GET", base + "/configs/1"): (200, {"config": 1, "actions": []}),
        ("GET", base + "/configs/42"): (404, {"error": "small-1 has no config 42", "status": 404}),
    })
    experiment = client_of(stub).attach("small-1")
    assert experiment.pause() == {"paused": True}
    with pytest.raises(cerebro.Conflict, match="not paused"):
        experiment.resume()
    assert experiment.config(1).stop() == {"config": 1, "status": "stopped"}
    clone = experiment.clone(0, lr=0.0005)
    assert (clone.id, clone.created["cloned_from"]) == (2, 0)
    added = experiment.add()
    assert added.id == 3
    assert experiment.config(1).info() == {"config": 1, "actions": []}
    with pytest.raises(cerebro.NotFound, match="no config 42"):
        experiment.config(42).info()
    with pytest.raises(ValueError):
        experiment.clone(0)
    bodies = {r.path: r.json() for r in stub.requests if r.method == "POST"}
    assert bodies[base + "/configs/0/clone"] == {"params": {"lr": 0.0005}}
    assert bodies[base + "/configs"] == {"params": {}}
    assert bodies[base + "/pause"] == {}


def test_an_unknown_experiment_is_not_found(stub):
    with pytest.raises(cerebro.NotFound):
        client_of(stub).attach("no-such-1")


def test_results_from_the_detail(stub):
    experiment = cerebro.Experiment(client_of(stub), "small-1")
    board = experiment.leaderboard()
    assert [r["config"] for r in board] == [1, 0] and board.metric == "val_accuracy"
    assert board[0] == {"rank": 1, "config": 1, "status": "running", "val_accuracy": 0.8, "epochs": 1,
                        "params": {"lr": 0.002, "model": "mlp"}, "error": ""}
    assert board.best["config"] == 1
    curves = experiment.curves()
    assert curves.series() == {1: [0.8], 0: []}
    assert experiment.pareto() == [] and experiment.status() == "running"


def test_downloads_are_saved_or_returned(stub, tmp_path):
    base = "/api/v1/experiments/small-1"
    stub.routes.update({
        ("GET", base + "/best_model"): (200, b"PK\x03\x04model"),
        ("GET", base + "/configs/0/model"): (200, b"PK\x03\x04config0"),
        ("GET", base + "/files/summary.json"): (200, {"best": {"id": 1}}),
        ("GET", base + "/files/metrics.csv"): (200, "config,epoch\n0,0\n"),
        ("GET", base + "/files/report.html"): (200, "<html>report</html>"),
    })
    experiment = cerebro.Experiment(client_of(stub), "small-1")
    assert experiment.best_model(tmp_path / "best.pt") == tmp_path / "best.pt"
    assert (tmp_path / "best.pt").read_bytes() == b"PK\x03\x04model"
    experiment.config(0).model(tmp_path / "c0.pt")
    assert (tmp_path / "c0.pt").read_bytes() == b"PK\x03\x04config0"
    assert experiment.summary() == {"best": {"id": 1}}
    assert experiment.metrics_csv() == "config,epoch\n0,0\n"
    experiment.report(tmp_path / "report.html")
    assert (tmp_path / "report.html").read_text() == "<html>report</html>"
    assert [r.headers["Accept"] for r in stub.requests if "files" in r.path] == ["*/*"] * 3


def test_a_missing_run_file_is_not_found(stub):
    with pytest.raises(cerebro.NotFound):
        cerebro.Experiment(client_of(stub), "small-1").summary()


def test_wait_follows_the_progress_to_the_end(stub, monkeypatch):
    answers = [entry_of(DETAIL), entry_of(dict(DETAIL, units_done=3, progress=0.75, elapsed_s=15.0)),
               entry_of(dict(DETAIL, status="completed", units_done=4, progress=1.0, elapsed_s=20.0))]
    stub.routes[("GET", "/api/v1/experiments/small-1/status")] = lambda request: (
        200, answers.pop(0) if len(answers) > 1 else answers[0])
    final_detail = dict(DETAIL, status="completed", units_done=4, progress=1.0, elapsed_s=20.0)
    stub.routes[("GET", "/api/v1/experiments/small-1")] = (200, final_detail)
    stderr = io.StringIO()
    monkeypatch.setattr("sys.stderr", stderr)
    final = cerebro.Experiment(client_of(stub), "small-1").wait(poll=0.01)
    assert final == final_detail, "the whole detail, once, at the end"
    assert stub.paths("GET").count("/api/v1/experiments/small-1") == 1
    lines = stderr.getvalue().splitlines()
    assert lines == ["small-1: 2/4 units (50%) elapsed 0:10 ETA 0:10 best val_accuracy 0.8000 (config 1)",
                     "small-1: 3/4 units (75%) elapsed 0:15 ETA 0:05 best val_accuracy 0.8000 (config 1)",
                     "small-1: 4/4 units (100%) elapsed 0:20 best val_accuracy 0.8000 (config 1) completed"]


def test_wait_raises_the_reason_of_a_failed_experiment(stub):
    failed = dict(DETAIL, status="failed", error="the data could not be read: /nope: no such file", configs=[])
    stub.routes[("GET", "/api/v1/experiments/small-1")] = (200, failed)
    stub.routes[("GET", "/api/v1/experiments/small-1/status")] = (200, entry_of(failed))
    with pytest.raises(cerebro.ExperimentFailed, match="small-1 failed: the data could not be read"):
        cerebro.Experiment(client_of(stub), "small-1").wait(progress=False)


def test_wait_gives_up_after_its_timeout(stub):
    with pytest.raises(TimeoutError, match="still running after 0.2 s"):
        cerebro.Experiment(client_of(stub), "small-1").wait(progress=False, poll=0.05, timeout=0.2)


def test_experiments_and_agents_are_lists_of_dicts(stub):
    stub.routes[("GET", "/api/v1/experiments")] = (200, {"experiments": [{"id": "small-1", "status": "running"}],
                                                         "latest": "small-1"})
    stub.routes[("GET", "/api/v1/agents")] = (200, {"agents": [{"name": "node1", "workers": 1}]})
    client = client_of(stub)
    assert client.experiments() == [{"id": "small-1", "status": "running"}]
    assert client.agents() == [{"name": "node1", "workers": 1}]
    assert json.loads(json.dumps(client.version())) == {"version": "0.1.0", "api": "v1"}
