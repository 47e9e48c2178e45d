// JSON text (json_document.h) read as nlohmann's parser reads it: the same texts are JSON,
// and a document holds the same values of the same types. Nesting past the reader's
// depth is an error of its own, which nlohmann does not have; a NUL byte ends nlohmann's
// text, and is an error here.
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "json_document.h"

using paddle_prof::internal::JsonDocument;
using paddle_prof::internal::JsonSyntaxError;
using paddle_prof::internal::JsonValue;

namespace {

void Check(bool same) {
  if (!same) std::abort();
}

// nlohmann keeps the last of an object's members with one key.
bool IsLast(JsonValue object, const JsonValue::Members::Iterator& at) {
  auto it = at;
  const std::string_view key = it.key();
  for (++it; it != object.members().end(); ++it) {
    if (it.key() == key) return false;
  }
  return true;
}

void ExpectSame(JsonValue ours, const nlohmann::json& theirs) {
  using Type = JsonValue::Type;
  switch (ours.type()) {
    case Type::kNull:
      return Check(theirs.is_null());
    case Type::kBool:
      return Check(theirs.is_boolean() && ours.as_bool() == theirs.get<bool>());
    case Type::kInteger:
      return Check(theirs.is_number_integer() && !theirs.is_number_unsigned() &&
                   ours.as_integer() == theirs.get<int64_t>());
    case Type::kUnsigned:
      return Check(theirs.is_number_unsigned() && ours.as_unsigned() == theirs.get<uint64_t>());
    case Type::kFloat:
      return Check(theirs.is_number_float() && ours.as_double() == theirs.get<double>());
    case Type::kString:
      return Check(theirs.is_string() && ours.as_string() == theirs.get_ref<const std::string&>());
    case Type::kArray: {
      Check(theirs.is_array() && ours.size() == theirs.size());
      size_t i = 0;
      for (const JsonValue v : ours.elements()) ExpectSame(v, theirs[i++]);
      return;
    }
    case Type::kObject: {
      Check(theirs.is_object());
      size_t keys = 0;
      const JsonValue::Members members = ours.members();
      for (auto it = members.begin(); it != members.end(); ++it) {
        if (!IsLast(ours, it)) continue;
        ++keys;
        const auto found = theirs.find(std::string(it.key()));
        Check(found != theirs.end());
        ExpectSame(it.value(), *found);
      }
      return Check(keys == theirs.size());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // nlohmann stops at a NUL byte as at the end of the text; in JSON it is never valid.
  const bool json = text.find('\0') == std::string::npos && nlohmann::json::accept(text);
  try {
    const JsonDocument document(text, 64);
    Check(json);
    ExpectSame(document.root(), nlohmann::json::parse(text));
  } catch (const JsonSyntaxError& e) {
    Check(!json || e.too_deep);
  }
  return 0;
}
