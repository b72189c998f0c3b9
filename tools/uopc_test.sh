#!/usr/bin/env bash
# Runs the uopc binary on good and malformed input and checks exit codes, stdout and stderr.
# Usage: uopc_test.sh UOPC GOLDEN_TEST_RUNNER FILECHECK
set -uo pipefail

uopc=$1
golden_runner=$2
filecheck=$3
tmp=${TEST_TMPDIR:-$(mktemp -d)}
failures=0

# run NAME EXPECTED_EXIT ARGS... : runs uopc, keeps stdout/stderr in $out/$err.
run() {
  local name=$1 expected=$2
  shift 2
  local rc=0
  "$uopc" "$@" >"$tmp/out" 2>"$tmp/err" <"${stdin:-/dev/null}" || rc=$?
  out=$(cat "$tmp/out")
  err=$(cat "$tmp/err")
  if [[ $rc -ne $expected ]]; then
    echo "FAIL $name: uopc $* exited $rc, expected $expected"
    echo "  stdout: $out"
    echo "  stderr: $err"
    failures=$((failures + 1))
    return 1
  fi
  return 0
}
# expect NAME WHAT REGEX TEXT: TEXT must match the (extended) regex.
expect() {
  if ! grep -Eq -- "$3" <<<"$4"; then
    echo "FAIL $1: $2 does not match /$3/:"
    echo "$4" | sed 's/^/  | /'
    failures=$((failures + 1))
  fi
}
expect_empty() {
  if [[ -n $3 ]]; then
    echo "FAIL $1: $2 should be empty, got:"
    echo "$3" | sed 's/^/  | /'
    failures=$((failures + 1))
  fi
}

good=$tmp/good.uop
cat >"$good" <<'UOP'
# a comment
%x   = DEFINE_VAR : int32 arg=('x', 0, 10)
%two = CONST : int32 arg=2
%y   = MUL : int32 (%x, %two)
%s   = SINK : void (%y)
UOP

# ---- usage errors: exit 2 ----
run no-args 2 && expect no-args stderr '^usage: uopc SUBCOMMAND' "$err"
run help 2 --help && expect help stdout 'uopc print .*--format=ir\|listing\|tree' "$out" &&
  expect help stdout 'uopc verify .*--spec=tensor\|kernel\|program' "$out"
run help-short 2 -h && expect help-short stdout '^usage: uopc' "$out"
run sub-help 2 print --help && expect sub-help stdout '^usage: uopc print ' "$out"
run unknown-sub 2 frobnicate "$good" && expect unknown-sub stderr "unknown subcommand 'frobnicate'" "$err" &&
  expect unknown-sub stderr 'usage: uopc' "$err" && expect_empty unknown-sub stdout "$out"
run unknown-flag 2 print --frobnicate "$good" && expect unknown-flag stderr 'unknown flag --frobnicate' "$err"
run missing-file-arg 2 print && expect missing-file-arg stderr 'expected 1 argument, got 0' "$err"
run two-files 2 print "$good" "$good" && expect two-files stderr 'expected 1 argument, got 2' "$err"
run bad-format 2 print --format=xml "$good" && expect bad-format stderr 'unknown --format=xml' "$err" &&
  expect_empty bad-format stdout "$out"
run foreign-flag 2 print --spec=kernel "$good" && expect foreign-flag stderr '--spec does not apply' "$err"
run verify-no-spec 2 verify "$good" && expect verify-no-spec stderr 'verify needs --spec=' "$err"
run verify-bad-spec 2 verify --spec=vibes "$good" && expect verify-bad-spec stderr 'unknown --spec=vibes' "$err"

# ---- good input: exit 0 ----
run print-ir 0 print "$good" && expect print-ir stdout '^%2 = MUL : int32 \(%0, %1\)$' "$out" &&
  expect print-ir stdout '^return %3$' "$out" && expect_empty print-ir stderr "$err"
canonical=$out
run print-ir-flag 0 print --format=ir "$good" && [[ $out == "$canonical" ]] ||
  { echo "FAIL print-ir-flag: --format=ir differs from the default"; failures=$((failures + 1)); }
# The canonical text is a fixed point, read from a file or from stdin.
printf '%s\n' "$canonical" >"$tmp/canonical.uop"
stdin=$tmp/canonical.uop run stdin 0 print - && [[ $out == "$canonical" ]] ||
  { echo "FAIL stdin: printing the canonical text from stdin changed it:"; echo "$out"; failures=$((failures + 1)); }
