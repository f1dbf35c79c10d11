#!/usr/bin/python3
"""`make bench`: shardcheck against a peer (mlir-opt-22) on the same generic-form module, and alone on
the pretty form, the HLO form and the real-world dumps. Prints one table; writes build/bench/results.json.

usage: run_bench.py BUILD_DIR [--runs N] [--sizes 1,10,100] [--instructions] [--base OLD_BUILD_DIR]

  BUILD_DIR/bin/shardcheck and BUILD_DIR/bench/bench must exist; inputs are generated into
  BUILD_DIR/bench by tests/bench/gen_module.py (kept between runs).
  Timings: the two programs run ALTERNATELY, N runs each, medians of wall-clock; peak RSS from the
  child's rusage (os.wait4). --instructions: callgrind instruction counts of both on a 4 MB generic
  module instead (`make bench-instructions`). --base: an older build (e.g. a worktree of the last
  release, `make bench BASE=DIR`) whose bench/bench runs alternately with ours on the real-world dumps,
  so "N x faster than before" comes from one invocation. Ends with the goals, met or not."""
import glob
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MLIR_OPT = "mlir-opt-22"


def generate(build, form, mb):
    path = os.path.join(build, "bench", "module_%gmb.%s" % (mb, {"hlo": "hlo"}.get(form, form + ".mlir")))
    gen = os.path.join(HERE, "gen_module.py")
    if not os.path.exists(path) or os.path.getmtime(path) < os.path.getmtime(gen):
        subprocess.run(["/usr/bin/python3", gen, form, str(mb), path + ".tmp"], check=True)
        os.replace(path + ".tmp", path)
    return path


def run_once(argv):
    """Wall-clock seconds and peak RSS bytes of one run of argv (output discarded)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read()
    proc.stderr.close()
    if proc.returncode not in (0, 1):  # shardcheck exits 1 when it finds errors
        sys.exit("%s failed (%d): %s" % (" ".join(argv), proc.returncode, err.decode(errors="replace")[:500]))
    return wall, usage.ru_maxrss * 1024


def measure(programs, runs):
    """programs: name -> argv. Alternates them `runs` times; returns name -> (median s, max RSS)."""
    times = {k: [] for k in programs}
    rss = {k: 0 for k in programs}
    for _ in range(runs):
        for name, argv in programs.items():
            wall, peak = run_once(argv)
            times[name].append(wall)
            rss[name] = max(rss[name], peak)
    return {k: (statistics.median(times[k]), rss[k]) for k in programs}


def shardcheck_argv(build, path):
    return [os.path.join(build, "bin", "shardcheck"), "check", "--format", "json", path]


def ensure_mlir_opt():
    if shutil.which(MLIR_OPT):
        return True
    deps = os.path.join(HERE, "..", "..", "scripts", "deps.sh")
    subprocess.run(["sh", deps, "--test"], check=False)
    return shutil.which(MLIR_OPT) is not None


def callgrind_instructions(argv):
    """Total instructions of argv under callgrind, and those spent inside SHA256_Update."""
    out = os.path.join("/tmp", "sc-bench-%d.callgrind" % os.getpid())
    p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, *argv],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    m = re.search(rb"Collected : (\d+)", p.stderr)
    if not m:
        sys.exit("callgrind failed: %s" % p.stderr.decode(errors="replace")[-500:])
    sha = 0
    a = subprocess.run(["callgrind_annotate", "--inclusive=yes", out], stdout=subprocess.PIPE, text=True,
                       stderr=subprocess.DEVNULL, check=False)
    for line in a.stdout.splitlines():
        if re.search(r"\bSHA256_Update \[", line):
            sha = max(sha, int(line.split()[0].replace(",", "")))
    os.unlink(out)
    return int(m.group(1)), sha


def instructions(build):
    path = generate(build, "generic", 4)
    size = os.path.getsize(path)
    sc, sha = callgrind_instructions(shardcheck_argv(build, path))
    mo, _ = callgrind_instructions([MLIR_OPT, "--allow-unregistered-dialect", path, "-o", "/dev/null"])
    print("callgrind instructions, %s (%.1f MB generic form):" % (os.path.basename(path), size / 1e6))
    print("  shardcheck %14d  (%.1f per input byte)" % (sc, sc / size))
    print("    of which the input's SHA-256 %d (its own thread; valgrind hides SHA-NI, so OpenSSL runs its"
          " software path here)" % sha)
    print("  mlir-opt   %14d  (%.1f per input byte)" % (mo, mo / size))
    print("  mlir-opt / shardcheck: %.1fx (goal 20x); without the input hash: %.1fx" % (mo / sc, mo / max(sc - sha, 1)))
    return {"file": path, "bytes": size, "shardcheck": sc, "shardcheck_sha256": sha, "mlir_opt": mo,
            "ratio": mo / sc, "ratio_without_sha256": mo / max(sc - sha, 1)}


def real_world(build, base, runs):
    """In-process MB/s on the real dumps: ours and, with --base, the older build's, alternately."""
    real = sorted(glob.glob("../shared/corpus/xla/real_world/*.hlo"))
    jax = sorted(glob.glob("../shared/corpus/jax/jax_backcompat/*.mlir"), key=os.path.getsize, reverse=True)[:5]
    n = str(max(runs, 20))
    benches = {"sc": os.path.join(build, "bench", "bench")}
    if base:
        benches["base"] = os.path.join(base, "bench", "bench")
    rows = {}
    for path in real + jax:
        for who, exe in benches.items():
            p = subprocess.run([exe, "-n", n, path], stdout=subprocess.PIPE, check=True, text=True)
            name, size, ops, mbs, arena = p.stdout.strip().split("\t")
            row = rows.setdefault(name, {"file": name, "bytes": int(size), "ops": int(ops)})
            if who == "sc":
                row.update({"shardcheck_mb_s": float(mbs), "arena_per_input": float(arena)})
            else:
                row["base_mb_s"] = float(mbs)
    print("real-world dumps (in process, best of %s, check + JSON%s):" % (n, "; against --base" if base else ""))
    for row in rows.values():
        vs = "  %5.1fx the base" % (row["shardcheck_mb_s"] / row["base_mb_s"]) if "base_mb_s" in row else ""
        print("  %-56.56s %9d B %7d ops %8.1f MB/s  arena/in %5.2f%s" % (
            os.path.basename(row["file"]), row["bytes"], row["ops"], row["shardcheck_mb_s"], row["arena_per_input"], vs))
    return list(rows.values())


