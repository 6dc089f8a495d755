// The chrome-trace importer: a purpose-built streaming JSON reader. It reads the file in
// blocks, turns each member of "traceEvents" into an Event as soon as it is complete, skips
// everything else without building it, and keeps numbers as text until they are converted:
// times go from decimal µs text straight to integer ns (a double has 0.25 µs steps at
// µs-since-epoch time stamps, ~1.7e15). No recursion: nesting is skipped with a counter.
#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>

#include "normalize.h"
#include "workbook/profiler/chrome_trace.h"

namespace workbook {
namespace {

struct NeedMore {};  // the buffer ends inside the current item: refill and parse it again

// Decimal text (JSON number grammar, already checked) times 10^shift, rounded half away from
// zero, into an int64. False when it does not fit.
bool decimal_to_int(std::string_view text, int shift, std::int64_t& out) {
  std::size_t i = 0;
  const bool negative = i < text.size() && text[i] == '-';
  if (negative) ++i;
  char digits[40];
  int n = 0, dropped = 0, frac_digits = 0;
  bool in_fraction = false;
  int first_dropped = -1;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.') {
      in_fraction = true;
      continue;
    }
    if (c == 'e' || c == 'E') break;
    if (in_fraction) ++frac_digits;
    if (n == 0 && c == '0') continue;  // leading zeros
    if (n < 38) {
      digits[n++] = c;
    } else {
      if (first_dropped < 0) first_dropped = c - '0';
      ++dropped;
    }
  }
  long exponent = 0;
  if (i < text.size()) {  // exponent
    ++i;
    bool exp_negative = false;
    if (text[i] == '+' || text[i] == '-') exp_negative = text[i++] == '-';
    for (; i < text.size(); ++i) exponent = std::min(exponent * 10 + (text[i] - '0'), 100000L);
    if (exp_negative) exponent = -exponent;
  }
  // value = digits × 10^(e) with e = exponent + shift - frac_digits + dropped
  const long e = exponent + shift - frac_digits + dropped;
  if (n == 0) {
    out = 0;
    return true;
  }
  const long integer_digits = n + e;
  if (integer_digits > 19) return false;
  unsigned __int128 value = 0;
  int round_digit = -1;
  if (e >= 0) {
    for (int k = 0; k < n; ++k) value = value * 10 + unsigned(digits[k] - '0');
    for (long k = 0; k < e; ++k) value *= 10;
  } else {
    const long keep = integer_digits;  // may be <= 0
    for (long k = 0; k < keep; ++k) value = value * 10 + unsigned(digits[k] - '0');
    if (keep >= 0) round_digit = keep < n ? digits[keep] - '0' : first_dropped;
    if (round_digit >= 5) value += 1;
  }
  const unsigned __int128 limit = negative ? (unsigned __int128)std::numeric_limits<std::int64_t>::max() + 1
                                           : (unsigned __int128)std::numeric_limits<std::int64_t>::max();
  if (value > limit) return false;
  out = negative ? std::int64_t(-(__int128)value) : std::int64_t(value);
  return true;
}

bool is_integer_text(std::string_view t) { return t.find_first_of(".eE") == std::string_view::npos; }

// Kineto's categories (and the older spellings Python and Kineto have used): what the event is
// and where it ran. Python's DeviceType comes from the activity type (profiler_kineto.cpp,
// deviceTypeFromActivity): GPU memcpy/memset/kernels/syncs/annotations are CUDA, the rest CPU.
void classify(std::string_view cat, bool has_cat, const std::string& name, Event& e) {
  if (!has_cat) {
    // Python's legacy exporter writes no category: operators carry a namespace.
    e.category = name.find("::") != std::string::npos ? Category::cpu_op : Category::user_annotation;
    return;
  }
  if (cat == "cpu_op" || cat == "operator" || cat == "Operator") {
    e.category = Category::cpu_op;
  } else if (cat == "user_annotation") {
    e.category = Category::user_annotation;
  } else if (cat == "gpu_user_annotation" || cat == "cuda_profiler_range") {
    e.category = cat == "gpu_user_annotation" ? Category::user_annotation : Category::kernel;
    e.device_type = DeviceType::cuda;
    e.work = DeviceWork::annotation;
  } else if (cat == "kernel" || cat == "Kernel" || cat == "gpu_memcpy" || cat == "Memcpy" || cat == "gpu_memset" ||
             cat == "Memset" || cat == "cuda_sync") {
    e.category = Category::kernel;
    e.device_type = DeviceType::cuda;
    e.work = cat == "gpu_memcpy" || cat == "Memcpy"   ? DeviceWork::memcpy
             : cat == "gpu_memset" || cat == "Memset" ? DeviceWork::memset
             : cat == "cuda_sync"                     ? DeviceWork::sync
                                                      : DeviceWork::kernel;
  } else if (cat == "cuda_runtime" || cat == "Runtime" || cat == "cuda_driver" || cat == "runtime") {
    e.category = Category::runtime;
  } else {
    e.category = Category::other;
  }
}

