// OptOps and Opt: one optimization applied to a kernel's shape (tinygrad v0.10.3's renderer Opt).
//
// A kernel is optimized by a list of Opts (from the hand-coded heuristic, a search, or the user). Each one
// names an axis of the kernel's shape and an amount: UPCAST 4 of axis 1, LOCAL 16 of axis 0, ... An Opt
// prints as tinygrad's repr, `Opt(op=OptOps.UPCAST, axis=1, arg=4)`, which the corpus records; ParseOpt reads
// that form back, and also a compact one for command lines: `UPCAST:1:4`, `NOLOCALS`, `TC:0:-1,0,1`.
#ifndef UOPC_CODEGEN_OPT_H_
#define UOPC_CODEGEN_OPT_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace uopc {

// In tinygrad's declaration order (Opts sort by it).
// kVector is uopc's: keep float32 vectors whole on a target that can (Renderer::vector_width); no axis, no
// amount.
enum class OptOps { kTC, kUpcast, kUnroll, kLocal, kGroup, kGroupTop, kNoLocals, kPadTo, kSwap, kVector };

// "UPCAST", "GROUPTOP", ...
absl::string_view OptOpsName(OptOps op);
std::optional<OptOps> OptOpsFromName(absl::string_view name);

struct Opt {
  // The arg of a TC opt: (tc_select, tc_opt, use_tensor_cores).
  using TcArg = std::array<int64_t, 3>;

  OptOps op = OptOps::kUpcast;
  std::optional<int64_t> axis;
  // None, an amount (for SWAP the other axis), or a TC triple.
  std::variant<std::monostate, int64_t, TcArg> arg;

  Opt() = default;
  Opt(OptOps op, std::optional<int64_t> axis, std::optional<int64_t> amount) : op(op), axis(axis) {
    if (amount) arg = *amount;
  }
  Opt(OptOps op, int64_t axis, TcArg tc) : op(op), axis(axis), arg(tc) {}

  bool has_int_arg() const { return std::holds_alternative<int64_t>(arg); }
  int64_t int_arg() const { return std::get<int64_t>(arg); }

  // tinygrad's repr: Opt(op=OptOps.UPCAST, axis=1, arg=4).
  std::string ToString() const;
  // The compact form: UPCAST:1:4, NOLOCALS, TC:0:-1,0,1.
  std::string ToCompactString() const;

  friend bool operator==(const Opt& a, const Opt& b) {
    return a.op == b.op && a.axis == b.axis && a.arg == b.arg;
  }
  friend bool operator!=(const Opt& a, const Opt& b) { return !(a == b); }
};

// Parses either form (the repr or the compact one); errors say what is wrong.
absl::StatusOr<Opt> ParseOpt(absl::string_view text);
// Compact opts separated by spaces or `;`, or a Python list of reprs `[Opt(...), Opt(...)]`.
absl::StatusOr<std::vector<Opt>> ParseOptList(absl::string_view text);
// tinygrad's repr of a list: [Opt(...), Opt(...)].
std::string OptListToString(const std::vector<Opt>& opts);
// The compact forms separated by spaces, as ParseOptList reads them: "UPCAST:0:4 LOCAL:1:8".
std::string OptListToCompactString(absl::Span<const Opt> opts);

}  // namespace uopc

#endif  // UOPC_CODEGEN_OPT_H_
