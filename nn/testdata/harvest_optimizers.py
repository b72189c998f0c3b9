# Trains the corpus's optimizer model (corpus README section 8) with tinygrad v0.10.3's LARS and LAMB for four
# steps and prints one JSON line per optimizer in grad_programs.jsonl's optimizer format
# (nn/testdata/optimizer_steps_extra.jsonl, read by //nn:optim_test beside the corpus's four).
# Usage: cd /work/tinygrad-src && CPU=1 PYTHONPATH=. python3 /path/to/harvest_optimizers.py > optimizer_steps_extra.jsonl
import json
from tinygrad import Tensor, dtypes
from tinygrad.nn.optim import LARS, LAMB

def value(b, j):
  k = ((j * 2654435761 + b * 40503 + 12345) % 2**32) >> 8
  return (k % 2049 - 1024) / 512

def R(*shape, seed=0, scale=None):
  n = 1
  for s in shape: n *= s
  t = Tensor([value(seed + 1, j) for j in range(n)], dtype=dtypes.float32).reshape(shape).contiguous().realize()
  return t if scale is None else (t * scale).contiguous().realize()

MODEL = ("x=R(8,5); y=[labels]; w1=R(5,6,seed=1,scale=0.5); b1=R(6,seed=2,scale=0.1); w2=R(6,3,seed=3,scale=0.5); "
         "loss=((x@w1+b1).relu()@w2).sparse_categorical_crossentropy(y); 4 steps of zero_grad, backward, step")
for name, python, make in [
    ("lars", "LARS(lr=0.1)", lambda p: LARS(p, lr=0.1)),
    ("lars_nesterov_modern", "LARS(lr=0.1, momentum=0.8, weight_decay=0.01, nesterov=True, classic=False)",
     lambda p: LARS(p, lr=0.1, momentum=0.8, weight_decay=0.01, nesterov=True, classic=False)),
    ("lamb", "LAMB(lr=0.01, weight_decay=0.05)", lambda p: LAMB(p, lr=0.01, weight_decay=0.05)),
]:
  x, y = R(8, 5), Tensor([0, 2, 1, 1, 0, 2, 2, 1])
  w1, b1, w2 = R(5, 6, seed=1, scale=0.5), R(6, seed=2, scale=0.1), R(6, 3, seed=3, scale=0.5)
  for t in (w1, b1, w2): t.requires_grad = True
  opt = make([w1, b1, w2])
  steps = []
  with Tensor.train():
    for _ in range(4):
      opt.zero_grad()
      loss = ((x @ w1 + b1).relu() @ w2).sparse_categorical_crossentropy(y)
      loss.backward()
      Tensor.realize(loss, *opt.schedule_step())
      steps.append({"loss": loss.item(), "params": [t.flatten().tolist() for t in (w1, b1, w2)]})
  print(json.dumps({"optimizer": name, "python": python, "model": MODEL, "steps": steps}))
