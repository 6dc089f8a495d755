#pragma once
/// \file
/// \brief gzip, as Kineto's `.pt.trace.json.gz` files are stored: compress a whole text, or
/// decompress one as it is read, member after member (what `gzip -d` does with concatenated files).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace workbook {

/// gzip data that cannot be read: corrupt, cut short, or bytes after the last member.
class GzipError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Whether `bytes` starts as gzip data does (the magic bytes 0x1f 0x8b).
bool starts_gzip(std::string_view bytes);

/// `data` as one gzip member (deflate at level 6, gzip's default), readable by `gunzip`.
std::string gzip_compress(std::string_view data);

/// Decompresses gzip data read through `pull` (which fills a buffer and returns how many bytes it
/// gave, 0 at the end), in whatever pieces the caller asks for. Several members in a row are one
/// stream, as `gunzip` reads them. Throws GzipError when the data is corrupt, ends inside a
/// member, or has bytes after the last member that are not another member.
class GzipReader {
 public:
  /// The compressed bytes come from `pull`.
  explicit GzipReader(std::function<std::size_t(char*, std::size_t)> pull);
  ~GzipReader();
  GzipReader(const GzipReader&) = delete;
  GzipReader& operator=(const GzipReader&) = delete;
  /// Fills up to `capacity` bytes of `out` with decompressed data; 0 only at the end of the data.
  std::size_t read(char* out, std::size_t capacity);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// All of gzip `data` decompressed; throws GzipError as GzipReader does, and when the result would
/// pass `max_bytes` (a small file can expand a thousandfold).
std::string gzip_decompress(std::string_view data, std::uint64_t max_bytes);

}  // namespace workbook
