// Shapes and strides (in elements) with overflow-checked arithmetic.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace wgt {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;

constexpr int kMaxRank = 8;  // ranks above this are rejected (kernels pass shapes in fixed arrays)

std::string shape_str(const Shape& s);  // "[2, 3, 4]"

// Product of dims; throws InvalidArgument on negative dims or int64 overflow.
int64_t checked_numel(const Shape& s, const char* op = "shape");
// a*b with overflow check.
int64_t checked_mul(int64_t a, int64_t b, const char* op = "shape");
// Validates rank and dims (>=0), returns numel.
int64_t validate_shape(const Shape& s, const char* op);
Strides contiguous_strides(const Shape& s);
// Normalizes a possibly negative axis into [0, rank); throws OutOfRange.
int normalize_axis(int64_t axis, int rank, const char* op);
// Broadcast two shapes (numpy rules); throws ShapeMismatch naming both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

}  // namespace wgt
