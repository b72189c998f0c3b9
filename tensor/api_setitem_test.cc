// Writes into views: Tensor::Assign on a shrunk, permuted or flipped view (the KV-cache update of tinygrad's
// examples/gpt2.py) and Tensor::SetItem (tinygrad's __setitem__) write into the viewed tensor's buffer, as
// tinygrad v0.10.3 does: the same graphs, the same number of kernels, the same values afterwards in the
// tensor and in the other views of it (tensor/testdata/api_setitem_graphs.jsonl, from
// harvest_api_setitem.py). Where tinygrad fails or writes the wrong places uopc writes what NumPy would
// (docs/parity.md); bad writes are errors that leave the tensor as it was.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runtime/realize.h"
#include "tensor/tensor.h"
#include "tensor/testing/graph_compare.h"
#include "tensor/testing/harvested_values.h"

namespace uopc {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr DType f = dtypes::kFloat32;
constexpr DType i32 = dtypes::kInt32;
using Bounds = std::vector<std::pair<int64_t, int64_t>>;

// What a harvested program records besides its outputs: the kernels and copies run from Start() on
// (tinygrad's GlobalCounters.kernel_count) and the graph of the tensors given to Graph() before they were
// realized.
class Recorder {
 public:
  void Start() { capture_.emplace(&runs_); }
  void Graph(const std::vector<Tensor>& tensors) { graph_ = CanonicalSink(tensors); }
  // Writes that must succeed.
  void Ok(const absl::Status& status) { EXPECT_TRUE(status.ok()) << status; }
  size_t runs() {
    capture_.reset();
    return runs_.size();
  }
  const UOpPtr& graph() const { return graph_; }

