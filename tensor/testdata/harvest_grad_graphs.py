# Writes grad_graphs.jsonl: for every gradient program of the reference corpus's grad_programs.jsonl, and for the
# programs of our own in OURS, the graph tinygrad v0.10.3 schedules for the loss and its gradients (the SINK of loss,
# *loss.gradient(*inputs), inputs realized), how many kernels that schedule has, and the loss; a program of our own
# also gets its gradients' values (`grads`, as grad_programs.jsonl has them for the corpus's). //tensor:grad_programs_test
# checks the graph its C++ program (tensor/testing/grad_programs.cc) builds against `graph`. UNIQUE args are
# renumbered in toposort order. The corpus's `python` field is a short notation; PROGRAMS below is the exact Python
# each line was run as here.
# Run from the root of this checkout:
#   CPU=1 python3 tensor/testdata/harvest_grad_graphs.py /work/tinygrad-src > tensor/testdata/grad_graphs.jsonl
# With --by-device after the path it writes nothing: it schedules every program with unrealized inputs
# (Tensor.empty) on each device in BY_DEVICE, none of which it opens, and prints the programs whose kernels (count
# and ASTs) differ from CPU's; tinygrad v0.10.3 prints none (//tensor:schedule_targets_test holds uopc to that).
import json, os, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../testdata"))
from tinygrad import Tensor, dtypes
from tinygrad.ops import UOp
from tinygrad.engine.realize import run_schedule
from tinygrad_harvest import R, to_ir

def T(data, **kw): return Tensor(data, **kw).realize()

def bn(x, w, b):  # BatchNorm in training: the batch's statistics, the mean detached in the variance
  axes = (0, 2, 3)
  mean = x.mean(axis=axes)
  y = x - mean.detach().reshape(1, -1, 1, 1)
  var = (y * y).mean(axis=axes)
  return x.batchnorm(w, b, mean, var.add(1e-5).rsqrt())

# name -> (inputs, loss): Python run with R, T and bn defined.
PROGRAMS = {
  "add_mul": "a=R(4,5); b=R(4,5,seed=1); ins=[a,b]; loss=((a+b)*a).sum()",
  "sub_div": "a=R(6); b=R(6,seed=1); ins=[a,b]; loss=((a-b)/(b.abs()+1)).sum()",
  "broadcast_add": "a=R(3,1,4); b=R(5,1,seed=1); ins=[a,b]; loss=(a+b).square().mean()",
  "matmul": "a=R(8,16); b=R(16,4,seed=1); ins=[a,b]; loss=(a@b).sum()",
  "matmul_relu_mean": "a=R(5,7); w=R(7,3,seed=1); ins=[a,w]; loss=(a@w).relu().mean()",
  "unary_chain": "a=R(20); ins=[a]; loss=(a.exp()+(a.abs()+1).log()+(a.abs()+0.5).sqrt()).sum()",
  "sigmoid_tanh": "a=R(30); ins=[a]; loss=(a.sigmoid()*a.tanh()).sum()",
  "trig": "a=R(25); ins=[a]; loss=(a.sin()*a.cos()).sum()",
  "pow_recip": "a=R(12); ins=[a]; loss=((a.abs()+0.5)**1.5 + 1/(a.abs()+1)).sum()",
  "max_reduce": "a=R(6,9); ins=[a]; loss=a.max(axis=1).sum()",
  "max_ties": "a=R(3,1); b=R(3,2,seed=1); ins=[a,b]; loss=(a.expand(3,4).cat(b-3,dim=1)).max(axis=1).sum()",
  "maximum_minimum": "a=R(15); b=R(15,seed=1); ins=[a,b]; loss=(a.maximum(b)-a.minimum(0.25)).sum()",
  "where_cmp": "a=R(16); b=R(16,seed=1); ins=[a,b]; loss=(a>b).where(a*b, a-b).sum()",
  "softmax": "a=R(4,10); ins=[a]; loss=(a.softmax()*R(4,10,seed=1)).sum()",
  "log_softmax": "a=R(3,7); ins=[a]; loss=(a.log_softmax()*R(3,7,seed=1)).sum()",
  "cross_entropy": "x=R(8,10); y=T([3,0,9,1,1,5,7,2]); ins=[x]; loss=x.sparse_categorical_crossentropy(y)",
  "binary_crossentropy": "x=R(12); y=R(12,dtype=dtypes.bool,seed=1); ins=[x]; loss=x.binary_crossentropy_logits(y.float())",
  "layernorm": "a=R(4,16); ins=[a]; loss=(a.layernorm()*R(16,seed=1)).sum()",
  "var_std": "a=R(5,11); ins=[a]; loss=a.var(axis=1).sum()+a.std(axis=0).sum()",
  "gelu_swish": "a=R(40); ins=[a]; loss=(a.gelu()+a.swish()).sum()",
  "movement": "a=R(4,6); ins=[a]; loss=(a.permute(1,0).reshape(3,8).pad(((1,0),(0,2))).shrink(((0,3),(1,9)))*R(3,8,seed=1)).sum()",
  "expand_flip": "a=R(1,5); ins=[a]; loss=(a.expand(4,5).flip(1)*R(4,5,seed=1)).sum()",
  "cumsum": "a=R(3,9); ins=[a]; loss=(a.cumsum(axis=1)*R(3,9,seed=1)).sum()",
  "cat_index": "a=R(3,4); b=R(2,4,seed=1); ins=[a,b]; loss=(a.cat(b)[1:4]*2).sum()",
  "gather": "a=R(5,6); idx=T([[0,2],[5,5],[1,0],[3,4],[2,2]]); ins=[a]; loss=a.gather(1, idx).sum()",
  "conv2d": "x=R(2,3,8,8); w=R(4,3,3,3,seed=1); b=R(4,seed=2); ins=[x,w,b]; loss=x.conv2d(w,b,padding=1).relu().mean()",
  "conv2d_stride_groups": "x=R(1,4,9,9); w=R(4,2,3,3,seed=1); ins=[x,w]; loss=x.conv2d(w,stride=2,groups=2).square().sum()",
  "max_pool": "x=R(1,2,6,6); ins=[x]; loss=(x.max_pool2d()*R(1,2,3,3,seed=1)).sum()",
  "avg_pool": "x=R(1,2,6,6); ins=[x]; loss=(x.avg_pool2d(kernel_size=(3,3),stride=1)).square().sum()",
  "batchnorm_train": "x=R(4,3,5,5); w=R(3,seed=1); b=R(3,seed=2); ins=[x,w,b]; loss=(bn(x,w,b)*R(4,3,5,5,seed=3)).sum()",
  "attention": "q=R(1,2,6,8); k=R(1,2,6,8,seed=1); v=R(1,2,6,8,seed=2); ins=[q,k,v]; loss=q.scaled_dot_product_attention(k,v,is_causal=True).sum()",
  "embedding_onehot": "w=R(10,4); idx=T([1,7,7,0,9]); ins=[w]; loss=(idx.one_hot(10)@w).square().sum()",
  "shared_subexpr": "a=R(7); ins=[a]; b=a*a; loss=(b*b+b).sum()",
  "mlp2": "x=R(4,6); w1=R(6,8,seed=1,scale=0.5); b1=R(8,seed=2); w2=R(8,3,seed=3,scale=0.5); ins=[x,w1,b1,w2]; loss=((x@w1+b1).relu()@w2).log_softmax().mean()",
}
# Programs of our own, not in the reference corpus.
OURS = {
  # issue 36: tinygrad schedules it as 17 kernels on every device (tensor/schedule_targets_test.cc)
  "conv_pool_logsumexp": "x=R(2,1,8,8); w=R(4,1,3,3,seed=1); m=R(36,10,seed=2); ins=[x,w,m]; loss=(x.conv2d(w).relu().max_pool2d().flatten(1)@m).logsumexp(1).mean()",
}
PROGRAMS.update(OURS)

