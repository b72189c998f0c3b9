// uop_basics: the UOp IR itself. Builds the program tinygrad generates on CPU for
// `Tensor([1, 2, 3]) + Tensor([4, 5, 6])` (the `E_3` kernel: c[i] = a[i] + b[i] for i < 3), checks it against
// the program spec, and prints it the three ways uopc can: the round-tripping textual IR, tinygrad's uop
// listing and tinygrad's UOp tree.
//
//   ./bazelw run //examples:uop_basics
//
// The same program as text is testdata/golden/print_listing.uop; `uopc print --format=listing` prints it the
// same way.
#include <cstdlib>
#include <iostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "uop/print.h"
#include "uop/spec.h"
#include "uop/text_ir.h"
#include "uop/uop.h"

int main() {
  using uopc::Ops;
  using uopc::UOp;
  using uopc::UOpPtr;
  namespace dtypes = uopc::dtypes;

  // Three int[3] buffers, the kernel's parameters 0 (output), 1 and 2.
  UOpPtr c = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kInt32.Ptr(3), {}, 0);
  UOpPtr a = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kInt32.Ptr(3), {}, 1);
  UOpPtr b = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kInt32.Ptr(3), {}, 2);
  // for (i = 0; i < 3; i++) c[i] = a[i] + b[i];
  UOpPtr i = UOp::Range(dtypes::kInt32, 3, /*axis=*/0);
  UOpPtr sum = a.index(i).load() + b.index(i).load();
  UOpPtr kernel = UOp::Sink({c.index(i).store({sum})});

  // UOps are interned: building the same expression again gives the very same node.
  UOpPtr again = a.index(i).load() + b.index(i).load();
  std::cout << "interned: " << (again == sum ? "yes" : "no") << "; i is in [" << i->vmin() << ", "
            << i->vmax() << "], i * 2 + 1 in [" << (i * 2 + 1)->vmin() << ", " << (i * 2 + 1)->vmax()
            << "]\n\n";

  if (absl::Status s = uopc::VerifyProgram(kernel.get()); !s.ok()) {
    std::cerr << "the program breaks the spec: " << s << "\n";
    return EXIT_FAILURE;
  }

  std::string ir = uopc::PrintIr(kernel.get());
  std::cout << "== textual IR (uopc print --format=ir)\n" << ir << "\n";
  std::cout << "== tinygrad's uop listing (uopc print --format=listing)\n"
            << uopc::PrintUOpsListing(kernel->Toposort()) << "\n";
  std::cout << "== tinygrad's UOp tree (uopc print --format=tree)\n"
            << uopc::PrintUOpTree(kernel.get()) << "\n\n";

  // The textual IR parses back to the identical graph.
  absl::StatusOr<UOpPtr> parsed = uopc::ParseIrSingle(ir);
  if (!parsed.ok() || *parsed != kernel) {
    std::cerr << "round trip failed: " << parsed.status() << "\n";
    return EXIT_FAILURE;
  }
  std::cout << "parse(print(kernel)) is the same node: yes\n";
  return EXIT_SUCCESS;
}