 private:
  CapturedRuns runs_;
  std::optional<ScopedRunCapture> capture_;
  UOpPtr graph_;
};

using Program = std::function<std::vector<Tensor>(Recorder&)>;

Tensor Ints(const std::vector<int64_t>& values) { return Tensor::Literal(values); }
std::shared_ptr<Tensor> Idx(const std::vector<int64_t>& values, const Dims& shape = {}) {
  Tensor t = shape.empty() ? Tensor::Literal(values) : Tensor::Literal(values, shape);
  EXPECT_TRUE(t.Realize().ok());
  return std::make_shared<Tensor>(t);
}
Slice All() { return Slice{}; }
Slice Range(std::optional<int64_t> start, std::optional<int64_t> stop, std::optional<int64_t> step = {}) {
  return Slice{start, stop, step};
}

// gpt2.py's KV cache: (k/v, batch, context, heads, head size).
Tensor KvCache() {
  Tensor cache = Tensor::Zeros({2, 1, 6, 2, 3}).Contiguous();
  EXPECT_TRUE(cache.Realize().ok());
  return cache;
}
Bounds Positions(int64_t start, int64_t stop) { return {{0, 2}, {0, 1}, {start, stop}, {0, 2}, {0, 3}}; }

const std::map<std::string, Program>& Programs() {
  static const auto* programs = new std::map<std::string, Program>{
      {"assign_kv_cache",
       [](Recorder& r) {
         Tensor cache = KvCache(), xk = R({1, 2, 2, 3}), xv = R({1, 2, 2, 3}, f, 1);
         r.Start();
         Tensor a = cache.Shrink(Positions(3, 5)).Assign(Tensor::Stack({xk, xv}));
         r.Graph({a});
         r.Ok(a.Realize());
         return std::vector<Tensor>{cache};
       }},
      {"assign_kv_cache_steps",
       [](Recorder& r) {
         Tensor cache = KvCache(), xk = R({1, 2, 2, 3}), xv = R({1, 2, 2, 3}, f, 1);
         Tensor head = cache.Index({int64_t{0}, int64_t{0}, All(), int64_t{1}});
         r.Start();
         r.Ok(cache.Shrink(Positions(0, 2)).Assign(Tensor::Stack({xk, xv})).Realize());
         r.Ok(cache.Shrink(Positions(2, 4)).Assign(Tensor::Stack({xv, xk})).Realize());
         return std::vector<Tensor>{cache, head};
       }},
      {"assign_shrink_reads_before",
       [](Recorder& r) {
         Tensor t = R({4, 5});
         Tensor rows = t.Sum(1);
         r.Start();
         Tensor a = t.Shrink({{1, 3}, {0, 5}}).Assign(R({2, 5}, f, 1));
         r.Graph({a, rows});
         r.Ok(Tensor::RealizeAll({a, rows}));
         return std::vector<Tensor>{t, rows};
       }},
      {"assign_permuted_shrink",
       [](Recorder& r) {
         Tensor t = R({4, 5});
         r.Start();
         Tensor a = t.Permute({1, 0}).Shrink({{1, 3}, {0, 4}}).Assign(R({2, 4}, f, 1));
         r.Graph({a});
         r.Ok(a.Realize());
         return std::vector<Tensor>{t};
       }},
      {"assign_flipped",
       [](Recorder& r) {
         Tensor t = R({4, 5});
         r.Start();
         Tensor a = t.Flip({0}).Assign(R({4, 5}, f, 1) * 2);
         r.Graph({a});
         r.Ok(a.Realize());
         return std::vector<Tensor>{t};
       }},
      {"assign_overlap_contiguous",
       [](Recorder& r) {
         Tensor t = R({4, 5});
         r.Start();
         Tensor a = t.Shrink({{0, 3}, {0, 5}}).Assign(t.Shrink({{1, 4}, {0, 5}}).Contiguous());
         r.Graph({a});
         r.Ok(a.Realize());
         return std::vector<Tensor>{t};
       }},
      {"setitem_int_number",
       [](Recorder& r) {
         Tensor t = R({4, 5});
         r.Start();
         r.Ok(t.SetItem({int64_t{1}}, 3.0));
         return std::vector<Tensor>{t};
       }},
      {"setitem_negative_int",
       [](Recorder& r) {
         Tensor t = R({4, 5});
         r.Start();
         r.Ok(t.SetItem({int64_t{-1}, int64_t{-2}}, -7.5));
         return std::vector<Tensor>{t};
       }},
      {"setitem_slice_tensor",
       [](Recorder& r) {
         Tensor t = R({4, 5}), v = R({4, 2}, f, 1);
         r.Start();
         r.Ok(t.SetItem({All(), Range(1, 3)}, v));
         return std::vector<Tensor>{t};
       }},
      {"setitem_broadcast_row",
       [](Recorder& r) {
         Tensor t = R({4, 5}), v = R({5}, f, 1);
         r.Start();
         r.Ok(t.SetItem({Range(1, 3)}, v));
         return std::vector<Tensor>{t};
       }},
      {"setitem_strided",
       [](Recorder& r) {
         Tensor t = R({4, 5}), v = R({2}, f, 1);
         r.Start();
         r.Ok(t.SetItem({Range({}, {}, 2), int64_t{1}}, v));
         return std::vector<Tensor>{t};
       }},
      {"setitem_stepped_slice",
       [](Recorder& r) {
         Tensor t = R({4, 5}), v = R({2, 2}, f, 1);
         r.Start();
         r.Ok(t.SetItem({Range(3, 0, -2), Range(1, 5, 3)}, v));
         return std::vector<Tensor>{t};
       }},
      {"setitem_ellipsis_newaxis",
       [](Recorder& r) {
         Tensor t = R({4, 5});
         r.Start();
         r.Ok(t.SetItem({NewAxis{}, Ellipsis{}, int64_t{2}}, 0.5));
         return std::vector<Tensor>{t};
       }},
      {"setitem_whole",
       [](Recorder& r) {
         Tensor t = R({4, 5}), v = R({5}, f, 1);
         r.Start();
         r.Ok(t.SetItem({All()}, 1.0));
         r.Ok(t.SetItem({Ellipsis{}}, v));
         return std::vector<Tensor>{t};
       }},
      {"setitem_empty_slice",
       [](Recorder& r) {
         Tensor t = R({4, 5});
         r.Start();
         r.Ok(t.SetItem({Range(1, 1)}, 5.0));
         return std::vector<Tensor>{t};
       }},
      {"setitem_int_dtype",
       [](Recorder& r) {
         Tensor t = R({3, 4}, i32), v = R({4}, f, 1);
         r.Start();
         r.Ok(t.SetItem({int64_t{0}}, 2.7));
         r.Ok(t.SetItem({int64_t{2}}, v));
         return std::vector<Tensor>{t};
       }},
      {"setitem_bool",
       [](Recorder& r) {
         Tensor t = R({3, 4}, dtypes::kBool);
         r.Start();
         r.Ok(t.SetItem({int64_t{1}}, true));
         r.Ok(t.SetItem({All(), int64_t{0}}, false));
         return std::vector<Tensor>{t};
       }},
      {"setitem_overlap",
       [](Recorder& r) {
         Tensor t = R({4, 5});
         r.Start();
         r.Ok(t.SetItem({All(), Range(1, 3)}, t.Index({All(), Range(0, 2)})));
         return std::vector<Tensor>{t};
       }},
      {"setitem_overlap_backward",
       [](Recorder& r) {
         Tensor t = R({4, 5});
         r.Start();
         r.Ok(t.SetItem({All(), Range(1, 4)}, t.Index({All(), Range(2, 5)})));
         return std::vector<Tensor>{t};
       }},
      {"setitem_views_see_it",
       [](Recorder& r) {
         Tensor t = R({4, 5});
         Tensor row = t.Index({int64_t{1}}), doubled = t * 2;
         r.Start();
         r.Ok(t.SetItem({int64_t{1}, Range({}, {}, 2)}, 9.0));
         return std::vector<Tensor>{t, row, doubled};
       }},
      {"setitem_prefix_view",
       [](Recorder& r) {
         Tensor t = R({4, 5});
         Tensor rows = t.Index({Range(0, 2)});
         r.Start();
         r.Ok(rows.SetItem({int64_t{1}}, 5.0));
         return std::vector<Tensor>{t, rows};
       }},
      {"setitem_unrealized_target",
       [](Recorder& r) {
         Tensor t = Tensor::Arange(12).Reshape({3, 4});
         r.Start();
         r.Ok(t.SetItem({int64_t{1}}, 2));
         return std::vector<Tensor>{t};
       }},
      {"setitem_tensor_index",
       [](Recorder& r) {
         Tensor t = R({4, 5});
         auto i = Idx({0, 2});
         r.Start();
         r.Ok(t.SetItem({i}, 7.0));
         return std::vector<Tensor>{t};
       }},
      {"setitem_tensor_index_values",
       [](Recorder& r) {
         Tensor t = R({4, 5});
         auto i = Idx({3, 0});
         Tensor v = R({2, 5}, f, 1);
         r.Start();
         r.Ok(t.SetItem({i}, v));
         return std::vector<Tensor>{t};
       }},
      {"setitem_tensor_index_repeated",
       [](Recorder& r) {
         Tensor t = R({4, 5});
         auto i = Idx({1, 1});
         Tensor v = R({2, 5}, f, 1);
         r.Start();
         r.Ok(t.SetItem({i}, v));
         return std::vector<Tensor>{t};
       }},
      {"setitem_tensor_index_negative",
       [](Recorder& r) {
         Tensor t = R({4, 5});
         auto i = Idx({-1});
         r.Start();
         r.Ok(t.SetItem({i}, 5.0));
         return std::vector<Tensor>{t};
       }},
      {"setitem_tensor_index_out_of_range",
       [](Recorder& r) {
         Tensor t = R({4, 5});
         auto i = Idx({4, -5});
         r.Start();
         r.Ok(t.SetItem({i}, 5.0));
         return std::vector<Tensor>{t};
       }},
      {"setitem_two_tensor_indices",
       [](Recorder& r) {
         Tensor t = R({4, 5});
         auto i = Idx({0, 3}), j = Idx({1, 4});
         Tensor v = R({2}, f, 1);
         r.Start();
         r.Ok(t.SetItem({i, j}, v));
         return std::vector<Tensor>{t};
       }},
      {"setitem_tensor_index_column",
       [](Recorder& r) {
         Tensor t = R({4, 5});
         auto i = Idx({4, 0, 2});
         r.Start();
         r.Ok(t.SetItem({All(), i}, -1.0));
         return std::vector<Tensor>{t};
       }},
      {"setitem_tensor_index_2d",
       [](Recorder& r) {
         Tensor t = R({6});
         auto i = Idx({0, 1, 4, 5}, {2, 2});
         Tensor v = R({2, 2}, f, 1);
         r.Start();
         r.Ok(t.SetItem({i}, v));
         return std::vector<Tensor>{t};
       }},
      {"setitem_tensor_index_int_dtype",
       [](Recorder& r) {
         Tensor t = R({3, 4}, i32), v = R({1, 4}, f, 1);
         auto i = Idx({2});
         r.Start();
         r.Ok(t.SetItem({i}, v));
         return std::vector<Tensor>{t};
       }},
  };
  return *programs;
}

TEST(ApiSetitemTest, GraphsKernelsAndValuesAreTinygrads) {
  const std::string path = "tensor/testdata/api_setitem_graphs.jsonl";
  std::vector<std::pair<std::string, std::string>> lines = ReadJsonl(path);
  ASSERT_EQ(lines.size(), Programs().size()) << path;
  for (const auto& [name, line] : lines) {
    SCOPED_TRACE(name);
    auto it = Programs().find(name);
    ASSERT_NE(it, Programs().end());
    nlohmann::json want = nlohmann::json::parse(line);
    Recorder recorder;
    std::vector<Tensor> outputs = it->second(recorder);
    EXPECT_EQ(recorder.runs(), want["kernels"].get<size_t>()) << "kernels and copies run by the writes";
    const std::string graph = want["graph"].get<std::string>();
    if (!graph.empty()) {
      ASSERT_NE(recorder.graph(), nullptr);
      EXPECT_EQ(GraphDifference(recorder.graph(), graph), "");
    }
    if (name == "assign_shrink_reads_before") {
      // A sum built before an assign into a shrink of its input reads the values before the assign in
      // uopc, as it does in tinygrad after an assign into the whole buffer. tinygrad links its readers to
      // the assign by the assigned BUFFER_VIEW, not the buffer, so here its sum runs after the write, by
      // the toposort (docs/parity.md): only the buffer's values are tinygrad's.
      ASSERT_EQ(outputs.size(), 2u);
      absl::StatusOr<std::vector<float>> rows = outputs[1].ToVector<float>();
      absl::StatusOr<std::vector<float>> before = R({4, 5}).Sum(1).ToVector<float>();
      ASSERT_TRUE(rows.ok() && before.ok());
      EXPECT_EQ(*rows, *before);
      outputs.pop_back();
      for (const char* key : {"dtypes", "shapes"}) want[key].erase(1);
      want["values"].erase(want["values"].begin() + 20, want["values"].end());
    }
    EXPECT_EQ(HarvestedProgramDifference(outputs, want, /*compare_graph=*/false), "");
  }
}

template <typename E>
std::vector<E> Values(const Tensor& t) {
  absl::StatusOr<std::vector<E>> v = t.ToVector<E>();
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : std::vector<E>{};
}

Tensor Grid() {
  Tensor t = Tensor::Arange(12).Reshape({3, 4}).Contiguous();
  EXPECT_TRUE(t.Realize().ok());
  return t;
}
const std::vector<int32_t> kGrid = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};

