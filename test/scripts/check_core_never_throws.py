#!/usr/bin/env python3
"""The core never throws (docs/ARCHITECTURE.md "Errors are values with a code").

Scans the C++ sources (.cpp, .hpp) under the given directories for a `throw`
and for a catch of cerebro::Error, ignoring comments, string literals and
character literals, and prints file:line for each. Exits 1 when it finds one.

  check_core_never_throws.py ROOT DIR...           scan ROOT/DIR for each DIR
  check_core_never_throws.py --expect F:L,... ROOT DIR...
                                                   succeed only if the findings are
                                                   exactly those (the check's own test)

A directory ending in "!" is left out with everything under it (runtime/net!).
"""

import os
import re
import sys

THROW = re.compile(r"\bthrow\b")
CATCH_ERROR = re.compile(r"\bcatch\s*\(\s*(?:const\s+)?(?:::)?(?:cerebro\s*::\s*)?Error\b")


def code_only(text):
    """The text with comments and string and character literals blanked out
    (newlines kept, so line numbers stay)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"' or (c == "R" and text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum())):
            if c == "R":  # a raw string: R"delim( ... )delim"
                open_paren = text.find("(", i + 2)
                delimiter = text[i + 2:open_paren]
                end = text.find(")" + delimiter + '"', open_paren)
                j = n if end < 0 else end + len(delimiter) + 2
            else:
                j = i + 1
                while j < n and text[j] != '"':
                    j += 2 if text[j] == "\\" else 1
                j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'" and (i == 0 or not text[i - 1].isalnum()):  # not a digit separator (1'000)
            j = i + 1
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def findings(root, dirs):
    found = []
    skipped = [d[:-1].rstrip("/") for d in dirs if d.endswith("!")]
    for d in dirs:
        if d.endswith("!"):
            continue
        for base, subdirs, files in os.walk(os.path.join(root, d)):
            rel_base = os.path.relpath(base, root)
            subdirs[:] = sorted(s for s in subdirs if os.path.join(rel_base, s) not in skipped)
            for name in sorted(files):
                if not name.endswith((".cpp", ".hpp")):
                    continue
                rel = os.path.normpath(os.path.join(rel_base, name))
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                    source = f.read()
                lines, shown = code_only(source).split("\n"), source.split("\n")
                for number, line in enumerate(lines, 1):
                    what = "throw" if THROW.search(line) else "catch of cerebro::Error" if CATCH_ERROR.search(line) else None
                    if not what:
                        continue
                    found.append((rel, number, what, shown[number - 1].strip()))
    return found


def main(argv):
    expect = None
    if len(argv) > 1 and argv[1] == "--expect":
        expect = set(argv[2].split(","))
        argv = argv[:1] + argv[3:]
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    found = findings(argv[1], argv[2:])
    for rel, number, what, line in found:
        print(f"{rel}:{number}: {what} in the core: {line}")
    if expect is not None:
        got = {f"{rel}:{number}" for rel, number, _, _ in found}
        if got != expect:
            print(f"expected findings {sorted(expect)}, got {sorted(got)}", file=sys.stderr)
            return 1
        print(f"found exactly the {len(expect)} expected")
        return 0
    if found:
        print(f"{len(found)} throw(s) or catch(es) of cerebro::Error in the core: return a Status or Result "
              "(runtime/base/status.hpp), or call contract_violation() for a broken invariant "
              "(runtime/base/contract.hpp)", file=sys.stderr)
        return 1
    print("the core has no throw and no catch of cerebro::Error")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
