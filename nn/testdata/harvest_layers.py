# Runs tinygrad v0.10.3's nn layers on fixed inputs after fixed seeds and prints their parameters and outputs
# as JSON (nn/testdata/layers_expected.json, read by //nn:layers_test).
# Usage: cd /work/tinygrad-src && CPU=1 PYTHONPATH=. python3 /path/to/harvest_layers.py > layers_expected.json
import json
from tinygrad import Tensor, nn, dtypes

out = {}

def rec(name, t):
  out[name] = {"shape": list(t.shape), "values": t.flatten().tolist()}

def ramp(*shape, scale=0.01, offset=-0.5):
  n = 1
  for s in shape: n *= s
  return (Tensor.arange(n).float() * scale + offset).reshape(*shape)

Tensor.manual_seed(0)
lin = nn.Linear(3, 4)
rec("linear.weight", lin.weight); rec("linear.bias", lin.bias)
rec("linear.out", lin(ramp(2, 3, scale=0.25)))

Tensor.manual_seed(1)
conv = nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2)
rec("conv.weight", conv.weight); rec("conv.bias", conv.bias)
rec("conv.out", conv(ramp(2, 4, 5, 5)))

Tensor.manual_seed(2)
conv_same = nn.Conv2d(2, 3, (3, 2), padding='same', dilation=2, bias=False)
rec("conv_same.out", conv_same(ramp(1, 2, 6, 5, scale=0.03)))

Tensor.manual_seed(3)
convt = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
rec("convt.weight", convt.weight); rec("convt.bias", convt.bias)
rec("convt.out", convt(ramp(2, 4, 3, 3)))

Tensor.manual_seed(4)
convt2 = nn.ConvTranspose2d(2, 3, (2, 3), stride=(1, 2), dilation=(2, 1), bias=False)
rec("convt2.out", convt2(ramp(1, 2, 4, 3, scale=0.05)))

bn = nn.BatchNorm(3)
x = (ramp(4, 3, 2, 2, scale=0.1) * ramp(4, 3, 2, 2, scale=0.02, offset=-0.3)).realize()
with Tensor.train():
  rec("bn.train_out", bn(x))
  Tensor.realize(bn.running_mean, bn.running_var, bn.num_batches_tracked)
  rec("bn.train_out2", bn(x + 1))
rec("bn.running_mean", bn.running_mean); rec("bn.running_var", bn.running_var)
rec("bn.num_batches_tracked", bn.num_batches_tracked)
rec("bn.eval_out", bn(x))

ln = nn.LayerNorm((2, 3))
rec("layernorm.out", ln(ramp(2, 2, 3, scale=0.3).square()))

gn = nn.GroupNorm(2, 4)
rec("groupnorm.out", gn(ramp(2, 4, 3, scale=0.07).exp()))

rms = nn.RMSNorm(5)
rec("rmsnorm.out", rms(ramp(2, 5, scale=0.2)))

Tensor.manual_seed(5)
emb = nn.Embedding(10, 3)
rec("embedding.weight", emb.weight)
rec("embedding.out", emb(Tensor([[1, 2], [9, 0], [2, 2]])))

Tensor.manual_seed(6)
rec("init.glorot", Tensor.glorot_uniform(3, 4))
rec("init.kaiming", Tensor.kaiming_uniform(3, 4, 2))
rec("init.scaled", Tensor.scaled_uniform(2, 3))

Tensor.manual_seed(7)
conv1d = nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2)
rec("conv1d.weight", conv1d.weight); rec("conv1d.bias", conv1d.bias)
rec("conv1d.out", conv1d(ramp(2, 4, 7)))

Tensor.manual_seed(8)
convt1d = nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, dilation=2, groups=2)
rec("convt1d.weight", convt1d.weight); rec("convt1d.bias", convt1d.bias)
rec("convt1d.out", convt1d(ramp(2, 4, 5, scale=0.05)))

inorm = nn.InstanceNorm(3)
rec("instancenorm.out", inorm(ramp(2, 3, 2, 3, scale=0.09).exp()))
rec("instancenorm.out1d", nn.InstanceNorm(3, affine=False)(ramp(2, 3, 4, scale=0.11).square()))

ln2d = nn.LayerNorm2d(3)
rec("layernorm2d.out", ln2d(ramp(2, 3, 2, 2, scale=0.13).square()))

Tensor.manual_seed(9)
lstm = nn.LSTMCell(3, 2)
rec("lstm.weight_ih", lstm.weight_ih); rec("lstm.weight_hh", lstm.weight_hh)
h, c = lstm(ramp(4, 3, scale=0.2))
rec("lstm.h", h); rec("lstm.c", c)
h2, c2 = lstm(ramp(4, 3, scale=0.1, offset=0.3), (h, c))
rec("lstm.h2", h2); rec("lstm.c2", c2)

print(json.dumps(out, indent=1))
