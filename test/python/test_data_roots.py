"""A coordinator started with --data-root reads, for a spec from any route, only the files the
submission brought and paths under its roots (docs/CLUSTER.md "Data roots"): a data path, a .pt
model or a warm_start outside them is refused with 403 naming the key and the path, over the API
and for `run --cluster`; a relative path the submission did not bring is found under the roots.
Without roots the coordinator warns at start, and no error shows what a file holds."""
import os
import subprocess

import pytest

import cerebro
from cluster import Cluster, cerebro_binary, start_with_one_agent


def csv_spec(train, name="roots", extra_experiment="", space_extra=""):
    return ("[experiment]\nname = \"%s\"\nepochs = 1\nseed = 5\n%s[data]\nsource = \"csv\"\ntrain = \"%s\"\n"
            "label_column = \"y\"\n[cluster]\nworkers = 1\n[space]\nmodel = [\"mlp\"]\nhidden = [[4]]\n"
            "lr = [0.01]\n%s" % (name, extra_experiment, train, space_extra))


def write_csv(path, rows=200, label="y"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("a,b,%s\n" % label)
        for i in range(rows):
            f.write("%d,%d,%d\n" % (i % 7, i % 5, (i % 7 + i % 5) % 2))


@pytest.fixture(scope="module")
def rooted(tmp_path_factory):
    """A coordinator with one data root (holding sub/train.csv) and one agent."""
    folder = str(tmp_path_factory.mktemp("rooted"))
    root = os.path.join(folder, "root")
    write_csv(os.path.join(root, "sub", "train.csv"))
    c = Cluster(cerebro_binary(), folder, coordinator_args=["--data-root", root])
    c.root = root
    start_with_one_agent(c)
    yield c
    c.stop()


def refused(client, spec, **kw):
    with pytest.raises(cerebro.Forbidden) as caught:
        client.submit(spec, **kw)
    return str(caught.value)


def test_a_path_outside_the_roots_is_forbidden_naming_key_and_path(rooted):
    client = rooted.client()
    message = refused(client, csv_spec("/etc/passwd"))
    assert '[data] train = "/etc/passwd" is outside the data roots' in message
    assert rooted.root in message
    assert "root:x" not in message
    escaping = refused(client, csv_spec(os.path.join(rooted.root, "..", "coordinator-1.log")))
    assert "[data] train" in escaping


def test_a_model_file_or_warm_start_outside_the_roots_is_forbidden(rooted, tmp_path):
    client = rooted.client()
    model = tmp_path / "elsewhere.pt"
    model.write_bytes(b"not read")
    spec = csv_spec("sub/train.csv").replace('model = ["mlp"]', 'model = ["%s"]' % model)
    assert '[space] model = "%s"' % model in refused(client, spec)
    warm = refused(client, csv_spec("sub/train.csv", extra_experiment='search = "random"\nsamples = 1\nwarm_start = ["%s"]\n' % tmp_path))
    assert "[experiment] warm_start" in warm


def test_a_relative_path_not_brought_is_found_under_the_roots_and_trains(rooted):
    experiment = rooted.client().submit(csv_spec("sub/train.csv", name="under-root"))
    detail = experiment.wait(progress=False, timeout=240)
    assert detail["status"] == "completed"
    # An ended experiment's answer no longer changes (the server keeps it), and counts as its progress does.
    assert experiment.info() == experiment.info()
    assert experiment.info()["units_done"] == detail["units_total"]


def test_a_brought_file_is_read_first(rooted, tmp_path):
    # The root's sub/train.csv has no column z: only the brought copy trains.
    brought = tmp_path / "train.csv"
    write_csv(str(brought), rows=120, label="z")
    spec = csv_spec("sub/train.csv", name="brought").replace('label_column = "y"', 'label_column = "z"')
    experiment = rooted.client().submit(spec, files={"sub/train.csv": str(brought)})
    assert experiment.wait(progress=False, timeout=240)["status"] == "completed"


def test_run_cluster_is_refused_for_a_path_outside_the_roots(rooted, tmp_path):
    spec = tmp_path / "outside.toml"
    spec.write_text(csv_spec("/etc/passwd"))
    done = subprocess.run([rooted.binary, "run", str(spec), "--cluster", "127.0.0.1:%d" % rooted.port,
                           "--token-file", rooted.token_file], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert '[data] train = "/etc/passwd" is outside the data roots' in done.stdout + done.stderr
    assert "refused a submission" in rooted.log_text(rooted.coordinator_log)


def test_without_roots_the_coordinator_warns_and_no_error_shows_a_files_content(cluster):
    log = cluster.log_text(cluster.coordinator_log)
    assert "warning: no --data-root" in log
    experiment = cluster.client().submit(csv_spec("/etc/passwd", name="passwd"))
    with pytest.raises(cerebro.ExperimentFailed) as failed:
        experiment.wait(progress=False, timeout=120)
    assert "label column 'y' not found" in str(failed.value)
    assert "root:x" not in str(failed.value)
    assert "root:x" not in cluster.log_text(cluster.coordinator_log)
