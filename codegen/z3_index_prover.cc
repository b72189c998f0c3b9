// The z3 IndexProver (codegen/bounds_check.h): an index expression and its gate become z3 bit-vector terms at
// their dtypes' widths (so int32 wraps around as it does on the device), and z3 is asked for an assignment of
// the loop counters, thread ids and variables, within their ranges, where the gate holds and the access
// leaves [0, size). `unsat` proves the access in bounds. Nodes it does not translate (loads, floats, vectors)
// become fresh variables bounded by their range analysis, which only ever makes the question harder, never
// wrong.
//
// Linked into //codegen unless `--define=uopc_z3=0` (Debian's libz3); this file registers the prover as the
// built-in one when it is linked.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/bounds_check.h"
#include "z3.h"

namespace uopc {
namespace {

void IgnoreZ3Error(Z3_context, Z3_error_code) {}

class Z3Query {
 public:
  explicit Z3Query(int timeout_ms) {
    Z3_config cfg = Z3_mk_config();
    Z3_set_param_value(cfg, "model", "true");
    Z3_set_param_value(cfg, "timeout", std::to_string(timeout_ms).c_str());
    ctx_ = Z3_mk_context(cfg);
    Z3_del_config(cfg);
    Z3_set_error_handler(ctx_, IgnoreZ3Error);
  }
  ~Z3Query() { Z3_del_context(ctx_); }

  IndexProver::Verdict Prove(const UOp* index, const UOp* gate, int64_t size, int64_t width,
                             std::string* witness) {
    Z3_ast idx = Term(index);
    Z3_ast g = gate != nullptr ? Term(gate) : Z3_mk_true(ctx_);
    if (idx == nullptr || g == nullptr || Z3_get_error_code(ctx_) != Z3_OK) {
      return IndexProver::Verdict::kUnknown;
    }
    // 66 bits hold any 64-bit index plus the access width without wrapping.
    const unsigned bits = Z3_get_bv_sort_size(ctx_, Z3_get_sort(ctx_, idx));
    Z3_ast wide = index->dtype().scalar().is_unsigned() ? Z3_mk_zero_ext(ctx_, 66 - bits, idx)
                                                        : Z3_mk_sign_ext(ctx_, 66 - bits, idx);
    Z3_sort s66 = Z3_mk_bv_sort(ctx_, 66);
    Z3_ast last = Z3_mk_bvadd(ctx_, wide, Z3_mk_int64(ctx_, width - 1, s66));
    Z3_ast outside[2] = {Z3_mk_bvslt(ctx_, wide, Z3_mk_int64(ctx_, 0, s66)),
                         Z3_mk_bvsge(ctx_, last, Z3_mk_int64(ctx_, size, s66))};
    Z3_solver solver = Z3_mk_solver(ctx_);
    Z3_solver_inc_ref(ctx_, solver);
    for (Z3_ast r : ranges_) Z3_solver_assert(ctx_, solver, r);
    Z3_solver_assert(ctx_, solver, g);
    Z3_solver_assert(ctx_, solver, Z3_mk_or(ctx_, 2, outside));
    Z3_lbool r = Z3_solver_check(ctx_, solver);
    IndexProver::Verdict v = IndexProver::Verdict::kUnknown;
    if (Z3_get_error_code(ctx_) == Z3_OK && r == Z3_L_FALSE) v = IndexProver::Verdict::kInBounds;
    if (Z3_get_error_code(ctx_) == Z3_OK && r == Z3_L_TRUE) {
      v = IndexProver::Verdict::kOutOfBounds;
      Z3_model m = Z3_solver_get_model(ctx_, solver);
      Z3_model_inc_ref(ctx_, m);
      std::vector<std::string> parts;
      for (const auto& [name, var] : named_) {
        Z3_ast value = nullptr;
        int64_t x = 0;
        if (Z3_model_eval(ctx_, m, var, true, &value) && Z3_get_numeral_int64(ctx_, value, &x)) {
          parts.push_back(absl::StrCat(name, "=", x));
        }
      }
      Z3_ast value = nullptr;
      int64_t x = 0;
      if (Z3_model_eval(ctx_, m, wide, true, &value) && Z3_get_numeral_int64(ctx_, value, &x)) {
        parts.push_back(absl::StrCat("index=", x));
      }
      *witness = absl::StrJoin(parts, ", ");
      Z3_model_dec_ref(ctx_, m);
    }
    Z3_solver_dec_ref(ctx_, solver);
    return v;
  }

