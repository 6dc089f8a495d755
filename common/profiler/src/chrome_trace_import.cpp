// The chrome-trace importer's meaning: which members of "traceEvents" become Events, and what
// Kineto's fields say (json_cursor.h reads the grammar; decimal.h turns µs text into exact ns;
// kineto_meaning.h is the vocabulary). It reads the file in blocks and turns each event into an
// Event as soon as it is complete, skipping everything else without building it.
#include <fmt/format.h>

#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "decimal.h"
#include "flat_shapes.h"
#include "json_cursor.h"
#include "kineto_meaning.h"
#include "normalize.h"
#include "trace_loading.h"
#include "workbook/profiler/chrome_trace.h"
#include "workbook/profiler/format.h"
#include "workbook/profiler/gzip.h"

namespace workbook {
namespace {

using detail::decimal_to_int;
using detail::is_integer_text;

// What a trace's "cat" says about an event; Python's legacy exporter writes none, and its
// operators carry a namespace.
void classify(const std::optional<detail::KinetoCategory>& row, bool has_cat, const std::string& name, Event& e) {
  if (!has_cat) {
    e.category = name.find("::") != std::string::npos ? Category::cpu_op : Category::user_annotation;
    return;
  }
  if (!row) {
    e.category = Category::other;
    return;
  }
  e.category = row->category;
  if (row->on_device) {
    e.device_type = DeviceType::cuda;
    e.work = row->work;
  }
}

// Whether a key is `word`: a length check, then a comparison of known length that the compiler
// writes inline (a string_view's == calls memcmp for every key of the same length).
template <std::size_t N>
bool is(std::string_view key, const char (&word)[N]) {
  return key.size() == N - 1 && std::memcmp(key.data(), word, N - 1) == 0;
}

/// A reader of a later part met a "B" or "E" event, whose pair may lie in an earlier part.
struct PairedSlices {};
/// A part's reading stopped because another part gave no result.
struct Abandoned {};

/// What feeding one block achieved: how much of it was read, and whether an item was cut off.
struct FeedResult {
  std::size_t consumed = 0;  ///< bytes read whole; the rest starts an unfinished item
  bool need_more = false;    ///< the block ended inside an item: refill from `consumed`
};

class TraceReader : detail::JsonCursor {
 public:
  /// `size_hint`: bytes of JSON to come; events are reserved for it (a Kineto event takes well over
  /// 64 bytes of JSON, and reserved pages that stay unused cost no memory), up to 16 M events: past
  /// that the vector grows as events come, so a huge file of padding is not refused up front.
  TraceReader(std::string source, std::size_t size_hint) : JsonCursor(std::move(source)) {
    events_.reserve(std::min<std::size_t>(size_hint / 64, std::size_t(1) << 24));
  }

  using JsonCursor::fail;

  // Parses what is in [begin, end); `last` when no more input follows.
  FeedResult feed(const char* begin, const char* end, bool last) {
    reset(begin, end, last);
    for (;;) {
      skip_ws_between_items();
      mark_item();
      try {
        if (!step()) return {offset(), false};
      } catch (const detail::NeedMore&) {
        if (last) bad_json("unexpected end of input");
        return {mark_offset(), true};
      }
      item_done();
    }
  }

  /// Starts reading in the middle of the "traceEvents" array, right after a ',' between two events,
  /// as the reader of a later part of a file: `root_is_array` says how the document began. Such a
  /// reader stops with PairedSlices at a "B" or "E" event (their pairs may cross parts).
  void resume_after_comma(bool root_is_array) {
    state_ = State::events;
    root_is_array_ = root_is_array;
    saw_events_ = after_comma_ = later_part_ = true;
    first_member_ = first_event_ = false;
  }
  /// True between two events of the "traceEvents" array, right after their ',': where a reader
  /// made by resume_after_comma() begins.
  bool after_comma_between_events() const { return state_ == State::events && after_comma_; }
  bool root_is_array() const { return root_is_array_; }
  /// Appends the events other readers read right after this one's part, in order, emptying them.
  void append_events(const std::vector<std::unique_ptr<TraceReader>>& later) {
    std::vector<EventTable> tables;
    for (const auto& reader : later) tables.push_back(std::move(reader->events_));
    events_.extend(std::move(tables));
  }

