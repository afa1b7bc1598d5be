#!/usr/bin/env python3
"""docs/TASKS.md as a user runs it: its shell commands exactly as written, in a fresh folder where `tools/`
and `build/` are the project's, and each of its spec sections as a spec (with a [space], which the page
leaves to the reader, unless the section has one: the complete specs of each task, which the page's
commands train) through `cerebro prepare`. Then checks what was prepared and what each task's run left.

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


RUNS = []  # (command, output) of every command run


def run(cmd, cwd, shell=False, expect_ok=True):
    p = subprocess.run(cmd, cwd=cwd, shell=shell, executable="/bin/bash" if shell else None,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    print(f"$ {cmd if shell else ' '.join(cmd)}\n{p.stdout}", flush=True)
    RUNS.append((cmd if shell else " ".join(cmd), p.stdout))
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
    check(len(shell) == 5 and len(specs) == 6, "the page shows five commands and six spec sections")

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
        block = [out for cmd, out in RUNS if "generate" in cmd][0]
        generated = [line for line in block.splitlines() if line.startswith("the software ")]
        check(len(generated) == 1 and len(generated[0].split()) >= 14, "generate continues the prompt in words")

        captioned = os.path.join(work, "shapes-captioned", "summary.json")
        check(os.path.exists(captioned), "the captioning run left its summary")
        with open(captioned) as f:
            summary = json.load(f)
        check(summary["metric"] == "val_bleu4" and 0 <= summary["best"]["test_bleu4"] <= 1,
              "it ranks by val_bleu4 and scores its best model's test captions")
        with open(os.path.join(work, "captions.csv")) as f:
            rows = f.read().splitlines()
        check(rows[0] == "row,path,caption" and len(rows) == 121, "predict captions every image")

        detected = os.path.join(work, "shapes-detected", "summary.json")
        check(os.path.exists(detected), "the detection run left its summary")
        with open(detected) as f:
            summary = json.load(f)
        check(summary["metric"] == "val_map" and 0 <= summary["best"]["test_map50"] <= 1,
              "it ranks by val_map and scores its best model's test boxes")
        with open(os.path.join(work, "boxes.json")) as f:
            boxes = json.load(f)
        check(isinstance(boxes, list) and all(set(b) == {"image_id", "category_id", "bbox", "score"} for b in boxes),
              "predict writes the boxes as a COCO results file")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])))
