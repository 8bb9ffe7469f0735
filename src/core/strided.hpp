// Internal helpers to walk strided layouts on the host.
#pragma once
#include <cstdint>
#include <cstring>

#include "wgt/shape.hpp"

namespace wgt::detail {

// Calls f(src_element_offset) for every element in row-major order of `shape`.
template <typename F>
void for_each_offset(const Shape& shape, const Strides& strides, int64_t offset, F&& f) {
  const int rank = static_cast<int>(shape.size());
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  if (n == 0) return;
  if (rank == 0) { f(offset); return; }
  int64_t idx[kMaxRank] = {0};
  int64_t off = offset;
  const int64_t inner = shape[rank - 1], inner_stride = strides[rank - 1];
  for (int64_t done = 0; done < n; done += inner) {
    int64_t o = off;
    for (int64_t i = 0; i < inner; ++i, o += inner_stride) f(o);
    for (int d = rank - 2; d >= 0; --d) {
      if (++idx[d] < shape[d]) { off += strides[d]; break; }
      off -= strides[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

// Copies the logical elements of a strided view into contiguous dst.
inline void strided_copy_bytes(const uint8_t* base, const Shape& shape, const Strides& strides, int64_t offset,
                               size_t elem, uint8_t* dst) {
  switch (elem) {
    case 1: for_each_offset(shape, strides, offset, [&](int64_t o) { *dst++ = base[o]; }); break;
    case 2: { auto* d = reinterpret_cast<uint16_t*>(dst); auto* s = reinterpret_cast<const uint16_t*>(base);
      for_each_offset(shape, strides, offset, [&](int64_t o) { *d++ = s[o]; }); break; }
    case 4: { auto* d = reinterpret_cast<uint32_t*>(dst); auto* s = reinterpret_cast<const uint32_t*>(base);
      for_each_offset(shape, strides, offset, [&](int64_t o) { *d++ = s[o]; }); break; }
    case 8: { auto* d = reinterpret_cast<uint64_t*>(dst); auto* s = reinterpret_cast<const uint64_t*>(base);
      for_each_offset(shape, strides, offset, [&](int64_t o) { *d++ = s[o]; }); break; }
    default:
      for_each_offset(shape, strides, offset, [&](int64_t o) { std::memcpy(dst, base + o * elem, elem); dst += elem; });
  }
}

}  // namespace wgt::detail
