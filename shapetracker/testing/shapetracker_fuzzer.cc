// libFuzzer target: the movement-op sequence (or symbolic case) that the shared generator derives from the
// input is applied to a ShapeTracker and to the ReferenceModel, which must agree after every op
// (differential.h). A finding prints what differs and the sequence as a `uopc shape` JSON line, then aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "shapetracker/testing/differential.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (std::optional<std::string> failure = uopc::FuzzOneInput(data, size)) {
    std::fprintf(stderr, "ShapeTracker differs from the reference model:\n%s\n", failure->c_str());
    std::abort();
  }
  return 0;
}
