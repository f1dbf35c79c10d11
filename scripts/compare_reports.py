#!/usr/bin/python3
"""Proves two shardcheck CLIs give byte-identical JSON reports on every module we have.

usage: compare_reports.py BASE_CLI NEW_CLI [-j N] [--ignore KEY]...

Runs `check --format json` over ../shared/corpus (*.mlir, *.hlo), tests/modules and examples/, each
with no mesh, `--mesh data=4` and `--mesh data=2,model=4`; files with `// -----` separators also get
`--split-input-file` (how the Shardy verifier tests are written). Only `tool.rules_version` is
masked: it is a hash of lib/ and changes with every edit. `--ignore KEY` also drops a per-module report
key on both sides (a key a change adds, e.g. `--ignore cost`, so that everything else is still proved
identical). Exit status 1 and a unified diff of the first differences when any report (or exit code)
differs."""
import concurrent.futures
import difflib
import glob
import json
import os
import re
import subprocess
import sys

BATCH = 25
MESHES = [[], ["--mesh", "data=4"], ["--mesh", "data=2,model=4"]]
RULES_VERSION = re.compile(rb'"rules_version": "[^"]*"')


def inputs():
    files = []
    for pattern in ("../shared/corpus/**/*.mlir", "../shared/corpus/**/*.hlo", "tests/modules/**/*.mlir",
                    "tests/modules/**/*.hlo", "examples/**/*.mlir", "examples/**/*.hlo"):
        files += glob.glob(pattern, recursive=True)
    return sorted(set(files))


IGNORED = []


def without_ignored(out):
    """The results JSON with the ignored keys dropped from every report, dumped as the CLI indents it."""
    try:
        data = json.loads(out)
    except ValueError:
        return out
    for report in data.get("reports", []):
        for key in IGNORED:
            report.pop(key, None)
    return json.dumps(data, indent=2).encode()


def run(cli, paths, args):
    p = subprocess.run([cli, "check", "--format", "json", *args, *paths], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300)
    out = RULES_VERSION.sub(b'"rules_version": "*"', p.stdout)
    return p.returncode, without_ignored(out) if IGNORED else out, p.stderr


def compare(base, new, paths, args):
    """Checks a batch in one run of each CLI (a JSON array); a batch that differs is re-run file by
    file to name the files."""
    b, n = run(base, paths, args), run(new, paths, args)
    if b == n:
        return []
    if len(paths) > 1:
        return [d for p in paths for d in compare(base, new, [p], args)]
    head = "%s %s: exit %d -> %d" % (paths[0], " ".join(args), b[0], n[0])
    diff = difflib.unified_diff(b[1].decode(errors="replace").splitlines(), n[1].decode(errors="replace").splitlines(),
                                "base", "new", lineterm="", n=2)
    lines = list(diff)[:40]
    if b[2] != n[2]:
        lines.append("stderr: %r -> %r" % (b[2][:200], n[2][:200]))
    return [head + "\n" + "\n".join(lines)]


def main():
    argv = sys.argv[1:]
    jobs = 2
    if "-j" in argv:
        i = argv.index("-j")
        jobs = int(argv[i + 1])
        del argv[i:i + 2]
    while "--ignore" in argv:
        i = argv.index("--ignore")
        IGNORED.append(argv[i + 1])
        del argv[i:i + 2]
    if len(argv) != 2:
        sys.exit(__doc__)
    base, new = (os.path.abspath(a) for a in argv)
    groups = {False: [], True: []}
    for path in inputs():
        with open(path, "rb") as fh:
            groups[b"\n// -----" in fh.read()].append(path)
    ncases = 3 * sum(len(g) for g in groups.values())
    if ncases < 300:
        sys.exit("only %d cases: is ../shared/corpus beside the checkout?" % ncases)
    batches = []
    for split, paths in groups.items():
        for i in range(0, len(paths), BATCH):
            for mesh in MESHES:
                batches.append((paths[i:i + BATCH], mesh + (["--split-input-file"] if split else [])))
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        diffs = [d for ds in pool.map(lambda c: compare(base, new, *c), batches) for d in ds]
    for d in diffs[:10]:
        print(d)
    for d in diffs[10:]:  # the rest by name only
        print(d.split("\n", 1)[0])
    print("compare-reports: %d cases, %d differ" % (ncases, len(diffs)))
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
