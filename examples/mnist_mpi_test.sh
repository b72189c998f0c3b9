#!/usr/bin/env bash
# examples/mnist --mpi under `mpirun -np 2` against one process with the same global batches: the first step's
# loss is the same to the printed digits, the next ones within 1% (Adam's first update is the sign of each
# gradient, so gradients at rounding level, which the two halves' sums round differently, move a full learning
# rate either way; two devices with --devices give the same numbers as two processes); rank 0 alone prints and
# writes the checkpoint.
set -uo pipefail

mnist=$1
shift
export TMPDIR=${TEST_TMPDIR:-${TMPDIR:-/tmp}}
fail() {
  echo "mnist_mpi_test: FAILED: $*"
  exit 1
}
command -v mpirun >/dev/null || fail "mpirun not found: Debian's openmpi-bin has it (./bazelw installs it)"

one=$("$mnist" "$@" 2>&1) || fail "one process: $one"
checkpoint=$TMPDIR/mnist_mpi.safetensors
two=$(timeout 300 mpirun --allow-run-as-root --oversubscribe -np 2 "$mnist" --mpi --checkpoint="$checkpoint" "$@" 2>&1) ||
  fail "two processes: $two"
echo "one process:"
echo "$one" | sed 's/^/  | /'
echo "two processes:"
echo "$two" | sed 's/^/  | /'

losses() { grep -E '^step ' | awk '{print $4}'; }
mapfile -t a < <(losses <<<"$one")
mapfile -t b < <(losses <<<"$two")
((${#a[@]} > 1 && ${#a[@]} == ${#b[@]})) || fail "expected as many steps, got ${#a[@]} and ${#b[@]}"
[[ ${a[0]} == "${b[0]}" ]] || fail "step 1: loss ${a[0]} on one process, ${b[0]} on two"
for i in "${!a[@]}"; do
  awk -v x="${a[$i]}" -v y="${b[$i]}" 'BEGIN { d = x - y; if (d < 0) d = -d; exit !(d <= 0.01 * x) }' ||
    fail "step $((i + 1)): loss ${a[$i]} on one process, ${b[$i]} on two"
done
(($(grep -c '^wrote ' <<<"$two") == 1)) || fail "the checkpoint was written other than once"
[[ -s $checkpoint ]] || fail "no checkpoint at $checkpoint"
echo "mnist_mpi_test: PASSED"
