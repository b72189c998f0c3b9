// Compiled with llvm-config-19's flags (no exceptions); the only file of uopc that includes LLVM.
#include "runtime/llvm_device.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "runtime/cpu_program.h"
#include "runtime/registry.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

// tinygrad's pipeline (LLVMOPT=1), run with loop unrolling and both vectorizers on.
constexpr char kPipeline[] = "default<O2>";

std::string ToString(llvm::Error error) { return llvm::toString(std::move(error)); }

// LLVM's native target, initialized once per process.
absl::Status InitializeLlvm() {
  static const bool ok = [] {
    return !llvm::InitializeNativeTarget() && !llvm::InitializeNativeTargetAsmPrinter() &&
           !llvm::InitializeNativeTargetAsmParser();
  }();
  if (!ok) return absl::FailedPreconditionError("LLVM has no native target for this host");
  return absl::OkStatus();
}

// The host's target: triple, CPU and its features (tinygrad's LLVMGetHostCPUName/Features), position
// independent code, -O2 code generation. Detected once.
absl::StatusOr<llvm::orc::JITTargetMachineBuilder> HostTarget() {
  static const auto* const host = [] {
    auto* result = new absl::StatusOr<llvm::orc::JITTargetMachineBuilder>(absl::UnknownError(""));
    if (absl::Status s = InitializeLlvm(); !s.ok()) {
      *result = s;
      return result;
    }
    llvm::Expected<llvm::orc::JITTargetMachineBuilder> jtmb =
        llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb) {
      *result = absl::FailedPreconditionError(
          absl::StrCat("LLVM cannot describe this host: ", ToString(jtmb.takeError())));
      return result;
    }
    jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
    jtmb->setRelocationModel(llvm::Reloc::PIC_);
    *result = std::move(*jtmb);
    return result;
  }();
  return *host;
}

// Every direct call names a function of exactly the called type: opaque pointers let the parser accept a
// call whose argument list differs from the callee's, which would be undefined behaviour at run time.
absl::Status CheckDirectCalls(const llvm::Module& module) {
  for (const llvm::Function& function : module) {
    for (const llvm::Instruction& instruction : llvm::instructions(function)) {
      const auto* call = llvm::dyn_cast<llvm::CallBase>(&instruction);
      if (call == nullptr) continue;
      const auto* callee = llvm::dyn_cast<llvm::Function>(call->getCalledOperand());
      if (callee == nullptr || callee->getFunctionType() == call->getFunctionType()) continue;
      std::string called, declared;
      llvm::raw_string_ostream called_os(called), declared_os(declared);
      call->getFunctionType()->print(called_os);
      callee->getFunctionType()->print(declared_os);
      return absl::InvalidArgumentError(absl::StrCat("@", function.getName().str(), " calls @",
                                                     callee->getName().str(), " as ", called_os.str(),
                                                     ", but it is ", declared_os.str()));
    }
  }
  return absl::OkStatus();
}

// The optimization pipeline on the module, for `machine`.
absl::Status Optimize(llvm::Module& module, llvm::TargetMachine& machine) {
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = true;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder builder(&machine, tuning);
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgscc;
  llvm::ModuleAnalysisManager modules;
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgscc);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgscc, modules);
  llvm::ModulePassManager passes;
  if (llvm::Error error = builder.parsePassPipeline(passes, kPipeline)) {
    return absl::InternalError(
        absl::StrCat("LLVM rejects the pipeline ", kPipeline, ": ", ToString(std::move(error))));
  }
  passes.run(module, modules);
  return absl::OkStatus();
}

bool IsLlvmIdentifier(absl::string_view name) {
  if (name.empty() || absl::ascii_isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '$' && c != '-')
      return false;
  }
  return true;
}

// What the JIT reported on this thread while loading a program.
std::string& ReportedErrors() {
  thread_local std::string errors;
  return errors;
}

}  // namespace

// ---- the JIT ----

