#!/usr/bin/python3
"""Generates docs/rules/: one page per rule, SCxxxx.md (`shardcheck explain CODE --format markdown`, the
catalog's page), and the index README.md (`shardcheck rules --format json`). SARIF's helpUri points at the
pages. Pages of codes that are no longer rules are removed, so the folder is exactly what the catalog makes.

usage: gen_rule_pages.py [--build DIR] [--out DIR]   (defaults: build, docs/rules; run from the repository root)
Run by `make rule-pages`; tests/corpus/rule_pages_test.sh compares a fresh run with docs/rules/."""
import argparse
import glob
import json
import os
import subprocess
import sys

INDEX_HEAD = """# Rules

One page per rule, generated from the catalog (`shardcheck explain CODE --format markdown`) by
`scripts/gen_rule_pages.py`; run `make rule-pages` after changing a catalog entry, do not edit these files.
Codes are stable and never reused. Which rules are errors only in modules JAX produced:
[rules-policy.md](../rules-policy.md).

| code | rule | family | severity | summary |
|---|---|---|---|---|
"""


def run(cli, *args):
    return subprocess.run([cli, *args], check=True, capture_output=True, text=True).stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("SC_BUILD", "build"))
    ap.add_argument("--out", default="docs/rules")
    a = ap.parse_args()
    cli = os.path.join(a.build, "bin", "shardcheck")
    rules = json.loads(run(cli, "rules", "--format", "json"))
    os.makedirs(a.out, exist_ok=True)
    index = INDEX_HEAD
    for r in rules:
        page = run(cli, "explain", r["code"], "--format", "markdown")
        with open(os.path.join(a.out, r["code"] + ".md"), "w") as f:
            f.write(page if page.endswith("\n") else page + "\n")
        summary = r["summary"].replace("|", "\\|")
        index += f"| [{r['code']}]({r['code']}.md) | `{r['name']}` | {r['family']} | {r['severity']} | {summary} |\n"
    with open(os.path.join(a.out, "README.md"), "w") as f:
        f.write(index)
    codes = {r["code"] for r in rules}
    for p in glob.glob(os.path.join(a.out, "SC*.md")):
        if os.path.basename(p)[:-3] not in codes:
            os.remove(p)
    print("rule pages: %d pages and the index in %s" % (len(rules), a.out))


if __name__ == "__main__":
    sys.exit(main())
