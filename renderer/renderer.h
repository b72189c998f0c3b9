// Renderer: what a code-generation target is and wants (tinygrad's Renderer), and the interface every backend
// implements to turn a linearized program into source code.
//
// Codegen reads the target description (local memory, launch limits, float4 support, tensor cores, the ops
// the target renders, its pre/extra rewrite rules) to choose optimizations and to lower the kernel; the
// renderer then writes the linear program (the uops after the linearizer) as source.
//
//   ClangRenderer clang;
//   absl::StatusOr<std::string> src = clang.Render(uops);   // uops: codegen's linear program
#ifndef UOPC_RENDERER_RENDERER_H_
#define UOPC_RENDERER_RENDERER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "rewrite/pattern_matcher.h"
#include "uop/dtype.h"
#include "uop/ops.h"
#include "uop/uop.h"

namespace uopc {

// How a CPU target spreads a kernel across cores, the way a GPU launch spreads it across thread groups:
// codegen splits the kernel's outermost loop into equal contiguous chunks (a chunk count that divides the
// loop, at most 4 per core), the kernel gets the chunk's number as a `core_id` launch index (a SPECIAL
// `gidx0`, global size (chunks, 1, 1)) in place of that loop's outer part, and the device runs the chunks on
// its worker threads (tinygrad briefly had this as `global_max=(CPU_COUNT, 0, 0)`). With cores == 1 nothing
// changes: one loop, no `core_id`, tinygrad's source.
struct CoreSplit {
  int64_t cores = 1;
  // A kernel is split only into chunks of at least this many iterations of its whole loop nest (all axes
  // multiplied); smaller kernels stay one loop, since starting threads would cost more than they gain.
  int64_t min_work_per_core = int64_t{1} << 17;
};

// D = A * B + C on a tensor core; A is M x K, B is K x N, C and D are M x N (tinygrad's TensorCore).
struct TensorCore {
  std::array<int64_t, 3> dims;                 // N, M, K
  int64_t threads = 0;                         // threads that build the warp
  std::array<int64_t, 3> elements_per_thread;  // per thread, from A, B and C
  DType dtype_in;
  DType dtype_out;
  // Kernel opts in order: "u0" upcasts dim 0, "l1" localizes dim 1.
  std::vector<std::string> opts;
  // Per operand, an optional (local permutation, upcast+reduce permutation).
  using Swizzle = std::optional<std::pair<std::vector<int64_t>, std::vector<int64_t>>>;
  std::pair<Swizzle, Swizzle> swizzle;

  // tinygrad's str(): WMMA_8_16_16_half_float.
  std::string ToString() const;
};

// The error for uop `pos` of a program, which a renderer cannot write: "cannot render uop 3 (EXP2
// dtypes.float): <what>".
absl::Status RenderError(size_t pos, const UOp* u, absl::string_view what);

class Renderer {
 public:
  virtual ~Renderer() = default;

  // tinygrad's device name for this target ("CPU", "GPU", "METAL", "CUDA").
  const std::string& device() const { return device_; }
  bool supports_float4() const { return supports_float4_; }
  bool has_local() const { return has_local_; }
  bool has_shared() const { return has_shared_; }
  // Launch limits per dimension, in (x, y, z) order; nullopt: no limit (and, for global_max, no global dims).
  const std::optional<std::vector<int64_t>>& global_max() const { return global_max_; }
  const std::optional<std::vector<int64_t>>& local_max() const { return local_max_; }
  int64_t shared_max() const { return shared_max_; }
  const std::vector<TensorCore>& tensor_cores() const { return tensor_cores_; }
  // CPU targets without locals: how the lowerer splits a kernel's outer loop across cores.
  const CoreSplit& core_split() const { return core_split_; }
  // The most float32 lanes one ALU op, accumulator or load/store may keep as a vector (the C vector
  // extensions' `a * b` on float16 values), and what selects the vector-blocked opts
  // (codegen/vector_heuristic.h). 1, every target's default, is tinygrad's devectorize: vector loads of at
  // most 4 lanes and scalar ALUs, hence tinygrad's source byte for byte.
  int vector_width() const { return vector_width_; }
  // GPU targets: whether the default opts may be uopc's own where they beat tinygrad's hand-coded ones
  // (codegen/gpu_heuristic.h); the devices set it with UOPC_KERNELS=fast. Off, every renderer's default, is
  // tinygrad's opts, hence tinygrad's source byte for byte.
  bool uopc_gpu_opts() const { return uopc_gpu_opts_; }
  void set_uopc_gpu_opts(bool on) { uopc_gpu_opts_ = on; }
  // The ALU ops this target renders itself (tinygrad's code_for_op keys); the rest are rewritten into these.
  const OpSet& supported_ops() const { return supported_ops_; }
  // Float dtypes on which the target has no instruction for EXP2, LOG2 and SIN although supported_ops lists
  // them (PTX: float64); codegen computes those with its polynomial fallbacks. Empty: none.
  const std::vector<DType>& transcendental_fallback_dtypes() const { return transcendental_fallback_dtypes_; }
  // Rules run before codegen's final rewrite (nullptr: none), and added to it (nullptr: none).
  virtual const PatternMatcher* pre_matcher() const { return nullptr; }
  virtual const PatternMatcher* extra_matcher() const { return nullptr; }

  // The source of the linear program `uops` (SINK last, its arg a KernelInfo naming the function); an error
  // for a uop this target cannot express. What every target needs of a uop is checked here, once, before
  // the target's RenderProgram writes any: the args a render reads without asking (a DEFINE_GLOBAL's
  // buffer number, a DEFINE_VAR's name, a SPECIAL's (name, size)) and an ALU op's source count.
  absl::StatusOr<std::string> Render(absl::Span<const UOp* const> uops) const;

 protected:
  // The target's source for a program that passed Render's checks.
  virtual absl::StatusOr<std::string> RenderProgram(absl::Span<const UOp* const> uops) const = 0;

  std::string device_;
  bool supports_float4_ = true;
  bool has_local_ = true;
  bool has_shared_ = true;
  std::optional<std::vector<int64_t>> global_max_ = std::vector<int64_t>(3, 0x8FFFFFFF);
  std::optional<std::vector<int64_t>> local_max_ = std::vector<int64_t>(3, 0x8FFFFFFF);
  int64_t shared_max_ = 32768;
  std::vector<TensorCore> tensor_cores_;
  CoreSplit core_split_;
  int vector_width_ = 1;
  bool uopc_gpu_opts_ = false;
  OpSet supported_ops_;
  std::vector<DType> transcendental_fallback_dtypes_;
};

}  // namespace uopc

#endif  // UOPC_RENDERER_RENDERER_H_