def harvest():
  for name, python in PROGRAMS.items():
    Tensor.manual_seed(42)
    env = dict(R=R, T=T, bn=bn, Tensor=Tensor, dtypes=dtypes)
    exec(python, env)
    loss, ins = env["loss"], env["ins"]
    grads = loss.gradient(*ins)
    outs = [loss, *grads]
    graph = to_ir(UOp.sink(*[t.lazydata for t in outs]), {})
    schedule, var_vals = loss.schedule_with_vars(*grads)
    n_kernels = len(schedule)
    run_schedule(schedule, var_vals)
    line = {"program": name, "graph": graph, "n_kernels": n_kernels, "loss": loss.item()}
    if name in OURS: line["grads"] = [{"shape": list(g.shape), "values": g.flatten().tolist()} for g in grads]
    print(json.dumps(line))

BY_DEVICE = ["LLVM", "GPU", "METAL", "CUDA", "NV", "AMD", "PYTHON", "QCOM", "WEBGPU"]

def kernels_on(device):  # program -> the ASTs of its schedule, inputs on `device` and never realized
  def empty(*shape, dtype=dtypes.float32, seed=0, scale=None): return Tensor.empty(*shape, dtype=dtype, device=device)
  def literal(data):
    shape = []
    while isinstance(data, list): shape, data = shape + [len(data)], data[0]
    return Tensor.empty(*shape, dtype=dtypes.int32, device=device)
  out = {}
  for name, python in PROGRAMS.items():
    env = dict(R=empty, T=literal, bn=bn, Tensor=Tensor, dtypes=dtypes)
    exec(python, env)
    loss, ins = env["loss"], env["ins"]
    out[name] = [str(si.ast) for si in Tensor.schedule(loss, *loss.gradient(*ins))]
  return out

def by_device():
  cpu = kernels_on("CPU")
  for device in BY_DEVICE:
    there = kernels_on(device)
    print(device, "differs from CPU in:", [name for name in cpu if there[name] != cpu[name]])

if __name__ == "__main__":
  by_device() if sys.argv[2:] == ["--by-device"] else harvest()
