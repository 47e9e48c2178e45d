// Reading JSON text into a flat document: values and their types as JSON's parsers
// type them, strings unescaped, and every departure from strict JSON an error at its byte.
#include "json_document.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <clocale>
#include <cstdlib>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace paddle_prof::internal {
namespace {

using Type = JsonValue::Type;

// Where `text` stops being JSON, as "message" (the offset is in it); "" when it is JSON.
std::string Error(const std::string& text, int max_depth = 512) {
  try {
    JsonDocument document(text, max_depth);
  } catch (const JsonSyntaxError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonDocumentTest, ScalarsHaveTheTypesAndValuesOfTheirText) {
  const std::string text =
      R"([null, true, false, 0, 7, -7, -0, 18446744073709551615, 18446744073709551616,
          -9223372036854775808, -9223372036854775809, 1.5, 1e3, -2.5E-3, 1e-400, "s"])";
  const JsonDocument document(text, 4);
  std::vector<JsonValue> values;
  for (const JsonValue v : document.root().elements()) values.push_back(v);
  ASSERT_EQ(values.size(), 16u);
  EXPECT_EQ(document.root().size(), 16u);
  EXPECT_TRUE(values[0].is_null());
  EXPECT_EQ(values[1].as_bool(), true);
  EXPECT_EQ(values[2].as_bool(), false);
  EXPECT_EQ(values[3].type(), Type::kUnsigned);
  EXPECT_EQ(values[3].as_unsigned(), 0u);
  EXPECT_EQ(values[4].as_unsigned(), 7u);
  EXPECT_EQ(values[5].type(), Type::kInteger);
  EXPECT_EQ(values[5].as_integer(), -7);
  EXPECT_EQ(values[6].type(), Type::kInteger);
  EXPECT_EQ(values[6].as_integer(), 0);
  EXPECT_EQ(values[7].as_unsigned(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(values[8].type(), Type::kFloat);  // past 64 bits
  EXPECT_EQ(values[8].as_double(), 18446744073709551616.0);
  EXPECT_EQ(values[9].as_integer(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(values[10].type(), Type::kFloat);
  EXPECT_EQ(values[11].as_double(), 1.5);
  EXPECT_EQ(values[12].type(), Type::kFloat);
  EXPECT_EQ(values[12].as_double(), 1000.0);
  EXPECT_EQ(values[13].as_double(), -2.5e-3);
  EXPECT_EQ(values[14].as_double(), 0.0);  // underflow reads as zero, as strtod reads it
  EXPECT_EQ(values[15].as_string(), "s");
  EXPECT_EQ(values[4].as_double(), 7.0);  // any number reads as a double
  EXPECT_EQ(values[5].as_double(), -7.0);
}

TEST(JsonDocumentTest, NumbersPrintInTheirShortestForm) {
  const JsonDocument document("[1.3883e22, -1e308, 18446744073709551615, -5, 0.1, 2.0, -3e2]", 2);
  std::vector<std::string> printed;
  for (const JsonValue v : document.root().elements()) printed.push_back(v.NumberText());
  // A whole float keeps a point, to tell it from an integer.
  EXPECT_EQ(printed, (std::vector<std::string>{"1.3883e+22", "-1e+308", "18446744073709551615",
                                               "-5", "0.1", "2.0", "-300.0"}));
}

TEST(JsonDocumentTest, WrongTypesAreErrorsNamingBoth) {
  const JsonDocument document(R"({"a": [1], "b": "x"})", 3);
  const JsonValue a = *document.root().find("a");
  const JsonValue b = *document.root().find("b");
  EXPECT_EQ(a.type_name(), std::string("array"));
  EXPECT_THROW(a.members(), std::invalid_argument);
  EXPECT_THROW(b.elements(), std::invalid_argument);
  EXPECT_THROW(b.as_double(), std::invalid_argument);
  EXPECT_THROW(b.NumberText(), std::invalid_argument);
  EXPECT_THROW(document.root().as_string(), std::invalid_argument);
  try {
    a.as_string();
    FAIL() << "an array read as a string";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "a string was expected, not array");
  }
  const JsonDocument negative("[-1, 1]", 2);
  std::vector<JsonValue> values;
  for (const JsonValue v : negative.root().elements()) values.push_back(v);
  EXPECT_THROW(values[0].as_unsigned(), std::invalid_argument);
  EXPECT_THROW(values[1].as_integer(), std::invalid_argument);
}

TEST(JsonDocumentTest, StringsAreUnescapedAndPlainOnesStayInTheText) {
  const std::string text =
      R"(["plain", "caf\u00e9 \ud83d\ude00", "\"\\\/\b\f\n\r\t", "é", "a\u0000b", ""])";
  const JsonDocument document(text, 2);
  std::vector<std::string_view> strings;
  for (const JsonValue v : document.root().elements()) strings.push_back(v.as_string());
  ASSERT_EQ(strings.size(), 6u);
  EXPECT_EQ(strings[0], "plain");
  EXPECT_EQ(strings[0].data(), text.data() + 2);  // no copy
  EXPECT_EQ(strings[1], "caf\xC3\xA9 \xF0\x9F\x98\x80");
  EXPECT_EQ(strings[2], "\"\\/\b\f\n\r\t");
  EXPECT_EQ(strings[3], "\xC3\xA9");
  EXPECT_EQ(strings[4], std::string("a\0b", 3));
  EXPECT_EQ(strings[5], "");
}

TEST(JsonDocumentTest, ObjectsKeepTheirMembersInOrderAndFindTheFirst) {
  const std::string text = R"( {"b": {"c": [1, {"d": 2}]}, "a": 3, "b": 4, "": 5} )";
  const JsonDocument document(text, 4);
  const JsonValue root = document.root();
  EXPECT_EQ(root.size(), 4u);
  std::vector<std::string> keys;
  for (const auto& [key, value] : root.members()) keys.emplace_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"b", "a", "b", ""}));
  EXPECT_TRUE(root.find("b")->is_object());  // the first of two
  EXPECT_EQ(root.find("a")->as_unsigned(), 3u);
  EXPECT_EQ(root.find("")->as_unsigned(), 5u);
  EXPECT_FALSE(root.find("c").has_value());  // only the object's own members
  const JsonValue c = *root.find("b")->find("c");
  std::vector<JsonValue> elements;
  for (const JsonValue v : c.elements()) elements.push_back(v);
  ASSERT_EQ(elements.size(), 2u);
  EXPECT_EQ(elements[1].find("d")->as_unsigned(), 2u);
  EXPECT_EQ(JsonDocument("{}", 1).root().size(), 0u);
  const JsonDocument empty("[]", 1);
  EXPECT_FALSE(empty.root().elements().begin() != empty.root().elements().end());
}

