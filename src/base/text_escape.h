// Names, tags and thread names are bytes: from C++ they may be anything (a thread name
// cut at 15 bytes may end inside a character). Where they become text (the JSON files,
// the text table, Python's str) they are read here as UTF-8, so that what is written is
// always valid:
//   - each invalid sequence (a stray byte, a character cut short, an overlong form, a
//     surrogate, a value past U+10FFFF) reads as one U+FFFD, by Unicode's "maximal
//     subpart" rule (as Python's bytes.decode(errors='replace'));
//   - C0 80, the interned form of a NUL byte (see name_interner.h), reads as U+0000. C0 80
//     is not valid UTF-8, so no valid name changes meaning.
#ifndef PADDLE_PROF_SRC_TEXT_ESCAPE_H_
#define PADDLE_PROF_SRC_TEXT_ESCAPE_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace paddle_prof::internal {

inline constexpr char32_t kReplacementCharacter = 0xFFFD;

struct CodePoint {
  char32_t value;  // kReplacementCharacter for an invalid sequence
  size_t length;   // bytes read, at least 1
};

// The code point `s` (not empty) starts with.
CodePoint DecodeUtf8(std::string_view s);

// `cp` (at most U+10FFFF) as UTF-8.
void AppendUtf8(char32_t cp, std::string* out);

// `s` for the text table: valid UTF-8 on one line. NUL reads `\0`; newline, carriage
// return and tab `\n`, `\r`, `\t`; other control characters `\xNN` (their code point);
// the Unicode line and paragraph separators `\u2028`, `\u2029`.
std::string EscapeForTable(std::string_view s);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_TEXT_ESCAPE_H_
