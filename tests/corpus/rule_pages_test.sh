#!/bin/sh
# The catalog (lib/rules/catalog/*.inc) is exactly what scripts/gen_catalog.py generates, and docs/rules/
# is exactly what scripts/gen_rule_pages.py generates from the catalog: a missing, stale or left-over
# page fails (run `make rule-pages` and commit the result).
set -u
/usr/bin/python3 scripts/gen_catalog.py --check || exit 1
build=${SC_BUILD:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 scripts/gen_rule_pages.py --build "$build" --out "$tmp/rules" >/dev/null || { echo "rule pages: generator failed"; exit 1; }
n=$(ls "$tmp/rules" | grep -c '^SC[0-9]*\.md$')
[ "$n" -ge 70 ] || { echo "rule pages: only $n pages generated"; exit 1; }
if diff -r "$tmp/rules" docs/rules >"$tmp/diff"; then
  echo "rule pages: $n pages and the index match the catalog"
else
  echo "rule pages: docs/rules differs from the catalog (run make rule-pages):"
  head -40 "$tmp/diff"
  exit 1
fi
