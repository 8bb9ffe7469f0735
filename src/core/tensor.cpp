// Tensor handle: construction, host transfer, zero-copy views, compaction and placement.
#include "wgt/tensor.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/strided.hpp"
#include "wgt/ops.hpp"
#include "wgt/runtime.hpp"

namespace wgt {

Tensor::Tensor(std::shared_ptr<Storage> storage, Shape shape, Strides strides, int64_t offset, DType dtype)
    : storage_(std::move(storage)), shape_(std::move(shape)), strides_(std::move(strides)), offset_(offset), dtype_(dtype) {
  numel_ = validate_shape(shape_, "Tensor");
  if (strides_.size() != shape_.size())
    throw_error(ErrorKind::RankMismatch, "Tensor", "strides rank differs from shape rank");
  if (storage_ && numel_ > 0) {  // bounds of the view must lie inside the storage
    int64_t lo = offset_, hi = offset_;
    for (size_t i = 0; i < shape_.size(); ++i) {
      int64_t span = checked_mul(strides_[i], shape_[i] - 1, "Tensor");
      if (span < 0) lo += span; else hi += span;
    }
    int64_t cap = static_cast<int64_t>(storage_->nbytes() / dtype_size(dtype_));
    if (lo < 0 || hi >= cap)
      throw_error(ErrorKind::OutOfRange, "Tensor", "view " + shape_str(shape_) + " exceeds its storage");
  }
}

Tensor::Tensor(Tensor&& o) noexcept
    : storage_(std::move(o.storage_)), shape_(std::move(o.shape_)), strides_(std::move(o.strides_)),
      offset_(o.offset_), numel_(o.numel_), dtype_(o.dtype_) {
  o = Tensor();
}

Tensor& Tensor::operator=(Tensor&& o) noexcept {
  if (this == &o) return *this;
  storage_ = std::move(o.storage_);
  shape_ = std::move(o.shape_);
  strides_ = std::move(o.strides_);
  offset_ = o.offset_;
  numel_ = o.numel_;
  dtype_ = o.dtype_;
  o.shape_.clear();  // (a moved-from vector is only "valid but unspecified")
  o.strides_.clear();
  o.offset_ = 0;
  o.numel_ = 0;
  o.dtype_ = DType::F32;
  return *this;
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  int64_t n = validate_shape(shape, "empty");
  size_t bytes = static_cast<size_t>(n) * dtype_size(dtype);
  auto st = std::make_shared<Storage>(bytes, device);
  if (device.is_webgpu()) Runtime::get().upload(*st);  // allocates the device buffer
  return Tensor(std::move(st), shape, contiguous_strides(shape), 0, dtype);
}

Tensor Tensor::from_host(const void* data, size_t nbytes, const Shape& shape, DType dtype, Device device) {
  int64_t n = validate_shape(shape, "from_host");
  size_t need = static_cast<size_t>(n) * dtype_size(dtype);
  if (nbytes != need)
    throw_error(ErrorKind::ShapeMismatch, "from_host",
                "got " + std::to_string(nbytes) + " bytes but shape " + shape_str(shape) + " of " + dtype_name(dtype) +
                    " needs " + std::to_string(need));
  if (need > 0 && !data) throw_error(ErrorKind::InvalidArgument, "from_host", "null data pointer");
  auto st = std::make_shared<Storage>(need, device);
  st->ensure_host();
  if (need) std::memcpy(st->host_data(), data, need);
  if (device.is_webgpu()) Runtime::get().upload(*st);
  return Tensor(std::move(st), shape, contiguous_strides(shape), 0, dtype);
}

Device Tensor::device() const { return storage_ ? storage_->device() : Device::cpu(); }

int64_t Tensor::size(int64_t d) const { return shape_[normalize_axis(d, dim(), "Tensor::size")]; }

bool Tensor::is_contiguous() const {
  int64_t expect = 1;
  for (size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] == 1) continue;
    if (strides_[i] != expect) return false;
    expect *= shape_[i];
  }
  return true;
}

