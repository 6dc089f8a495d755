#pragma once
// The chrome-trace importer's meaning: which members of "traceEvents" become Events, and what
// Kineto's fields say (json_cursor.h reads the grammar; decimal.h turns µs text into exact ns;
// kineto_meaning.h is the vocabulary). A TraceReader is fed a file in blocks (BlockFeed) and turns
// each event into an Event as soon as it is complete, skipping everything else without building it.
// Used by chrome_trace_import.cpp, one reader for a whole input, and by trace_parts.cpp, one for
// each part of a large file.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "decimal.h"
#include "flat_shapes.h"
#include "json_cursor.h"
#include "kineto_meaning.h"
#include "workbook/profiler/event_table.h"

namespace workbook::detail {

// What a trace's "cat" says about an event; Python's legacy exporter writes none, and its
// operators carry a namespace.
inline void classify(const std::optional<KinetoCategory>& row, bool has_cat, const std::string& name, Event& e) {
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

/// What feeding one block achieved: how much of it was read, and whether an item was cut off.
struct FeedResult {
  std::size_t consumed = 0;  ///< bytes read whole; the rest starts an unfinished item
  bool need_more = false;    ///< the block ended inside an item: refill from `consumed`
};

class TraceReader : JsonCursor {
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
      } catch (const NeedMore&) {
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
    if (!enter('[', ']')) return;
    for (;;) {
      skip_ws();
      if (enter('[', ']')) {  // anything but a list of sizes counts as an input without sizes
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
      shape_ends_.push_back(dims_.size());
      if (more_members(']')) continue;
      break;
    }
  }

  void args(Event& e, std::int64_t& device_arg, bool& has_device_arg, std::int64_t& memory_device_code,
            std::int64_t& device_id) {
    if (!enter('{', '}')) return;
    std::string key_scratch;
    for (;;) {
      const std::string_view key = member_key(key_scratch);
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
    std::optional<KinetoCategory> category;
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
        const std::string_view key = member_key(key_scratch_);
        std::string_view text;
        if (is(key, "ph")) {
          has_ph = string_view_member(text);
          ph = text.size() == 1 ? text[0] : '?';
        } else if (is(key, "name")) {
          has_name = string_member(e.name);
        } else if (is(key, "cat")) {
          has_cat = string_view_member(text);
          category = kineto_category(text);
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
      const auto type = memory_device(memory_device_code);
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
      e.input_shapes = shapes_of(FlatShapes{dims_, shape_ends_});
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

}  // namespace workbook::detail