 private:
  Z3_sort Sort(DType dt) {
    return dt.is_bool() ? Z3_mk_bool_sort(ctx_)
                        : Z3_mk_bv_sort(ctx_, static_cast<unsigned>(dt.itemsize() * 8));
  }
  Z3_ast Num(DType dt, int64_t v) { return Z3_mk_int64(ctx_, v, Sort(dt)); }
  bool Signed(const UOp* u) { return !u->dtype().scalar().is_unsigned(); }

  // A fresh variable of u's dtype within u's range analysis.
  Z3_ast Fresh(const UOp* u, const std::string& name, bool lower_bound_only = false) {
    const DType dt = u->dtype().scalar();
    Z3_ast v = Z3_mk_const(ctx_, Z3_mk_string_symbol(ctx_, name.c_str()), Sort(dt));
    if (dt.is_bool()) {
      if (u->vmin().AsBool()) ranges_.push_back(v);
      if (!u->vmax().AsBool()) ranges_.push_back(Z3_mk_not(ctx_, v));
      return v;
    }
    const absl::int128 lo = u->vmin().i(), hi = u->vmax().i();
    if (lo >= DTypeMin(dt).i() && hi <= DTypeMax(dt).i()) {
      const bool s = Signed(u);
      ranges_.push_back(s ? Z3_mk_bvsle(ctx_, Num(dt, static_cast<int64_t>(lo)), v)
                          : Z3_mk_bvule(ctx_, Num(dt, static_cast<int64_t>(lo)), v));
      if (!lower_bound_only) {
        ranges_.push_back(s ? Z3_mk_bvsle(ctx_, v, Num(dt, static_cast<int64_t>(hi)))
                            : Z3_mk_bvule(ctx_, v, Num(dt, static_cast<int64_t>(hi))));
      }
    }
    return v;
  }

  Z3_ast Cast(const UOp* from, Z3_ast t, DType to) {
    const DType f = from->dtype().scalar();
    if (f.is_bool() && to.is_bool()) return t;
    if (to.is_bool()) return Z3_mk_not(ctx_, Z3_mk_eq(ctx_, t, Num(f, 0)));
    if (f.is_bool()) return Z3_mk_ite(ctx_, t, Num(to, 1), Num(to, 0));
    const unsigned fb = f.itemsize() * 8, tb = to.itemsize() * 8;
    if (fb == tb) return t;
    if (fb > tb) return Z3_mk_extract(ctx_, tb - 1, 0, t);
    return Signed(from) ? Z3_mk_sign_ext(ctx_, tb - fb, t) : Z3_mk_zero_ext(ctx_, tb - fb, t);
  }

