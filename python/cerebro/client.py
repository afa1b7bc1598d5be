"""cerebro.Client: the HTTP API of a coordinator (`cerebro coordinator
--http`) or an embedded run (`cerebro run --ui`), docs/API.md."""
import json
import os
import urllib.parse

from . import errors, multipart, spec as specs
from .transport import Transport

__all__ = ["Client"]


def _major_minor(version):
    parts = str(version).split(".")
    return tuple(parts[:2]) if len(parts) >= 2 and all(p.isdigit() for p in parts[:2]) else None


def _read_token(path, what):
    try:
        with open(os.path.expanduser(path), encoding="utf-8") as f:
            token = f.read().strip()
    except OSError as e:
        raise errors.AuthError("%s %s: cannot read the token: %s" % (what, path, e.strerror)) from None
    if not token:
        raise errors.AuthError("%s %s is empty" % (what, path))
    return token


class Client:
    """A connection to one server.

    `url`: the server (default: $CEREBRO_URL), e.g. the ``http on URL`` a
    coordinator prints. The token: `token`, else the file `token_file`, else
    the file named by $CEREBRO_TOKEN_FILE. HTTPS verifies the server against
    `ca_file` (default: $CEREBRO_CA_FILE; the cluster's CA or certificate),
    else the system's certificates. `timeout`: seconds per socket operation;
    `retries`: how often a lost connection or a 503 is retried (0.5 s
    doubling to 8 s between attempts). The first request checks that the
    server's major.minor version is this package's.
    """

    def __init__(self, url=None, token=None, token_file=None, ca_file=None, timeout=30, retries=5):
        from . import __version__
        url = url or os.environ.get("CEREBRO_URL")
        if not url:
            raise errors.CerebroError("no server: pass url= or set CEREBRO_URL (the URL `cerebro coordinator "
                                      "--http` or `cerebro run --ui` prints)")
        parts = urllib.parse.urlsplit(url)
        # The dashboard link's ?token= is a one-time browser login, not the API token: drop it.
        url = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        if token is None:
            if token_file is not None:
                token = _read_token(token_file, "token_file")
            elif os.environ.get("CEREBRO_TOKEN_FILE"):
                token = _read_token(os.environ["CEREBRO_TOKEN_FILE"], "CEREBRO_TOKEN_FILE")
            else:
                raise errors.AuthError("no token: pass token= (the `api token` `cerebro run --ui` prints), "
                                       "token_file= (a coordinator's --token-file) or set CEREBRO_TOKEN_FILE")
        token = str(token).strip()
        if not token:
            raise errors.AuthError("the token is empty")
        ca_file = ca_file or os.environ.get("CEREBRO_CA_FILE") or None
        self._transport = Transport(url, token, ca_file=ca_file, timeout=timeout, retries=retries)
        self._client_version = __version__
        self._server_version = None

    @property
    def url(self):
        return self._transport.url

    def __repr__(self):
        return "Client(%r)" % self.url

    # --- requests -----------------------------------------------------------

    def _request(self, method, path, body=None, content_type=None, spec=False, resend=None, accept=None):
        if self._server_version is None:
            self._check_version()
        if body is None and method == "POST":
            body, content_type = b"{}", "application/json"
        if resend is None:
            resend = method == "GET"
        answer = self._transport.request(method, path, body, content_type, resend=resend,
                                         accept=accept or "application/json")
        if answer.status >= 400:
            raise errors.error_from_answer(answer.status, answer.body, method + " " + path, spec=spec)
        return answer

    def _json(self, method, path, payload=None, **kw):
        if payload is not None:
            kw["body"], kw["content_type"] = json.dumps(payload).encode("utf-8"), "application/json"
        answer = self._request(method, path, **kw)
        try:
            return json.loads(answer.body)
        except ValueError:
            raise errors.CerebroError("%s %s: the answer is not JSON: %r" % (method, path, answer.body[:200]),
                                      answer.status, answer.body) from None

    def _download(self, path):
        return self._request("GET", path, accept="*/*").body

    def _check_version(self):
        answer = self._transport.request("GET", "/api/v1/version")
        if answer.status == 404:
            raise errors.VersionMismatch(
                "the server at %s has no /api/v1/version, so it is older than this client (cerebro %s): "
                "use a client of the server's version, or upgrade the server" % (self.url, self._client_version),
                404, answer.body)
        if answer.status >= 400:
            raise errors.error_from_answer(answer.status, answer.body, "GET /api/v1/version")
        try:
            info = json.loads(answer.body)
        except ValueError:
            info = {}
        server = info.get("version") if isinstance(info, dict) else None
        if _major_minor(server) is None or _major_minor(server) != _major_minor(self._client_version):
            raise errors.VersionMismatch(
                "the server at %s runs cerebro %s and this client is cerebro %s: their major.minor versions "
                "must match" % (self.url, server, self._client_version), answer.status, answer.body)
        self._server_version = info

    # --- the API ------------------------------------------------------------

    def version(self):
        """``{"version": "0.1.0", "api": "v1"}`` of the server (checked against this client's)."""
        if self._server_version is None:
            self._check_version()
        return dict(self._server_version)

    def experiments(self):
        """Every experiment of the server, as dicts: id, name, status, progress, units_done, units_total ..."""
        return self._json("GET", "/api/v1/experiments")["experiments"]

    def attach(self, experiment_id):
        """The Experiment `experiment_id` (NotFound when the server has none)."""
        from .experiment import Experiment
        experiment = Experiment(self, experiment_id)
        experiment.info()
        return experiment

    def submit(self, spec, files=None, name=None):
        """Submits an experiment and returns it at once (Experiment).

        `spec`: a TOML file's path, TOML text or a dict. `files`: relative
        path as the spec names it -> local path, bytes or Template. `name`:
        the experiment's name (``[experiment] name``)."""
        from .experiment import Experiment
        text, attached = specs.prepare(spec, files, name)
        if attached:
            body, content_type = multipart.encode(text, attached)
        else:
            body, content_type = text.encode("utf-8"), "application/toml"
        # Sent again after a broken connection: the server follows an
        # unfinished experiment with the same spec instead of starting another.
        answer = self._json("POST", "/api/v1/experiments", body=body, content_type=content_type, spec=True,
                            resend=True)
        return Experiment(self, answer["id"])

    def datasets(self):
        """The registered datasets and the prepared-data cache:
        ``{"datasets": [{"name", "data", "uploaded", "upload_dir",
        "registered_unix"}], "prepared": [{"name", "source", "inputs", "bytes",
        "partitions", "train_examples", "last_used_unix"}]}``."""
        return self._json("GET", "/api/v1/datasets")

    def register_dataset(self, name, files=None, **data):
        """Registers the dataset `name`, which a spec then names with
        ``[data] dataset = "NAME"``; `data` are its ``[data]`` keys (source,
        path, train, label_column ...). Without `files` its paths are on the
        cluster (under the coordinator's data roots, where a relative path
        is looked for). With `files` (relative path -> local path or bytes)
        they are uploaded with it, and its paths name them. Returns the
        registered dataset (its paths made absolute); Conflict when the name
        is taken, Forbidden for a path outside the data roots."""
        description = {"name": name, "data": data}
        if not files:
            return self._json("POST", "/api/v1/datasets", description)
        attached = {multipart.check_file_name(path): specs.read_file(value) for path, value in files.items()}
        body, content_type = multipart.encode(json.dumps(description), attached, text_part="dataset",
                                              text_type="application/json")
        return self._json("POST", "/api/v1/datasets", body=body, content_type=content_type)

    def remove_dataset(self, name):
        """Unregisters the dataset `name` (NotFound when none is registered).
        Runs that read it keep their copy of its keys; an uploaded dataset's
        files stay on the server."""
        return self._json("DELETE", "/api/v1/datasets/" + urllib.parse.quote(name, safe=""))

    def agents(self):
        """The agents: id, name, node, workers, cores, memory_bytes, speed, heartbeat_age_s, state, running."""
        return self._json("GET", "/api/v1/agents")["agents"]

    def cluster(self):
        """The agents and the experiments in one answer."""
        return self._json("GET", "/api/v1/cluster")
