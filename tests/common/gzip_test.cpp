// gzip.h: what a .json.gz trace goes through before the importer sees it.
#include "workbook/profiler/gzip.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <string>

using workbook::GzipError;

namespace {

// Reads all of `data` through a GzipReader that is handed `piece` compressed bytes at a time and
// asked for `ask` decompressed bytes at a time, so members and blocks split anywhere.
std::string read_in_pieces(const std::string& data, std::size_t piece, std::size_t ask) {
  std::size_t offset = 0;
  workbook::GzipReader reader([&](char* into, std::size_t capacity) {
    const std::size_t n = std::min({capacity, piece, data.size() - offset});
    std::memcpy(into, data.data() + offset, n);
    offset += n;
    return n;
  });
  std::string out(ask, '\0'), all;
  while (const std::size_t got = reader.read(out.data(), out.size())) all.append(out.data(), got);
  return all;
}

std::string text_of(std::size_t size) {
  std::string text;
  for (std::size_t i = 0; text.size() < size; ++i)
    text += "{\"ph\": \"X\", \"name\": \"aten::mm\", \"ts\": " + std::to_string(i) + "},\n";
  text.resize(size);
  return text;
}

}  // namespace

TEST_CASE("gzip_compress writes gzip data that decompresses to the same bytes") {
  for (std::size_t size : {std::size_t(0), std::size_t(1), std::size_t(100000)}) {
    CAPTURE(size);
    const std::string text = text_of(size);
    const std::string packed = workbook::gzip_compress(text);
    CHECK(workbook::starts_gzip(packed));
    CHECK(workbook::gzip_decompress(packed, 1 << 30) == text);
  }
  CHECK(workbook::gzip_compress(text_of(100000)).size() < 20000);  // it does compress
}

TEST_CASE("GzipReader gives the same bytes however the input and the output are cut") {
  const std::string text = text_of(300000);
  const std::string packed = workbook::gzip_compress(text);
  for (auto [piece, ask] : {std::pair{std::size_t(1), std::size_t(7)},
                            {std::size_t(13), std::size_t(1)},
                            {std::size_t(4096), std::size_t(65536)},
                            {packed.size(), std::size_t(1) << 20}}) {
    CAPTURE(piece);
    CAPTURE(ask);
    CHECK(read_in_pieces(packed, piece, ask) == text);
  }
}

TEST_CASE("concatenated gzip members read as one stream, as gunzip reads them") {
  const std::string a = text_of(5000), b = "and a second member";
  const std::string two = workbook::gzip_compress(a) + workbook::gzip_compress(b);
  CHECK(read_in_pieces(two, 100, 333) == a + b);
  CHECK(workbook::gzip_decompress(two, 1 << 20) == a + b);
}

TEST_CASE("gzip data cut short, corrupt, or followed by other bytes is refused with what is wrong") {
  const std::string packed = workbook::gzip_compress(text_of(20000));
  CHECK_THROWS_WITH_AS(workbook::gzip_decompress(packed.substr(0, packed.size() / 2), 1 << 20),
                       doctest::Contains("cut short"), GzipError);
  CHECK_THROWS_WITH_AS(workbook::gzip_decompress(packed.substr(0, packed.size() - 4), 1 << 20),
                       doctest::Contains("cut short"), GzipError);  // the trailer's length missing
  std::string corrupt = packed;
  corrupt[corrupt.size() / 2] = char(corrupt[corrupt.size() / 2] ^ 0x55);
  CHECK_THROWS_WITH_AS(workbook::gzip_decompress(corrupt, 1 << 20), doctest::Contains("corrupt gzip data"), GzipError);
  CHECK_THROWS_WITH_AS(workbook::gzip_decompress(packed + "trailing", 1 << 20),
                       doctest::Contains("not another gzip member"), GzipError);
  CHECK_THROWS_AS(workbook::gzip_decompress(std::string("\x1f\x8b\x08\x00", 4), 1 << 20), GzipError);
}

TEST_CASE("gzip_decompress stops at its limit: a small file that expands a thousandfold") {
  const std::string bomb = workbook::gzip_compress(std::string(std::size_t(8) << 20, ' '));
  CHECK(bomb.size() < 20000);
  CHECK_THROWS_WITH_AS(workbook::gzip_decompress(bomb, std::size_t(1) << 20),
                       doctest::Contains("more than 1048576 bytes"), GzipError);
  CHECK(workbook::gzip_decompress(bomb, std::size_t(8) << 20).size() == std::size_t(8) << 20);
}

TEST_CASE("starts_gzip looks at the magic bytes only") {
  CHECK(workbook::starts_gzip(std::string("\x1f\x8b", 2)));
  CHECK_FALSE(workbook::starts_gzip("{\"traceEvents\": []}"));
  CHECK_FALSE(workbook::starts_gzip(std::string("\x1f", 1)));
  CHECK_FALSE(workbook::starts_gzip(""));
}
