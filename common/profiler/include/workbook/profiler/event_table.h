#pragma once
/// \file
/// \brief How a Profile keeps its events: a column per field; each distinct name, thread and list
/// of shapes stored once; the numbers most events leave at 0 stored only where they are set.

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "workbook/profiler/event.h"

namespace workbook {

/// Shapes laid out flat, as a reader collects them: every size in one row, and where each input's
/// sizes end in it (input k is sizes[ends[k-1] .. ends[k])).
struct FlatShapes {
  const std::vector<std::int64_t>& sizes;  ///< all inputs' sizes, one after the other
  const std::vector<std::size_t>& ends;    ///< one past each input's last size
};

/// Each distinct string once, in one block of characters, with an id per string (equal ids, equal
/// strings): a trace names a few hundred ops hundreds of thousands of times.
class StringPool {
 public:
  /// The id of `text`, stored on first sight.
  std::uint32_t intern(std::string_view text);
  /// The string with this id; valid until the next intern().
  std::string_view operator[](std::uint32_t id) const {
    return std::string_view(chars_.data() + ends_[id], ends_[id + 1] - ends_[id]);
  }
  /// How many distinct strings.
  std::size_t size() const { return ends_.size() - 1; }
  /// Their characters, all told.
  std::size_t chars() const { return chars_.size(); }
  /// Room for `strings` more strings of `chars` characters in all, so that interning them grows
  /// nothing.
  void reserve(std::size_t strings, std::size_t chars);

 private:
  void rehash(std::size_t slots);
  std::vector<char> chars_;           // a vector, not a string: moving the pool keeps the views valid
  std::vector<std::size_t> ends_{0};  // string k is chars_[ends_[k] .. ends_[k + 1])
  std::vector<std::uint32_t> slots_;  // open addressing: id + 1, 0 for an empty slot
};

/// Events in columns: 26 bytes an event, plus 8 for each of device index, bytes, flops,
/// correlation, External id and shapes that it sets (and for a duration of 2^32 ns or more), where
/// an Event takes 128 and a heap block per name longer than 15 characters and per shape. What a Profile holds, and what the trace reader fills
/// without building an Event per event. `table[i]` reads an event as an EventView.
class EventTable {
 public:
  /// No events.
  EventTable() = default;
  /// Copies of these events, in this order.
  explicit EventTable(const std::vector<Event>& events);

  /// Walks the events as EventViews, in order (each `*it` is a view made on the spot).
  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;  ///< as vector<bool>'s: values, not references
    using value_type = EventView;                               ///< what `*it` gives
    using difference_type = std::ptrdiff_t;                     ///< distance between two
    /// What `it->` gives: the view, held (there is no event object to point at).
    struct Arrow {
      EventView view;  ///< the event
      /// The view's fields.
      const EventView* operator->() const { return &view; }
    };
    using pointer = Arrow;        ///< `it->name` reads the event's name
    using reference = EventView;  ///< `*it` is a value

