#include "uop/arg.h"

#include <cstring>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "uop/check.h"

namespace uopc {

Arg Arg::IntTuple(absl::Span<const int64_t> ints) {
  Tuple t;
  t.reserve(ints.size());
  for (int64_t i : ints) t.emplace_back(i);
  return Arg(std::move(t));
}

const std::string& Arg::as_string() const {
  UOPC_CHECK(is_string(), "Arg is not a string");
  return *std::get<std::shared_ptr<const std::string>>(value_);
}
const Arg::Tuple& Arg::as_tuple() const {
  UOPC_CHECK(is_tuple(), "Arg is not a tuple");
  return *std::get<std::shared_ptr<const Tuple>>(value_);
}
DType Arg::as_dtype() const {
  UOPC_CHECK(is_dtype(), "Arg is not a dtype");
  return std::get<DType>(value_);
}
Ops Arg::as_op() const {
  UOPC_CHECK(is_op(), "Arg is not an op");
  return std::get<Ops>(value_);
}
const ArgPayload& Arg::as_payload() const { return *payload_ptr(); }
const std::shared_ptr<const ArgPayload>& Arg::payload_ptr() const {
  UOPC_CHECK(is_payload(), "Arg is not a payload");
  return std::get<std::shared_ptr<const ArgPayload>>(value_);
}

size_t Arg::Hash() const {
  size_t seed = static_cast<size_t>(kind()) * 0x9e3779b97f4a7c15ull;
  switch (kind()) {
    case Kind::kNone:
      return seed;
    case Kind::kInt:
      return absl::HashOf(seed, as_int());
    case Kind::kFloat: {
      uint64_t bits;
      double f = as_float();
      std::memcpy(&bits, &f, sizeof(bits));
      return absl::HashOf(seed, bits);
    }
    case Kind::kBool:
      return absl::HashOf(seed, as_bool());
    case Kind::kString:
      return absl::HashOf(seed, as_string());
    case Kind::kTuple: {
      size_t h = seed;
      for (const Arg& a : as_tuple()) h = absl::HashOf(h, a.Hash());
      return absl::HashOf(h, as_tuple().size());
    }
    case Kind::kDType:
      return absl::HashOf(seed, as_dtype());
    case Kind::kOp:
      return absl::HashOf(seed, as_op());
    case Kind::kPayload:
      return absl::HashOf(seed, as_payload().type_name(), as_payload().Hash());
  }
  return seed;
}

bool operator==(const Arg& a, const Arg& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Arg::Kind::kNone:
      return true;
    case Arg::Kind::kInt:
      return a.as_int() == b.as_int();
    case Arg::Kind::kFloat: {
      double x = a.as_float(), y = b.as_float();
      return std::memcmp(&x, &y, sizeof(double)) == 0;
    }
    case Arg::Kind::kBool:
      return a.as_bool() == b.as_bool();
    case Arg::Kind::kString:
      return a.as_string() == b.as_string();
    case Arg::Kind::kTuple:
      return a.as_tuple() == b.as_tuple();
    case Arg::Kind::kDType:
      return a.as_dtype() == b.as_dtype();
    case Arg::Kind::kOp:
      return a.as_op() == b.as_op();
    case Arg::Kind::kPayload: {
      const ArgPayload& x = a.as_payload();
      const ArgPayload& y = b.as_payload();
      if (&x == &y) return true;
      return x.type_name() == y.type_name() && x.Equals(y);
    }
  }
  return false;
}

namespace {

// Python's repr() of a str: single quotes unless the text has a single quote and no double quote.
std::string PythonStrRepr(const std::string& s) {
  char quote = (s.find('\'') != std::string::npos && s.find('"') == std::string::npos) ? '"' : '\'';
  std::string out(1, quote);
  for (unsigned char c : s) {
    switch (c) {
      // clang-format off
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      // clang-format on
      default:
        if (c == quote) {
          out += '\\';
          out += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7f) {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += quote;
  return out;
}

}  // namespace

std::string Arg::ToString() const {
  switch (kind()) {
    case Kind::kNone:
      return "None";
    case Kind::kInt:
      return absl::StrCat(as_int());
    case Kind::kFloat:
      return PythonFloatRepr(as_float());
    case Kind::kBool:
      return as_bool() ? "True" : "False";
    case Kind::kString:
      return PythonStrRepr(as_string());
    case Kind::kTuple: {
      const Tuple& t = as_tuple();
      std::string s = "(";
      for (size_t i = 0; i < t.size(); ++i) {
        if (i) s += ", ";
        s += t[i].ToString();
      }
      if (t.size() == 1) s += ",";
      return s + ")";
    }
    case Kind::kDType:
      return as_dtype().ToString();
    case Kind::kOp:
      return absl::StrCat("Ops.", OpName(as_op()));
    case Kind::kPayload:
      return as_payload().ToString();
  }
  return "";
}

Arg ArgFromConst(ConstValue v, DType dt) {
  ConstValue c = AsConst(v, dt);
  if (c.is_float()) return Arg(c.f());
  if (c.is_bool()) return Arg(c.b());
  // Integers: the low 64 bits, two's complement (uint64 values >= 2^63 become negative bit patterns).
  return Arg(static_cast<int64_t>(absl::Int128Low64(c.i())));
}

ConstValue ConstFromArg(const Arg& arg, DType dt) {
  switch (arg.kind()) {
    case Arg::Kind::kInt: {
      int64_t i = arg.as_int();
      if (dt.scalar_type() == ScalarType::kUInt64 && i < 0) {
        return ConstValue::Int(absl::int128(static_cast<uint64_t>(i)));
      }
      return ConstValue::Int(i);
    }
    case Arg::Kind::kFloat:
      return ConstValue::Float(arg.as_float());
    case Arg::Kind::kBool:
      return ConstValue::Bool(arg.as_bool());
    default:
      return ConstValue::Int(0);
  }
}

namespace {

struct PayloadParserRegistry {
  std::mutex mu;
  absl::flat_hash_map<std::string, PayloadParser> parsers;  // guarded by mu
};

PayloadParserRegistry& Registry() {
  static auto* const registry = new PayloadParserRegistry();
  return *registry;
}

}  // namespace

void RegisterPayloadParser(absl::string_view type_name, PayloadParser parser) {
  PayloadParserRegistry& r = Registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.parsers[std::string(type_name)] = parser;
}

PayloadParser FindPayloadParser(absl::string_view type_name) {
  PayloadParserRegistry& r = Registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.parsers.find(type_name);
  return it == r.parsers.end() ? nullptr : it->second;
}

}  // namespace uopc
