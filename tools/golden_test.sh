#!/usr/bin/env bash
# Runs one golden test file (see golden.bzl): its RUN line gives the uopc command, and uopc's output (stdout and
# stderr together) must satisfy the file's CHECK lines.
#
#   # RUN: uopc print --format=listing %s        uopc must exit 0
#   # RUN: not uopc verify --spec=kernel %s      uopc must exit 1 (bad input), not 0, not a usage error or a crash
#
# `%s` stands for the file itself. Usage: golden_test.sh UOPC FILECHECK FILE
set -euo pipefail

if [[ $# -ne 3 ]]; then
  echo "usage: $0 UOPC FILECHECK FILE" >&2
  exit 2
fi
uopc=$1
filecheck=$2
file=$3

run_lines=$(sed -n 's/^[[:space:]]*\(#\|\/\/\)[[:space:]]*RUN:[[:space:]]*//p' "$file")
if [[ -z $run_lines ]]; then
  echo "$file: no RUN: line (expected e.g. '# RUN: uopc print %s')" >&2
  exit 1
fi
if [[ $(printf '%s\n' "$run_lines" | wc -l) -ne 1 ]]; then
  echo "$file: more than one RUN: line" >&2
  exit 1
fi

read -r -a words <<<"$run_lines"
expect_failure=0
if [[ ${words[0]} == not ]]; then
  expect_failure=1
  words=("${words[@]:1}")
fi
if [[ ${#words[@]} -eq 0 || ${words[0]} != uopc ]]; then
  echo "$file: the RUN: line must run uopc ('[not] uopc ARGS...'), got: $run_lines" >&2
  exit 1
fi
args=()
for w in "${words[@]:1}"; do
  args+=("${w//%s/$file}")
done

out=${TEST_TMPDIR:-$(mktemp -d)}/uopc_output.txt
rc=0
"$uopc" "${args[@]}" >"$out" 2>&1 || rc=$?

fail() {
  echo "$file: $1" >&2
  echo "command: uopc ${args[*]}" >&2
  echo "---- output ----" >&2
  cat "$out" >&2
  echo "----------------" >&2
  exit 1
}
if ((expect_failure)); then
  [[ $rc -eq 1 ]] || fail "expected uopc to reject the input (exit 1), got exit $rc"
else
  [[ $rc -eq 0 ]] || fail "expected uopc to succeed, got exit $rc"
fi

if ! "$filecheck" "$file" "$out"; then
  fail "output does not match the CHECK lines"
fi