// c10::DeviceType numbers in "[memory]" instants: CPU 0, CUDA 1, MKLDNN 2, IDEEP 5, HIP 6.
// Python counts 0/2/5 as CPU memory and 1/6 as CUDA memory, any other device as neither.
bool memory_device(std::int64_t code, DeviceType& type) {
  if (code == 0 || code == 2 || code == 5) return type = DeviceType::cpu, true;
  if (code == 1 || code == 6) return type = DeviceType::cuda, true;
  return false;
}

class Parser {
 public:
  /// `size_hint`: bytes of JSON to come; events are reserved for it (a Kineto event takes well over
  /// 64 bytes of JSON, and reserved pages that stay unused cost no memory).
  Parser(std::string source, std::size_t size_hint) : source_(std::move(source)) { events_.reserve(size_hint / 64); }

  [[noreturn]] void fail(const std::string& what) const { throw TraceError(fmt::format("{}: {}", source_, what)); }

  // Parses what is in [begin, end); `last` when no more input follows. Returns the offset of
  // the first byte not consumed (the start of an unfinished item, to be given again with more).
  std::size_t feed(const char* begin, const char* end, bool last) {
    begin_ = begin;
    p_ = begin;
    end_ = end;
    last_ = last;
    for (;;) {
      mark_ = p_;
      try {
        if (!step()) return std::size_t(p_ - begin);
      } catch (const NeedMore&) {
        if (last) bad_json("unexpected end of input");
        return std::size_t(mark_ - begin);
      }
      consumed_ += std::size_t(p_ - mark_);
    }
  }

  std::vector<Event> take_events() {
    if (!saw_events_) fail("no \"traceEvents\" array (is this a chrome trace?)");
    return std::move(events_);
  }

 private:
  enum class State { start, members, events, done };

  // One item: the root's opening, one member of the root object, one trace event, or the end.
  bool step() {
    skip_ws();
    switch (state_) {
      case State::start: {
        const char c = peek();
        if (c == '[') {
          ++p_;
          root_is_array_ = saw_events_ = true;
          state_ = State::events;
        } else if (c == '{') {
          ++p_;
          state_ = State::members;
        } else {
          bad_json_or("not a chrome trace: the top level is neither an object nor an array");
        }
        return true;
      }
      case State::members: {
        if (peek() == '}') {
          ++p_;
          state_ = State::done;
          return true;
        }
        if (!first_member_) {
          expect(',');
          skip_ws();
        }
        std::string_view key = string_view_or_decode(scratch_);
        skip_ws();
        expect(':');
        skip_ws();
        if (key == "traceEvents") {
          if (peek() != '[') {
            skip_value();  // the whole value must be valid JSON first
            fail("\"traceEvents\" is not an array");
          }
          ++p_;
          saw_events_ = true;
          first_event_ = true;
          state_ = State::events;
        } else {
          skip_value();  // deviceProperties, metadata: not needed
        }
        first_member_ = false;
        return true;
      }
      case State::events: {
        if (peek() == ']') {
          ++p_;
          state_ = root_is_array_ ? State::done : State::members;
          first_member_ = false;
          return true;
        }
        if (!first_event_) {
          expect(',');
          skip_ws();
        }
        event();
        first_event_ = false;
        return true;
      }
      case State::done:
        if (p_ == end_) return false;
        fail(fmt::format("not valid JSON: unexpected '{}' after the end of the document", printable(*p_)));
    }
    return false;
  }

  // --- JSON primitives --------------------------------------------------------------------
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
    out = std::string(string_view_or_decode(scratch_));
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

  // --- trace events -------------------------------------------------------------------------
  struct Number {
    std::string_view text;
    bool present = false, is_number = false;
  };

  static std::int64_t integer_value(std::string_view text) {
    std::int64_t v = 0;
    if (is_integer_text(text)) return decimal_to_int(text, 0, v) ? v : 0;
    // A float where an integer belongs: truncated like a C++ cast, 0 when out of range.
    const double d = std::strtod(std::string(text).c_str(), nullptr);
    return std::isfinite(d) && std::fabs(d) < 9e18 ? std::int64_t(d) : 0;
  }

