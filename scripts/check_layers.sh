#!/bin/sh
# check_layers.sh — enforces the map of lib/ that docs/design.md and HACKING.md draw.
#
#   sh scripts/check_layers.sh BUILD_DIR          check the objects in BUILD_DIR/obj/lib and the sources
#   sh scripts/check_layers.sh --self-test BUILD  also prove the check fails on a planted back-reference
#
# Layers, lowest first; a file may use its own layer and the ones below it, never one above:
#   util < ir < front < model < propagate < cost < rules < report < lib/check.c (the driver)
# What is checked:
#   1. symbols: no object references a symbol defined by an object of a higher layer (nm);
#   2. includes: no source includes a header of a higher layer;
#   3. cycles: the object-to-object reference graph inside lib/ has no cycle (tsort; the rule table's
#      references from engine.o to each rule's functions are the registry and do not count; a file
#      split in pieces is one node: a piece's first line says "(see NAME.c)", naming the main file
#      beside it, and the pieces may call each other, as a recursive-descent parser does);
#   4. file heads: a first line that names a file (`/* name.c — ...`) names the file itself, and
#      every lib/... path a source mentions exists;
#   5. names: a global symbol of lib/ that starts with sc_ is declared in lib/shardcheck.h (sc_ is the
#      public API; internals carry their module's prefix: ar_, sb_, hs_, ir_, fe_, md_, prop_, cost_,
#      ru_, rp_).
# Prints each violation and exits 1 if there is any.
set -eu

if [ "${1:-}" = "--self-test" ]; then
  build=$2
  here=$(cd "$(dirname "$0")" && pwd)
  sh "$here/check_layers.sh" "$build" >/dev/null || { echo "check-layers: the real tree fails" >&2; exit 1; }
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/obj/lib/util"
  cp -R "$build/obj/lib/." "$tmp/obj/lib/"
  # util/planted.c calls the driver: the lowest layer using the highest.
  printf 'int sc_planted(void);\nint sc_check(void);\nint sc_planted(void) { return sc_check(); }\n' >"$tmp/planted.c"
  ${CC:-cc} -c -o "$tmp/obj/lib/util/planted.o" "$tmp/planted.c"
  if out=$(SC_LAYERS_SKIP_SOURCES=1 sh "$here/check_layers.sh" "$tmp" 2>&1); then
    echo "check-layers: a planted back-reference (util -> check.c) was not caught" >&2
    exit 1
  fi
  echo "$out" | grep -q 'lib/util/planted.o uses sc_check' || { echo "check-layers: wrong report: $out" >&2; exit 1; }
  echo "check-layers: self-test passed (a planted util -> driver reference fails the check)"
  exit 0
fi

build=${1:?usage: check_layers.sh BUILD_DIR}
objdir=$build/obj/lib
[ -d "$objdir" ] || { echo "check-layers: no objects in $objdir (build first)" >&2; exit 2; }