def goals(rows, real_rows):
    """The speed and memory goals against this run: printed, never asserted."""
    def line(what, value, goal, met):
        print("  %-52s %-24s %-8s %s" % (what, value, goal, "met" if met else "NOT met"))
    print("goals:")
    gen = [r for r in rows if r["form"] == "generic" and "ratio" in r]
    if gen:
        big = max(gen, key=lambda r: r["bytes"])
        line("%s: wall vs mlir-opt, propagating" % big["file"], "%.1fx" % big["ratio"], ">= 5x", big["ratio"] >= 5)
        rss = big["shardcheck_rss"] / big["bytes"]
        line("%s: peak RSS / input, propagating" % big["file"], "%.2f" % rss, "<= 3", rss <= 3)
        no_prop = big["mlir_opt_s"] / big["no_propagate_s"]
        line("%s: wall vs mlir-opt, --no-propagate" % big["file"], "%.1fx" % no_prop, ">= 20x", no_prop >= 20)
    pretty = [r for r in rows if r["form"] == "pretty"]
    if pretty:
        big = max(pretty, key=lambda r: r["bytes"])
        line("%s: all rules, JSON out" % big["file"], "%.0f MB/s" % big["shardcheck_mb_s"], ">= 600",
             big["shardcheck_mb_s"] >= 600)
    for form in ("generic", "pretty", "hlo"):
        fr = [r for r in rows if r["form"] == form]
        if not fr:
            continue
        big = max(fr, key=lambda r: r["bytes"])
        rss = big["no_propagate_rss"] / big["bytes"]
        line("%s: peak RSS / input, --no-propagate" % big["file"], "%.2f" % rss, "<= 1.5", rss <= 1.5)
        if len(fr) > 1:
            costs = [r["shardcheck_ms_per_mb"] for r in fr]
            spread = max(costs) / min(costs) - 1
            line("%s: ms per MB, highest over lowest size" % form, "+%.0f%%" % (spread * 100), "<= 30%",
                 spread <= 0.30)
    based = [r for r in real_rows if "base_mb_s" in r]
    if based:
        worst = min(based, key=lambda r: r["shardcheck_mb_s"] / r["base_mb_s"])
        ratio = worst["shardcheck_mb_s"] / worst["base_mb_s"]
        line("real-world dumps: least speed-up over --base", "%.1fx (%s)" % (ratio, os.path.basename(worst["file"])[:12]),
             ">= 5x", ratio >= 5)


