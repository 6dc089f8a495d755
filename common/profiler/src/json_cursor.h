#pragma once
// JSON's grammar over one block of a chunked input, apart from what a trace means: whitespace,
// strings (escapes decoded, UTF-8 checked), numbers kept as text, literals, and whole values
// skipped without recursion (the open containers are a stack of bytes). The chrome-trace reader
// (chrome_trace_import.cpp) gives its meaning on top.
//
// Running out of input inside an item is not an error: a primitive throws NeedMore, which never
// leaves the reader's feed(); feed() rewinds to the item's start and reports "need more input"
// as its status, and the caller refills the block.

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "workbook/profiler/chrome_trace.h"

namespace workbook::detail {

/// The block ends inside the current item: refill and parse the item again.
struct NeedMore {};

/// A cursor over the block [begin, end) of a JSON text; `last` when no input follows it.
class JsonCursor {
 public:
  explicit JsonCursor(std::string source) : source_(std::move(source)) {}

  /// A trace error naming the input.
  [[noreturn]] void fail(const std::string& what) const { throw TraceError(fmt::format("{}: {}", source_, what)); }

 protected:
  /// Starts on a new block.
  void reset(const char* begin, const char* end, bool last) {
    begin_ = begin;
    p_ = begin;
    end_ = end;
    last_ = last;
  }
  /// The start of an item: where parsing resumes if the block ends inside it.
  void mark_item() { mark_ = p_; }
  /// Steps over whitespace before an item, within this block only, counting it as read: a long run
  /// of blanks between items never has to stay in the buffer.
  void skip_ws_between_items() {
    const char* from = p_;
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
    consumed_ += std::size_t(p_ - from);
  }
  /// The item was read whole.
  void item_done() { consumed_ += std::size_t(p_ - mark_); }
  /// Offsets into the block: of the current position, and of the unfinished item's start.
  std::size_t offset() const { return std::size_t(p_ - begin_); }
  std::size_t mark_offset() const { return std::size_t(mark_ - begin_); }
  bool at_block_end() const { return p_ == end_; }

  char peek() {
    if (p_ == end_) throw NeedMore{};
    return *p_;
  }
  void skip_ws() {
    for (;;) {
      while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
      if (p_ < end_ || last_) return;
      throw NeedMore{};
    }
  }
  static std::string printable(char c) {
    return (unsigned char)c >= 0x20 && (unsigned char)c < 0x7f ? std::string(1, c)
                                                               : fmt::format("\\x{:02x}", (unsigned char)c);
  }
  [[noreturn]] void bad_json(const std::string& what) const {
    fail(fmt::format("not valid JSON: {} at byte {}", what, consumed_ + std::size_t(p_ - mark_)));
  }
  [[noreturn]] void bad_json_or(const std::string& message) {
    // Something that is JSON but not a container is not a trace; anything else is not JSON.
    if (p_ == end_) throw NeedMore{};
    const char c = *p_;
    if (c == '"' || c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n') {
      skip_value();
      skip_ws();
      if (p_ == end_) fail(message);
    }
    bad_json(fmt::format("unexpected '{}'", printable(c)));
  }
  // After a member or element: true when a ',' says another follows, false at `close`.
  bool more_members(char close) {
    skip_ws();
    if (peek() == ',') {
      ++p_;
      return true;
    }
    expect(close);
    return false;
  }
  // A string value into `out`; any other value is skipped and reported as absent.
  bool string_member(std::string& out) {
    if (peek() != '"') {
      skip_value();
      return false;
    }
    out.assign(string_view_or_decode(scratch_));  // keeps the capacity of a reused string
    return true;
  }
  // A string value as a view (valid until the next string is read); any other value is skipped
  // and reported as absent.
  bool string_view_member(std::string_view& out) {
    if (peek() != '"') {
      skip_value();
      return false;
    }
    out = string_view_or_decode(scratch_);
    return true;
  }
  // An object member's key and its ':', with the blanks around them (the key a view, or decoded
  // into `scratch`).
  std::string_view member_key(std::string& scratch) {
    skip_ws();
    const std::string_view key = string_view_or_decode(scratch);
    skip_ws();
    expect(':');
    skip_ws();
    return key;
  }
  // Steps into a container opened by `open`: false, with the value read whole, when it is anything
  // else (skipped) or an empty container.
  bool enter(char open, char close) {
    if (peek() != open) {
      skip_value();
      return false;
    }
    ++p_;
    skip_ws();
    if (peek() == close) {
      ++p_;
      return false;
    }
    return true;
  }
  void expect(char c) {
    if (peek() != c) bad_json(fmt::format("expected '{}' but found '{}'", c, printable(*p_)));
    ++p_;
  }
  void literal(const char* word) {
    for (const char* w = word; *w; ++w) {
      if (peek() != *w) bad_json("invalid literal");
      ++p_;
    }
  }

  // A string starting at p_ ('"'): a view into the buffer when it has no escapes, else decoded
  // into `scratch`. Checks UTF-8.
  std::string_view string_view_or_decode(std::string& scratch) {
    if (peek() != '"') bad_json(fmt::format("expected a string but found '{}'", printable(*p_)));
    const char* start = ++p_;
    bool ascii = true;
    for (;;) {
      if (p_ == end_) throw NeedMore{};
      const unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') break;
      if (c == '\\') return decode_escaped(start, scratch);
      if (c < 0x20) bad_json("control character in a string");
      if (c >= 0x80) ascii = false;
      ++p_;
    }
    std::string_view s(start, std::size_t(p_ - start));
    ++p_;
    if (!ascii) check_utf8(s);
    return s;
  }

