#include "renderer/gpu_cstyle.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "rewrite/upat.h"

namespace uopc {
namespace {

// The non-pointer dtypes of the program, in order of first use (tinygrad's uops_to_dtypes).
std::vector<DType> UsedDTypes(absl::Span<const UOp* const> uops) {
  std::vector<DType> out;
  for (const UOp* u : uops) {
    if (u->dtype().is_ptr()) continue;
    if (std::find(out.begin(), out.end(), u->dtype()) == out.end()) out.push_back(u->dtype());
  }
  return out;
}

// The distinct WMMA args, in order.
std::vector<const Arg*> WmmaArgs(absl::Span<const UOp* const> uops) {
  std::vector<const Arg*> out;
  for (const UOp* u : uops) {
    if (u->op() != Ops::WMMA) continue;
    bool seen = false;
    for (const Arg* a : out) seen = seen || *a == u->arg();
    if (!seen) out.push_back(&u->arg());
  }
  return out;
}

std::string WithPrefix(const std::vector<std::string>& prefix, const std::string& program) {
  return absl::StrCat(absl::StrJoin(prefix, "\n"), "\n", program);
}

}  // namespace

// ---- OpenCL ----

OpenCLRenderer::OpenCLRenderer() {
  device_ = "GPU";
  kernel_prefix_ = "__kernel ";
  buffer_prefix_ = "__global ";
  smem_align_ = "__attribute__ ((aligned (16))) ";
  smem_prefix_ = "__local ";
  barrier_ = "barrier(CLK_LOCAL_MEM_FENCE);";
  float4_ = "(float4)";
  code_for_workitem_ = {{'g', "get_group_id({})"}, {'l', "get_local_id({})"}, {'i', "get_global_id({})"}};
  type_map_ = {{ScalarType::kInt8, "char"},    {ScalarType::kUInt8, "uchar"},
               {ScalarType::kUInt32, "uint"},  {ScalarType::kUInt16, "ushort"},
               {ScalarType::kUInt64, "ulong"}, {ScalarType::kBFloat16, "ushort"}};
}

std::string OpenCLRenderer::RenderBitcast(DType dt, absl::string_view val) const {
  return absl::StrCat("as_", RenderDType(dt), "(", val, ")");
}

std::string OpenCLRenderer::RenderKernel(const std::string& function_name,
                                         const std::vector<std::string>& lines,
                                         const std::vector<Param>& params,
                                         absl::Span<const UOp* const> uops) const {
  std::string program = RenderFunction(function_name, lines, params, uops);
  for (const UOp* u : uops) {
    DType base = u->dtype().is_ptr() ? u->dtype().base() : u->dtype();
    if (base == dtypes::kFloat16)
      return WithPrefix({"#pragma OPENCL EXTENSION cl_khr_fp16 : enable"}, program);
  }
  return program;
}

// ---- Metal ----

MetalRenderer::MetalRenderer() {
  device_ = "METAL";
  shared_max_ = 32768;
  kernel_prefix_ = "kernel ";
  buffer_prefix_ = "device ";
  smem_prefix_ = "threadgroup ";
  arg_int_prefix_ = "constant int&";
  barrier_ = "threadgroup_barrier(mem_flags::mem_threadgroup);";
  float4_ = "float4";
  code_for_workitem_ = {{'g', "gid.{xyz}"}, {'l', "lid.{xyz}"}};
  extra_args_ = {"uint3 gid [[threadgroup_position_in_grid]]",
                 "uint3 lid [[thread_position_in_threadgroup]]"};
  type_map_ = {{ScalarType::kBFloat16, "bfloat"}};
}

std::string MetalRenderer::RenderBitcast(DType dt, absl::string_view val) const {
  return absl::StrCat("as_type<", RenderDType(dt), ">(", val, ")");
}

const CStyleRules& MetalRenderer::rules() const {
  static const CStyleRules* const rules =
      new CStyleRules(CStyleRules({{Ops::SIN, "precise::sin({0})"}}) + SharedRules());
  return *rules;
}

const PatternMatcher* MetalRenderer::extra_matcher() const {
  static const PatternMatcher* const pm = new PatternMatcher(
      PatternMatcher({
          {UPat({Ops::SQRT, Ops::EXP2, Ops::LOG2, Ops::SIN}).dtype(dtypes::kBFloat16).named("x"),
           [](const Match& m) {
             const UOp* x = m.root();
             std::vector<UOpPtr> src;
             for (const UOpPtr& s : x->src()) src.push_back(s.cast(dtypes::kFloat32));
             return UOp::New(x->op(), dtypes::kFloat32, src, x->arg()).cast(dtypes::kBFloat16);
           }},
      }) +
      CStyleExtraMatcher());
  return pm;
}

std::string MetalRenderer::RenderKernel(const std::string& function_name,
                                        const std::vector<std::string>& lines,
                                        const std::vector<Param>& params,
                                        absl::Span<const UOp* const> uops) const {
  return WithPrefix({"#include <metal_stdlib>", "using namespace metal;"},
                    RenderFunction(function_name, lines, params, uops));
}

// ---- CUDA ----

CUDARenderer::CUDARenderer(std::string arch) : arch_(std::move(arch)) {
  device_ = "CUDA";
  global_max_ = std::vector<int64_t>{2147483647, 65535, 65535};
  local_max_ = std::vector<int64_t>{1024, 1024, 64};
  shared_max_ = 49152;
  tensor_cores_ = CudaTensorCores(arch_, AllowTf32());
  kernel_prefix_ = "extern \"C\" __global__ ";
  smem_prefix_ = "__shared__ ";
  smem_prefix_for_cast_ = false;
  barrier_ = "__syncthreads();";
  float4_ = "make_float4";
  code_for_workitem_ = {{'g', "blockIdx.{xyz}"},
                        {'l', "threadIdx.{xyz}"},
                        {'i', "(blockIdx.{xyz}*blockDim.{xyz}+threadIdx.{xyz})"}};
  type_map_ = {{ScalarType::kBFloat16, "nv_bfloat16"}};
}

namespace {
// CUDA's half math: for a half or bfloat16 scalar (not a vector of them), as tinygrad tests `dtype in (...)`.
bool IsHalfScalar(const UOp* u) { return u->dtype() == dtypes::kFloat16 || u->dtype() == dtypes::kBFloat16; }
}  // namespace

const CStyleRules& CUDARenderer::rules() const {
  static const CStyleRules* const rules =
      new CStyleRules(CStyleRules({
                          {RenderPat(Ops::SIN).when(IsHalfScalar), "hsin({0})"},
                          {RenderPat(Ops::LOG2).when(IsHalfScalar), "hlog2({0})"},
                          {RenderPat(Ops::EXP2).when(IsHalfScalar), "hexp2({0})"},
                          {RenderPat(Ops::SQRT).when(IsHalfScalar), "hsqrt({0})"},
                          {RenderPat(Ops::RECIP).when(IsHalfScalar), "hrcp({0})"},
                      }) +
                      SharedRules());
  return *rules;
}

std::string CUDARenderer::KernelModifier(absl::Span<const UOp* const> uops) const {
  int64_t threads = 1;
  for (const UOp* u : uops) {
    if (u->op() != Ops::SPECIAL || !u->arg().is_tuple() || u->arg().size() != 2 || !u->arg()[0].is_string())
      continue;
    const std::string& name = u->arg()[0].as_string();
    if (!name.empty() && name[0] == 'l' && u->arg()[1].is_int()) threads *= u->arg()[1].as_int();
  }
  return absl::StrCat("__launch_bounds__(", threads, ") ");
}

std::string CUDARenderer::RenderKernel(const std::string& function_name,
                                       const std::vector<std::string>& lines,
                                       const std::vector<Param>& params,
                                       absl::Span<const UOp* const> uops) const {
  std::vector<std::string> prefix = {"#define INFINITY (__int_as_float(0x7f800000))",
                                     "#define NAN (__int_as_float(0x7fffffff))"};
  const std::vector<DType> used = UsedDTypes(uops);
  auto uses_scalar = [&](DType s) {
    for (DType dt : used) {
      if (dt.scalar() == s) return true;
    }
    return false;
  };
  if (uses_scalar(dtypes::kFloat16)) prefix.push_back("#include <cuda_fp16.h>");
  if (uses_scalar(dtypes::kBFloat16)) prefix.push_back("#include <cuda_bf16.h>");
  static constexpr char kNames[] = "xyzwabcdefghijkl";
  for (DType dt : used) {
    if ((dt.count() != 4 && dt.count() != 8) ||
        (dt.scalar() != dtypes::kFloat16 && dt.scalar() != dtypes::kBFloat16)) {
      continue;
    }
    const std::string vec = RenderDType(dt), scalar = RenderDType(dt.scalar());
    std::vector<std::string> elems, header;
    for (int i = 0; i < dt.count(); ++i) {
      elems.push_back(std::string(1, kNames[i]));
      header.push_back(absl::StrCat(scalar, " ", std::string(1, kNames[i])));
    }
    const std::string e = absl::StrJoin(elems, ", ");
    prefix.push_back(absl::StrCat("struct __align__(", dt.itemsize(), ") ", vec, " { ", scalar, " ", e,
                                  "; }; __device__ ", vec, " make_", vec, "(", absl::StrJoin(header, ", "),
                                  ") { ", vec, " r={", e, "}; return r; }"));
  }
  // The tensor-core functions: one `mma.sync` per WMMA shape and dtype.
  for (const Arg* arg : WmmaArgs(uops)) {
    const Arg::Tuple& t = arg->as_tuple();
    if (t.size() < 7) continue;
    const std::string& name = t[0].as_string();
    const int64_t n = t[1][0].as_int(), m = t[1][1].as_int(), k = t[1][2].as_int();
    const DType in = t[2].as_dtype(), out = t[3].as_dtype();
    const DType types[3] = {in, in, out};
    std::string wmma_dtypes[3];
    int64_t n_operands[3];
    for (int i = 0; i < 3; ++i) {
      int64_t size = 1;
      for (const Arg& pair : t[6][i].as_tuple()) size *= pair[1].as_int();
      wmma_dtypes[i] = RenderDType(types[i].Vec(static_cast<int>(size)));
      n_operands[i] = size * types[i].itemsize() / 4;
    }
    const int64_t total = n_operands[0] + n_operands[1] + n_operands[2];
    auto ops = [](int64_t from, int64_t to) {
      std::vector<std::string> v;
      for (int64_t i = from; i < to; ++i) v.push_back(absl::StrCat("%", i));
      return absl::StrJoin(v, ", ");
    };
    auto regs = [](absl::string_view constraint, absl::string_view array, int64_t count) {
      std::vector<std::string> v;
      for (int64_t i = 0; i < count; ++i)
        v.push_back(absl::StrCat("\"", constraint, "\"(", array, "[", i, "])"));
      return absl::StrJoin(v, ", ");
    };
    const std::string dt_in = in == dtypes::kFloat32 ? "tf32" : in == dtypes::kFloat16 ? "f16" : "bf16";
    const std::string dt_out = out == dtypes::kFloat32 ? "f32" : "f16";
    const std::string c_ops = ops(0, n_operands[2]);
    prefix.push_back(absl::StrCat(
        "__device__ ", wmma_dtypes[2], " __", name, "(", wmma_dtypes[0], " a, ", wmma_dtypes[1], " b, ",
        wmma_dtypes[2],
        " c){\n  int *a_pk = (int *)(&a), *b_pk = (int *)(&b), *c_pk = (int *)(&c);\n  "
        "asm(\"mma.sync.aligned.m",
        m, "n", n, "k", k, ".row.col.", dt_out, ".", dt_in, ".", dt_in, ".", dt_out, "\"\n      \"{", c_ops,
        "}, {", ops(n_operands[2], n_operands[2] + n_operands[0]), "},\"\n      \"{",
        ops(total - n_operands[1], total), "}, {", c_ops, "};\"\n    : ", regs("+r", "c_pk", n_operands[2]),
        "\n    : ", regs("r", "a_pk", n_operands[0]), ", ", regs("r", "b_pk", n_operands[1]),
        ");\n  return c;\n}"));
  }
  return WithPrefix(prefix, RenderFunction(function_name, lines, params, uops));
}

std::unique_ptr<Renderer> MakeOpenCLRenderer() { return std::make_unique<OpenCLRenderer>(); }
std::unique_ptr<Renderer> MakeMetalRenderer() { return std::make_unique<MetalRenderer>(); }
std::unique_ptr<Renderer> MakeCUDARenderer(absl::string_view arch) {
  return std::make_unique<CUDARenderer>(std::string(arch));
}

}  // namespace uopc