run listing 0 print --format=listing "$good" &&
  expect listing stdout '^   2 Ops.MUL +: dtypes.int +\[0, .2.\] +None$' "$out"
run tree 0 print --format=tree "$good" && expect tree stdout '^UOp\(Ops.SINK, dtypes.void, arg=None, src=\($' "$out"
run verify-program 0 verify --spec=program "$good" && [[ $out == "$canonical" ]] ||
  { echo "FAIL verify-program: a verified graph should print as canonical IR"; failures=$((failures + 1)); }
run verify-tree 0 verify --spec=tensor --format=tree "$good" && expect verify-tree stdout '^UOp\(Ops.SINK' "$out"
printf '' >"$tmp/empty.uop"
run print-empty 1 print "$tmp/empty.uop" && expect_empty print-empty stdout "$out" &&
  expect print-empty stderr "no graph to print" "$err"
# Flags may come before the subcommand, and `--` ends the flags.
run flag-first 0 --format=listing print "$good" && expect flag-first stdout 'Ops.MUL' "$out"

# ---- bad input: exit 1, FILE:line:col on stderr, nothing on stdout ----
bad() {  # bad NAME TEXT EXPECTED_STDERR_REGEX [uopc args before the file]
  local name=$1 text=$2 regex=$3
  shift 3
  printf '%b' "$text" >"$tmp/$name.uop"
  if run "$name" 1 "${@:-print}" "$tmp/$name.uop"; then
    expect "$name" stderr "^$tmp/$name.uop:$regex" "$err"
    expect_empty "$name" stdout "$out"
  fi
}
bad undefined '%0 = CONST : int32 arg=1\n%1 = ADD : int32 (%0, %9)\n' '2:23: error: undefined value %9$'
bad unknown-op '%0 = FROB : int32\n' '1:6: error: unknown op .FROB.'
bad unknown-dtype '%0 = CONST : int33 arg=1\n' '1:14: error: '
bad truncated '%0 = CONST : int32 arg=(1, 2\n' '2:1: error: expected .,. or .\).?, got end of input'
bad redefined '%0 = CONST : int32 arg=1\n%0 = CONST : int32 arg=2\n' '2:1: error: redefinition of %0'
bad garbage '\x01\xff\xfe garbage\n' '1:1: error: '
bad no-equals '%0 CONST : int32\n' '1:4: error: expected .=.'
bad verify-fail '%0 = DEFINE_VAR : int32 arg=(\x27x\x27, 0, 10)\n%1 = CMPLT : int32 (%0, %0)\n' \
  ' error: program spec violation at node \(toposort order\) 1: Ops.CMPLT' verify --spec=program
bad verify-kernel '%0 = CONST : int32 arg=1\n' ' error: kernel AST spec violation .*rooted at a SINK' verify --spec=kernel
bad verify-empty '# nothing\n' ' error: no graph to verify' verify --spec=tensor
run missing-file 1 print "$tmp/does-not-exist.uop" &&
  expect missing-file stderr "^$tmp/does-not-exist.uop: error: cannot open: No such file" "$err"
printf '%%0 = CONST : int32 arg=1\n%%1 = NEG : int32 (%%7)\n' >"$tmp/bad-stdin.uop"
stdin=$tmp/bad-stdin.uop run bad-stdin 1 print - && expect bad-stdin stderr '^<stdin>:2:19: error: undefined value %7$' "$err"

# A deep chain must not overflow the stack anywhere (parse, verify, print).
{
  echo '%0 = DEFINE_VAR : int32 arg=(\x27x\x27, 0, 10)' | sed "s/\\\\x27/'/g"
  for ((i = 1; i <= 100000; i++)); do echo "%$i = NEG : int32 (%$((i - 1)))"; done
} >"$tmp/deep.uop"
run deep 0 verify --spec=program --format=listing "$tmp/deep.uop" && expect deep stdout '^100000 Ops.NEG' "$out"

