// Front-ends of the reductions (sum, mean, max, min, prod, argmax).
// Contract: inputs = {x}; attrs.axes normalized and sorted (empty only for a 0-d input: "all axes" is
// expanded), attrs.keepdim; output contiguous with the reduced dims removed (or kept as 1).
// Output dtypes:
//  - sum/prod: floats and c64 keep their dtype; bool/u8/i32/i64 accumulate and return I64
//    (like numpy/torch: an i32 sum overflows far too easily to keep i32).
//  - mean: floating and c64 dtypes only (an integer mean is DTypeMismatch: cast() to a float
//    first); the mean of an empty set is NaN (NaN + NaN i for c64).
//  - max/min: any real dtype (complex has no ordering); reducing an empty axis has no identity
//    -> InvalidArgument. NaN propagates (any NaN in the reduced set gives NaN).
//  - argmax: one axis, I64 indices, first maximum wins; NaN counts as larger than every number
//    (the first NaN wins), matching numpy/torch.
#include <algorithm>

#include "ops/op_common.hpp"
#include "wgt/ops.hpp"

namespace wgt {
using namespace ops_detail;

namespace {

std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int rank, const char* op) {
  std::vector<int64_t> out;
  if (axes.empty()) {
    for (int i = 0; i < rank; ++i) out.push_back(i);
    return out;
  }
  for (int64_t a : axes) out.push_back(normalize_axis(a, rank, op));
  std::sort(out.begin(), out.end());
  for (size_t i = 1; i < out.size(); ++i)
    if (out[i] == out[i - 1])
      throw_error(ErrorKind::InvalidArgument, op,
                  "axis " + std::to_string(out[i]) + " is listed twice; list each axis once");
  return out;
}

Shape reduced_shape(const Shape& s, const std::vector<int64_t>& axes, bool keepdim) {
  Shape out;
  for (int i = 0; i < static_cast<int>(s.size()); ++i) {
    bool red = std::find(axes.begin(), axes.end(), i) != axes.end();
    if (!red) out.push_back(s[i]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

DType reduce_out_dtype(ReduceOp op, DType in, const char* name) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Prod:
      return (is_integral(in) || in == DType::Bool) ? DType::I64 : in;
    case ReduceOp::Mean:
      if (is_integral(in) || in == DType::Bool)
        throw_error(ErrorKind::DTypeMismatch, name,
                    "mean of " + dt(in) + " is not defined; cast() the input to a floating dtype first");
      return in;
    case ReduceOp::Max:
    case ReduceOp::Min:
      if (is_complex(in)) throw_error(ErrorKind::DTypeMismatch, name, "is not defined for complex tensors (no ordering)");
      return in;
    case ReduceOp::ArgMax:
      if (is_complex(in)) throw_error(ErrorKind::DTypeMismatch, name, "is not defined for complex tensors (no ordering)");
      return DType::I64;
  }
  return in;
}

}  // namespace

Tensor reduce(ReduceOp op, const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  const char* name = reduce_op_name(op);
  Device dev = common_device({&x}, name);
  if (op == ReduceOp::ArgMax) {
    if (axes.size() != 1)
      throw_error(ErrorKind::InvalidArgument, name, "argmax reduces exactly one axis; use argmax(x, axis)");
    return argmax(x, axes[0], keepdim);
  }
  // A 0-d tensor reduces to itself (axes must then be empty: there is no axis to name).
  std::vector<int64_t> ax = x.dim() == 0 && axes.empty() ? std::vector<int64_t>{} : normalize_axes(axes, x.dim(), name);
  const DType out_t = reduce_out_dtype(op, x.dtype(), name);
  if (op == ReduceOp::Max || op == ReduceOp::Min)
    for (int64_t a : ax)
      if (x.shape()[a] == 0)
        throw_error(ErrorKind::InvalidArgument, name,
                    "cannot reduce the empty axis " + std::to_string(a) + " of " + x.str() + " (no identity)");
  OpCall call{OpKind::Reduce, name, {x}, {}, {}};
  call.attrs.reduce = op;
  call.attrs.axes = ax;
  call.attrs.keepdim = keepdim;
  call.work = static_cast<double>(x.numel());
  return Runtime::get().run1(call, {reduced_shape(x.shape(), ax, keepdim), out_t}, dev);
}

Tensor sum(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) { return reduce(ReduceOp::Sum, x, axes, keepdim); }
Tensor mean(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) { return reduce(ReduceOp::Mean, x, axes, keepdim); }
Tensor max(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) { return reduce(ReduceOp::Max, x, axes, keepdim); }
Tensor min(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) { return reduce(ReduceOp::Min, x, axes, keepdim); }
Tensor prod(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) { return reduce(ReduceOp::Prod, x, axes, keepdim); }

Tensor argmax(const Tensor& x, int64_t axis, bool keepdim) {
  Device dev = common_device({&x}, "argmax");
  const int a = normalize_axis(axis, x.dim(), "argmax");
  const DType out_t = reduce_out_dtype(ReduceOp::ArgMax, x.dtype(), "argmax");
  if (x.shape()[a] == 0)
    throw_error(ErrorKind::InvalidArgument, "argmax", "cannot take argmax over the empty axis " + std::to_string(a) + " of " + x.str());
  OpCall call{OpKind::Reduce, "argmax", {x}, {}, {}};
  call.attrs.reduce = ReduceOp::ArgMax;
  call.attrs.axes = {a};
  call.attrs.keepdim = keepdim;
  call.work = static_cast<double>(x.numel());
  return Runtime::get().run1(call, {reduced_shape(x.shape(), {a}, keepdim), out_t}, dev);
}

}  // namespace wgt
