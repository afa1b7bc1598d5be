"""Registered datasets (docs/API.md "Datasets", docs/SPEC.md "Registered datasets"): a dataset
registered by its paths on the cluster or uploaded with its files is listed with the prepared-data
cache, a spec takes it with `[data] dataset = "NAME"` and trains on it, it survives a coordinator
restart, and it is removed by name. A path outside the data roots, a taken name, an unknown one and
a table that is not [data] are refused with the reason."""
import os

import pytest

import cerebro
# The coordinator with one data root (holding sub/train.csv) and one agent, as the data-roots tests use it.
from test_data_roots import rooted, write_csv  # noqa: F401 (a fixture)

SPEC = ("[experiment]\nname = \"%s\"\nepochs = 1\nseed = 5\n[data]\ndataset = \"%s\"\n[cluster]\nworkers = 1\n"
        "[space]\nmodel = [\"mlp\"]\nhidden = [[4]]\nlr = [0.01]\n")


def names(client):
    return [d["name"] for d in client.datasets()["datasets"]]


def test_a_dataset_on_the_cluster_is_registered_trained_on_kept_and_removed(rooted):
    client = rooted.client()
    added = client.register_dataset("tables", source="csv", train="sub/train.csv", label_column="y")
    train = os.path.join(rooted.root, "sub", "train.csv")
    assert added["data"]["train"] == train and added["uploaded"] is False
    assert "tables" in names(client)
    detail = client.submit(SPEC % ("on-tables", "tables")).wait(progress=False, timeout=240)
    assert detail["status"] == "completed", detail
    # The cache is content-addressed: the entry may be one an earlier run of the same rows prepared.
    prepared = client.datasets()["prepared"]
    assert any(entry["source"] == "csv" and entry["train_examples"] > 0 and entry["bytes"] > 0
               for entry in prepared), prepared
    # Written before it was answered: a restarted coordinator still has it.
    rooted.restart_coordinator()
    rooted.wait_joined("node1")
    client = rooted.client()
    assert "tables" in names(client)
    removed = client.remove_dataset("tables")
    assert removed["name"] == "tables"
    assert "tables" not in names(client)
    with pytest.raises(cerebro.NotFound) as unknown:
        client.remove_dataset("tables")
    assert 'no dataset "tables" is registered' in str(unknown.value)
    # A spec that names it now is refused at its line, with what is registered.
    with pytest.raises(cerebro.SpecError) as gone:
        client.submit(SPEC % ("gone", "tables"))
    assert gone.value.problems[0]["line"] == 6, gone.value.problems
    assert 'dataset "tables" is not registered' in str(gone.value)


def test_an_uploaded_dataset_trains_and_a_path_outside_the_roots_is_forbidden(rooted, tmp_path):
    client = rooted.client()
    local = tmp_path / "mine.csv"
    write_csv(str(local), rows=150)
    added = client.register_dataset("mine", files={"d/train.csv": str(local)}, source="csv", train="d/train.csv",
                                    label_column="y")
    assert added["uploaded"] is True
    assert added["data"]["train"].startswith(os.path.join(rooted.state, "uploads")), added
    assert added["data"]["train"].endswith("/d/train.csv")
    detail = client.submit(SPEC % ("on-mine", "mine")).wait(progress=False, timeout=240)
    assert detail["status"] == "completed", detail
    with pytest.raises(cerebro.Forbidden) as outside:
        client.register_dataset("passwd", source="csv", train="/etc/passwd", label_column="y")
    assert '[data] train = "/etc/passwd" is outside the data roots' in str(outside.value)
    assert "root:x" not in str(outside.value)
    assert "passwd" not in names(client)


def test_a_taken_name_a_bad_name_and_a_table_that_is_not_data_are_refused(rooted):
    client = rooted.client()
    client.register_dataset("twice", source="csv", train="sub/train.csv", label_column="y")
    with pytest.raises(cerebro.Conflict) as taken:
        client.register_dataset("twice", source="csv", train="sub/train.csv", label_column="y")
    assert "registered already" in str(taken.value)
    with pytest.raises(cerebro.BadRequest) as bad_name:
        client.register_dataset("../up", source="csv", train="sub/train.csv", label_column="y")
    assert "a dataset's name" in str(bad_name.value)
    with pytest.raises(cerebro.BadRequest) as missing:
        client.register_dataset("half", source="csv")
    assert "[data] train is required" in str(missing.value)
    # A spec may not set again a key its dataset sets.
    spec = (SPEC % ("twice-set", "twice")).replace('dataset = "twice"\n', 'dataset = "twice"\nlabel_column = "a"\n')
    with pytest.raises(cerebro.SpecError) as again:
        client.submit(spec)
    assert 'label_column is set by the registered dataset "twice"' in str(again.value)
    client.remove_dataset("twice")
