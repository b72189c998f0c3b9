#!/usr/bin/env bash
# Runs an example and checks its output with FileCheck against a file of CHECK lines, so what the README and the
# examples' comments promise keeps holding. Usage: example_test.sh BINARY FILECHECK CHECKS_FILE [ARGS...]; ARGS
# go to the example.
set -euo pipefail
out=${TEST_TMPDIR:-/tmp}/example_output.txt
"$1" "${@:4}" >"$out"
"$2" "$3" "$out"
