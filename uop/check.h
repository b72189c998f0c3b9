// UOPC_CHECK: aborts with a message when an invariant that only a uopc bug could break does not hold.
//
// Bad input never reaches a CHECK: it gets an absl::Status. Abseil 20220623 (Debian's) has no absl/log, so this is
// the project's one assertion macro; it is active in every build mode.
#ifndef UOPC_UOP_CHECK_H_
#define UOPC_UOP_CHECK_H_

#include "uop/cxx20.h"  // first: without C++20, one clear error

#include <cstdio>
#include <cstdlib>

namespace uopc::internal {
[[noreturn]] inline void CheckFailed(const char* file, int line, const char* condition, const char* message) {
  std::fprintf(stderr, "%s:%d: UOPC_CHECK failed: %s%s%s\n", file, line, condition, message[0] ? ": " : "",
               message);
  std::abort();
}
}  // namespace uopc::internal

#define UOPC_CHECK(condition, ...)                                                              \
  do {                                                                                          \
    if (__builtin_expect(!(condition), 0)) {                                                    \
      ::uopc::internal::CheckFailed(__FILE__, __LINE__, #condition, "" __VA_ARGS__);            \
    }                                                                                           \
  } while (0)

#endif  // UOPC_UOP_CHECK_H_
