#!/usr/bin/env bash
# Checks that each stage's transitive dependencies stay in its own layer or below (docs/architecture.md,
# "Layers"), so a user who depends on one stage builds nothing above it.
# Usage: layering_test.sh DEPS_FILE ALLOWED_PACKAGES [DEPS_FILE ALLOWED_PACKAGES ...]
# DEPS_FILE is a genquery of `deps(//stage)`; ALLOWED_PACKAGES is a space-separated list of the top-level
# packages its labels in this workspace may come from, and of labels it must not reach, each written `!//pkg:name`
# (the devices, which a program chooses). Labels of other repositories (@...) are not checked.
set -euo pipefail

if (($# == 0)); then
  echo "FAIL: no stages to check"
  exit 2
fi
failures=0
while (($# >= 2)); do
  deps_file=$1
  allowed_list=$2
  shift 2
  if [[ ! -s $deps_file ]]; then
    echo "FAIL: $deps_file is empty or missing"
    failures=$((failures + 1))
    continue
  fi
  allowed=()
  forbidden=()
  for entry in $allowed_list; do
    if [[ $entry == '!'* ]]; then forbidden+=("${entry#!}"); else allowed+=("$entry"); fi
  done
  while read -r label; do
    [[ $label == //* ]] || continue
    package=${label#//}
    package=${package%%[:/]*}
    if [[ " ${allowed[*]} " != *" $package "* ]]; then
      echo "FAIL: $(basename "$deps_file") reaches $label (allowed: ${allowed[*]})"
      failures=$((failures + 1))
    fi
    if [[ " ${forbidden[*]-} " == *" $label "* ]]; then
      echo "FAIL: $(basename "$deps_file") reaches $label, which only a program's own deps may bring"
      failures=$((failures + 1))
    fi
  done <"$deps_file"
done
if (($# != 0)); then
  echo "FAIL: arguments must come in pairs"
  exit 2
fi
((failures == 0)) && echo "PASS"
exit $((failures > 0))
