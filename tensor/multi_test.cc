// Sharded tensors (Shard, MULTI, the multi rules, all-reduce) build the graphs tinygrad v0.10.3 builds,
// become the per-device graphs its multi rules give, schedule as many kernels and compute its values on "CPU"
// and "CPU:1" (tensor/testdata/multi_graphs.jsonl, from harvest_multi.py); bad input is an error.
#include "tensor/multi.h"

#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runtime/registry.h"
#include "tensor/tensor.h"
#include "tensor/testing/graph_compare.h"
#include "tensor/testing/harvested_values.h"

namespace uopc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kGraphs[] = "tensor/testdata/multi_graphs.jsonl";
constexpr DType f = dtypes::kFloat32;
const std::vector<std::string> D2 = {"CPU:0", "CPU:1"};
const std::vector<std::string> D3 = {"CPU:0", "CPU:1", "CPU:2"};

std::vector<Tensor> GradOf(const Tensor& loss, const Tensor& target) {
  absl::StatusOr<std::vector<Tensor>> grads = loss.Gradient({target});
  if (!grads.ok()) return {Tensor::FromError(grads.status())};
  return *grads;
}

using Program = std::function<std::vector<Tensor>()>;

const std::map<std::string, Program>& Programs() {
  static const auto* programs = new std::map<std::string, Program>{
      {"replicated_add",
       [] {
         return std::vector<Tensor>{R({3, 4}).Shard(D2) + 1};
       }},
      {"sharded_mul",
       [] {
         return std::vector<Tensor>{R({4, 2}).Shard(D2, 0) * R({4, 2}, f, 1).Shard(D2, 0)};
       }},
      {"sharded_where_cast",
       [] {
         return std::vector<Tensor>{(R({4, 3}).Shard(D2, 0) > 0)
                                        .Where(R({4, 3}, f, 1).Shard(D2, 0), 0.5)
                                        .Cast(dtypes::kFloat16)
                                        .Float()};
       }},
      {"sharded_and_replicated",
       [] {
         return std::vector<Tensor>{R({4, 2}).Shard(D2, 0) + R({4, 2}, f, 1).Shard(D2)};
       }},
      {"resharded_axis",
       [] {
         return std::vector<Tensor>{R({4, 4}).Shard(D2, 0) + R({4, 4}, f, 1).Shard(D2, 1)};
       }},
      {"sum_across_shards",
       [] {
         return std::vector<Tensor>{(R({4, 2}).Shard(D2, 0) * 2).Sum(0)};
       }},
      {"sum_within_shards",
       [] {
         return std::vector<Tensor>{R({4, 6}).Shard(D2, 0).Sum(1)};
       }},
      {"sum_all",
       [] {
         return std::vector<Tensor>{R({4, 6}).Shard(D2, 1).Sum()};
       }},
      {"max_across_shards",
       [] {
         return std::vector<Tensor>{R({6, 4}).Shard(D2, 0).Max(0)};
       }},
      {"softmax_within_shards",
       [] {
         return std::vector<Tensor>{R({4, 6}).Shard(D2, 0).Softmax(1)};
       }},
      {"softmax_sharded_axis",
       [] {
         return std::vector<Tensor>{R({4, 6}).Shard(D2, 1).Softmax(1)};
       }},
      {"ring_sum",
       [] {
         return std::vector<Tensor>{R({6, 4}).Shard(D3, 0).Sum(0)};
       }},
      {"ring_sum_uneven_chunks",
       [] {
         return std::vector<Tensor>{R({9, 3}).Shard(D3, 0).Sum(0)};
       }},
      {"reshape_split_axis",
       [] {
         return std::vector<Tensor>{R({4, 6}).Shard(D2, 0).Reshape({2, 2, 6}) + 1};
       }},
      {"reshape_merge",
       [] {
         return std::vector<Tensor>{R({4, 2, 3}).Shard(D2, 1).Reshape({4, 6}) * 3};
       }},
      {"permute",
       [] {
         return std::vector<Tensor>{R({4, 6}).Shard(D2, 0).Permute({1, 0}) + 1};
       }},
      {"expand",
       [] {
         return std::vector<Tensor>{R({4, 1}).Shard(D2, 0).Expand({4, 5}) + 1};
       }},
      {"pad",
       [] {
         return std::vector<Tensor>{R({4, 3}).Shard(D2, 0).Pad({{0, 0}, {1, 2}}) + 1};
       }},
      {"shrink_other_axis",
       [] {
         return std::vector<Tensor>{R({4, 6}).Shard(D2, 0).Shrink({{0, 4}, {1, 5}}) + 1};
       }},
      {"shrink_to_one_shard",
       [] {
         return std::vector<Tensor>{R({4, 6}).Shard(D2, 0).Shrink({{2, 4}, {0, 6}}) + 1};
       }},
      {"flip",
       [] {
         return std::vector<Tensor>{R({4, 6}).Shard(D2, 0).Flip({1}) + 1};
       }},
      {"to_one_device",
       [] {
         return std::vector<Tensor>{(R({4, 3}).Shard(D2, 0) * 2).To("CPU")};
       }},
      {"to_tuple",
       [] {
         return std::vector<Tensor>{R({2, 3}).To("CPU:0,CPU:1") * 2};
       }},
      {"matmul_batch_sharded",
       [] {
         return std::vector<Tensor>{R({4, 8}).Shard(D2, 0).Matmul(R({8, 3}, f, 1).Shard(D2))};
       }},
      {"matmul_k_sharded",
       [] {
         return std::vector<Tensor>{R({4, 8}).Shard(D2, 1).Matmul(R({8, 3}, f, 1).Shard(D2, 0))};
       }},
      {"rand_like_replicated",
       [] {
         return std::vector<Tensor>{R({4, 2}).Shard(D2).RandLike()};
       }},
      {"rand_like_sharded",
       [] {
         return std::vector<Tensor>{(R({4, 2}).Shard(D2, 0) + 1).RandLike()};
       }},
      {"contiguous_cast",
       [] {
         return std::vector<Tensor>{R({4, 2}).Shard(D2, 0).Contiguous().Cast(dtypes::kInt32)};
       }},
      {"grad_replicated_weight",
       [] {
         Tensor w = R({8, 3}, f, 1).Shard(D2).RequiresGrad();
         return GradOf(R({4, 8}).Shard(D2, 0).Matmul(w).Relu().Sum(), w);
       }},
      {"grad_sharded_input",
       [] {
         Tensor x = R({4, 3}, f, 1).Shard(D2, 0).RequiresGrad();
         return GradOf((x * R({4, 3}).Shard(D2, 0)).Exp().Sum(), x);
       }},
  };
  return *programs;
}

