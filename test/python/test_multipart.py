"""The multipart/form-data body of a submission, read back by the standard library's MIME parser."""
import email.parser
import email.policy

import pytest

from cerebro import multipart


def parse(body, content_type):
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body)
    assert message.is_multipart()
    return [(part.get_param("name", header="content-disposition"), part.get_filename(),
             part.get_content_type(), part.get_payload(decode=True)) for part in message.iter_parts()]


def test_the_spec_part_comes_first_then_one_file_part_per_file():
    spec = '[experiment]\nname = "été"\n'
    files = {"net.pt": b"PK\x03\x04\x00binary\r\n--not-the-boundary\r\n", "data/train.csv": b"a,b\n1,2\n"}
    body, content_type = multipart.encode(spec, files)
    assert content_type.startswith("multipart/form-data; boundary=cerebro-")
    parts = parse(body, content_type)
    assert parts[0] == ("spec", None, "application/toml", spec.encode("utf-8"))
    assert parts[1] == ("file", "net.pt", "application/octet-stream", files["net.pt"])
    assert parts[2] == ("file", "data/train.csv", "application/octet-stream", files["data/train.csv"])
    assert len(parts) == 3


def test_the_body_is_exactly_rfc_7578_framing():
    body, content_type = multipart.encode("a = 1\n", {"x.pt": b"123"}, boundary="B")
    assert content_type == "multipart/form-data; boundary=B"
    assert body == (b'--B\r\nContent-Disposition: form-data; name="spec"\r\n'
                    b"Content-Type: application/toml; charset=utf-8\r\n\r\na = 1\n\r\n"
                    b'--B\r\nContent-Disposition: form-data; name="file"; filename="x.pt"\r\n'
                    b"Content-Type: application/octet-stream\r\n\r\n123\r\n--B--\r\n")


def test_a_boundary_is_drawn_per_body():
    assert multipart.encode("", {})[1] != multipart.encode("", {})[1]


@pytest.mark.parametrize("name", ["/etc/passwd", "../x.pt", "a/../../b", "a//b", "./x", "", 'q"uote.pt',
                                  "line\nbreak", "back\\slash"])
def test_names_that_could_leave_the_experiment_or_break_the_header_are_refused(name):
    with pytest.raises(ValueError):
        multipart.encode("", {name: b""})


def test_a_file_holding_the_boundary_is_refused():
    with pytest.raises(ValueError, match="boundary"):
        multipart.encode("", {"x.bin": b"...--B..."}, boundary="B")