  std::uint64_t id_value() {
    const char c = peek();
    if (c == '"') {
      const std::string_view s = string_view_or_decode(scratch_);
      return std::hash<std::string_view>{}(s);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      const std::string_view t = number();
      if (is_integer_text(t) && t[0] != '-') {
        std::int64_t v = 0;
        if (decimal_to_int(t, 0, v)) return std::uint64_t(v);
        // larger than int64: keep the low bits of the unsigned value
        std::uint64_t u = 0;
        for (char d : t) u = u * 10 + std::uint64_t(d - '0');
        return u;
      }
      std::int64_t v = 0;
      return decimal_to_int(t, 0, v) ? std::uint64_t(v) : 0;
    }
    skip_value();
    return 0;
  }

  std::int64_t int_or_zero() {
    const char c = peek();
    if (c == '-' || (c >= '0' && c <= '9')) return integer_value(number());
    skip_value();
    return 0;
  }

  void input_dims(std::vector<std::vector<std::int64_t>>& shapes) {
    if (peek() != '[') return skip_value();
    ++p_;
    skip_ws();
    if (peek() == ']') {
      ++p_;
      return;
    }
    for (;;) {
      skip_ws();
      std::vector<std::int64_t> shape;
      if (peek() == '[') {
        ++p_;
        skip_ws();
        if (peek() == ']') {
          ++p_;
        } else {
          for (;;) {
            skip_ws();
            const char c = peek();
            if (c == '-' || (c >= '0' && c <= '9')) {
              const std::string_view t = number();
              std::int64_t v = 0;
              if (is_integer_text(t) && decimal_to_int(t, 0, v)) shape.push_back(v);
            } else {
              skip_value();
            }
            if (more_members(']')) continue;
            break;
          }
        }
      } else {
        skip_value();
      }
      shapes.push_back(std::move(shape));
      if (more_members(']')) continue;
      return;
    }
  }

  void args(Event& e, std::int64_t& device_arg, bool& has_device_arg, std::int64_t& memory_device_code,
            std::int64_t& device_id) {
    if (peek() != '{') return skip_value();
    ++p_;
    skip_ws();
    if (peek() == '}') {
      ++p_;
      return;
    }
    std::string key_scratch;
    for (;;) {
      skip_ws();
      const std::string_view key = string_view_or_decode(key_scratch);
      skip_ws();
      expect(':');
      skip_ws();
      if (key == "External id")
        e.external_id = int_or_zero();
      else if (key == "correlation")
        e.correlation = int_or_zero();
      else if (key == "flops")
        e.flops = int_or_zero();
      else if (key == "Bytes")
        e.bytes = int_or_zero();
      else if (key == "Device Type")
        memory_device_code = int_or_zero();
      else if (key == "Device Id")
        device_id = int_or_zero();
      else if (key == "device") {
        device_arg = int_or_zero();
        has_device_arg = true;
      } else if (key == "Input Dims" || key == "Input dims")
        input_dims(e.input_shapes);
      else
        skip_value();
      if (more_members('}')) continue;
      return;
    }
  }

  Number number_member() {
    Number n;
    n.present = true;
    const char c = peek();
    if (c == '-' || (c >= '0' && c <= '9')) {
      n.text = number();
      n.is_number = true;
    } else {
      skip_value();
    }
    return n;
  }

  std::int64_t nanoseconds(const Number& n, const char* key, std::size_t index) const {
    if (!n.present || !n.is_number) fail(fmt::format("event {}: '{}' is missing or not a number", index, key));
    std::int64_t v = 0;
    if (!decimal_to_int(n.text, 3, v))
      fail(fmt::format("event {}: '{}' is out of range (its ns do not fit in 64 bits)", index, key));
    return v;
  }

