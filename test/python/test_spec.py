"""Which files a spec names, and setting its name in TOML text."""
import pytest

from cerebro import spec as specs


def test_the_files_a_spec_names_are_its_relative_models_and_data_paths():
    text = ('[data]\nsource = "csv"\ntrain = "data/train.csv"\ntest = "/abs/test.csv"\n'
            '[space]\nmodel = { dist = "choice", values = ["a.pt", "mlp", ["b.pt"]] }\nlr = ["x.pt"]\n')
    assert specs.names_in_spec(text) == ["a.pt", "b.pt", "data/train.csv"]
    assert specs.names_in_spec("[space]\nmodel = 'net.pt'\n") == ["net.pt"]
    assert specs.names_in_spec("this is [not toml") == []


def test_the_name_goes_into_the_experiment_section_keeping_comments():
    text = "# a spec\n[experiment]  # the run\nepochs = 2\nname = 'old' # was\n[space]\nmodel = 'mlp'\n"
    assert specs.with_name(text, "new") == (
        "# a spec\n[experiment]  # the run\nepochs = 2\nname = \"new\"\n[space]\nmodel = 'mlp'\n")


def test_files_given_by_hand_are_read_from_paths_bytes_or_templates(tmp_path):
    (tmp_path / "w.bin").write_bytes(b"weights")
    text, files = specs.prepare('[space]\nmodel = "mlp"\n', files={"a/w.bin": tmp_path / "w.bin", "b.bin": b"x",
                                                                   "c.bin": bytearray(b"y")})
    assert files == {"a/w.bin": b"weights", "b.bin": b"x", "c.bin": b"y"}
    with pytest.raises(TypeError, match="a file is a local path, bytes or a cerebro.Template"):
        specs.prepare('[space]\nmodel = "mlp"\n', files={"x": 3})
    with pytest.raises(ValueError, match="relative path"):
        specs.prepare('[space]\nmodel = "mlp"\n', files={"../x": b""})


def test_a_spec_that_is_neither_path_text_nor_dict_is_refused():
    with pytest.raises(TypeError, match="a TOML file's path, TOML text or a dict"):
        specs.prepare(42)
