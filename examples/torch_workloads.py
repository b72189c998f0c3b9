# PyTorch's side of examples/beside_pytorch.sh: the workloads of //examples:workloads_benchmark, written as a
# PyTorch user would, on the CPU with the same thread count. Run with Debian's python3-torch (/usr/bin/python3).
#
#   /usr/bin/python3 examples/torch_workloads.py [--threads=2] [--mnist_steps=8]
#   python3 examples/torch_workloads.py --device=cuda [--data_dir=DIR]   # on an NVIDIA GPU (adds fp16 matmul)
#   python3 examples/torch_workloads.py --device=cuda --no_tf32          # cuDNN's convolutions in full float32
#
# Prints one line per workload: name, seconds per run (the median of the timed runs), GFLOPS where it has a
# flop count. The mnist step needs Debian's dataset-fashion-mnist.
import argparse
import gzip
import os
import statistics
import time

import numpy as np
import torch
import torch.nn as nn

FASHION_MNIST = '/usr/share/datasets/fashion-mnist'
DEVICE = torch.device('cpu')


def sync():
  if DEVICE.type == 'cuda':
    torch.cuda.synchronize()


def timed(fn, runs):
  fn()  # warm-up: allocations, oneDNN primitive creation, cuDNN's algorithm choice
  times = []
  for _ in range(runs):
    sync()
    start = time.perf_counter()
    fn()
    sync()
    times.append(time.perf_counter() - start)
  return statistics.median(times)


def report(name, seconds, flops=None):
  rate = f'{flops / seconds / 1e9:10.1f} GFLOPS' if flops else ''
  print(f'{name:<28} {seconds * 1e3:10.2f} ms {rate}', flush=True)


def matmul(n, runs, dtype=torch.float32):
  a, b = torch.rand(n, n, device=DEVICE, dtype=dtype), torch.rand(n, n, device=DEVICE, dtype=dtype)
  suffix = '' if dtype == torch.float32 else f'/{str(dtype).split(".")[1]}'
  report(f'matmul/{n}{suffix}', timed(lambda: a @ b, runs), 2.0 * n**3)


def conv3x3(batch, channels, size, runs):
  # A ResNet stage-1 3x3 convolution: channels -> channels, stride 1, padding 1.
  x = torch.rand(batch, channels, size, size, device=DEVICE, requires_grad=True)
  w = torch.rand(channels, channels, 3, 3, device=DEVICE, requires_grad=True)
  flops = 2.0 * batch * channels * channels * 9 * size * size
  name = f'conv3x3/{batch}x{channels}x{size}'
  with torch.no_grad():
    report(f'{name}/fwd', timed(lambda: nn.functional.conv2d(x, w, padding=1), runs), flops)

  def step():
    x.grad, w.grad = None, None
    nn.functional.conv2d(x, w, padding=1).sum().backward()

  report(f'{name}/fwd+bwd', timed(step, runs), 3 * flops)


def mnist_step(steps, data_dir):
  def idx(name, offset):
    with gzip.open(os.path.join(data_dir, name), 'rb') as f:
      return np.frombuffer(f.read(), np.uint8, offset=offset)

  images = torch.tensor(idx('train-images-idx3-ubyte.gz', 16).reshape(-1, 1, 28, 28).astype(np.float32),
                        device=DEVICE)
  labels = torch.tensor(idx('train-labels-idx1-ubyte.gz', 8).astype(np.int64), device=DEVICE)
  torch.manual_seed(42)
  # tinygrad's beautiful_mnist model, Adam, batch 512, raw 0-255 pixels.
  model = nn.Sequential(nn.Conv2d(1, 32, 5), nn.ReLU(), nn.Conv2d(32, 32, 5), nn.ReLU(), nn.BatchNorm2d(32),
                        nn.MaxPool2d(2), nn.Conv2d(32, 64, 3), nn.ReLU(), nn.Conv2d(64, 64, 3), nn.ReLU(),
                        nn.BatchNorm2d(64), nn.MaxPool2d(2), nn.Flatten(1), nn.Linear(576, 10)).to(DEVICE)
  opt = torch.optim.Adam(model.parameters())
  times = []
  for _ in range(steps):
    sync()
    start = time.perf_counter()
    sample = torch.randint(0, images.shape[0], (512,), device=DEVICE)
    loss = nn.functional.cross_entropy(model(images[sample]), labels[sample])
    opt.zero_grad()
    loss.backward()
    opt.step()
    sync()
    times.append(time.perf_counter() - start)
  report('mnist_step/first', times[0])
  report('mnist_step', statistics.median(times[1:]))


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument('--threads', type=int, default=os.cpu_count())
  parser.add_argument('--runs', type=int, default=5)
  parser.add_argument('--mnist_steps', type=int, default=8)
  parser.add_argument('--device', default='cpu', help='cpu, or cuda (timed with synchronizes)')
  parser.add_argument('--data_dir', default=FASHION_MNIST, help="Fashion-MNIST's gzipped IDX files")
  parser.add_argument('--no_tf32', action='store_true',
                      help="CUDA: no TF32 in cuDNN's convolutions either (PyTorch's default allows it there)")
  args = parser.parse_args()
  global DEVICE
  DEVICE = torch.device(args.device)
  if DEVICE.type == 'cuda':
    # PyTorch's default (no TF32 for float32 matmuls); cuDNN picks its fastest algorithms.
    torch.backends.cudnn.benchmark = True
    if args.no_tf32:
      torch.backends.cudnn.allow_tf32 = False
    runs = max(args.runs, 20)
    print(f'PyTorch {torch.__version__}, {torch.cuda.get_device_name()}, '
          f'TF32 matmul {torch.backends.cuda.matmul.allow_tf32}, '
          f'TF32 convolutions {torch.backends.cudnn.allow_tf32}', flush=True)
    matmul(4096, runs)
    matmul(4096, runs, torch.float16)
    conv3x3(16, 64, 56, runs)
  else:
    torch.set_num_threads(args.threads)
    print(f'PyTorch {torch.__version__}, {args.threads} threads, BLAS from '
          f'{os.path.realpath("/etc/alternatives/libblas.so.3-x86_64-linux-gnu")}', flush=True)
    matmul(1024, args.runs)
    matmul(4096, max(1, args.runs // 2))
    conv3x3(16, 64, 56, args.runs)
  if args.mnist_steps > 1 and os.path.isdir(args.data_dir):
    mnist_step(args.mnist_steps, args.data_dir)


if __name__ == '__main__':
  main()
