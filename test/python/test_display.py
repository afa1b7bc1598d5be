"""What an experiment looks like: the notebook table with its sparklines,
the progress line, the leaderboard's and curves' pandas and matplotlib views."""
import re

import pytest

import cerebro
from cerebro import display
from cerebro.results import Curves, Leaderboard
from stub import StubServer

DETAIL = {"id": "small-1", "status": "running", "progress": 0.25, "units_done": 3, "units_total": 12,
          "elapsed_s": 30.0, "metric": "val_accuracy", "paused": True,
          "configs": [{"config": 2, "params": {"model": "<script>alert(1)</script>", "lr": 0.01},
                       "status": "completed", "metric": 0.83, "rank": 1,
                       "epochs": [{"epoch": 0, "val_accuracy": 0.7, "val_loss": 0.9},
                                  {"epoch": 1, "val_accuracy": 0.8, "val_loss": 0.7},
                                  {"epoch": 2, "val_accuracy": 0.83, "val_loss": 0.6}]},
                      {"config": 0, "params": {"model": "mlp", "lr": 0.1}, "status": "running", "metric": None,
                       "rank": None, "epochs": []}],
          "best": {"config": 2, "metric": 0.83, "params": {}}}


def test_the_html_shows_the_experiment_and_its_leaderboard_with_sparklines():
    page = display.experiment_html(DETAIL)
    assert "small-1" in page and "running (paused)" in page
    assert "width:25.0%" in page and "3/12 units" in page
    assert "best val_accuracy</th><td>0.8300 (config 2)" in page
    rows = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td>", page)
    assert [r[:4] for r in rows] == [("1", "2", "completed", "0.8300"), ("-", "0", "running", "-")]
    assert rows[0][4].startswith("<svg")
    assert len(re.search(r'points="([^"]+)"', rows[0][4]).group(1).split()) == 3, "a point per epoch"
    assert rows[1][4] == "", "no line before a validated epoch"
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_a_sparkline_spans_its_box_from_lowest_to_highest():
    svg = display.sparkline_svg([1.0, 3.0, 2.0], width=100, height=20)
    points = re.search(r'points="([^"]+)"', svg).group(1).split()
    assert points == ["2.0,18.0", "50.0,2.0", "98.0,10.0"]
    assert display.sparkline_svg([]) == display.sparkline_svg([None]) == ""
    assert 'points="2.0,16.0"' in display.sparkline_svg([0.5]), "one value: a dot at the bottom left"


def test_the_progress_line_has_units_eta_and_the_best_metric():
    assert display.progress_text(dict(DETAIL, paused=False)) == (
        "small-1: 3/12 units (25%) elapsed 0:30 ETA 1:30 best val_accuracy 0.8300 (config 2)")
    starting = {"id": "x", "status": "running", "units_done": 0, "units_total": 0, "elapsed_s": 1}
    assert display.progress_text(starting) == "x: 0/0 units (0%) elapsed 0:01 ETA ?"
    assert display.format_duration(3725) == "1:02:05"
    preparing = dict(starting, note="experiment x is still setting up (preparing and placing its data)")
    assert display.progress_text(preparing) == "x: setting up (preparing and placing its data)"


def test_an_experiment_renders_itself_in_a_notebook():
    with StubServer({("GET", "/api/v1/experiments/small-1"): (200, DETAIL)}) as stub:
        experiment = cerebro.Experiment(cerebro.Client(stub.url, token="t"), "small-1")
        assert experiment._repr_html_() == display.experiment_html(DETAIL)
        gone = cerebro.Experiment(experiment.client, "gone-1")
        assert "gone-1" in gone._repr_html_() and "no such endpoint" in gone._repr_html_()


def test_the_leaderboard_as_text_and_as_a_data_frame():
    board = Leaderboard.from_detail(DETAIL)
    text = str(board).splitlines()
    assert text[0].split() == ["rank", "config", "status", "val_accuracy", "params"]
    assert text[1].split()[:4] == ["1", "2", "completed", "0.8300"]
    pandas = pytest.importorskip("pandas")
    frame = board.to_pandas()
    assert isinstance(frame, pandas.DataFrame)
    assert list(frame.index) == [2, 0] and frame.loc[2, "lr"] == 0.01 and frame.loc[2, "val_accuracy"] == 0.83