# ---- the golden runner itself rejects what it should ----
golden() {  # golden NAME EXPECTED_EXIT TEXT
  printf '%b' "$3" >"$tmp/$1.uop"
  local rc=0
  "$golden_runner" "$uopc" "$filecheck" "$tmp/$1.uop" >"$tmp/golden.log" 2>&1 || rc=$?
  if [[ $rc -ne $2 ]]; then
    echo "FAIL golden-$1: runner exited $rc, expected $2"
    sed 's/^/  | /' "$tmp/golden.log"
    failures=$((failures + 1))
  fi
}
golden pass 0 '# RUN: uopc print %s\n# CHECK: MUL\n%0 = CONST : int32 arg=1\n%1 = MUL : int32 (%0, %0)\n'
golden wrong-check 1 '# RUN: uopc print %s\n# CHECK: ADD\n%0 = CONST : int32 arg=1\n%1 = MUL : int32 (%0, %0)\n'
golden no-run-line 1 '# CHECK: MUL\n%0 = CONST : int32 arg=1\n'
golden unexpected-success 1 '# RUN: not uopc print %s\n# CHECK: CONST\n%0 = CONST : int32 arg=1\n'
golden unexpected-failure 1 '# RUN: uopc print %s\n# CHECK: error\n%0 = CONST : int32 (%4)\n'
golden expected-failure 0 '# RUN: not uopc print %s\n# CHECK: undefined value %4\n%0 = CONST : int32 (%4)\n'
golden usage-error-is-not-failure 1 '# RUN: not uopc print --format=xml %s\n# CHECK: xml\n%0 = CONST : int32 arg=1\n'

# ---- simplify ----
run simplify-single 0 simplify --vars='a:0:8 b:0:3' '((a * 4) + b) // 4' && expect simplify-single stdout '^a$' "$out"
# C semantics: 5 % -4 == 1, so (y % -4) must not become ((y%4)*-1) as in tinygrad.
run simplify-negative-divisor 0 simplify --vars='y:-8:8' '(y % -4)' && expect simplify-negative-divisor stdout '^\(y%4\)$' "$out"
run simplify-symbolic 0 simplify --rules=symbolic --vars='a:0:8' '(a + 0)' && expect simplify-symbolic stdout '^a$' "$out"
run simplify-bad-rules 2 simplify --rules=nope --vars='a:0:1' 'a' && expect simplify-bad-rules stderr 'symbolic or sym' "$err"
run simplify-bad-vars 2 simplify --vars='a:0' 'a' && expect simplify-bad-vars stderr 'name:min:max' "$err"
run simplify-bad-expr 1 simplify --vars='a:0:1' '(a + ' && expect simplify-bad-expr stderr 'col 6: expected an expression' "$err"
printf '%s\n' '{"id": "t1", "vars": [["a", 0, 8]], "expr": "((a * 4) // 4)", "dtype": "int"}' \
  '{"id": 2, "vars": [["a", 0, 3]], "expr": "(a +"}' 'not json' \
  '{"id": 3, "vars": [["a", 0, 3]], "expr": "(a < 2)", "dtype": "bool"}' >"$tmp/in.jsonl"
stdin=$tmp/in.jsonl run simplify-jsonl 1 simplify --jsonl - &&
  expect simplify-jsonl stdout '^\{"id":"t1","render":"a","infix":"a","vmin":0,"vmax":8\}$' "$out" &&
  expect simplify-jsonl stdout '"id":2,"error":"col 5: expected an expression' "$out" &&
  expect simplify-jsonl stdout '^\{"id":null,"error":"not a JSON object"\}$' "$out" &&
  expect simplify-jsonl stdout '"id":3,"render":"\(a<2\)","infix":"\(a < 2\)","vmin":false,"vmax":true' "$out"
printf '%s\n' '{"vars": [["a", 0, 3], ["b", 0, 3]], "in_nodes": 5}' '{"expr": "(a + 0)"}' '{"expr": "((a + 0) * b)"}' >"$tmp/graph.jsonl"
run simplify-graph 0 simplify --jsonl --time "$tmp/graph.jsonl" &&
  expect simplify-graph stdout '"id":1,"render":"a","infix":"a"' "$out" && expect simplify-graph stdout '"id":2,"render":"\(a\*b\)","infix":"\(a \* b\)"' "$out" &&
  expect simplify-graph stderr '^rewrite_seconds: [0-9.e-]+$' "$err"
run simplify-stats 0 simplify --stats --vars 'a:0:8' '(a + 0) * 1' && expect simplify-stats stdout '^a$' "$out" &&
  expect simplify-stats stderr 'ADD\{x, CONST\(0\)\}' "$err" && expect simplify-stats stderr 'TOTAL' "$err"
head -c 3000 /dev/urandom >"$tmp/junk.jsonl"
run simplify-junk 1 simplify --jsonl "$tmp/junk.jsonl" && expect simplify-junk stdout 'error' "$out"

