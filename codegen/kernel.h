// Kernel: a kernel AST with its shape analysis and the optimizations applied to it (tinygrad v0.10.3's
// codegen/kernel.py).
//
// A Kernel holds one ShapeTracker per buffer op of the AST, two per REDUCE_AXIS (its output and its input)
// and one for the full shape, all permuted so that the reduce axes come last and all reshaped together. An
// Opt (codegen/opt.h) splits an axis and moves the piece: to the local dims (LOCAL), the group dims of a
// reduce (GROUP/GROUPTOP), or the upcasted dims at the end (UPCAST/UNROLL); PADTO pads an axis, SWAP
// exchanges two global axes, TC maps a matmul onto the target's tensor cores. The shape has these parts, in
// order:
//   global dims | local dims | group dims (first_reduce) | reduce loops | upcasted dims (first_upcast)
// GetOptimizedAst writes the chosen shape back into the AST (the VIEWs, the REDUCE_AXIS axes, the SINK's
// KernelInfo) for the lowerer.
//
//   ASSIGN_OR_RETURN(Kernel k, Kernel::Create(ast, renderer));
//   RETURN_IF_ERROR(k.ApplyOpt(Opt(OptOps::kUpcast, 0, 4)));
//   KernelNameCounter names;
//   ASSIGN_OR_RETURN(UOpPtr optimized, k.GetOptimizedAst(&names));
#ifndef UOPC_CODEGEN_KERNEL_H_
#define UOPC_CODEGEN_KERNEL_H_

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "codegen/opt.h"
#include "renderer/renderer.h"
#include "shapetracker/shapetracker.h"
#include "uop/uop.h"

namespace uopc {

// Counts kernel names so that a repeated one gets a suffix (`E_3`, `E_3n1`, `E_3n2`): tinygrad keeps this
// count in a class variable; here the caller owns it (one per program, or one per test).
class KernelNameCounter {
 public:
  // The name to use for a kernel whose base function name is `base`.
  std::string Next(const std::string& base);

 private:
  absl::flat_hash_map<std::string, int64_t> counts_;
};

// tinygrad's to_function_name: ANSI color codes dropped, every character other than [A-Za-z0-9_] as its code
// in two hex digits.
std::string ToFunctionName(absl::string_view name);

// Where the tensor core's N, M and K axes are in the shape (tinygrad's TensorCoreOptions).
struct TensorCoreOptions {
  std::array<int64_t, 3> axes{};                       // N, M, K
  std::array<bool, 2> axes_exist{true, true};          // N and M still in the shape
  std::vector<std::pair<int64_t, int64_t>> axis_pads;  // (axis, tc dim) to pad to
  // Adjusts the axes after dimension `removed_axis` was dropped from the shape.
  void FixAxes(int64_t removed_axis);
  friend bool operator==(const TensorCoreOptions& a, const TensorCoreOptions& b) {
    return a.axes == b.axes && a.axes_exist == b.axes_exist && a.axis_pads == b.axis_pads;
  }
};

// What an axis of a Kernel's shape is, from its place in the shape. tinygrad v0.10.3 tells them apart by
// their colors in colors(); each type's color is given beside it.
enum class AxisType {
  kGlobal,       // blue (BLUE when locals are off)
  kLocal,        // cyan
  kGroupReduce,  // green: a reduce axis shared by a group of threads (GROUP/GROUPTOP)
  kReduce,       // red: a reduce loop
  kUpcast,       // yellow: an upcasted output axis (UPCAST)
  kUnroll,       // magenta: an upcasted reduce axis (UNROLL)
};

class Kernel {
 public:
  // Analyzes `ast` (a SINK of STOREs whose buffer ops carry VIEWs); the renderer must outlive the kernel.
  static absl::StatusOr<Kernel> Create(const UOpPtr& ast, const Renderer& renderer);

  // Applies `opt`. On error (an InvalidArgumentError naming the opt and why, tinygrad's KernelOptError) the
  // kernel is unchanged: the opt is applied to a copy that replaces this kernel only on success. Beyond
  // tinygrad's checks, a negative or missing axis (tinygrad would index from the end) and a negative amount
  // are refused.
  absl::Status ApplyOpt(const Opt& opt);
  // Applies the opts in order; stops at the first error, with the opts before it applied.
  absl::Status ApplyOpts(const std::vector<Opt>& opts);
  // tinygrad's apply_tensor_cores with its default hand-coded TC opts: true when a tensor core applied (the
  // kernel is unchanged otherwise). With `tc_opt` 0 (tinygrad's default) only a single reduce of two direct
  // loads qualifies; 2 also pads N, M and K to the core's dims. Where such a pad fails, tinygrad goes on to
  // the next core keeping the pads that did apply; uopc goes back to the kernel before them.
  bool ApplyTensorCores(int64_t use_tensor_cores = 1, int64_t axis = 0, int64_t tc_select = -1,
                        int64_t tc_opt = 0);

