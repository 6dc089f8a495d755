#!/usr/bin/env python3
"""make_mutant.py SPEC SOLUTION OUT: writes a variant of an exercise's reference solution.

A spec is an idea written as edits of the solution, so that the variant stays the solution but
for that one idea: a wrong one (tests/lessons/mutants/<slug>/<name>.mutant, which must fail the
named check) or a correct alternative (tests/lessons/alternatives/<slug>/<name>.alternative,
which must pass every check; it has no "must fail" line):

    # the idea (the variant's first comment line)
    must fail: <the test case that catches it>
    --- replace
    <lines of the solution, found exactly once>
    --- with
    <their replacement>
    (more replace/with pairs)

OUT is the solution from its #include of the contract on, with every edit applied. An edit whose
lines are not found exactly once is an error: the solution changed, and the spec must follow."""
import sys
from pathlib import Path


def parse(spec_text):
    lines = spec_text.splitlines(keepends=True)
    why = [l[2:].strip() for l in lines if l.startswith("# ")]
    edits, mode, old, new = [], None, [], []
    for line in lines:
        if line.rstrip("\n") == "--- replace":
            if mode == "with":
                edits.append(("".join(old), "".join(new)))
            mode, old, new = "replace", [], []
        elif line.rstrip("\n") == "--- with":
            mode = "with"
        elif mode == "replace":
            old.append(line)
        elif mode == "with":
            new.append(line)
    if mode == "with":
        edits.append(("".join(old), "".join(new)))
    return " ".join(why), edits


def main():
    spec, solution, out = (Path(a) for a in sys.argv[1:4])
    why, edits = parse(spec.read_text())
    text = solution.read_text()
    start = text.find('#include "')
    if start < 0:
        sys.exit(f"{solution}: no #include of the exercise's contract to start from")
    body = text[start:]
    if not edits:
        sys.exit(f"{spec}: no '--- replace' / '--- with' edit")
    for old, new in edits:
        count = body.count(old)
        if count != 1:
            sys.exit(f"{spec}: the lines to replace occur {count} times in {solution.name}, want once:\n{old}")
        body = body.replace(old, new)
    result = f"// Generated from {spec.name} (edits of {solution.name}): {why}\n{body}"
    if not out.exists() or out.read_text() != result:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        tmp.write_text(result)
        tmp.replace(out)


main()
