// Tensor programs at the sizes models use (nn/testdata/scale_programs.jsonl, from harvest_scale_programs.py,
// which holds each program's Python): random numbers and aranges of millions of elements, wide reductions and
// norms, transformer matmuls and attention, ResNet convolutions, vocabulary-sized embeddings, half and int8
// kernels, views past 2^31 elements and layer initialisers. Inputs are Tensor::Empty and nothing is realized:
// each program is built, scheduled and compiled for the clang target, and its tensor graph, kernel count and
// order, and per kernel the AST, opts, name and C source must be tinygrad v0.10.3's. One test case per
// program; a failure names each field that differs and its first differing line. A new program is one line
// in the script's PROGRAMS and one entry in Programs() below, under the same name.
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/numeric/int128.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "codegen/codegen.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "nn/layers.h"
#include "renderer/cstyle.h"
#include "schedule/schedule.h"
#include "tensor/tensor.h"
#include "tensor/testing/graph_compare.h"
#include "uop/text_ir.h"

namespace uopc {
namespace {

constexpr char kCorpus[] = "nn/testdata/scale_programs.jsonl";
constexpr DType f = dtypes::kFloat32, h = dtypes::kFloat16, i = dtypes::kInt32, i8 = dtypes::kInt8;
using S = Slice;
constexpr std::nullopt_t _ = std::nullopt;

// What a program returns: one tensor or several (scheduled together).
struct Outputs {
  Outputs(Tensor t) : tensors{std::move(t)} {}               // NOLINT: a program may return one tensor
  Outputs(std::vector<Tensor> t) : tensors(std::move(t)) {}  // NOLINT
  std::vector<Tensor> tensors;
};
using Program = std::function<Outputs()>;

// The harvest script's E: an input that is never allocated.
Tensor E(const Dims& shape, DType dtype = f) { return Tensor::Empty(shape, dtype); }

// nn.Embedding's forward on an empty table (the script skips the table's random init; here it is replaced).
Tensor Embedding(int64_t vocab, int64_t dim, const Tensor& idx) {
  nn::Embedding emb(vocab, dim);
  emb.weight = E({vocab, dim});
  return emb(idx);
}

// The script's gpt2_attention: qkv projection, causal attention over `heads` heads, output projection
// (tinygrad's split(d, dim=2) is these three shrinks).
Tensor Gpt2Attention(const Tensor& x, const Tensor& w_qkv, const Tensor& b_qkv, const Tensor& w_proj,
                     int64_t heads) {
  const Dims shape = x.Shape();
  const int64_t b = shape[0], s = shape[1], d = shape[2];
  Tensor qkv = x.Linear(w_qkv, &b_qkv);
  std::vector<Tensor> parts;
  for (int64_t k = 0; k < 3; ++k) {
    parts.push_back(qkv.Index({S{_, _, _}, S{_, _, _}, S{k * d, (k + 1) * d, _}})
                        .Reshape({b, s, heads, d / heads})
                        .Transpose(1, 2));
  }
  return parts[0]
      .ScaledDotProductAttention(parts[1], parts[2], nullptr, true)
      .Transpose(1, 2)
      .Reshape({b, s, d})
      .Matmul(w_proj);
}

const std::vector<std::pair<std::string, Program>>& Programs() {
  static const auto* programs = new std::vector<std::pair<std::string, Program>>{
      // random numbers
      {"rand_4096x4096",
       [] {
         return Tensor::Rand({4096, 4096});
       }},
      {"rand_1024x1024",
       [] {
         return Tensor::Rand({1024, 1024});
       }},
      {"randn_1024x1024",
       [] {
         return Tensor::Randn({1024, 1024});
       }},
      {"randn_4096x4096",
       [] {
         return Tensor::Randn({4096, 4096});
       }},
      {"randint_1024x1024",
       [] {
         return Tensor::Randint({1024, 1024}, 0, 50257);
       }},
      {"rand_half_2048x2048",
       [] {
         return Tensor::Rand({2048, 2048}, h);
       }},
      // aranges and cumulative sums
      {"arange_1m", [] { return Tensor::Arange(int64_t{1} << 20); }},
      {"arange_float_4m", [] { return Tensor::Arange(0, 4.0, 1e-6); }},
      {"arange_16m_mul", [] { return Tensor::Arange(int64_t{1} << 24) * 3; }},
      {"cumsum_1m", [] { return E({1 << 20}).Cumsum(); }},
      {"cumsum_rows_4096",
       [] {
         return E({1024, 4096}).Cumsum(1);
       }},
      // reductions
      {"sum_16m",
       [] {
         return E({4096, 4096}).Sum();
       }},
      {"sum_axis0_4096",
       [] {
         return E({4096, 4096}).Sum(0);
       }},
      {"max_rows_4096",
       [] {
         return E({2048, 4096}).Max(1);
       }},
      {"argmax_vocab",
       [] {
         return E({8, 50257}).Argmax(-1);
       }},
      {"mean_global_pool",
       [] {
         return E({32, 2048, 7, 7}).Mean(Dims{2, 3});
       }},
      // normalizations
      {"layernorm_4096",
       [] {
         return E({512, 4096}).Layernorm();
       }},
      {"layernorm_affine_768",
       [] {
         return E({2048, 768}).Layernorm() * E({768}) + E({768});
       }},
      {"rmsnorm_4096",
       [] {
         return E({1024, 4096}) * (E({1024, 4096}).Square().Mean(-1, true) + 1e-6).Rsqrt();
       }},
      {"batchnorm_resnet",
       [] {
         Tensor w = E({64}), b = E({64});
         return E({32, 64, 56, 56}).Batchnorm(&w, &b, E({64}), E({64}));
       }},
      {"batch_stats_var",
       [] {
         return E({16, 256, 14, 14}).Var(Dims{0, 2, 3});
       }},
      // softmax, matmuls and linear layers
      {"softmax_vocab",
       [] {
         return E({16, 50257}).Softmax(-1);
       }},
      {"softmax_attn_scores",
       [] {
         return E({12, 1024, 1024}).Softmax(-1);
       }},
      {"log_softmax_32000",
       [] {
         return E({512, 32000}).LogSoftmax();
       }},
      {"matmul_512x768x768",
       [] {
         return E({512, 768}).Matmul(E({768, 768}));
       }},
      {"matmul_2048x4096x4096",
       [] {
         return E({2048, 4096}).Matmul(E({4096, 4096}));
       }},
      {"matvec_4096",
       [] {
         return E({4096, 4096}).Matmul(E({4096}));
       }},
      {"linear_gelu_3072",
       [] {
         Tensor b = E({3072});
         return E({1024, 768}).Linear(E({768, 3072}), &b).Gelu();
       }},
      {"linear_1024_4096_relu",
       [] {
         Tensor b = E({4096});
         return E({2048, 1024}).Linear(E({1024, 4096}), &b).Relu();
       }},
      {"cross_entropy_vocab",
       [] {
         return E({512, 50257}).SparseCategoricalCrossentropy(E({512}, i));
       }},
      // convolutions and pooling
      {"conv3x3_64_56",
       [] {
         return E({1, 64, 56, 56}).Conv2d(E({64, 64, 3, 3}), {.padding = {1}});
       }},
      {"conv_stem_7x7_s2",
       [] {
         return E({1, 3, 224, 224}).Conv2d(E({64, 3, 7, 7}), {.stride = {2}, .padding = {3}});
       }},
      {"conv1x1_256_64_batch8",
       [] {
         return E({8, 256, 56, 56}).Conv2d(E({64, 256, 1, 1}));
       }},
      {"conv3x3_bias_relu_128",
       [] {
         Tensor b = E({128});
         return E({8, 128, 28, 28}).Conv2d(E({128, 128, 3, 3}), &b, {.padding = {1}}).Relu();
       }},
      {"maxpool_3x3_s2_112",
       [] {
         return E({1, 64, 112, 112}).MaxPool2d({3, 3}, {2}, {1}, {1});
       }},
      {"avgpool_2x2_56",
       [] {
         return E({8, 64, 56, 56}).AvgPool2d();
       }},
      // embeddings
      {"embedding_gpt2",
       [] {
         return Embedding(50257, 768, E({1, 1024}, i));
       }},
      {"one_hot_vocab", [] { return E({1024}, i).OneHot(50257); }},
      // attention
      {"sdpa_1024_12x64",
       [] {
         return E({1, 12, 1024, 64}).ScaledDotProductAttention(E({1, 12, 1024, 64}), E({1, 12, 1024, 64}));
       }},
      {"sdpa_causal_1024_12x64",
       [] {
         return E({1, 12, 1024, 64})
             .ScaledDotProductAttention(E({1, 12, 1024, 64}), E({1, 12, 1024, 64}), nullptr, true);
       }},
      {"gpt2_attention_block",
       [] {
         return Gpt2Attention(E({1, 1024, 768}), E({768, 2304}), E({2304}), E({768, 768}), 12);
       }},
      // half and int8
      {"matmul_half_2048x4096",
       [] {
         return E({2048, 4096}, h).Matmul(E({4096, 4096}, h));
       }},
      {"half_elementwise_4096",
       [] {
         return (E({4096, 4096}, h) * 2 + E({4096, 4096}, h)).Relu();
       }},
      {"half_sum_rows",
       [] {
         return E({4096, 4096}, h).Sum(1);
       }},
      {"int8_add_4096",
       [] {
         return E({4096, 4096}, i8) + E({4096, 4096}, i8);
       }},
      {"int8_sum_rows",
       [] {
         return E({1024, 4096}, i8).Sum(1);
       }},
      {"int8_dequant_matmul",
       [] {
         return E({512, 4096}).Matmul(E({4096, 4096}, i8).Cast(f) * E({1, 4096}));
       }},
      // views of more than 2^31 elements
      {"broadcast_sum_2p32",
       [] {
         return (E({65536, 1}) + E({1, 65536})).Sum();
       }},
      {"big_shrink_65536",
       [] {
         return E({65536, 65536}).Index({S{_, _, _}, S{1000, 1010, _}}) * 2;
       }},
      {"big_sum_rows_65536",
       [] {
         return E({65536, 65536}).Sum(1);
       }},
      {"big_cast_half_3g",
       [] {
         return E({50000, 60000}, h).Float();
       }},
      {"big_sum_all_2p32",
       [] {
         return E({65536, 65536}).Sum();
       }},
      {"big_pad_46341",
       [] {
         return E({46341, 46341}).Pad({{1, 1}, {1, 1}}) * 2;
       }},
      {"big_flip_2p31", [] { return E({(int64_t{1} << 31) + 8}).Flip({0}) + 1; }},
      {"big_transpose_rows",
       [] {
         return E({65536, 65536}).T().Index({S{_, 8, _}}) + 1;
       }},
      {"big_last_row",
       [] {
         return E({65536, 65536}).Index({int64_t{-1}}) * 2;
       }},
      // layer initialisers
      {"linear_init_4096",
       [] {
         nn::Linear linear(4096, 4096);
         return std::vector<Tensor>{linear.weight, *linear.bias};
       }},
      {"kaiming_uniform_4096",
       [] {
         return nn::KaimingUniform({4096, 4096}, std::sqrt(5.0));
       }},
      {"glorot_uniform_4096x1024",
       [] {
         return nn::GlorotUniform({4096, 1024});
       }},
      {"normal_init_gpt2",
       [] {
         return Tensor::Normal({50257, 768}, 0.0, 0.02);
       }},
      {"scaled_uniform_1024",
       [] {
         return nn::ScaledUniform({1024, 1024});
       }},
  };
  return *programs;
}

std::map<std::string, nlohmann::json> Corpus() {
  std::map<std::string, nlohmann::json> out;
  for (const auto& [name, line] : ReadJsonl(kCorpus)) out[name] = nlohmann::json::parse(line);
  return out;
}

// "" when equal, else the first line where the texts differ, both sides.
std::string FirstDifference(absl::string_view got, absl::string_view want) {
  if (got == want) return "";
  std::vector<absl::string_view> a = absl::StrSplit(got, '\n'), b = absl::StrSplit(want, '\n');
  size_t k = 0;
  while (k < a.size() && k < b.size() && a[k] == b[k]) ++k;
  return absl::StrCat("line ", k + 1, "\n      uopc:    ", k < a.size() ? a[k] : "<end>",
                      "\n      tinygrad: ", k < b.size() ? b[k] : "<end>");
}

// The difference between the graph `got` and the graph tinygrad printed as `want` (pointer equality after
// parsing; the first differing line of the text otherwise).
std::string GraphFirstDifference(const UOpPtr& got, const std::string& want) {
  absl::StatusOr<UOpPtr> parsed = ParseIrSingle(want);
  if (!parsed.ok()) return "cannot parse tinygrad's graph: " + parsed.status().ToString();
  if (*parsed == got) return "";
  std::string diff = FirstDifference(PrintIr(got.get()), want);
  return diff.empty() ? "same text, different graph" : diff;
}

// tinygrad's C source with uopc's documented departure applied (docs/parity.md, "Integer constant folding
// wraps"): tinygrad folds unsigned int constants with Python's unbounded integers and prints literals such as
// `68719476736u` (2^36, in threefry's key schedule at these sizes), which uopc wraps to the dtype: a literal
// that wraps to 0 disappears with the `+` before it, any other becomes its value mod 2^32.
std::string WrapUnsignedLiterals(absl::string_view src) {
  std::string out;
  size_t k = 0;
  while (k < src.size()) {
    const bool starts_literal =
        absl::ascii_isdigit(src[k]) &&
        (k == 0 || !(absl::ascii_isalnum(src[k - 1]) || src[k - 1] == '_' || src[k - 1] == '.'));
    if (!starts_literal) {
      out += src[k++];
      continue;
    }
    size_t end = k;
    while (end < src.size() && absl::ascii_isdigit(src[end])) ++end;
    const bool unsigned_int =
        end < src.size() && src[end] == 'u' && (end + 1 == src.size() || !absl::ascii_isalnum(src[end + 1]));
    absl::uint128 value = 0;
    bool wide = false;
    for (size_t d = k; d < end && unsigned_int; ++d) {
      value = value * 10 + (src[d] - '0');
      if (value > std::numeric_limits<uint64_t>::max()) break;
      wide = value > std::numeric_limits<uint32_t>::max();
    }
    if (!unsigned_int || !wide) {
      absl::StrAppend(&out, src.substr(k, end - k));
      k = end;
      continue;
    }
    const uint64_t wrapped = static_cast<uint64_t>(value) & 0xffffffffu;
    if (wrapped == 0 && !out.empty() && out.back() == '+') {
      out.pop_back();
    } else {
      absl::StrAppend(&out, wrapped);
      out += 'u';
    }
    k = end + 1;
  }
  return out;
}

// What this program makes that differs from tinygrad's, one entry per field ("graph: ...", "kernel 3
// (r_512_1024_4) ast: ..."); empty when everything is equal. Kernels whose source equals tinygrad's only
// after WrapUnsignedLiterals are listed in `departures`.
std::vector<std::string> Differences(const Program& program, const nlohmann::json& want,
                                     std::vector<std::string>* departures) {
  Tensor::ManualSeed(0);
  Outputs outs = program();
  for (const Tensor& t : outs.tensors) {
    if (!t.ok()) return {"building the program: " + t.status().ToString()};
  }
  std::vector<std::string> diffs;
  if (std::string d = GraphFirstDifference(CanonicalSink(outs.tensors), want["graph"].get<std::string>());
      !d.empty()) {
    diffs.push_back("graph: " + d);
  }
  std::vector<UOpPtr> roots;
  for (const Tensor& t : outs.tensors) roots.push_back(t.uop());
  absl::StatusOr<Schedule> schedule = CreateSchedule(UOp::Sink(roots));
  if (!schedule.ok()) {
    diffs.push_back("schedule: " + schedule.status().ToString());
    return diffs;
  }
  const nlohmann::json& kernels = want["kernels"];
  if (schedule->items.size() != kernels.size()) {
    diffs.push_back(
        absl::StrCat("kernel count: uopc ", schedule->items.size(), ", tinygrad ", kernels.size()));
  }
  ClangRenderer clang;
  KernelNameCounter names;
  absl::flat_hash_map<const UOp*, absl::StatusOr<ProgramSpec>> compiled;  // a repeated AST compiles once
  for (size_t k = 0; k < schedule->items.size() && k < kernels.size(); ++k) {
    const UOpPtr& ast = schedule->items[k].ast;
    const nlohmann::json& w = kernels[k];
    const std::string want_ast = w["ast"].get<std::string>();
    std::string label =
        absl::StrCat("kernel ", k, w.contains("name") ? " (" + w["name"].get<std::string>() + ")" : "");
    if (ast->op() != Ops::SINK || !w.contains("name")) {
      std::string got_op(OpName(ast->op()));
      if (ast->op() == Ops::SINK || got_op != want_ast) {
        diffs.push_back(absl::StrCat(label, ": uopc has ", got_op, ", tinygrad ",
                                     w.contains("name") ? "a kernel" : want_ast));
      }
      continue;
    }
    if (std::string d = GraphFirstDifference(ast, want_ast); !d.empty())
      diffs.push_back(label + " ast: " + d);
    auto it = compiled.find(ast.get());
    if (it == compiled.end()) {
      it = compiled.emplace(ast.get(), CompileKernel(ast, clang, CompileOptions{}, &names)).first;
    }
    if (!it->second.ok()) {
      diffs.push_back(label + " compile: " + it->second.status().ToString());
      continue;
    }
    const ProgramSpec& p = *it->second;
    std::vector<std::string> opts;
    for (const Opt& o : p.applied_opts) opts.push_back(o.ToString());
    std::string got_opts = absl::StrJoin(opts, "\n");
    std::string want_opts = absl::StrJoin(w["opts"].get<std::vector<std::string>>(), "\n");
    if (std::string d = FirstDifference(got_opts, want_opts); !d.empty())
      diffs.push_back(label + " opts: " + d);
    if (p.name != w["name"].get<std::string>()) diffs.push_back(label + " name: uopc " + p.name);
    const std::string want_src = w["src"].get<std::string>();
    if (p.src == want_src) continue;
    if (p.src == WrapUnsignedLiterals(want_src)) {
      departures->push_back(label + ": unsigned literals wrapped");
    } else {
      diffs.push_back(label + " src: " + FirstDifference(p.src, want_src));
    }
  }
  return diffs;
}

TEST(ScaleProgramsTest, EveryCorpusProgramIsWritten) {
  std::map<std::string, nlohmann::json> corpus = Corpus();
  ASSERT_EQ(corpus.size(), Programs().size());
  for (const auto& [name, program] : Programs()) EXPECT_TRUE(corpus.count(name)) << name;
}

TEST(ScaleProgramsTest, WrapUnsignedLiteralsWrapsOnlyWideUnsignedLiterals) {
  EXPECT_EQ(WrapUnsignedLiterals("((a>>19u)+68719476736u)"), "((a>>19u))");
  EXPECT_EQ(WrapUnsignedLiterals("(a+316189704192u)"), "(a+2657091584u)");
  EXPECT_EQ(WrapUnsignedLiterals("(a+4294967295u+4294967296ull+4294967296+x4294967296u)"),
            "(a+4294967295u+4294967296ull+4294967296+x4294967296u)");
}

// Every program's outcome, for the summary printed after the last test.
struct Outcome {
  std::vector<std::string> equal, departing, failing;
};
Outcome& Outcomes() {
  static Outcome* outcome = new Outcome;
  return *outcome;
}

class SummaryPrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    const Outcome& o = Outcomes();
    if (o.equal.empty() && o.departing.empty() && o.failing.empty()) return;
    std::cout << o.equal.size() << " programs equal to tinygrad byte for byte, " << o.departing.size()
              << " with documented departures (" << absl::StrJoin(o.departing, ", ") << "), "
              << o.failing.size() << " differ (" << absl::StrJoin(o.failing, ", ") << ")\n";
  }
};
::testing::Environment* const kSummary = ::testing::AddGlobalTestEnvironment(new SummaryPrinter);

