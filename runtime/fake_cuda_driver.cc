// A stand-in for the CUDA driver (libcuda.so.1) and NVRTC in one shared library, for testing the CUDA
// device's plumbing on machines without a GPU: memory is host memory, "PTX" is text that must carry no
// unfilled placeholder and name its entry, NVRTC turns CUDA C into such text, and the only kernel that runs
// is E_3 (data0[i] = data1[i] + data2[i] for every thread). Exports the driver's and NVRTC's C symbols, plus
// fake_cuda_* controls the tests call through dlsym.
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

int device_count = 1;
unsigned last_dims[6] = {0, 0, 0, 0, 0, 0};

struct Function {
  std::string name;
};
struct Module {
  std::string image;
  std::vector<std::unique_ptr<Function>> functions;  // freed with the module, as the driver does
};
struct Program {
  std::string src, ptx, log;
};

// The entry name a PTX text declares, or "".
bool HasEntry(const std::string& image, const std::string& name) {
  return image.find(".entry " + name + "(") != std::string::npos;
}

}  // namespace

extern "C" {

// ---- controls ----
void fake_cuda_set_device_count(int n) { device_count = n; }
void fake_cuda_last_launch(unsigned* dims) { std::memcpy(dims, last_dims, sizeof(last_dims)); }

// ---- the driver API ----
int cuInit(unsigned) { return device_count > 0 ? 0 : 100; }  // CUDA_ERROR_NO_DEVICE
int cuDriverGetVersion(int* v) {
  *v = 12040;
  return 0;
}
int cuDeviceGetCount(int* n) {
  *n = device_count;
  return 0;
}
int cuDeviceGet(int* d, int ordinal) {
  *d = ordinal;
  return ordinal < device_count ? 0 : 101;  // CUDA_ERROR_INVALID_DEVICE
}
int cuDeviceGetName(char* name, int len, int) {
  std::strncpy(name, "Fake GPU", len);
  return 0;
}
int cuDeviceGetAttribute(int* v, int attribute, int) {
  *v = attribute == 75 ? 8 : 0;  // compute capability 8.0
  return 0;
}
int cuCtxCreate_v2(void** ctx, unsigned, int) {
  *ctx = std::malloc(1);
  return 0;
}
int cuCtxDestroy_v2(void* ctx) {
  std::free(ctx);
  return 0;
}
int cuCtxSetCurrent(void*) { return 0; }
int cuCtxSynchronize() { return 0; }
int cuMemAlloc_v2(unsigned long long* p, size_t n) {
  if (n == 0) return 1;  // CUDA_ERROR_INVALID_VALUE, as the driver
  *p = reinterpret_cast<unsigned long long>(std::calloc(n, 1));
  return 0;
}
int cuMemFree_v2(unsigned long long p) {
  std::free(reinterpret_cast<void*>(p));
  return 0;
}
int cuMemcpyHtoD_v2(unsigned long long dst, const void* src, size_t n) {
  std::memcpy(reinterpret_cast<void*>(dst), src, n);
  return 0;
}
int cuMemcpyDtoH_v2(void* dst, unsigned long long src, size_t n) {
  std::memcpy(dst, reinterpret_cast<void*>(src), n);
  return 0;
}
int cuModuleLoadDataEx(void** module, const void* image, unsigned n, int* options, void** values) {
  std::string text(static_cast<const char*>(image));
  const char* problem = text.find("VERSION") != std::string::npos || text.find("TARGET") != std::string::npos
                            ? "fake ptxas: a placeholder is left in the PTX"
                        : text.find(".entry ") == std::string::npos ? "fake ptxas: no entry"
                                                                    : nullptr;
  if (problem != nullptr) {
    for (unsigned i = 0; i < n; ++i) {
      if (options[i] == 5) std::strcpy(static_cast<char*>(values[i]), problem);  // CU_JIT_ERROR_LOG_BUFFER
    }
    return 218;  // CUDA_ERROR_INVALID_PTX
  }
  *module = new Module{text, {}};
  return 0;
}
int cuModuleUnload(void* module) {
  delete static_cast<Module*>(module);
  return 0;
}
int cuModuleGetFunction(void** f, void* module, const char* name) {
  if (!HasEntry(static_cast<Module*>(module)->image, name)) return 500;  // CUDA_ERROR_NOT_FOUND
  Module* m = static_cast<Module*>(module);
  m->functions.push_back(std::make_unique<Function>(Function{name}));
  *f = m->functions.back().get();
  return 0;
}
int cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned, void*, void** params, void**) {
  unsigned dims[6] = {gx, gy, gz, bx, by, bz};
  std::memcpy(last_dims, dims, sizeof(dims));
  if (static_cast<Function*>(f)->name != "E_3") return 0;
  int* out = *static_cast<int**>(params[0]);
  const int* a = *static_cast<int**>(params[1]);
  const int* b = *static_cast<int**>(params[2]);
  for (unsigned i = 0; i < gx * bx; ++i) out[i] = a[i] + b[i];
  return 0;
}
int cuEventCreate(void** e, unsigned) {
  *e = std::malloc(1);
  return 0;
}
int cuEventRecord(void*, void*) { return 0; }
int cuEventSynchronize(void*) { return 0; }
int cuEventElapsedTime(float* ms, void*, void*) {
  *ms = 0.5f;
  return 0;
}
int cuEventDestroy_v2(void* e) {
  std::free(e);
  return 0;
}
int cuGetErrorName(int code, const char** name) {
  *name = code == 100   ? "CUDA_ERROR_NO_DEVICE"
          : code == 218 ? "CUDA_ERROR_INVALID_PTX"
                        : "CUDA_ERROR_UNKNOWN";
  return 0;
}
int cuGetErrorString(int code, const char** text) {
  *text = code == 100 ? "no CUDA-capable device is detected" : "fake error";
  return 0;
}

