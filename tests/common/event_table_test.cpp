// EventTable keeps events in columns: every field must come back exactly as it went in, whichever
// numbers an event sets, however long it lasts, and wherever reordering or dropping moves it.
#include <doctest/doctest.h>

#include "workbook/profiler/event_table.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

using workbook::Category;
using workbook::DeviceType;
using workbook::DeviceWork;
using workbook::Event;
using workbook::EventTable;
using workbook::EventView;
using workbook::StringPool;

namespace {

// Every field of one event, as text: two events are the same when their texts are.
std::string fields(const Event& e) {
  std::string shapes;
  for (const auto& shape : e.input_shapes) {
    shapes += "[";
    for (const auto size : shape) shapes += std::to_string(size) + ",";
    shapes += "]";
  }
  return e.name + "|" + std::to_string(int(e.category)) + "|" + std::to_string(int(e.device_type)) + "|" +
         std::to_string(int(e.work)) + "|" + std::to_string(e.start_ns) + "|" + std::to_string(e.end_ns) + "|" +
         std::to_string(e.thread) + "|" + std::to_string(e.device_index) + "|" + shapes + "|" +
         std::to_string(e.bytes) + "|" + std::to_string(e.flops) + "|" + std::to_string(e.correlation) + "|" +
         std::to_string(e.external_id);
}

// Events that set every combination of the numbers stored apart, with short, long (2^32 ns and
// more), zero and negative durations, on several threads.
std::vector<Event> assorted() {
  std::vector<Event> events;
  constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max();
  const std::int64_t durations[] = {0, 7, 4294967295, 4294967296, -5, big / 2};
  for (int k = 0; k < 128; ++k) {
    Event e;
    e.name = k % 3 == 0 ? "aten::mm" : "a name longer than fifteen characters #" + std::to_string(k % 5);
    e.category = Category(k % 6);
    e.device_type = k % 4 == 0 ? DeviceType::cuda : DeviceType::cpu;
    e.work = DeviceWork(k % 5);
    e.start_ns = (k % 7 == 0 ? -1 : 1) * std::int64_t(k) * 1000;
    e.end_ns = e.start_ns + durations[k % 6];
    e.thread = k % 2 == 0 ? 1 : std::numeric_limits<std::uint64_t>::max() - std::uint64_t(k % 3);
    if (k & 1) e.device_index = k;
    if (k & 2) e.bytes = -std::int64_t(k) * 4096;
    if (k & 4) e.flops = big - k;
    if (k & 8) e.correlation = k + 1;
    if (k & 16) e.external_id = std::numeric_limits<std::int64_t>::min() + k;
    if (k & 32) e.input_shapes = {{64, 64}, {}, {std::int64_t(k)}};
    if (k & 64) e.input_shapes = {{}};
    events.push_back(e);
  }
  return events;
}

}  // namespace

TEST_CASE("every field of every event comes back exactly, whichever numbers it sets and however long it lasts") {
  const std::vector<Event> events = assorted();
  const EventTable table(events);
  REQUIRE(table.size() == events.size());
  for (std::size_t i = 0; i < events.size(); ++i) {
    CAPTURE(i);
    CHECK(fields(table[i]) == fields(events[i]));
    CHECK(table.start_ns(i) == events[i].start_ns);
    CHECK(table.end_ns(i) == events[i].end_ns);
    CHECK(table.name(i) == events[i].name);
    CHECK(table.thread(i) == events[i].thread);
    CHECK(table.flops(i) == events[i].flops);
    CHECK(table.input_shapes(i) == events[i].input_shapes);
  }
}

TEST_CASE("a name, a thread and a list of shapes are stored once, however many events share them") {
  EventTable table;
  Event e;
  e.name = "ProfilerStep#123456789";  // longer than a std::string keeps in place
  e.input_shapes = {{64, 64}, {64}};
  for (int k = 0; k < 1000; ++k) table.push_back(e);
  CHECK(table.name_id(0) == table.name_id(999));
  CHECK(table.name(999).data() == table.name(0).data());
  CHECK(&table[0].input_shapes == &table[999].input_shapes);
  e.name = "aten::mm";
  table.push_back(e);
  CHECK(table.name_id(1000) != table.name_id(0));
}

