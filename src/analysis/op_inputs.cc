#include "op_inputs.h"

#include "json_document.h"

namespace paddle_prof::internal {

namespace {

// A list of integers, or (`nested`) a list of such lists.
bool IsDims(const JsonValue& v, bool nested) {
  if (!v.is_array()) return false;
  for (const JsonValue& e : v.elements()) {
    const JsonValue::Type type = e.type();
    const bool integer = type == JsonValue::Type::kInteger || type == JsonValue::Type::kUnsigned;
    if (!integer && !(nested && IsDims(e, false))) return false;
  }
  return true;
}

void CopyDims(const JsonValue& v, JsonWriter* w) {
  w->BeginArray();
  for (const JsonValue& e : v.elements()) {
    if (e.is_array()) {
      CopyDims(e, w);
    } else if (e.type() == JsonValue::Type::kInteger) {
      w->Int(e.as_integer());
    } else {
      w->Unsigned(e.as_unsigned());
    }
  }
  w->EndArray();
}

}  // namespace

bool WriteOpInputs(std::string_view inputs, JsonWriter* w) {
  try {
    const JsonDocument document(inputs, 5);
    const JsonValue root = document.root();
    if (!root.is_array() || root.size() != 2) return false;
    auto part = root.elements().begin();
    const JsonValue dims = *part;
    ++part;
    const JsonValue types = *part;
    if (!dims.is_array() || !types.is_array() || dims.size() != types.size()) return false;
    for (const JsonValue& d : dims.elements()) {
      if (!IsDims(d, true)) return false;
    }
    for (const JsonValue& t : types.elements()) {
      if (!t.is_string()) return false;
    }
    w->Key("Input Dims");
    CopyDims(dims, w);
    w->Key("Input type");
    w->BeginArray();
    for (const JsonValue& t : types.elements()) w->String(t.as_string());
    w->EndArray();
    return true;
  } catch (const JsonSyntaxError&) {
    return false;
  }
}

}  // namespace paddle_prof::internal