// ---- NVRTC ----
int nvrtcVersion(int* major, int* minor) {
  *major = 12;
  *minor = 4;
  return 0;
}
int nvrtcCreateProgram(void** prog, const char* src, const char*, int, const char* const*,
                       const char* const*) {
  *prog = new Program{src, "", ""};
  return 0;
}
int nvrtcCompileProgram(void* prog, int n, const char* const* options) {
  Program* p = static_cast<Program*>(prog);
  bool arch = false;
  for (int i = 0; i < n; ++i) arch |= std::strcmp(options[i], "--gpu-architecture=sm_80") == 0;
  if (!arch) p->log = "fake nvrtc: no --gpu-architecture=sm_80";
  if (p->src.find("undeclared_thing") != std::string::npos)
    p->log = "kernel.cu(1): error: identifier \"undeclared_thing\" is undefined";
  if (!p->log.empty()) return 6;  // NVRTC_ERROR_COMPILATION
  // The kernel's name: the identifier before the first '(' after __global__ void that is not a qualifier.
  size_t at = p->src.find("__global__ void");
  std::string name;
  while (at != std::string::npos && name.empty()) {
    size_t paren = p->src.find('(', at);
    if (paren == std::string::npos) break;
    size_t start = paren;
    while (start > 0 &&
           (std::isalnum(static_cast<unsigned char>(p->src[start - 1])) || p->src[start - 1] == '_'))
      --start;
    name = p->src.substr(start, paren - start);
    if (name == "__launch_bounds__") {
      name.clear();
      at = p->src.find(')', paren);
    }
  }
  p->ptx = ".version 7.5\n.target sm_80\n.address_size 64\n.visible .entry " + name + "(\n)\n{\n\tret;\n}\n";
  return 0;
}
int nvrtcGetProgramLogSize(void* prog, size_t* n) {
  *n = static_cast<Program*>(prog)->log.size() + 1;
  return 0;
}
int nvrtcGetProgramLog(void* prog, char* log) {
  std::strcpy(log, static_cast<Program*>(prog)->log.c_str());
  return 0;
}
int nvrtcGetPTXSize(void* prog, size_t* n) {
  *n = static_cast<Program*>(prog)->ptx.size() + 1;
  return 0;
}
int nvrtcGetPTX(void* prog, char* ptx) {
  std::strcpy(ptx, static_cast<Program*>(prog)->ptx.c_str());
  return 0;
}
int nvrtcDestroyProgram(void** prog) {
  delete static_cast<Program*>(*prog);
  *prog = nullptr;
  return 0;
}
const char* nvrtcGetErrorString(int code) { return code == 6 ? "NVRTC_ERROR_COMPILATION" : "NVRTC_ERROR"; }

}  // extern "C"
