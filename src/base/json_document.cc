#include "json_document.h"

#include <locale.h>
#include <stdlib.h>

#include <charconv>
#include <cmath>
#include <limits>

#include "text_escape.h"

namespace paddle_prof::internal {

// Recursive descent over the text, one node per value; depth is bounded by the caller's
// maximum, so the recursion is too.
class JsonParser {
 public:
  JsonParser(JsonDocument* document, int max_depth)
      : text_(document->text_), document_(document), max_depth_(max_depth) {}

  void Parse() {
    if (text_.size() >= std::numeric_limits<uint32_t>::max()) Fail("text of 4 GiB or more");
    // Summaries take 8 to 10 bytes of text a value: room for all at once, whose pages
    // cost nothing until used.
    document_->nodes_.reserve(text_.size() / 4 + 1);
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // a byte order mark, as editors write
    SkipSpace();
    Value(0);
    SkipSpace();
    if (pos_ != text_.size()) Fail("text after the value");
  }

 private:
  using Node = JsonDocument::Node;
  using Type = JsonValue::Type;

  [[noreturn]] void Fail(const char* what, bool too_deep = false) const {
    throw JsonSyntaxError(std::string(what) + " at byte " + std::to_string(pos_), pos_, too_deep);
  }
  bool At(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  bool AtDigit() const { return pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9'; }
  void SkipDigits() {
    while (AtDigit()) ++pos_;
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\t')) {
      ++pos_;
    }
  }
  void Expect(char c, const char* what) {
    SkipSpace();
    if (!At(c)) Fail(what);
    ++pos_;
    SkipSpace();
  }
  uint32_t Push(Type type) {
    Node node{};
    node.type = type;
    document_->nodes_.push_back(node);
    return static_cast<uint32_t>(document_->nodes_.size() - 1);
  }
  Node& Last() { return document_->nodes_.back(); }
  void Close(uint32_t index, uint32_t length) {
    Node& node = document_->nodes_[index];
    node.length = length;
    node.end = static_cast<uint32_t>(document_->nodes_.size());
  }

  void Value(int depth) {
    if (pos_ >= text_.size()) Fail("the text ends where a value was expected");
    switch (text_[pos_]) {
      case '{':
        return Container(depth + 1, Type::kObject, '}');
      case '[':
        return Container(depth + 1, Type::kArray, ']');
      case '"':
        return String();
      case 't':
        return Literal("true", Type::kBool, true);
      case 'f':
        return Literal("false", Type::kBool, false);
      case 'n':
        return Literal("null", Type::kNull, false);
      default:
        return Number();
    }
  }

  void Literal(std::string_view word, Type type, bool value) {
    if (text_.substr(pos_, word.size()) != word) Fail("not a JSON value");
    pos_ += word.size();
    const uint32_t index = Push(type);
    document_->nodes_[index].boolean = value;
    Close(index, 0);
  }

  void Container(int depth, Type type, char closing) {
    if (depth > max_depth_) Fail("nesting too deep", true);
    const uint32_t index = Push(type);
    ++pos_;
    SkipSpace();
    uint32_t length = 0;
    if (At(closing)) {
      ++pos_;
    } else {
      for (;;) {
        if (type == Type::kObject) {
          if (!At('"')) Fail("a key was expected");
          String();
          Expect(':', "':' was expected");
        }
        Value(depth);
        ++length;
        SkipSpace();
        if (At(',')) {
          ++pos_;
          SkipSpace();
        } else if (At(closing)) {
          ++pos_;
          break;
        } else {
          Fail(type == Type::kObject ? "',' or '}' was expected" : "',' or ']' was expected");
        }
      }
    }
    Close(index, length);
  }

  // Bytes from pos_ that are valid UTF-8 and no control character, up to a quote or
  // backslash; pos_ ends on it.
  void SkipPlain() {
    while (pos_ < text_.size()) {
      const auto c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"' || c == '\\') return;
      if (c < 0x20) Fail("a control character in a string");
      if (c < 0x80) {
        ++pos_;
        continue;
      }
      const std::string_view rest = text_.substr(pos_);
      const CodePoint cp = DecodeUtf8(rest);
      // DecodeUtf8 reads an invalid sequence as U+FFFD and C0 80 as NUL, for names.
      if ((cp.value == kReplacementCharacter && rest.substr(0, 3) != "\xEF\xBF\xBD") ||
          (cp.value == 0 && cp.length == 2)) {
        Fail("invalid UTF-8 in a string");
      }
      pos_ += cp.length;
    }
    Fail("the text ends inside a string");
  }

  uint32_t Hex4() {
    if (text_.size() - pos_ < 4) Fail("a \\u escape cut short");
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i, ++pos_) {
      const char c = text_[pos_];
      value <<= 4;
      if (c >= '0' && c <= '9') {
        value |= c - '0';
      } else if (c >= 'a' && c <= 'f') {
        value |= c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        value |= c - 'A' + 10;
      } else {
        Fail("a \\u escape that is not four hexadecimal digits");
      }
    }
    return value;
  }

