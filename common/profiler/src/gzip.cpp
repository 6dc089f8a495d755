#include "workbook/profiler/gzip.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

namespace workbook {

bool starts_gzip(std::string_view bytes) { return bytes.size() >= 2 && bytes[0] == '\x1f' && bytes[1] == '\x8b'; }

std::string gzip_compress(std::string_view data) {
  z_stream z{};
  // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw GzipError("gzip: cannot start the compressor");
  std::string out;
  out.resize(deflateBound(&z, uLong(std::min<std::size_t>(data.size(), UINT_MAX / 2))) + 64);
  std::size_t written = 0, offered = 0;
  int status = Z_OK;
  while (status != Z_STREAM_END) {
    // zlib counts in 32 bits: a text past 4 GiB goes in 1 GiB pieces.
    if (z.avail_in == 0 && offered < data.size()) {
      const std::size_t piece = std::min<std::size_t>(data.size() - offered, std::size_t(1) << 30);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + offered));
      z.avail_in = uInt(piece);
      offered += piece;
    }
    if (written == out.size()) out.resize(out.size() * 2);
    const std::size_t room = std::min<std::size_t>(out.size() - written, std::size_t(1) << 30);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + written);
    z.avail_out = uInt(room);
    status = deflate(&z, offered == data.size() ? Z_FINISH : Z_NO_FLUSH);
    written += room - z.avail_out;
    if (status != Z_OK && status != Z_STREAM_END && status != Z_BUF_ERROR) {
      deflateEnd(&z);
      throw GzipError(fmt::format("gzip: compression failed ({})", status));
    }
  }
  deflateEnd(&z);
  out.resize(written);
  return out;
}

struct GzipReader::State {
  std::function<std::size_t(char*, std::size_t)> pull;
  z_stream z{};
  std::vector<char> input = std::vector<char>(std::size_t(1) << 20);
  bool input_ended = false;      // pull returned 0
  bool between_members = false;  // a member ended; the next one has not started
  bool done = false;

  // Refills zlib's input when it is empty; false when there is no more.
  bool refill() {
    if (z.avail_in > 0) return true;
    if (input_ended) return false;
    const std::size_t got = pull(input.data(), input.size());
    if (got == 0) {
      input_ended = true;
      return false;
    }
    z.next_in = reinterpret_cast<Bytef*>(input.data());
    z.avail_in = uInt(got);
    return true;
  }
};

GzipReader::GzipReader(std::function<std::size_t(char*, std::size_t)> pull) : state_(std::make_unique<State>()) {
  state_->pull = std::move(pull);
  // windowBits 15 + 16: gzip only (a raw zlib stream is not a .gz file).
  if (inflateInit2(&state_->z, 15 + 16) != Z_OK) throw GzipError("gzip: cannot start the decompressor");
}

GzipReader::~GzipReader() { inflateEnd(&state_->z); }

std::size_t GzipReader::read(char* out, std::size_t capacity) {
  State& s = *state_;
  if (s.done || capacity == 0) return 0;
  z_stream& z = s.z;
  z.next_out = reinterpret_cast<Bytef*>(out);
  z.avail_out = uInt(std::min<std::size_t>(capacity, UINT_MAX));
  const uInt room = z.avail_out;
  while (z.avail_out == room) {  // until some output, or the end
    const bool more = s.refill();
    if (s.between_members) {
      if (!more) {
        s.done = true;
        return 0;
      }
      // Another member follows (concatenated .gz files), or bytes that are not one.
      if (z.next_in[0] != 0x1f)
        throw GzipError("bytes after the end of the gzip data that are not another gzip member");
      inflateReset(&z);
      s.between_members = false;
    } else if (!more) {
      throw GzipError("the gzip data is cut short (it ends inside a member): an interrupted download or copy?");
    }
    const int status = inflate(&z, Z_NO_FLUSH);
    if (status == Z_STREAM_END) {
      s.between_members = true;
    } else if (status == Z_NEED_DICT || status == Z_DATA_ERROR || status == Z_MEM_ERROR) {
      throw GzipError(fmt::format("corrupt gzip data ({})", z.msg ? z.msg : "zlib error"));
    }
    // Z_BUF_ERROR: no progress with this input; the loop refills.
  }
  return room - z.avail_out;
}

std::string gzip_decompress(std::string_view data, std::uint64_t max_bytes) {
  // Read through the same reader, from memory.
  std::size_t offset = 0;
  GzipReader from_memory([&](char* into, std::size_t capacity) {
    const std::size_t n = std::min(capacity, data.size() - offset);
    std::memcpy(into, data.data() + offset, n);
    offset += n;
    return n;
  });
  std::string out;
  std::vector<char> block(std::size_t(1) << 20);
  for (;;) {
    const std::size_t got = from_memory.read(block.data(), block.size());
    if (got == 0) break;
    if (out.size() + got > max_bytes)
      throw GzipError(fmt::format("the gzip data decompresses to more than {} bytes: stopped", max_bytes));
    out.append(block.data(), got);
  }
  return out;
}

}  // namespace workbook