// tinygrad assigns the flipped tensor to itself (ignoring the value) and fails: uopc writes the value
// through the flipped view.
TEST(ApiSetitemTest, NegativeStepWritesThroughTheFlippedView) {
  Tensor t = Grid();
  ASSERT_TRUE(t.SetItem({Range({}, {}, -1)}, Tensor::Arange(12).Reshape({3, 4})).ok());
  EXPECT_THAT(Values<int32_t>(t), ElementsAre(8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3));
  Tensor u = Grid();
  ASSERT_TRUE(u.SetItem({int64_t{1}, Range({}, {}, -1)}, Ints({100, 101, 102, 103})).ok());
  EXPECT_THAT(Values<int32_t>(u), ElementsAre(0, 1, 2, 3, 103, 102, 101, 100, 8, 9, 10, 11));
}

// tinygrad applies the mask of tensor indices to the whole tensor: t[1, idx] writes idx's columns of every
// row, and t[1:3, idx] fails to broadcast. uopc writes the selected places only.
TEST(ApiSetitemTest, TensorIndicesAfterIntsAndSlicesWriteOnlyThere) {
  Tensor t = Grid();
  ASSERT_TRUE(t.SetItem({int64_t{1}, Idx({0, 2})}, 50).ok());
  EXPECT_THAT(Values<int32_t>(t), ElementsAre(0, 1, 2, 3, 50, 5, 50, 7, 8, 9, 10, 11));
  Tensor u = Grid();
  ASSERT_TRUE(u.SetItem({Range(1, 3), Idx({0, 3})}, -1).ok());
  EXPECT_THAT(Values<int32_t>(u), ElementsAre(0, 1, 2, 3, -1, 5, 6, -1, -1, 9, 10, -1));
  Tensor w = Grid();
  ASSERT_TRUE(w.SetItem({Range({}, {}, -1), Idx({0})}, Tensor::Literal({7, 8, 9}, Dims{3, 1})).ok());
  EXPECT_THAT(Values<int32_t>(w), ElementsAre(9, 1, 2, 3, 8, 5, 6, 7, 7, 9, 10, 11));
}

