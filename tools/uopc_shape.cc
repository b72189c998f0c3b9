// uopc shape: movement-op sequences through a ShapeTracker.
//
//   uopc shape --jsonl FILE|-
//
// Each input line is {"id", "start_shape", "ops"} (../shared/reference/tinygrad-v0.10.3/corpus/README.md §4:
// ops reshape, permute, expand, pad, shrink, flip, simplify). The ops are applied to
// ShapeTracker::FromShape(start_shape), the result simplified, and one line written:
//   {"id", "shape", "n_views", "contiguous", "views", "real_strides", "idx_infix", "valid_infix", "index"}
// with `index` the buffer index of every position in row-major order (-1 for padding). A line that is not
// such a record, or whose ops are invalid for the shape, gives {"id", "error"} and the run goes on.
#include <cstdint>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "rewrite/infix.h"
#include "shapetracker/movement_ops.h"
#include "shapetracker/shapetracker.h"
#include "tools/uopc_subcommand.h"
#include "uop/status_macros.h"

ABSL_DECLARE_FLAG(bool, jsonl);

namespace uopc {
namespace {

using nlohmann::json;
// Output objects keep their fields in the documented order (the corpus's), not sorted.
using ordered_json = nlohmann::ordered_json;

// Output lines list every position; larger results are an error line instead.
constexpr int64_t kMaxListedPositions = int64_t{1} << 22;

std::string Dump(const ordered_json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

ordered_json ErrorRecord(const json& id, absl::string_view message) {
  ordered_json out;
  out["id"] = id;
  out["error"] = std::string(message);
  return out;
}

ordered_json OrderedView(const json& view) {
  ordered_json out;
  for (const char* key : {"shape", "strides", "offset", "mask", "contiguous"}) out[key] = view.at(key);
  return out;
}

absl::StatusOr<SintVec> ParseStartShape(const json& j) {
  if (!j.is_array()) return absl::InvalidArgumentError("\"start_shape\" must be a list of integers");
  if (j.size() > static_cast<size_t>(kMaxRank)) {
    return absl::InvalidArgumentError(absl::StrCat("\"start_shape\" has more than ", kMaxRank, " axes"));
  }
  SintVec shape;
  int64_t positions = 1;
  for (const json& d : j) {
    if (!d.is_number_integer())
      return absl::InvalidArgumentError("\"start_shape\" must be a list of integers");
    if (d.is_number_integer() && !d.is_number_unsigned() && d.get<int64_t>() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"start_shape\" has a negative dimension ", d.get<int64_t>()));
    }
    uint64_t v = d.get<uint64_t>();
    if (v > static_cast<uint64_t>(kMaxMovementElements) ||
        (positions != 0 && (__builtin_mul_overflow(positions, static_cast<int64_t>(v), &positions) ||
                            positions > kMaxMovementElements))) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"start_shape\" has more than ", kMaxMovementElements, " positions"));
    }
    if (v == 0) positions = 0;
    shape.push_back(static_cast<int64_t>(v));
  }
  return shape;
}

ordered_json ShapeRecord(const json& record) {
  json id = record.contains("id") ? record["id"] : json(nullptr);
  auto error = [&](absl::string_view message) { return ErrorRecord(id, message); };
  if (!record.contains("start_shape")) return error("missing \"start_shape\"");
  absl::StatusOr<SintVec> start = ParseStartShape(record["start_shape"]);
  if (!start.ok()) return error(start.status().message());
  absl::StatusOr<std::vector<MovementOp>> ops =
      ParseMovementOps(record.contains("ops") ? record["ops"] : json::array());
  if (!ops.ok()) return error(absl::StrCat("\"ops\": ", ops.status().message()));
  absl::StatusOr<ShapeTracker> st = ShapeTracker::FromShape(*start);
  if (!st.ok()) return error(st.status().message());
  st = ApplyMovementOps(*st, *ops);
  if (!st.ok()) return error(st.status().message());
  ShapeTracker simple = st->Simplify();
  absl::StatusOr<std::vector<int64_t>> index = IndexArray(simple, {}, kMaxListedPositions);
  if (!index.ok()) return error(index.status().message());

  json shape = json::array();
  ordered_json views = ordered_json::array();
  for (const Sint& s : simple.shape()) shape.push_back(s.value());
  for (const View& v : simple.views()) views.push_back(OrderedView(ViewToJson(v)));
  auto [idx, valid] = simple.ToIndexedUops();
  ordered_json out;
  out["id"] = id;
  out["shape"] = shape;
  out["n_views"] = simple.views().size();
  out["contiguous"] = simple.contiguous();
  out["views"] = views;
  out["real_strides"] = RealStridesToJson(simple.RealStrides());
  out["idx_infix"] = RenderInfix(idx.get());
  out["valid_infix"] = RenderInfix(valid.get());
  out["index"] = *index;
  return out;
}

}  // namespace

absl::Status RunShape(absl::Span<const std::string> args, std::ostream& out) {
  if (!absl::GetFlag(FLAGS_jsonl)) return UsageError("shape reads JSON lines: pass --jsonl");
  UOPC_ASSIGN_OR_RETURN(std::string text, ReadInputText(args[0]));
  int lines = 0, failed = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    ++lines;
    json record = json::parse(line.begin(), line.end(), nullptr, false);
    if (record.is_discarded() || !record.is_object()) {
      ++failed;
      out << Dump(ErrorRecord(nullptr, "not a JSON object")) << "\n";
      continue;
    }
    ordered_json result = ShapeRecord(record);
    failed += result.contains("error") ? 1 : 0;
    out << Dump(result) << "\n";
  }
  return JsonlStatus(args[0], failed, lines);
}

}  // namespace uopc