// One LLJIT for the device; each program gets a bare JITDylib that resolves nothing but itself and the C
// library's memset, memcpy and memmove, which LLVM's optimizer writes for fill and copy loops (a zero fill of
// a tensor becomes a memset call).
class LLVMDevice::Jit {
 public:
  static absl::StatusOr<std::unique_ptr<Jit>> Create() {
    UOPC_ASSIGN_OR_RETURN(llvm::orc::JITTargetMachineBuilder host, HostTarget());
    llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit =
        llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(host).create();
    if (!jit) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot create LLVM's ORC JIT: ", ToString(jit.takeError())));
    }
    // Linking errors (such as "Symbols not found") reach the session's reporter, not the failed lookup;
    // without threads of its own the JIT reports them on the thread that loads the program.
    (*jit)->getExecutionSession().setErrorReporter(
        [](llvm::Error error) { absl::StrAppend(&ReportedErrors(), ToString(std::move(error)), "; "); });
    return std::unique_ptr<Jit>(new Jit(std::move(*jit)));
  }

  // The program's entry point, linked into a new JITDylib, and that JITDylib.
  absl::StatusOr<std::pair<llvm::orc::JITDylib*, CpuEntryFunction>> Load(const std::string& name,
                                                                         absl::string_view object) {
    llvm::orc::JITDylib& dylib =
        jit_->getExecutionSession().createBareJITDylib(absl::StrCat("uopc.", next_id_++, ".", name));
    ReportedErrors().clear();
    auto fail = [&](absl::string_view what, llvm::Error error) -> absl::Status {
      llvm::consumeError(jit_->getExecutionSession().removeJITDylib(dylib));
      return absl::InvalidArgumentError(
          absl::StrCat(what, " ", name, ": ", ReportedErrors(), ToString(std::move(error))));
    };
    const llvm::JITSymbolFlags exported = llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable;
    llvm::orc::SymbolMap memory_functions = {
        {jit_->mangleAndIntern("memset"), {llvm::orc::ExecutorAddr::fromPtr(&std::memset), exported}},
        {jit_->mangleAndIntern("memcpy"), {llvm::orc::ExecutorAddr::fromPtr(&std::memcpy), exported}},
        {jit_->mangleAndIntern("memmove"), {llvm::orc::ExecutorAddr::fromPtr(&std::memmove), exported}},
    };
    if (llvm::Error error = dylib.define(llvm::orc::absoluteSymbols(std::move(memory_functions)))) {
      return fail("cannot define the memory functions for", std::move(error));
    }
    if (llvm::Error error = jit_->addObjectFile(
            dylib,
            llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(object.data(), object.size()), name))) {
      return fail("cannot load the program", std::move(error));
    }
    llvm::Expected<llvm::orc::ExecutorAddr> entry = jit_->lookup(dylib, kCpuEntryName);
    if (!entry) return fail("cannot link the program", entry.takeError());
    return std::make_pair(&dylib, entry->toPtr<CpuEntryFunction>());
  }

  void Unload(llvm::orc::JITDylib* dylib) {
    llvm::consumeError(jit_->getExecutionSession().removeJITDylib(*dylib));
  }

 private:
  explicit Jit(std::unique_ptr<llvm::orc::LLJIT> jit) : jit_(std::move(jit)) {}
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::atomic<int64_t> next_id_{0};
};

// ---- LLVMCompiler ----

LLVMCompiler::LLVMCompiler(CompileCache cache) : Compiler(std::move(cache)) {}

absl::StatusOr<std::string> LLVMCompiler::CacheKey() const {
  UOPC_ASSIGN_OR_RETURN(llvm::orc::JITTargetMachineBuilder host, HostTarget());
  return absl::StrCat("LLVM ", LLVM_VERSION_STRING, "\n", kPipeline, "\n", host.getTargetTriple().str(), "\n",
                      host.getCPU(), "\n", host.getFeatures().getString());
}

