#include "codegen/program_spec.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "uop/kernel_info.h"

namespace uopc {

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
    // As tinygrad: a program with SPECIALs has global and local dims (all 1 unless set), except that a flat
    // thread index leaves no local dims.
    if (special_global || special_local) {
      spec.global_size = special_global ? std::move(special_global) : std::vector<int64_t>{1, 1, 1};
      if (!has_thread_index) {
        spec.local_size = special_local ? std::move(special_local) : std::vector<int64_t>{1, 1, 1};
      }
    }
  }
  for (const UOpPtr& u : uops) {
    if (u->op() != Ops::STORE && u->op() != Ops::LOAD) continue;
    std::vector<int64_t>& buffers = u->op() == Ops::STORE ? spec.outs : spec.ins;
    for (const UOp* x : u->src(0)->Toposort()) {
      if (x->op() == Ops::DEFINE_GLOBAL) buffers.push_back(x->arg().as_int());
    }
  }
  for (std::vector<int64_t>* v : {&spec.outs, &spec.ins}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  spec.uops = std::move(uops);
  return spec;
}

}  // namespace uopc
