#!/usr/bin/env bash
# Runs nn/mpi_training_test.cc under `mpirun -np 2` on this machine: every test on both ranks; then a rank that
# fails (exits) and a rank that hangs instead of joining an all-reduce, each of which must end the whole job with
# an error, within a bound. Root (CI runs as root) needs --allow-run-as-root; --oversubscribe lets two ranks share
# fewer cores.
set -uo pipefail

bin=$1
export TMPDIR=${TEST_TMPDIR:-${TMPDIR:-/tmp}}
# Two ranks of one gtest binary: neither writes Bazel's per-test files (they would race for them).
unset TEST_PREMATURE_EXIT_FILE XML_OUTPUT_FILE GTEST_OUTPUT
mpirun=(mpirun --allow-run-as-root --oversubscribe -np 2)

fail() {
  echo "mpi_test: FAILED: $*"
  exit 1
}
command -v mpirun >/dev/null || fail "mpirun not found: Debian's openmpi-bin has it (./bazelw installs it)"

echo "mpi_test: every test on 2 ranks"
timeout 600 "${mpirun[@]}" "$bin" || fail "the tests failed on 2 ranks"

# Runs the failing-rank test with the given environment; sets $out, $rc and $took.
run_failing() {
  local start=$SECONDS
  out=$(timeout 120 "${mpirun[@]}" "$@" "$bin" --gtest_filter='*ARankThatFailsEndsTheJob*' 2>&1)
  rc=$?
  took=$((SECONDS - start))
  echo "$out" | grep -v '^\s*$' | sed 's/^/  | /'
}

echo "mpi_test: rank 1 exits with status 3 before an all-reduce"
run_failing -x UOPC_MPI_TEST_FAIL_RANK=1
((rc != 0 && rc != 124)) || fail "the job exited with $rc (124: it hung until the timeout)"
((took < 60)) || fail "the job took $took s to end"
grep -q "rank 1: failing on purpose" <<<"$out" || fail "rank 1 did not fail as told"

echo "mpi_test: rank 1 hangs; rank 0 gives up after UOPC_MPI_TIMEOUT_S=5"
run_failing -x UOPC_MPI_TEST_HANG_RANK=1 -x UOPC_MPI_TIMEOUT_S=5
((rc != 0 && rc != 124)) || fail "the job exited with $rc (124: it hung until the timeout)"
((took < 45)) || fail "the job took $took s to end"
grep -q "rank 0: error: DEADLINE_EXCEEDED: MPI all-reduce of 4 bytes: rank 0 of 2 waited 5 s" <<<"$out" ||
  fail "rank 0 did not report the timeout"

echo "mpi_test: PASSED"
