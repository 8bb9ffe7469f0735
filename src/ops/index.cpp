// Front-ends of concat, slice_copy, index_select and gather.
// Contract: Concat: inputs = the tensors (same dtype and rank, equal dims except attrs.axis);
// Copy ("slice_copy"): inputs = {strided view}; IndexSelect/Gather: inputs = {x, indices}
// (indices I32 or I64), attrs.axis normalized. Index values are checked by the kernel
// (they are data): outside [0, size) -> OutOfRange naming the op; negative indices are
// out of range (no python-style wrap, so a bad index never silently reads another row).
#include "ops/op_common.hpp"
#include "wgt/ops.hpp"

namespace wgt {
using namespace ops_detail;

namespace {

void require_index_dtype(const Tensor& idx, const char* op) {
  if (idx.dtype() != DType::I32 && idx.dtype() != DType::I64)
    throw_error(ErrorKind::DTypeMismatch, op, "indices must be i32 or i64, got " + dt(idx.dtype()) + "; cast() them");
}

}  // namespace

Tensor concat(const std::vector<Tensor>& xs, int64_t axis) {
  if (xs.empty()) throw_error(ErrorKind::InvalidArgument, "concat", "needs at least one tensor");
  std::vector<const Tensor*> all;
  for (const Tensor& t : xs) all.push_back(&t);
  Device dev = common_device(all, "concat");
  const Tensor& x0 = xs[0];
  const int ax = normalize_axis(axis, x0.dim(), "concat");
  Shape out = x0.shape();
  out[ax] = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& t = xs[i];
    require_same_dtype(x0, t, "concat", ("tensor " + std::to_string(i)).c_str());
    if (t.dim() != x0.dim())
      throw_error(ErrorKind::RankMismatch, "concat",
                  "tensor " + std::to_string(i) + " has rank " + std::to_string(t.dim()) + ", tensor 0 has " + std::to_string(x0.dim()));
    for (int d = 0; d < t.dim(); ++d)
      if (d != ax && t.shape()[d] != x0.shape()[d])
        throw_error(ErrorKind::ShapeMismatch, "concat",
                    "tensor " + std::to_string(i) + " has shape " + shape_str(t.shape()) + ", tensor 0 has " +
                        shape_str(x0.shape()) + "; only dim " + std::to_string(ax) + " may differ");
    if (__builtin_add_overflow(out[ax], t.shape()[ax], &out[ax]))
      throw_error(ErrorKind::InvalidArgument, "concat", "concatenated size overflows int64");
  }
  validate_shape(out, "concat");
  OpCall call{OpKind::Concat, "concat", xs, {}, {}};
  call.attrs.axis = ax;
  call.work = numel_d(out);
  return Runtime::get().run1(call, {out, x0.dtype()}, dev);
}

Tensor slice_copy(const Tensor& x, int64_t axis, int64_t start, int64_t stop, int64_t step) {
  Device dev = common_device({&x}, "slice_copy");
  if (step <= 0) throw_error(ErrorKind::InvalidArgument, "slice_copy", "step must be positive, got " + std::to_string(step));
  Tensor v = x.slice(normalize_axis(axis, x.dim(), "slice_copy"), start, stop, step);
  OpCall call{OpKind::Copy, "slice_copy", {v}, {}, {}};
  call.work = static_cast<double>(v.numel());
  return Runtime::get().run1(call, {v.shape(), v.dtype()}, dev);
}

Tensor index_select(const Tensor& x, int64_t axis, const Tensor& indices) {
  Device dev = common_device({&x, &indices}, "index_select");
  require_index_dtype(indices, "index_select");
  const int ax = normalize_axis(axis, x.dim(), "index_select");
  Shape out(x.shape().begin(), x.shape().begin() + ax);
  out.insert(out.end(), indices.shape().begin(), indices.shape().end());
  out.insert(out.end(), x.shape().begin() + ax + 1, x.shape().end());
  validate_shape(out, "index_select");
  if (x.shape()[ax] == 0 && indices.numel() > 0)
    throw_error(ErrorKind::OutOfRange, "index_select", "axis " + std::to_string(ax) + " of " + x.str() + " is empty; no index is valid");
  OpCall call{OpKind::IndexSelect, "index_select", {x, indices}, {}, {}};
  call.attrs.axis = ax;
  call.work = numel_d(out);
  return Runtime::get().run1(call, {out, x.dtype()}, dev);
}

Tensor gather(const Tensor& x, int64_t axis, const Tensor& indices) {
  Device dev = common_device({&x, &indices}, "gather");
  require_index_dtype(indices, "gather");
  const int ax = normalize_axis(axis, x.dim(), "gather");
  if (indices.dim() != x.dim())
    throw_error(ErrorKind::RankMismatch, "gather",
                "indices must have the rank of x (" + std::to_string(x.dim()) + "), got " + indices.str());
  for (int d = 0; d < x.dim(); ++d)
    if (d != ax && indices.shape()[d] > x.shape()[d])
      throw_error(ErrorKind::ShapeMismatch, "gather",
                  "indices " + shape_str(indices.shape()) + " exceed x " + shape_str(x.shape()) + " in dim " + std::to_string(d));
  OpCall call{OpKind::Gather, "gather", {x, indices}, {}, {}};
  call.attrs.axis = ax;
  call.work = static_cast<double>(indices.numel());
  return Runtime::get().run1(call, {indices.shape(), x.dtype()}, dev);
}

}  // namespace wgt