TEST(JsonDocumentTest, WhatIsNotStrictJsonIsAnErrorAtItsByte) {
  EXPECT_EQ(Error("{not json"), "a key was expected at byte 1");
  EXPECT_EQ(Error(""), "the text ends where a value was expected at byte 0");
  EXPECT_EQ(Error("[1,]"), "not a JSON value at byte 3");
  EXPECT_EQ(Error("[1 2]"), "',' or ']' was expected at byte 3");
  EXPECT_EQ(Error(R"({"a" 1})"), "':' was expected at byte 5");
  EXPECT_EQ(Error("01"), "text after the value at byte 1");
  EXPECT_EQ(Error("1."), "a number without digits after its point at byte 2");
  EXPECT_EQ(Error("1e+"), "a number without digits in its exponent at byte 3");
  EXPECT_EQ(Error("1e400"), "a number too large for a double at byte 5");
  for (const char* not_json : {".5", "+1", "-", "NaN", "Infinity", "tru", "nul", "[1] x",
                               "// comment\n1", "'a'", "[", "{\"a\":1", "\"abc"}) {
    EXPECT_NE(Error(not_json), "") << not_json;
  }
}

TEST(JsonDocumentTest, StringsMustBeValidUtf8WithoutControlCharacters) {
  EXPECT_EQ(Error("\"a\nb\""), "a control character in a string at byte 2");
  EXPECT_EQ(Error("\"\xC0\x80\""), "invalid UTF-8 in a string at byte 1");  // an overlong NUL
  EXPECT_EQ(Error("\"\xFF\""), "invalid UTF-8 in a string at byte 1");
  EXPECT_EQ(Error("\"\xED\xA0\x80\""), "invalid UTF-8 in a string at byte 1");  // a surrogate
  EXPECT_EQ(Error("\"\xE2\x82\""), "invalid UTF-8 in a string at byte 1");      // cut short
  EXPECT_EQ(Error("\"\xEF\xBF\xBD\""), "");  // U+FFFD itself is valid
  EXPECT_EQ(Error(R"("\ude00")"), "a low surrogate without a high one at byte 7");
  EXPECT_EQ(Error(R"("\ud83d")"), "a high surrogate without a low one at byte 7");
  EXPECT_EQ(Error(R"("\ud83d\u0041")"), "a high surrogate without a low one at byte 13");
  EXPECT_EQ(Error(R"("\u12G4")"), "a \\u escape that is not four hexadecimal digits at byte 5");
  EXPECT_EQ(Error(R"("\u12")"), "a \\u escape cut short at byte 3");
  EXPECT_EQ(Error(R"("\x")"), "an unknown escape at byte 3");
  EXPECT_EQ(Error("\xEF\xBB\xBF[1]"), "");  // a byte order mark before the value
}

