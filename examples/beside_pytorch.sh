#!/bin/bash
# uopc beside PyTorch on this machine, one after the other in one run (docs/performance.md, "Beside PyTorch"):
# matmul 1024² and 4096², a ResNet 3x3 convolution forward and forward+backward, and the beautiful_mnist
# training step, with the same thread count on both sides.
#
#   examples/beside_pytorch.sh               # uopc's kernels (UOPC_KERNELS=fast) on CPU and LLVM, then PyTorch
#   PARITY=1 examples/beside_pytorch.sh      # also uopc with tinygrad's kernels (UOPC_KERNELS=tinygrad)
#
# PyTorch is Debian's python3-torch run by /usr/bin/python3 (bazelw does not install it: apt-get install
# python3-torch, and libopenblas0 for its matmul); the mnist step needs dataset-fashion-mnist.
set -euo pipefail
cd "$(dirname "$0")/.."
threads="${THREADS:-$(nproc)}"

./bazelw build -c opt //examples:workloads_benchmark //examples:mnist

# run_uopc KERNELS DEVICE: the workloads on DEVICE (CPU: clang; LLVM: LLVM's JIT in process), the tensors'
# default device set the way tinygrad sets it (LLVM=1).
run_uopc() {
  echo "== uopc, UOPC_KERNELS=$1, $2 device, $threads threads"
  env UOPC_KERNELS="$1" CPU_THREADS="$threads" "$2=1" bazel-bin/examples/workloads_benchmark --benchmark_min_time=1
  UOPC_KERNELS="$1" CPU_THREADS="$threads" XDG_CACHE_HOME="$(mktemp -d)" \
    bazel-bin/examples/mnist --device="$2" --steps=8 --eval_every=0 --test_images=2000 | tail -2
}

run_uopc fast CPU
run_uopc fast LLVM
if [[ "${PARITY:-0}" == 1 ]]; then run_uopc tinygrad CPU; fi
echo "== PyTorch"
/usr/bin/python3 examples/torch_workloads.py --threads="$threads"
