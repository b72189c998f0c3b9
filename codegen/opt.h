// TEMPORARY STUB (replaced by the kernel helper's opt.h at merge).
#ifndef UOPC_CODEGEN_OPT_H_
#define UOPC_CODEGEN_OPT_H_
#include <string>
namespace uopc {
struct Opt {
  std::string ToString() const { return ""; }
};
}  // namespace uopc
#endif
