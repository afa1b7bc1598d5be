#!/usr/bin/env python3
"""docs/TEMPLATES.md "Structured tasks" as a user runs it: its spec saved as lstm.toml, its Python as
make_lstm.py and its commands run exactly as written in a fresh folder where `build/` is the project's;
then checks what the run left: ranked by the template's own metric and scored with it on the test set.

  check_field_template_doc.py SOURCE_DIR BUILD_DIR
"""

import json
import os
import re
import subprocess
import sys
import tempfile


def check(condition, what):
    if not condition:
        sys.exit(f"FAILED: {what}")
    print(f"ok: {what}")


def main(source, build):
    with open(os.path.join(source, "docs", "TEMPLATES.md")) as f:
        page = f.read()
    section = page.split("## Structured tasks", 1)[1].split("\n## ", 1)[0]
    found = dict((kind, body) for kind, body in re.findall(r"```(toml|python|sh)\n(.*?)```", section, re.S))
    check(set(found) == {"toml", "python", "sh"}, "the section shows a spec, a script and commands")
    with tempfile.TemporaryDirectory(prefix="cerebro-field-template-") as work:
        os.symlink(build, os.path.join(work, "build"))
        with open(os.path.join(work, "lstm.toml"), "w") as f:
            f.write(found["toml"])
        with open(os.path.join(work, "make_lstm.py"), "w") as f:
            f.write(found["python"])
        p = subprocess.run(found["sh"], cwd=work, shell=True, executable="/bin/bash", stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=600)
        print(p.stdout, flush=True)
        check(p.returncode == 0, "the commands run")
        with open(os.path.join(work, "lstm-run", "summary.json")) as f:
            summary = json.load(f)
        check(summary["metric"] == "val_next_accuracy", "the run ranks by the template's metric")
        for epoch in summary["configs"][0]["epochs"]:
            check("val_next_accuracy" in epoch and "val_perplexity" not in epoch,
                  "each epoch has the template's metric instead of the built-ins")
        accuracy = summary["best"]["test_next_accuracy"]
        check(0.1 < accuracy <= 1, f"the LSTM predicts a real share of the next words ({accuracy:.3f})")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])))