layer_of() {
  case "$1" in
  *lib/util/*) echo 0 ;; *lib/ir/*) echo 1 ;; *lib/front/*) echo 2 ;; *lib/model/*) echo 3 ;;
  *lib/propagate/*) echo 4 ;; *lib/cost/*) echo 5 ;; *lib/rules/*) echo 6 ;; *lib/report/*) echo 7 ;;
  *lib/check.*|*lib/propagate.[co]) echo 8 ;;
  *lib/shardcheck.h) echo 0 ;; *) echo 9 ;;
  esac
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0

# 1 and 3: symbols. defs: "symbol layer object"; uses: "symbol layer object".
find "$objdir" -name '*.o' | sort >"$tmp/objs"
while read -r o; do
  l=$(layer_of "$o")
  rel=${o#"$build/obj/"}
  nm --defined-only -g "$o" | awk -v l="$l" -v o="$rel" 'NF == 3 { print $3, l, o }' >>"$tmp/defs"
  nm -u "$o" | awk -v l="$l" -v o="$rel" '{ print $NF, l, o }' >>"$tmp/uses"
done <"$tmp/objs"
awk 'NR == FNR { dl[$1] = $2; df[$1] = $3; next }
     ($1 in dl) && dl[$1] > $2 { print "check-layers: " $3 " uses " $1 ", defined in " df[$1] " (a higher layer)" }' \
  "$tmp/defs" "$tmp/uses" >"$tmp/up"
if [ -s "$tmp/up" ]; then cat "$tmp/up"; bad=1; fi
# Pieces of a split file count as their main file: "piece.o main.o" lines.
: >"$tmp/pieces"
if [ -z "${SC_LAYERS_SKIP_SOURCES:-}" ]; then
  for f in lib/*.c lib/*/*.c; do
    main=$(head -n 1 "$f" | sed -n 's|^/\* *[A-Za-z0-9_]*\.c *—.*(see \([A-Za-z0-9_]*\.c\)).*|\1|p')
    [ -n "$main" ] && [ -e "$(dirname "$f")/$main" ] && echo "${f%.c}.o $(dirname "$f")/${main%.c}.o" >>"$tmp/pieces"
  done
fi
# The rule engine's table names every rule's functions: those edges are the registry, not a dependency.
awk 'FILENAME == ARGV[1] { unit[$1] = $2; next }
     FILENAME == ARGV[2] { df[$1] = ($3 in unit) ? unit[$3] : $3; next }
     { u = ($3 in unit) ? unit[$3] : $3 }
     ($1 in df) && df[$1] != u && $3 != "lib/rules/engine.o" { print u, df[$1] }' \
  "$tmp/pieces" "$tmp/defs" "$tmp/uses" |
  sort -u >"$tmp/edges"
if ! tsort "$tmp/edges" >/dev/null 2>"$tmp/loop"; then
  echo "check-layers: objects in lib/ reference each other in a cycle:"
  grep -v 'input contains a loop' "$tmp/loop" | sed 's/^tsort: /  /'
  bad=1
fi

if [ -z "${SC_LAYERS_SKIP_SOURCES:-}" ]; then
  # 2: includes of a higher layer's header.
  for f in $(find lib -name '*.[ch]' | sort); do
    l=$(layer_of "$f")
    for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
      case "$inc" in */*) il=$(layer_of "lib/$inc") ;; *) continue ;; esac
      if [ "$il" -gt "$l" ]; then echo "check-layers: $f includes $inc (a higher layer)"; bad=1; fi
    done
  done
  # 4: file heads and the paths sources mention.
  for f in $(git ls-files 'lib/*' 'server/*' 'client/*' 'tests/*' 2>/dev/null | grep -E '\.(c|h|def|inc)$'); do
    named=$(head -n 1 "$f" | sed -n 's|^/\* *\([A-Za-z0-9_.-]*\.[a-z]*\) *—.*|\1|p')
    if [ -n "$named" ] && [ "$named" != "$(basename "$f")" ]; then
      echo "check-layers: $f opens with the name of another file ($named)"
      bad=1
    fi
  done
  git grep -ohE '\blib/[a-z_/]+\.(c|h|def|inc)\b' -- lib server client tests Makefile README.md docs 2>/dev/null |
    sort -u | while read -r p; do [ -e "$p" ] || echo "check-layers: a source or doc mentions $p, which does not exist"; done >"$tmp/paths"
  if [ -s "$tmp/paths" ]; then cat "$tmp/paths"; bad=1; fi
fi

# 5: sc_ is the public API's prefix only.
sed -n 's/^[A-Za-z_][A-Za-z0-9_ *]*[ *]\(sc_[a-z0-9_]*\)(.*/\1/p' lib/shardcheck.h | sort -u >"$tmp/public"
awk '$1 ~ /^sc_/ { print $1, $3 }' "$tmp/defs" | sort -u | while read -r sym obj; do
  grep -qx "$sym" "$tmp/public" || echo "check-layers: $obj defines $sym: sc_ is for what lib/shardcheck.h declares (use the module's prefix)"
done >"$tmp/names"
if [ -s "$tmp/names" ]; then cat "$tmp/names"; bad=1; fi

[ "$bad" -eq 0 ] && echo "check-layers: $(wc -l <"$tmp/objs") objects, layers util < ir < front < model < propagate < cost < rules < report < driver hold"
exit "$bad"