# ---- shape ----
printf '%s\n' '{"id": "p", "start_shape": [2, 3], "ops": [["permute", [1, 0]], ["pad", [[0, 0], [1, 0]]]]}' \
  '{"id": "bad-op", "start_shape": [2, 3], "ops": [["expand", [4, 3]]]}' 'not json' \
  '{"id": 7, "start_shape": [2], "ops": [["rotate", [1]]]}' '{"id": 8, "start_shape": [2.5], "ops": []}' \
  '{"id": "flat", "start_shape": [4, 3], "ops": [["permute", [1, 0]], ["reshape", [12]], ["shrink", [[1, 3]]]]}' \
  '{"id": "huge", "start_shape": [1], "ops": [["expand", [2147483647]], ["pad", [[5, 5]]]]}' >"$tmp/shape.jsonl"
stdin=$tmp/shape.jsonl run shape-jsonl 1 shape --jsonl - && expect shape-jsonl stderr "lines failed" "$err" &&
  expect shape-jsonl stdout '^\{"id":"p","shape":\[3,3\],"n_views":1,"contiguous":false,"views":\[\{"shape":\[3,3\],"strides":\[1,3\],"offset":-3,"mask":\[\[0,3\],\[1,3\]\],"contiguous":false\}\],"real_strides":\[1,null\],"idx_infix":"\(\(\(ridx1 \* 3\) \+ ridx0\) \+ -3\)","valid_infix":"\(\(ridx1 < 1\) != true\)","index":\[-1,0,3,-1,1,4,-1,2,5\]\}$' "$out" &&
  expect shape-jsonl stdout '^\{"id":"bad-op","error":"op 0 \[\\"expand\\",\[4,3\]\]: .*"\}$' "$out" &&
  expect shape-jsonl stdout '^\{"id":null,"error":"not a JSON object"\}$' "$out" &&
  expect shape-jsonl stdout '"id":7,"error":"\\"ops\\": op 0: unknown movement op .rotate."' "$out" &&
  expect shape-jsonl stdout '"id":8,"error":"\\"start_shape\\" must be a list of integers"' "$out" &&
  expect shape-jsonl stdout '"id":"flat","shape":\[2\],"n_views":1,.*"real_strides":\[3\],"idx_infix":"\(\(ridx0 \* 3\) \+ 3\)",.*"index":\[3,6\]' "$out" &&
  expect shape-jsonl stdout '"id":"huge","error":"op 1 .*more than 2147483647 positions"' "$out"
[[ $(wc -l <<<"$out") -eq 7 ]] || { echo "FAIL shape-jsonl: expected 7 output lines"; failures=$((failures + 1)); }
head -c 3000 /dev/urandom >"$tmp/junk.jsonl"
run shape-junk 1 shape --jsonl "$tmp/junk.jsonl" && expect shape-junk stdout '"error"' "$out"
run shape-no-jsonl 2 shape - && expect shape-no-jsonl stderr 'pass --jsonl' "$err"
run shape-missing 1 shape --jsonl "$tmp/nope.jsonl" && expect shape-missing stderr 'nope.jsonl: error: cannot open' "$err"
run shape-foreign-flag 2 shape --jsonl --rules=symbolic - && expect shape-foreign-flag stderr '--rules does not apply' "$err"

# ---- compile and run ----
cat >"$tmp/add.uop" <<'UOP'
%0 = DEFINE_GLOBAL : int32.ptr(3) arg=0
%1 = VIEW : void arg=ShapeTracker(views=(View(shape=(3,), strides=(1,), offset=0, mask=None, contiguous=True),))
%2 = DEFINE_GLOBAL : int32.ptr(3) arg=1
%3 = LOAD : int32 (%2, %1)
%4 = DEFINE_GLOBAL : int32.ptr(3) arg=2
%5 = LOAD : int32 (%4, %1)
%6 = ADD : int32 (%3, %5)
%7 = STORE : void (%0, %1, %6)
%8 = SINK : void (%7)
return %8
UOP
run compile-src 0 compile "$tmp/add.uop" && expect compile-src stdout '^void E_3\(int\* restrict data0, int\* restrict data1, int\* restrict data2\) \{$' "$out"
run compile-uops 0 compile --emit=uops "$tmp/add.uop" && expect compile-uops stdout '^  11 Ops.STORE +: dtypes.void +\[9, 10\] +None$' "$out"
run compile-stages 0 compile --noopt --emit=stages "$tmp/add.uop" && expect compile-stages stdout '^# stage: final rewrite$' "$out"
run compile-opts 0 compile --opts='UPCAST:0:3' "$tmp/add.uop" && expect compile-opts stdout '^void E_3\(' "$out" &&
  expect compile-opts stdout '^  \*\(data0\+2\) = \(val2\+val5\);$' "$out"
