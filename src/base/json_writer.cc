#include "json_writer.h"

#include <charconv>
#include <cmath>

#include "text_escape.h"

namespace paddle_prof::internal {

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_->push_back(',');
    first_.back() = false;
  }
}

void JsonWriter::Raw(std::string_view json) {
  BeforeValue();
  out_->append(json);
}

void JsonWriter::Open(char c) {
  BeforeValue();
  out_->push_back(c);
  first_.push_back(true);
}

void JsonWriter::Close(char c) {
  first_.pop_back();
  out_->push_back(c);
}

void JsonWriter::Key(std::string_view key) {
  String(key);
  out_->push_back(':');
  after_key_ = true;
}

void JsonWriter::String(std::string_view s) {
  BeforeValue();
  out_->push_back('"');
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {  // text must be valid UTF-8: see text_escape.h
      const CodePoint cp = DecodeUtf8(s.substr(i));
      if (cp.value == 0) {
        out_->append("\\u0000");
      } else if (cp.value == kReplacementCharacter) {
        AppendUtf8(cp.value, out_);
      } else {
        out_->append(s, i, cp.length);
      }
      i += cp.length;
      continue;
    }
    ++i;
    switch (c) {
      case '"':
        out_->append("\\\"");
        break;
      case '\\':
        out_->append("\\\\");
        break;
      case '\n':
        out_->append("\\n");
        break;
      case '\r':
        out_->append("\\r");
        break;
      case '\t':
        out_->append("\\t");
        break;
      default:
        if (c < 0x20) {
          static const char kHex[] = "0123456789abcdef";
          out_->append("\\u00");
          out_->push_back(kHex[c >> 4]);
          out_->push_back(kHex[c & 15]);
        } else {
          out_->push_back(static_cast<char>(c));
        }
    }
  }
  out_->push_back('"');
}

void JsonWriter::Double(double v) {
  if (!std::isfinite(v)) return Null();
  BeforeValue();
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof(buf), v);
  out_->append(buf, result.ptr);
}

void JsonWriter::Int(int64_t v) {
  BeforeValue();
  char buf[24];
  const auto result = std::to_chars(buf, buf + sizeof(buf), v);
  out_->append(buf, result.ptr);
}

void JsonWriter::Unsigned(uint64_t v) {
  BeforeValue();
  char buf[24];
  const auto result = std::to_chars(buf, buf + sizeof(buf), v);
  out_->append(buf, result.ptr);
}

void JsonWriter::Null() {
  BeforeValue();
  out_->append("null");
}

}  // namespace paddle_prof::internal
