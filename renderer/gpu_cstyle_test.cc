#include "renderer/gpu_cstyle.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "renderer/targets.h"

namespace uopc {
namespace {

using ::testing::HasSubstr;

TEST(GpuCStyleTest, TargetDescriptions) {
  OpenCLRenderer cl;
  EXPECT_EQ(cl.device(), "GPU");
  EXPECT_TRUE(cl.tensor_cores().empty());
  MetalRenderer metal;
  EXPECT_EQ(metal.device(), "METAL");
  EXPECT_TRUE(metal.tensor_cores().empty());
  CUDARenderer cuda("sm_80");
  EXPECT_EQ(cuda.device(), "CUDA");
  EXPECT_EQ(cuda.arch(), "sm_80");
  EXPECT_EQ(cuda.shared_max(), 49152);
  ASSERT_EQ(cuda.tensor_cores().size(), 5u);
  EXPECT_EQ(cuda.tensor_cores()[0].ToString(), "WMMA_8_16_16_half_float");
  EXPECT_EQ(CUDARenderer("sm_75").tensor_cores().size(), 2u);
  EXPECT_TRUE(CUDARenderer("sm_70").tensor_cores().empty());
}

TEST(GpuCStyleTest, TargetsByNameCheckTheArch) {
  EXPECT_EQ((*MakeRendererForTarget("cuda"))->device(), "CUDA");
  EXPECT_EQ((*MakeRendererForTarget("cuda:sm_75"))->tensor_cores().size(), 2u);
  EXPECT_FALSE(MakeRendererForTarget("cuda:80").ok());
  EXPECT_FALSE(MakeRendererForTarget("cuda:sm_x").ok());
  EXPECT_FALSE(MakeRendererForTarget("opencl:sm_80").ok());
  absl::StatusOr<std::unique_ptr<Renderer>> unknown = MakeRendererForTarget("vulkan");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("known: clang, opencl, metal, cuda, ptx, llvm"));
  EXPECT_EQ(MakeOpenCLRenderer()->device(), "GPU");
  EXPECT_EQ(MakeMetalRenderer()->device(), "METAL");
}

TEST(GpuCStyleTest, Bitcasts) {
  EXPECT_EQ(OpenCLRenderer().RenderBitcast(dtypes::kUInt32, "x"), "as_uint(x)");
  EXPECT_EQ(MetalRenderer().RenderBitcast(dtypes::kUInt32, "x"), "as_type<unsigned int>(x)");
}

// A kernel storing gidx0+lidx0 into data0[gidx0].
std::vector<UOpPtr> StoreGroupId() {
  UOpPtr buf = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kInt32.Ptr(4), {}, Arg(int64_t{0}));
  UOpPtr g = UOp::New(Ops::SPECIAL, dtypes::kInt32, {}, Arg::Tuple{Arg("gidx0"), Arg(int64_t{4})});
  UOpPtr l = UOp::New(Ops::SPECIAL, dtypes::kInt32, {}, Arg::Tuple{Arg("lidx0"), Arg(int64_t{8})});
  UOpPtr idx = UOp::New(Ops::INDEX, dtypes::kInt32.Ptr(4), {buf, g});
  UOpPtr sum = g.add(l);
  UOpPtr st = UOp::New(Ops::STORE, DType(), {idx, sum});
  UOpPtr sink = UOp::New(Ops::SINK, DType(), {st});
  return {buf, g, l, idx, sum, st, sink};
}

std::string RenderWith(const CStyleRenderer& r, const std::vector<UOpPtr>& uops) {
  std::vector<const UOp*> raw;
  for (const UOpPtr& u : uops) raw.push_back(u.get());
  absl::StatusOr<std::string> src = r.Render(raw);
  return src.ok() ? *src : std::string(src.status().message());
}

TEST(GpuCStyleTest, WorkItemsAndSignatures) {
  const std::vector<UOpPtr> uops = StoreGroupId();
  const std::string cl = RenderWith(OpenCLRenderer(), uops);
  EXPECT_THAT(cl, HasSubstr("__kernel void test(__global int* data0) {"));
  EXPECT_THAT(cl, HasSubstr("int gidx0 = get_group_id(0); /* 4 */"));
  EXPECT_THAT(cl, HasSubstr("int lidx0 = get_local_id(0); /* 8 */"));
  const std::string metal = RenderWith(MetalRenderer(), uops);
  EXPECT_THAT(metal,
              HasSubstr("#include <metal_stdlib>\nusing namespace metal;\nkernel void test(device int* "
                        "data0, uint3 gid [[threadgroup_position_in_grid]], uint3 lid "
                        "[[thread_position_in_threadgroup]]) {"));
  EXPECT_THAT(metal, HasSubstr("int gidx0 = gid.x; /* 4 */"));
  const std::string cuda = RenderWith(CUDARenderer("sm_80"), uops);
  EXPECT_THAT(cuda, HasSubstr("extern \"C\" __global__ void __launch_bounds__(8) test(int* data0) {"));
  EXPECT_THAT(cuda, HasSubstr("int lidx0 = threadIdx.x; /* 8 */"));
}

}  // namespace
}  // namespace uopc
