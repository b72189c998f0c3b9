// The pipeline's steps and sources of tinygrad's Tensor API (Schedule, ScheduleWithVars, Kernelize, Fuse,
// To_, FromBlob, FromUrl, ImageConv2d, ImageDot) build the graphs tinygrad v0.10.3 builds, schedule as many
// kernels and compute its values on CPU (tensor/testdata/api_pipeline_graphs.jsonl, from
// harvest_api_pipeline.py); bad input is an error.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "rewrite/graph_rewrite.h"
#include "runtime/realize.h"
#include "tensor/tensor.h"
#include "tensor/testing/graph_compare.h"
#include "tensor/testing/harvested_values.h"

namespace uopc {
namespace {

using ::testing::HasSubstr;

constexpr char kGraphs[] = "tensor/testdata/api_pipeline_graphs.jsonl";
constexpr DType f = dtypes::kFloat32;

const float kBlobF32[] = {1.5f, -2.0f, 0.25f, 3.0f, -0.5f, 4.0f};
const int32_t kBlobI32[] = {7, -3, 12, 0};

Tensor Kernelized(const Tensor& t) { return t.Kernelize(); }

// Tensor(UOp.variable('i', 1, 10).bind(3)): BIND(DEFINE_VAR, CONST), both on a scalar view of the device.
Tensor BoundVariable() {
  UOpPtr value = Tensor::Const(3, dtypes::kInt32).uop();
  UOpPtr var = UOp::New(Ops::DEFINE_VAR, dtypes::kInt32, {value->src()[0]},
                        Arg(Arg::Tuple{Arg(std::string("i")), Arg(1), Arg(10)}));
  return Tensor(UOp::New(Ops::BIND, dtypes::kInt32, {var, value}));
}

ConvOptions Options(int64_t groups, Dims stride = {1}, Dims dilation = {1}, Dims padding = {0}) {
  ConvOptions o;
  o.groups = groups;
  o.stride = std::move(stride);
  o.dilation = std::move(dilation);
  o.padding = std::move(padding);
  return o;
}

const std::map<std::string, std::function<Tensor()>>& Programs() {
  static const auto* programs = new std::map<std::string, std::function<Tensor()>>{
      {"fuse_softmax",
       [] {
         return (R({4, 4}) + 1).Softmax().Fuse();
       }},
      {"fuse_elementwise",
       [] {
         return (R({3, 4}) * 2).Fuse() + R({3, 4}, f, 1);
       }},
      {"kernelize_sum",
       [] {
         return Kernelized((R({4, 4}) + 1).Sum(0));
       }},
      {"kernelize_two_kernels",
       [] {
         return Kernelized((R({3, 4}) * 2).Contiguous().Sum(1) + 1);
       }},
      {"to_same_device",
       [] {
         Tensor x = R({2, 3});
         x.To_("CPU");
         return x * 2;
       }},
      {"from_blob",
       [] {
         return Tensor::FromBlob(kBlobF32, {2, 3}, f) * 2;
       }},
      {"from_blob_int_1d", [] { return Tensor::FromBlob(kBlobI32, {4}, dtypes::kInt32) + 1; }},
      {"image_conv2d",
       [] {
         return R({1, 4, 5, 5}).ImageConv2d(R({8, 4, 3, 3}, f, 1));
       }},
      {"image_conv2d_padded_channels",
       [] {
         Tensor bias = R({6}, f, 2);
         return R({2, 3, 5, 4}).ImageConv2d(R({6, 3, 3, 3}, f, 1), &bias, Options(1, {2}, {1}, {1}));
       }},
      {"image_conv2d_depthwise",
       [] {
         return R({1, 8, 4, 4}).ImageConv2d(R({8, 1, 3, 3}, f, 1), nullptr, Options(8, {1}, {1}, {1}));
       }},
      {"image_conv2d_cin_last",
       [] {
         return R({2, 8, 1, 1}).ImageConv2d(R({4, 8, 1, 1}, f, 1));
       }},
      {"image_conv2d_dilation_groups",
       [] {
         return R({1, 8, 6, 6}).ImageConv2d(R({8, 4, 2, 2}, f, 1), nullptr, Options(2, {1}, {2}, {1, 0}));
       }},
      {"image_dot",
       [] {
         return R({3, 4}).ImageDot(R({4, 5}, f, 1));
       }},
      {"image_dot_batched",
       [] {
         return R({2, 3, 4}).ImageDot(R({2, 4, 8}, f, 1));
       }},
      {"image_dot_vector",
       [] {
         return R({4}).ImageDot(R({4, 8}, f, 1));
       }},
      {"image_dot_half",
       [] {
         return R({3, 4}).ImageDot(R({4, 4}, f, 1), dtypes::kFloat16).Float();
       }},
      {"schedule_with_vars", [] { return BoundVariable() * R({3}); }},
  };
  return *programs;
}

// The op under the tensor's views.
Ops BaseOp(const Tensor& t) {
  const UOp* u = t.uop().get();
  while (u->op() == Ops::VIEW && u->num_src() > 0) u = u->src(0);
  return u->op();
}

bool IsKernelized(const std::string& name) { return name.rfind("kernelize_", 0) == 0; }

TEST(ApiPipelineTest, GraphsAndValuesAreTinygrads) {
  // A kernelized program's graph holds KERNELs with their ASTs: KernelGraphsAreTinygrads compares it.
  ExpectHarvestedPrograms(kGraphs, Programs(), [](const std::string& name) { return !IsKernelized(name); });
}

// tinygrad's kernel graph after kernelize, every KERNEL's arg (its AST) left out on both sides.
TEST(ApiPipelineTest, KernelGraphsAreTinygrads) {
  for (const auto& [name, line] : ReadJsonlByProgram(kGraphs)) {
    if (!IsKernelized(name)) continue;
    Tensor t = Programs().at(name)();
    ASSERT_TRUE(t.ok()) << name << ": " << t.status();
    UOpPtr sink = CanonicalSink({t});
    UOpMap no_asts;
    for (const UOp* u : sink->Toposort()) {
      if (u->op() == Ops::KERNEL) no_asts[u] = u->ref().replace_arg(Arg());
    }
    EXPECT_EQ(GraphDifference(Substitute(sink, no_asts), line["graph"].get<std::string>()), "") << name;
  }
}

// Schedule gives tinygrad's number of kernels (after Kernelize too); a FUSE mark is dropped, so a fused
// program has at least tinygrad's.
TEST(ApiPipelineTest, ScheduleHasTinygradsKernels) {
  for (const auto& [name, line] : ReadJsonlByProgram(kGraphs)) {
    Tensor t = Programs().at(name)();
    absl::StatusOr<uopc::Schedule> schedule = t.ScheduleWithVars();
    ASSERT_TRUE(schedule.ok()) << name << ": " << schedule.status();
    const size_t kernels = line["kernels"].get<size_t>();
    if (name.rfind("fuse_", 0) == 0) {
      EXPECT_GE(schedule->items.size(), kernels) << name;
    } else {
      EXPECT_EQ(schedule->items.size(), kernels) << name;
    }
  }
}

// The items of Schedule, run, compute the tensor: it is their output buffer.
TEST(ApiPipelineTest, ScheduleRunsLater) {
  Tensor x = R({3, 4});
  Tensor y = (x * 2).Sum(1) + 1;
  absl::StatusOr<std::vector<ScheduleItem>> items = y.Schedule();
  ASSERT_TRUE(items.ok()) << items.status();
  EXPECT_EQ(items->size(), 1u);
  EXPECT_EQ(BaseOp(y), Ops::BUFFER);
  uopc::Schedule schedule;
  schedule.items = *std::move(items);
  ASSERT_TRUE(RunSchedule(schedule).ok());
  absl::StatusOr<std::vector<float>> got = y.ToVector<float>();
  absl::StatusOr<std::vector<float>> want = ((x * 2).Sum(1) + 1).ToVector<float>();
  ASSERT_TRUE(got.ok() && want.ok());
  EXPECT_EQ(*got, *want);
  // Scheduled twice: nothing left to run.
  absl::StatusOr<std::vector<ScheduleItem>> again = y.Schedule();
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty());
}

TEST(ApiPipelineTest, ScheduleWithVarsGivesTheBoundValues) {
  const nlohmann::json expected = ReadJsonlByProgram(kGraphs).at("schedule_with_vars");
  Tensor t = Programs().at("schedule_with_vars")();
  EXPECT_THAT(std::string(t.Schedule().status().message()), HasSubstr("use ScheduleWithVars"));
  Tensor u = Programs().at("schedule_with_vars")();
  absl::StatusOr<uopc::Schedule> schedule = u.ScheduleWithVars();
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_EQ(schedule->var_vals.size(), 1u);
  const auto& [var, value] = schedule->var_vals[0];
  EXPECT_EQ(var->arg().as_tuple()[0].as_string(), "i");
  EXPECT_EQ(value, expected["var_vals"]["i"].get<int64_t>());
  ASSERT_TRUE(RunSchedule(*schedule).ok());
  absl::StatusOr<std::vector<float>> got = u.ToVector<float>();
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), expected["values"].size());
  for (size_t i = 0; i < got->size(); ++i) EXPECT_FLOAT_EQ((*got)[i], expected["values"][i].get<double>());
}

