#!/usr/bin/env python3
"""Values are compared, not their text (docs/ARCHITECTURE.md "Names are enums").

Scans the C++ sources (.cpp, .hpp) under the given directories for a compare
(== or !=) with a string literal on either side, comments and literals'
contents aside, and prints file:line for each. A compare is allowed only in a
file listed in PARSERS (a parser of outside text: its words are read there
and nowhere else), and there may be at most BUDGET in all. Exits 1 otherwise.

  check_string_compares.py ROOT DIR...             scan ROOT/DIR for each DIR
  check_string_compares.py --expect F:L,... ROOT DIR...
                                                   succeed only if the findings are
                                                   exactly those (the check's own test)
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_core_never_throws import code_only  # noqa: E402  (the same comment and literal rules)

BUDGET = 15

# The files that parse outside text, and what each reads.
PARSERS = {
    "datasets/images.cpp": "an image data path: a CSV manifest or a folder",
    "datasets/manifest.cpp": "a manifest's shard file names",
    "models/registry.cpp": "a TorchScript graph's method calls",
    "runtime/api/api_request.cpp": "a JSON request body's keys",
    "runtime/api/api_route.cpp": "the route patterns' placeholders",
    "runtime/base/fault_injection.cpp": "the fault-injection switch in the environment",
    "runtime/spec/spec.cpp": "a spec file's name",
    "runtime/spec/spec_data.cpp": "the [data] keys",
    "runtime/spec/spec_experiment.cpp": "the [experiment] keys",
    "tools/commands/simulate.cpp": "the simulate command's words (all, compare)",
}

OPERATOR = re.compile(r"==|!=")


def literal_compares(text):
    """Line numbers of the compares with a string literal as an operand."""
    code = code_only(text)
    lines = []
    for match in OPERATOR.finditer(code):
        after = text[match.end():].lstrip()
        before = text[:match.start()].rstrip()
        if after.startswith('"') or after.startswith('R"') or before.endswith('"'):
            lines.append(text.count("\n", 0, match.start()) + 1)
    return lines


def scan(root, dirs):
    findings = []
    for d in dirs:
        for base, _, files in os.walk(os.path.join(root, d)):
            for name in sorted(files):
                if not name.endswith((".cpp", ".hpp")):
                    continue
                path = os.path.join(base, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                findings += [(rel, line) for line in literal_compares(text)]
    return sorted(findings)


def main(argv):
    expect = None
    if len(argv) > 1 and argv[1] == "--expect":
        expect = sorted((f, int(l)) for f, l in (item.rsplit(":", 1) for item in argv[2].split(",")))
        argv = [argv[0]] + argv[3:]
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    findings = scan(argv[1], argv[2:])
    if expect is not None:
        if findings == expect:
            print(f"found exactly the {len(findings)} expected compares")
            return 0
        print("expected", expect, "found", findings, file=sys.stderr)
        return 1
    outside = [(f, l) for f, l in findings if f not in PARSERS]
    for f, l in outside:
        print(f"{f}:{l}: a compare with a string literal outside a parser: compare an enum's values "
              f"(runtime/base/enum_names.hpp)")
    if len(findings) > BUDGET:
        print(f"{len(findings)} string-literal compares, more than the {BUDGET} the parsers may hold:")
        for f, l in findings:
            print(f"  {f}:{l}")
    if outside or len(findings) > BUDGET:
        return 1
    print(f"{len(findings)} string-literal compares, all in parsers (at most {BUDGET})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
