// Validation helpers shared by the op front-ends (src/ops/*.cpp): every check throws a
// wgt::Error that names the public op and says how to fix the call.
#pragma once
#include <string>
#include <vector>

#include "wgt/backend.hpp"
#include "wgt/runtime.hpp"

namespace wgt::ops_detail {

inline void require_defined(const Tensor& t, const char* op, const char* what = "input") {
  if (!t.defined())
    throw_error(ErrorKind::InvalidArgument, op,
                std::string(what) + " is an undefined (default-constructed) tensor; pass a real tensor");
}

// All tensors must be defined and live on one device; returns that device.
inline Device common_device(const std::vector<const Tensor*>& ts, const char* op) {
  for (const Tensor* t : ts) require_defined(*t, op);
  Device d = ts.front()->device();
  for (const Tensor* t : ts)
    if (t->device() != d)
      throw_error(ErrorKind::InvalidArgument, op,
                  "inputs live on different devices (" + d.str() + " and " + t->device().str() +
                      "); move them with .to(device) first");
  return d;
}

inline std::string dt(DType t) { return dtype_name(t); }

inline void require_floating(const Tensor& x, const char* op) {
  if (!is_floating(x.dtype()))
    throw_error(ErrorKind::DTypeMismatch, op,
                "needs a floating dtype (f32, f16, bf16, f64), got " + dt(x.dtype()) + "; cast() the input first");
}

inline void require_same_dtype(const Tensor& a, const Tensor& b, const char* op, const char* what_b) {
  if (a.dtype() != b.dtype())
    throw_error(ErrorKind::DTypeMismatch, op,
                std::string(what_b) + " has dtype " + dt(b.dtype()) + " but the input has " + dt(a.dtype()) +
                    "; cast() them to one dtype");
}

// The addend c of a fused `c + product` (addmm_t, addqmm_t, ...): defined, of the product's
// dtype and exactly its shape (operands_ok = false: the product has no addend form).
inline void require_addend(const Tensor& c, const Shape& out, DType out_dtype, const char* op, bool operands_ok = true) {
  require_defined(c, op, "the addend");
  if (c.dtype() != out_dtype)
    throw_error(ErrorKind::DTypeMismatch, op,
                "the addend is " + dt(c.dtype()) + ", the product " + dt(out_dtype) + "; cast() it first");
  if (c.shape() != out || !operands_ok)
    throw_error(ErrorKind::ShapeMismatch, op,
                "the addend must have the product's shape " + shape_str(out) + " (expand() a bias), got " +
                    shape_str(c.shape()));
}

inline double numel_d(const Shape& s) {
  double n = 1;
  for (int64_t d : s) n *= static_cast<double>(d);
  return n;
}

}  // namespace wgt::ops_detail