// Sets the harvested program's settings (RING) while it lives.
class ProgramEnvironment {
 public:
  explicit ProgramEnvironment(const nlohmann::json& line) {
    if (line.contains("env")) {
      for (const auto& [name, value] : line["env"].items()) {
        setenv(name.c_str(), std::to_string(value.get<int64_t>()).c_str(), 1);
        names_.push_back(name);
      }
    }
  }
  ~ProgramEnvironment() {
    for (const std::string& name : names_) unsetenv(name.c_str());
  }

 private:
  std::vector<std::string> names_;
};

TEST(MultiTest, GraphsDevicesAndValuesAreTinygrads) {
  const std::map<std::string, nlohmann::json> lines = ReadJsonlByProgram(kGraphs);
  ASSERT_EQ(lines.size(), Programs().size());
  for (const auto& [name, line] : lines) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(Programs().contains(name));
    ProgramEnvironment env(line);
    Tensor::ManualSeed(0);  // as the harvest script, before each program
    std::vector<Tensor> outs = Programs().at(name)();
    for (const Tensor& t : outs) ASSERT_TRUE(t.ok()) << t.status();
    for (size_t i = 0; i < outs.size(); ++i) {
      EXPECT_EQ(outs[i].Device(), line["devices"][i].get<std::string>());
    }
    // The graph after the multi rules, before realizing replaces it.
    std::vector<UOpPtr> roots;
    for (const Tensor& t : outs) roots.push_back(t.uop());
    UOpPtr sink = UOp::Sink(roots);
    absl::StatusOr<UOpMap> multi = tensor_internal::MultiMap(sink);
    ASSERT_TRUE(multi.ok()) << multi.status();
    std::vector<Tensor> mapped;
    for (const UOpPtr& s : (multi->contains(sink.get()) ? multi->at(sink.get()) : sink)->src())
      mapped.emplace_back(s);
    EXPECT_EQ(GraphDifference(CanonicalSink(mapped), line["multi_graph"].get<std::string>()), "");
    EXPECT_EQ(HarvestedProgramDifference(outs, line), "");
  }
}

TEST(MultiTest, ScheduleHasTinygradsKernels) {
  for (const auto& [name, line] : ReadJsonlByProgram(kGraphs)) {
    SCOPED_TRACE(name);
    ProgramEnvironment env(line);
    Tensor::ManualSeed(0);
    std::vector<Tensor> outs = Programs().at(name)();
    ASSERT_TRUE(outs[0].ok()) << outs[0].status();
    absl::StatusOr<std::vector<ScheduleItem>> items = outs[0].Schedule(absl::MakeConstSpan(outs).subspan(1));
    ASSERT_TRUE(items.ok()) << items.status();
    EXPECT_EQ(items->size(), line["kernels"].get<size_t>());
  }
}

