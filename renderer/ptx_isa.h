// Test support: which instruction, modifier and type combinations PTX defines, for the instructions the PTX
// renderer emits. ptxas rejects a combination the ISA lacks (`sqrt.approx.f64`: "Illegal modifier '.approx'
// for instruction 'sqrt'"), but ptxas is only on machines with the CUDA toolkit; this table lets every test
// machine check a render. It lists only what the renderer can emit (for the types of its registers: 16-, 32-
// and 64-bit integers, f16, f32, f64, pred), checked against ptxas 13.0 for sm_80 (//runtime:ptx_isa_test
// checks it again wherever ptxas is installed).
//
//   std::vector<std::string> bad = IllegalPtxInstructions(src);   // {"sqrt.approx.f64 (line 30)"}
//   if (std::string ptxas = FindPtxas(); !ptxas.empty()) errors = PtxasErrors(ptxas, filled_src, "sm_80");
#ifndef UOPC_RENDERER_PTX_ISA_H_
#define UOPC_RENDERER_PTX_ISA_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace uopc {

// The instructions of `ptx` whose opcode, modifiers and types the table does not allow, as "mnemonic (line
// N)". Directives, labels, loads, stores, branches, barriers and mma are not checked.
std::vector<std::string> IllegalPtxInstructions(absl::string_view ptx);

// Whether one mnemonic ("sqrt.rn.f64", "setp.lt.s32", "cvt.rzi.s32.f32") is in the table; true for the
// unchecked instructions above.
bool IsLegalPtxMnemonic(absl::string_view mnemonic);

// A mnemonic of every combination the table allows (for checking the table itself with ptxas).
std::vector<std::string> LegalPtxMnemonics();

// ptxas, where this machine has the CUDA toolkit: $PTXAS, else /usr/local/cuda/bin/ptxas; "" when neither
// is an executable file.
std::string FindPtxas();
// Assembles `ptx` (its VERSION and TARGET placeholders filled in) for `arch` with `ptxas`; "" when it
// assembles, else ptxas's messages.
std::string PtxasErrors(const std::string& ptxas, absl::string_view ptx, absl::string_view arch);

}  // namespace uopc

#endif  // UOPC_RENDERER_PTX_ISA_H_
