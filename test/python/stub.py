"""A scripted HTTP server on 127.0.0.1 for the tests that need no real
Cerebro: it answers each (method, path) from a table, records every
request, and can drop connections or answer 503 first."""
import json
import socket
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Request:
    def __init__(self, method, path, headers, body):
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body)


class StubServer:
    """`routes`: {(method, path): answer}, an answer being (status, body)
    where body is a dict (sent as JSON), bytes or str, or a function of the
    Request returning one. GET /api/v1/version answers 0.1.0 unless a route
    says otherwise. `drop`: how many requests are dropped first (the
    connection closed without an answer); `unavailable`: how many are then
    answered 503."""

    def __init__(self, routes=None, drop=0, unavailable=0, tls=None):
        self.routes = {("GET", "/api/v1/version"): (200, {"version": "0.1.0", "api": "v1"})}
        self.routes.update(routes or {})
        self.requests = []
        self.drop = drop
        self.unavailable = unavailable
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                request = Request(self.command, self.path, dict(self.headers), body)
                with stub.lock:
                    stub.requests.append(request)
                    if stub.drop > 0:
                        stub.drop -= 1
                        self.close_connection = True
                        return
                    busy = stub.unavailable > 0
                    if busy:
                        stub.unavailable -= 1
                if busy:
                    return self._send(503, {"error": "the experiment is preparing its data", "status": 503})
                answer = stub.routes.get((self.command, self.path.split("?")[0]))
                if answer is None:
                    return self._send(404, {"error": "no such endpoint: %s %s" % (self.command, self.path),
                                            "status": 404})
                if callable(answer):
                    answer = answer(request)
                self._send(*answer)

            def _send(self, status, body, content_type=None):
                if isinstance(body, (dict, list)):
                    body, content_type = json.dumps(body).encode(), content_type or "application/json"
                elif isinstance(body, str):
                    body = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type or "application/octet-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_DELETE = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        scheme = "http"
        if tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(tls[0], tls[1])
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            scheme = "https"
        self.url = "%s://127.0.0.1:%d/" % (scheme, self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def paths(self, method=None):
        return [r.path for r in self.requests if method is None or r.method == method]

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def closed_port():
    """A loopback port nobody listens on (bound and released at once)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
