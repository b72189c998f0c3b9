#include "schedule/tensor_uop.h"

#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testdata/corpus_path.h"
#include "uop/text_ir.h"

namespace uopc {
namespace {

TEST(TensorUopTest, MovementOpsTrackShapesAndDropNoOps) {
  TensorShapes shapes;
  UOpPtr buf = NewBuffer("CPU", 6, dtypes::kFloat32);
  EXPECT_EQ(shapes.Shape(buf), SintVec{6});
  UOpPtr r = *Reshape(buf, SintVec{2, 3}, shapes);
  EXPECT_EQ(r->op(), Ops::RESHAPE);
  EXPECT_EQ(shapes.Shape(r), SintVec({2, 3}));
  EXPECT_EQ(*Reshape(r, SintVec{2, 3}, shapes), r);  // a no-op gives the node itself
  UOpPtr p = *Permute(r, {1, 0}, shapes);
  EXPECT_EQ(shapes.Shape(p), SintVec({3, 2}));
  UOpPtr sum = ReduceAxis(p, Ops::ADD, {1}, shapes);
  EXPECT_EQ(shapes.Shape(sum), SintVec({3, 1}));
  EXPECT_EQ(ReduceAxis(sum, Ops::ADD, {1}, shapes), sum);  // axes of size 1 are not reduced
  EXPECT_EQ(BaseOf(p), buf);
  EXPECT_EQ(DeviceOf(sum.get()), "CPU");
}

TEST(TensorUopTest, BadShapesAreErrorsNamingThem) {
  TensorShapes shapes;
  UOpPtr buf = NewBuffer("CPU", 6, dtypes::kFloat32);
  absl::StatusOr<UOpPtr> bad = Reshape(buf, SintVec{4, 2}, shapes);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("(6,)"), std::string::npos) << bad.status();
  UOpPtr a = *Reshape(buf, SintVec{2, 3}, shapes);
  UOpPtr b = NewBuffer("CPU", 5, dtypes::kFloat32);
  UOpPtr add = Alu(Ops::ADD, {a, b});
  absl::StatusOr<const ShapeTracker*> st = shapes.TrySt(add);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("(2, 3) and (5,)"), std::string::npos) << st.status();
}

TEST(TensorUopTest, TensorConstIsAViewOfTheDeviceExpanded) {
  TensorShapes shapes;
  UOpPtr c = TensorConst(dtypes::kFloat32, ConstValue::Float(2.5), SintVec{4, 5}, "CPU");
  EXPECT_EQ(c->op(), Ops::EXPAND);
  EXPECT_EQ(shapes.Shape(c), SintVec({4, 5}));
  EXPECT_EQ(BaseOf(c)->op(), Ops::CONST);
  EXPECT_EQ(DeviceOf(c.get()), "CPU");
}

TEST(TensorUopTest, NewUniqueNeverRepeatsAParsedOne) {
  absl::StatusOr<UOpPtr> parsed = ParseIrSingle("%0 = UNIQUE : void arg=100000\nreturn %0\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_GT(NewUnique()->arg().as_int(), 100000);
}

// Every output of tinygrad's 70 tensor graphs has the shape of its result.
TEST(TensorUopTest, CorpusGraphOutputsHaveTheResultShapes) {
  std::ifstream programs(CorpusPath("tensor_programs.jsonl"));
  std::ifstream graphs("schedule/testdata/tensor_graphs.jsonl");
  ASSERT_TRUE(programs && graphs);
  std::string pline, gline;
  int checked = 0;
  while (std::getline(programs, pline) && std::getline(graphs, gline)) {
    nlohmann::json p = nlohmann::json::parse(pline), g = nlohmann::json::parse(gline);
    ASSERT_EQ(p["program"], g["program"]);
    absl::StatusOr<UOpPtr> sink = ParseIrSingle(g["graph"].get<std::string>());
    ASSERT_TRUE(sink.ok()) << g["program"] << ": " << sink.status();
    TensorShapes shapes;
    ASSERT_EQ((*sink)->num_src(), p["results"].size());
    for (size_t i = 0; i < (*sink)->num_src(); ++i) {
      SintVec want;
      for (int64_t d : p["results"][i]["shape"]) want.push_back(d);
      absl::StatusOr<const ShapeTracker*> st = shapes.TrySt((*sink)->src()[i]);
      ASSERT_TRUE(st.ok() && *st != nullptr) << g["program"];
      EXPECT_EQ((*st)->shape(), want) << g["program"];
    }
    ++checked;
  }
  EXPECT_EQ(checked, 70);
}

}  // namespace
}  // namespace uopc

namespace uopc {
namespace {

TEST(TensorUopTest, ScalarTensorConstIsTheConstItself) {
  UOpPtr c = TensorConst(dtypes::kFloat32, ConstValue::Float(1.5), SintVec{}, "CPU");
  EXPECT_EQ(c->op(), Ops::CONST) << PrintIr(c.get());
  TensorShapes shapes;
  EXPECT_EQ(*Reshape(c, SintVec{}, shapes), c);
}

}  // namespace
}  // namespace uopc
