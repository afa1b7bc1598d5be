"""A lost connection or a 503 is retried with backoff (0.5 s doubling, at
most 8 s) and said on the ``cerebro`` logger; a request that may have been
applied is not sent twice; HTTPS trusts the given certificate only."""
import logging
import re
import shutil
import subprocess
import time

import pytest

import cerebro
from cerebro import transport
from stub import StubServer, closed_port

EXPERIMENTS = {("GET", "/api/v1/experiments"): (200, {"experiments": [{"id": "a-1"}], "latest": "a-1"})}


def quick(client):
    """The client with its sleeps recorded instead of slept."""
    slept = []
    client._transport.sleep = slept.append
    return slept


def test_the_backoff_doubles_from_half_a_second_up_to_eight():
    assert [transport.backoff_delay(n) for n in range(1, 8)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]


def test_dropped_connections_are_retried_and_said_on_stderr(caplog):
    with StubServer(EXPERIMENTS, drop=2) as stub:
        client = cerebro.Client(stub.url, token="t")
        slept = quick(client)
        with caplog.at_level(logging.WARNING, logger="cerebro"):
            assert client.experiments() == [{"id": "a-1"}]
    assert slept == [0.5, 1.0]
    assert len(stub.requests) == 4  # two dropped, the version, the list
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2
    for message, (delay, n) in zip(messages, [("0.5", 1), ("1.0", 2)]):
        # The drop reads as a close or a reset, depending on which the client sees first.
        assert re.fullmatch(r"cerebro: lost the connection to %s \((the server closed the connection|connection "
                            r"reset)\); retrying in %s s \(%d/5\)" % (re.escape(stub.url), delay, n), message)


def test_503_answers_are_retried_until_the_server_is_ready(caplog):
    with StubServer(EXPERIMENTS, unavailable=3) as stub:
        client = cerebro.Client(stub.url, token="t")
        slept = quick(client)
        with caplog.at_level(logging.WARNING, logger="cerebro"):
            assert client.experiments() == [{"id": "a-1"}]
    assert slept == [0.5, 1.0, 2.0]
    assert "is not ready (503: the experiment is preparing its data); retrying in 2.0 s (3/5)" in caplog.text


def test_503_lasting_every_retry_is_unavailable():
    with StubServer(EXPERIMENTS, unavailable=100) as stub:
        client = cerebro.Client(stub.url, token="t", retries=3)
        slept = quick(client)
        with pytest.raises(cerebro.Unavailable, match="preparing its data") as e:
            client.experiments()
    assert e.value.status == 503
    assert slept == [0.5, 1.0, 2.0]


def test_a_server_that_never_answers_is_a_lost_connection_after_the_retries(caplog):
    url = "http://127.0.0.1:%d/" % closed_port()
    client = cerebro.Client(url, token="t", retries=6)
    slept = quick(client)
    with caplog.at_level(logging.WARNING, logger="cerebro"):
        with pytest.raises(cerebro.ConnectionLost, match=r"connection refused\) and it did not come back after 6"):
            client.experiments()
    assert slept == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert "cerebro: lost the connection to %s (connection refused); retrying in 8.0 s (6/6)" % url in caplog.text


def test_the_real_sleeps_follow_the_backoff():
    client = cerebro.Client("http://127.0.0.1:%d/" % closed_port(), token="t", retries=2)
    start = time.monotonic()
    with pytest.raises(cerebro.ConnectionLost):
        client.version()
    assert 1.4 <= time.monotonic() - start < 5


def test_a_steering_request_that_may_have_arrived_is_not_sent_again():
    with StubServer({("POST", "/api/v1/experiments/a-1/pause"): (200, {"paused": True})}) as stub:
        client = cerebro.Client(stub.url, token="t")
        slept = quick(client)
        client.version()
        stub.drop = 1
        with pytest.raises(cerebro.ConnectionLost, match="may have been applied"):
            cerebro.Experiment(client, "a-1").pause()
    assert slept == []
    assert stub.paths("POST") == ["/api/v1/experiments/a-1/pause"]


def test_a_steering_request_is_retried_when_the_server_was_not_reached_or_not_ready():
    with StubServer({("POST", "/api/v1/experiments/a-1/pause"): (200, {"paused": True})}) as stub:
        client = cerebro.Client(stub.url, token="t")
        slept = quick(client)
        client.version()
        stub.unavailable = 2
        assert cerebro.Experiment(client, "a-1").pause() == {"paused": True}
    assert slept == [0.5, 1.0]
    assert stub.paths("POST") == ["/api/v1/experiments/a-1/pause"] * 3