def machine():
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%s, %d cores, %s %s" % (cpu, os.cpu_count() or 0, platform.system(), platform.release())


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    build = args[0]
    runs = int(args[args.index("--runs") + 1]) if "--runs" in args else 5
    sizes = [float(s) for s in args[args.index("--sizes") + 1].split(",")] if "--sizes" in args else [1, 10, 100]
    os.makedirs(os.path.join(build, "bench"), exist_ok=True)
    results_path = os.path.join(build, "bench", "results.json")
    results = {}
    if os.path.exists(results_path):
        with open(results_path) as fh:
            results = json.load(fh)
    results["machine"] = machine()
    if "--instructions" in args:
        if not ensure_mlir_opt():
            sys.exit("bench: %s is not installed and could not be installed" % MLIR_OPT)
        results["instructions"] = instructions(build)
        with open(results_path, "w") as fh:
            json.dump(results, fh, indent=2)
        return
    have_opt = ensure_mlir_opt()
    rows = []
    print("machine: %s" % results["machine"])
    print("(sc: check as it runs by default, propagating; -np: with --no-propagate; prop: propagation's share of sc)")
    print("%-24s %7s %10s %10s %7s %9s %9s %10s %10s %6s" % ("input", "MB", "sc MB/s", "opt MB/s", "ratio", "sc RSS/in",
                                                           "opt RSS/in", "sc ms/MB", "-np MB/s", "prop"))
    for form in ("generic", "pretty", "hlo"):
        for mb in sizes:
            path = generate(build, form, mb)
            size = os.path.getsize(path)
            programs = {"sc": shardcheck_argv(build, path), "np": shardcheck_argv(build, path) + ["--no-propagate"]}
            if form == "generic" and have_opt:
                programs["opt"] = [MLIR_OPT, "--allow-unregistered-dialect", path, "-o", "/dev/null"]
            m = measure(programs, runs)
            row = {"form": form, "file": os.path.basename(path), "bytes": size,
                   "shardcheck_s": m["sc"][0], "shardcheck_rss": m["sc"][1],
                   "shardcheck_mb_s": size / 1e6 / m["sc"][0], "shardcheck_ms_per_mb": m["sc"][0] * 1e3 / (size / 1e6),
                   "no_propagate_s": m["np"][0], "no_propagate_rss": m["np"][1],
                   "propagation_share": max(m["sc"][0] - m["np"][0], 0) / m["sc"][0]}
            if "opt" in m:
                row.update({"mlir_opt_s": m["opt"][0], "mlir_opt_rss": m["opt"][1],
                            "mlir_opt_mb_s": size / 1e6 / m["opt"][0], "ratio": m["opt"][0] / m["sc"][0]})
            rows.append(row)
            print("%-24s %7.1f %10.1f %10s %7s %9.2f %9s %10.2f %10.1f %5.0f%%" % (
                row["file"], size / 1e6, row["shardcheck_mb_s"],
                "%.1f" % row["mlir_opt_mb_s"] if "ratio" in row else "-",
                "%.1fx" % row["ratio"] if "ratio" in row else "-", row["shardcheck_rss"] / size,
                "%.2f" % (row["mlir_opt_rss"] / size) if "ratio" in row else "-", row["shardcheck_ms_per_mb"],
                size / 1e6 / row["no_propagate_s"], row["propagation_share"] * 100), flush=True)
    base = args[args.index("--base") + 1] if "--base" in args else None
    real_rows = real_world(build, base, runs)
    goals(rows, real_rows)
    results["generated"] = rows
    results["real_world"] = real_rows
    with open(results_path, "w") as fh:
        json.dump(results, fh, indent=2)
    print("results: %s" % results_path)


if __name__ == "__main__":
    main()