// After Kernelize the graph is ASSIGN(BUFFER, KERNEL); realizing it runs those kernels.
TEST(ApiPipelineTest, KernelizeThenRealize) {
  Tensor a = R({2, 3});
  Tensor b = (a + 1).Contiguous() * 3;
  Tensor c = b.Kernelize();
  EXPECT_TRUE(c.Is(b));
  EXPECT_EQ(BaseOp(b), Ops::ASSIGN);
  absl::StatusOr<std::vector<float>> got = b.ToVector<float>();
  absl::StatusOr<std::vector<float>> want = ((a + 1) * 3).ToVector<float>();
  ASSERT_TRUE(got.ok() && want.ok()) << got.status();
  EXPECT_EQ(*got, *want);
}

TEST(ApiPipelineTest, ToMovesInPlace) {
  Tensor x = R({2, 3});
  Tensor g = R({2, 3}, f, 1);
  x.SetGrad(g);
  Tensor same = x.To_("CPU");
  EXPECT_TRUE(same.Is(x));
  EXPECT_EQ(x.uop()->op(), Ops::VIEW);  // already there: unchanged
  x.To_("CPU:1");
  EXPECT_EQ(x.Device(), "CPU:1");
  EXPECT_EQ(x.uop()->op(), Ops::COPY);
  EXPECT_EQ(g.Device(), "CPU:1");  // the gradient moved with it, in place
  Tensor bad = x.Reshape({7});
  EXPECT_EQ(bad.To_("CPU").status(), bad.status());
}

