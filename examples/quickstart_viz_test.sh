#!/usr/bin/env bash
# The VIZ page of `VIZ=1 quickstart` as a reader sees its list (docs/viz.md): every rewrite has a name (none is
# "(unnamed rewrite)"), every one is filed in a group (none "(outside any group)"), and a rewrite made inside a
# step is listed under it. A new graph_rewrite call without a name, or one made outside every group, fails
# here. The graphs are not drawn (VIZ_MAX_NODES=1): only the list is checked.
set -euo pipefail

quickstart=$1
tmp=${TEST_TMPDIR:-$(mktemp -d)}
page=$tmp/quickstart_viz.html

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

VIZ=1 VIZ_PATH=$page VIZ_MAX_NODES=1 "$quickstart" >"$tmp/out.txt" 2>"$tmp/err.txt" ||
  fail "the quickstart failed: $(tail -5 "$tmp/err.txt")"
grep -q "^VIZ: wrote $page " "$tmp/err.txt" || fail "no page written: $(tail -3 "$tmp/err.txt")"

# The page's data is one JSON object; its keys are written in sorted order.
grep -o '"label":"[^"]*"' "$page" | sort | uniq -c >"$tmp/groups.txt"
grep -o '"name":"[^"]*"' "$page" | sort | uniq -c >"$tmp/steps.txt"
echo "groups:" && cat "$tmp/groups.txt"
echo "steps:" && cat "$tmp/steps.txt"

grep -q '"label":"schedule"' "$tmp/groups.txt" || fail "no scheduler group"
grep -q '"label":"r_' "$tmp/groups.txt" || fail "no kernel group"
if grep -q '(outside any group)' "$tmp/groups.txt"; then fail "rewrites were recorded outside any group"; fi
if grep -q '(unnamed rewrite)' "$tmp/steps.txt"; then fail "unnamed rewrites are listed"; fi
for step in merge_views create_kernels create_ast lowerer expander devectorize 'final rewrite'; do
  grep -q "\"name\":\"$step\"" "$tmp/steps.txt" || fail "step '$step' is not listed"
done
# create_ast's substitution of the realized buffers is listed under it, one level in.
grep -qE '"depth":1,("[a-z_]+":[0-9a-z]+,)*"name":"replace realized"' "$page" ||
  fail "the substitutions create_ast made are not listed under it"
if grep -qE '"depth":0,("[a-z_]+":[0-9a-z]+,)*"name":"replace realized"' "$page"; then
  fail "a substitution create_ast made is listed as a step of its own"
fi
echo "PASS"
