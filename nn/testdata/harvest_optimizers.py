# Trains the corpus's optimizer model (corpus README section 8) with tinygrad v0.10.3's LARS and LAMB for four
# steps and prints one JSON line per optimizer in grad_programs.jsonl's optimizer format
# (nn/testdata/optimizer_steps_extra.jsonl, read by //nn:optim_test beside the corpus's four).
# Usage: cd /work/tinygrad-src && CPU=1 PYTHONPATH=. python3 /path/to/harvest_optimizers.py > optimizer_steps_extra.jsonl
import json, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../testdata"))
from tinygrad import Tensor
from tinygrad.nn.optim import LARS, LAMB
from tinygrad_harvest import R

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
