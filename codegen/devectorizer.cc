#include "codegen/devectorizer.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "renderer/cstyle.h"
#include "rewrite/graph_rewrite.h"
#include "rewrite/symbolic.h"
#include "rewrite/symbolic_folding.h"
#include "rewrite/valid.h"
#include "uop/kernel_info.h"

namespace uopc {
namespace {

// A pointer to `ptr`'s pointee with its size and locality, as a vector of `count` pointers when count > 1.
DType PtrLike(DType ptr, DType base, int count = 1) {
  DType p = base.Ptr(ptr.ptr_size(), ptr.is_local());
  return count > 1 ? p.Vec(count) : p;
}

// GEP that keeps pointer dtypes (tinygrad's PtrDType.scalar() stays a pointer; uopc's DType::scalar() does
// not).
UOpPtr GepKeepingPtr(const UOpPtr& x, const std::vector<int64_t>& idx) {
  if (!x->dtype().is_ptr()) return x.gep(idx);
  if (idx.size() == 1 && x->op() == Ops::VECTORIZE) return x->src()[idx[0]];
  DType out = PtrLike(x->dtype(), x->dtype().base(), static_cast<int>(idx.size()));
  return UOp::New(Ops::GEP, out, {x}, Arg::IntTuple(idx));
}

std::vector<int64_t> Iota(int64_t begin, int64_t end) {
  std::vector<int64_t> v;
  for (int64_t i = begin; i < end; ++i) v.push_back(i);
  return v;
}

std::vector<int64_t> IntsOf(const Arg& arg) {
  std::vector<int64_t> v;
  for (const Arg& a : arg.as_tuple()) v.push_back(a.as_int());
  return v;
}

// ---- load_store_indexing ----

UOpPtr SimplifyValidLoad(const UOpPtr& buf, const UOpPtr& start_idx, const UOpPtr& valid) {
  UOpPtr idx = UopGivenValid(valid, start_idx);
  // A valid that never holds: a null pointer, as sym makes of an INDEX gated by False.
  if (idx == nullptr) return buf.const_like(0);
  return idx == start_idx ? nullptr : buf.index(idx, valid);
}

UOpPtr DeleteRedundantGates(const Match& m) {
  const UOpPtr& val = m["val"];
  const UOp* gate = m["store_gate"].get();
  bool gated_by_if = false;
  for (const UOp* u : val->Toposort()) {
    if (u->op() == Ops::IF && u->src(0) == gate) {
      gated_by_if = true;
      break;
    }
  }
  if (!gated_by_if) return nullptr;
  UOpPtr idx = m["buf"].index(m["idx"]);
  if (m.has("cast")) idx = idx.cast(m["cast"]->dtype());
  return idx.store({val});
}

// ---- load/store grouping ----

// One INDEX per element of `vec` (and `mask`), folded; then runs of consecutive offsets from the same root
// (and gate) become one vector pointer each, and a GEP of their PTRCAT gives every element back in order.
UOpPtr ExpandIndex(const UOpPtr& buf, const UOpPtr& vec, const UOpPtr& mask) {
  const int count = vec->dtype().count();
  std::vector<UOpPtr> indexes;
  for (int i = 0; i < count; ++i) indexes.push_back(buf.index(vec.gep(i), mask ? mask.gep(i) : nullptr));
  static const PatternMatcher* const kIndexRules = new PatternMatcher(SymbolicFlat() + LoadStoreIndexing());
  UOpPtr midx = GraphRewrite(UOp::Sink(indexes), *kIndexRules, {.name = "expand_index"});
  // An element whose gate can never hold became a null pointer (tinygrad fails here); leave the vector INDEX.
  for (const UOpPtr& index : midx->src()) {
    if (index->op() != Ops::INDEX) return nullptr;
  }

  // Offsets grouped by root expression (and gate), in order of first appearance like tinygrad's dicts.
  struct Root {
    const UOp* gate;
    const UOp* expr;  // null for a constant index
    std::map<absl::int128, std::vector<int>> offsets;
  };
  std::vector<Root> roots;
  for (int i = 0; i < count; ++i) {
    const UOp* index = midx->src(i);
    const UOp* idx = index->src(1);
    const UOp* expr = idx;
    absl::int128 offset = 0;
    if (idx->op() == Ops::ADD && idx->src(1)->op() == Ops::CONST) {
      expr = idx->src(0), offset = idx->src(1)->const_value().AsInt();
    } else if (idx->op() == Ops::ADD && idx->src(0)->op() == Ops::CONST) {
      expr = idx->src(1), offset = idx->src(0)->const_value().AsInt();
    } else if (idx->op() == Ops::CONST) {
      expr = nullptr, offset = idx->const_value().AsInt();
    }
    const UOp* gate = index->num_src() == 3 ? index->src(2) : nullptr;
    auto it = std::find_if(roots.begin(), roots.end(),
                           [&](const Root& r) { return r.gate == gate && r.expr == expr; });
    if (it == roots.end()) it = roots.insert(roots.end(), Root{gate, expr, {}});
    it->offsets[offset].push_back(i);
  }

  const DType ptr = buf->dtype();
  std::vector<UOpPtr> pieces;
  std::vector<int64_t> idxs(count, -1);
  int64_t global_offset = 0;
  for (const Root& root : roots) {
    std::vector<absl::int128> keys;
    for (const auto& [k, unused] : root.offsets) keys.push_back(k);
    for (size_t start = 0; start < keys.size();) {
      size_t end = start + 1;
      while (end < keys.size() && keys[end] == keys[end - 1] + 1) ++end;
      const int len = static_cast<int>(end - start);
      UOpPtr lidx(midx->src(root.offsets.at(keys[start])[0]));
      if (len > 1) lidx = lidx.cast(PtrLike(ptr, ptr.base().Vec(len)));
      for (int j = 0; j < len; ++j) {
        for (int element : root.offsets.at(keys[start + j])) idxs[element] = global_offset + j;
      }
      pieces.push_back(lidx);
      global_offset += len;
      start = end;
    }
  }
  UOpPtr post_cat = UOp::New(Ops::PTRCAT, PtrLike(ptr, ptr.base(), count), pieces);
  return GepKeepingPtr(post_cat, idxs);
}

UOpPtr CatAfterStore(const UOpPtr& cat, const UOpPtr& data) {
  std::vector<UOpPtr> stores;
  int64_t offset = 0;
  for (const UOpPtr& s : cat->src()) {
    const int n = s->dtype().count();
    stores.push_back(s.store({data.gep(Iota(offset, offset + n))}));
    offset += n;
  }
  return UOp::Sink(stores);
}

UOpPtr GepOnStore(const UOpPtr& gep, const UOpPtr& st) {
  // Inverts the GEP's permutation (the last position of a repeated element wins, as in tinygrad).
  std::map<int64_t, int64_t> position;
  const std::vector<int64_t> arg = IntsOf(gep->arg());
  for (size_t i = 0; i < arg.size(); ++i) position[arg[i]] = static_cast<int64_t>(i);
  std::vector<int64_t> inverse;
  for (const auto& [unused, i] : position) inverse.push_back(i);
  return UOp::New(Ops::STORE, dtypes::kVoid, {gep->src()[0], st.gep(inverse)});
}

// ---- correct_load_store ----

UOpPtr SplitLoadStore(const DevectorizeContext* ctx, const UOpPtr& ls, const UOpPtr& idx) {
  const Renderer* renderer = ctx != nullptr ? ctx->renderer : nullptr;
  const int size = ls->src(0)->dtype().count();
  if (size == 1) return nullptr;
  const UOpPtr& buf = idx->src()[0];
  const DType ptr = buf->dtype();
  std::vector<int> lengths;
  bool must_divide = true;
  if (renderer != nullptr && renderer->device() == "DSP") {
    lengths = {128, 64, 32, 16, 8, 4};
    must_divide = false;
  } else if (ptr.base() != dtypes::kFloat32 && ptr.base() != dtypes::kFloat16) {
    // Only float and half vectors are folded.
  } else if (renderer != nullptr && renderer->supports_float4()) {
    lengths = {4, 2};
    // A kernel that keeps float32 vectors loads and stores them whole.
    if (ptr.base() == dtypes::kFloat32) {
      for (int len = 8; len <= ctx->vector_width; len *= 2) lengths.insert(lengths.begin(), len);
    }
  }
  lengths.push_back(1);
  if (must_divide) {
    std::vector<int> dividing;
    for (int len : lengths) {
      if (Divides(idx->src(1), len) != nullptr) dividing.push_back(len);
    }
    lengths = dividing;
  }

  std::vector<UOpPtr> pieces;
  for (int offset = 0; offset < size;) {
    for (int len : lengths) {
      if (offset + len > size) continue;
      UOpPtr lidx = buf.index(idx->src()[1] + offset, idx->num_src() > 2 ? idx->src()[2] : nullptr);
      if (len > 1) lidx = lidx.cast(PtrLike(ptr, ptr.base().Vec(len)));
      std::vector<UOpPtr> src(ls->src().begin(), ls->src().end());
      src[0] = lidx;
      if (ls->op() == Ops::STORE) {
        src[1] = ls->src()[1].gep(Iota(offset, offset + len));
        pieces.push_back(UOp::New(ls->op(), ls->dtype(), src, ls->arg()));
      } else {
        pieces.push_back(UOp::New(ls->op(), ls->dtype().scalar().Vec(len), src, ls->arg()));
      }
      offset += len;
      break;
    }
  }
  return pieces.size() > 1 ? UOp::New(Ops::CAT, ls->dtype(), pieces) : nullptr;
}

// The lanes a vector `op` of dtype `dt` keeps together in a kernel with the VECTOR opt (ctx->vector_width):
// the largest power of two within that width that divides the lanes, for the float32 arithmetic a C vector
// expression writes exactly as the scalar one (no reordering, so every lane computes what tinygrad's scalar
// code does); 1 for everything else, which devectorizes to scalars as tinygrad does.
int KeptLanes(const DevectorizeContext* ctx, Ops op, DType dt) {
  static constexpr OpSet kVectorOps{Ops::ADD, Ops::MUL, Ops::SUB, Ops::NEG, Ops::ASSIGN, Ops::DEFINE_ACC};
  if (ctx == nullptr || ctx->vector_width == 1 || !kVectorOps.contains(op) ||
      dt.scalar() != dtypes::kFloat32) {
    return 1;
  }
  int lanes = ctx->vector_width;
  while (lanes > 1 && dt.count() % lanes != 0) lanes /= 2;
  return lanes;
}

// An accumulator or its ASSIGN as `width`-lane pieces: VECTORIZE(piece.gep(i)...) lane by lane, which
// gep_pushing folds back into whole pieces where a consumer takes one. `piece` builds the piece that starts
// at a lane.
template <typename PieceFn>
UOpPtr SplitIntoPieces(const UOpPtr& u, int width, PieceFn piece) {
  const int count = u->dtype().count();
  if (count == width) return nullptr;
  std::vector<UOpPtr> lanes;
  for (int start = 0; start < count; start += width) {
    UOpPtr p = piece(start);
    for (int i = 0; i < width; ++i) lanes.push_back(width == 1 ? p : p.gep(i));
  }
  return UOp::New(Ops::VECTORIZE, u->dtype(), lanes);
}

// On a target that keeps vectors an ALU op is not split here: its consumers take it in pieces (a split
// ASSIGN, a store split to the target's widths), and gep_pushing moves each piece's GEP through it, which
// makes the narrower ALU ops. (A VECTORIZE of one-lane GEPs of pieces would be pushed through them lane by
// lane instead.) Whatever stays wider than the target is made scalar in the renderer's final rewrite.
UOpPtr DevectorizeAlu(const DevectorizeContext* ctx, const UOpPtr& alu) {
  const int width = KeptLanes(ctx, alu->op(), alu->dtype());
  if (width == 1) return NoVectorizedAlu(alu.get());
  if (alu->op() != Ops::ASSIGN) return nullptr;
  return SplitIntoPieces(alu, width, [&](int start) {
    std::vector<UOpPtr> src;
    for (const UOpPtr& s : alu->src()) src.push_back(s.gep(Iota(start, start + width)));
    return UOp::New(alu->op(), alu->dtype().scalar().Vec(width), src, alu->arg());
  });
}

// tinygrad's no_vectorized_acc: one accumulator per lane (per piece on a target that keeps vectors), its
// number extended by the lane's (the piece's first lane's).
UOpPtr DevectorizeAcc(const DevectorizeContext* ctx, const UOpPtr& acc) {
  if (acc->dtype().count() == 1) return nullptr;
  const int width = KeptLanes(ctx, Ops::DEFINE_ACC, acc->dtype());
  return SplitIntoPieces(acc, width, [&](int start) {
    std::vector<UOpPtr> src(acc->src().begin(), acc->src().end());
    src[0] = width == 1 ? src[0].gep(start) : src[0].gep(Iota(start, start + width));
    Arg::Tuple arg = acc->arg().as_tuple();
    arg.push_back(Arg(int64_t{start}));
    return UOp::New(acc->op(), acc->dtype().scalar().Vec(width), src, Arg(std::move(arg)));
  });
}

}  // namespace

const PatternMatcher& LoadStoreIndexing() {
  static const PatternMatcher* const kRules = [] {
    const UPat stidx = UPat::Var("buf").index(UPat::Var("idx"), UPat::Var("store_gate"));
    return new PatternMatcher({
        {UPat(Ops::AND).named("valid"), [](const Match& m) { return SimplifyValid(m["valid"]); }},
        {UPat(Ops::INDEX).src(UPat::Var("buf"), UPat::Var("start_idx"), UPat::Var("valid")),
         [](const Match& m) { return SimplifyValidLoad(m["buf"], m["start_idx"], m["valid"]); }},
        {UPat(Ops::INDEX).src(UPat::Var("buf"), UPat::Var("start_idx"), UPat::Const(dtypes::kBool, true)),
         [](const Match& m) { return m["buf"].index(m["start_idx"]); }},
        {UPat(Ops::STORE).src(UPat::Any(stidx, stidx.cast().named("cast")), UPat::Var("val")),
         DeleteRedundantGates},
    });
  }();
  return *kRules;
}

const PatternMatcher& LoadStoreFolding() {
  static const PatternMatcher* const kRules = [] {
    const UPat buf_vec =
        UPat(Ops::VECTORIZE).src_repeat(UPat(OpSet{Ops::DEFINE_GLOBAL, Ops::DEFINE_LOCAL}).named("buf"));
    return new PatternMatcher({
        {UPat(Ops::INDEX).src(buf_vec, UPat::Var("vec")),
         [](const Match& m) { return ExpandIndex(m["buf"], m["vec"], nullptr); }},
        {UPat(Ops::INDEX).src(buf_vec, UPat::Var("vec"), UPat::Var("mask")),
         [](const Match& m) { return ExpandIndex(m["buf"], m["vec"], m["mask"]); }},
        // GEP after LOAD
        {UPat(Ops::LOAD).src(UPat(Ops::GEP).named("gep")).allow_any_len().named("ld"),
         [](const Match& m) {
           const UOpPtr &ld = m["ld"], &gep = m["gep"];
           std::vector<UOpPtr> src(ld->src().begin(), ld->src().end());
           src[0] = gep->src()[0];
           UOpPtr load = UOp::New(Ops::LOAD, ld->dtype().scalar().Vec(gep->dtype().count()), src, ld->arg());
           return load.gep(IntsOf(gep->arg()));
         }},
        // GEP on the data of a STORE
        {UPat(Ops::STORE).src(UPat(Ops::GEP).named("gep"), UPat::Var("st")),
         [](const Match& m) { return GepOnStore(m["gep"], m["st"]); }},
        // PTRCAT after LOAD
        {UPat(Ops::LOAD).src(UPat(Ops::PTRCAT).named("cat")).allow_any_len().named("ld"),
         [](const Match& m) {
           const UOpPtr &ld = m["ld"], &cat = m["cat"];
           std::vector<UOpPtr> loads;
           for (const UOpPtr& x : cat->src()) {
             std::vector<UOpPtr> src(ld->src().begin(), ld->src().end());
             src[0] = x;
             loads.push_back(UOp::New(Ops::LOAD, x->dtype().base(), src, ld->arg()));
           }
           return UOp::New(Ops::CAT, ld->dtype(), loads);
         }},
        // PTRCAT after STORE
        {UPat(Ops::STORE).src(UPat(Ops::PTRCAT).named("cat"), UPat::Var("data")),
         [](const Match& m) { return CatAfterStore(m["cat"], m["data"]); }},
    });
  }();
  return *kRules;
}

const PatternMatcher& CorrectLoadStore() {
  static const PatternMatcher* const kRules = new PatternMatcher({
      {UPat(OpSet{Ops::LOAD, Ops::STORE})
           .src(UPat(Ops::INDEX).named("idx").cast())
           .allow_any_len()
           .named("ls"),
       [](const Match& m) {
         return SplitLoadStore(static_cast<const DevectorizeContext*>(m.raw_ctx()), m["ls"], m["idx"]);
       }},
  });
  return *kRules;
}

// A WMMA on more lanes than one tensor-core call produces: one WMMA per group of lanes, each taking its slice
// of every operand (tinygrad's no_vectorized_wmma).
UOpPtr NoVectorizedWmma(const UOpPtr& wmma) {
  const Arg& arg = wmma->arg();
  if (!arg.is_tuple() || arg.as_tuple().size() < 7 || !arg[6].is_tuple() || arg[6].as_tuple().size() != 3) {
    return nullptr;
  }
  auto lanes = [](const Arg& upcast) {
    int64_t n = 1;
    for (const Arg& pair : upcast.as_tuple()) n *= pair[1].as_int();
    return n;
  };
  const int64_t out_size = lanes(arg[6][2]);
  if (wmma->dtype().count() == out_size) return nullptr;
  std::vector<std::vector<UOpPtr>> slices;  // per operand, its groups of lanes
  for (size_t i = 0; i < 3; ++i) {
    const int64_t size = lanes(arg[6][i]);
    std::vector<UOpPtr> groups;
    for (int64_t start = 0; start < wmma->src(i)->dtype().count(); start += size) {
      std::vector<int64_t> idx;
      for (int64_t j = start; j < start + size; ++j) idx.push_back(j);
      groups.push_back(wmma->src()[i].gep(idx));
    }
    slices.push_back(std::move(groups));
  }
  const size_t calls = std::min({slices[0].size(), slices[1].size(), slices[2].size()});
  std::vector<UOpPtr> lanes_out;
  for (size_t c = 0; c < calls; ++c) {
    UOpPtr w = UOp::New(Ops::WMMA, wmma->dtype().scalar().Vec(static_cast<int>(out_size)),
                        {slices[0][c], slices[1][c], slices[2][c]}, arg);
    for (int64_t i = 0; i < out_size; ++i) lanes_out.push_back(w.gep(i));
  }
  return UOp::New(Ops::VECTORIZE, wmma->dtype(), lanes_out);
}

const PatternMatcher& Devectorize() {
  static const PatternMatcher* const kRules = new PatternMatcher({
      {UPat(groups::kALU | OpSet{Ops::CAST, Ops::BITCAST, Ops::ASSIGN}).named("alu"),
       [](const Match& m) {
         return DevectorizeAlu(static_cast<const DevectorizeContext*>(m.raw_ctx()), m["alu"]);
       }},
      {UPat(Ops::WMMA).named("wmma"), [](const Match& m) { return NoVectorizedWmma(m["wmma"]); }},
      {UPat(Ops::DEFINE_ACC).named("acc"),
       [](const Match& m) {
         return DevectorizeAcc(static_cast<const DevectorizeContext*>(m.raw_ctx()), m["acc"]);
       }},
  });
  return *kRules;
}

absl::StatusOr<UOpPtr> RewriteDevectorize(const UOpPtr& sink, const Renderer& renderer) {
  // Sym() is joined last: `a + b + c` compiles the tables of `a + b` first, and each of those with Sym()'s
  // rules in it costs about as much as the final one.
  static const PatternMatcher* const kRules = new PatternMatcher(
      Sym() + (Devectorize() + LoadStoreFolding() + CorrectLoadStore() + LoadStoreIndexing()));
  DevectorizeContext ctx{.renderer = &renderer};
  if (const KernelInfo* ki = KernelInfoOf(sink.get()); ki != nullptr) {
    ctx.vector_width = static_cast<int>(std::min<int64_t>(ki->vector_width, renderer.vector_width()));
  }
  return TryGraphRewrite(sink, *kRules, {.ctx = &ctx, .name = "devectorize"});
}

}  // namespace uopc
