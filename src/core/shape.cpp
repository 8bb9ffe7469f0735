// Shape arithmetic with overflow checks, axis normalization and broadcasting.
#include "wgt/shape.hpp"

#include <limits>

#include "wgt/error.hpp"

namespace wgt {

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

int64_t checked_mul(int64_t a, int64_t b, const char* op) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw_error(ErrorKind::InvalidArgument, op,
                "size overflow: " + std::to_string(a) + " * " + std::to_string(b) + " exceeds int64");
  return r;
}

int64_t checked_numel(const Shape& s, const char* op) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) throw_error(ErrorKind::InvalidArgument, op, "negative dimension in shape " + shape_str(s));
    n = checked_mul(n, d, op);
  }
  // Byte sizes must also fit: keep numel below 2^56 so numel * 8 bytes cannot overflow.
  if (n > (int64_t{1} << 56))
    throw_error(ErrorKind::InvalidArgument, op, "shape " + shape_str(s) + " has too many elements");
  return n;
}

int64_t validate_shape(const Shape& s, const char* op) {
  if (s.size() > static_cast<size_t>(kMaxRank))
    throw_error(ErrorKind::RankMismatch, op,
                "rank " + std::to_string(s.size()) + " exceeds the maximum rank " + std::to_string(kMaxRank));
  return checked_numel(s, op);
}

Strides contiguous_strides(const Shape& s) {
  Strides st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= (s[i] > 0 ? s[i] : 1);
  }
  return st;
}

int normalize_axis(int64_t axis, int rank, const char* op) {
  int64_t r = rank;
  if (axis < -r || axis >= r || (rank == 0))
    throw_error(ErrorKind::OutOfRange, op,
                "axis " + std::to_string(axis) + " is out of range for a tensor of rank " + std::to_string(rank) +
                    " (valid: " + std::to_string(-r) + ".." + std::to_string(r - 1) + ")");
  return static_cast<int>(axis < 0 ? axis + r : axis);
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw_error(ErrorKind::ShapeMismatch, op,
                  "shapes " + shape_str(a) + " and " + shape_str(b) + " cannot be broadcast (dim " +
                      std::to_string(i) + ": " + std::to_string(da) + " vs " + std::to_string(db) + ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace wgt