run compile-bad-opt 1 compile --opts='UPCAST:0:2' "$tmp/add.uop" && expect compile-bad-opt stderr 'add.uop: error: Opt\(op=OptOps.UPCAST, axis=0, arg=2\)' "$err"
run compile-opts-noopt 2 compile --noopt --opts='UPCAST:0:3' "$tmp/add.uop" && expect compile-opts-noopt stderr 'exclude each other' "$err"
run compile-bad-target 2 compile --target=vulkan "$tmp/add.uop" &&
  expect compile-bad-target stderr "unknown target 'vulkan' \\(known: clang, opencl, metal, cuda, ptx, llvm\\)" "$err"
run compile-opencl 0 compile --target=opencl "$tmp/add.uop" && expect compile-opencl stdout '^__kernel void E_3\(__global int\* data0' "$out"
run compile-cuda 0 compile --target=cuda "$tmp/add.uop" && expect compile-cuda stdout '^extern "C" __global__ void __launch_bounds__\(3\) E_3\(' "$out"
run compile-bad-emit 2 compile --emit=asm "$tmp/add.uop" && expect compile-bad-emit stderr 'unknown --emit=asm' "$err"
python3 -c 'import json,sys; print(json.dumps({"id": "k", "ast": open(sys.argv[1]).read()}))' "$tmp/add.uop" >"$tmp/k.jsonl"
printf '%s\n' 'not json' '{"id": 5}' '{"id": 6, "ast": "%0 = BOGUS"}' >>"$tmp/k.jsonl"
run compile-jsonl 1 compile --jsonl --time "$tmp/k.jsonl" && expect compile-jsonl stdout '^\{"id":"k","name":"E_3","opts":\[\],"global_size":null,"local_size":null,"uops":' "$out" &&
  expect compile-jsonl stdout '"id":5,"error":"line 3: missing' "$out" && expect compile-jsonl stdout '"id":6,"error":"ast:1:' "$out" &&
  expect compile-jsonl stderr '^compile_seconds: [0-9.e-]+$' "$err" &&
  expect compile-jsonl stderr '3 of 4 lines failed' "$err"
for device in CPU INTERP LLVM; do
  run "run-$device" 1 run --jsonl --device=$device "$tmp/k.jsonl" &&
    expect "run-$device" stdout '^\{"id": "k", "outputs": \{"0": \[-32, -25, -114\]\}\}$' "$out" &&
    expect "run-$device" stdout '^\{"id": 6, "error": "ast:1:' "$out"
done
run run-interp-cuda 1 run --jsonl --device=INTERP --target=cuda "$tmp/k.jsonl" &&
  expect run-interp-cuda stdout '^\{"id": "k", "outputs": \{"0": \[-32, -25, -114\]\}\}$' "$out"
run run-target-not-interp 2 run --jsonl --device=CPU --target=cuda "$tmp/k.jsonl" &&
  expect run-target-not-interp stderr 'target is for --device=INTERP' "$err"
# Without --jsonl, run takes one kernel AST in textual IR: JSON lines are a parse error.
run run-no-jsonl 1 run "$tmp/k.jsonl" && expect run-no-jsonl stderr "expected '%name = ...'" "$err"
run run-bad-device 2 run --jsonl --device=TPU "$tmp/k.jsonl" && expect run-bad-device stderr "no device 'TPU'.*INTERP" "$err"

# ---- schedule ----
printf '%s\n' '%u0 = UNIQUE : void arg=0' "%cpu = DEVICE : void arg='CPU'" '%a = BUFFER : float32 (%u0, %cpu) arg=6' \
  '%r = RESHAPE : float32 (%a) arg=(2, 3)' '%s = REDUCE_AXIS : float32 (%r) arg=(Ops.ADD, (1,))' '%k = SINK : void (%s)' \
  >"$tmp/sum.uop"
run schedule 0 schedule "$tmp/sum.uop" && expect schedule stdout '^# kernel 0: [0-9]+:dtypes.float\[2\]@CPU 0:dtypes.float\[6\]@CPU$' "$out" &&
  expect schedule stdout 'REDUCE_AXIS : float32 .* arg=\(Ops.ADD, \(1,\)\)' "$out"
printf '%s\n' '%0 = CONST : int32 arg=1' >"$tmp/const.uop"
run schedule-not-sink 1 schedule "$tmp/const.uop" && expect schedule-not-sink stderr 'root is the SINK of the tensors' "$err"
run schedule-kernel-ast 1 schedule "$tmp/add.uop" && expect schedule-kernel-ast stderr 'cannot realize STORE: it has no device' "$err"

if ((failures)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all uopc CLI checks passed"
