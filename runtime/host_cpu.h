// The host CPU as compilers that target it see it: part of the compile cache keys of every device whose
// code depends on the host's instruction set (CPU's `-march=native`, OPENCL's POCL), and the kind of kernel
// the host's devices (CPU, LLVM) compile by default.
#ifndef UOPC_RUNTIME_HOST_CPU_H_
#define UOPC_RUNTIME_HOST_CPU_H_

#include <string>

namespace uopc {

// The host CPU's model name and feature flags, from /proc/cpuinfo ("" where it cannot be read).
std::string HostCpuIdentity();

// The float32 lanes the host devices' kernels keep (Renderer::vector_width): 16, uopc's vector-blocked
// kernels, unless UOPC_KERNELS=tinygrad, which gives 1 (tinygrad's kernels, byte for byte). Any other value
// warns once on stderr and gives 16.
// Above 1 it also stands for UOPC_KERNELS=fast on the GPU devices (CUDA's renderer gets uopc's GPU opts).
int HostKernelVectorWidth();

}  // namespace uopc

#endif  // UOPC_RUNTIME_HOST_CPU_H_
