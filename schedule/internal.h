// What the scheduler's passes share (private to //schedule): the context their rules read, and the passes
// themselves, one file of rules each:
//   simplify.cc       merge_views, the schedule simplifier (sym) and replace_contiguous
//   grouper.cc        which nodes become kernel outputs (do_realize, group_realizes)
//   create_kernels.cc a BUFFER, KERNEL and ASSIGN for each output (insert_kernels, append_to_kernel)
//   swizzle.cc        movement ops pushed to the edges of a kernel (view_left, view_right)
//   kernel_ast.cc     the kernel's AST: loads, stores, valids (fix_kernel_ast)
//   memory_planner.cc buffer reuse
#ifndef UOPC_SCHEDULE_INTERNAL_H_
#define UOPC_SCHEDULE_INTERNAL_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rewrite/pattern_matcher.h"
#include "schedule/schedule.h"
#include "schedule/tensor_uop.h"
#include "uop/arg.h"
#include "uop/uop.h"

namespace uopc::schedule_internal {

constexpr OpSet AllOps() {
  OpSet s;
  for (int i = 0; i < kNumOps; ++i) s.Insert(static_cast<Ops>(i));
  return s;
}
inline constexpr OpSet kAllOps = AllOps();
// Nodes that are their own buffer (or need none): never realized by the grouper.
inline constexpr OpSet kAlwaysContiguous{Ops::CONTIGUOUS,  Ops::ASSIGN, Ops::COPY, Ops::BUFFER,
                                         Ops::BUFFER_VIEW, Ops::CONST,  Ops::BIND, Ops::DEVICE};

// The context every pass's rules get.
struct Context {
  TensorShapes shapes;
  // The grouper's kernel outputs.
  absl::flat_hash_set<UOpPtr> realizes;
  // replace_contiguous: a base that a CONTIGUOUS of a view of it makes available, as a view of that
  // CONTIGUOUS.
  absl::flat_hash_map<UOpPtr, UOpPtr> contiguous;
  // add_buffer_ops: the kernel's buffers, in DEFINE_GLOBAL order.
  std::vector<UOpPtr> bufs;
  // The first error a rule met (rules cannot return one).
  absl::Status error;
  void Fail(absl::Status s) {
    if (error.ok()) error = std::move(s);
  }

  const ShapeTracker* St(const UOpPtr& u) { return shapes.St(u); }
};

// The KERNEL node's arg: the kernel's AST (tinygrad's Kernel dataclass).
class KernelArg : public ArgPayload {
 public:
  static constexpr absl::string_view kTypeName = "Kernel";
  explicit KernelArg(UOpPtr ast) : ast_(std::move(ast)) {}
  const UOpPtr& ast() const { return ast_; }
  absl::string_view type_name() const override { return kTypeName; }
  size_t Hash() const override;
  bool Equals(const ArgPayload& other) const override;
  std::string ToString() const override;

 private:
  UOpPtr ast_;
};
const UOpPtr& KernelAst(const UOp* kernel);
Arg MakeKernelArg(UOpPtr ast);

// The BUFFER a kernel's output stands for: a BUFFER itself, or the buffer an ASSIGN writes (UOp.buf_uop).
inline const UOp* BufferOf(const UOp* u) { return u->op() == Ops::BUFFER ? u : BaseOf(u->src(0)); }

// The ShapeTracker of a VIEW node's arg (UOPC_CHECKed).
const ShapeTracker& ViewSt(const UOp* view);
// (a + b): `b` applied after `a`.
inline ShapeTracker Compose(const ShapeTracker& a, const ShapeTracker& b) { return a.Compose(b); }
// Integer shape (the scheduler supports integer shapes only).
std::vector<int64_t> IntShape(const SintVec& shape);
int64_t Prod(const SintVec& shape);

const PatternMatcher& MergeViews();
const PatternMatcher& ScheduleSym();
const PatternMatcher& ReplaceContiguous();
// group_realizes: fills ctx.realizes from the simplified graph.
absl::Status GroupRealizes(const UOpPtr& sink, Context& ctx);
const PatternMatcher& CreateKernels();
const PatternMatcher& ViewLeft();
const PatternMatcher& ViewRight();
// fix_kernel_ast as a rule on KERNEL nodes.
const PatternMatcher& CreateAst();
// tinygrad's memory planner over the kernels' buffers; `protected_bufs` are never reused.
absl::flat_hash_map<const UOp*, UOpPtr> PlanMemory(const std::vector<ScheduleItem>& items,
                                                   const absl::flat_hash_set<const UOp*>& protected_bufs);

}  // namespace uopc::schedule_internal

#endif  // UOPC_SCHEDULE_INTERNAL_H_
