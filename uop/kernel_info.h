// KernelInfo: the arg of a kernel's SINK once codegen has chosen its optimizations (tinygrad's KernelInfo,
// which lives in its ops.py too: codegen writes it, and the renderers read the kernel's name from it).
//
// It names the kernel (`E_3`, `r_16_16_4`) and says how many of the leading shape axes are local dimensions
// and how many of the trailing ones are upcasted; the lowerer reads it to map axes to SPECIAL, RANGE or
// UNROLL. It is an Arg payload, so the textual IR prints and parses it as tinygrad's repr:
//   KernelInfo(name='E_3', local_dims=0, upcasted=0, dont_use_locals=False)
#ifndef UOPC_UOP_KERNEL_INFO_H_
#define UOPC_UOP_KERNEL_INFO_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "uop/arg.h"
#include "uop/cxx20.h"  // first: without C++20, one clear error
#include "uop/uop.h"

namespace uopc {

struct KernelInfo {
  std::string name = "test";
  int64_t local_dims = 0;
  int64_t upcasted = 0;
  bool dont_use_locals = false;
  // uopc's VECTOR opt: float32 vectors of up to this many lanes stay whole (Renderer::vector_width); 1 is
  // tinygrad's devectorize.
  int64_t vector_width = 1;

  friend bool operator==(const KernelInfo& a, const KernelInfo& b) {
    return a.name == b.name && a.local_dims == b.local_dims && a.upcasted == b.upcasted &&
           a.dont_use_locals == b.dont_use_locals && a.vector_width == b.vector_width;
  }
  // tinygrad's repr, with `vector_width=N` last when it is not 1.
  std::string ToString() const;
};

// The ArgPayload holding a KernelInfo.
class KernelInfoArg : public ArgPayload {
 public:
  static constexpr absl::string_view kTypeName = "KernelInfo";  // for Arg::payload_as
  explicit KernelInfoArg(KernelInfo info) : info_(std::move(info)) {}
  const KernelInfo& info() const { return info_; }
  absl::string_view type_name() const override { return kTypeName; }
  size_t Hash() const override;
  bool Equals(const ArgPayload& other) const override;
  std::string ToString() const override { return info_.ToString(); }

 private:
  KernelInfo info_;
};

// An Arg holding `info`.
Arg KernelInfoAsArg(KernelInfo info);
// The KernelInfo of a SINK's arg, or nullptr when it has none.
const KernelInfo* KernelInfoOf(const UOp* sink);

}  // namespace uopc

#endif  // UOPC_UOP_KERNEL_INFO_H_
