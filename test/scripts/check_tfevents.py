#!/usr/bin/python3
"""An independent reader of the TensorBoard logs cerebro writes.

Usage: check_tfevents.py RUN_DIR
       check_tfevents.py --running RUN_DIR


Reads every RUN_DIR/tensorboard/**/events.out.tfevents.* file: checks the
TFRecord framing (lengths, and both masked CRC-32C values, computed here
bit by bit, not with cerebro's table), decodes each record with
`protoc --decode=tensorflow.Event` against tensorboard_events.proto (written
from the documented schemas), and compares what it finds with the run's
summary.json: one session per config with its params, per-epoch scalars
matching the config's epochs, a session end with the config's status, and
the experiment's hparams config naming every hyper-parameter. Prints a JSON
digest on success; exits 1 naming the first problem otherwise.

With --running the logs are read as TensorBoard reads them while the run
trains (no summary.json yet): every config directory's file must be whole
records with the file version first, a session start with params and no
session end yet; the digest lists each config's params and scalars
({tag: {step: value}}) for the caller to compare with what it committed.
"""
import json
import os
import re
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO = os.path.join(HERE, "tensorboard_events.proto")


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def fail(message):
    print("check_tfevents: " + message, file=sys.stderr)
    sys.exit(1)


def records(path):
    data = open(path, "rb").read()
    at, out = 0, []
    while at < len(data):
        if at + 12 > len(data):
            fail(f"{path}: truncated record header at byte {at}")
        header = data[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[at + 8:at + 12])
        if length_crc != masked(crc32c(header)):
            fail(f"{path}: bad length CRC at byte {at}")
        body = data[at + 12:at + 12 + length]
        if len(body) != length or at + 16 + length > len(data):
            fail(f"{path}: truncated record at byte {at}")
        (body_crc,) = struct.unpack("<I", data[at + 12 + length:at + 16 + length])
        if body_crc != masked(crc32c(body)):
            fail(f"{path}: bad data CRC at byte {at}")
        out.append(body)
        at += 16 + length
    return out


def parse_text(text):
    """Protobuf text format -> {field: [values]} (nested messages as dicts)."""
    tokens = re.findall(r'"(?:[^"\\]|\\.)*"|[{}]|[^\s{}:]+:?', text)
    pos = 0

    def message():
        nonlocal pos
        out = {}
        while pos < len(tokens) and tokens[pos] != "}":
            name = tokens[pos]
            pos += 1
            if name.endswith(":"):
                raw = tokens[pos]
                pos += 1
                if raw.startswith('"'):
                    value = bytes(raw[1:-1], "utf-8").decode("unicode_escape")
                else:
                    try:
                        value = float(raw) if re.match(r"^-?[0-9.]+(e[-+]?[0-9]+)?$|^-?inf$|^nan$", raw) else raw
                    except ValueError:
                        value = raw
                out.setdefault(name[:-1], []).append(value)
            else:
                if tokens[pos] != "{":
                    fail(f"unexpected text format near {name!r}")
                pos += 1
                value = message()
                pos += 1  # "}"
                out.setdefault(name, []).append(value)
        return out

    return message()


def decode(body):
    done = subprocess.run(["protoc", "--proto_path=" + HERE, "--decode=tensorflow.Event", PROTO],
                          input=body, capture_output=True)
    if done.returncode != 0:
        fail("protoc could not decode a record: " + done.stderr.decode())
    raw = subprocess.run(["protoc", "--decode_raw"], input=body, capture_output=True)
    if raw.returncode != 0:
        fail("protoc --decode_raw refused a record: " + raw.stderr.decode())
    return parse_text(done.stdout.decode())


def one(d, key, default=None):
    values = d.get(key)
    return values[0] if values else default


def events_of(directory):
    files = [f for f in os.listdir(directory) if f.startswith("events.out.tfevents.")]
    if len(files) != 1:
        fail(f"{directory}: expected one event file, found {files}")
    path = os.path.join(directory, files[0])
    parts = files[0].split(".")
    if len(parts) < 5 or not parts[3].isdigit():
        fail(f"{path}: not named events.out.tfevents.<time>.<host>")
    events = [decode(body) for body in records(path)]
    if not events or one(events[0], "file_version") != "brain.Event:2":
        fail(f"{path}: the first record is not file_version brain.Event:2")
    return events[1:]


def plugin_data(event):
    value = one(one(event, "summary", {}), "value", {})
    plugin = one(one(value, "metadata", {}), "plugin_data", {})
    if one(plugin, "plugin_name") != "hparams":
        return None, None
    return one(value, "tag"), one(plugin, "content", {})


def hparam_value(v):
    for kind in ("number_value", "string_value", "bool_value"):
        if kind in v:
            return v[kind][0]
    return None


