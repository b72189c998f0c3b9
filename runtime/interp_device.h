// The INTERP device: runs a program's linear uops with the interpreter (runtime/interp.h) instead of
// compiling its source (tinygrad's PYTHON device). Its memory is host memory, its "compiler" does nothing,
// and it takes the programs of the renderer it is made with (the CPU's C target by default), so every program
// the CPU device runs, INTERP runs too: the reference that compiled backends are checked against.
//
//   absl::StatusOr<Device*> interp = GetDevice("INTERP");
#ifndef UOPC_RUNTIME_INTERP_DEVICE_H_
#define UOPC_RUNTIME_INTERP_DEVICE_H_

#include <memory>

#include "renderer/cstyle.h"
#include "runtime/device.h"

namespace uopc {

class InterpDevice : public Device {
 public:
  // Programs for `renderer`'s target (owned by the device).
  explicit InterpDevice(std::unique_ptr<Renderer> renderer = std::make_unique<ClangRenderer>())
      : Device("INTERP"), renderer_(std::move(renderer)) {}

  Allocator& allocator() override { return allocator_; }
  const Compiler& compiler() const override { return compiler_; }
  const Renderer* renderer() const override { return renderer_.get(); }
  // The interpreter checks every access (an out-of-bounds one is an error naming the uop).
  bool TrapsOutOfBounds() const override { return true; }
  // Errors: a spec without uops, or uops the interpreter cannot run.
  absl::StatusOr<std::unique_ptr<Program>> LoadProgram(const ProgramSpec& spec,
                                                       absl::string_view lib) override;

 private:
  HostAllocator allocator_;
  SourceCompiler compiler_;  // INTERP programs are their uops; the source is kept as it is
  std::unique_ptr<Renderer> renderer_;
};

}  // namespace uopc

#endif  // UOPC_RUNTIME_INTERP_DEVICE_H_
