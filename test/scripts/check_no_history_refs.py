#!/usr/bin/env python3
"""The project speaks for itself (docs/ARCHITECTURE.md "Tests"): no source,
doc, example or file name cites a tracker entry or a working session by
number; a comment says why in its own words and names a doc section.

  check_no_history_refs.py ROOT      scan every file under ROOT (but build
                                     directories and .git) and print each
                                     citation as path:line; exit 1 if any
  check_no_history_refs.py --self-test
                                     prove the scan finds a citation in a
                                     file's text and in a file's name
"""

import os
import re
import sys
import tempfile

# The words are split so that this file is no citation itself.
WORDS = "|".join(["iss" + "ue", "sess" + "ion"])
CITATION = re.compile(r"(?:" + WORDS + r")[ _#-]*[0-9]+", re.IGNORECASE)
SKIPPED_DIRS = {".git", "node_modules", "__pycache__"}


def skipped(dirname):
    return dirname in SKIPPED_DIRS or dirname.startswith("build")


def findings(root):
    found = []
    for base, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not skipped(d))
        for name in sorted(files):
            path = os.path.join(base, name)
            rel = os.path.relpath(path, root)
            if CITATION.search(rel):
                found.append(f"{rel}: its name cites a number")
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except (UnicodeDecodeError, OSError):
                continue  # binary files (images, datasets) hold no prose
            for number, line in enumerate(text.split("\n"), 1):
                match = CITATION.search(line)
                if match:
                    found.append(f"{rel}:{number}: cites '{match.group(0)}'")
    return found


def self_test():
    with tempfile.TemporaryDirectory() as root:
        with open(os.path.join(root, "clean.md"), "w") as f:
            f.write("The scheduler keeps sessions of 3 kinds; an issuer signs 2 tokens.\n")
        with open(os.path.join(root, "notes.cpp"), "w") as f:
            f.write("int x;\n// fixed in " + "iss" + "ue 14\n")
        os.mkdir(os.path.join(root, "examples"))
        with open(os.path.join(root, "examples", "sess" + "ion_12.toml"), "w") as f:
            f.write("name = 'x'\n")
        found = findings(root)
    expected = ["examples/" + "sess" + "ion_12.toml: its name cites a number",
                "notes.cpp:2: cites '" + "iss" + "ue 14'"]
    if sorted(found) != sorted(expected):
        print("self-test failed: found", found, "expected", expected)
        return 1
    print("the scan finds a citation in a file's text and in its name, and nothing in look-alikes")
    return 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    found = findings(argv[1])
    for line in found:
        print(line)
    if found:
        return 1
    print("nothing cites a tracker entry or a session by number")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