std::string Tensor::str() const {
  if (!defined()) return "Tensor(undefined)";
  return std::string("Tensor(") + dtype_name(dtype_) + ", " + shape_str(shape_) + ", " + device().str() + ")";
}

static void require_defined(const Tensor& t, const char* op) {
  if (!t.defined()) throw_error(ErrorKind::InvalidArgument, op, "tensor is undefined (default-constructed)");
}

void* Tensor::data_ptr() const {
  require_defined(*this, "Tensor::data_ptr");
  if (!device().is_cpu())
    throw_error(ErrorKind::RuntimeState, "Tensor::data_ptr",
                "tensor lives on " + device().str() + "; call .cpu() or copy_to_host() to read it");
  return storage_->host_data() + offset_ * static_cast<int64_t>(dtype_size(dtype_));
}

void Tensor::copy_to_host(void* dst, size_t nbytes) const {
  require_defined(*this, "Tensor::copy_to_host");
  if (nbytes != this->nbytes())
    throw_error(ErrorKind::ShapeMismatch, "Tensor::copy_to_host",
                "destination has " + std::to_string(nbytes) + " bytes, tensor needs " + std::to_string(this->nbytes()));
  if (numel_ == 0) return;
  const size_t es = dtype_size(dtype_);
  if (device().is_cpu()) {
    detail::strided_copy_bytes(storage_->host_data(), shape_, strides_, offset_, es, static_cast<uint8_t*>(dst));
    return;
  }
  if (is_contiguous()) {
    Runtime::get().read_bytes(*storage_, static_cast<size_t>(offset_) * es, dst, nbytes);
    return;
  }
  Runtime::get().read_strided(*this, dst);  // the runtime decides where the view is compacted
}

double Tensor::item() const {
  require_defined(*this, "Tensor::item");
  if (numel_ != 1)
    throw_error(ErrorKind::ShapeMismatch, "Tensor::item", "item() needs exactly one element, tensor has shape " + shape_str(shape_));
  Tensor c = dtype_ == DType::F64 ? *this : cast(*this, DType::F64);
  double v = 0;
  c.copy_to_host(&v, sizeof v);
  return v;
}

// ---- views ----