  void event() {
    const std::size_t index = index_;
    if (peek() != '{') {
      skip_value();
      fail(fmt::format("event {} is not an object", index));
    }
    ++p_;
    std::string ph, cat;
    bool has_ph = false, has_name = false, has_cat = false;
    Number ts, dur, pid_number;
    std::uint64_t tid = 0, pid = 0;
    std::int64_t device_arg = 0, memory_device_code = 0, device_id = 0;
    bool has_device_arg = false;
    Event e;
    skip_ws();
    if (peek() == '}') {
      ++p_;
    } else {
      for (;;) {
        skip_ws();
        const std::string_view key = string_view_or_decode(key_scratch_);
        skip_ws();
        expect(':');
        skip_ws();
        if (key == "ph") {
          has_ph = string_member(ph);
        } else if (key == "name") {
          has_name = string_member(e.name);
        } else if (key == "cat") {
          has_cat = string_member(cat);
        } else if (key == "ts") {
          ts = number_member();
        } else if (key == "dur") {
          dur = number_member();
        } else if (key == "tid") {
          tid = id_value();
        } else if (key == "pid") {
          pid = id_value();
        } else if (key == "args") {
          args(e, device_arg, has_device_arg, memory_device_code, device_id);
        } else {
          skip_value();
        }
        if (more_members('}')) continue;
        break;
      }
    }
    ++index_;
    // The whole object was read: from here on, errors are about its meaning.
    if (!has_ph) fail(fmt::format("event {}: 'ph' is missing", index));
    if (ph != "X" && ph != "i" && ph != "I") return;  // metadata, flows, counters
    if (!has_name) fail(fmt::format("event {}: 'name' is missing", index));
    if (has_cat && cat == "Trace") return;  // Kineto's whole-trace span, not an activity
    const bool instant = ph != "X";
    if (instant && e.name != "[memory]") return;  // Python's memory records; other instants are markers
    if (instant) {
      e.category = Category::memory;
      e.name = "[memory]";
      DeviceType type = DeviceType::cpu;
      if (!memory_device(memory_device_code, type)) e.bytes = 0;  // counted by Python as neither
      e.device_type = type;
      e.device_index = int(device_id);
    } else {
      classify(cat, has_cat, e.name, e);
    }
    e.start_ns = nanoseconds(ts, "ts", index);
    const std::int64_t duration = instant ? 0 : nanoseconds(dur, "dur", index);
    if (duration < 0) fail(fmt::format("event {} ({}): negative duration", index, e.name));
    if (__builtin_add_overflow(e.start_ns, duration, &e.end_ns))
      fail(fmt::format("event {}: 'ts' + 'dur' is out of range", index));
    e.thread = tid;
    if (e.on_device()) e.device_index = int(has_device_arg ? device_arg : std::int64_t(pid));
    events_.push_back(std::move(e));
  }

  std::string source_;
  State state_ = State::start;
  bool root_is_array_ = false, saw_events_ = false, first_member_ = true, first_event_ = true, last_ = false;
  const char* begin_ = nullptr;
  const char* p_ = nullptr;
  const char* end_ = nullptr;
  std::size_t consumed_ = 0, index_ = 0;
  std::string scratch_, key_scratch_;
  std::vector<char> skip_stack_;
  const char* mark_ = nullptr;
  std::vector<Event> events_;
};

Profile finish(Parser& parser) {
  std::vector<Event> events = parser.take_events();
  try {
    return detail::normalized_profile(std::move(events));
  } catch (const std::range_error& e) {
    parser.fail(e.what());
  }
}

}  // namespace

Profile parse_chrome_trace(std::string_view text, const std::string& source) {
  Parser parser(source, text.size());
  parser.feed(text.data(), text.data() + text.size(), true);
  return finish(parser);
}

Profile load_chrome_trace(const std::filesystem::path& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) throw TraceError(fmt::format("{}: is a directory", path.string()));
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) throw TraceError(fmt::format("{}: cannot open ({})", path.string(), std::strerror(errno)));
  Parser parser(path.string(), std::size_t(std::filesystem::file_size(path, error)));
  // Blocks of 4 MiB; an item longer than the block (a huge metadata member) grows the buffer.
  std::vector<char> buffer(std::size_t(4) << 20);
  std::size_t filled = 0;
  bool any = false;
  for (;;) {
    const std::size_t got = std::fread(buffer.data() + filled, 1, buffer.size() - filled, file.get());
    if (got == 0 && std::ferror(file.get()))
      throw TraceError(fmt::format("{}: read error ({})", path.string(), std::strerror(errno)));
    filled += got;
    any = any || filled > 0;
    const bool last = got == 0 || std::feof(file.get());
    if (!any && last) throw TraceError(fmt::format("{}: empty file", path.string()));
    const std::size_t used = parser.feed(buffer.data(), buffer.data() + filled, last);
    if (last) break;
    std::memmove(buffer.data(), buffer.data() + used, filled - used);
    filled -= used;
    if (filled == buffer.size()) buffer.resize(buffer.size() * 2);
  }
  return finish(parser);
}

}  // namespace workbook
