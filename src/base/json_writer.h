// A minimal streaming JSON writer: objects, arrays, strings, and numbers in their
// shortest round-trip form (std::to_chars), so a value read back equals the value
// written. Commas are placed by the writer; the caller only nests correctly. Strings
// come out as valid UTF-8 whatever their bytes (text_escape.h: an invalid sequence
// becomes U+FFFD, a NUL byte or its interned form C0 80 becomes \u0000).
#ifndef PADDLE_PROF_SRC_JSON_WRITER_H_
#define PADDLE_PROF_SRC_JSON_WRITER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace paddle_prof::internal {

class JsonWriter {
 public:
  explicit JsonWriter(std::string* out) : out_(out) {}

  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }
  // Goes on with an array whose first elements were written elsewhere: each value
  // written at this level gets its comma before it.
  void ResumeArray() { first_.push_back(false); }
  void Key(std::string_view key);
  void String(std::string_view s);
  void Double(double v);  // NaN and infinities become null
  void Int(int64_t v);
  void Unsigned(uint64_t v);
  void Null();
  // A value written elsewhere, as it is: the caller vouches that it is JSON.
  void Raw(std::string_view json);
  void IntField(std::string_view key, int64_t v) {
    Key(key);
    Int(v);
  }
  void UnsignedField(std::string_view key, uint64_t v) {
    Key(key);
    Unsigned(v);
  }
  void DoubleField(std::string_view key, double v) {
    Key(key);
    Double(v);
  }
  void StringField(std::string_view key, std::string_view v) {
    Key(key);
    String(v);
  }
  void OptionalString(const std::optional<std::string>& s) { s ? String(*s) : Null(); }
  void OptionalDouble(const std::optional<double>& v) { v ? Double(*v) : Null(); }
  void OptionalInt(const std::optional<int64_t>& v) { v ? Int(*v) : Null(); }

 private:
  void Open(char c);
  void Close(char c);
  void BeforeValue();

  std::string* out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_JSON_WRITER_H_