  // The term for `root`; null when a node has a vector dtype.
  Z3_ast Term(const UOp* root) {
    for (const UOp* u : root->Toposort()) {
      if (term_.contains(u)) continue;
      const DType dt = u->dtype();
      if (dt.is_ptr() || dt.is_void() || dt.count() != 1) {
        if (u == root) return nullptr;
        continue;  // only reachable through nodes that become fresh variables
      }
      const bool is_bool = dt.is_bool();
      const bool is_int = dt.is_int();
      auto src = [&](int i) -> Z3_ast {
        auto it = term_.find(u->src(i));
        return it == term_.end() ? nullptr : it->second;
      };
      bool sources_ok = true;
      for (size_t i = 0; i < u->num_src(); ++i)
        sources_ok = sources_ok && src(static_cast<int>(i)) != nullptr;
      Z3_ast t = nullptr;
      const bool s = Signed(u);
      if ((is_int || is_bool) && (sources_ok || u->op() == Ops::RANGE)) {
        switch (u->op()) {
          case Ops::CONST:
            if (u->const_value().is_float()) break;
            t = is_bool ? (u->const_value().AsBool() ? Z3_mk_true(ctx_) : Z3_mk_false(ctx_))
                        : Num(dt, u->const_value().AsInt64());
            break;
          case Ops::RANGE: {
            const std::string name = absl::StrCat("ridx", u->arg().ToString());
            t = Fresh(u, name, /*lower_bound_only=*/src(0) != nullptr);
            if (src(0) != nullptr) ranges_.push_back(Z3_mk_bvslt(ctx_, t, src(0)));
            named_.emplace_back(name, t);
            break;
          }
          case Ops::SPECIAL:
          case Ops::DEFINE_VAR: {
            const std::string name =
                u->op() == Ops::SPECIAL ? u->arg()[0].as_string() : std::string(u->var_name());
            t = Fresh(u, name);
            named_.emplace_back(name, t);
            break;
          }
          case Ops::CAST:
            if (!u->src(0)->dtype().is_float()) t = Cast(u->src(0), src(0), dt.scalar());
            break;
          case Ops::NEG:
            t = is_bool ? Z3_mk_not(ctx_, src(0)) : Z3_mk_bvneg(ctx_, src(0));
            break;
          case Ops::ADD:
            t = is_bool ? nullptr : Z3_mk_bvadd(ctx_, src(0), src(1));
            break;
          case Ops::SUB:
            t = is_bool ? nullptr : Z3_mk_bvsub(ctx_, src(0), src(1));
            break;
          case Ops::MUL:
            if (is_bool) {
              Z3_ast a[2] = {src(0), src(1)};
              t = Z3_mk_and(ctx_, 2, a);
            } else {
              t = Z3_mk_bvmul(ctx_, src(0), src(1));
            }
            break;
          case Ops::IDIV:
            if (!is_bool) t = s ? Z3_mk_bvsdiv(ctx_, src(0), src(1)) : Z3_mk_bvudiv(ctx_, src(0), src(1));
            break;
          case Ops::MOD:
            if (!is_bool) t = s ? Z3_mk_bvsrem(ctx_, src(0), src(1)) : Z3_mk_bvurem(ctx_, src(0), src(1));
            break;
          case Ops::SHL:
          case Ops::SHR:
            // Counts below the width (the range analysis shows them); others stay fresh variables.
            if (!is_bool && u->src(1)->vmin().i() >= 0 && u->src(1)->vmax().i() < dt.itemsize() * 8) {
              Z3_ast count = Cast(u->src(1), src(1), dt.scalar());
              t = u->op() == Ops::SHL ? Z3_mk_bvshl(ctx_, src(0), count)
                  : s                 ? Z3_mk_bvashr(ctx_, src(0), count)
                                      : Z3_mk_bvlshr(ctx_, src(0), count);
            }
            break;
          case Ops::MAX:
            if (!is_bool) {
              Z3_ast lt = s ? Z3_mk_bvslt(ctx_, src(0), src(1)) : Z3_mk_bvult(ctx_, src(0), src(1));
              t = Z3_mk_ite(ctx_, lt, src(1), src(0));
            }
            break;
          case Ops::AND:
          case Ops::OR:
          case Ops::XOR:
            if (is_bool) {
              Z3_ast a[2] = {src(0), src(1)};
              t = u->op() == Ops::AND  ? Z3_mk_and(ctx_, 2, a)
                  : u->op() == Ops::OR ? Z3_mk_or(ctx_, 2, a)
                                       : Z3_mk_xor(ctx_, src(0), src(1));
            } else {
              t = u->op() == Ops::AND  ? Z3_mk_bvand(ctx_, src(0), src(1))
                  : u->op() == Ops::OR ? Z3_mk_bvor(ctx_, src(0), src(1))
                                       : Z3_mk_bvxor(ctx_, src(0), src(1));
            }
            break;
          case Ops::CMPLT:
          case Ops::CMPNE: {
            const UOp* a = u->src(0);
            if (a->dtype().is_float()) break;
            if (u->op() == Ops::CMPNE) {
              t = Z3_mk_not(ctx_, Z3_mk_eq(ctx_, src(0), src(1)));
            } else if (a->dtype().is_bool()) {
              Z3_ast args[2] = {Z3_mk_not(ctx_, src(0)), src(1)};
              t = Z3_mk_and(ctx_, 2, args);
            } else {
              t = Signed(a) ? Z3_mk_bvslt(ctx_, src(0), src(1)) : Z3_mk_bvult(ctx_, src(0), src(1));
            }
            break;
          }
          case Ops::WHERE:
            t = Z3_mk_ite(ctx_, src(0), src(1), src(2));
            break;
          default:
            break;
        }
      }
      if (t == nullptr && (is_int || is_bool)) t = Fresh(u, absl::StrCat("v", fresh_++));
      if (t != nullptr) term_[u] = t;
    }
    auto it = term_.find(root);
    return it == term_.end() ? nullptr : it->second;
  }

  Z3_context ctx_;
  absl::flat_hash_map<const UOp*, Z3_ast> term_;
  std::vector<Z3_ast> ranges_;
  std::vector<std::pair<std::string, Z3_ast>> named_;
  int fresh_ = 0;
};

class Z3IndexProver : public IndexProver {
 public:
  absl::string_view name() const override { return "z3"; }
  Verdict Prove(const UOp* index, const UOp* gate, int64_t size, int64_t width,
                std::string* witness) const override {
    Z3Query query(/*timeout_ms=*/10000);
    return query.Prove(index, gate, size, width, witness);
  }
};

const bool registered = [] {
  static const Z3IndexProver prover;
  RegisterBuiltinIndexProver(&prover);
  return true;
}();

}  // namespace
}  // namespace uopc
