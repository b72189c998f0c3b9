#include "runtime/device.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "codegen/bounds_check.h"
#include "uop/kernel_info.h"
#include "uop/status_macros.h"

namespace uopc {

// ---- HostAllocator ----

absl::StatusOr<void*> HostAllocator::Alloc(int64_t nbytes) {
  if (nbytes < 0) return absl::InvalidArgumentError(absl::StrCat("allocating ", nbytes, " bytes"));
  // tinygrad aligns to 0x20 for 256-bit loads, pages from 4 KiB on; 64 also covers AVX-512 and cache lines.
  size_t alignment = nbytes >= 0x1000 ? 0x1000 : 64;
  size_t rounded = (static_cast<size_t>(nbytes) + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
  if (p == nullptr) return absl::ResourceExhaustedError(absl::StrCat("cannot allocate ", nbytes, " bytes"));
  return p;
}

void HostAllocator::Free(void* handle, int64_t nbytes) { std::free(handle); }

absl::Status HostAllocator::CopyIn(void* dest, absl::Span<const uint8_t> src) {
  if (!src.empty()) std::memcpy(dest, src.data(), src.size());
  return absl::OkStatus();
}

absl::Status HostAllocator::CopyOut(absl::Span<uint8_t> dest, const void* src) {
  if (!dest.empty()) std::memcpy(dest.data(), src, dest.size());
  return absl::OkStatus();
}

// ---- Buffer ----

namespace {
std::atomic<int64_t> device_memory_used{0};
}  // namespace

int64_t DeviceMemoryUsed() { return device_memory_used.load(std::memory_order_relaxed); }

absl::StatusOr<Buffer> Buffer::Allocate(Device& device, DType dtype, int64_t size) {
  if (dtype.is_ptr() || dtype.count() != 1 || dtype.is_void()) {
    return absl::InvalidArgumentError(absl::StrCat("a buffer holds scalars, not ", dtype.ToString()));
  }
  if (size < 0) return absl::InvalidArgumentError(absl::StrCat("negative buffer size ", size));
  UOPC_ASSIGN_OR_RETURN(void* handle, device.allocator().Alloc(size * dtype.itemsize()));
  device_memory_used.fetch_add(size * dtype.itemsize(), std::memory_order_relaxed);
  return Buffer(&device, dtype, size, handle);
}

Buffer::Buffer(Buffer&& other) noexcept
    : device_(other.device_), dtype_(other.dtype_), size_(other.size_), handle_(other.handle_) {
  other.handle_ = nullptr;
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    Release();
    device_ = other.device_;
    dtype_ = other.dtype_;
    size_ = other.size_;
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

Buffer::~Buffer() { Release(); }

void Buffer::Release() {
  if (handle_ == nullptr) return;
  device_->allocator().Free(handle_, nbytes());
  device_memory_used.fetch_sub(nbytes(), std::memory_order_relaxed);
  handle_ = nullptr;
}

absl::Status Buffer::CopyIn(absl::Span<const uint8_t> bytes) {
  if (static_cast<int64_t>(bytes.size()) != nbytes()) {
    return absl::InvalidArgumentError(
        absl::StrCat("copying ", bytes.size(), " bytes into a buffer of ", nbytes(), " bytes"));
  }
  return device_->allocator().CopyIn(handle_, bytes);
}

absl::Status Buffer::CopyOut(absl::Span<uint8_t> bytes) const {
  if (static_cast<int64_t>(bytes.size()) != nbytes()) {
    return absl::InvalidArgumentError(
        absl::StrCat("copying a buffer of ", nbytes(), " bytes out into ", bytes.size(), " bytes"));
  }
  return device_->allocator().CopyOut(bytes, handle_);
}

absl::StatusOr<std::vector<uint8_t>> Buffer::ToBytes() const {
  std::vector<uint8_t> bytes(nbytes());
  UOPC_RETURN_IF_ERROR(CopyOut(absl::MakeSpan(bytes)));
  return bytes;
}

// ---- Compiler ----

absl::StatusOr<std::string> Compiler::CompileCached(absl::string_view src) const {
  UOPC_ASSIGN_OR_RETURN(std::string key, CacheKey());
  bool cached = cache_.enabled() && !key.empty();
  if (cached) {
    if (std::optional<std::string> lib = cache_.Get(CacheName(), key, src)) {
      cache_hits_.fetch_add(1, std::memory_order_relaxed);
      return *std::move(lib);
    }
  }
  compiles_.fetch_add(1, std::memory_order_relaxed);
  absl::StatusOr<std::string> lib = Compile(src);
  // A failed store only costs the next process a compile.
  if (lib.ok() && cached) cache_.Put(CacheName(), key, src, *lib);
  return lib;
}

// ---- ProgramSpec ----

// ---- Program ----

absl::Status Program::CheckArguments(const Device& device, absl::Span<Buffer* const> buffers,
                                     absl::Span<const int64_t> var_values) const {
  if (buffers.size() != spec_.globals.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(spec_.name, " takes ", spec_.globals.size(), " buffers, got ", buffers.size()));
  }
  if (var_values.size() != spec_.vars.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(spec_.name, " takes ", spec_.vars.size(), " variable values, got ", var_values.size()));
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i] == nullptr) return absl::InvalidArgumentError(absl::StrCat("buffer ", i, " is null"));
    if (&buffers[i]->device() != &device) {
      return absl::InvalidArgumentError(absl::StrCat("buffer ", i, " is on ", buffers[i]->device().name(),
                                                     ", the program on ", device.name()));
    }
  }
  // The program was proven in bounds of its DEFINE_GLOBALs' sizes: the buffers must be that large. They come
  // first in a linear program, in parameter order.
  size_t param = 0;
  for (const UOpPtr& u : spec_.uops) {
    if (param == buffers.size()) break;
    if (u->op() != Ops::DEFINE_GLOBAL) continue;
    const int64_t want = u->dtype().ptr_size() * u->dtype().base().itemsize();
    if (u->dtype().ptr_size() >= 0 && buffers[param]->nbytes() < want) {
      return absl::InvalidArgumentError(absl::StrCat(
          spec_.name, ": buffer ", param, " has ", buffers[param]->nbytes(), " bytes, the kernel's data",
          u->arg().ToString(), " takes ", want, " (", u->dtype().ToString(), ")"));
    }
    ++param;
  }
  return absl::OkStatus();
}

// ---- Device ----

absl::StatusOr<std::unique_ptr<Program>> Device::CreateProgram(const ProgramSpec& spec) {
  if (!TrapsOutOfBounds()) {
    UOPC_RETURN_IF_ERROR(CheckProgramBounds(spec.uops, spec.name));
  }
  UOPC_ASSIGN_OR_RETURN(std::string src, ProgramSource(spec));
  UOPC_ASSIGN_OR_RETURN(std::string lib, compiler().CompileCached(src));
  return LoadProgram(spec, lib);
}

}  // namespace uopc
