"""A small TOML writer for experiment specs given as Python dicts.

Top-level scalars come first, then one ``[section]`` per top-level dict, so
a spec reads the way the examples in docs/SPEC.md are written. Any deeper
dict is an inline table: ``lr = { dist = "loguniform", low = 0.0001, high = 0.01 }``.
``tomllib.loads(dumps(d)) == d`` for every dict of strings, booleans,
integers, floats, lists and dicts.
"""
import datetime
import math
import numbers
import os
import re

__all__ = ["dumps"]

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def dumps(data):
    """The TOML text of `data`, a dict (a spec: ``{"experiment": {...}, "data": {...}, "space": {...}}``)."""
    if not isinstance(data, dict):
        raise TypeError("a TOML document is a dict, got " + type(data).__name__)
    lines = []
    _table(data, [], lines)
    return "\n".join(lines).lstrip("\n") + "\n"


def _table(table, path, lines):
    scalars = [(k, v) for k, v in table.items() if not _is_subtable(v, path)]
    subtables = [(k, v) for k, v in table.items() if _is_subtable(v, path)]
    if path:
        lines.append("")
        lines.append("[" + ".".join(_key(p) for p in path) + "]")
    for key, value in scalars:
        lines.append(_key(key) + " = " + _value(value, path + [key]))
    for key, value in subtables:
        _table(value, path + [key], lines)


def _is_subtable(value, path):
    # Only the document's own dicts are [sections]; the spec format has no deeper headers.
    return isinstance(value, dict) and not path


def _key(key):
    if isinstance(key, bool) or not isinstance(key, (str, int)):
        raise TypeError("a TOML key is a string, got %r" % (key,))
    key = str(key)
    return key if _BARE_KEY.match(key) else _string(key)


def _string(text):
    out = []
    for c in text:
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append("\\u%04x" % ord(c))
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def _value(value, path):
    where = ".".join(str(p) for p in path)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, os.PathLike):
        return _string(os.fspath(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return _float(float(value))
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v, path + [i]) for i, v in enumerate(value)) + "]"
    if isinstance(value, dict):
        items = [_key(k) + " = " + _value(v, path + [k]) for k, v in value.items()]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    if value is None:
        raise ValueError("%s: TOML has no null; leave the key out instead" % where)
    raise TypeError("%s: cannot write a value of type %s as TOML" % (where, type(value).__name__))


def _float(x):
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    text = repr(x)
    return text if any(c in text for c in ".eE") else text + ".0"
