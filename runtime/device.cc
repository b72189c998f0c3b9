#include "runtime/device.h"

#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "codegen/kernel_info.h"

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

absl::StatusOr<Buffer> Buffer::Allocate(Device& device, DType dtype, int64_t size) {
  if (dtype.is_ptr() || dtype.count() != 1 || dtype.is_void()) {
    return absl::InvalidArgumentError(absl::StrCat("a buffer holds scalars, not ", dtype.ToString()));
  }
  if (size < 0) return absl::InvalidArgumentError(absl::StrCat("negative buffer size ", size));
  absl::StatusOr<void*> handle = device.allocator().Alloc(size * dtype.itemsize());
  if (!handle.ok()) return handle.status();
  return Buffer(&device, dtype, size, *handle);
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
  if (handle_ != nullptr) device_->allocator().Free(handle_, nbytes());
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
  absl::Status status = CopyOut(absl::MakeSpan(bytes));
  if (!status.ok()) return status;
  return bytes;
}

// ---- Compiler ----

absl::StatusOr<std::string> Compiler::CompileCached(absl::string_view src) const {
  absl::StatusOr<std::string> key = CacheKey();
  if (!key.ok()) return key.status();
  bool cached = cache_.enabled() && !key->empty();
  if (cached) {
    if (std::optional<std::string> lib = cache_.Get(CacheName(), *key, src)) {
      cache_hits_.fetch_add(1, std::memory_order_relaxed);
      return *std::move(lib);
    }
  }
  compiles_.fetch_add(1, std::memory_order_relaxed);
  absl::StatusOr<std::string> lib = Compile(src);
  // A failed store only costs the next process a compile.
  if (lib.ok() && cached) cache_.Put(CacheName(), *key, src, *lib);
  return lib;
}

// ---- ProgramSpec ----

absl::StatusOr<ProgramSpec> ProgramSpec::FromUops(std::vector<UOpPtr> uops, std::string src,
                                                  std::optional<std::vector<int64_t>> global_size,
                                                  std::optional<std::vector<int64_t>> local_size) {
  const KernelInfo* info =
      uops.empty() || uops.back()->op() != Ops::SINK ? nullptr : KernelInfoOf(uops.back().get());
  if (info == nullptr)
    return absl::InvalidArgumentError("a linear program ends with a SINK holding a KernelInfo");
  ProgramSpec spec;
  spec.name = info->name;
  spec.src = std::move(src);
  bool dims_given = global_size.has_value() || local_size.has_value();
  std::optional<std::vector<int64_t>> special_global, special_local;
  bool has_thread_index = false;  // an `i` SPECIAL: a flat thread index, no separate local dims
  for (const UOpPtr& u : uops) {
    if (u->op() == Ops::DEFINE_GLOBAL) spec.globals.push_back(u->arg().as_int());
    if (u->op() == Ops::DEFINE_VAR) spec.vars.push_back(u->var_name());
    if (u->op() != Ops::SPECIAL || dims_given) continue;
    const Arg& arg = u->arg();
    if (!arg.is_tuple() || arg.size() != 2 || !arg[0].is_string() || arg[0].as_string().empty()) {
      return absl::InvalidArgumentError("a SPECIAL's arg must be (name, size)");
    }
    if (!arg[1].is_int()) return absl::UnimplementedError("symbolic launch sizes are not supported yet");
    const std::string& name = arg[0].as_string();
    char kind = name[0];
    int axis = name.back() - '0';
    if (kind == 'i') has_thread_index = true;
    if (axis < 0 || axis > 2 || (kind != 'g' && kind != 'l' && kind != 'i')) {
      return absl::InvalidArgumentError(absl::StrCat("unknown SPECIAL ", name));
    }
    std::optional<std::vector<int64_t>>& dims = kind == 'l' ? special_local : special_global;
    if (!dims) dims = std::vector<int64_t>{1, 1, 1};
    (*dims)[axis] = arg[1].as_int();
  }
  if (dims_given) {
    spec.global_size = std::move(global_size);
    spec.local_size = std::move(local_size);
  } else {
    spec.global_size = std::move(special_global);
    // As tinygrad: a program with SPECIALs has local dims (all 1 unless set), except with a flat thread
    // index.
    if (spec.global_size && !has_thread_index) {
      spec.local_size = special_local ? std::move(special_local) : std::vector<int64_t>{1, 1, 1};
    }
  }
  spec.uops = std::move(uops);
  return spec;
}

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
  return absl::OkStatus();
}

// ---- Device ----

absl::StatusOr<std::unique_ptr<Program>> Device::CreateProgram(const ProgramSpec& spec) {
  absl::StatusOr<std::string> src = ProgramSource(spec);
  if (!src.ok()) return src.status();
  absl::StatusOr<std::string> lib = compiler().CompileCached(*src);
  if (!lib.ok()) return lib.status();
  return LoadProgram(spec, *lib);
}

}  // namespace uopc