class ScaleProgramTest : public ::testing::TestWithParam<int> {};

TEST_P(ScaleProgramTest, KernelsAreTinygrads) {
  static const auto* corpus = new std::map<std::string, nlohmann::json>(Corpus());
  const auto& [name, program] = Programs()[GetParam()];
  auto it = corpus->find(name);
  ASSERT_NE(it, corpus->end()) << name << " is not in " << kCorpus;
  std::vector<std::string> departures;
  std::vector<std::string> diffs = Differences(program, it->second, &departures);
  if (!diffs.empty()) {
    Outcomes().failing.push_back(name);
  } else if (!departures.empty()) {
    Outcomes().departing.push_back(name);
  } else {
    Outcomes().equal.push_back(name);
  }
  if (!departures.empty()) {
    std::cout << name << ": documented departures in " << absl::StrJoin(departures, "; ") << "\n";
  }
  EXPECT_TRUE(diffs.empty()) << name << " differs from tinygrad in " << diffs.size() << " field(s):\n  "
                             << absl::StrJoin(diffs, "\n  ");
}

INSTANTIATE_TEST_SUITE_P(EveryProgram, ScaleProgramTest,
                         ::testing::Range(0, static_cast<int>(Programs().size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return Programs()[info.param].first;
                         });

}  // namespace
}  // namespace uopc
