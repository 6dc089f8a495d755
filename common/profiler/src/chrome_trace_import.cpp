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
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
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

/// A second reader met a "B" or "E" event, whose pair may lie in the first reader's part.
struct PairedSlices {};

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
  /// as the second of two readers splitting a file: `root_is_array` says how the document began.
  /// Such a reader stops with PairedSlices at a "B" or "E" event (their pairs may cross the split).
  void resume_after_comma(bool root_is_array) {
    state_ = State::events;
    root_is_array_ = root_is_array;
    saw_events_ = after_comma_ = second_half_ = true;
    first_member_ = first_event_ = false;
  }
  /// True between two events of the "traceEvents" array, right after their ',': where a reader
  /// made by resume_after_comma() begins.
  bool after_comma_between_events() const { return state_ == State::events && after_comma_; }
  bool root_is_array() const { return root_is_array_; }
  /// Appends the events another reader read after this one's (see resume_after_comma), emptying it.
  void append_events(TraceReader& later) { events_.extend(std::move(later.events_)); }

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
    if (second_half_ && (ph == 'B' || ph == 'E')) throw PairedSlices{};
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
  bool second_half_ = false;  // began mid-array (resume_after_comma)
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

// Feeds a reader blocks of 4 MiB; an item longer than the block (a huge metadata member) grows the
// buffer. (Freed before the tree is built, where memory peaks.)
class BlockFeed {
 public:
  explicit BlockFeed(TraceReader& reader) : reader_(reader), buffer_(std::size_t(256) << 10) {}

  /// Feeds what `read(into, capacity)` gives (0 when it has no more) until it gives nothing. With
  /// `end_of_input` the input ends there; without, it was cut at a split point and an item it
  /// cut off stays in the buffer for the next call. The buffer never grows past `max_buffer`.
  template <typename Read>
  void until_empty(Read read, bool end_of_input, std::size_t max_buffer) {
    for (;;) {
      const std::size_t got = read(buffer_.data() + filled_, buffer_.size() - filled_);
      filled_ += got;
      const bool end = got == 0;
      if (end && !end_of_input) return;  // every byte given was fed already
      const std::size_t used = reader_.feed(buffer_.data(), buffer_.data() + filled_, end).consumed;
      if (end) return;
      std::memmove(buffer_.data(), buffer_.data() + used, filled_ - used);
      filled_ -= used;
      if (filled_ == buffer_.size()) buffer_.resize(std::min(buffer_.size() * 2, max_buffer));
    }
  }
  /// Bytes given but not yet read whole: 0 when the input so far ends between two items.
  std::size_t pending() const { return filled_; }
  void release() { std::vector<char>().swap(buffer_); }

 private:
  TraceReader& reader_;
  std::vector<char> buffer_;
  std::size_t filled_ = 0;
};

// pread, again after a signal; 0 at the end or on an error (the caller then reads sequentially).
std::size_t read_at(int fd, char* into, std::size_t capacity, std::uint64_t offset) {
  for (;;) {
    const ssize_t got = ::pread(fd, into, capacity, off_t(offset));
    if (got >= 0) return std::size_t(got);
    if (errno != EINTR) return 0;
  }
}

