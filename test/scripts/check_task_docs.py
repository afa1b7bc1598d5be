#!/usr/bin/env python3
"""docs/TASKS.md as a user runs it: its shell commands exactly as written, in a fresh folder where `tools/`
and `build/` are the project's, and each of its spec sections as a spec (with a [space], which the page
leaves to the reader, unless the section has one: the complete language-model spec, which the page's
last command trains) through `cerebro prepare`. Then checks what was prepared, what the language model
run left, and that `cerebro run` refuses the tasks no model trains with a message naming the page.

  check_task_docs.py SOURCE_DIR BUILD_DIR
"""

import json
import os
import re
import subprocess
import sys
import tempfile

# The file each spec section of the page is saved as: its task's example name (the page's commands name
# the captioning one).
SPEC_FILES = {"captioning": "shapes_captioning.toml", "detection": "shapes_detection.toml",
              "language_model": "licenses_lm.toml"}
SPACE = '\n[space]\nmodel = ["mlp"]\nlr = [0.001]\nbatch_size = [32]\n'


def blocks(text):
    return re.findall(r"```(sh|toml)\n(.*?)```", text, re.S)


def run(cmd, cwd, shell=False, expect_ok=True):
    p = subprocess.run(cmd, cwd=cwd, shell=shell, executable="/bin/bash" if shell else None,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    print(f"$ {cmd if shell else ' '.join(cmd)}\n{p.stdout}", flush=True)
    if expect_ok and p.returncode != 0:
        sys.exit(f"FAILED (exit {p.returncode}): {cmd}")
    return p


def manifest(folder):
    with open(os.path.join(folder, "manifest.json")) as f:
        return json.load(f)


def check(condition, what):
    if not condition:
        sys.exit(f"FAILED: {what}")
    print(f"ok: {what}")


def main(source, build):
    with open(os.path.join(source, "docs", "TASKS.md")) as f:
        found = blocks(f.read())
    shell = [body for kind, body in found if kind == "sh"]
    specs = [body for kind, body in found if kind == "toml"]
    check(len(shell) == 3 and len(specs) == 4, "the page shows three commands and four spec sections")

    with tempfile.TemporaryDirectory(prefix="cerebro-task-docs-") as work:
        os.symlink(os.path.join(source, "tools"), os.path.join(work, "tools"))
        os.symlink(build, os.path.join(work, "build"))
        # A complete spec (with its [space]) is the file of its task; a data section is, when none is.
        for body in sorted(specs, key=lambda b: "[space]" in b):
            task = re.search(r'task = "(\w+)"', body).group(1)
            with open(os.path.join(work, SPEC_FILES[task]), "w") as f:
                f.write(body if "[space]" in body else body + SPACE)
        for body in shell:
            run(body, work, shell=True)

        captions = manifest(os.path.join(work, "shapes-captions"))
        check(captions["task"] == "captioning" and captions["tokenizer"]["kind"] == "words",
              "the captioning data keeps its word tokenizer")
        check(captions["num_classes"] == 4 + len(captions["tokenizer"]["pieces"]),
              "the captioning outputs are the vocabulary's ids")

        cerebro = os.path.join(work, "build", "tools", "cerebro")
        run([cerebro, "prepare", "shapes_detection.toml", "--out", "shapes-detection"], work)
        boxes = manifest(os.path.join(work, "shapes-detection"))
        check(boxes["category_ids"] == [1, 2, 3] and boxes["class_names"] == ["square", "circle", "triangle"],
              "the detection classes are the categories by id")

        run([cerebro, "prepare", "licenses_lm.toml", "--out", "licenses"], work)
        text = manifest(os.path.join(work, "licenses"))
        check(text["sample_shape"] == [33] and text["train_examples"] > 100,
              "the licence texts become windows of 33 tokens")

        trained = os.path.join(work, "licenses-lm", "summary.json")
        check(os.path.exists(trained), "the language model run left its summary")
        with open(trained) as f:
            summary = json.load(f)
        check(summary["metric"] == "val_perplexity" and summary["best"]["test_perplexity"] < 400,
              "it ranks by val_perplexity and its best model's test perplexity is far below a guess")

        refused = run([cerebro, "run", "shapes_captioning.toml", "--out", "run"], work, expect_ok=False)
        check(refused.returncode != 0 and "docs/TASKS.md" in refused.stdout,
              "cerebro run refuses a task no model trains, naming the page")
        check(not os.path.exists(os.path.join(work, "run", "data")), "and prepares nothing for it")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])))
