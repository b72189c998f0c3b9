#!/usr/bin/env bash
# The VIZ page as a person sees it: `uopc viz` writes the page of a small compile (a 3x3 convolution kernel,
# like the quickstart's), headless Chromium opens it from disk, and the test reads the DOM Chromium built: the
# kernel and its steps are listed, and the default step's graph is an SVG with as many nodes as that step's
# graph has (counted independently with `uopc compile --emit=stages` and `uopc print --format=dot`). The
# screenshot is kept as a test output (bazel-testlogs/tools/viz_browser_test/test.outputs/). Bad input gives a
# clear error and no page. Without Chromium the test says how to install it and passes as skipped.
set -euo pipefail

uopc=$1
kernel=$2
tmp=${TEST_TMPDIR:-$(mktemp -d)}
outputs=${TEST_UNDECLARED_OUTPUTS_DIR:-$tmp}

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# ---- bad input: a clear error, exit 1, and no page ----
printf 'this is not a graph\n' >"$tmp/bad.uop"
if "$uopc" viz --out="$tmp/bad.html" "$tmp/bad.uop" 2>"$tmp/bad.err"; then fail "viz accepted a file that is not IR"; fi
grep -q 'bad.uop:1:' "$tmp/bad.err" || fail "no located error for bad input: $(cat "$tmp/bad.err")"
[[ ! -e $tmp/bad.html ]] || fail "a page was written for bad input"
: >"$tmp/empty.uop"
if "$uopc" viz --out="$tmp/empty.html" "$tmp/empty.uop" 2>"$tmp/empty.err"; then fail "viz accepted an empty file"; fi
grep -q 'no graph' "$tmp/empty.err" || fail "unclear error for an empty file: $(cat "$tmp/empty.err")"

# ---- the page ----
"$uopc" viz --out="$tmp/page.html" "$kernel" >"$tmp/viz.out"
grep -q "^wrote $tmp/page.html: 1 groups" "$tmp/viz.out" || fail "unexpected summary: $(cat "$tmp/viz.out")"

# The expected node count of the default step (the kernel's first named step, the lowerer): its output graph.
"$uopc" compile --emit=stages "$kernel" >"$tmp/stages.txt"
awk '/^# stage: lowerer$/{on=1; next} /^# stage:/{on=0} on' "$tmp/stages.txt" >"$tmp/lowerer.uop"
[[ -s $tmp/lowerer.uop ]] || fail "no lowerer stage in: $(head -5 "$tmp/stages.txt")"
expected_nodes=$("$uopc" print --format=dot "$tmp/lowerer.uop" | grep -c '\[label=')
((expected_nodes > 10)) || fail "the lowerer's graph has only $expected_nodes nodes"

chromium=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $chromium ]]; then
  echo "SKIPPED: Chromium is not installed; install it with: apt-get install chromium (.ci/run does)"
  exit 0
fi
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
  --disable-component-update --disable-sync --user-data-dir="$tmp/profile")
timeout 120 "$chromium" "${flags[@]}" --dump-dom "file://$tmp/page.html" >"$tmp/dom.html" 2>"$tmp/chromium.log" ||
  fail "chromium failed: $(tail -5 "$tmp/chromium.log")"
cp "$tmp/dom.html" "$outputs/viz_dom.html"

groups=$(grep -o '<li class="group"' "$tmp/dom.html" | wc -l)
((groups == 1)) || fail "expected 1 kernel in the list, found $groups"
grep -q '<li class="group"[^>]*>r_' "$tmp/dom.html" || fail "the kernel's name is not listed"
for step in lowerer expander devectorize 'final rewrite'; do
  grep -q "<li class=\"step[^\"]*\"[^>]*>$step " "$tmp/dom.html" || fail "step '$step' is not listed"
done
grep -q 'id="step-title">r_[^<]* / lowerer<' "$tmp/dom.html" || fail "the default step is not the lowerer"
grep -q '<svg[^>]*id="step-graph"' "$tmp/dom.html" || fail "no graph drawn for the default step"
drawn_nodes=$(grep -o 'class="node"' "$tmp/dom.html" | wc -l)
((drawn_nodes == expected_nodes)) || fail "the graph has $drawn_nodes nodes drawn, the step's graph has $expected_nodes"
grep -q 'id="rule-table"' "$tmp/dom.html" || fail "no table of the rules that fired"
grep -q 'lowerer.cc:[0-9]' "$tmp/dom.html" || fail "the rules are not named by file:line"
grep -q '^void r_[0-9_]*(float\* restrict data0' "$tmp/dom.html" || fail "the kernel's source is not shown"

timeout 120 "$chromium" "${flags[@]}" --window-size=1400,1000 --screenshot="$outputs/viz.png" \
  "file://$tmp/page.html" >>"$tmp/chromium.log" 2>&1 || fail "no screenshot: $(tail -5 "$tmp/chromium.log")"
size=$(stat -c %s "$outputs/viz.png")
((size > 20000)) || fail "the screenshot is only $size bytes"
echo "PASS: 1 kernel, default step drawn with $drawn_nodes nodes; screenshot $outputs/viz.png ($size bytes)"