absl::StatusOr<std::string> LLVMCompiler::Compile(absl::string_view src) const {
  UOPC_ASSIGN_OR_RETURN(llvm::orc::JITTargetMachineBuilder host, HostTarget());
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> made = host.createTargetMachine();
  if (!made) {
    return absl::InternalError(
        absl::StrCat("cannot create LLVM's target machine: ", ToString(made.takeError())));
  }
  llvm::TargetMachine* machine = made->get();

  llvm::LLVMContext context;
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> module = llvm::parseIR(
      llvm::MemoryBufferRef(llvm::StringRef(src.data(), src.size()), "kernel.ll"), diagnostic, context);
  if (module == nullptr) {
    std::string message;
    llvm::raw_string_ostream os(message);
    diagnostic.print("uopc", os, /*ShowColors=*/false);
    return absl::InvalidArgumentError(absl::StrCat("LLVM cannot parse the IR:\n", os.str()));
  }
  std::string problems;
  llvm::raw_string_ostream problems_os(problems);
  if (llvm::verifyModule(*module, &problems_os)) {
    return absl::InvalidArgumentError(absl::StrCat("the LLVM IR does not verify:\n", problems_os.str()));
  }
  UOPC_RETURN_IF_ERROR(CheckDirectCalls(*module));

  module->setDataLayout(machine->createDataLayout());
  module->setTargetTriple(machine->getTargetTriple().str());
  UOPC_RETURN_IF_ERROR(Optimize(*module, *machine));

  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream object_os(object);
  llvm::legacy::PassManager emit;
  if (machine->addPassesToEmitFile(emit, object_os, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    return absl::InternalError("LLVM's target machine cannot emit an object file");
  }
  emit.run(*module);
  if (object.empty()) return absl::InternalError("LLVM emitted an empty object file");
  return std::string(object.data(), object.size());
}

// ---- LLVMDevice ----

absl::StatusOr<std::unique_ptr<LLVMDevice>> LLVMDevice::Create(Options options) {
  UOPC_ASSIGN_OR_RETURN(std::unique_ptr<Jit> jit, Jit::Create());
  return std::unique_ptr<LLVMDevice>(new LLVMDevice(std::move(options), std::move(jit)));
}

LLVMDevice::LLVMDevice(Options options, std::unique_ptr<Jit> jit)
    : Device("LLVM"),
      compiler_(CompileCache(options.cache_directory.value_or(CompileCache::DefaultDirectory()))),
      renderer_(CoreSplit{.cores = std::max(1, options.threads)}, options.vector_width),
      jit_(std::move(jit)),
      pool_(std::make_shared<CpuThreadPool>(std::max(1, options.threads))) {}

LLVMDevice::~LLVMDevice() = default;

absl::StatusOr<std::string> LLVMDevice::ProgramSource(const ProgramSpec& spec) const {
  if (!IsLlvmIdentifier(spec.name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel name '", spec.name, "' is not an LLVM identifier"));
  }
  std::vector<std::string> lines, args;
  for (size_t i = 0; i < spec.globals.size(); ++i) {
    lines.push_back(absl::StrCat("  %b", i, "p = getelementptr inbounds ptr, ptr %bufs, i64 ", i));
    lines.push_back(absl::StrCat("  %b", i, " = load ptr, ptr %b", i, "p"));
    args.push_back(absl::StrCat("ptr %b", i));
  }
  for (size_t i = 0; i < spec.vars.size(); ++i) {
    lines.push_back(absl::StrCat("  %v", i, "p = getelementptr inbounds i32, ptr %vars, i64 ", i));
    lines.push_back(absl::StrCat("  %v", i, " = load i32, ptr %v", i, "p"));
    args.push_back(absl::StrCat("i32 %v", i));
  }
  if (TakesCoreId(spec)) args.push_back("i32 %core_id");
  return absl::StrCat(spec.src, "\n; uopc: the host calls every kernel through this one signature\n",
                      "define void @", kCpuEntryName, "(ptr %bufs, ptr %vars, i32 %core_id) {\n",
                      absl::StrJoin(lines, "\n"), lines.empty() ? "" : "\n", "  call void @", spec.name, "(",
                      absl::StrJoin(args, ", "), ")\n  ret void\n}\n");
}

absl::StatusOr<std::unique_ptr<Program>> LLVMDevice::LoadProgram(const ProgramSpec& spec,
                                                                 absl::string_view lib) {
  UOPC_ASSIGN_OR_RETURN(auto loaded, jit_->Load(spec.name, lib));
  Jit* jit = jit_.get();
  std::shared_ptr<void> dylib(loaded.first,
                              [jit](void* d) { jit->Unload(static_cast<llvm::orc::JITDylib*>(d)); });
  return std::unique_ptr<Program>(new CpuProgram(*this, spec, loaded.second, std::move(dylib), pool_));
}

absl::StatusOr<std::unique_ptr<Device>> MakeLLVMDevice() {
  UOPC_ASSIGN_OR_RETURN(std::unique_ptr<LLVMDevice> device, LLVMDevice::Create(LLVMDevice::Options{}));
  return std::unique_ptr<Device>(std::move(device));
}

namespace {

// Linking //runtime:llvm is what makes "LLVM" a device of the program (runtime/registry.h).
const bool llvm_registered = RegisterDevice("LLVM", [] { return MakeLLVMDevice(); });

}  // namespace
}  // namespace uopc