// The result of an assign into a view is that view of the buffer, also where its elements are not one
// contiguous run of the buffer and where the view's offset is symbolic. tinygrad makes it a BUFFER_VIEW (a
// run of the view's size from the view's first element): its values here would be 100..103, 8..11, and with
// a bound variable it raises (docs/parity.md).
TEST(ApiSetitemTest, TheAssignsResultIsTheViewItWrote) {
  Tensor t = Tensor::Arange(24).Reshape({2, 3, 4}).Contiguous();
  ASSERT_TRUE(t.Realize().ok());
  Tensor row = t.Shrink({{0, 2}, {1, 2}, {0, 4}}).Assign(Tensor::Arange(8).Reshape({2, 1, 4}) + 100);
  ASSERT_TRUE(row.Realize().ok());
  EXPECT_THAT(Values<int32_t>(row), ElementsAre(100, 101, 102, 103, 104, 105, 106, 107));
  EXPECT_THAT(Values<int32_t>(t), ElementsAre(0, 1, 2, 3, 100, 101, 102, 103, 8, 9, 10, 11, 12, 13, 14, 15,
                                              104, 105, 106, 107, 20, 21, 22, 23));

  absl::StatusOr<Sint> i = Bind(Variable("i", 0, 2), 2);
  ASSERT_TRUE(i.ok()) << i.status();
  Tensor at_i = t.Shrink({{0, 2}, {*i, *i + 1}, {0, 4}}).Assign(Tensor::Full({2, 1, 4}, -1, dtypes::kInt32));
  ASSERT_TRUE(at_i.Realize().ok());
  EXPECT_THAT(Values<int32_t>(at_i), ElementsAre(-1, -1, -1, -1, -1, -1, -1, -1));
  EXPECT_THAT(Values<int32_t>(t), ElementsAre(0, 1, 2, 3, 100, 101, 102, 103, -1, -1, -1, -1, 12, 13, 14, 15,
                                              104, 105, 106, 107, -1, -1, -1, -1));
}

