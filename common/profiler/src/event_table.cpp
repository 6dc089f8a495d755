#include "workbook/profiler/event_table.h"

#include "flat_shapes.h"
#include "fresh_pages.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace workbook {

const std::uint8_t EventTable::kBitCount[128] = {
#define WORKBOOK_BITS2(n) n, n + 1, n + 1, n + 2
#define WORKBOOK_BITS4(n) WORKBOOK_BITS2(n), WORKBOOK_BITS2(n + 1), WORKBOOK_BITS2(n + 1), WORKBOOK_BITS2(n + 2)
#define WORKBOOK_BITS6(n) WORKBOOK_BITS4(n), WORKBOOK_BITS4(n + 1), WORKBOOK_BITS4(n + 1), WORKBOOK_BITS4(n + 2)
    WORKBOOK_BITS6(0), WORKBOOK_BITS6(1)
#undef WORKBOOK_BITS6
#undef WORKBOOK_BITS4
#undef WORKBOOK_BITS2
};

std::uint32_t StringPool::intern(std::string_view text) {
  if (size() * 2 >= slots_.size()) rehash(slots_.empty() ? 64 : slots_.size() * 2);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t at = std::hash<std::string_view>{}(text)&mask;; at = (at + 1) & mask) {
    const std::uint32_t slot = slots_[at];
    if (slot == 0) {
      if (size() >= std::numeric_limits<std::uint32_t>::max() - 1)
        throw std::length_error("a profile holds fewer than 2^32 - 1 distinct names");
      chars_.insert(chars_.end(), text.begin(), text.end());
      ends_.push_back(chars_.size());
      slots_[at] = std::uint32_t(size());
      return std::uint32_t(size() - 1);
    }
    if ((*this)[slot - 1] == text) return slot - 1;
  }
}

void StringPool::reserve(std::size_t strings, std::size_t chars) {
  chars_.reserve(chars_.size() + chars);
  ends_.reserve(ends_.size() + strings);
  std::size_t slots = std::max<std::size_t>(slots_.size(), 64);
  while ((size() + strings) * 2 >= slots) slots *= 2;
  if (slots != slots_.size()) rehash(slots);
}

void StringPool::rehash(std::size_t count) {
  std::vector<std::uint32_t> slots(count, 0);
  const std::size_t mask = slots.size() - 1;
  for (std::uint32_t id = 0; id < size(); ++id) {
    std::size_t at = std::hash<std::string_view>{}((*this)[id]) & mask;
    while (slots[at] != 0) at = (at + 1) & mask;
    slots[at] = id + 1;
  }
  slots_ = std::move(slots);
}

EventTable::EventTable(const std::vector<Event>& events) {
  reserve(events.size());
  for (const Event& e : events) push_back(e);
}

EventView EventTable::operator[](std::size_t i) const {
  const std::uint8_t kind = kind_[i];
  const std::size_t first = first_number(i);
  const unsigned set = set_[i];
  return EventView{{},
                   names_[name_[i]],
                   Category(kind & 7),
                   DeviceType((kind >> 3) & 1),
                   DeviceWork(kind >> 4),
                   start_[i],
                   (set & (1u << kEnd)) != 0 ? number_at(first, set, kEnd) : start_[i] + std::int64_t(duration_[i]),
                   threads_[thread_[i]],
                   number_at(first, set, kDeviceIndex),
                   shape_lists_[std::size_t(number_at(first, set, kShapes))],
                   number_at(first, set, kBytes),
                   number_at(first, set, kFlops),
                   number_at(first, set, kCorrelation),
                   number_at(first, set, kExternalId)};
}

EventView EventTable::at(std::size_t i) const {
  if (i >= size()) throw std::out_of_range("EventTable::at: no event " + std::to_string(i));
  return (*this)[i];
}

std::size_t EventTable::first_number(std::size_t i) const {
  const std::size_t block = i / kBlock;
  std::size_t first = block_first_[block];
  for (std::size_t j = block * kBlock; j < i; ++j) first += bits(set_[j]);
  return first;
}

