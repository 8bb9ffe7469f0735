// Tensor: a cheap handle = shared storage + shape + strides (elements) + offset + dtype.
// Views (reshape of contiguous data, permute, slice, expand, squeeze/unsqueeze) share storage.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "wgt/device.hpp"
#include "wgt/dtype.hpp"
#include "wgt/error.hpp"
#include "wgt/shape.hpp"
#include "wgt/storage.hpp"

namespace wgt {

class Tensor {
 public:
  Tensor() = default;  // undefined tensor
  Tensor(std::shared_ptr<Storage> storage, Shape shape, Strides strides, int64_t offset, DType dtype);
  // A moved-from tensor is an undefined one (numel 0, empty shape), not a handle that lost
  // its storage but still reports its old shape.
  Tensor(const Tensor&) = default;
  Tensor& operator=(const Tensor&) = default;
  Tensor(Tensor&& other) noexcept;
  Tensor& operator=(Tensor&& other) noexcept;

  // Uninitialized tensor, contiguous. On a WebGPU device the bytes are undefined until written.
  static Tensor empty(const Shape& shape, DType dtype, Device device = Device::cpu());
  // Copies `nbytes` (must equal numel*dtype_size) from host memory.
  static Tensor from_host(const void* data, size_t nbytes, const Shape& shape, DType dtype,
                          Device device = Device::cpu());
  template <typename T>
  static Tensor from_vector(const std::vector<T>& v, const Shape& shape, Device device = Device::cpu()) {
    return from_host(v.data(), v.size() * sizeof(T), shape, dtype_of<T>::value, device);
  }
  // Copies the logical elements (row-major, any strides) to host memory of exactly nbytes().
  void copy_to_host(void* dst, size_t nbytes) const;
  template <typename T>
  std::vector<T> to_vector() const {
    if (dtype_of<T>::value != dtype())
      throw_error(ErrorKind::DTypeMismatch, "Tensor::to_vector",
                  std::string("tensor has dtype ") + dtype_name(dtype()) + ", requested " +
                      dtype_name(dtype_of<T>::value) + "; cast() first");
    std::vector<T> out(static_cast<size_t>(numel()));
    copy_to_host(out.data(), out.size() * sizeof(T));
    return out;
  }
  // Scalar value of a one-element tensor, converted to double (real part for complex).
  double item() const;

  bool defined() const { return static_cast<bool>(storage_); }
  const Shape& shape() const { return shape_; }
  const Strides& strides() const { return strides_; }
  int64_t size(int64_t dim) const;
  int dim() const { return static_cast<int>(shape_.size()); }
  int64_t offset() const { return offset_; }
  DType dtype() const { return dtype_; }
  Device device() const;
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }
  bool is_contiguous() const;
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  std::string str() const;  // "Tensor(f32, [2, 3], cpu)"

  // ---- views (zero-copy) ----
  Tensor view(const Shape& shape) const;       // requires a view-compatible layout; -1 infers one dim
  Tensor reshape(const Shape& shape) const;    // view when possible, else contiguous() copy
  Tensor permute(const std::vector<int64_t>& dims) const;
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor t() const { return transpose(-2, -1); }
  Tensor slice(int64_t dim, int64_t start, int64_t stop, int64_t step = 1) const;  // python-like clamping
  Tensor select(int64_t dim, int64_t index) const;  // removes dim
  Tensor expand(const Shape& shape) const;     // broadcast to shape (stride 0 on expanded dims)
  Tensor squeeze(int64_t dim) const;
  Tensor squeeze() const;                      // all size-1 dims
  Tensor unsqueeze(int64_t dim) const;
  Tensor flatten() const { return reshape({numel_}); }

  // ---- copies ----
  Tensor contiguous() const;   // self if already contiguous, else a compacted copy
  Tensor clone() const;        // always a fresh contiguous copy on the same device
  Tensor to(Device device) const;  // explicit transfer (returns self if already there)
  Tensor cpu() const { return to(Device::cpu()); }

  // Host pointer to the first element (CPU tensors only; throws RuntimeState otherwise).
  void* data_ptr() const;
  template <typename T> T* data() const { return static_cast<T*>(data_ptr()); }

 private:
  std::shared_ptr<Storage> storage_;
  Shape shape_;
  Strides strides_;
  int64_t offset_ = 0;
  int64_t numel_ = 0;
  DType dtype_ = DType::F32;
};

}  // namespace wgt