def config_events(directory):
    start, end, scalars = None, None, {}
    for event in events_of(directory):
        tag, data = plugin_data(event)
        if tag == "_hparams_/session_start_info":
            start = one(data, "session_start_info")
        elif tag == "_hparams_/session_end_info":
            end = one(data, "session_end_info")
        else:
            value = one(one(event, "summary", {}), "value", {})
            step = int(one(event, "step", 0))
            scalars.setdefault(one(value, "tag"), {})[step] = one(value, "simple_value")
    return start, end, scalars


def main_running(run_dir):
    root = os.path.join(run_dir, "tensorboard")
    if not os.path.isdir(root):
        fail("no " + root)
    digest = {"configs": {}}
    for name in sorted(os.listdir(root)):
        directory = os.path.join(root, name)
        if not (os.path.isdir(directory) and name.startswith("config-")):
            continue
        start, end, scalars = config_events(directory)
        if start is None:
            fail(f"{directory}: no session start")
        if end is not None:
            fail(f"{directory}: a session end while the run trains")
        params = {one(e, "key"): hparam_value(one(e, "value", {})) for e in start.get("hparams", [])}
        digest["configs"][name[len("config-"):]] = {
            "params": params,
            "scalars": {tag: {str(step): v for step, v in sorted(by_step.items())} for tag, by_step in scalars.items()}}
    print(json.dumps(digest, sort_keys=True))


def main():
    if sys.argv[1] == "--running":
        return main_running(sys.argv[2])
    run_dir = sys.argv[1]
    summary = json.load(open(os.path.join(run_dir, "summary.json")))
    root = os.path.join(run_dir, "tensorboard")
    digest = {"configs": {}, "hparams": []}
    experiment = None
    for event in events_of(root):
        tag, data = plugin_data(event)
        if tag == "_hparams_/experiment":
            experiment = one(data, "experiment")
    if experiment is None:
        fail("no _hparams_/experiment record in " + root)
    digest["hparams"] = sorted(one(info, "name") for info in experiment.get("hparam_infos", []))
    for info in experiment.get("hparam_infos", []):
        if "domain_interval" not in info and "domain_discrete" not in info:
            fail(f"hparam {one(info, 'name')} has no domain")
    keys = sorted({k for c in summary["configs"] for k in c["params"]})
    if digest["hparams"] != keys:
        fail(f"experiment hparams {digest['hparams']} != the configs' keys {keys}")
    metrics = sorted(one(one(m, "name"), "tag") for m in experiment.get("metric_infos", []))
    if summary["metric"] not in metrics:
        fail(f"the run's metric {summary['metric']} is not among the experiment's metrics {metrics}")
    for config in summary["configs"]:
        directory = os.path.join(root, f"config-{config['id']}")
        if not os.path.isdir(directory):
            fail(f"no {directory}")
        start, end, scalars = config_events(directory)
        if start is None or end is None:
            fail(f"{directory}: no session start or end")
        params = {one(e, "key"): hparam_value(one(e, "value", {})) for e in start.get("hparams", [])}
        for key, expected in config["params"].items():
            got = params.get(key)
            want = expected if isinstance(expected, (str, bool, int, float)) else json.dumps(expected, separators=(",", ":"))
            if isinstance(want, (int, float)) and not isinstance(want, bool):
                ok = got is not None and abs(float(got) - float(want)) <= 1e-9 * max(1.0, abs(float(want)))
            else:
                ok = str(got).lower() == str(want).lower() if isinstance(want, bool) else got == want
            if not ok:
                fail(f"config {config['id']}: hparam {key} is {got!r}, summary.json says {want!r}")
        status = one(end, "status")
        want_status = {"completed": "STATUS_SUCCESS", "stopped": "STATUS_SUCCESS", "diverged": "STATUS_FAILURE",
                       "failed": "STATUS_FAILURE"}[config["status"]]
        if status != want_status:
            fail(f"config {config['id']}: session status {status}, expected {want_status}")
        for epoch in config["epochs"]:
            for tag, field in (("train_loss", "train_loss"), ("val_loss", "val_loss"),
                               ("val_accuracy", "val_accuracy"), ("epoch_seconds", "seconds")):
                got = scalars.get(tag, {}).get(epoch["epoch"])
                if got is None or abs(got - epoch[field]) > 1e-4 * max(1.0, abs(epoch[field])):
                    fail(f"config {config['id']} epoch {epoch['epoch']}: {tag} {got}, summary.json {epoch[field]}")
        digest["configs"][config["id"]] = {"params": params, "status": status,
                                           "steps": sorted(scalars.get("train_loss", {}))}
    print(json.dumps(digest, sort_keys=True))


if __name__ == "__main__":
    main()
