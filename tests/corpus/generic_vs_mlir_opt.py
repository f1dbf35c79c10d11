#!/usr/bin/python3
"""Structure parity with MLIR itself: for generated generic-form modules, the ops shardcheck finds
(name, nesting depth, operand/result/region counts, in order) must equal what Debian's mlir-opt
(--test-print-nesting) sees. Fails loudly on any difference."""
import glob
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.path.join(ROOT, os.environ.get("SC_BUILD", "build"), "bin/shardcheck")
MLIR_OPT = next((p for p in ["/usr/lib/llvm-22/bin/mlir-opt", "/usr/bin/mlir-opt-22"] if os.path.exists(p)), None)
COUNT = 8

VISIT = re.compile(r"^( *)visiting op: '([^']+)' with (\d+) operands and (\d+) results")
REGIONS = re.compile(r"^ *(\d+) nested regions:")
DUMP = re.compile(r"^\d+:\d+ depth=(\d+) op=(\S+) .*results=(\d+) operands=(\d+) regions=(\d+)")


def mlir_opt_ops(path):
    out = subprocess.run([MLIR_OPT, "--allow-unregistered-dialect", "--test-print-nesting", path, "-o", "/dev/null"],
                         capture_output=True, text=True, check=True)
    ops = []
    for line in (out.stdout + out.stderr).splitlines():
        m = VISIT.match(line)
        if m:
            ops.append([len(m.group(1)) // 6, m.group(2), int(m.group(3)), int(m.group(4)), None])
            continue
        m = REGIONS.match(line)
        if m and ops and ops[-1][4] is None:
            ops[-1][4] = int(m.group(1))
    return [tuple(o) for o in ops]


def shardcheck_ops(path):
    out = subprocess.run([CLI, "check", "--debug-dump-ops", path], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("shardcheck failed on %s:\n%s%s" % (path, out.stdout, out.stderr))
    ops = []
    for line in out.stdout.splitlines():
        m = DUMP.match(line)
        if m:
            ops.append((int(m.group(1)), m.group(2), int(m.group(4)), int(m.group(3)), int(m.group(5))))
    return ops


def main():
    if not MLIR_OPT:
        raise SystemExit("mlir-opt not found (Debian package mlir-22-tools)")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tests/corpus/gen_generic.py"), tmp, str(COUNT)], check=True)
        files = sorted(glob.glob(os.path.join(tmp, "*.mlir")))
        assert len(files) == COUNT, files
        failures = 0
        total = 0
        for f in files:
            want, got = mlir_opt_ops(f), shardcheck_ops(f)
            total += len(want)
            if want != got:
                failures += 1
                print("MISMATCH %s: mlir-opt %d ops, shardcheck %d ops" % (os.path.basename(f), len(want), len(got)))
                for i, (w, g) in enumerate(zip(want, got)):
                    if w != g:
                        print("  first difference at op %d: mlir-opt %s, shardcheck %s" % (i, w, g))
                        break
        print("generic-form parity: %d modules, %d ops, %d mismatches" % (len(files), total, failures))
        print("%d passed, %d failed" % (len(files) - failures, failures))
        sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
