// Shared pieces of the reference kernels: element loads/stores with the documented
// conversion rules, and index walks over strided views (any strides, including 0 and
// negative). Speed is irrelevant here; obviousness is the point.
#pragma once
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "wgt/backend.hpp"

namespace wgt::cpu_ref {

using cplx = std::complex<double>;

// In which domain an op computes for a dtype: double for floats, exact int64 for integers and
// bool (results wrap to the output width), complex<double> for c64.
enum class Domain { Real, Int, Complex };
inline Domain domain_of(DType t) {
  if (is_complex(t)) return Domain::Complex;
  if (is_floating(t)) return Domain::Real;
  return Domain::Int;
}

inline const uint8_t* base_of(const Tensor& t) { return t.storage()->host_data(); }
inline uint8_t* mut_base_of(const Tensor& t) { return t.storage()->host_data(); }

// ---- loads (i = element offset from the storage base) ----
template <typename T> inline T ld(const uint8_t* b, int64_t i) { T v; std::memcpy(&v, b + i * static_cast<int64_t>(sizeof(T)), sizeof(T)); return v; }
template <typename T> inline void st(uint8_t* b, int64_t i, T v) { std::memcpy(b + i * static_cast<int64_t>(sizeof(T)), &v, sizeof(T)); }

inline double load_real(const uint8_t* b, DType t, int64_t i) {
  switch (t) {
    case DType::F32: return ld<float>(b, i);
    case DType::F16: return f16_to_f32(ld<uint16_t>(b, i));
    case DType::BF16: return bf16_to_f32(ld<uint16_t>(b, i));
    case DType::F64: return ld<double>(b, i);
    case DType::I32: return ld<int32_t>(b, i);
    case DType::I64: return static_cast<double>(ld<int64_t>(b, i));
    case DType::U8: return ld<uint8_t>(b, i);
    case DType::Bool: return ld<uint8_t>(b, i) != 0 ? 1.0 : 0.0;
    case DType::C64: return ld<float>(b, 2 * i);  // real part
  }
  return 0;
}

// Float -> integer is defined for every input: NaN -> 0, truncation toward zero, then
// saturation to [lo, hi]. (A plain static_cast is UB for NaN/inf/out-of-range values.)
inline int64_t saturate_to_int(double v, double lo, double hi) {
  if (std::isnan(v)) return 0;
  v = std::trunc(v);
  if (v <= lo) return static_cast<int64_t>(lo);
  if (v >= hi) return hi >= 9.2e18 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(hi);
  return static_cast<int64_t>(v);
}

inline int64_t load_int(const uint8_t* b, DType t, int64_t i) {
  switch (t) {
    case DType::I32: return ld<int32_t>(b, i);
    case DType::I64: return ld<int64_t>(b, i);
    case DType::U8: return ld<uint8_t>(b, i);
    case DType::Bool: return ld<uint8_t>(b, i) != 0;
    default: return saturate_to_int(load_real(b, t, i), -9223372036854775808.0, 9223372036854775808.0);
  }
}

inline cplx load_cplx(const uint8_t* b, DType t, int64_t i) {
  if (t == DType::C64) return {ld<float>(b, 2 * i), ld<float>(b, 2 * i + 1)};
  return {load_real(b, t, i), 0.0};
}

// double -> float without UB: values beyond the f32 range round to +-inf like IEEE rounding.
inline float to_f32(double v) {
  constexpr double kMaxRoundsToFinite = 3.4028235677973366e38;  // FLT_MAX + half an ulp
  if (v >= kMaxRoundsToFinite) return std::numeric_limits<float>::infinity();
  if (v <= -kMaxRoundsToFinite) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(v);
}

// ---- stores (conversion = the cast semantics documented in ops.hpp / elementwise.cpp) ----
inline void store_real(uint8_t* b, DType t, int64_t i, double v) {
  switch (t) {
    case DType::F32: st<float>(b, i, to_f32(v)); return;
    // f16/bf16 round through f32 (the conversion helpers take f32); double rounding can differ
    // from a direct double->f16 rounding only in the last bit of rare ties, well inside any
    // tolerance these dtypes are tested with.
    case DType::F16: st<uint16_t>(b, i, f32_to_f16(to_f32(v))); return;
    case DType::BF16: st<uint16_t>(b, i, f32_to_bf16(to_f32(v))); return;
    case DType::F64: st<double>(b, i, v); return;
    case DType::I32: st<int32_t>(b, i, static_cast<int32_t>(saturate_to_int(v, -2147483648.0, 2147483647.0))); return;
    case DType::I64: st<int64_t>(b, i, saturate_to_int(v, -9223372036854775808.0, 9223372036854775808.0)); return;
    case DType::U8: st<uint8_t>(b, i, static_cast<uint8_t>(saturate_to_int(v, 0.0, 255.0))); return;
    case DType::Bool: st<uint8_t>(b, i, v != 0.0 ? 1 : 0); return;  // NaN != 0 -> true
    case DType::C64: st<float>(b, 2 * i, to_f32(v)); st<float>(b, 2 * i + 1, 0.0f); return;
  }
}

// Integer results wrap (two's complement) to the output width, like C++20 conversions and
// every GPU; to float they convert exactly or round to nearest.
inline void store_int(uint8_t* b, DType t, int64_t i, int64_t v) {
  switch (t) {
    case DType::I32: st<int32_t>(b, i, static_cast<int32_t>(v)); return;
    case DType::I64: st<int64_t>(b, i, v); return;
    case DType::U8: st<uint8_t>(b, i, static_cast<uint8_t>(v)); return;
    case DType::Bool: st<uint8_t>(b, i, v != 0 ? 1 : 0); return;
    default: store_real(b, t, i, static_cast<double>(v)); return;
  }
}

inline void store_cplx(uint8_t* b, DType t, int64_t i, cplx v) {
  if (t == DType::C64) { st<float>(b, 2 * i, to_f32(v.real())); st<float>(b, 2 * i + 1, to_f32(v.imag())); return; }
  if (t == DType::Bool) { st<uint8_t>(b, i, (v.real() != 0 || v.imag() != 0) ? 1 : 0); return; }
  store_real(b, t, i, v.real());  // complex -> real keeps the real part
}

// Wrapping int64 arithmetic (signed overflow is UB in C++; unsigned arithmetic is modular).
inline int64_t wadd(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
inline int64_t wsub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
inline int64_t wmul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }

// ---- walks ----

// Calls f(flat, offs) for every index of `shape` in row-major order; offs[k] is the element
// offset of that index in view k (given by its strides, which have shape's rank, and offset).
template <size_t N, typename F>
void walk(const Shape& shape, const std::array<const int64_t*, N>& strides, std::array<int64_t, N> offs, F&& f) {
  const int rank = static_cast<int>(shape.size());
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  int64_t idx[kMaxRank] = {0};
  for (int64_t e = 0; e < n; ++e) {
    f(e, offs);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) {
        for (size_t k = 0; k < N; ++k) offs[k] += strides[k][d];
        break;
      }
      for (size_t k = 0; k < N; ++k) offs[k] -= strides[k][d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

// A tensor split into "outer" dims (kept, in order) and "inner" dims (listed axes, in order).
struct Split {
  Shape outer_shape, inner_shape;
  Strides outer_strides, inner_strides;
};
inline Split split_axes(const Tensor& t, const std::vector<int64_t>& axes) {
  Split s;
  for (int d = 0; d < t.dim(); ++d) {
    bool inner = false;
    for (int64_t a : axes) inner |= a == d;
    (inner ? s.inner_shape : s.outer_shape).push_back(t.shape()[d]);
    (inner ? s.inner_strides : s.outer_strides).push_back(t.strides()[d]);
  }
  return s;
}

// Reads the inner elements of one outer position as doubles (row-major over inner dims).
inline void read_row(const Tensor& t, const Split& s, int64_t base, std::vector<double>& row) {
  row.resize(0);
  const uint8_t* b = base_of(t);
  walk<1>(s.inner_shape, {s.inner_strides.data()}, {base}, [&](int64_t, const std::array<int64_t, 1>& o) {
    row.push_back(load_real(b, t.dtype(), o[0]));
  });
}
inline void write_row(const Tensor& t, const Split& s, int64_t base, const std::vector<double>& row) {
  uint8_t* b = mut_base_of(t);
  walk<1>(s.inner_shape, {s.inner_strides.data()}, {base}, [&](int64_t e, const std::array<int64_t, 1>& o) {
    store_real(b, t.dtype(), o[0], row[e]);
  });
}

}  // namespace wgt::cpu_ref
