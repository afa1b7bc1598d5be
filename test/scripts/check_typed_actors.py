#!/usr/bin/env python3
"""Every actor is typed (docs/ARCHITECTURE.md "Actors have typed interfaces").

Scans the C++ sources (.cpp, .hpp) under the given directories, comments and
literals aside, for what would let a message past the compiler's check:

  - an untyped actor: a `caf::behavior` or a `caf::event_based_actor`;
  - an untyped handle: `caf::actor` (a handle any message may be sent to),
    including as the target of actor_cast;

and prints file:line for each. Exits 1 when it finds one. A blocking caller
(a scoped or blocking actor that requests and waits) is allowed: the peers
that answer it hold a typed handle to it (client_actor, experiment_listener_actor).

  check_typed_actors.py ROOT DIR...                 scan ROOT/DIR for each DIR
  check_typed_actors.py --expect F:L,... ROOT DIR...
                                                    succeed only if the findings are
                                                    exactly those (the check's own test)
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_core_never_throws import code_only  # noqa: E402

RULES = [
    (re.compile(r"\bcaf\s*::\s*behavior\b"), "an untyped behavior"),
    (re.compile(r"\bcaf\s*::\s*event_based_actor\b"), "an untyped event-based actor"),
    (re.compile(r"\bcaf\s*::\s*actor\b(?!_)"), "an untyped handle (caf::actor)"),
]


def findings(root, dirs):
    found = []
    for d in dirs:
        for base, subdirs, files in os.walk(os.path.join(root, d)):
            subdirs.sort()
            for name in sorted(files):
                if not name.endswith((".cpp", ".hpp")):
                    continue
                rel = os.path.normpath(os.path.relpath(os.path.join(base, name), root))
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                    source = f.read()
                shown = source.split("\n")
                for number, line in enumerate(code_only(source).split("\n"), 1):
                    for pattern, what in RULES:
                        if pattern.search(line):
                            found.append((rel, number, what, shown[number - 1].strip()))
                            break
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
        print(f"{rel}:{number}: {what}: {line}")
    if expect is not None:
        got = {f"{rel}:{number}" for rel, number, _, _ in found}
        if got != expect:
            print(f"expected findings {sorted(expect)}, got {sorted(got)}", file=sys.stderr)
            return 1
        print(f"found exactly the {len(expect)} expected")
        return 0
    if found:
        print(f"{len(found)} untyped actor(s) or handle(s): give the actor a caf::typed_actor interface "
              "(runtime/net/interfaces.hpp) and hold it by that type", file=sys.stderr)
        return 1
    print("every actor and every handle is typed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
