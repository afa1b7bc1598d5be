"""One HTTP(S) request at a time to the server, with retries.

A lost connection (refused, reset, timed out) and a 503 answer are retried
with exponential backoff: 0.5 s, doubling, at most 8 s between attempts,
`retries` times, each retry announced on the ``cerebro`` logger (which
prints to stderr when the program configured no logging). A request that
may have reached the server before the connection broke is retried only
when repeating it is harmless (``resend=True``): reads, and submissions
(the server follows an unfinished experiment with the same spec).
"""
import http.client
import logging
import socket
import ssl
import time
import urllib.parse

from . import errors

log = logging.getLogger("cerebro")

FIRST_DELAY_S = 0.5
MAX_DELAY_S = 8.0


class Answer:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # lower-case names
        self.body = body


class _NotSent(Exception):
    """The connection could not be opened: the server never saw the request."""


class _MaybeSent(Exception):
    """The connection broke after the request was (perhaps) sent."""


def backoff_delay(retry):
    """Seconds before retry number `retry` (1, 2, ...): 0.5, 1, 2, 4, 8, 8, ..."""
    return min(FIRST_DELAY_S * 2 ** (retry - 1), MAX_DELAY_S)


def describe(exc):
    """A short reason for a connection failure: "connection refused", "timed out" ..."""
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, ConnectionResetError):
        return "connection reset"
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return "timed out"
    if isinstance(exc, http.client.RemoteDisconnected):
        return "the server closed the connection"
    if isinstance(exc, BrokenPipeError):
        return "broken pipe"
    if isinstance(exc, socket.gaierror):
        return "cannot resolve the host name: %s" % (exc.strerror or exc)
    text = str(exc) or type(exc).__name__
    return text


class Transport:
    def __init__(self, url, token, ca_file=None, timeout=30, retries=5, sleep=time.sleep):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("%r is not an http:// or https:// URL" % url)
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port or (443 if self.scheme == "https" else 80)
        self.prefix = parts.path.rstrip("/")
        self.url = "%s://%s%s/" % (self.scheme, parts.netloc.rsplit("@", 1)[-1], self.prefix)
        self.token = token
        self.timeout = timeout
        self.retries = retries
        self.sleep = sleep
        self.context = None
        if self.scheme == "https":
            self.context = ssl.create_default_context(cafile=ca_file) if ca_file else ssl.create_default_context()

    def request(self, method, path, body=None, content_type=None, resend=True, accept="application/json"):
        """The Answer (any status but a 503 that lasted every retry) of `method`
        `path` (starting with /api/v1/...). Raises ConnectionLost, Unavailable, TLSError."""
        headers = {"Authorization": "Bearer " + self.token, "Accept": accept,
                   "User-Agent": "cerebro-python/" + _version()}
        if body is not None:
            headers["Content-Type"] = content_type or "application/octet-stream"
            headers["Content-Length"] = str(len(body))
        retry = 0
        while True:
            unavailable = None
            try:
                answer = self._once(method, path, body, headers)
            except _NotSent as e:
                reason = describe(e.__cause__)
            except _MaybeSent as e:
                reason = describe(e.__cause__)
                if not resend:
                    raise errors.ConnectionLost(
                        "lost the connection to %s during %s %s (%s); the request may have been applied: "
                        "look at the experiment before repeating it" % (self.url, method, path, reason)) from None
            else:
                if answer.status != 503:
                    return answer
                unavailable = answer
                reason = "503: " + _short(answer.body)
            if retry >= self.retries:
                if unavailable is not None:
                    raise errors.error_from_answer(503, unavailable.body, method + " " + path)
                raise errors.ConnectionLost("lost the connection to %s (%s) and it did not come back after %d "
                                            "retries" % (self.url, reason, self.retries))
            retry += 1
            delay = backoff_delay(retry)
            what = "the server at %s is not ready" if unavailable is not None else "lost the connection to %s"
            log.warning("cerebro: " + what + " (%s); retrying in %.1f s (%d/%d)", self.url, reason, delay, retry,
                        self.retries)
            self.sleep(delay)

    def _connection(self):
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout, context=self.context)
        return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)

    def _once(self, method, path, body, headers):
        conn = self._connection()
        try:
            try:
                conn.connect()
            except ssl.SSLError as e:
                raise errors.TLSError("HTTPS to %s failed: %s (a cluster's own certificate needs ca_file= or "
                                      "CEREBRO_CA_FILE)" % (self.url, e)) from None
            except OSError as e:
                raise _NotSent() from e
            try:
                try:
                    conn.request(method, self.prefix + path, body=body, headers=headers)
                except OSError:
                    # A server may refuse a large body before reading it (413) and close the
                    # connection while the body is still being sent: its answer is the one to report.
                    response = _early_answer(conn)
                    if response is None:
                        raise
                else:
                    response = conn.getresponse()
                data = response.read()
            except ssl.SSLError as e:
                raise errors.TLSError("HTTPS to %s failed: %s" % (self.url, e)) from None
            except (OSError, http.client.HTTPException) as e:
                raise _MaybeSent() from e
            return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, data)
        finally:
            conn.close()


def _early_answer(conn):
    """The answer a server sent before it stopped reading the request, or None."""
    try:
        return conn.getresponse()
    except (OSError, http.client.HTTPException):
        return None


def _short(body):
    import json
    try:
        return json.loads(body).get("error", "")[:200]
    except (ValueError, AttributeError):
        return (body or b"")[:200].decode("utf-8", "replace")


def _version():
    from . import __version__
    return __version__