  EventTable take_events() {
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
        if (c == '\x1f') fail("gzip-compressed data inside the decompressed data: compressed twice?");
        if (c == '\xef' && !skipped_byte_order_mark_) {  // UTF-8's, which readers may ignore (RFC 8259, 8.1)
          skip_byte_order_mark();
          return true;
        }
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
          // Readers disagree on a repeated key (the first or the last wins): refuse to guess.
          if (saw_events_) fail("two \"traceEvents\" members: which one is the trace?");
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
          if (after_comma_) bad_json("a ',' right before ']'");
          ++p_;
          state_ = root_is_array_ ? State::done : State::members;
          first_member_ = false;
          return true;
        }
        if (!first_event_ && !after_comma_) {
          // The comma is an item of its own, so that blanks after it are read and dropped between
          // items (feed), never kept in the buffer with the event that follows.
          expect(',');
          after_comma_ = true;
          return true;
        }
        event();
        first_event_ = after_comma_ = false;
        return true;
      }
      case State::done:
        if (at_block_end()) return false;
        fail(fmt::format("not valid JSON: unexpected '{}' after the end of the document", printable(*p_)));
    }
    return false;
  }

  // The three bytes EF BB BF, only at the very start of the document.
  void skip_byte_order_mark() {
    for (const char byte : {'\xef', '\xbb', '\xbf'}) {
      if (peek() != byte) bad_json(fmt::format("unexpected '{}'", printable(*p_)));
      ++p_;
    }
    skipped_byte_order_mark_ = true;
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

  // The shapes are collected flat into two scratch buffers, which the table turns into one stored
  // list per distinct value: a vector per shape made four allocations for a [[64, 64], [64, 64]].
  void input_dims() {
    dims_.clear();  // a block that ran out mid-shape parses the whole item again
    shape_ends_.clear();
    if (peek() != '[') return skip_value();
    ++p_;
    skip_ws();
    if (peek() == ']') {
      ++p_;
      return;
    }
    for (;;) {
      skip_ws();
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
              if (is_integer_text(t) && decimal_to_int(t, 0, v)) dims_.push_back(v);
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
      shape_ends_.push_back(dims_.size());
      if (more_members(']')) continue;
      break;
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
      if (is(key, "External id"))
        e.external_id = int_or_zero();
      else if (is(key, "correlation"))
        e.correlation = int_or_zero();
      else if (is(key, "flops"))
        e.flops = int_or_zero();
      else if (is(key, "Bytes"))
        e.bytes = int_or_zero();
      else if (is(key, "Device Type"))
        memory_device_code = int_or_zero();
      else if (is(key, "Device Id"))
        device_id = int_or_zero();
      else if (is(key, "device")) {
        device_arg = int_or_zero();
        has_device_arg = true;
      } else if (is(key, "Input Dims") || is(key, "Input dims"))
        input_dims();
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
    // "ph" when it is one character ('?' for a longer one), and what "cat" says (looked up at once:
    // the view of its text lasts only until the next string).
    char ph = '?';
    std::optional<detail::KinetoCategory> category;
    bool has_ph = false, has_name = false, has_cat = false, whole_trace = false;
    Number ts, dur, pid_number;
    std::uint64_t tid = 0, pid = 0;
    std::int64_t device_arg = 0, memory_device_code = 0, device_id = 0;
    bool has_device_arg = false;
    Event& e = fresh_event();
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
        std::string_view text;
        if (is(key, "ph")) {
          has_ph = string_view_member(text);
          ph = text.size() == 1 ? text[0] : '?';
        } else if (is(key, "name")) {
          has_name = string_member(e.name);
        } else if (is(key, "cat")) {
          has_cat = string_view_member(text);
          category = detail::kineto_category(text);
          whole_trace = text == "Trace";
        } else if (is(key, "ts")) {
          ts = number_member();
        } else if (is(key, "dur")) {
          dur = number_member();
        } else if (is(key, "tid")) {
          tid = id_value();
        } else if (is(key, "pid")) {
          pid = id_value();
        } else if (is(key, "args")) {
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
    const ThreadKey lane{pid, tid};
    if (later_part_ && (ph == 'B' || ph == 'E')) throw PairedSlices{};
    if (ph == 'E') return end_slice(lane, ts, index);
    if (ph != 'X' && ph != 'B' && ph != 'i' && ph != 'I') return;  // metadata, flows, counters
    if (!has_name) fail(fmt::format("event {}: 'name' is missing", index));
    if (has_cat && whole_trace) return;  // Kineto's whole-trace span, not an activity
    const bool begin = ph == 'B';
    const bool instant = ph != 'X' && !begin;
    if (instant && e.name != "[memory]") return;  // Python's memory records; other instants are markers
    if (instant) {
      e.category = Category::memory;
      e.name = "[memory]";
      const auto type = detail::memory_device(memory_device_code);
      if (!type) e.bytes = 0;  // counted by Python as neither
      e.device_type = type.value_or(DeviceType::cpu);
      e.device_index = device_id;
    } else {
      classify(category, has_cat, e.name, e);
    }
    e.start_ns = nanoseconds(ts, "ts", index);
    const std::int64_t duration = instant || begin ? 0 : nanoseconds(dur, "dur", index);
    if (duration < 0) fail(fmt::format("event {} ({}): negative duration", index, e.name));
    if (__builtin_add_overflow(e.start_ns, duration, &e.end_ns))
      fail(fmt::format("event {}: 'ts' + 'dur' is out of range", index));
    e.thread = tid;
    if (e.on_device()) e.device_index = has_device_arg ? device_arg : std::int64_t(pid);
    if (begin) {
      e.input_shapes = detail::shapes_of(FlatShapes{dims_, shape_ends_});
      open_slices_[lane].push_back(e);
      return;
    }
    events_.push_back(e, FlatShapes{dims_, shape_ends_});
  }

  // The scratch event, cleared: its strings keep their capacity from one event to the next, and
  // no shapes were read yet.
  Event& fresh_event() {
    std::string name = std::move(event_.name);
    name.clear();
    event_ = Event();
    event_.name = std::move(name);
    dims_.clear();
    shape_ends_.clear();
    return event_;
  }

  // Duration events as Perfetto's JSON importer pairs them: an "E" ends the innermost "B" still
  // open on its (pid, tid); an "E" with nothing open is ignored, and so is a "B" never ended.
  using ThreadKey = std::pair<std::uint64_t, std::uint64_t>;
  void end_slice(const ThreadKey& lane, const Number& ts, std::size_t index) {
    auto open = open_slices_.find(lane);
    if (open == open_slices_.end() || open->second.empty()) return;
    Event e = std::move(open->second.back());
    open->second.pop_back();
    e.end_ns = nanoseconds(ts, "ts", index);
    if (e.end_ns < e.start_ns) fail(fmt::format("event {} ({}): ends before it begins", index, e.name));
    events_.push_back(std::move(e));
  }

  State state_ = State::start;
  bool root_is_array_ = false, saw_events_ = false, first_member_ = true, first_event_ = true,
       skipped_byte_order_mark_ = false;
  bool after_comma_ = false;  // the events' "," was read, the next event not yet
  bool later_part_ = false;   // began mid-array (resume_after_comma)
  std::size_t index_ = 0;
  std::string key_scratch_;
  Event event_;                          // the event being read (its shapes are in dims_)
  std::vector<std::int64_t> dims_;       // input_dims' numbers, all shapes in a row
  std::vector<std::size_t> shape_ends_;  // where each shape ends in dims_
  EventTable events_;
  std::map<ThreadKey, std::vector<Event>> open_slices_;  // "B" events waiting for their "E"
};

Profile finish(TraceReader& reader) {
  EventTable events = reader.take_events();
  try {
    Profile profile = detail::normalized_profile(std::move(events));
#ifdef __GLIBC__
    // The reader's blocks and the tree's scratch arrays were freed into the heap, where glibc keeps
    // up to twice the largest block freed (megabytes here) as resident memory: handed back, what the
    // caller does next (key_averages) starts from the profile's own size.
    malloc_trim(0);
#endif
    return profile;
  } catch (const std::range_error& e) {
    reader.fail(e.what());
  }
}

}  // namespace

Profile parse_chrome_trace(std::string_view text, const std::string& source) {
  if (starts_gzip(text)) {
    std::string json;
    try {
      json = gzip_decompress(text, kMaxStreamBytes);
    } catch (const GzipError& e) {
      throw TraceError(fmt::format("{}: {}", source, e.what()));
    }
    TraceReader reader(source, json.size());
    reader.feed(json.data(), json.data() + json.size(), true);
    return finish(reader);
  }
  TraceReader reader(source, text.size());
  reader.feed(text.data(), text.data() + text.size(), true);
  return finish(reader);
}

namespace {

// Where a trace file's bytes come from: the file itself, or, for gzip data (known by its first
// bytes, whatever the file's name), what it decompresses to. `first` is what was read to tell.
class TraceBytes {
 public:
  TraceBytes(std::FILE* file, const std::string& path) : file_(file), path_(path) {
    filled_ = std::fread(first_.data(), 1, first_.size(), file_);
    check_error();
    if (starts_gzip(std::string_view(first_.data(), filled_)))
      gzip_ = std::make_unique<GzipReader>([this](char* into, std::size_t capacity) { return raw(into, capacity); });
  }
  bool compressed() const { return gzip_ != nullptr; }
  /// Up to `capacity` bytes of JSON; 0 at the end.
  std::size_t read(char* into, std::size_t capacity) {
    if (!gzip_) return raw(into, capacity);
    try {
      return gzip_->read(into, capacity);
    } catch (const GzipError& e) {
      throw TraceError(fmt::format("{}: {}", path_, e.what()));
    }
  }

 private:
  // The file's own bytes: first those read to tell gzip from JSON, then the rest.
  std::size_t raw(char* into, std::size_t capacity) {
    if (offset_ < filled_) {
      const std::size_t n = std::min(capacity, filled_ - offset_);
      std::memcpy(into, first_.data() + offset_, n);
      offset_ += n;
      return n;
    }
    const std::size_t got = std::fread(into, 1, capacity, file_);
    check_error();
    return got;
  }
  void check_error() const {
    if (std::ferror(file_)) throw TraceError(fmt::format("{}: read error ({})", path_, std::strerror(errno)));
  }

  std::FILE* file_;
  std::string path_;
  std::array<char, 2> first_{};
  std::size_t filled_ = 0, offset_ = 0;
  std::unique_ptr<GzipReader> gzip_;
};

}  // namespace

namespace {

// Feeds a reader the blocks of an input, in a buffer of its own (256 KiB: a larger one costs its
// page faults on every load); an item longer than the buffer (a huge metadata member) grows it.
class BlockFeed {
 public:
  BlockFeed(TraceReader& reader, std::vector<char>& buffer) : reader_(reader), buffer_(buffer) {
    if (buffer_.empty()) buffer_.resize(std::size_t(256) << 10);
  }

  /// Feeds what `read(into, capacity)` gives (0 when it has no more) until it gives nothing. When
  /// `end_of_input()` is then true the input ends there; else it was cut at a part's end, and an
  /// item it cut off stays in the buffer. The buffer never grows past `max_buffer`.
  template <typename Read, typename AtEnd>
  void until_empty(Read read, AtEnd end_of_input, std::size_t max_buffer) {
    for (;;) {
      const std::size_t got = read(buffer_.data() + filled_, buffer_.size() - filled_);
      filled_ += got;
      const bool end = got == 0;
      if (end && !end_of_input()) return;  // every byte given was fed already
      const std::size_t used = reader_.feed(buffer_.data(), buffer_.data() + filled_, end).consumed;
      if (end) return;
      std::memmove(buffer_.data(), buffer_.data() + used, filled_ - used);
      filled_ -= used;
      if (filled_ == buffer_.size()) buffer_.resize(std::min(buffer_.size() * 2, max_buffer));
    }
  }
  /// Bytes given but not yet read whole: 0 when the input so far ends between two items.
  std::size_t pending() const { return filled_; }

 private:
  TraceReader& reader_;
  std::vector<char>& buffer_;
  std::size_t filled_ = 0;
};

// pread, again after a signal; 0 at the end or on an error (the part is then not read whole).
std::size_t read_at(int fd, char* into, std::size_t capacity, std::uint64_t offset) {
  for (;;) {
    const ssize_t got = ::pread(fd, into, capacity, off_t(offset));
    if (got >= 0) return std::size_t(got);
    if (errno != EINTR) return 0;
  }
}

// Whether the document is an array, from its first byte after a byte order mark and blanks; none
// when it starts with anything else (one reader then says what is wrong).
std::optional<bool> root_is_array(int fd) {
  std::array<char, 64> head{};
  const std::size_t size = read_at(fd, head.data(), head.size(), 0);
  std::size_t k = size >= 3 && std::memcmp(head.data(), "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
  while (k < size && (head[k] == ' ' || head[k] == '\n' || head[k] == '\r' || head[k] == '\t')) ++k;
  if (k == size || (head[k] != '[' && head[k] != '{')) return std::nullopt;
  return head[k] == '[';
}

// Where a part may begin: the first '{' after a ',' (blanks between) at or after `from`, within
// 64 KiB. Only a guess (it may lie inside a string, or between two elements of an argument's
// list): the part before it must arrive there between two events for it to count.
std::optional<std::uint64_t> split_point(int fd, std::uint64_t from, std::vector<char>& window) {
  window.resize(std::size_t(64) << 10);
  const std::size_t got = read_at(fd, window.data(), window.size(), from);
  bool comma = false;
  for (std::size_t i = 0; i < got; ++i) {
    const char c = window[i];
    if (comma && c == '{') return from + i;
    if (c == ',')
      comma = true;
    else if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
      comma = false;
  }
  return std::nullopt;
}

// A large file read by two threads, in parts that run from a ',' between two events of
// "traceEvents" to the next part's start. Each thread reads a run of parts with one reader, taking
// them in order: this thread from the start of the file, the helper from the middle part (its reader
// begins with resume_after_comma). A thread whose run can go no further takes the last part not yet
// taken from the other's run and reads it with a reader of its own, so that a slower core (the two
// of a VM need not be equally fast) reads less. Then the events of the helper's run and of the parts
// read alone are appended to this thread's reader, in file order. The result counts only when every
// piece checks: each ended exactly where the next begins, between two events (this thread's run
// also knowing, by then, whether the document is an array), the piece at the file's end read to
// the end of the document, and none but this thread's run met an error or a "B"/"E" event. Anything
// else gives no result, and the caller reads the file again with one reader, which reports whatever
// is wrong as it always does. (This thread's own errors are thrown as they are: its run is the
// file's beginning, read as one reader reads it.)
class PartsReader {
 public:
  PartsReader(const std::string& source, int fd, std::vector<std::uint64_t> starts, bool array_root, std::uint64_t size)
      : source_(source),
        fd_(fd),
        starts_(std::move(starts)),
        root_is_array_(array_root),
        size_(size),
        alone_(starts_.size()) {
    const std::size_t middle = starts_.size() / 2;
    runs_[0] = {nullptr, 1, middle};                   // part 0 is taken from the start
    runs_[1] = {nullptr, middle + 1, starts_.size()};  // and the middle part
  }

  /// The reader holding every event, or none (see the class).
  std::unique_ptr<TraceReader> read() {
    std::thread helper;
    try {
      helper = std::thread([this] { work(1); });
    } catch (const std::system_error&) {  // no second thread to be had: one reader, as before
      return nullptr;
    }
    // However this thread leaves (a TraceError of its reader, an allocation failing), the helper
    // is told to stop and waited for.
    struct Joined {
      PartsReader& parts;
      std::thread& helper;
      ~Joined() {
        parts.give_up_ = true;
        if (helper.joinable()) helper.join();
      }
    } joined{*this, helper};
    work(0);
    helper.join();
    if (give_up_) return nullptr;
    // File order: this run, the parts the helper took from its end, the helper's run, the parts
    // this thread took from that run's end.
    std::vector<std::unique_ptr<TraceReader>> later;
    for (std::size_t k = runs_[0].next; k < starts_.size() / 2; ++k) later.push_back(std::move(alone_[k]));
    later.push_back(std::move(runs_[1].reader));
    for (std::size_t k = runs_[1].next; k < starts_.size(); ++k) later.push_back(std::move(alone_[k]));
    runs_[0].reader->append_events(later);
    return std::move(runs_[0].reader);
  }

 private:
  struct Run {
    std::unique_ptr<TraceReader> reader;
    std::size_t next = 0;   // under mutex_: the part after the ones taken
    std::size_t limit = 0;  // under mutex_: where it must stop (the other thread took the rest)
  };

  // One thread's work: its run, then parts from the other run's end; any failure but this thread's
  // own errors (rethrown) makes both give up.
  void work(int me) {
    try {
      if (!read_run(me)) give_up_ = true;
    } catch (const Abandoned&) {
      give_up_ = true;
    } catch (...) {
      give_up_ = true;
      if (me == 0) throw;  // this thread's run is the file's beginning: its errors are one reader's
    }
    for (;;) {
      std::size_t k = 0;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        Run& other = runs_[1 - me];
        if (give_up_ || other.limit <= other.next) return;
        k = --other.limit;
      }
      try {
        if (!read_alone(k)) give_up_ = true;
      } catch (...) {  // an error, a "B"/"E" event, or told to give up: read again by one reader
        give_up_ = true;
      }
    }
  }

  // Reads a run of parts with one reader until the other thread has the next part (or the file
  // ends): true when it stopped exactly at a part's start between two events, or read the end of
  // the document. The helper's run stops with PairedSlices at a "B" or "E" event.
  bool read_run(int me) {
    Run& run = runs_[me];
    const std::size_t first = me == 0 ? 0 : starts_.size() / 2;
    run.reader = std::make_unique<TraceReader>(source_, std::size_t(me == 0 ? size_ : size_ - starts_[first]));
    TraceReader& reader = *run.reader;
    if (me == 1) reader.resume_after_comma(root_is_array_);
    std::vector<char> buffer;
    BlockFeed feed(reader, buffer);
    std::uint64_t at = starts_[first];
    bool at_file_end = false;
    std::uint64_t end = 0;
    const auto take_next = [&] {  // at `end`: the next part, unless it is the other's
      std::lock_guard<std::mutex> lock(mutex_);
      if (run.next >= run.limit) return false;
      ++run.next;
      return true;
    };
    const auto end_of_run = [&] {
      std::lock_guard<std::mutex> lock(mutex_);
      at_file_end = run.next == starts_.size();
      end = at_file_end ? std::numeric_limits<std::uint64_t>::max() : starts_[run.next];
    };
    end_of_run();
    feed.until_empty(
        [&](char* into, std::size_t capacity) -> std::size_t {
          if (give_up_) throw Abandoned{};
          if (at == end && !at_file_end) {
            if (!take_next()) return 0;
            end_of_run();
          }
          const std::size_t got = read_at(fd_, into, std::size_t(std::min<std::uint64_t>(capacity, end - at)), at);
          at += got;
          return got;
        },
        [&] { return at_file_end; }, std::numeric_limits<std::size_t>::max());
    if (at_file_end) return true;  // the end of the document was read (an unfinished one throws)
    return at == end && feed.pending() == 0 && reader.after_comma_between_events() &&
           reader.root_is_array() == root_is_array_;
  }

  // Reads part k alone, with a reader of its own: true when it ended exactly where part k + 1
  // begins, between two events, or read the end of the document.
  bool read_alone(std::size_t k) {
    const bool last = k + 1 == starts_.size();
    const std::uint64_t end = last ? std::numeric_limits<std::uint64_t>::max() : starts_[k + 1];
    alone_[k] = std::make_unique<TraceReader>(source_, std::size_t((last ? size_ : end) - starts_[k]));
    TraceReader& reader = *alone_[k];
    reader.resume_after_comma(root_is_array_);
    std::vector<char> buffer;
    BlockFeed feed(reader, buffer);
    std::uint64_t at = starts_[k];
    feed.until_empty(
        [&](char* into, std::size_t capacity) {
          if (give_up_) throw Abandoned{};
          const std::size_t got = read_at(fd_, into, std::size_t(std::min<std::uint64_t>(capacity, end - at)), at);
          at += got;
          return got;
        },
        [&] { return last; }, std::numeric_limits<std::size_t>::max());
    if (last) return true;
    return at == end && feed.pending() == 0 && reader.after_comma_between_events();
  }

  std::string source_;
  int fd_;
  std::vector<std::uint64_t> starts_;
  bool root_is_array_;
  std::uint64_t size_;
  std::mutex mutex_;
  Run runs_[2];  // 0: this thread's, from part 0; 1: the helper's, from the middle part
  std::vector<std::unique_ptr<TraceReader>> alone_;  // parts read alone, by index
  std::atomic<bool> give_up_{false};
};

// The parts of a file of `size` bytes: about `part_bytes` each, at most 16, starting where
// split_point finds a place; none when the file is too small for two or no place is found.
std::vector<std::uint64_t> part_starts(int fd, std::uint64_t size, std::uint64_t part_bytes) {
  const std::uint64_t count = std::min<std::uint64_t>(16, size / std::max<std::uint64_t>(part_bytes, 1));
  std::vector<std::uint64_t> starts{0};
  std::vector<char> window;
  for (std::uint64_t k = 1; k < count; ++k) {
    const auto at = split_point(fd, size / count * k, window);
    if (at && *at > starts.back()) starts.push_back(*at);
  }
  if (starts.size() < 2) starts.clear();
  return starts;
}

}  // namespace

namespace detail {

Profile load_chrome_trace(const std::filesystem::path& path, std::uint64_t max_stream_bytes, std::uint64_t split_from,
                          bool* read_in_parts) {
  if (read_in_parts) *read_in_parts = false;
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) throw TraceError(fmt::format("{}: is a directory", path.string()));
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) throw TraceError(fmt::format("{}: cannot open ({})", path.string(), std::strerror(errno)));
  TraceBytes bytes(file.get(), path.string());
  // A pipe or a device has no size, and gzip data none until it is read: each is read as a
  // stream, up to a limit (a small .gz file can expand a thousandfold).
  const bool regular = std::filesystem::is_regular_file(path, error);
  const std::uintmax_t size = regular ? std::filesystem::file_size(path, error) : 0;
  const bool limited = !regular || bytes.compressed();
  // A large file is read in parts by two threads (PartsReader); where that gives no result, one
  // reader reads it all, from the start.
  if (!limited && !error && size >= split_from && size > 0 && std::thread::hardware_concurrency() >= 2) {
    const int fd = fileno(file.get());
    const std::optional<bool> array = root_is_array(fd);
    std::vector<std::uint64_t> starts =
        array ? part_starts(fd, size, std::max<std::uint64_t>(split_from, 1) / 2) : std::vector<std::uint64_t>();
    if (!starts.empty()) {
      if (auto reader = PartsReader(path.string(), fd, std::move(starts), *array, size).read()) {
        if (read_in_parts) *read_in_parts = true;
        return finish(*reader);
      }
    }
  }
  // A Kineto trace compresses about tenfold: the hint reserves for that much JSON.
  TraceReader reader(path.string(), error ? 0 : std::size_t(size) * (bytes.compressed() ? 10 : 1));
  std::vector<char> buffer;
  BlockFeed feed(reader, buffer);
  std::uint64_t total = 0;
  feed.until_empty(
      [&](char* into, std::size_t capacity) {
        const std::size_t got = bytes.read(into, capacity);
        total += got;
        if (limited && total > max_stream_bytes)
          throw TraceError(
              fmt::format("{}: {} longer than {}: stopped reading ({})", path.string(),
                          bytes.compressed() ? "gzip data that decompresses to" : "a stream",
                          format_memory(std::int64_t(max_stream_bytes)),
                          bytes.compressed() ? "a trace that large is read uncompressed" : "is it endless?"));
        if (got == 0 && total == 0) throw TraceError(fmt::format("{}: empty file", path.string()));
        return got;
      },
      [] { return true; },
      // One item longer than the buffer grows it, for a stream never past its limit (plus a block to
      // notice the excess), so that an endless item fails at the limit, not at twice it.
      !limited ? std::numeric_limits<std::size_t>::max() : std::size_t(max_stream_bytes + (4 << 20)));
  std::vector<char>().swap(buffer);
  return finish(reader);
}

}  // namespace detail

Profile load_chrome_trace(const std::filesystem::path& path, std::uint64_t max_stream_bytes) {
  return detail::load_chrome_trace(path, max_stream_bytes, detail::kSplitFromBytes);
}

}  // namespace workbook