def test_a_leaderboard_in_a_notebook_is_a_table_with_its_text_escaped():
    html = Leaderboard.from_detail(DETAIL)._repr_html_()
    assert html.startswith("<table>") and html.count("<tr>") == 3  # the header and two configs
    assert "<th>val_accuracy</th>" in html and "<td>0.8300</td>" in html
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert re.search(r"<td>-</td><td>0</td><td>running</td><td>-</td><td>0</td>", html), html


def test_the_curves_plot_one_line_per_config_that_has_epochs():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    curves = Curves.from_detail(DETAIL)
    ax = curves.plot()
    assert [tuple(line.get_ydata()) for line in ax.get_lines()] == [(0.7, 0.8, 0.83)]
    assert ax.get_ylabel() == "val_accuracy"
    assert [tuple(line.get_ydata()) for line in curves.plot("val_loss").get_lines()] == [(0.9, 0.7, 0.6)]


def test_watch_outside_a_notebook_waits_like_wait():
    done = dict(DETAIL, status="completed", paused=False)
    with StubServer({("GET", "/api/v1/experiments/small-1"): (200, done),
                     ("GET", "/api/v1/experiments/small-1/status"): (200, done)}) as stub:
        experiment = cerebro.Experiment(cerebro.Client(stub.url, token="t"), "small-1")
        assert experiment.watch(poll=0.01) == done


def test_watch_in_a_notebook_updates_one_display(monkeypatch):
    ipython = pytest.importorskip("IPython")
    import IPython.display
    shown = []

    class Handle:
        def update(self, obj):
            shown.append(("update", obj.data))

    def fake_display(obj, display_id=False):
        shown.append(("display", obj.data))
        return Handle()

    monkeypatch.setattr(ipython, "get_ipython", lambda: object())
    monkeypatch.setattr(IPython.display, "display", fake_display)
    answers = [DETAIL, dict(DETAIL, status="completed", paused=False, units_done=12, progress=1.0)]
    route = lambda request: (200, answers.pop(0) if len(answers) > 1 else answers[0])  # noqa: E731
    with StubServer({("GET", "/api/v1/experiments/small-1"): route}) as stub:
        cerebro.Experiment(cerebro.Client(stub.url, token="t"), "small-1").watch(poll=0.01)
    assert [kind for kind, _ in shown] == ["display", "update"]
    assert "3/12 units" in shown[0][1] and "12/12 units" in shown[1][1]


def test_wait_draws_a_tqdm_bar_when_tqdm_is_installed(monkeypatch):
    import sys
    import types
    bars = []

    class FakeBar:
        def __init__(self, total, desc, unit, file):
            self.total, self.desc, self.n, self.postfix, self.closed = total, desc, 0, None, False
            bars.append(self)

        def set_postfix(self, postfix, refresh):
            self.postfix = postfix

        def refresh(self):
            pass

        def close(self):
            self.closed = True

    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=FakeBar))
    done = dict(DETAIL, status="completed", paused=False, units_done=14, units_total=14, progress=1.0)
    answers = [DETAIL, done]
    route = lambda request: (200, answers.pop(0) if len(answers) > 1 else answers[0])  # noqa: E731
    with StubServer({("GET", "/api/v1/experiments/small-1/status"): route,
                     ("GET", "/api/v1/experiments/small-1"): (200, done)}) as stub:
        cerebro.Experiment(cerebro.Client(stub.url, token="t"), "small-1").wait(poll=0.01)
    assert len(bars) == 1
    bar = bars[0]
    assert (bar.desc, bar.total, bar.n, bar.closed) == ("small-1", 14, 14, True), "the total follows steering"
    assert bar.postfix == {"eta": "0:00", "val_accuracy": "0.8300"}


def test_the_pareto_front_flattens_each_configs_objectives():
    from cerebro.results import Pareto
    detail = {"pareto": [{"config": 3, "values": {"val_accuracy": 0.9, "parameters": 5000}},
                         {"config": 1, "values": {"val_accuracy": 0.8, "parameters": 900}}],
              "pareto_objectives": [{"name": "val_accuracy", "direction": "maximize", "live": True, "decimals": 4},
                                    {"name": "parameters", "direction": "minimize", "live": True, "decimals": 0}],
              "pareto_final": True}
    front = Pareto.from_detail(detail)
    assert front == [{"config": 3, "val_accuracy": 0.9, "parameters": 5000},
                     {"config": 1, "val_accuracy": 0.8, "parameters": 900}]
    assert [o["name"] for o in front.objectives] == ["val_accuracy", "parameters"] and front.final
    assert Pareto.from_detail({"pareto": [], "pareto_objectives": []}) == []