void EventTable::reserve(std::size_t n) {
  start_.reserve(n);
  duration_.reserve(n);
  name_.reserve(n);
  thread_.reserve(n);
  kind_.reserve(n);
  set_.reserve(n);
  block_first_.reserve(n / kBlock + 1);
  numbers_.reserve(n);  // about one number an event in a Kineto trace; pages not reached cost nothing
}

void EventTable::push_back(const Event& event) {
  std::vector<std::int64_t> sizes;
  std::vector<std::size_t> ends;
  for (const auto& shape : event.input_shapes) {
    sizes.insert(sizes.end(), shape.begin(), shape.end());
    ends.push_back(sizes.size());
  }
  append(event, intern_shapes(FlatShapes{sizes, ends}));
}

void EventTable::push_back(const Event& event, const FlatShapes& shapes) { append(event, intern_shapes(shapes)); }

void EventTable::append(const Event& event, std::uint32_t shapes) {
  if (size() >= std::numeric_limits<std::uint32_t>::max() - 1)
    throw std::length_error("a profile holds fewer than 2^32 - 1 events");
  std::int64_t duration = 0;
  const bool long_one = __builtin_sub_overflow(event.end_ns, event.start_ns, &duration) || duration < 0 ||
                        duration > std::int64_t(std::numeric_limits<std::uint32_t>::max());
  const std::int64_t numbers[kNumbers] = {event.device_index,         event.bytes,       event.flops,
                                          event.correlation,          event.external_id, shapes,
                                          long_one ? event.end_ns : 0};
  // What may throw comes first: a refused event leaves every column as it was.
  const std::uint32_t name = names_.intern(event.name), thread = intern_thread(event.thread);
  std::uint8_t set = 0;
  if (size() % kBlock == 0) block_first_.push_back(numbers_.size());
  for (unsigned k = 0; k < kNumbers; ++k) {
    if (numbers[k] == 0 && !(k == kEnd && long_one)) continue;
    set = std::uint8_t(set | (1u << k));
    numbers_.push_back(numbers[k]);
  }
  set_.push_back(set);
  start_.push_back(event.start_ns);
  duration_.push_back(long_one ? 0 : std::uint32_t(duration));
  name_.push_back(name);
  thread_.push_back(thread);
  kind_.push_back(
      std::uint8_t(unsigned(event.category) | unsigned(event.device_type) << 3 | unsigned(event.work) << 4));
}

namespace {

// Appends `from` to `to` and frees `from`.
template <typename T>
void move_column(std::vector<T>& to, std::vector<T>& from) {
  to.insert(to.end(), from.begin(), from.end());
  std::vector<T>().swap(from);
}

// Appends `from` to `to` with each id renamed by `id_here`, and frees `from`.
void move_ids(std::vector<std::uint32_t>& to, std::vector<std::uint32_t>& from,
              const std::vector<std::uint32_t>& id_here) {
  const std::size_t base = to.size();
  to.resize(base + from.size());
  for (std::size_t i = 0; i < from.size(); ++i) to[base + i] = id_here[from[i]];
  std::vector<std::uint32_t>().swap(from);
}

}  // namespace