// Strides for viewing (shape_, strides_) as `target` without copying, or empty if impossible.
static bool compute_view_strides(const Shape& old_shape, const Strides& old_strides, const Shape& target, Strides& out) {
  out.assign(target.size(), 0);
  int64_t numel = 1;
  for (auto d : old_shape) numel *= d;
  if (numel == 0) { out = contiguous_strides(target); return true; }
  // A 0-d tensor has no dims to walk: its one element views as any all-ones shape.
  if (old_shape.empty()) { out = contiguous_strides(target); return true; }
  int view_d = static_cast<int>(target.size()) - 1;
  int64_t chunk_base_stride = old_strides.empty() ? 1 : old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int tensor_d = static_cast<int>(old_shape.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= old_shape[tensor_d];
    if (tensor_d == 0 || (old_shape[tensor_d - 1] != 1 && old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || target[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= target[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (tensor_d > 0) {
        chunk_base_stride = old_strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

static Shape infer_shape(const Shape& shape, int64_t numel, const char* op) {
  Shape out = shape;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer >= 0) throw_error(ErrorKind::InvalidArgument, op, "only one dimension can be -1");
      infer = static_cast<int>(i);
    } else if (out[i] < 0) {
      throw_error(ErrorKind::InvalidArgument, op, "negative dimension in " + shape_str(shape));
    } else {
      known = checked_mul(known, out[i], op);
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0)
      throw_error(ErrorKind::ShapeMismatch, op, "cannot infer -1 in " + shape_str(shape) + " for " + std::to_string(numel) + " elements");
    out[infer] = numel / known;
  }
  if (validate_shape(out, op) != numel)
    throw_error(ErrorKind::ShapeMismatch, op,
                "shape " + shape_str(shape) + " does not hold " + std::to_string(numel) + " elements");
  return out;
}

Tensor Tensor::view(const Shape& shape) const {
  require_defined(*this, "Tensor::view");
  Shape target = infer_shape(shape, numel_, "Tensor::view");
  Strides st;
  if (!compute_view_strides(shape_, strides_, target, st))
    throw_error(ErrorKind::InvalidArgument, "Tensor::view",
                "layout of " + str() + " cannot be viewed as " + shape_str(target) + "; use reshape() (copies)");
  return Tensor(storage_, target, st, offset_, dtype_);
}

Tensor Tensor::reshape(const Shape& shape) const {
  require_defined(*this, "Tensor::reshape");
  Shape target = infer_shape(shape, numel_, "Tensor::reshape");
  Strides st;
  if (compute_view_strides(shape_, strides_, target, st)) return Tensor(storage_, target, st, offset_, dtype_);
  return contiguous().view(target);
}

Tensor Tensor::permute(const std::vector<int64_t>& dims) const {
  require_defined(*this, "Tensor::permute");
  if (static_cast<int>(dims.size()) != dim())
    throw_error(ErrorKind::RankMismatch, "Tensor::permute",
                "got " + std::to_string(dims.size()) + " dims for a tensor of rank " + std::to_string(dim()));
  std::vector<bool> seen(dim(), false);
  Shape sh(dim());
  Strides st(dim());
  for (int i = 0; i < dim(); ++i) {
    int d = normalize_axis(dims[i], dim(), "Tensor::permute");
    if (seen[d]) throw_error(ErrorKind::InvalidArgument, "Tensor::permute", "dimension " + std::to_string(d) + " repeated");
    seen[d] = true;
    sh[i] = shape_[d];
    st[i] = strides_[d];
  }
  return Tensor(storage_, sh, st, offset_, dtype_);
}

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  require_defined(*this, "Tensor::transpose");
  if (dim() < 2 && (d0 == -2 || d1 == -2))
    throw_error(ErrorKind::RankMismatch, "Tensor::transpose", "needs rank >= 2, got " + str());
  int a = normalize_axis(d0, dim(), "Tensor::transpose"), b = normalize_axis(d1, dim(), "Tensor::transpose");
  std::vector<int64_t> p(dim());
  for (int i = 0; i < dim(); ++i) p[i] = i;
  std::swap(p[a], p[b]);
  return permute(p);
}

Tensor Tensor::slice(int64_t d, int64_t start, int64_t stop, int64_t step) const {
  require_defined(*this, "Tensor::slice");
  int ax = normalize_axis(d, dim(), "Tensor::slice");
  if (step <= 0) throw_error(ErrorKind::InvalidArgument, "Tensor::slice", "step must be positive, got " + std::to_string(step));
  const int64_t n = shape_[ax];
  auto clamp = [n](int64_t v) { if (v < 0) v += n; return std::clamp<int64_t>(v, 0, n); };
  start = clamp(start);
  stop = clamp(stop);
  int64_t len = stop > start ? (stop - start + step - 1) / step : 0;
  Shape sh = shape_;
  Strides st = strides_;
  sh[ax] = len;
  st[ax] = strides_[ax] * step;
  int64_t off = len > 0 ? offset_ + start * strides_[ax] : offset_;
  return Tensor(storage_, sh, st, off, dtype_);
}

Tensor Tensor::select(int64_t d, int64_t index) const {
  require_defined(*this, "Tensor::select");
  int ax = normalize_axis(d, dim(), "Tensor::select");
  int64_t n = shape_[ax];
  if (index < -n || index >= n)
    throw_error(ErrorKind::OutOfRange, "Tensor::select", "index " + std::to_string(index) + " out of range for size " + std::to_string(n));
  if (index < 0) index += n;
  Shape sh = shape_;
  Strides st = strides_;
  sh.erase(sh.begin() + ax);
  st.erase(st.begin() + ax);
  return Tensor(storage_, sh, st, offset_ + index * strides_[ax], dtype_);
}

Tensor Tensor::expand(const Shape& shape) const {
  require_defined(*this, "Tensor::expand");
  if (shape.size() < shape_.size())
    throw_error(ErrorKind::RankMismatch, "Tensor::expand", "cannot expand " + str() + " to fewer dims " + shape_str(shape));
  size_t lead = shape.size() - shape_.size();
  Strides st(shape.size(), 0);
  Shape sh = shape;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i < lead) continue;
    int64_t have = shape_[i - lead];
    if (sh[i] == -1) sh[i] = have;
    if (have == sh[i]) st[i] = strides_[i - lead];
    else if (have == 1) st[i] = 0;
    else throw_error(ErrorKind::ShapeMismatch, "Tensor::expand", "cannot expand " + shape_str(shape_) + " to " + shape_str(shape));
  }
  validate_shape(sh, "Tensor::expand");  // after resolving -1 (which keeps an existing dim)
  return Tensor(storage_, sh, st, offset_, dtype_);
}

Tensor Tensor::squeeze(int64_t d) const {
  require_defined(*this, "Tensor::squeeze");
  int ax = normalize_axis(d, dim(), "Tensor::squeeze");
  if (shape_[ax] != 1) return *this;
  Shape sh = shape_;
  Strides st = strides_;
  sh.erase(sh.begin() + ax);
  st.erase(st.begin() + ax);
  return Tensor(storage_, sh, st, offset_, dtype_);
}

Tensor Tensor::squeeze() const {
  require_defined(*this, "Tensor::squeeze");
  Shape sh;
  Strides st;
  for (int i = 0; i < dim(); ++i)
    if (shape_[i] != 1) { sh.push_back(shape_[i]); st.push_back(strides_[i]); }
  return Tensor(storage_, sh, st, offset_, dtype_);
}

Tensor Tensor::unsqueeze(int64_t d) const {
  require_defined(*this, "Tensor::unsqueeze");
  int ax = normalize_axis(d, dim() + 1, "Tensor::unsqueeze");
  Shape sh = shape_;
  Strides st = strides_;
  int64_t s = ax < dim() ? strides_[ax] * shape_[ax] : 1;
  sh.insert(sh.begin() + ax, 1);
  st.insert(st.begin() + ax, s);
  return Tensor(storage_, sh, st, offset_, dtype_);
}

// ---- copies ----

Tensor Tensor::contiguous() const {
  require_defined(*this, "Tensor::contiguous");
  if (is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  require_defined(*this, "Tensor::clone");
  OpCall call{OpKind::Copy, "contiguous", {*this}, {}, {}};
  call.work = static_cast<double>(numel_);
  return Runtime::get().run1(call, {shape_, dtype_}, device());
}

Tensor Tensor::to(Device d) const {
  require_defined(*this, "Tensor::to");
  if (device() == d) return *this;
  if (d.is_cpu()) {
    Tensor out = Tensor::empty(shape_, dtype_, d);
    copy_to_host(out.data_ptr(), nbytes());
    return out;
  }
  // Host -> device: the view is compacted on the host, straight into the bytes to upload. Not
  // with contiguous(): that is an op, and the runtime calls to() to move an op's inputs, so
  // the policy could send the compaction back here (unbounded recursion). Device -> device
  // goes via the host.
  const Tensor src = device().is_cpu() ? *this : to(Device::cpu());
  auto st = std::make_shared<Storage>(src.nbytes(), d);
  if (src.is_contiguous()) {
    // The upload reads src's bytes in place (no staging copy; matters for weights mapped from
    // a file) and drops the borrowed reference when done.
    st->borrow_host(static_cast<uint8_t*>(src.data_ptr()), src.storage());
  } else {
    st->ensure_host();
    src.copy_to_host(st->host_data(), src.nbytes());
  }
  Runtime::get().upload(*st);
  return Tensor(std::move(st), shape_, contiguous_strides(shape_), 0, dtype_);
}

}  // namespace wgt