  void Escape(std::string* out) {
    ++pos_;  // the backslash
    if (pos_ >= text_.size()) Fail("the text ends inside a string");
    const char c = text_[pos_++];
    switch (c) {
      case '"':
      case '\\':
      case '/':
        out->push_back(c);
        return;
      case 'b':
        out->push_back('\b');
        return;
      case 'f':
        out->push_back('\f');
        return;
      case 'n':
        out->push_back('\n');
        return;
      case 'r':
        out->push_back('\r');
        return;
      case 't':
        out->push_back('\t');
        return;
      case 'u':
        break;
      default:
        Fail("an unknown escape");
    }
    char32_t cp = Hex4();
    if (cp >= 0xDC00 && cp <= 0xDFFF) Fail("a low surrogate without a high one");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (text_.substr(pos_, 2) != "\\u") Fail("a high surrogate without a low one");
      pos_ += 2;
      const char32_t low = Hex4();
      if (low < 0xDC00 || low > 0xDFFF) Fail("a high surrogate without a low one");
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    AppendUtf8(cp, out);
  }

  void String() {
    const size_t start = ++pos_;
    SkipPlain();
    const uint32_t index = Push(Type::kString);
    if (text_[pos_] == '"') {  // no escapes: a view of the text
      Last().offset = start;
      Close(index, static_cast<uint32_t>(pos_ - start));
      ++pos_;
      return;
    }
    std::string& out = document_->unescaped_;
    const size_t offset = out.size();
    out.append(text_, start, pos_ - start);
    while (text_[pos_] == '\\') {
      Escape(&out);
      const size_t plain = pos_;
      SkipPlain();
      out.append(text_, plain, pos_ - plain);
    }
    ++pos_;  // the closing quote
    Node& node = document_->nodes_[index];
    node.unescaped = true;
    node.offset = offset;
    Close(index, static_cast<uint32_t>(out.size() - offset));
  }

  void Number() {
    const size_t start = pos_;
    if (At('-')) ++pos_;
    if (!AtDigit()) Fail("not a JSON value");
    if (At('0')) {
      ++pos_;
    } else {
      SkipDigits();
    }
    bool whole = true;
    if (At('.')) {
      ++pos_;
      if (!AtDigit()) Fail("a number without digits after its point");
      SkipDigits();
      whole = false;
    }
    if (At('e') || At('E')) {
      ++pos_;
      if (At('+') || At('-')) ++pos_;
      if (!AtDigit()) Fail("a number without digits in its exponent");
      SkipDigits();
      whole = false;
    }
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    const uint32_t index = Push(Type::kFloat);
    Node& node = document_->nodes_[index];
    Close(index, 0);
    if (whole) {
      const bool negative = *first == '-';
      const auto read = negative ? std::from_chars(first, last, node.integer)
                                 : std::from_chars(first, last, node.unsigned_integer);
      if (read.ec == std::errc()) {
        node.type = negative ? Type::kInteger : Type::kUnsigned;
        return;
      }
    }
    const auto read = std::from_chars(first, last, node.floating);
    if (read.ec == std::errc::result_out_of_range) {
      // from_chars leaves both overflow and underflow unread; strtod tells them apart, in
      // the C locale whatever the program's (a comma as the point would stop it early).
      static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", locale_t{});
      node.floating = strtod_l(std::string(first, last).c_str(), nullptr, c_locale);
      if (!std::isfinite(node.floating)) Fail("a number too large for a double");
    }
  }

