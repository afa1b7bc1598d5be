"""The TOML writer: what it writes reads back (tomllib) as the dict it was given."""
import glob
import math
import os
import tomllib

import pytest

from cerebro.toml_writer import dumps

SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


EXAMPLES = sorted(glob.glob(os.path.join(SOURCE, "examples", "**", "*.toml"), recursive=True))


def test_the_examples_are_found():
    assert len(EXAMPLES) >= 2


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: os.path.relpath(p, SOURCE))
def test_every_example_spec_reads_back_the_same(path):
    with open(path, "rb") as f:
        spec = tomllib.load(f)
    assert tomllib.loads(dumps(spec)) == spec


def test_a_spec_dict_is_written_as_sections_with_inline_distributions():
    spec = {"experiment": {"name": "grid", "epochs": 2, "search": "random", "samples": 4},
            "data": {"source": "idx", "path": "/usr/share/datasets/fashion-mnist", "limit": 2000},
            "space": {"model": ["mlp"], "hidden": [[32], [64, 32]],
                      "lr": {"dist": "loguniform", "low": 1e-4, "high": 1e-2}}}
    text = dumps(spec)
    assert text.startswith("[experiment]\nname = \"grid\"\n")
    assert "\n[space]\n" in text
    assert 'lr = { dist = "loguniform", low = 0.0001, high = 0.01 }' in text
    assert "hidden = [[32], [64, 32]]" in text
    assert tomllib.loads(text) == spec


def test_top_level_scalars_come_before_the_first_section():
    text = dumps({"data": {"source": "csv"}, "title": "x"})
    assert text.index("title") < text.index("[data]")
    assert tomllib.loads(text) == {"data": {"source": "csv"}, "title": "x"}


def test_strings_are_escaped_and_odd_keys_quoted():
    tricky = {"s": {"quote": 'a "b" \\ c', "lines": "one\ntwo\tthree\r", "control": "\x01\x7f", "unicode": "été ✓",
                    "with space": 1, "dotted.key": 2, "": 3}}
    assert tomllib.loads(dumps(tricky)) == tricky


def test_numbers_keep_their_kind():
    values = {"n": {"int": 3, "neg": -7, "big": 2 ** 62, "float": 3.0, "small": 1e-05, "exp": 1.5e300,
                    "inf": float("inf"), "ninf": float("-inf"), "yes": True, "no": False}}
    back = tomllib.loads(dumps(values))
    assert back == values
    assert isinstance(back["n"]["float"], float) and isinstance(back["n"]["int"], int)
    assert math.isnan(tomllib.loads(dumps({"x": float("nan")}))["x"])


def test_lists_of_tables_and_empty_values():
    values = {"t": {"rows": [{"a": 1, "b": [1, 2]}, {"a": 2, "nested": {"c": "d"}}], "empty": [], "none": {}}}
    assert tomllib.loads(dumps(values)) == values


def test_paths_and_tuples_are_written_as_strings_and_arrays():
    import pathlib
    back = tomllib.loads(dumps({"data": {"path": pathlib.Path("/tmp/x"), "shape": (1, 2)}}))
    assert back == {"data": {"path": "/tmp/x", "shape": [1, 2]}}


def test_what_toml_cannot_hold_is_refused_naming_the_key():
    with pytest.raises(ValueError, match=r"space\.lr: TOML has no null"):
        dumps({"space": {"lr": None}})
    with pytest.raises(TypeError, match=r"space\.model\.0: cannot write a value of type object"):
        dumps({"space": {"model": [object()]}})
    with pytest.raises(TypeError, match="a TOML document is a dict"):
        dumps(["not", "a", "table"])