TEST(JsonDocumentTest, NestingPastTheMaximumIsAnErrorAtTheOpeningBracket) {
  EXPECT_EQ(Error("[[{\"a\":[]}]]", 4), "");
  try {
    JsonDocument document("[[{\"a\":[[]]}]]", 4);
    FAIL() << "nested five deep";
  } catch (const JsonSyntaxError& e) {
    EXPECT_TRUE(e.too_deep);
    EXPECT_EQ(e.offset, 8u);
  }
  try {
    JsonDocument document("[1,", 4);
    FAIL() << "not JSON";
  } catch (const JsonSyntaxError& e) {
    EXPECT_FALSE(e.too_deep);
    EXPECT_EQ(e.offset, 3u);
  }
  // Far deeper than the stack would allow without the bound.
  EXPECT_NE(Error(std::string(1000000, '['), 512), "");
}

// A program whose locale writes decimals with a comma (de_DE, made here with localedef)
// reads numbers as the C locale does, those past a double's range included.
TEST(JsonDocumentTest, NumbersReadTheSameInAProgramWithACommaForThePoint) {
  const std::string dir =
      ::testing::TempDir() + "json_document_locales." + std::to_string(getpid());
  ASSERT_EQ(std::system(("mkdir -p " + dir + " && localedef -i de_DE -f UTF-8 " + dir +
                         "/de_DE.UTF-8 > /dev/null 2>&1")
                            .c_str()),
            0)
      << "localedef (Debian's locales package) made no de_DE locale";
  setenv("LOCPATH", dir.c_str(), 1);
  ASSERT_NE(std::setlocale(LC_ALL, "de_DE.UTF-8"), nullptr);
  EXPECT_STREQ(std::localeconv()->decimal_point, ",");
  EXPECT_EQ(Error("1.5e999"), "a number too large for a double at byte 7");
  const JsonDocument document("[2.5e-400, 1.5, 1e308]", 2);
  std::vector<double> read;
  for (const JsonValue v : document.root().elements()) read.push_back(v.as_double());
  EXPECT_EQ(read, (std::vector<double>{0, 1.5, 1e308}));
  std::setlocale(LC_ALL, "C");
  unsetenv("LOCPATH");
  std::system(("rm -rf " + dir).c_str());
}

// The same text read by nlohmann's parser, value by value.
void ExpectSame(JsonValue ours, const nlohmann::json& theirs) {
  switch (ours.type()) {
    case Type::kNull:
      EXPECT_TRUE(theirs.is_null());
      break;
    case Type::kBool:
      EXPECT_EQ(ours.as_bool(), theirs.get<bool>());
      break;
    case Type::kInteger:
      ASSERT_TRUE(theirs.is_number_integer() && !theirs.is_number_unsigned());
      EXPECT_EQ(ours.as_integer(), theirs.get<int64_t>());
      break;
    case Type::kUnsigned:
      ASSERT_TRUE(theirs.is_number_unsigned());
      EXPECT_EQ(ours.as_unsigned(), theirs.get<uint64_t>());
      break;
    case Type::kFloat:
      ASSERT_TRUE(theirs.is_number_float());
      EXPECT_EQ(ours.as_double(), theirs.get<double>());
      break;
    case Type::kString:
      EXPECT_EQ(ours.as_string(), theirs.get<std::string>());
      break;
    case Type::kArray: {
      ASSERT_TRUE(theirs.is_array());
      ASSERT_EQ(ours.size(), theirs.size());
      size_t i = 0;
      for (const JsonValue v : ours.elements()) ExpectSame(v, theirs[i++]);
      break;
    }
    case Type::kObject:
      ASSERT_TRUE(theirs.is_object());
      ASSERT_EQ(ours.size(), theirs.size());
      for (const auto& [key, value] : ours.members()) {
        ExpectSame(value, theirs.at(std::string(key)));
      }
      break;
  }
}

TEST(JsonDocumentTest, ReadsWhatNlohmannReads) {
  const std::string text = R"({"events": [{"name": "op\u00e9", "calls": 3, "total_ms": 0.125,
      "memory": {"CPU": {"peak_bytes": 4096, "live_bytes": -12}}, "tag": null,
      "durations": {"ns": [100, 2000, 30000], "calls": [1, 1, 1]}}],
      "version": 1, "ok": true, "wall_ms": 1.5e-7, "big": 1e300})";
  const JsonDocument document(text, 8);
  ExpectSame(document.root(), nlohmann::json::parse(text));
}

}  // namespace
}  // namespace paddle_prof::internal