  std::string_view text_;
  JsonDocument* document_;
  int max_depth_;
  size_t pos_ = 0;
};

JsonDocument::JsonDocument(std::string_view text, int max_depth) : text_(text) {
  JsonParser(this, max_depth).Parse();
}

namespace {

[[noreturn]] void WrongType(const JsonValue& value, const char* wanted) {
  throw std::invalid_argument(std::string(wanted) + " was expected, not " + value.type_name());
}

}  // namespace

JsonValue::Type JsonValue::type() const { return document_->node(index_).type; }

const char* JsonValue::type_name() const {
  switch (type()) {
    case Type::kNull:
      return "null";
    case Type::kBool:
      return "boolean";
    case Type::kInteger:
    case Type::kUnsigned:
    case Type::kFloat:
      return "number";
    case Type::kString:
      return "string";
    case Type::kArray:
      return "array";
    case Type::kObject:
      return "object";
  }
  return "?";
}

bool JsonValue::is_number() const {
  const Type t = type();
  return t == Type::kInteger || t == Type::kUnsigned || t == Type::kFloat;
}

bool JsonValue::as_bool() const {
  if (type() != Type::kBool) WrongType(*this, "a boolean");
  return document_->node(index_).boolean;
}

int64_t JsonValue::as_integer() const {
  if (type() != Type::kInteger) WrongType(*this, "a negative integer");
  return document_->node(index_).integer;
}

uint64_t JsonValue::as_unsigned() const {
  if (type() != Type::kUnsigned) WrongType(*this, "an unsigned integer");
  return document_->node(index_).unsigned_integer;
}

double JsonValue::as_double() const {
  const JsonDocument::Node& node = document_->node(index_);
  switch (node.type) {
    case Type::kInteger:
      return static_cast<double>(node.integer);
    case Type::kUnsigned:
      return static_cast<double>(node.unsigned_integer);
    case Type::kFloat:
      return node.floating;
    default:
      WrongType(*this, "a number");
  }
}

std::string_view JsonValue::as_string() const {
  const JsonDocument::Node& node = document_->node(index_);
  if (node.type != Type::kString) WrongType(*this, "a string");
  const std::string_view in = node.unescaped ? document_->unescaped_ : document_->text_;
  return in.substr(node.offset, node.length);
}

std::string JsonValue::NumberText() const {
  const JsonDocument::Node& node = document_->node(index_);
  char buffer[32];
  std::to_chars_result written{};
  switch (node.type) {
    case Type::kInteger:
      written = std::to_chars(buffer, buffer + sizeof buffer, node.integer);
      break;
    case Type::kUnsigned:
      written = std::to_chars(buffer, buffer + sizeof buffer, node.unsigned_integer);
      break;
    case Type::kFloat:
      written = std::to_chars(buffer, buffer + sizeof buffer, node.floating);
      // A whole float keeps its point ("2.0"), so an error tells it from an integer.
      if (std::string_view(buffer, written.ptr - buffer).find_first_of(".e") ==
          std::string_view::npos) {
        *written.ptr++ = '.';
        *written.ptr++ = '0';
      }
      break;
    default:
      WrongType(*this, "a number");
  }
  return std::string(buffer, written.ptr);
}

size_t JsonValue::size() const { return document_->node(index_).length; }

std::optional<JsonValue> JsonValue::find(std::string_view key) const {
  if (type() != Type::kObject) WrongType(*this, "an object");
  // Node by node, lengths first: the summary reader looks up every field this way.
  const std::vector<JsonDocument::Node>& nodes = document_->nodes_;
  for (uint32_t i = index_ + 1; i < nodes[index_].end; i = nodes[i + 1].end) {
    if (nodes[i].length == key.size() && JsonValue(document_, i).as_string() == key) {
      return JsonValue(document_, i + 1);
    }
  }
  return std::nullopt;
}

JsonValue::Elements JsonValue::elements() const {
  if (type() != Type::kArray) WrongType(*this, "an array");
  return Elements(document_, index_ + 1, document_->node(index_).end);
}

JsonValue::Members JsonValue::members() const {
  if (type() != Type::kObject) WrongType(*this, "an object");
  return Members(document_, index_ + 1, document_->node(index_).end);
}

JsonValue::Iterator& JsonValue::Iterator::operator++() {
  index_ = document_->node(members_ ? index_ + 1 : index_).end;
  return *this;
}

}  // namespace paddle_prof::internal
