"""multipart/form-data bodies (RFC 7578) for submitting a spec with its files."""
import os
import uuid

__all__ = ["encode", "check_file_name"]


def check_file_name(name):
    """`name` as the spec names a file: a relative path with / separators, no
    ``..``, no quote or line break (it travels in a header). Returns it."""
    if not isinstance(name, str) or not name:
        raise ValueError("a file name must be a non-empty string, got %r" % (name,))
    if any(c in name for c in '"\r\n\0\\'):
        raise ValueError("%r: a file name may not hold quotes, backslashes or line breaks" % name)
    if name.startswith("/") or os.path.isabs(name) or any(part in ("", ".", "..") for part in name.split("/")):
        raise ValueError("%r: a file name is a relative path as the spec names it, without '..', "
                         "'.' or empty parts (e.g. 'net.pt', 'data/train.csv')" % name)
    return name


def encode(spec_text, files, boundary=None, text_part="spec", text_type="application/toml"):
    """(body bytes, Content-Type) of a submission: the part ``spec`` holding
    the TOML text, then one part ``file`` per entry of `files` (an ordered
    mapping of relative path to bytes) with the path as its filename. An
    uploaded dataset's form has the part ``dataset`` (its JSON) instead."""
    boundary = boundary or "cerebro-" + uuid.uuid4().hex
    b = boundary.encode("ascii")
    chunks = [b"--" + b + b"\r\n",
              b'Content-Disposition: form-data; name="' + text_part.encode("ascii") + b'"\r\n',
              b"Content-Type: " + text_type.encode("ascii") + b"; charset=utf-8\r\n\r\n",
              spec_text.encode("utf-8"), b"\r\n"]
    for name, data in files.items():
        check_file_name(name)
        data = bytes(data)
        if b"--" + b in data:
            raise ValueError("%s holds the multipart boundary; submit again (a new one is drawn)" % name)
        chunks += [b"--" + b + b"\r\n",
                   b'Content-Disposition: form-data; name="file"; filename="' + name.encode("utf-8") + b'"\r\n',
                   b"Content-Type: application/octet-stream\r\n\r\n",
                   data, b"\r\n"]
    chunks.append(b"--" + b + b"--\r\n")
    return b"".join(chunks), "multipart/form-data; boundary=" + boundary
