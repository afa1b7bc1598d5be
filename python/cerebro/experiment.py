"""An experiment on the server and its configs: status, waiting, results,
steering and downloads."""
import io
import pathlib
import time
import urllib.parse

from . import errors, predict as predicting
from .display import experiment_html
from .progress import Progress
from .results import Curves, Leaderboard, Pareto

__all__ = ["Experiment", "Config"]

ENDED = ("completed", "failed")


def _load_or_save(data, path):
    """`data` written to `path` (returns the path), else torch.jit.load'ed when torch is there, else the bytes."""
    if path is not None:
        pathlib.Path(path).write_bytes(data)
        return pathlib.Path(path)
    try:
        import torch
    except ImportError:
        return data
    return torch.jit.load(io.BytesIO(data), map_location="cpu")


class Experiment:
    """An experiment on the server: from Client.submit or Client.attach."""

    def __init__(self, client, experiment_id):
        self.client = client
        self.id = experiment_id
        self._path = "/api/v1/experiments/" + urllib.parse.quote(experiment_id, safe="")
        self._best = None

    def __repr__(self):
        return "Experiment(%r)" % self.id

    # --- state --------------------------------------------------------------

    def info(self):
        """The experiment's detail (docs/API.md, GET /api/v1/experiments/{id}): status, progress,
        metric, paused, spec, configs (best first, with per-epoch metrics), best, pareto ..."""
        return self.client._json("GET", self._path)

    def progress(self):
        """The experiment's entry alone (docs/API.md, GET /api/v1/experiments/{id}/status): id, name,
        status, paused, units_done, units_total, progress, elapsed_s, metric and best {config, metric};
        what wait() polls, far cheaper for the server than info() on a large experiment."""
        return self.client._json("GET", self._path + "/status")

    def status(self):
        """"running", "waiting" (to be resumed), "completed" or "failed"."""
        return self.progress()["status"]

    def units(self, since=0):
        """The unit log from unit `since` on (config, partition, epoch, worker, times ...)."""
        return self.client._json("GET", "%s/units?since=%d" % (self._path, since))["units"]

    def wait(self, progress=True, poll=1.0, timeout=None):
        """Polls until the experiment ends and returns its final detail; shows
        units done/total, the ETA and the best metric so far (tqdm when
        installed, else a line on stderr) unless `progress` is False. Raises
        ExperimentFailed for a failed experiment, TimeoutError after `timeout` seconds."""
        shown = Progress() if progress else None
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                # The entry alone while it runs; the whole detail once, at the end.
                entry = self.progress()
                detail = self.info() if entry.get("status") in ENDED else entry
                if shown:
                    shown.update(detail)
                if detail.get("status") in ENDED:
                    break
                if deadline is not None and time.monotonic() >= deadline:
                    raise TimeoutError("experiment %s is still %s after %g s" % (self.id, detail.get("status"),
                                                                                timeout))
                time.sleep(poll)
        finally:
            if shown:
                shown.close()
        if detail["status"] == "failed":
            raise errors.ExperimentFailed(failure_reason(detail))
        return detail

    def watch(self, poll=1.0, timeout=None):
        """In a notebook: a table of the experiment updated in place until it
        ends (returns the final detail). Elsewhere, the same as wait()."""
        try:
            from IPython import get_ipython
            from IPython.display import HTML, display
        except ImportError:
            get_ipython = None
        if get_ipython is None or get_ipython() is None:
            return self.wait(poll=poll, timeout=timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        detail = self.info()
        handle = display(HTML(experiment_html(detail)), display_id=True)
        while detail.get("status") not in ENDED:
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError("experiment %s is still %s after %g s" % (self.id, detail.get("status"), timeout))
            time.sleep(poll)
            detail = self.info()
            handle.update(HTML(experiment_html(detail)))
        if detail["status"] == "failed":
            raise errors.ExperimentFailed(failure_reason(detail))
        return detail

    def _repr_html_(self):
        try:
            return experiment_html(self.info())
        except errors.CerebroError as e:
            import html
            return "<p>experiment %s: %s</p>" % (html.escape(self.id), html.escape(str(e)))

    # --- results ------------------------------------------------------------

    def leaderboard(self):
        """Leaderboard: one dict per config, best first by the experiment's metric."""
        return Leaderboard.from_detail(self.info())

    def curves(self):
        """Curves: config id -> its validated epochs' metrics; .plot() draws them."""
        return Curves.from_detail(self.info())

    def pareto(self):
        """Pareto: the non-dominated configs of a run with several objectives (empty with one)."""
        return Pareto.from_detail(self.info())

    # --- steering -----------------------------------------------------------

    def pause(self):
        """Running units finish, no new unit starts (Conflict when already paused or ended)."""
        return self.client._json("POST", self._path + "/pause")

    def resume(self):
        return self.client._json("POST", self._path + "/resume")

    def config(self, n):
        """Config `n` of this experiment."""
        return Config(self, n)

    def clone(self, n, **params):
        """A new config from config `n`'s latest weights and optimizer state with `params` changed."""
        if not params:
            raise ValueError("clone() changes at least one parameter, e.g. clone(0, lr=0.0005)")
        answer = self.client._json("POST", "%s/configs/%d/clone" % (self._path, n), {"params": params})
        return Config(self, answer["config"], answer)

    def add(self, **params):
        """A new config: the experiment's first config's parameters with `params` changed, from its first epoch."""
        answer = self.client._json("POST", self._path + "/configs", {"params": params})
        return Config(self, answer["config"], answer)

    # --- downloads ----------------------------------------------------------

    def _best_model_bytes(self):
        if self._best is None:
            self._best = self.client._download(self._path + "/best_model")
        return self._best

    def best_model(self, path=None):
        """The best config's TorchScript (once the run has finished): saved to
        `path` (returns it), else loaded with torch.jit.load, else the bytes without torch."""
        return _load_or_save(self._best_model_bytes(), path)

    def model_info(self):
        """The best model's info: task, sample_shape, class_names, normalization ... (needs torch)."""
        return predicting.load_model(self._best_model_bytes())[1]

    def predict(self, data):
        """The best model run locally on `data` (a tensor, array or list of raw examples), normalised as the
        run normalised its data: class probabilities [N, classes] (classification), label probabilities
        (multilabel) or targets in their units (regression)."""
        module, info = predicting.load_model(self._best_model_bytes())
        return predicting.predict(module, info, data)

    def summary(self):
        """summary.json as a dict (NotFound until the run has finished)."""
        import json
        return json.loads(self.client._download(self._path + "/files/summary.json"))

    def metrics_csv(self, path=None):
        """metrics.csv: written to `path` (returns it), else its text."""
        return _text_or_save(self.client._download(self._path + "/files/metrics.csv"), path)

    def report(self, path):
        """The run's HTML report written to `path`; returns the path."""
        return _text_or_save(self.client._download(self._path + "/files/report.html"), path)


def _text_or_save(data, path):
    if path is None:
        return data.decode("utf-8")
    pathlib.Path(path).write_bytes(data)
    return pathlib.Path(path)


def failure_reason(detail):
    """Why a failed experiment failed, from what its detail holds."""
    reasons = [str(detail[k]) for k in ("error", "note") if detail.get(k)]
    for c in detail.get("configs") or []:
        if c.get("error"):
            reasons.append("config %s %s: %s" % (c.get("config"), c.get("status"), c["error"]))
    return "experiment %s failed%s" % (detail.get("id", "?"), ": " + "; ".join(reasons) if reasons else
                                       " (the server gives no reason: see the coordinator's log)")


class Config:
    """One config of an experiment."""

    def __init__(self, experiment, n, created=None):
        self.experiment = experiment
        self.id = int(n)
        self.created = created  # the server's answer when clone() or add() made it
        self._path = "%s/configs/%d" % (experiment._path, self.id)

    def __repr__(self):
        return "Config(%r, %d)" % (self.experiment.id, self.id)

    def info(self):
        """params, status, error, metric, epochs and actions (what was done to it by hand)."""
        return self.experiment.client._json("GET", self._path)

    def stop(self):
        """Ends the config now, keeping its last checkpoint (Conflict when it has ended)."""
        return self.experiment.client._json("POST", self._path + "/stop")

    def clone(self, **params):
        return self.experiment.clone(self.id, **params)

    def model(self, path=None):
        """Its latest TorchScript: saved to `path`, else loaded with torch.jit.load, else the bytes."""
        return _load_or_save(self.experiment.client._download(self._path + "/model"), path)

    def predict(self, data):
        """As Experiment.predict, with this config's latest model."""
        module, info = predicting.load_model(self.experiment.client._download(self._path + "/model"))
        return predicting.predict(module, info, data)
