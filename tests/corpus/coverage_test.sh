#!/bin/sh
# docs/coverage.md lists every row of the two error catalogs (../shared/reference/jax-errors.md
# rows 1..N, spmd-errors.md rows S*, P*, Y*, J*), and every code it names is a rule of `shardcheck rules`.
set -u
/usr/bin/python3 - "$@" <<'PY'
import re, subprocess, sys
sec = open("docs/coverage.md").read()
assert sec.startswith("# Coverage of the error catalogs"), "docs/coverage.md is not the coverage page"
listed = {m.group(1): m.group(2) for m in re.finditer(r"^\| ([0-9]+|[SPYJ][0-9]+) \|[^|]*\| (.*) \|$", sec, re.M)}
jax = open("../shared/reference/jax-errors.md").read()
want = [m.group(1) for m in re.finditer(r"^\| ([0-9]+) \| ", jax, re.M)]
spmd = open("../shared/reference/spmd-errors.md").read()
want += [m.group(1) for m in re.finditer(r"^\| ([SPYJ][0-9]+) \|", spmd, re.M)]
codes = set(l.split()[0] for l in subprocess.run(["build/bin/shardcheck", "rules"], capture_output=True, text=True).stdout.splitlines())
bad = 0
for row in want:
    if row not in listed:
        print("coverage: catalog row %s is not in the docs/coverage.md table" % row); bad += 1
        continue
    for c in re.findall(r"SC[0-9]{4}", listed[row]):
        if c not in codes:
            print("coverage: row %s names %s, which is not a rule" % (row, c)); bad += 1
    if not re.search(r"SC[0-9]{4}|not detectable|not reported|nothing to report", listed[row]):
        print("coverage: row %s gives neither a code nor a reason" % row); bad += 1
assert len(want) >= 136, "only %d catalog rows found in ../shared/reference" % len(want)
print("coverage: %d catalog rows, %d problems" % (len(want), bad))
sys.exit(1 if bad else 0)
PY