TEST(ApiSetitemTest, OtherTensorsOfTheBufferSeeTheWrite) {
  Tensor t = Grid();
  Tensor alias = t;  // a copy shares the handle
  Tensor column = t.Index({All(), int64_t{2}});
  Tensor pending = t.Sum();  // built before the write, read after it: reads the new values, as tinygrad
  ASSERT_TRUE(t.SetItem({All(), int64_t{2}}, Ints({-2, -6, -10})).ok());
  EXPECT_THAT(Values<int32_t>(column), ElementsAre(-2, -6, -10));
  EXPECT_THAT(Values<int32_t>(alias), ElementsAre(0, 1, -2, 3, 4, 5, -6, 7, 8, 9, -10, 11));
  EXPECT_THAT(Values<int32_t>(pending), ElementsAre(66 - 2 * 18));
}

std::string Message(const absl::Status& status) {
  EXPECT_FALSE(status.ok());
  return std::string(status.message());
}

TEST(ApiSetitemTest, ZeroDimensionalAndSizeZeroTargets) {
  Tensor scalar = Tensor::Full({}, 1.0).Contiguous();
  ASSERT_TRUE(scalar.SetItem({Ellipsis{}}, 2.5).ok());
  EXPECT_THAT(Values<float>(scalar), ElementsAre(2.5f));
  Tensor empty = Tensor::Zeros({0, 3}).Contiguous();
  ASSERT_TRUE(empty.SetItem({All(), int64_t{1}}, 4.0).ok());
  EXPECT_EQ(empty.Shape(), (Dims{0, 3}));
  EXPECT_THAT(Message(scalar.SetItem({int64_t{0}}, 1.0)), HasSubstr("too many indices"));
}

