// JSON text read into one flat array of values, for files read back (summary_reader.h):
// a summary of 500 rows reads several times faster than into a tree of maps, since no
// value is a node of its own and strings without escapes stay views of the text. Strict
// JSON (RFC 8259): what json_writer.h writes, never comments, trailing commas, NaN or
// invalid UTF-8.
#ifndef PADDLE_PROF_SRC_JSON_DOCUMENT_H_
#define PADDLE_PROF_SRC_JSON_DOCUMENT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace paddle_prof::internal {

class JsonDocument;

// Text that is not JSON, or nests deeper than the reader allows.
class JsonSyntaxError : public std::invalid_argument {
 public:
  JsonSyntaxError(const std::string& what, size_t offset, bool too_deep)
      : std::invalid_argument(what), offset(offset), too_deep(too_deep) {}
  size_t offset;  // the byte at which the text stops being JSON
  bool too_deep;  // the text opens an array or object past the reader's depth there
};

// One value of a document, valid while the document and its text live.
class JsonValue {
 public:
  // Numbers as JSON's parsers type them: a whole number is kUnsigned when it is not
  // negative, kInteger when it is, kFloat when it has a fraction or exponent or does
  // not fit 64 bits.
  enum class Type : uint8_t { kNull, kBool, kInteger, kUnsigned, kFloat, kString, kArray, kObject };

  Type type() const;
  // "null", "boolean", "number", "string", "array" or "object", for errors.
  const char* type_name() const;
  bool is_null() const { return type() == Type::kNull; }
  bool is_number() const;
  bool is_string() const { return type() == Type::kString; }
  bool is_array() const { return type() == Type::kArray; }
  bool is_object() const { return type() == Type::kObject; }

  // Each for its own type only (a number's as_double for any number).
  bool as_bool() const;
  int64_t as_integer() const;
  uint64_t as_unsigned() const;
  double as_double() const;
  std::string_view as_string() const;
  // A number as JSON would write it: the shortest form that reads back the same.
  std::string NumberText() const;

  // Elements of an array, members of an object.
  size_t size() const;
  // The member named `key` of an object, if it has one (the first, if it has several).
  std::optional<JsonValue> find(std::string_view key) const;

  class Iterator;
  // An array's elements, in order.
  class Elements;
  Elements elements() const;
  // An object's members, in order, as (key, value).
  class Members;
  Members members() const;

 private:
  friend class JsonDocument;
  JsonValue(const JsonDocument* document, uint32_t index) : document_(document), index_(index) {}
  const JsonDocument* document_;
  uint32_t index_;
};

class JsonDocument {
 public:
  // Reads `text`, which must outlive the document; JsonSyntaxError where it is not JSON
  // or opens an array or object deeper than `max_depth` levels.
  JsonDocument(std::string_view text, int max_depth);
  JsonDocument(const JsonDocument&) = delete;
  JsonDocument& operator=(const JsonDocument&) = delete;

  JsonValue root() const { return JsonValue(this, 0); }

 private:
  friend class JsonValue;
  friend class JsonParser;
  // A value; an array or object is followed by its elements (an object's as key, value).
  struct Node {
    JsonValue::Type type;
    bool unescaped;   // a string whose escapes were undone into unescaped_
    uint32_t length;  // a string's bytes; an array's elements, an object's members
    uint32_t end;     // the index after this value and everything in it
    union {
      bool boolean;
      int64_t integer;
      uint64_t unsigned_integer;
      double floating;
      size_t offset;  // a string's, in the text or in unescaped_
    };
  };
  const Node& node(uint32_t index) const { return nodes_[index]; }
  std::string_view text_;
  std::string unescaped_;
  std::vector<Node> nodes_;
};

class JsonValue::Iterator {
 public:
  Iterator(const JsonDocument* document, uint32_t index, bool members)
      : document_(document), index_(index), members_(members) {}
  bool operator!=(const Iterator& other) const { return index_ != other.index_; }
  Iterator& operator++();
  JsonValue value() const { return JsonValue(document_, members_ ? index_ + 1 : index_); }
  std::string_view key() const { return JsonValue(document_, index_).as_string(); }

 private:
  const JsonDocument* document_;
  uint32_t index_;
  bool members_;
};

class JsonValue::Elements {
 public:
  class Iterator : public JsonValue::Iterator {
   public:
    using JsonValue::Iterator::Iterator;
    JsonValue operator*() const { return value(); }
  };
  Iterator begin() const { return {document_, first_, false}; }
  Iterator end() const { return {document_, end_, false}; }

 private:
  friend class JsonValue;
  Elements(const JsonDocument* document, uint32_t first, uint32_t end)
      : document_(document), first_(first), end_(end) {}
  const JsonDocument* document_;
  uint32_t first_, end_;
};

class JsonValue::Members {
 public:
  class Iterator : public JsonValue::Iterator {
   public:
    using JsonValue::Iterator::Iterator;
    std::pair<std::string_view, JsonValue> operator*() const { return {key(), value()}; }
  };
  Iterator begin() const { return {document_, first_, true}; }
  Iterator end() const { return {document_, end_, true}; }

 private:
  friend class JsonValue;
  Members(const JsonDocument* document, uint32_t first, uint32_t end)
      : document_(document), first_(first), end_(end) {}
  const JsonDocument* document_;
  uint32_t first_, end_;
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_JSON_DOCUMENT_H_