TEST(MultiTest, DevicesAreInstancesWithTheirOwnMemory) {
  absl::StatusOr<Device*> cpu = GetDevice("CPU");
  absl::StatusOr<Device*> cpu1 = GetDevice("cpu:1");
  ASSERT_TRUE(cpu.ok() && cpu1.ok());
  EXPECT_NE(*cpu, *cpu1);
  EXPECT_EQ((*cpu1)->name(), "CPU:1");
  EXPECT_EQ(*GetDevice("CPU:0"), *cpu);
  EXPECT_EQ(*GetDevice("CPU:1"), *cpu1);
  EXPECT_FALSE(GetDevice("NOPE:1").ok());
  EXPECT_FALSE(GetDevice("CPU:x").ok());
  Tensor t = R({4, 2}).Shard(D2, 0);
  EXPECT_THAT(t.Devices(), ElementsAre("CPU", "CPU:1"));
  EXPECT_EQ(t.ShardAxis(), 0);
  EXPECT_EQ(R({4, 2}).Shard(D2).ShardAxis(), std::nullopt);
  EXPECT_EQ((t.Permute({1, 0}) * 2).ShardAxis(), 1);
  EXPECT_EQ(t.Sum(0).ShardAxis(), std::nullopt);
  EXPECT_EQ(R({4, 2}).ShardAxis(), std::nullopt);
}

TEST(MultiTest, ShardInPlaceAndRealizeEachShard) {
  Tensor x = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2});
  x.Shard_(D2, -2);
  EXPECT_EQ(x.Device(), "CPU,CPU:1");
  ASSERT_TRUE(x.Realize().ok());
  // Realized: one buffer per device.
  ASSERT_EQ(x.uop()->op(), Ops::MULTI);
  EXPECT_EQ(DeviceOf(x.uop()->src()[1].get()), "CPU:1");
  EXPECT_THAT(x.Sum(0).ToVector<float>().value(), ElementsAre(16, 20));
  EXPECT_THAT((x * x).Sum(1).ToVector<float>().value(), ElementsAre(5, 25, 61, 113));
}

std::string Message(const Tensor& t) {
  EXPECT_FALSE(t.ok());
  return std::string(t.status().message());
}

TEST(MultiErrorTest, BadShardsAreErrors) {
  EXPECT_THAT(Message(R({3, 2}).Shard(D2, 0)), HasSubstr("does not split evenly over 2 devices"));
  EXPECT_THAT(Message(R({4, 2}).Shard(D2, 2)), HasSubstr("out of range"));
  EXPECT_THAT(Message(R({4, 2}).Shard({})), HasSubstr("no devices"));
  EXPECT_THAT(Message(R({4, 2}).Shard(D2).Shard(D2)), HasSubstr("several devices already"));
  EXPECT_THAT(Message(R({4, 2}).Shard({"CPU", ""})), HasSubstr("bad device name"));
  EXPECT_THAT(Message(Tensor::Rand({4}, dtypes::kFloat32, "CPU,CPU:1")), HasSubstr("a single device"));
  // A symbolic size anywhere in a graph with sharded tensors is refused at realize, as tinygrad asserts.
  absl::StatusOr<Sint> n = Bind(Variable("n", 1, 4), 2);
  ASSERT_TRUE(n.ok());
  Tensor sym = R({4, 4}).Shard(D2, 0).Shrink(std::vector<SintPair>{{0, 4}, {0, *n}});
  ASSERT_TRUE(sym.ok()) << sym.status();
  EXPECT_EQ(sym.Realize().code(), absl::StatusCode::kUnimplemented);
}

TEST(MultiErrorTest, OpsTheShardsCannotTakeAreErrorsAtRealize) {
  // Padding, flipping or expanding the sharded axis, and a reshape that moves elements between shards.
  const std::vector<std::pair<Tensor, std::string>> cases = {
      {R({4, 2}).Shard(D2, 0).Pad({{1, 0}, {0, 0}}), "cannot pad the sharded axis 0"},
      {R({4, 2}).Shard(D2, 0).Flip({0}), "cannot flip the sharded axis 0"},
      {R({2, 2}).Shard(D2, 1).Reshape({4}), "would move elements between the shards"},
      {R({4, 6}).Shard(D2, 0).Shrink({{1, 3}, {0, 6}}), "must keep one shard"},
      {R({4, 6}).Shard(D2, 0).Shrink({{0, 2}, {0, 3}}), "the sharded axis and another at once"},
  };
  for (const auto& [t, why] : cases) {
    ASSERT_TRUE(t.ok()) << t.status();
    absl::StatusOr<std::vector<float>> v = t.ToVector<float>();
    ASSERT_FALSE(v.ok()) << why;
    EXPECT_THAT(std::string(v.status().message()), HasSubstr(why));
  }
}

}  // namespace
}  // namespace uopc
