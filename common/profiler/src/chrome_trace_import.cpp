// The chrome-trace importer: a trace from text or from a file (plain or gzip-compressed, a regular
// file, a pipe or a device), read by one TraceReader (trace_reader.h), or for a large file in parts
// on two threads (trace_parts.h), and made a Profile by the one path both producers share.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <thread>

#include "normalize.h"
#include "trace_loading.h"
#include "trace_parts.h"
#include "trace_reader.h"
#include "workbook/profiler/chrome_trace.h"
#include "workbook/profiler/format.h"
#include "workbook/profiler/gzip.h"

namespace workbook {
namespace {

using detail::BlockFeed;
using detail::TraceReader;

Profile finish(TraceReader& reader) {
  EventTable events = reader.take_events();
  try {
    return detail::normalized_profile(std::move(events));
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
  // A large file is read in parts by two threads (trace_parts.h); where that gives no result, one
  // reader reads it all, from the start.
  if (!limited && !error && size >= split_from && size > 0 && std::thread::hardware_concurrency() >= 2) {
    if (auto reader = detail::read_in_parts(path.string(), fileno(file.get()), size,
                                            std::max<std::uint64_t>(split_from, 1) / 2)) {
      if (read_in_parts) *read_in_parts = true;
      return finish(*reader);
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