TEST_CASE("the string pool gives equal ids to equal strings only, across many growths") {
  StringPool pool;
  std::vector<std::uint32_t> ids;
  for (int k = 0; k < 20000; ++k) ids.push_back(pool.intern("op" + std::to_string(k)));
  CHECK(pool.size() == 20000);
  for (int k = 0; k < 20000; k += 997) {
    CHECK(pool.intern("op" + std::to_string(k)) == ids[std::size_t(k)]);
    CHECK(pool[ids[std::size_t(k)]] == "op" + std::to_string(k));
  }
  CHECK(pool.intern("") == pool.intern(std::string()));
  CHECK(pool.size() == 20001);
}

TEST_CASE("reordering and dropping move each event's numbers with it") {
  const std::vector<Event> events = assorted();
  EventTable table(events);
  std::vector<std::uint32_t> order;
  for (std::size_t i = events.size(); i-- > 0;) order.push_back(std::uint32_t(i));  // reversed
  table.reorder(order);
  for (std::size_t k = 0; k < events.size(); ++k) CHECK(fields(table[k]) == fields(events[order[k]]));
  std::vector<bool> keep(table.size());
  for (std::size_t k = 0; k < keep.size(); ++k) keep[k] = k % 3 != 1;
  table.keep_only(keep);
  std::size_t at = 0;
  for (std::size_t k = 0; k < keep.size(); ++k)
    if (keep[k]) CHECK(fields(table[at++]) == fields(events[order[k]]));
  CHECK(at == table.size());
}

TEST_CASE("times shift by the origin, long events' ends too, and not at all when one would leave int64") {
  std::vector<Event> events = assorted();
  events.erase(std::remove_if(events.begin(), events.end(), [](const Event& e) { return e.end_ns < e.start_ns; }),
               events.end());
  EventTable table(events);
  REQUIRE(table.shift_times(-1000));
  for (std::size_t i = 0; i < events.size(); ++i) {
    CHECK(table.start_ns(i) == events[i].start_ns + 1000);
    CHECK(table.end_ns(i) == events[i].end_ns + 1000);
  }
  CHECK_FALSE(table.shift_times(std::numeric_limits<std::int64_t>::min()));
  CHECK(table.start_ns(0) == events[0].start_ns + 1000);  // unchanged by the refusal
}

TEST_CASE("the events iterate as views: indexed, counted, searched, copied out as Events") {
  const std::vector<Event> events = assorted();
  const EventTable table(events);
  CHECK(std::distance(table.begin(), table.end()) == std::ptrdiff_t(events.size()));
  CHECK(table.end() - table.begin() == std::ptrdiff_t(table.size()));
  const auto mm = std::find_if(table.begin(), table.end(), [](const EventView& e) { return e.name == "aten::mm"; });
  REQUIRE(mm != table.end());
  CHECK(mm->name == "aten::mm");
  CHECK(mm[1].name == table[std::size_t(mm - table.begin()) + 1].name);
  const std::vector<Event> copied(table.begin(), table.end());
  REQUIRE(copied.size() == events.size());
  for (std::size_t i = 0; i < events.size(); ++i) CHECK(fields(copied[i]) == fields(events[i]));
  const Event& one = table[5];  // a copy, bound to the reference
  CHECK(fields(one) == fields(events[5]));
  CHECK_THROWS_AS(table.at(table.size()), std::out_of_range);
}

TEST_CASE("extending by other tables is pushing their events one by one: same fields, same name ids") {
  // Enough events that the columns fill on two threads, with names, threads and shapes that the
  // first table has, and some it does not.
  std::vector<Event> events;
  for (int round = 0; round < 1600; ++round)
    for (Event e : assorted()) {
      e.name += std::to_string(round % 37);
      e.thread += std::uint64_t(round % 5);
      events.push_back(e);
    }
  const std::size_t cut1 = events.size() / 3, cut2 = events.size() / 2;
  REQUIRE(events.size() - cut1 >= (std::size_t(1) << 17));
  EventTable whole, first, second, third;
  for (std::size_t i = 0; i < events.size(); ++i) {
    whole.push_back(events[i]);
    (i < cut1 ? first : i < cut2 ? second : third).push_back(events[i]);
  }
  std::vector<EventTable> rest;
  rest.push_back(std::move(second));
  rest.push_back(std::move(third));
  first.extend(std::move(rest));
  REQUIRE(first.size() == whole.size());
  REQUIRE(first.name_count() == whole.name_count());
  for (std::size_t i = 0; i < whole.size(); ++i) {
    CAPTURE(i);
    REQUIRE(fields(Event(first[i])) == fields(Event(whole[i])));
    REQUIRE(first.name_id(i) == whole.name_id(i));
  }
}
