"""An experiment's results as Python values: the leaderboard, the learning
curves and the Pareto front, built from the experiment's detail
(GET /api/v1/experiments/{id})."""

__all__ = ["Leaderboard", "Curves", "Pareto"]


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ImportError("to_pandas() needs pandas (Debian: apt install python3-pandas)") from None
    return pandas


class Leaderboard(list):
    """One dict per config, best first by the experiment's metric (`metric`):
    ``{"rank", "config", "status", <metric>, "epochs", "params", "error"}``
    (rank and the metric are None before a config's first validated epoch)."""

    def __init__(self, rows=(), metric="val_accuracy"):
        super().__init__(rows)
        self.metric = metric

    @classmethod
    def from_detail(cls, detail):
        metric = detail.get("metric") or "val_accuracy"
        rows = []
        for c in detail.get("configs") or []:
            rows.append({"rank": c.get("rank"), "config": c.get("config"), "status": c.get("status"),
                         metric: c.get("metric"), "epochs": len(c.get("epochs") or []),
                         "params": dict(c.get("params") or {}), "error": c.get("error") or ""})
        return cls(rows, metric)

    @property
    def best(self):
        """The first row with a metric, or None."""
        return next((r for r in self if r.get(self.metric) is not None), None)

    def to_pandas(self):
        """A DataFrame indexed by config: rank, status, the metric, epochs and a column per parameter."""
        pandas = _pandas()
        records = []
        for r in self:
            record = {k: v for k, v in r.items() if k != "params"}
            for k, v in r["params"].items():
                record[k] = str(v) if isinstance(v, (list, dict)) else v
            records.append(record)
        frame = pandas.DataFrame.from_records(records)
        return frame.set_index("config") if "config" in frame else frame

    def _repr_html_(self):
        """A table, for a leaderboard left as a notebook cell's value."""
        from html import escape
        head = "".join("<th>%s</th>" % escape(h) for h in ("rank", "config", "status", self.metric, "epochs",
                                                         "params"))
        rows = []
        for r in self:
            value = r.get(self.metric)
            cells = (r["rank"] if r["rank"] is not None else "-", r["config"], r["status"],
                     "%.4f" % value if isinstance(value, (int, float)) else "-", r["epochs"],
                     " ".join("%s=%s" % kv for kv in r["params"].items()))
            rows.append("<tr>%s</tr>" % "".join("<td>%s</td>" % escape(str(c)) for c in cells))
        return "<table><thead><tr>%s</tr></thead><tbody>%s</tbody></table>" % (head, "".join(rows))

    def __str__(self):
        lines = ["%4s %6s %-10s %12s  params" % ("rank", "config", "status", self.metric)]
        for r in self:
            value = r.get(self.metric)
            shown = "%.4f" % value if isinstance(value, (int, float)) else "-"
            params = " ".join("%s=%s" % kv for kv in r["params"].items())
            lines.append("%4s %6s %-10s %12s  %s" % (r["rank"] or "-", r["config"], r["status"], shown, params))
        return "\n".join(lines)


class Curves(dict):
    """config id -> its validated epochs, each ``{"epoch", "train_loss",
    "val_loss", "val_accuracy", "seconds", "val_<name>"...}``; `metric` is
    the experiment's."""

    def __init__(self, curves=(), metric="val_accuracy"):
        super().__init__(curves)
        self.metric = metric

    @classmethod
    def from_detail(cls, detail):
        curves = {c["config"]: list(c.get("epochs") or []) for c in detail.get("configs") or []}
        return cls(curves, detail.get("metric") or "val_accuracy")

    def series(self, metric=None):
        """config -> `metric` (default: the experiment's) per validated epoch."""
        metric = metric or self.metric
        return {c: [e.get(metric) for e in epochs] for c, epochs in self.items()}

    def to_pandas(self):
        """A long DataFrame: one row per config epoch."""
        pandas = _pandas()
        return pandas.DataFrame.from_records([dict(e, config=c) for c, epochs in self.items() for e in epochs])

    def plot(self, metric=None, ax=None):
        """One line per config of `metric` (default: the experiment's) per epoch, with matplotlib; returns the axes."""
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError("plot() needs matplotlib (Debian: apt install python3-matplotlib)") from None
        metric = metric or self.metric
        if ax is None:
            _, ax = plt.subplots()
        for config, epochs in sorted(self.items()):
            points = [(e["epoch"], e[metric]) for e in epochs if e.get(metric) is not None]
            if points:
                ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label="config %s" % config)
        ax.set_xlabel("epoch")
        ax.set_ylabel(metric)
        if self:
            ax.legend()
        return ax


class Pareto(list):
    """The non-dominated configs best first by the first objective, each
    ``{"config", <objective>: value ...}``; `objectives` (name, direction,
    live, decimals each) and `final` (the front summary.json has) as the API gives them.
    Empty with one objective."""

    def __init__(self, rows=(), objectives=(), final=False):
        super().__init__(rows)
        self.objectives = list(objectives)
        self.final = final

    @classmethod
    def from_detail(cls, detail):
        rows = [dict(p.get("values") or {}, config=p.get("config")) for p in detail.get("pareto") or []]
        return cls(rows, detail.get("pareto_objectives") or [], bool(detail.get("pareto_final")))
