# Writes gpt2_tiny.gguf: the weights of gpt2_tiny.safetensors in a GGUF v3 file as llama.cpp's converter names a
# GPT-2 (token_embd, position_embd, blk.N.attn_qkv, ..., output), float32, with the gpt2.* size metadata, so that
# //examples:gpt2 --weights=testdata/models/gpt2_tiny.gguf generates the same tokens as from the safetensors file.
# Pure Python (no tinygrad needed): python3 testdata/models/make_gpt2_tiny_gguf.py testdata/models
import json, os, struct, sys

d = sys.argv[1]
raw = open(os.path.join(d, "gpt2_tiny.safetensors"), "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
data = raw[8 + n:]
meta = json.load(open(os.path.join(d, "gpt2_tiny.expected.json")))["config"]

RENAME = {"wte.weight": "token_embd.weight", "wpe.weight": "position_embd.weight", "ln_f.weight": "output_norm.weight",
          "ln_f.bias": "output_norm.bias", "lm_head.weight": "output.weight"}
BLOCK = {"ln_1": "attn_norm", "attn.c_attn": "attn_qkv", "attn.c_proj": "attn_output", "ln_2": "ffn_norm",
         "mlp.c_fc": "ffn_up", "mlp.c_proj": "ffn_down"}
def gguf_name(key):
  if key in RENAME: return RENAME[key]
  _, block, rest = key.split(".", 2)
  module, param = rest.rsplit(".", 1)
  return f"blk.{block}.{BLOCK[module]}.{param}"

def gguf_str(s): return struct.pack("<Q", len(s)) + s
kvs = [(b"general.architecture", 8, gguf_str(b"gpt2")), (b"general.alignment", 4, struct.pack("<I", 32)),
       (b"gpt2.context_length", 4, struct.pack("<I", meta["max_context"])),
       (b"gpt2.embedding_length", 4, struct.pack("<I", meta["dim"])),
       (b"gpt2.block_count", 4, struct.pack("<I", meta["n_layers"])),
       (b"gpt2.attention.head_count", 4, struct.pack("<I", meta["n_heads"])),
       (b"gpt2.attention.layer_norm_epsilon", 6, struct.pack("<f", meta["norm_eps"]))]
tensors = []
for key, info in header.items():
  if key == "__metadata__": continue
  assert info["dtype"] == "F32", key
  begin, end = info["data_offsets"]
  tensors.append((gguf_name(key).encode(), list(reversed(info["shape"])), data[begin:end]))
out = b"GGUF" + struct.pack("<iqq", 3, len(tensors), len(kvs))
for k, typ, v in kvs: out += gguf_str(k) + struct.pack("<i", typ) + v
blob, offsets = b"", []
for _, _, t in tensors:
  offsets.append(len(blob))
  blob += t + b"\0" * (-len(t) % 32)
for (name, dims, _), off in zip(tensors, offsets):
  out += gguf_str(name) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims) + struct.pack("<iQ", 0, off)
out += b"\0" * (-len(out) % 32) + blob
open(os.path.join(d, "gpt2_tiny.gguf"), "wb").write(out)
print(f"wrote {len(tensors)} tensors, {len(out)} bytes")
