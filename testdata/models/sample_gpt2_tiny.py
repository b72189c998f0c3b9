# Sampled generation with tinygrad v0.10.3's examples/gpt2.py on the tiny GPT-2: Tensor.manual_seed(SEED) before
# the model is built, then the prompt and NEW tokens at TEMPERATURE, as gpt2.py runs them (the JIT, a symbolic
# start_pos). Prints the generated tokens; //examples:gpt2_sampled_test checks the first 12 of
#   CPU=1 PYTHONPATH=$TG:$TG/examples python3 testdata/models/sample_gpt2_tiny.py 42 0.8 40
# (README.md lists all 40), which //examples:gpt2 --temperature=0.8 --seed=42 generates too.
import os, sys
from tinygrad import Tensor, Variable
from tinygrad.nn.state import safe_load, load_state_dict
from gpt2 import Transformer, MAX_CONTEXT
seed, temp, new = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
Tensor.manual_seed(seed)
model = Transformer(dim=64, n_heads=4, n_layers=2, norm_eps=1e-5, vocab_size=256, max_seq_len=MAX_CONTEXT)
load_state_dict(model, safe_load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpt2_tiny.safetensors")))
prompt = list(b"The quick brown fox"); toks = list(prompt); start_pos = 0
for i in range(new):
  if len(toks[start_pos:]) == 1: tokens = Variable("tokens", 0, 256).bind(toks[start_pos])
  else: tokens = Tensor([toks[start_pos:]])
  tok = model(tokens, Variable("start_pos", 1 if start_pos else 0, MAX_CONTEXT - 1).bind(start_pos), temp).tolist()
  start_pos = len(toks); toks.append(tok[0])
print(toks[len(prompt):])