def test_every_request_has_the_token_and_every_post_a_body():
    with StubServer({("POST", "/api/v1/experiments/a-1/resume"): (200, {"paused": False})}) as stub:
        client = cerebro.Client(stub.url, token="  secret\n")
        cerebro.Experiment(client, "a-1").resume()
    assert [r.headers["Authorization"] for r in stub.requests] == ["Bearer secret"] * 2
    post = stub.requests[-1]
    assert (post.headers["Content-Length"], post.body, post.headers["Content-Type"]) == ("2", b"{}",
                                                                                         "application/json")


def test_an_early_answer_to_a_large_body_is_reported():
    # The server answers 413 and closes as soon as it sees the Content-Length.
    import socket
    import threading
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]

    def serve():
        for _ in range(2):
            conn, _ = listener.accept()
            head = b""
            while b"\r\n\r\n" not in head:
                head += conn.recv(65536)
            if b"/api/v1/version" in head:
                body = b'{"version": "0.1.0", "api": "v1"}'
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            else:
                body = b'{"error": "the upload is larger than 1000 bytes", "status": 413}'
                conn.sendall(b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                             % (len(body), body))
                conn.shutdown(socket.SHUT_WR)
                time.sleep(0.5)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    client = cerebro.Client("http://127.0.0.1:%d/" % port, token="t")
    quick(client)
    with pytest.raises(cerebro.TooLarge, match="larger than 1000 bytes"):
        client.submit("[experiment]\nname = \"x\"\n", files={"big.bin": bytes(64 << 20)})
    listener.close()


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    if not shutil.which("openssl"):
        pytest.skip("needs openssl")
    folder = tmp_path_factory.mktemp("tls")
    key, cert = str(folder / "server.key"), str(folder / "server.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "2", "-subj", "/CN=cerebro-test", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    return key, cert


def test_https_trusts_the_clusters_own_certificate(certificate, monkeypatch):
    key, cert = certificate
    with StubServer(EXPERIMENTS, tls=(cert, key)) as stub:
        assert stub.url.startswith("https://")
        assert cerebro.Client(stub.url, token="t", ca_file=cert).experiments() == [{"id": "a-1"}]
        monkeypatch.setenv("CEREBRO_CA_FILE", cert)
        assert cerebro.Client(stub.url, token="t").experiments() == [{"id": "a-1"}]


def test_https_refuses_a_certificate_it_does_not_trust_without_retrying(certificate, monkeypatch):
    key, cert = certificate
    monkeypatch.delenv("CEREBRO_CA_FILE", raising=False)
    with StubServer(EXPERIMENTS, tls=(cert, key)) as stub:
        client = cerebro.Client(stub.url, token="t")
        slept = quick(client)
        with pytest.raises(cerebro.TLSError, match="CERTIFICATE_VERIFY_FAILED.*ca_file"):
            client.experiments()
    assert slept == []
    assert stub.requests == []


def test_the_env_names_the_server_and_the_token_file(tmp_path, monkeypatch):
    token = tmp_path / "token"
    token.write_text("from-the-file\n")
    with StubServer(EXPERIMENTS) as stub:
        monkeypatch.setenv("CEREBRO_URL", stub.url + "?token=one-time-link-token")
        monkeypatch.setenv("CEREBRO_TOKEN_FILE", str(token))
        client = cerebro.Client()
        assert client.url == stub.url
        client.experiments()
        assert cerebro.Client(token_file=str(token)).experiments()
        assert cerebro.Client(token="given").experiments()
    assert [r.headers["Authorization"] for r in stub.requests if r.path == "/api/v1/experiments"] == [
        "Bearer from-the-file", "Bearer from-the-file", "Bearer given"]
    assert all("token" not in r.path for r in stub.requests)


def test_without_a_server_or_token_the_client_says_what_to_give(monkeypatch, tmp_path):
    monkeypatch.delenv("CEREBRO_URL", raising=False)
    monkeypatch.delenv("CEREBRO_TOKEN_FILE", raising=False)
    with pytest.raises(cerebro.CerebroError, match="CEREBRO_URL"):
        cerebro.Client()
    with pytest.raises(cerebro.AuthError, match="CEREBRO_TOKEN_FILE"):
        cerebro.Client("http://127.0.0.1:1/")
    with pytest.raises(cerebro.AuthError, match="cannot read the token"):
        cerebro.Client("http://127.0.0.1:1/", token_file=str(tmp_path / "missing"))
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(cerebro.AuthError, match="is empty"):
        cerebro.Client("http://127.0.0.1:1/", token_file=str(tmp_path / "empty"))
    with pytest.raises(ValueError, match="not an http"):
        cerebro.Client("ftp://x/", token="t")
