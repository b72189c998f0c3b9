# PyTorch's side of examples/beside_pytorch.sh: the workloads of //examples:workloads_benchmark, written as a
# PyTorch user would, on the CPU with the same thread count. Run with Debian's python3-torch (/usr/bin/python3).
#
#   /usr/bin/python3 examples/torch_workloads.py [--threads=2] [--mnist_steps=8]
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


def timed(fn, runs):
  fn()  # warm-up: allocations, oneDNN primitive creation
  times = []
  for _ in range(runs):
    start = time.perf_counter()
    fn()
    times.append(time.perf_counter() - start)
  return statistics.median(times)


def report(name, seconds, flops=None):
  rate = f'{flops / seconds / 1e9:10.1f} GFLOPS' if flops else ''
  print(f'{name:<28} {seconds * 1e3:10.2f} ms {rate}', flush=True)


def matmul(n, runs):
  a, b = torch.rand(n, n), torch.rand(n, n)
  report(f'matmul/{n}', timed(lambda: a @ b, runs), 2.0 * n**3)


def conv3x3(batch, channels, size, runs):
  # A ResNet stage-1 3x3 convolution: channels -> channels, stride 1, padding 1.
  x = torch.rand(batch, channels, size, size, requires_grad=True)
  w = torch.rand(channels, channels, 3, 3, requires_grad=True)
  flops = 2.0 * batch * channels * channels * 9 * size * size
  name = f'conv3x3/{batch}x{channels}x{size}'
  with torch.no_grad():
    report(f'{name}/fwd', timed(lambda: nn.functional.conv2d(x, w, padding=1), runs), flops)

  def step():
    x.grad, w.grad = None, None
    nn.functional.conv2d(x, w, padding=1).sum().backward()

  report(f'{name}/fwd+bwd', timed(step, runs), 3 * flops)


def mnist_step(steps):
  def idx(name, offset):
    with gzip.open(os.path.join(FASHION_MNIST, name), 'rb') as f:
      return np.frombuffer(f.read(), np.uint8, offset=offset)

  images = torch.tensor(idx('train-images-idx3-ubyte.gz', 16).reshape(-1, 1, 28, 28).astype(np.float32))
  labels = torch.tensor(idx('train-labels-idx1-ubyte.gz', 8).astype(np.int64))
  torch.manual_seed(42)
  # tinygrad's beautiful_mnist model, Adam, batch 512, raw 0-255 pixels.
  model = nn.Sequential(nn.Conv2d(1, 32, 5), nn.ReLU(), nn.Conv2d(32, 32, 5), nn.ReLU(), nn.BatchNorm2d(32),
                        nn.MaxPool2d(2), nn.Conv2d(32, 64, 3), nn.ReLU(), nn.Conv2d(64, 64, 3), nn.ReLU(),
                        nn.BatchNorm2d(64), nn.MaxPool2d(2), nn.Flatten(1), nn.Linear(576, 10))
  opt = torch.optim.Adam(model.parameters())
  times = []
  for _ in range(steps):
    start = time.perf_counter()
    sample = torch.randint(0, images.shape[0], (512,))
    loss = nn.functional.cross_entropy(model(images[sample]), labels[sample])
    opt.zero_grad()
    loss.backward()
    opt.step()
    times.append(time.perf_counter() - start)
  report('mnist_step/first', times[0])
  report('mnist_step', statistics.median(times[1:]))


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument('--threads', type=int, default=os.cpu_count())
  parser.add_argument('--runs', type=int, default=5)
  parser.add_argument('--mnist_steps', type=int, default=8)
  args = parser.parse_args()
  torch.set_num_threads(args.threads)
  print(f'PyTorch {torch.__version__}, {args.threads} threads, BLAS from '
        f'{os.path.realpath("/etc/alternatives/libblas.so.3-x86_64-linux-gnu")}', flush=True)
  matmul(1024, args.runs)
  matmul(4096, max(1, args.runs // 2))
  conv3x3(16, 64, 56, args.runs)
  if args.mnist_steps > 1 and os.path.isdir(FASHION_MNIST):
    mnist_step(args.mnist_steps)


if __name__ == '__main__':
  main()
