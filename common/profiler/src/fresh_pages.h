#pragma once
// Large arrays that are written whole as soon as they are made get their memory mapped in one call
// before the first write: touching fresh memory page by page takes a page fault per 4 KiB, which
// costs about 11 µs on the 2-core VMs this workbook is measured on (a 100 MB trace makes ~60 MB of
// such arrays). The whole 2 MiB stretches of such an array are asked for as huge pages, one fault
// each where the kernel has them on request (transparent_hugepage "madvise" or "always"); nothing
// outside the array is touched, so no memory is mapped that would not be anyway. Elsewhere than
// Linux, or where the kernel refuses, the pages come one by one as before.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace workbook::detail {

/// Maps the pages lying wholly inside [data, data + bytes) now, for memory about to be written
/// whole; a hint only (contents stay as they are; a refusal changes nothing).
inline void map_pages_now(void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t page = 4096, huge = std::uintptr_t(2) << 20;
  if (bytes < (std::size_t(1) << 20)) return;  // a few pages: not worth the calls
  const auto at = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t begin = (at + page - 1) & ~(page - 1), end = (at + bytes) & ~(page - 1);
  const std::uintptr_t huge_begin = (begin + huge - 1) & ~(huge - 1), huge_end = end & ~(huge - 1);
  if (huge_begin < huge_end) ::madvise(reinterpret_cast<void*>(huge_begin), huge_end - huge_begin, MADV_HUGEPAGE);
#ifndef MADV_POPULATE_WRITE
  constexpr int MADV_POPULATE_WRITE = 23;  // Linux 5.14; older kernels refuse it
#endif
  if (begin < end) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#else
  (void)data;
  (void)bytes;
#endif
}

/// `v` made `n` copies of `value`, in the memory it has when that holds `capacity` (at least n)
/// elements, else in new memory of that size, its pages mapped at once (map_pages_now): a buffer
/// handed on from a step that is done costs no page faults.
template <typename T>
void assign_mapped(std::vector<T>& v, std::size_t n, const T& value, std::size_t capacity = 0) {
  capacity = std::max(capacity, n);
  if (v.capacity() < capacity) {
    std::vector<T> fresh;
    fresh.reserve(capacity);
    map_pages_now(fresh.data(), capacity * sizeof(T));
    v.swap(fresh);
  }
  v.assign(n, value);
}

/// `n` copies of `value`, the pages mapped at once (map_pages_now).
template <typename T>
std::vector<T> filled_vector(std::size_t n, const T& value) {
  std::vector<T> v;
  assign_mapped(v, n, value);
  return v;
}

/// Room for `more` elements after `v`'s last, those pages mapped at once.
template <typename T>
void reserve_mapped(std::vector<T>& v, std::size_t more) {
  v.reserve(v.size() + more);
  map_pages_now(v.data() + v.size(), more * sizeof(T));
}

}  // namespace workbook::detail