  std::string_view decode_escaped(const char* start, std::string& out) {
    out.assign(start, std::size_t(p_ - start));
    for (;;) {
      if (p_ == end_) throw NeedMore{};
      const char c = *p_++;
      if (c == '"') break;
      if (static_cast<unsigned char>(c) < 0x20) bad_json("control character in a string");
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      const char x = peek();
      ++p_;
      switch (x) {
        case '"':
          out.push_back('"');
          break;
        case '\\':
          out.push_back('\\');
          break;
        case '/':
          out.push_back('/');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'u': {
          std::uint32_t cp = hex4();
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            literal("\\u");
            const std::uint32_t low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) bad_json("invalid surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            bad_json("invalid surrogate pair");
          }
          append_utf8(out, cp);
          break;
        }
        default:
          bad_json("invalid escape in a string");
      }
    }
    check_utf8(out);
    return out;
  }

  std::uint32_t hex4() {
    std::uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = peek();
      ++p_;
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= std::uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= std::uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= std::uint32_t(c - 'A' + 10);
      else
        bad_json("invalid \\u escape");
    }
    return v;
  }

  static void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out.push_back(char(cp));
    } else if (cp < 0x800) {
      out.push_back(char(0xC0 | (cp >> 6)));
      out.push_back(char(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(char(0xE0 | (cp >> 12)));
      out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(char(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(char(0xF0 | (cp >> 18)));
      out.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(char(0x80 | (cp & 0x3F)));
    }
  }

  void check_utf8(std::string_view s) const {
    std::size_t i = 0;
    while (i < s.size()) {
      const unsigned char c = static_cast<unsigned char>(s[i]);
      int extra = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : -1;
      if (extra < 0 || (c >= 0xC0 && c < 0xC2) || c > 0xF4 || i + std::size_t(extra) >= s.size() + (extra == 0))
        fail("not valid JSON: invalid UTF-8 in a string");
      for (int k = 1; k <= extra; ++k)
        if ((static_cast<unsigned char>(s[i + std::size_t(k)]) & 0xC0) != 0x80)
          fail("not valid JSON: invalid UTF-8 in a string");
      // The second byte's range rules out what a well-formed lead byte still allows (RFC 3629):
      // overlong forms (E0 80..9F, F0 80..8F), surrogates (ED A0..BF) and code points above
      // U+10FFFF (F4 90..BF).
      const unsigned char second = extra > 0 ? static_cast<unsigned char>(s[i + 1]) : 0;
      if ((c == 0xE0 && second < 0xA0) || (c == 0xED && second > 0x9F) || (c == 0xF0 && second < 0x90) ||
          (c == 0xF4 && second > 0x8F))
        fail(
            "not valid JSON: invalid UTF-8 in a string (an overlong form, a surrogate or a code point above U+10FFFF)");
      i += std::size_t(extra) + 1;
    }
  }

  // A number's text, grammar checked.
  std::string_view number() {
    const char* start = p_;
    auto digit = [&] { return p_ < end_ && *p_ >= '0' && *p_ <= '9'; };
    auto more = [&] {
      if (p_ == end_ && !last_) throw NeedMore{};
    };
    if (peek() == '-') ++p_;
    more();
    if (!digit()) bad_json("invalid number");
    if (*p_ == '0') {
      ++p_;
    } else {
      while (digit()) ++p_;
    }
    more();
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      more();
      if (!digit()) bad_json("invalid number");
      while (digit()) ++p_;
    }
    more();
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      more();
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      more();
      if (!digit()) bad_json("invalid number");
      while (digit()) ++p_;
    }
    more();
    return std::string_view(start, std::size_t(p_ - start));
  }

  // Skips any value. No recursion: the open containers are a stack of bytes.
  void skip_value() {
    std::vector<char>& open = skip_stack_;
    open.clear();
    auto key = [&] {
      skip_ws();
      string_view_or_decode(scratch_);
      skip_ws();
      expect(':');
    };
    for (;;) {
      skip_ws();
      const char c = peek();
      if (c == '{' || c == '[') {
        ++p_;
        skip_ws();
        if (peek() == (c == '{' ? '}' : ']')) {
          ++p_;
        } else {
          open.push_back(c);
          if (c == '{') key();
          continue;
        }
      } else if (c == '"') {
        string_view_or_decode(scratch_);
      } else if (c == 't') {
        literal("true");
      } else if (c == 'f') {
        literal("false");
      } else if (c == 'n') {
        literal("null");
      } else if (c == '-' || (c >= '0' && c <= '9')) {
        number();
      } else {
        bad_json(fmt::format("unexpected '{}'", printable(c)));
      }
      // After a value: close what ends here, or go on to the next element.
      for (;;) {
        if (open.empty()) return;
        skip_ws();
        const char d = peek();
        if (d == ',') {
          ++p_;
          if (open.back() == '{') key();
          break;
        }
        if (d == (open.back() == '{' ? '}' : ']')) {
          ++p_;
          open.pop_back();
          continue;
        }
        bad_json(fmt::format("unexpected '{}'", printable(d)));
      }
    }
  }

  const char* p_ = nullptr;  ///< the next byte to read
  const char* end_ = nullptr;
  std::string scratch_;  ///< decoded strings with escapes

 private:
  std::string source_;
  const char* begin_ = nullptr;
  const char* mark_ = nullptr;
  bool last_ = false;
  std::size_t consumed_ = 0;  ///< bytes of the whole input read before the current item
  std::vector<char> skip_stack_;
};

}  // namespace workbook::detail
