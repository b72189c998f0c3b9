// The host CPU as compilers that target it see it: part of the compile cache keys of every device whose
// code depends on the host's instruction set (CPU's `-march=native`, OPENCL's POCL).
#ifndef UOPC_RUNTIME_HOST_CPU_H_
#define UOPC_RUNTIME_HOST_CPU_H_

#include <string>

namespace uopc {

// The host CPU's model name and feature flags, from /proc/cpuinfo ("" where it cannot be read).
std::string HostCpuIdentity();

}  // namespace uopc

#endif  // UOPC_RUNTIME_HOST_CPU_H_
