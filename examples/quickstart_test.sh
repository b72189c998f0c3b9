#!/usr/bin/env bash
# Runs the quickstart and checks its output with FileCheck, so the README's first command keeps working.
set -euo pipefail
quickstart=$1
filecheck=$2
out=${TEST_TMPDIR:-/tmp}/quickstart.txt
"$quickstart" >"$out"
"$filecheck" - "$out" <<'CHECKS'
CHECK: interned: yes; i is in [0, 2], i * 2 + 1 in [1, 5]
CHECK: == textual IR
CHECK: {{^}}%2 = RANGE : int32 (%1) arg=0
CHECK: {{^}}return %12
CHECK: == tinygrad's uop listing
CHECK-NEXT: {{^   0 Ops.DEFINE_GLOBAL {3}: dtypes.int.ptr\(3\) {14}\[\] {31}0$}}
CHECK: {{^}}  11 Ops.STORE : dtypes.void [3, 10] None
CHECK: == tinygrad's UOp tree
CHECK-NEXT: {{^}}UOp(Ops.SINK, dtypes.void, arg=None, src=(
CHECK: x3:=UOp(Ops.RANGE, dtypes.int, arg=0, src=(
CHECK: parse(print(kernel)) is the same node: yes
CHECKS
