// Reading a large trace file in parts on two threads: where parts begin, who reads which, and the
// checks that make the parts' events exactly one reader's.
#include "trace_parts.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

namespace workbook::detail {
namespace {

/// A part's reading stopped because another part gave no result.
struct Abandoned {};

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

std::unique_ptr<TraceReader> read_in_parts(const std::string& source, int fd, std::uint64_t size,
                                           std::uint64_t part_bytes) {
  const std::optional<bool> array = root_is_array(fd);
  if (!array) return nullptr;
  std::vector<std::uint64_t> starts = part_starts(fd, size, part_bytes);
  if (starts.empty()) return nullptr;
  return PartsReader(source, fd, std::move(starts), *array, size).read();
}

}  // namespace workbook::detail