TEST(ApiSetitemErrorTest, BadWritesAreErrorsAndLeaveTheTensor) {
  Tensor t = Grid();
  EXPECT_THAT(Message(t.SetItem({int64_t{3}}, 1)),
              HasSubstr("index 3 is out of bounds for axis 0 with size 3"));
  EXPECT_THAT(Message(t.SetItem({int64_t{0}, int64_t{-5}}, 1)), HasSubstr("out of bounds"));
  EXPECT_THAT(Message(t.SetItem({int64_t{0}, int64_t{0}, int64_t{0}}, 1)), HasSubstr("too many indices"));
  EXPECT_THAT(Message(t.SetItem({Range({}, {}, 0)}, 1)), HasSubstr("step cannot be 0"));
  EXPECT_THAT(Message(t.SetItem({int64_t{1}}, Ints({1, 2, 3}))), HasSubstr("cannot broadcast (3,) to (4,)"));
  EXPECT_THAT(Message(t.SetItem({int64_t{1}}, Tensor::Ones({2, 4}))), HasSubstr("shape mismatch"));
  EXPECT_THAT(Message(t.SetItem({std::make_shared<Tensor>(Tensor::Ones({2}))}, 1)), HasSubstr("index dtype"));
  EXPECT_THAT(Message(t.SetItem({Idx({0, 1})}, Ints({1, 2, 3}))), HasSubstr("broadcast"));
  Tensor bad = t.Reshape({5});
  EXPECT_EQ(bad.SetItem({int64_t{0}}, 1), bad.status());
  EXPECT_EQ(t.SetItem({int64_t{0}}, bad), bad.status());
  EXPECT_THAT(Values<int32_t>(t), ElementsAreArray(kGrid));
}

