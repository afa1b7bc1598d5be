"""The errors the client raises: one class per kind of refusal, each with the
HTTP status, the server's own message and the raw answer."""
import json
import re

__all__ = [
    "CerebroError", "AuthError", "Forbidden", "NotFound", "Conflict", "BadRequest", "SpecError", "TooLarge",
    "Throttled", "Unavailable", "ConnectionLost", "TLSError", "VersionMismatch", "ExperimentFailed",
    "TemplateError", "error_from_answer",
]


class CerebroError(Exception):
    """Base class. `status`: the HTTP status (None when there was no answer),
    `message`: the server's ``error`` text (or the client's own), `body`: the
    answer's bytes."""

    def __init__(self, message, status=None, body=None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.body = body


class AuthError(CerebroError):
    """401: no token, or the wrong one."""


class Forbidden(CerebroError):
    """403."""


class NotFound(CerebroError):
    """404: no such experiment, config, file or endpoint."""


class Conflict(CerebroError):
    """409: refused in the experiment's current state (already paused, config ended, experiment ended)."""


class BadRequest(CerebroError):
    """400: a bad body, parameter or id."""


class SpecError(BadRequest):
    """400 for a spec. `problems`: every problem the server found, each
    ``{"message", "key", "line", "column"}`` (key, line and column may be
    None); `key`, `line` and `column` are the first problem's."""

    def __init__(self, message, status=400, body=None, problems=None):
        super().__init__(message, status, body)
        self.problems = list(problems or [])
        first = self.problems[0] if self.problems else {}
        self.key = first.get("key")
        self.line = first.get("line")
        self.column = first.get("column")


class TooLarge(CerebroError):
    """413: a body or upload over the server's cap."""


class Throttled(CerebroError):
    """429: too many wrong tokens from this address."""


class Unavailable(CerebroError):
    """503 still after every retry: the experiment is preparing its data or finishing."""


class ConnectionLost(CerebroError):
    """The server could not be reached (refused, reset, timed out) after every retry."""


class TLSError(CerebroError):
    """The HTTPS handshake failed, e.g. a certificate the client does not trust (pass ca_file)."""


class VersionMismatch(CerebroError):
    """The server runs another major.minor version than this client (or is older than the version endpoint)."""


class ExperimentFailed(CerebroError):
    """wait(): the experiment ended as failed; the message says why."""


class TemplateError(CerebroError, ValueError):
    """cerebro.Template: the module cannot be scripted or does not run on the example batch."""


_BY_STATUS = {401: AuthError, 403: Forbidden, 404: NotFound, 409: Conflict, 400: BadRequest, 413: TooLarge,
              429: Throttled, 503: Unavailable}

# "spec.toml:3:10: [experiment] epochs must be ..." (docs/SPEC.md, "Every message names the place").
_PLACE = re.compile(r"^(?:.*?):(\d+):(\d+): (.*)$")
_KEY = re.compile(r"^(\[[A-Za-z_]+\](?: [A-Za-z0-9_.\-]+)?)")
_UNKNOWN_KEY = re.compile(r"unknown key '([^']+)' in (\[[A-Za-z_]+\])")


def problems_from_text(text):
    """The problems of a spec message without the structured field: one per
    line, with the line, column and ``[section] key`` when the line names them."""
    problems = []
    for raw in (text or "").splitlines():
        raw = raw.strip()
        if not raw:
            continue
        m = _PLACE.match(raw)
        line = column = key = None
        rest = raw
        if m:
            line, column, rest = int(m.group(1)), int(m.group(2)), m.group(3)
        k = _KEY.match(rest)
        unknown = _UNKNOWN_KEY.search(rest)
        if k:
            key = k.group(1)
        elif unknown:
            key = unknown.group(2) + " " + unknown.group(1)
        problems.append({"message": raw, "key": key, "line": line, "column": column})
    return problems


def error_from_answer(status, body, what, spec=False):
    """The CerebroError for an HTTP answer `status` with `body` (bytes), to a
    request described by `what` ("GET /api/v1/..."). `spec`: the request
    submitted a spec, so a 400 is a SpecError."""
    text = body.decode("utf-8", "replace") if isinstance(body, (bytes, bytearray)) else str(body or "")
    try:
        answer = json.loads(text)
    except ValueError:
        answer = None
    message = answer.get("error") if isinstance(answer, dict) and answer.get("error") else text.strip()
    if not message:
        message = "%s: HTTP %d with no message" % (what, status)
    problems = answer.get("problems") if isinstance(answer, dict) else None
    if status == 400 and (spec or problems):
        if not isinstance(problems, list) or not problems:
            problems = problems_from_text(message)
        problems = [_problem(p) for p in problems if isinstance(p, dict)]
        return SpecError(message, status, body, problems)
    return _BY_STATUS.get(status, CerebroError)(message, status, body)


def _problem(p):
    return {"message": p.get("message", ""), "key": p.get("key"), "line": p.get("line"), "column": p.get("column")}
