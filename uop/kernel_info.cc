#include "uop/kernel_info.h"

#include <utility>

#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace uopc {
namespace {

// Reads `KernelInfo(name='...', local_dims=N, upcasted=N, dont_use_locals=True|False, vector_width=N)`;
// fields may be left out (their defaults apply) but must come in this order, as tinygrad's repr writes them
// (tinygrad has no vector_width).
class KernelInfoParser {
 public:
  explicit KernelInfoParser(absl::string_view text) : text_(text) {}

  absl::StatusOr<PayloadParse> Parse() {
    KernelInfo info;
    if (!Consume("KernelInfo(")) return Error("'KernelInfo('");
    bool first = true;
    for (absl::string_view field : {"name", "local_dims", "upcasted", "dont_use_locals", "vector_width"}) {
      SkipWs();
      if (Peek(')')) break;
      size_t before = pos_;
      if (!first && !Consume(",")) return Error("',' or ')'");
      SkipWs();
      if (Peek(')')) break;
      if (!Consume(absl::StrCat(field, "="))) {
        pos_ = before;
        continue;  // this field was left out
      }
      first = false;
      absl::Status s;
      if (field == "name") {
        s = ParseString(&info.name);
      } else if (field == "dont_use_locals") {
        s = ParseBool(&info.dont_use_locals);
      } else {
        s = ParseInt(field == "local_dims" ? &info.local_dims
                     : field == "upcasted" ? &info.upcasted
                                           : &info.vector_width);
      }
      if (!s.ok()) return s;
    }
    SkipWs();
    if (!Consume(")")) return Error("')' after the KernelInfo fields");
    return PayloadParse{std::make_shared<const KernelInfoArg>(std::move(info)), pos_};
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("KernelInfo: expected ", what, " at offset ", pos_));
  }
  void SkipWs() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool Peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  bool Consume(absl::string_view s) {
    SkipWs();
    if (text_.substr(pos_, s.size()) != s) return false;
    pos_ += s.size();
    return true;
  }
  absl::Status ParseString(std::string* out) {
    if (!Peek('\'')) return Error("a quoted name");
    size_t end = text_.find('\'', pos_ + 1);
    if (end == absl::string_view::npos) return Error("the closing quote of the name");
    *out = std::string(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return absl::OkStatus();
  }
  absl::Status ParseInt(int64_t* out) {
    size_t end = pos_;
    if (end < text_.size() && text_[end] == '-') ++end;
    while (end < text_.size() && absl::ascii_isdigit(text_[end])) ++end;
    if (!absl::SimpleAtoi(text_.substr(pos_, end - pos_), out)) return Error("an integer");
    pos_ = end;
    return absl::OkStatus();
  }
  absl::Status ParseBool(bool* out) {
    if (Consume("True")) {
      *out = true;
    } else if (Consume("False")) {
      *out = false;
    } else {
      return Error("True or False");
    }
    return absl::OkStatus();
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

absl::StatusOr<PayloadParse> ParseKernelInfoPayload(absl::string_view text) {
  return KernelInfoParser(text).Parse();
}

const bool kPayloadParserRegistered = [] {
  RegisterPayloadParser(KernelInfoArg::kTypeName, &ParseKernelInfoPayload);
  return true;
}();

}  // namespace

std::string KernelInfo::ToString() const {
  return absl::StrCat("KernelInfo(name='", name, "', local_dims=", local_dims, ", upcasted=", upcasted,
                      ", dont_use_locals=", dont_use_locals ? "True" : "False",
                      vector_width == 1 ? "" : absl::StrCat(", vector_width=", vector_width), ")");
}

size_t KernelInfoArg::Hash() const {
  return absl::HashOf(info_.name, info_.local_dims, info_.upcasted, info_.dont_use_locals,
                      info_.vector_width);
}

bool KernelInfoArg::Equals(const ArgPayload& other) const {
  return static_cast<const KernelInfoArg&>(other).info_ == info_;
}

Arg KernelInfoAsArg(KernelInfo info) {
  (void)kPayloadParserRegistered;
  return Arg(std::shared_ptr<const ArgPayload>(std::make_shared<const KernelInfoArg>(std::move(info))));
}

const KernelInfo* KernelInfoOf(const UOp* sink) {
  if (sink == nullptr) return nullptr;
  const KernelInfoArg* a = sink->arg().payload_as<KernelInfoArg>();
  return a != nullptr ? &a->info() : nullptr;
}

}  // namespace uopc
