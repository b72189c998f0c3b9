// LeakSanitizer (--config=asan) reads this hook in a test that runs programs on the OPENCL device: POCL keeps
// its LLVM 15 compiler state (contexts, modules) for the life of the process and never frees it, which LSan
// reports at exit as thousands of leaks inside libpocl and libLLVM. They are not uopc's; uopc's own leaks are
// still reported. Link //runtime/testing:pocl_leak_suppressions into such a test rather than defining the
// hook.
extern "C" const char* __lsan_default_suppressions() { return "leak:libpocl.so\nleak:libLLVM-15.so\n"; }