    /// Nowhere (compare only with another of the same table).
    const_iterator() = default;
    /// The event `index` of `table`.
    const_iterator(const EventTable* table, std::size_t index) : table_(table), index_(index) {}
    /// The event here.
    EventView operator*() const { return (*table_)[index_]; }
    /// The event here, for `it->field`.
    Arrow operator->() const { return Arrow{**this}; }
    /// The event n further.
    EventView operator[](difference_type n) const { return (*table_)[std::size_t(difference_type(index_) + n)]; }
    /// The next event.
    const_iterator& operator++() { return *this += 1; }
    /// The next event, giving this one.
    const_iterator operator++(int) { return step_after(1); }
    /// The previous event.
    const_iterator& operator--() { return *this -= 1; }
    /// The previous event, giving this one.
    const_iterator operator--(int) { return step_after(-1); }
    /// n further.
    const_iterator& operator+=(difference_type n) {
      index_ = std::size_t(difference_type(index_) + n);
      return *this;
    }
    /// n back.
    const_iterator& operator-=(difference_type n) { return *this += -n; }
    /// n further.
    friend const_iterator operator+(const_iterator it, difference_type n) { return it += n; }
    /// n further.
    friend const_iterator operator+(difference_type n, const_iterator it) { return it += n; }
    /// n back.
    friend const_iterator operator-(const_iterator it, difference_type n) { return it -= n; }
    /// How many events from b to a.
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
      return difference_type(a.index_) - difference_type(b.index_);
    }
    /// The same event.
    friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.index_ == b.index_; }
    /// Not the same event.
    friend bool operator!=(const const_iterator& a, const const_iterator& b) { return a.index_ != b.index_; }
    /// a comes before b.
    friend bool operator<(const const_iterator& a, const const_iterator& b) { return a.index_ < b.index_; }
    /// a comes after b.
    friend bool operator>(const const_iterator& a, const const_iterator& b) { return b < a; }
    /// a is not after b.
    friend bool operator<=(const const_iterator& a, const const_iterator& b) { return !(b < a); }
    /// a is not before b.
    friend bool operator>=(const const_iterator& a, const const_iterator& b) { return !(a < b); }

   private:
    const_iterator step_after(difference_type n) {
      const_iterator before = *this;
      *this += n;
      return before;
    }
    const EventTable* table_ = nullptr;
    std::size_t index_ = 0;
  };

  /// Number of events.
  std::size_t size() const { return start_.size(); }
  /// True when there are none.
  bool empty() const { return start_.empty(); }
  /// Event i (i < size()); valid until the table changes.
  EventView operator[](std::size_t i) const;
  /// Event i; throws std::out_of_range past the end.
  EventView at(std::size_t i) const;
  /// The first event (not empty()).
  EventView front() const { return (*this)[0]; }
  /// The last event (not empty()).
  EventView back() const { return (*this)[size() - 1]; }
  /// The first event, for iterating.
  const_iterator begin() const { return const_iterator(this, 0); }
  /// One past the last event.
  const_iterator end() const { return const_iterator(this, size()); }

  /// Room for n events in every column (pages not written to cost no memory).
  void reserve(std::size_t n);
  /// Appends a copy of `event`.
  void push_back(const Event& event);
  /// Appends `event` with these shapes (its own input_shapes are not read): the reader's way, with
  /// no vector per shape.
  void push_back(const Event& event, const FlatShapes& shapes);
  /// Appends every event of `others` (not this table), one table after the other, as if they had
  /// been pushed here one by one; each is emptied column by column as it goes, so that they never
  /// need a whole copy more. Throws std::length_error, with nothing changed, when they hold 2^32 - 1
  /// events or more in all; a failure to allocate leaves this table unusable.
  void extend(std::vector<EventTable>&& others);

  /// Event i's start, read from its column.
  std::int64_t start_ns(std::size_t i) const { return start_[i]; }
  /// Event i's end.
  std::int64_t end_ns(std::size_t i) const {
    return (set_[i] & (1u << kEnd)) != 0 ? number(i, kEnd) : start_[i] + std::int64_t(duration_[i]);
  }
  /// Event i's name, as an id: equal ids, equal names.
  std::uint32_t name_id(std::size_t i) const { return name_[i]; }
  /// Event i's name.
  std::string_view name(std::size_t i) const { return names_[name_[i]]; }
  /// How many distinct names the events have (name ids are below it).
  std::size_t name_count() const { return names_.size(); }
  /// Event i's category.
  Category category(std::size_t i) const { return Category(kind_[i] & 7); }
  /// Event i's device type.
  DeviceType device_type(std::size_t i) const { return DeviceType((kind_[i] >> 3) & 1); }
  /// As EventView::on_host, for event i.
  bool on_host(std::size_t i) const { return device_type(i) == DeviceType::cpu && category(i) != Category::memory; }
  /// As EventView::on_device, for event i.
  bool on_device(std::size_t i) const { return device_type(i) != DeviceType::cpu && category(i) != Category::memory; }
  /// Event i's thread (or stream).
  std::uint64_t thread(std::size_t i) const { return threads_[thread_[i]]; }
  /// Event i's estimated FLOPs.
  std::int64_t flops(std::size_t i) const { return number(i, kFlops); }
  /// Event i's input shapes.
  const Shapes& input_shapes(std::size_t i) const { return shape_lists_[std::size_t(number(i, kShapes))]; }
  /// Event i's bytes (memory events).
  std::int64_t bytes(std::size_t i) const { return number(i, kBytes); }
  /// Event i's correlation id.
  std::int64_t correlation(std::size_t i) const { return number(i, kCorrelation); }
  /// Event i's External id.
  std::int64_t external_id(std::size_t i) const { return number(i, kExternalId); }

  /// Keeps only the events i with keep[i], in order.
  void keep_only(const std::vector<bool>& keep);
  /// Puts the events in this order: the k-th event becomes the one that was at order[k].
  void reorder(const std::vector<std::uint32_t>& order);
  /// Moves every time `origin` ns earlier; false, with nothing changed, when a time would leave
  /// int64's range.
  bool shift_times(std::int64_t origin);

 private:
  // The numbers stored only where set, in the order of the bits of `set_`: most events leave most
  // of them at 0, have no shapes and last less than 4.3 s (kEnd holds the end of one that does not).
  enum Number : unsigned { kDeviceIndex, kBytes, kFlops, kCorrelation, kExternalId, kShapes, kEnd, kNumbers };
  static unsigned bits(unsigned set) { return kBitCount[set & 0x7f]; }
  static const std::uint8_t kBitCount[128];
  std::int64_t number(std::size_t i, Number which) const { return number_at(first_number(i), set_[i], which); }
  std::int64_t number_at(std::size_t first, unsigned set, Number which) const {
    return (set & (1u << which)) == 0 ? 0 : numbers_[first + bits(set & ((1u << which) - 1))];
  }
  std::size_t first_number(std::size_t i) const;
  void append(const Event& event, std::uint32_t shapes);
  // How another table's name, thread and shapes ids are called here (extend).
  struct Renaming {
    std::vector<std::uint32_t> names, threads, shapes;
  };
  Renaming renaming_of(const EventTable& other);
  void append_numbers(EventTable& other, std::size_t first, const std::vector<std::uint32_t>& shapes);
  std::uint32_t intern_shapes(const FlatShapes& shapes);
  std::uint32_t intern_thread(std::uint64_t thread);

  std::vector<std::int64_t> start_;
  std::vector<std::uint32_t> duration_;  // end - start; 0 where kEnd holds the end
  std::vector<std::uint32_t> name_, thread_;
  std::vector<std::uint8_t> kind_;  // category | device type << 3 | work << 4
  std::vector<std::uint8_t> set_;   // bit k: Number k is not 0 and stored
  // Where the stored numbers of events 16k, 16k + 1, ... start in numbers_ (an offset per event took
  // 4 bytes; the events between add up their bits).
  static constexpr unsigned kBlock = 16;
  std::vector<std::uint64_t> block_first_;
  std::vector<std::int64_t> numbers_;
  StringPool names_;
  std::vector<std::uint64_t> threads_;
  std::unordered_map<std::uint64_t, std::uint32_t> thread_index_;
  std::vector<Shapes> shape_lists_{Shapes{}};  // [0]: no shapes
  std::unordered_map<std::string, std::uint32_t> shape_index_;
  std::string shape_key_;  // scratch: a list of shapes as bytes
};

}  // namespace workbook
