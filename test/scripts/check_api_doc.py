#!/usr/bin/env python3
"""Every shell example of docs/API.md runs as written against a real
coordinator and agent, in a directory that has the repository's examples/
(an example submits one), with $U, $T and $E set as the page's first example
says: the server, its token and an experiment. That experiment has three
configs whose units are slowed down (test-only fault injection), so the
steering examples (pause, resume, stop config 1, clone config 0, add a
config) find it running; before the first example that downloads what a run
leaves when it ends, every config is stopped and the run ends. Each example
must exit 0 and print answers that are not errors, or write (curl -o) files
that are not errors.

usage: check_api_doc.py SOURCE_DIR CEREBRO_BINARY"""
import json
import os
import re
import subprocess
import sys
import tempfile

from cerebro_test_support import CoordinatorWithAgent, small_fashion_spec, wait_for

TOKEN = "s3cret-token-for-the-api-doc-01"
SPEC = small_fashion_spec("documented", 3, [0.001, 0.002, 0.003])
# The page's placeholder line: what $U, $T and $E stand for.
PLACEHOLDERS = re.compile(r"^U=http://127\.0\.0\.1:8080; T=\$\(cat cluster\.token\); E=\S+$")


# What a run leaves when it ends: its best model, summary.json, metrics.csv.
ENDED_RUN_FILES = re.compile(r"/best_model|/files/(summary\.json|metrics\.csv)")


def end_the_run(cluster, experiment):
    """Stops every config still going; the run then ends and writes its files."""
    _, detail = cluster.request("GET", f"/api/v1/experiments/{experiment}")
    for config in detail["configs"]:
        if config["status"] == "running":
            cluster.request("POST", f"/api/v1/experiments/{experiment}/configs/{config['config']}/stop", "")
    wait_for("the run's end", lambda: cluster.request("GET", f"/api/v1/experiments/{experiment}")[1].get(
        "status") in ("completed", "failed"), 180, poll=0.5, logs=cluster.logs)


def error_answers(text):
    """The API's error answers ({"error": ..., "status": N}) among the JSON documents of `text`."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while True:
        at = text.find("{", at)
        if at < 0:
            return found
        try:
            value, end = decoder.raw_decode(text, at)
        except ValueError:
            at += 1
            continue
        if isinstance(value, dict) and "error" in value and isinstance(value.get("status"), int):
            found.append(value)
        at = end


def shell_blocks(markdown):
    return re.findall(r"^```sh\n(.*?)^```", markdown, flags=re.S | re.M)


def main():
    source, binary = sys.argv[1], sys.argv[2]
    with open(os.path.join(source, "docs", "API.md")) as f:
        blocks = shell_blocks(f.read())
    assert len(blocks) >= 10, f"docs/API.md has {len(blocks)} shell examples"
    assert PLACEHOLDERS.match(blocks[0].strip()), "the first example sets U, T and E: " + blocks[0]
    tmp = tempfile.mkdtemp(prefix="cerebro-api-doc-")
    cluster = CoordinatorWithAgent(binary, tmp, TOKEN, env={
        "CEREBRO_FAULT_INJECTION_ENABLE": "i-am-a-test", "CEREBRO_FAULTS": "slow_worker=0:20"})
    try:
        status, answer = cluster.request("POST", "/api/v1/experiments", SPEC)
        assert status == 201, answer
        experiment = answer["id"]
        # Config 0 has a checkpoint to clone from once its first unit is committed.
        wait_for("config 0's first unit", lambda: any(
            u["config"] == 0 for u in cluster.request("GET", f"/api/v1/experiments/{experiment}/units")[1].get(
                "units", [])), 120, poll=0.5, logs=cluster.logs)
        env = dict(os.environ, U=cluster.base, T=TOKEN, E=experiment)
        work = os.path.join(tmp, "work")
        os.makedirs(work)
        os.symlink(os.path.join(source, "examples"), os.path.join(work, "examples"))
        ended = False
        for block in blocks[1:]:
            if not ended and ENDED_RUN_FILES.search(block):
                end_the_run(cluster, experiment)
                ended = True
            run = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=work, env=env, text=True,
                                 capture_output=True, timeout=120)
            out = run.stdout + run.stderr
            assert run.returncode == 0, f"{block}\nexited {run.returncode}:\n{out}"
            written = re.findall(r" -o (\S+)", block)
            assert run.stdout.strip() or written, f"{block}\nprinted nothing"
            assert not error_answers(run.stdout), f"{block}\nanswered an error:\n{out}"
            for name in written:
                with open(os.path.join(work, name), "rb") as f:
                    head = f.read(200)
                assert head and not error_answers(head.decode("utf-8", "replace")), f"{block}\nwrote {name}: {head!r}"
            print(f"ok: {block.strip().splitlines()[0]}")
        assert ended, "docs/API.md shows no download of an ended run's files"
    except BaseException:
        print(cluster.logs())
        raise
    finally:
        cluster.close()
    print(f"{len(blocks) - 1} examples of docs/API.md ran as written")


if __name__ == "__main__":
    main()
