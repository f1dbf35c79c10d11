#!/usr/bin/python3
"""Shardy's own FileCheck tests, run with LLVM's FileCheck on `shardcheck propagate` output.

Every file of ../shared/corpus/shardy/propagation (or the files given) is run the way its RUN line
runs sdy_opt: the RUN line's passes become `shardcheck propagate` flags (PASSES below); with
-split-input-file each `// -----` chunk is its own input; every CHECK-LABEL block is one case:
FileCheck gets that block's CHECK lines alone and the chunk's whole output (stderr first when the RUN
line has 2>&1). A chunk with expected-error/-warning lines (-verify-diagnostics) is one case instead:
each expected diagnostic must be reported on its line with its text.

Prints `FILE: N/M blocks` per file and `shardy-filecheck: N/M blocks` in all. Exits 1 when a block
fails that EXPECTED_FAILURES does not list (with why), or when a listed block passes (the list must
stay true), or when a tool is missing.

usage: shardy_filecheck.py [--verbose] [--build DIR] [FILE...]
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "..", "shared", "corpus", "shardy", "propagation")
FILECHECK = "FileCheck-22"

# sdy_opt pass (with its options) -> shardcheck propagate flags. Passes that only add or remove
# bookkeeping ops around another pass (data-flow edges) need no flag: propagate handles edges itself.
PASSES = [
    (r"-sdy-populate-op-sharding-rules=['\"]?conservative-propagation=true['\"]?", ["--annotate-rules", "--conservative"]),
    (r"-sdy-populate-op-sharding-rules", ["--annotate-rules"]),
    (r"-sdy-basic-propagate=['\"]?keep-sharding-rules=true['\"]?", ["--strategy", "basic", "--keep-sharding-rules"]),
    (r"-sdy-basic-propagate=['\"]?conservative-propagation=true['\"]?", ["--strategy", "basic", "--conservative"]),
    (r"-sdy-basic-propagate", ["--strategy", "basic"]),
    (r"-sdy-aggressive-propagate=['\"]?propagation-strategy=aggressive['\"]?", ["--strategy", "aggressive"]),
    (r"-sdy-aggressive-propagate=['\"]?propagation-strategy=basic['\"]?", ["--strategy", "basic"]),
    (r"-sdy-aggressive-propagate", ["--strategy", "aggressive"]),
    (r"-sdy-op-priority-propagate", ["--strategy", "op-priority"]),
    (r"-sdy-user-priority-propagate", ["--strategy", "user-priority"]),
    (r"-sdy-propagation-pipeline=['\"]?dedup-functions-fully=true['\"]?", ["--strategy", "pipeline", "--dedup-functions-fully"]),
    (r"-sdy-propagation-pipeline", ["--strategy", "pipeline"]),
    (r"-sdy-insert-explicit-reshards=['\"]?enable-full-version=true['\"]?", ["--strategy", "none", "--insert-reshards"]),
    (r"-sdy-insert-explicit-reshards=['\"]?enable-full-version=false['\"]?",
     ["--strategy", "none", "--insert-reshards=partial"]),
    (r"-sdy-propagate-to-func-results", ["--strategy", "none", "--propagate-to-func-results"]),
    (r"-sdy-reshard-to-collectives=['\"]?keep-redundant-reshards=true['\"]?",
     ["--strategy", "none", "--reshards-to-collectives", "--keep-redundant-reshards"]),
    (r"-sdy-reshard-to-collectives", ["--strategy", "none", "--reshards-to-collectives"]),
    (r"-sdy-add-data-flow-edges", []),
    (r"-sdy-sink-data-flow-edges", []),
]

# Blocks known to fail, each with why: (file, label or "*") -> reason. A block listed here that passes
# fails the run, so the list shrinks as propagate grows.
EXPECTED_FAILURES = {}

CHECK_RE = re.compile(r"//\s*(CHECK(?:-[A-Z]+)?):")
EXPECT_RE = re.compile(r"//\s*expected-(error|warning|remark|note)\s*(@[^\s{]*)?\s*\{\{(.*)\}\}")


def run_flags(run_line):
    """The propagate flags for a RUN line, whether stderr goes to FileCheck, and -verify-diagnostics."""
    flags, rest = [], run_line
    for pattern, mapped in PASSES:
        m = re.search(pattern + r"(?=\s|$)", rest)
        if m:
            flags += mapped
            rest = rest[: m.start()] + rest[m.end():]
    unmapped = re.findall(r"-sdy-[^\s]+", rest)
    return flags, "2>&1" in run_line, "-verify-diagnostics" in run_line, unmapped


def chunks_of(text, split):
    """[(first line number, chunk text)]; line numbers are 1-based in the file."""
    if not split:
        return [(1, text)]
    out, start, lines = [], 0, text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("// -----"):
            out.append((start + 1, "\n".join(lines[start:i]) + "\n"))
            start = i + 1
    out.append((start + 1, "\n".join(lines[start:]) + "\n"))
    return out


def blocks_of(chunk):
    """[(label, [check lines])]: lines before the first CHECK-LABEL form a block of their own."""
    blocks, current = [], None
    for line in chunk.split("\n"):
        m = CHECK_RE.search(line)
        if not m:
            continue
        check = line[m.start():].strip()
        if m.group(1) == "CHECK-LABEL":
            current = (check.split(":", 1)[1].strip(), [check])
            blocks.append(current)
        else:
            if current is None:
                current = ("(before the first label)", [])
                blocks.append(current)
            current[1].append(check)
    return [b for b in blocks if b[1]]


def label_starts(blocks, stream):
    """Where each block's input begins: FileCheck finds the labels in order, each after the previous
    one, so a label that is a prefix of an earlier function's name (`@f` before `@f_2`... after it)
    finds its own function. Blocks without a plain label start at 0."""
    starts, at = [], 0
    for _, checks in blocks:
        pattern = checks[0].split("CHECK-LABEL:", 1)[1].strip() if checks and "CHECK-LABEL:" in checks[0] else None
        found = stream.find(pattern, at) if pattern and "{{" not in pattern and "[[" not in pattern else -1
        if found < 0:
            starts.append(0)
            continue
        starts.append(stream.rfind("\n", 0, found) + 1)
        at = found + len(pattern)
    return starts


def expectations(chunk):
    """[(line in chunk, severity, text)] from expected-* comments."""
    out, lines = [], chunk.split("\n")
    for i, line in enumerate(lines):
        m = EXPECT_RE.search(line)
        if not m:
            continue
        at, target = m.group(2), i + 1
        if at in ("@above",):
            target = i
        elif at in ("@below",):
            target = i + 2
        elif at and re.match(r"@[+-]\d+$", at):
            target = i + 1 + int(at[1:])
        out.append((target, m.group(1), m.group(3)))
    return out


def propagate(cli, flags, chunk, tmp):
    path = os.path.join(tmp, "input.mlir")
    with open(path, "w") as f:
        f.write(chunk)
    p = subprocess.run([cli, "propagate"] + flags + [path], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def filecheck(checks, output, tmp):
    path = os.path.join(tmp, "checks.mlir")
    with open(path, "w") as f:
        f.write("\n".join("// " + c for c in checks) + "\n")
    p = subprocess.run([FILECHECK, path, "--dump-input=never"], input=output, capture_output=True, text=True, timeout=60)
    return p.returncode == 0, p.stderr


def diagnostics_match(stderr, expected):
    found = []
    for line, severity, text in expected:
        pat = re.compile(r":%d:\d+: %s: .*%s" % (line, severity, re.escape(text)))
        found.append(bool(pat.search(stderr)))
    return all(found)


def run_file(cli, path, tmp, verbose):
    name = os.path.basename(path)
    text = open(path).read()
    run_lines = [l.split("RUN:", 1)[1].strip() for l in text.split("\n") if "RUN:" in l and l.lstrip().startswith("//")]
    flags, with_stderr, verify, unmapped = run_flags(" ".join(run_lines))
    split = "-split-input-file" in " ".join(run_lines)
    results = []  # (label, passed, detail)
    if unmapped:  # a pass propagate has no flag for: every block fails, saying which
        why = "RUN line has passes this harness does not map: " + " ".join(unmapped)
        return name, [(label, False, why) for _, chunk in chunks_of(text, split) for label, _ in blocks_of(chunk)]
    for _, chunk in chunks_of(text, split):
        rc, out, err = propagate(cli, flags, chunk, tmp)
        expected = expectations(chunk) if verify else []
        if expected:
            ok = diagnostics_match(err, expected)
            results.append(("(expected diagnostics)", ok, err))
            continue
        stream = (err + out) if with_stderr and not verify else out
        blocks = blocks_of(chunk)
        starts = label_starts(blocks, stream)
        for k, (label, checks) in enumerate(blocks):
            # FileCheck first splits the input at the CHECK-LABEL matches, so a block's CHECK-NOT only
            # looks up to the next label: the next block's label line bounds this block the same way.
            bound = [blocks[k + 1][1][0]] if k + 1 < len(blocks) and "CHECK-LABEL:" in blocks[k + 1][1][0] else []
            ok, detail = filecheck(checks + bound, stream[starts[k]:], tmp) if rc == 0 else (False, err)
            results.append((label, ok, detail))
    return name, results


def main(argv):
    verbose = "--verbose" in argv
    build = os.environ.get("SC_BUILD", "build")
    if "--build" in argv:
        build = argv[argv.index("--build") + 1]
    files = [a for a in argv if a.endswith(".mlir")] or sorted(glob.glob(os.path.join(CORPUS, "*.mlir")))
    cli = os.path.join(ROOT, build, "bin", "shardcheck")
    for tool in (cli, FILECHECK):
        if not (os.path.exists(tool) or shutil.which(tool)):
            print("shardy-filecheck: %s is missing" % tool)
            return 1
    if not files:
        print("shardy-filecheck: no test files under " + CORPUS)
        return 1
    total = passed = 0
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            name, results = run_file(cli, path, tmp, verbose)
            n_ok = sum(1 for r in results if r[1])
            print("%s: %d/%d blocks" % (name, n_ok, len(results)))
            total += len(results)
            passed += n_ok
            for label, ok, detail in results:
                reason = EXPECTED_FAILURES.get((name, label)) or EXPECTED_FAILURES.get((name, "*"))
                if not ok and verbose and reason:
                    print("expected failure %s %s\n%s" % (name, label, detail))
                if not ok and not reason:
                    problems.append("FAIL %s %s" % (name, label) + ("\n" + detail if verbose else ""))
                elif ok and reason and (name, label) in EXPECTED_FAILURES:
                    problems.append("PASSES but listed as failing: %s %s" % (name, label))
            listed_whole = (name, "*") in EXPECTED_FAILURES
            if listed_whole and results and all(r[1] for r in results):
                problems.append("PASSES but listed as failing: %s (whole file)" % name)
    print("shardy-filecheck: %d/%d blocks" % (passed, total))
    for (name, label), why in sorted(EXPECTED_FAILURES.items()):
        if label != "*":
            print("  expected failure: %s %s: %s" % (name, label, why))
    whole = sorted(n for (n, l) in EXPECTED_FAILURES if l == "*")
    if whole:
        print("  expected failures, whole files: %s" % ", ".join(whole))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
