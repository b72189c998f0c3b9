// UOPC_RETURN_IF_ERROR and UOPC_ASSIGN_OR_RETURN: early returns on a non-OK absl::Status / StatusOr, for code
// that chains many fallible steps (the scheduler, the Tensor API). Debian's Abseil 20220623 has no status
// macros.
//
//   UOPC_RETURN_IF_ERROR(buffer.CopyIn(bytes));
//   UOPC_ASSIGN_OR_RETURN(UOpPtr r, Reshape(x, {2, 3}, shapes));
#ifndef UOPC_UOP_STATUS_MACROS_H_
#define UOPC_UOP_STATUS_MACROS_H_

#include "uop/cxx20.h"  // first: without C++20, one clear error

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define UOPC_RETURN_IF_ERROR(expr)                                  \
  do {                                                              \
    if (::absl::Status uopc_status_ = (expr); !uopc_status_.ok()) { \
      return uopc_status_;                                          \
    }                                                               \
  } while (0)

#define UOPC_STATUS_CONCAT_INNER(a, b) a##b
#define UOPC_STATUS_CONCAT(a, b) UOPC_STATUS_CONCAT_INNER(a, b)
#define UOPC_ASSIGN_OR_RETURN(lhs, expr) \
  UOPC_ASSIGN_OR_RETURN_IMPL(UOPC_STATUS_CONCAT(uopc_statusor_, __LINE__), lhs, expr)
#define UOPC_ASSIGN_OR_RETURN_IMPL(statusor, lhs, expr)    \
  auto statusor = (expr);                                  \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

#endif  // UOPC_UOP_STATUS_MACROS_H_