TEST(ApiSetitemErrorTest, ViewTargetsAreRefusedAsTinygradRefusesThem) {
  Tensor t = Grid();
  EXPECT_THAT(Message(t.T().SetItem({int64_t{1}}, 5)), HasSubstr("target must be contiguous"));
  EXPECT_THAT(Message(t.Index({Range(1, 3)}).SetItem({int64_t{0}}, 5)),
              HasSubstr("target must be contiguous"));
  EXPECT_THAT(Values<int32_t>(t), ElementsAreArray(kGrid));
}

TEST(ApiSetitemErrorTest, RequiresGradIsRefusedAsTinygradRefusesIt) {
  Tensor w = Tensor::Ones({3, 4}).Contiguous().RequiresGrad();
  ASSERT_TRUE(w.Realize().ok());
  EXPECT_THAT(Message(w.SetItem({int64_t{1}}, 2.0)), HasSubstr("requires grad"));
  Tensor derived = w * 1;  // requires grad through w, as tinygrad's None that ops turn into True
  EXPECT_THAT(Message(derived.SetItem({int64_t{1}}, 2.0)), HasSubstr("requires grad"));
  Tensor target = Tensor::Zeros({3, 4}).Contiguous();
  EXPECT_THAT(Message(target.SetItem({int64_t{1}}, w.Index({int64_t{0}}))), HasSubstr("requires grad"));
  ASSERT_TRUE(target.SetItem({int64_t{1}}, w.Index({int64_t{0}}).Detach()).ok());
  EXPECT_THAT(Values<float>(target), ElementsAre(0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0));
}

// Reading one view of a buffer while assigning another in the same kernel: tinygrad refuses ("self operand of
// augmented assign must be contiguous"), as its kernel would read places it has already written. So does
// uopc, at realize, and nothing is written; made contiguous first, the value is read in full, then written.
TEST(ApiSetitemErrorTest, OverlappingAssignWithoutACopyIsRefused) {
  Tensor t = Grid();
  Tensor a = t.Shrink({{0, 2}, {0, 4}}).Assign(t.Shrink({{1, 3}, {0, 4}}) + 0);
  ASSERT_TRUE(a.ok());
  EXPECT_THAT(Message(a.Realize()), HasSubstr("self operand of augmented assign must be contiguous"));
  EXPECT_THAT(Values<int32_t>(t), ElementsAreArray(kGrid));
  Tensor b = t.Shrink({{1, 3}, {0, 2}}).Assign(t.Shrink({{0, 2}, {2, 4}}));
  EXPECT_THAT(Message(b.Realize()), HasSubstr("self operand of augmented assign must be contiguous"));
  ASSERT_TRUE(t.Shrink({{0, 2}, {0, 4}}).Assign(t.Shrink({{1, 3}, {0, 4}}).Contiguous()).Realize().ok());
  EXPECT_THAT(Values<int32_t>(t), ElementsAre(4, 5, 6, 7, 8, 9, 10, 11, 8, 9, 10, 11));
}

TEST(ApiSetitemErrorTest, AssignToAViewChecksShapeDtypeAndGrad) {
  Tensor t = Grid();
  Tensor view = t.Shrink({{1, 3}, {0, 4}});
  EXPECT_THAT(view.Assign(Tensor::Zeros({3, 4}, i32)).status().message(), HasSubstr("shape mismatch"));
  EXPECT_THAT(view.Assign(Tensor::Zeros({2, 4}, f)).status().message(), HasSubstr("dtype mismatch"));
  EXPECT_THAT(view.Assign(Tensor::Zeros({2, 4}, i32).RequiresGrad()).status().message(),
              HasSubstr("requires grad"));
  EXPECT_TRUE(view.ok());  // a refused Assign leaves the view as it was
  ASSERT_TRUE(view.Assign(5).Realize().ok());
  EXPECT_THAT(Values<int32_t>(t), ElementsAre(0, 1, 2, 3, 5, 5, 5, 5, 5, 5, 5, 5));
}

}  // namespace
}  // namespace uopc
