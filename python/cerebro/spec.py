"""What submit() sends: the spec's TOML text and the files it names.

A spec is a TOML file's path, TOML text or a dict. A spec file's relative
model files (``[space] model`` entries ending in ``.pt``) and data paths
(``[data] path``, ``train``, ``test`` ...) that exist beside it are
attached, so the server (which may run elsewhere) reads those files from the
submission; a directory is attached file by file under its relative name.
Templates inside a dict's ``[space] model`` are replaced by their file name
and attached.
"""
import os
import pathlib
import re
import tomllib

from . import multipart
from .toml_writer import dumps

__all__ = ["prepare", "names_in_spec"]

DATA_PATH_KEYS = ("path", "train", "validation", "test", "train_images", "train_labels", "test_images",
                  "test_labels")
# Zip archives (TorchScript files are) start with a local file header.
_ZIP_MAGIC = b"PK\x03\x04"


def prepare(spec, files=None, name=None):
    """(TOML text, {relative path: bytes}) for `spec`, `files` and the experiment `name`."""
    attached = {}
    if isinstance(spec, dict):
        spec = _with_templates(spec, attached)
        if name is not None:
            spec = dict(spec)
            spec["experiment"] = dict(spec.get("experiment") or {}, name=name)
        text = dumps(spec)
    else:
        path = _spec_path(spec)
        if path is not None:
            text = path.read_text(encoding="utf-8")
            for relative, local in _beside(text, path.parent):
                attached[relative] = _read(local)
        else:
            text = spec
        if name is not None:
            text = with_name(text, name)
    for relative, value in (files or {}).items():
        attached[multipart.check_file_name(os.fspath(relative).replace(os.sep, "/"))] = _read(value)
    _check_models(text, attached)
    return text, attached


def _spec_path(spec):
    """The spec's path when `spec` names a file (a Path, or a string that is a
    file's name), None when it is TOML text."""
    if isinstance(spec, os.PathLike):
        path = pathlib.Path(spec)
        if not path.is_file():
            raise FileNotFoundError("%s: no such spec file" % path)
        return path
    if not isinstance(spec, str):
        raise TypeError("a spec is a TOML file's path, TOML text or a dict, got " + type(spec).__name__)
    if "\n" not in spec and os.path.isfile(spec):
        return pathlib.Path(spec)
    if "\n" not in spec and "=" not in spec and spec.strip().endswith(".toml"):
        raise FileNotFoundError("%s: no such spec file" % spec)
    return None


def read_file(value):
    """The bytes of a file to send: a local path, bytes or a cerebro.Template."""
    return _read(value)


def _read(value):
    from .template import Template
    if isinstance(value, Template):
        return value.data
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, (str, os.PathLike)):
        return pathlib.Path(value).read_bytes()
    raise TypeError("a file is a local path, bytes or a cerebro.Template, got " + type(value).__name__)


def _with_templates(spec, attached):
    """`spec` with every Template in [space] model replaced by its file name (attached)."""
    from .template import Template
    space = spec.get("space")
    if not isinstance(space, dict) or "model" not in space:
        return spec

    def replace(value):
        if isinstance(value, Template):
            if attached.get(value.file_name, value.data) != value.data:
                raise ValueError("two different templates are named %s: give them different names"
                                 % value.file_name)
            attached[value.file_name] = value.data
            return value.file_name
        if isinstance(value, (list, tuple)):
            return [replace(v) for v in value]
        if isinstance(value, dict) and "values" in value:
            return dict(value, values=replace(value["values"]))
        return value

    return dict(spec, space=dict(space, model=replace(space["model"])))


def names_in_spec(text):
    """The relative paths a spec's text names: model files and data paths."""
    try:
        spec = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []  # the server reports the syntax error, with its line
    names = []
    model = (spec.get("space") or {}).get("model")
    for value in _flatten(model):
        if isinstance(value, str) and value.endswith(".pt"):
            names.append(value)
    data = spec.get("data") or {}
    for key in DATA_PATH_KEYS:
        if isinstance(data.get(key), str):
            names.append(data[key])
    return [n for n in names if not os.path.isabs(n)]


def _flatten(value):
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from _flatten(v)
    elif isinstance(value, dict):
        yield from _flatten(value.get("values"))
    else:
        yield value


def _beside(text, folder):
    """(relative name, local path) of every file the spec names that exists beside it."""
    for name in names_in_spec(text):
        local = folder / name
        relative = pathlib.PurePosixPath(os.path.normpath(name).replace(os.sep, "/"))
        if relative.parts and relative.parts[0] == "..":
            continue  # outside the spec's folder: the server resolves it itself
        if local.is_file():
            yield str(relative), local
        elif local.is_dir():
            for inner in sorted(local.rglob("*")):
                if inner.is_file():
                    yield str(relative / inner.relative_to(local).as_posix()), inner


def _check_models(text, attached):
    """A model file attached that is not TorchScript fails here, naming it."""
    for name in names_in_spec(text):
        data = attached.get(os.path.normpath(name).replace(os.sep, "/"))
        if data is not None and name.endswith(".pt") and not data.startswith(_ZIP_MAGIC):
            from .errors import SpecError
            message = ("[space] model: %s is not a TorchScript file (save one with torch.jit.script(module).save, "
                       "or pass a cerebro.Template)" % name)
            raise SpecError(message, status=None, problems=[{"message": message, "key": "[space] model",
                                                            "line": None, "column": None}])


_EXPERIMENT = re.compile(r"^\s*\[\s*experiment\s*\]\s*(#.*)?$")
_TABLE = re.compile(r"^\s*\[")
_NAME = re.compile(r"^\s*name\s*=")


def with_name(text, name):
    """`text` with ``[experiment] name`` set to `name`: the line replaced when
    there is one, else added under the section's header (or a new section at
    the end), so the other lines keep their numbers where possible."""
    line = "name = " + dumps({"n": name}).split(" = ", 1)[1].strip()
    lines = text.splitlines()
    for i, raw in enumerate(lines):
        if _EXPERIMENT.match(raw):
            for j in range(i + 1, len(lines)):
                if _TABLE.match(lines[j]):
                    break
                if _NAME.match(lines[j]):
                    lines[j] = line
                    return "\n".join(lines) + "\n"
            lines.insert(i + 1, line)
            return "\n".join(lines) + "\n"
    return text.rstrip("\n") + "\n\n[experiment]\n" + line + "\n"
