#!/usr/bin/env bash
# Tests testdata/consumer (its CPU-only program's deps by `bazel query`), a separate workspace that depends on uopc through local_repository, with a
# nested Bazel. It works on a copy whose `path = "../.."` points at this checkout, under its own output base (so it
# never waits on the Bazel running this test), and always shuts that Bazel server down.
set -euo pipefail

# The checkout: runfiles are symlinks into the source tree.
root=$(dirname "$(readlink -f deps.bzl)")
if [[ ! -f $root/WORKSPACE || ! -d $root/testdata/consumer ]]; then
  echo "cannot find the uopc checkout (got '$root'); this test must run unsandboxed (tags: local)" >&2
  exit 1
fi

# Bazel points HOME at the test's temporary directory; the nested Bazel should use the real one, so that it
# shares the install base and the disk cache (~/.cache/uopc/bazel-disk) with every other build on this machine.
user=$(id -un)
home=$(getent passwd "$(id -u)" | cut -d: -f6)
home=${home:-/root}

work=$(mktemp -d "${TMPDIR:-/tmp}/uopc-consumer.XXXXXX")
output_base=$work/output_base
nested_bazel() {
  env -i HOME="$home" USER="$user" PATH="/usr/local/bin:/usr/bin:/bin" LANG=C.UTF-8 \
    bazel --output_base="$output_base" --max_idle_secs=60 "$@"
}
cleanup() {
  nested_bazel shutdown >/dev/null 2>&1 || true
  chmod -R u+w "$work" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

cp -R "$root/testdata/consumer" "$work/consumer"
rm -f "$work"/consumer/bazel-*
# `../..` is the checkout, seen from testdata/consumer.
sed -i -e "s#%workspace%/\.\./\.\.#$root#g" -e "s#\.\./\.\.#$root#g" "$work/consumer/WORKSPACE" "$work/consumer/.bazelrc"
grep -q "path = \"$root\"" "$work/consumer/WORKSPACE"

cd "$work/consumer"
log=$work/bazel.log
# The CPU-only program is only queried below: uopc runs it as //tensor:cpu_only_test.
if ! nested_bazel test --symlink_prefix=/ //:uop_consumer_test //:rule_fuzzer_consumer_test >"$log" 2>&1; then
  cat "$log" >&2
  echo "consumer workspace: bazel test failed" >&2
  exit 1
fi
grep -E "PASSED|Executed" "$log"
grep -q "//:uop_consumer_test .*PASSED" "$log"
grep -q "//:rule_fuzzer_consumer_test .*PASSED" "$log"

# The CPU-only program links the CPU device and no other: nothing of LLVM, OpenCL or CUDA (nor INTERP).
deps=$work/cpu_only_deps.txt
nested_bazel query 'deps(//:cpu_only_test)' >"$deps" 2>"$work/query.log" || {
  cat "$work/query.log" >&2
  echo "consumer workspace: bazel query deps(//:cpu_only_test) failed" >&2
  exit 1
}
grep -qx "@uopc//runtime:cpu_device" "$deps" || {
  echo "consumer workspace: cpu_only_test does not link @uopc//runtime:cpu_device" >&2
  exit 1
}
for unwanted in @uopc//third_party:llvm @uopc//third_party:opencl @uopc//runtime:llvm_device \
  @uopc//runtime:opencl_device @uopc//runtime:cuda_device @uopc//runtime:interp_device; do
  if grep -qx "$unwanted" "$deps"; then
    echo "consumer workspace: the CPU-only program depends on $unwanted" >&2
    exit 1
  fi
done
echo "cpu_only_test links:" $(grep -E "^@uopc//(runtime|third_party):[a-z0-9_]+$" "$deps" | grep -v -E "\.(h|cc)$" | sort)

# Without C++20 (Bazel's default -std=c++0x, as in a workspace that does not import consumer.bazelrc), the build
# stops at uopc's one #error saying why, not at an std::optional error deep in a header.
old_log=$work/bazel_cxx.log
if nested_bazel build --symlink_prefix=/ --cxxopt=-std=c++14 //:uop_consumer_test >"$old_log" 2>&1; then
  echo "consumer workspace: a C++14 build of uopc succeeded; expected uopc's C++20 #error" >&2
  exit 1
fi
if ! grep -q "error: #error \"uopc needs C++20" "$old_log" || grep -q "optional" "$old_log"; then
  cat "$old_log" >&2
  echo "consumer workspace: a C++14 build must fail with uopc's C++20 #error alone" >&2
  exit 1
fi
echo "C++14 build: stopped by uopc's C++20 #error"
