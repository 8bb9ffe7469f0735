// Front-ends of the creation ops (full/zeros/ones, arange, counter-based random numbers).
// Contract: no inputs; the output is allocated on the requested device.
//  - Fill: attrs.scalar0 = value.
//  - Arange: element i = scalar0 + i * scalar1 (computed in double, then converted).
//  - RandUniform: scalar0 = low, scalar1 = high, seed. RandNormal: scalar0 = mean,
//    scalar1 = stddev, seed. The exact algorithm is in src/cpu/reference/random.hpp.
#include <cmath>
#include <limits>

#include "ops/op_common.hpp"
#include "wgt/ops.hpp"

namespace wgt {
using namespace ops_detail;

namespace {

void check_dtype_value(DType t, const char* op) {
  if (static_cast<int>(t) >= kNumDTypes)
    throw_error(ErrorKind::InvalidArgument, op, "unknown dtype value " + std::to_string(static_cast<int>(t)));
}

// Integer tensors must get a value they can hold exactly: silently wrapping or truncating a
// fill value is a bug in the caller far more often than an intent.
void check_fill_value(double v, DType t, const char* op) {
  if (!is_integral(t)) return;
  double lo = 0, hi = 0;
  switch (t) {
    case DType::I32: lo = -2147483648.0; hi = 2147483647.0; break;
    case DType::I64: lo = -9223372036854775808.0; hi = 9223372036854774784.0; break;  // largest double below 2^63
    default: lo = 0; hi = 255; break;
  }
  if (!std::isfinite(v) || v != std::trunc(v) || v < lo || v > hi)
    throw_error(ErrorKind::InvalidArgument, op,
                "value " + std::to_string(v) + " is not representable in " + dt(t) +
                    "; pass an integer in range or use a floating dtype");
}

Tensor run_creation(OpCall& call, const Shape& shape, DType dtype, Device device) {
  call.work = numel_d(shape);
  return Runtime::get().run1(call, {shape, dtype}, device);
}

}  // namespace

Tensor full(const Shape& shape, double value, DType dtype, Device device) {
  validate_shape(shape, "full");
  check_dtype_value(dtype, "full");
  check_fill_value(value, dtype, "full");
  OpCall call{OpKind::Fill, "full", {}, {}, {}};
  call.attrs.scalar0 = value;
  return run_creation(call, shape, dtype, device);
}

Tensor zeros(const Shape& shape, DType dtype, Device device) { return full(shape, 0.0, dtype, device); }
Tensor ones(const Shape& shape, DType dtype, Device device) { return full(shape, 1.0, dtype, device); }

Tensor arange(double start, double stop, double step, DType dtype, Device device) {
  check_dtype_value(dtype, "arange");
  if (!std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step))
    throw_error(ErrorKind::InvalidArgument, "arange", "start, stop and step must be finite");
  if (step == 0) throw_error(ErrorKind::InvalidArgument, "arange", "step must be non-zero");
  if (dtype == DType::Bool || is_complex(dtype))
    throw_error(ErrorKind::DTypeMismatch, "arange", "needs a real numeric dtype, got " + dt(dtype));
  double n = std::ceil((stop - start) / step);
  if (!(n > 0)) n = 0;
  if (n > static_cast<double>(int64_t{1} << 56))
    throw_error(ErrorKind::InvalidArgument, "arange", "range holds too many elements; increase the step");
  const auto count = static_cast<int64_t>(n);
  if (is_integral(dtype) && count > 0) {
    check_fill_value(start, dtype, "arange");
    check_fill_value(start + static_cast<double>(count - 1) * step, dtype, "arange");
    check_fill_value(step, DType::I64, "arange");
  }
  OpCall call{OpKind::Arange, "arange", {}, {}, {}};
  call.attrs.scalar0 = start;
  call.attrs.scalar1 = step;
  return run_creation(call, {count}, dtype, device);
}

Tensor rand_uniform(const Shape& shape, uint64_t seed, double low, double high, DType dtype, Device device) {
  validate_shape(shape, "rand_uniform");
  check_dtype_value(dtype, "rand_uniform");
  if (!is_floating(dtype))
    throw_error(ErrorKind::DTypeMismatch, "rand_uniform", "needs a floating dtype, got " + dt(dtype));
  if (!std::isfinite(low) || !std::isfinite(high) || !(low <= high))
    throw_error(ErrorKind::InvalidArgument, "rand_uniform", "needs finite low <= high, got [" +
                                                               std::to_string(low) + ", " + std::to_string(high) + ")");
  OpCall call{OpKind::RandUniform, "rand_uniform", {}, {}, {}};
  call.attrs.scalar0 = low;
  call.attrs.scalar1 = high;
  call.attrs.seed = seed;
  return run_creation(call, shape, dtype, device);
}

Tensor rand_normal(const Shape& shape, uint64_t seed, double mean, double stddev, DType dtype, Device device) {
  validate_shape(shape, "rand_normal");
  check_dtype_value(dtype, "rand_normal");
  if (!is_floating(dtype))
    throw_error(ErrorKind::DTypeMismatch, "rand_normal", "needs a floating dtype, got " + dt(dtype));
  if (!std::isfinite(mean) || !std::isfinite(stddev) || stddev < 0)
    throw_error(ErrorKind::InvalidArgument, "rand_normal", "needs a finite mean and a finite stddev >= 0");
  OpCall call{OpKind::RandNormal, "rand_normal", {}, {}, {}};
  call.attrs.scalar0 = mean;
  call.attrs.scalar1 = stddev;
  call.attrs.seed = seed;
  return run_creation(call, shape, dtype, device);
}

}  // namespace wgt