TEST(ApiPipelineTest, FromBlobCopiesTheMemory) {
  float blob[] = {1, 2, 3, 4};
  Tensor t = Tensor::FromBlob(blob, {2, 2});
  blob[0] = 100;  // tinygrad would see this write; the copy does not
  absl::StatusOr<std::vector<float>> v = t.ToVector<float>();
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_THAT(std::string(Tensor::FromBlob(nullptr, {2}).status().message()), HasSubstr("null"));
  EXPECT_TRUE(Tensor::FromBlob(nullptr, {0}).ok());
  EXPECT_FALSE(Tensor::FromBlob(blob, {-1, 2}).ok());
}

std::string WriteFile(const std::string& name, const std::string& contents) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

TEST(ApiPipelineTest, FromUrlReadsFiles) {
  const std::string contents("\x01\x02\x03\x04\x05\x00\xff", 7);
  const std::string path = WriteFile("from_url.bin", contents);
  for (const std::string& url : {path, "file://" + path}) {
    Tensor t = Tensor::FromUrl(url);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t.Shape(), Dims{7});
    absl::StatusOr<std::vector<uint8_t>> v = t.ToVector<uint8_t>();
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(*v, std::vector<uint8_t>(contents.begin(), contents.end()));
  }
  // A wider dtype: the whole elements the file holds, as tinygrad's DISK tensor.
  Tensor words = Tensor::FromUrl(path, false, dtypes::kInt32);
  EXPECT_EQ(words.Shape(), Dims{1});
  EXPECT_EQ(words.Item<int32_t>().value(), 0x04030201);
  EXPECT_EQ(Tensor::FromUrl("https://example.com/x.bin").status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(Tensor::FromUrl(path, true).status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(Tensor::FromUrl(path + ".missing").status().code(), absl::StatusCode::kNotFound);
}

std::string Message(const Tensor& t) {
  EXPECT_FALSE(t.ok());
  return std::string(t.status().message());
}

TEST(ApiPipelineErrorTest, ImageOpsRefuseBadInput) {
  Tensor x = R({1, 4, 5, 5});
  EXPECT_THAT(Message(x.ImageConv2d(R({8, 3, 3, 3}))), HasSubstr("does not match the weight shape"));
  EXPECT_THAT(Message(R({4, 5, 5}).ImageConv2d(R({8, 4, 3, 3}))), HasSubstr("4-D"));
  EXPECT_THAT(Message(x.ImageConv2d(R({8, 4, 3, 3}), nullptr, Options(1, {1}, {1}, {1, 2, 3}))),
              HasSubstr("padding"));
  EXPECT_THAT(Message(x.ImageConv2d(R({8, 4, 7, 7}))), HasSubstr("pool"));
  EXPECT_THAT(Message(Tensor::Const(1.0).ImageDot(R({4, 5}))), HasSubstr("at least 1D"));
  EXPECT_THAT(Message(R({3, 4}).ImageDot(R({5, 4}))), HasSubstr("cannot image_dot"));
  EXPECT_THAT(Message(R({3, 4}).ImageDot(R({4}))), HasSubstr("cannot image_dot"));
  Tensor bad = x.Reshape({7});
  EXPECT_EQ(bad.ImageConv2d(R({8, 4, 3, 3})).status(), bad.status());
  EXPECT_EQ(x.ImageDot(bad).status(), bad.status());
  EXPECT_EQ(bad.Fuse().status(), bad.status());
  EXPECT_EQ(bad.Kernelize().status(), bad.status());
  EXPECT_EQ(bad.Schedule().status(), bad.status());
}

}  // namespace
}  // namespace uopc