void EventTable::extend(std::vector<EventTable>&& others) {
  std::size_t events = 0, names = 0, chars = 0;
  for (const EventTable& other : others) {
    events += other.size();
    names += other.names_.size();
    chars += other.names_.chars();
  }
  if (events >= std::numeric_limits<std::uint32_t>::max() - 1 - size())
    throw std::length_error("a profile holds fewer than 2^32 - 1 events");
  // What each table's names, threads and lists of shapes are called here, stored in the order
  // pushing the events one by one would store them.
  names_.reserve(names, chars);
  std::vector<Renaming> renamings;
  renamings.reserve(others.size());
  for (const EventTable& other : others) renamings.push_back(renaming_of(other));
  // Then the columns, which fill apart: with many events, half of them on a second thread (copying
  // and mapping fresh pages are most of the time, and the cores can share them).
  const std::size_t base = size();
  const auto numbers_and_times = [&] {
    std::size_t more = 0;
    for (const EventTable& other : others) more += other.numbers_.size();
    detail::reserve_mapped(numbers_, more);
    detail::reserve_mapped(block_first_, events / kBlock + 1);
    detail::reserve_mapped(start_, events);
    detail::reserve_mapped(duration_, events);
    std::size_t first = base;  // the index here of each table's first event
    for (std::size_t k = 0; k < others.size(); ++k) {
      append_numbers(others[k], first, renamings[k].shapes);
      first += others[k].start_.size();
      move_column(start_, others[k].start_);
      move_column(duration_, others[k].duration_);
    }
  };
  const auto names_and_kinds = [&] {
    detail::reserve_mapped(name_, events);
    detail::reserve_mapped(thread_, events);
    detail::reserve_mapped(kind_, events);
    detail::reserve_mapped(set_, events);
    for (std::size_t k = 0; k < others.size(); ++k) {
      move_ids(name_, others[k].name_, renamings[k].names);
      move_ids(thread_, others[k].thread_, renamings[k].threads);
      move_column(kind_, others[k].kind_);
      set_.insert(set_.end(), others[k].set_.begin(), others[k].set_.end());  // the numbers read it still
    }
  };
  std::thread helper;
  std::exception_ptr helper_failed;
  if (events >= (std::size_t(1) << 17)) {
    try {
      helper = std::thread([&] {
        try {
          numbers_and_times();
        } catch (...) {
          helper_failed = std::current_exception();
        }
      });
    } catch (const std::system_error&) {  // no second thread: one after the other
    }
  }
  try {
    names_and_kinds();
  } catch (...) {
    if (helper.joinable()) helper.join();
    throw;
  }
  if (helper.joinable())
    helper.join();
  else
    numbers_and_times();
  if (helper_failed) std::rethrow_exception(helper_failed);
}

EventTable::Renaming EventTable::renaming_of(const EventTable& other) {
  Renaming r;
  r.names.resize(other.names_.size());
  r.threads.resize(other.threads_.size());
  r.shapes.assign(other.shape_lists_.size(), 0);
  for (std::uint32_t id = 0; id < r.names.size(); ++id) r.names[id] = names_.intern(other.names_[id]);
  for (std::uint32_t id = 0; id < r.threads.size(); ++id) {
    const auto [it, added] = thread_index_.try_emplace(other.threads_[id], std::uint32_t(threads_.size()));
    if (added) threads_.push_back(other.threads_[id]);
    r.threads[id] = it->second;
  }
  std::vector<std::int64_t> sizes;
  std::vector<std::size_t> ends;
  for (std::uint32_t id = 1; id < r.shapes.size(); ++id) {
    sizes.clear();
    ends.clear();
    for (const auto& shape : other.shape_lists_[id]) {
      sizes.insert(sizes.end(), shape.begin(), shape.end());
      ends.push_back(sizes.size());
    }
    r.shapes[id] = intern_shapes(FlatShapes{sizes, ends});
  }
  return r;
}

void EventTable::append_numbers(EventTable& other, std::size_t first, const std::vector<std::uint32_t>& shapes) {
  // The stored numbers as they are, then each block's first and each shapes id renamed.
  std::size_t at = numbers_.size();
  move_column(numbers_, other.numbers_);
  for (std::size_t i = 0; i < other.set_.size(); ++i) {
    const unsigned set = other.set_[i];
    if ((first + i) % kBlock == 0) block_first_.push_back(at);
    if ((set & (1u << kShapes)) != 0) {
      std::int64_t& list = numbers_[at + bits(set & ((1u << kShapes) - 1))];
      list = shapes[std::size_t(list)];
    }
    at += bits(set);
  }
  std::vector<std::uint64_t>().swap(other.block_first_);
}