  // The AST with the shape chosen by the opts; the SINK's arg names the kernel (with `names` counting
  // repeats; nullptr: no suffix) unless `name_override` is given.
  absl::StatusOr<UOpPtr> GetOptimizedAst(KernelNameCounter* names,
                                         std::optional<std::string> name_override = std::nullopt) const;
  // The function name (`r_16_16_4`) without the repeat suffix.
  std::string BaseName() const;
  // The name with tinygrad's ANSI colors per part of the shape (for display).
  std::string ColoredName() const;

  // ---- shape analysis ----
  const UOpPtr& ast() const { return ast_; }
  const Renderer& renderer() const { return *renderer_; }
  const std::vector<Opt>& applied_opts() const { return applied_opts_; }
  const std::vector<UOpPtr>& bufs() const { return bufs_; }
  const std::vector<UOpPtr>& reduceops() const { return reduceops_; }
  const std::vector<UOpPtr>& vars() const { return vars_; }
  const UOp* reduceop() const { return reduceops_.empty() ? nullptr : reduceops_[0].get(); }
  const std::vector<ShapeTracker>& sts() const { return sts_; }
  const SintVec& output_shape() const { return sts_[0].shape(); }
  const SintVec& full_shape() const { return sts_.back().shape(); }
  SintVec full_unupcasted_shape() const;
  int64_t shape_len() const { return static_cast<int64_t>(sts_[0].shape().size()); }
  int64_t first_upcast() const { return shape_len() - upcasted_; }
  int64_t first_reduce() const;
  int64_t global_dims() const { return first_reduce() - local_dims_; }
  int64_t local_dims() const { return local_dims_; }
  int64_t upcasted() const { return upcasted_; }
  int64_t group_for_reduces() const { return group_for_reduces_; }
  bool dont_use_locals() const { return dont_use_locals_; }
  // The VECTOR opt's lanes (the renderer's vector_width once applied), else 1.
  int64_t vector_width() const { return vector_width_; }
  const TensorCore* tensor_core() const { return tensor_core_; }
  const std::optional<TensorCoreOptions>& tensor_core_opts() const { return tensor_core_opts_; }
  int64_t use_tensor_cores() const { return use_tensor_cores_; }
  // Per upcasted axis of sts()[i]: (size, real stride, reduced in the output).
  struct UpcastedAxis {
    Sint size;
    std::optional<Sint> stride;
    bool reduced;
  };
  std::vector<UpcastedAxis> upcasted_axis(int64_t i) const;
  // The type of each axis of full_shape().
  std::vector<AxisType> axis_types() const;
  // tinygrad's colors(): blue/BLUE global, cyan local, green group, red reduce, magenta/yellow upcasted.
  std::vector<std::string> colors() const;
  // tinygrad's real_axis: the shape axis an opt's axis names (UNROLL counts from the first reduce axis,
  // GROUP/GROUPTOP from the first reduce axis after the group axes); -1 for an opt without an axis.
  int64_t RealAxis(const Opt& opt) const;
  // The full shape with each dim colored, e.g. for logs.
  std::string ColoredShape() const;
  // The index in bufs() of `u`, or -1.
  int64_t BufIndex(const UOp* u) const;

  // ---- the shape operations the opts are built from (public for tests and searches) ----
  // Reshapes every tracker with `new_shape(shape)` (when given), then permutes with `axis` (when given).
  absl::Status ReshapeAndPermute(const std::function<SintVec(const SintVec&)>& new_shape,
                                 const std::optional<std::vector<int64_t>>& axis);
  // Splits `amount` off `axis` (from the top when `top`) and moves it before `insert_before` (default: last).
  absl::Status ShiftTo(int64_t axis, int64_t amount, bool top = false,
                       std::optional<int64_t> insert_before = std::nullopt);
  // Drops dims of size 1 everywhere; true when some were dropped.
  absl::StatusOr<bool> SimplifyOnes();
  absl::Status SimplifyMergeAdjacent();

 private:
  Kernel() = default;
  // apply_opt without the copy (tinygrad's apply_opt; `append` false for the opts a TC applies itself).
  absl::Status ApplyOptInPlace(const Opt& opt, bool append);
  absl::Status Upcast();
  absl::StatusOr<bool> ApplyTcOpt(int64_t use_tensor_cores, int64_t axis, int64_t tc_select,
                                  int64_t opt_level);
  std::optional<TensorCoreOptions> CreateTcOpts(const UOp* reduceop, const TensorCore& tc, int64_t axis,
                                                int64_t opt_level) const;

  const Renderer* renderer_ = nullptr;
  UOpPtr ast_;
  std::vector<UOpPtr> reduceops_, vars_, bufs_;
  std::vector<ShapeTracker> sts_;
  std::vector<Opt> applied_opts_;
  int64_t group_for_reduces_ = 0, upcasted_ = 0, local_dims_ = 0;
  const TensorCore* tensor_core_ = nullptr;
  std::optional<TensorCoreOptions> tensor_core_opts_;
  int64_t use_tensor_cores_ = 0;
  bool dont_use_locals_ = false;
  int64_t vector_width_ = 1;
};

}  // namespace uopc

#endif  // UOPC_CODEGEN_KERNEL_H_
