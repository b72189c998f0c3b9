// Uses uopc from another workspace through `@uopc//uop` alone: builds a small graph, checks it against the
// spec, prints it in the three forms and parses the textual IR back. Exits non-zero on any mismatch.
#include <cstdlib>
#include <iostream>
#include <string>

#include "absl/status/statusor.h"
#include "uop/print.h"
#include "uop/spec.h"
#include "uop/text_ir.h"
#include "uop/uop.h"

namespace {

int failures = 0;

void Expect(bool ok, const std::string& what) {
  if (!ok) {
    std::cerr << "FAILED: " << what << "\n";
    ++failures;
  }
}

}  // namespace

int main() {
  using uopc::UOp;
  using uopc::UOpPtr;
  namespace dtypes = uopc::dtypes;

  // out[i] = a[i] * 2 + 1 for i in [0, 3): a linearized program like tinygrad's.
  UOpPtr out = UOp::New(uopc::Ops::DEFINE_GLOBAL, dtypes::kInt32.Ptr(3), {}, 0);
  UOpPtr in = UOp::New(uopc::Ops::DEFINE_GLOBAL, dtypes::kInt32.Ptr(3), {}, 1);
  UOpPtr i = UOp::Range(dtypes::kInt32, 3, 0);
  UOpPtr value = in.index(i).load() * 2 + 1;
  UOpPtr sink = UOp::Sink({out.index(i).store({value})});

  absl::Status verified = uopc::VerifyProgram(sink.get());
  Expect(verified.ok(), "VerifyProgram: " + std::string(verified.message()));

  std::string ir = uopc::PrintIr(sink.get());
  std::cout << ir << "\n" << uopc::PrintUOpTree(sink.get()) << "\n";
  Expect(ir.find("MUL") != std::string::npos && ir.find("return") != std::string::npos, "IR text:\n" + ir);

  absl::StatusOr<UOpPtr> parsed = uopc::ParseIrSingle(ir);
  Expect(parsed.ok() && parsed->get() == sink.get(), "the IR parses back to the same node");

  std::string listing = uopc::PrintUOpsListing(sink->Toposort());
  std::cout << listing;
  Expect(listing.find("Ops.STORE") != std::string::npos, "listing:\n" + listing);

  // A malformed text is an error with a location, not a crash.
  absl::StatusOr<UOpPtr> bad = uopc::ParseIrSingle("%0 = CONST : int32 arg=1\n%1 = ADD : int32 (%0, %9)\n");
  Expect(!bad.ok() && std::string(bad.status().message()).rfind("2:", 0) == 0,
         "malformed IR error: " + std::string(bad.status().message()));

  if (failures == 0) std::cout << "uop_consumer_test: all checks passed\n";
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
