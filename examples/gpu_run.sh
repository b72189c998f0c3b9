#!/bin/bash
# uopc on an NVIDIA GPU beside PyTorch (docs/performance.md, "On an NVIDIA H200"), in two halves, since the GPU
# machine has CUDA and PyTorch but none of Debian's packages:
#
#   examples/gpu_run.sh pack    # here: static -c opt builds of the GPU programs and tests, stripped, and the
#                               # first 10,000 Fashion-MNIST training images, into gpu_pack/ (git ignores it)
#   examples/gpu_run.sh run     # there, in the repository root with gpu_pack/ carried beside it; logs go to
#                               # $OUT (or gpu_out/)
#
# `run` checks the corpus on CUDA (CUDA C and PTX, then with TF32 tensor cores), times the workloads and the
# mnist step for each setting in SETTINGS, then runs PyTorch's side with and without TF32 convolutions.
set -uo pipefail
cd "$(dirname "$0")/.."
pack=gpu_pack
programs=(//examples:mnist_gpu //examples:gpu_workloads //runtime:cuda_corpus_test //runtime:ptx_isa_test)

if [[ ${1:-} == pack ]]; then
  set -e
  ./bazelw build -c opt --dynamic_mode=off "${programs[@]}"
  rm -rf "$pack" && mkdir -p "$pack/data"
  for target in "${programs[@]}"; do
    path=${target#//}
    path=bazel-bin/${path/://}
    strip -o "$pack/$(basename "$path")" "$path"
    # Debian's shared libraries the program links (Abseil, oneTBB, Z3, libstdc++), xz-compressed below.
    mkdir -p "$pack/lib"
    ldd "$path" | awk '/=> \// {print $3}' | grep -vE '/(libc|libm|libpthread|libdl|librt)\.so' |
      xargs -r cp -L -t "$pack/lib"
  done
  tar -cJf "$pack/lib.tar.xz" -C "$pack" lib && rm -rf "$pack/lib"
  python3 - "$pack/data" <<'EOF'
import glob, gzip, shutil, struct, sys
src = (glob.glob('/usr/share/dataset*/fashion-mnist/') + [''])[0]
out, n = sys.argv[1], 10000
images = gzip.open(src + 'train-images-idx3-ubyte.gz').read()
labels = gzip.open(src + 'train-labels-idx1-ubyte.gz').read()
gzip.open(f'{out}/train-images-idx3-ubyte.gz', 'wb').write(struct.pack('>IIII', 2051, n, 28, 28) + images[16:16 + n * 784])
gzip.open(f'{out}/train-labels-idx1-ubyte.gz', 'wb').write(struct.pack('>II', 2049, n) + labels[8:8 + n])
for name in ('t10k-images-idx3-ubyte.gz', 't10k-labels-idx1-ubyte.gz'):
  shutil.copy(src + name, out)
EOF
  du -sh "$pack"
  exit 0
fi

[[ ${1:-} == run ]] || { echo "usage: $0 pack|run" >&2; exit 2; }
out=${OUT:-gpu_out}
mkdir -p "$out"
tar -xJf "$pack/lib.tar.xz" -C "$pack"
# Only uopc's programs get Debian's libraries (PyTorch keeps its own libstdc++).
uopc() { LD_LIBRARY_PATH="$PWD/$pack/lib" "$@"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# The settings compared: uopc's defaults, then tensor cores for float32 (TF32) and for several reduce axes.
IFS=';' read -r -a settings <<<"${SETTINGS:-UOPC_KERNELS=fast;ALLOW_TF32=1 TC_OPT=2;UOPC_KERNELS=tinygrad}"

echo "== the corpus on CUDA"
uopc "$pack/cuda_corpus_test" 2>&1 | tail -4
uopc "$pack/ptx_isa_test" 2>&1 | tail -2
echo "== the corpus on CUDA with TF32 tensor cores (float32 products rounded to TF32: differences expected)"
ALLOW_TF32=1 TC_OPT=2 uopc "$pack/cuda_corpus_test" 2>&1 | grep -E 'PASSED|FAILED|Failure' -A2 | head -24

for s in "${settings[@]}"; do
  echo "== uopc: $s"
  uopc env $s "$pack/gpu_workloads" --device=CUDA
  uopc env $s XDG_CACHE_HOME="$(mktemp -d)" "$pack/mnist_gpu" --device=CUDA --data_dir="$pack/data" --steps=30 \
    --eval_every=0 --test_images=2000 | tail -3
  tag=$(echo "$s" | tr -c 'A-Za-z0-9_\n' '_')
  uopc env $s DEBUG=2 XDG_CACHE_HOME="$(mktemp -d)" "$pack/mnist_gpu" --device=CUDA --data_dir="$pack/data" \
    --steps=2 --eval_every=0 --test_images=1 --eval_batch=1 >"$out/mnist_kernels_$tag.txt" 2>&1
done

echo "== PyTorch"
python3 examples/torch_workloads.py --device=cuda --mnist_steps=30 --data_dir="$pack/data"
python3 examples/torch_workloads.py --device=cuda --mnist_steps=30 --data_dir="$pack/data" --no_tf32 |
  grep -E 'TF32|conv|mnist'