std::uint32_t EventTable::intern_shapes(const FlatShapes& shapes) {
  if (shapes.ends.empty()) return 0;
  // The key: how many shapes, their ends, then the sizes, as bytes (a list of shapes is only ever
  // compared whole).
  const std::size_t count = shapes.ends.size();
  shape_key_.assign(reinterpret_cast<const char*>(&count), sizeof count);
  shape_key_.append(reinterpret_cast<const char*>(shapes.ends.data()), shapes.ends.size() * sizeof(std::size_t));
  shape_key_.append(reinterpret_cast<const char*>(shapes.sizes.data()), shapes.sizes.size() * sizeof(std::int64_t));
  if (const auto known = shape_index_.find(shape_key_); known != shape_index_.end()) return known->second;
  // The list is stored before its key: a key never names a list that failed to be made.
  shape_lists_.push_back(detail::shapes_of(shapes));
  try {
    shape_index_.emplace(shape_key_, std::uint32_t(shape_lists_.size() - 1));
  } catch (...) {
    shape_lists_.pop_back();
    throw;
  }
  return std::uint32_t(shape_lists_.size() - 1);
}

std::uint32_t EventTable::intern_thread(std::uint64_t thread) {
  // Most events run on the thread of the one before.
  if (!thread_.empty() && threads_[thread_.back()] == thread) return thread_.back();
  const auto [it, added] = thread_index_.try_emplace(thread, std::uint32_t(threads_.size()));
  if (added) threads_.push_back(thread);
  return it->second;
}

namespace {

// Column k of the result is column[pick(k)]; `column` is replaced (one column's copy at a time).
template <typename T, typename Pick>
void rebuild(std::vector<T>& column, std::size_t n, Pick pick) {
  std::vector<T> out;
  out.reserve(n);
  for (std::size_t k = 0; k < n; ++k) out.push_back(column[pick(k)]);
  column.swap(out);
}

}  // namespace

// One column at a time, so that reordering a large table needs one column's copy at most: a
// failure to allocate leaves the table unusable (the Profile being built is abandoned with it).
void EventTable::reorder(const std::vector<std::uint32_t>& order) {
  const std::size_t n = order.size();
  const auto pick = [&](std::size_t k) { return order[k]; };
  // The stored numbers follow their events.
  std::vector<std::int64_t> numbers;
  std::vector<std::uint64_t> block_first;
  block_first.reserve(n / kBlock + 1);
  for (std::size_t k = 0; k < n; ++k) {
    if (k % kBlock == 0) block_first.push_back(numbers.size());
    const std::uint32_t from = order[k];
    const auto first = numbers_.begin() + std::ptrdiff_t(first_number(from));
    numbers.insert(numbers.end(), first, first + bits(set_[from]));
  }
  numbers_ = std::move(numbers);
  block_first_ = std::move(block_first);
  rebuild(start_, n, pick);
  rebuild(duration_, n, pick);
  rebuild(name_, n, pick);
  rebuild(thread_, n, pick);
  rebuild(kind_, n, pick);
  rebuild(set_, n, pick);
}

void EventTable::keep_only(const std::vector<bool>& keep) {
  if (std::find(keep.begin(), keep.end(), false) == keep.end()) return;  // the usual case: all kept
  std::vector<std::uint32_t> kept;
  for (std::size_t i = 0; i < size(); ++i)
    if (keep[i]) kept.push_back(std::uint32_t(i));
  reorder(kept);
}

bool EventTable::shift_times(std::int64_t origin) {
  std::int64_t ignored = 0;
  for (std::size_t i = 0; i < size(); ++i)
    if (__builtin_sub_overflow(start_[i], origin, &ignored) || __builtin_sub_overflow(end_ns(i), origin, &ignored))
      return false;
  for (std::size_t i = 0; i < size(); ++i) {
    if ((set_[i] & (1u << kEnd)) != 0) numbers_[first_number(i) + bits(set_[i] & ((1u << kEnd) - 1))] -= origin;
    start_[i] -= origin;
  }
  return true;
}

}  // namespace workbook
