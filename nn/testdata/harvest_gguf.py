# Writes nn/testdata/tiny.gguf (GGUF v3: one metadata key of every value type, arrays and nested arrays
# included, general.alignment 64, and one tensor of every GGML type tinygrad v0.10.3's ggml_data_to_tensor
# supports, from seeded random bytes) and loads it with tinygrad's gguf_load; tiny_gguf.expected.json holds
# what tinygrad returns: kv_data, and each tensor's dtype, shape and values (floats as their IEEE bit
# patterns, so the comparison is exact). Read by //nn:gguf_test.
# Usage: cd /tmp && CPU=1 python3 /path/to/harvest_gguf.py /path/to/tinygrad-v0.10.3 /path/to/nn/testdata
import json, os, pathlib, random, struct, sys
sys.path.insert(0, sys.argv[1])
from tinygrad import Tensor, dtypes
from tinygrad.nn.state import gguf_load

out_dir = sys.argv[2]
rng = random.Random(38)

def gguf_str(s: bytes) -> bytes: return struct.pack("<Q", len(s)) + s

# (value type, struct format) of the scalar GGUF types.
SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}

def value(typ, v) -> bytes:
  if typ == 8: return gguf_str(v)
  if typ == 9:
    elem_typ, items = v
    return struct.pack("<iQ", elem_typ, len(items)) + b"".join(value(elem_typ, x) for x in items)
  return struct.pack("<" + SCALARS[typ], v)

kvs = [
  ("general.architecture", 8, b"llama"),
  ("test.uint8", 0, 200), ("test.int8", 1, -100), ("test.uint16", 2, 60000), ("test.int16", 3, -30000),
  ("test.uint32", 4, 4000000000), ("test.int32", 5, -2000000000), ("test.float32", 6, 0.1),
  ("test.bool", 7, True), ("test.string", 8, "h\u00e9llo".encode()), ("test.uint64", 10, 2**63 + 5),
  ("test.int64", 11, -2**62), ("test.float64", 12, 2.5e-300),
  ("test.array.int32", 9, (5, [1, -2, 3])), ("test.array.string", 9, (8, [b"a", b"", b"bc"])),
  ("test.array.empty", 9, (6, [])), ("test.array.nested", 9, (9, [(0, [1, 2]), (12, [0.5])])),
  ("general.alignment", 4, 64),
]

def f16_scale() -> bytes: return struct.pack("<e", rng.uniform(-2, 2))
def rand_bytes(n: int) -> bytes: return bytes(rng.randrange(256) for _ in range(n))

# (name, ggml type, dims as the file lists them (innermost first), data)
tensors = []
tensors.append(("f32", 0, (5, 3), struct.pack("<15f", *[rng.uniform(-10, 10) for _ in range(15)])))
tensors.append(("f16", 1, (7,), struct.pack("<7e", *[rng.uniform(-10, 10) for _ in range(7)])))
tensors.append(("q4_0", 2, (64, 2), b"".join(f16_scale() + rand_bytes(16) for _ in range(4))))
tensors.append(("q4_1", 3, (32, 3), b"".join(f16_scale() + f16_scale() + rand_bytes(16) for _ in range(3))))
tensors.append(("q8_0", 8, (32, 2), b"".join(f16_scale() + rand_bytes(32) for _ in range(2))))
tensors.append(("q6_k", 14, (256, 2), b"".join(rand_bytes(192) + rand_bytes(16) + f16_scale() for _ in range(2))))
tensors.append(("i8", 16, (6,), rand_bytes(6)))
tensors.append(("i16", 17, (2, 2), rand_bytes(8)))
tensors.append(("i32", 18, (3,), rand_bytes(12)))
tensors.append(("scalar_like", 0, (1,), struct.pack("<f", 1.5)))

ALIGN = 64
header = b"GGUF" + struct.pack("<iqq", 3, len(tensors), len(kvs))
for k, typ, v in kvs: header += gguf_str(k.encode()) + struct.pack("<i", typ) + value(typ, v)
data, offsets = b"", []
for name, typ, dims, d in tensors:
  offsets.append(len(data))
  data += d + b"\0" * (-len(d) % ALIGN)
for (name, typ, dims, d), off in zip(tensors, offsets):
  header += gguf_str(name.encode()) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims)
  header += struct.pack("<iQ", typ, off)
blob = header + b"\0" * (-len(header) % ALIGN) + data
with open(os.path.join(out_dir, "tiny.gguf"), "wb") as f: f.write(blob)

kv_data, state_dict = gguf_load(Tensor(pathlib.Path(out_dir) / "tiny.gguf").to("CPU"))

def jsonable(v):
  if isinstance(v, bytes): return v[0]  # tinygrad reads GGUF's uint8 as a 1-byte bytes object
  if isinstance(v, list): return [jsonable(x) for x in v]
  return v

BITS = {dtypes.float32: dtypes.uint32, dtypes.float16: dtypes.uint16}
expected = {"kv": [[k, jsonable(v)] for k, v in kv_data.items()], "tensors": []}
for name, t in state_dict.items():
  vals = (t.bitcast(BITS[t.dtype]) if t.dtype in BITS else t).flatten().tolist()
  expected["tensors"].append({"name": name, "dtype": t.dtype.name, "shape": list(t.shape), "values": vals})
with open(os.path.join(out_dir, "tiny_gguf.expected.json"), "w") as f:
  json.dump(expected, f, indent=None, separators=(",", ":"))
  f.write("\n")
