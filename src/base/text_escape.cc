#include "text_escape.h"

namespace paddle_prof::internal {

namespace {

constexpr char kHex[] = "0123456789abcdef";

bool InRange(unsigned char c, unsigned char low, unsigned char high) {
  return c >= low && c <= high;
}

}  // namespace

CodePoint DecodeUtf8(std::string_view s) {
  const auto b0 = static_cast<unsigned char>(s[0]);
  if (b0 < 0x80) return {b0, 1};
  if (b0 == 0xC0 && s.size() > 1 && static_cast<unsigned char>(s[1]) == 0x80) return {0, 2};
  // The lead byte fixes the length and the range of the second byte (Unicode's table of
  // well-formed sequences); later bytes are plain continuations.
  size_t length;
  unsigned char low = 0x80, high = 0xBF;
  char32_t value;
  if (InRange(b0, 0xC2, 0xDF)) {
    length = 2;
    value = b0 & 0x1F;
  } else if (InRange(b0, 0xE0, 0xEF)) {
    length = 3;
    value = b0 & 0x0F;
    if (b0 == 0xE0) low = 0xA0;   // no overlong forms
    if (b0 == 0xED) high = 0x9F;  // no surrogates
  } else if (InRange(b0, 0xF0, 0xF4)) {
    length = 4;
    value = b0 & 0x07;
    if (b0 == 0xF0) low = 0x90;   // no overlong forms
    if (b0 == 0xF4) high = 0x8F;  // nothing past U+10FFFF
  } else {
    return {kReplacementCharacter, 1};  // a continuation byte, C0, C1 or F5..FF
  }
  for (size_t i = 1; i < length; ++i) {
    if (i >= s.size()) return {kReplacementCharacter, i};
    const auto b = static_cast<unsigned char>(s[i]);
    if (!InRange(b, low, high)) return {kReplacementCharacter, i};  // the maximal subpart
    value = value << 6 | (b & 0x3F);
    low = 0x80;
    high = 0xBF;
  }
  return {value, length};
}

void AppendUtf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | cp >> 6));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | cp >> 12));
    out->push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | cp >> 18));
    out->push_back(static_cast<char>(0x80 | (cp >> 12 & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string EscapeForTable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const CodePoint cp = DecodeUtf8(s.substr(i));
    switch (cp.value) {
      case 0:
        out += "\\0";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case 0x2028:
        out += "\\u2028";
        break;
      case 0x2029:
        out += "\\u2029";
        break;
      default:
        if (cp.value < 0x20 || (cp.value >= 0x7F && cp.value < 0xA0)) {  // C0, DEL, C1
          out += "\\x";
          out.push_back(kHex[cp.value >> 4]);
          out.push_back(kHex[cp.value & 15]);
        } else if (cp.value == kReplacementCharacter) {
          AppendUtf8(cp.value, &out);  // whether it was one in the name or stands for bytes
        } else {
          out.append(s, i, cp.length);
        }
    }
    i += cp.length;
  }
  return out;
}

}  // namespace paddle_prof::internal