// Where a second reader may begin: the first '{' after a ',' (blanks between) from the middle of the
// file on, if one comes within 1 MiB; and whether the document is an array, from its first byte.
// Only a guess: the first reader confirms it on reaching that byte.
struct SplitPoint {
  std::uint64_t offset = 0;
  bool root_is_array = false;
};
std::optional<SplitPoint> split_point(int fd, std::uint64_t size) {
  std::array<char, 64> head{};
  const std::size_t head_size = read_at(fd, head.data(), head.size(), 0);
  std::size_t k = head_size >= 3 && std::memcmp(head.data(), "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
  while (k < head_size && std::strchr(" \n\r\t", head[k]) != nullptr && head[k] != '\0') ++k;
  if (k == head_size || (head[k] != '[' && head[k] != '{')) return std::nullopt;
  SplitPoint point;
  point.root_is_array = head[k] == '[';
  std::vector<char> window(std::size_t(1) << 20);
  const std::uint64_t from = size / 2;
  const std::size_t got = read_at(fd, window.data(), window.size(), from);
  bool comma = false;
  for (std::size_t i = 0; i < got; ++i) {
    const char c = window[i];
    if (comma && c == '{') {
      point.offset = from + i;
      return point;
    }
    if (c == ',')
      comma = true;
    else if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
      comma = false;
  }
  return std::nullopt;
}

// The reader that begins at a split point and reads to the end of the file on its own thread.
// Whatever stops it (an error, a "B"/"E" event, a failed read, being told to stop) leaves it
// unfinished, and the first reader goes on past the split point alone.
class SecondHalf {
 public:
  SecondHalf(const std::string& source, int fd, std::uint64_t file_size, const SplitPoint& point)
      : reader_(source, std::size_t(file_size - point.offset)) {
    reader_.resume_after_comma(point.root_is_array);
    thread_ = std::thread([this, fd, at = point.offset]() mutable {
      try {
        BlockFeed feed(reader_);
        feed.until_empty(
            [&](char* into, std::size_t capacity) {
              if (stop_.load(std::memory_order_relaxed)) throw PairedSlices{};
              const std::size_t got = read_at(fd, into, capacity, at);
              at += got;
              return got;
            },
            true, std::numeric_limits<std::size_t>::max());
        finished_ = true;
      } catch (...) {  // any failure: the first reader reads this part again and reports it
      }
    });
  }
  ~SecondHalf() { wait(true); }
  SecondHalf(const SecondHalf&) = delete;
  SecondHalf& operator=(const SecondHalf&) = delete;

  /// Waits for the reader (told to stop first when `stop`): true when it read to the end.
  bool wait(bool stop) {
    if (stop) stop_ = true;
    if (thread_.joinable()) thread_.join();
    return finished_;
  }
  TraceReader& reader() { return reader_; }

 private:
  TraceReader reader_;
  std::atomic<bool> stop_{false};
  bool finished_ = false;
  std::thread thread_;
};

}  // namespace

namespace detail {

Profile load_chrome_trace(const std::filesystem::path& path, std::uint64_t max_stream_bytes, std::uint64_t split_from,
                          bool* read_by_two) {
  if (read_by_two) *read_by_two = false;
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
  // A Kineto trace compresses about tenfold: the hint reserves for that much JSON.
  TraceReader reader(path.string(), error ? 0 : std::size_t(size) * (bytes.compressed() ? 10 : 1));
  BlockFeed feed(reader);
  std::uint64_t total = 0;
  // A large file is read by two threads: this one up to a split point in the middle of
  // "traceEvents", the second from there (SecondHalf). Valid only when this reader arrives at the
  // split point between two events, with its part read whole; otherwise this reader goes on alone.
  std::optional<SplitPoint> point;
  if (!limited && !error && size >= split_from && std::thread::hardware_concurrency() >= 2)
    point = split_point(fileno(file.get()), size);
  std::unique_ptr<SecondHalf> second;
  if (point) {
    try {
      second = std::make_unique<SecondHalf>(path.string(), fileno(file.get()), size, *point);
    } catch (const std::system_error&) {  // no thread to be had: one reader
    }
  }
  if (second) {
    feed.until_empty(
        [&](char* into, std::size_t capacity) {
          const std::size_t got =
              bytes.read(into, std::size_t(std::min<std::uint64_t>(capacity, point->offset - total)));
          total += got;
          return got;
        },
        false, std::numeric_limits<std::size_t>::max());
    const bool met = total == point->offset && feed.pending() == 0 && reader.after_comma_between_events() &&
                     reader.root_is_array() == point->root_is_array;
    if (second->wait(!met) && met) {
      feed.release();
      reader.append_events(second->reader());
      if (read_by_two) *read_by_two = true;
      second.reset();
      return finish(reader);
    }
    second.reset();
  }
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
      true,
      // One item longer than the buffer grows it, for a stream never past its limit (plus a block to
      // notice the excess), so that an endless item fails at the limit, not at twice it.
      !limited ? std::numeric_limits<std::size_t>::max() : std::size_t(max_stream_bytes + (4 << 20)));
  feed.release();
  return finish(reader);
}

}  // namespace detail

Profile load_chrome_trace(const std::filesystem::path& path, std::uint64_t max_stream_bytes) {
  return detail::load_chrome_trace(path, max_stream_bytes, detail::kSplitFromBytes);
}

}  // namespace workbook
