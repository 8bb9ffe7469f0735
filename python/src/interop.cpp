// Conversions between Python objects and wgtensor values: dtypes, devices, axes, NumPy arrays
// (zero-copy both ways for host memory) and DLPack capsules.
#include <dlpack/dlpack.h>

#include <cstring>

#include "common.hpp"

namespace wgtpy {
namespace {

// NumPy kind + itemsize -> wgtensor dtype.
std::optional<DType> dtype_of_numpy(const py::dtype& d) {
  const char kind = d.kind();
  const auto size = d.itemsize();
  if (kind == 'f' && size == 4) return DType::F32;
  if (kind == 'f' && size == 2) return DType::F16;
  if (kind == 'f' && size == 8) return DType::F64;
  if (kind == 'i' && size == 4) return DType::I32;
  if (kind == 'i' && size == 8) return DType::I64;
  if (kind == 'u' && size == 1) return DType::U8;
  if (kind == 'b' && size == 1) return DType::Bool;
  if (kind == 'c' && size == 8) return DType::C64;
  return std::nullopt;
}

DType dtype_of_numpy_or_throw(const py::dtype& d, const char* op) {
  if (auto t = dtype_of_numpy(d)) return *t;
  wgt::throw_error(wgt::ErrorKind::DTypeMismatch, op,
                   "NumPy dtype " + std::string(py::str(py::object(d))) +
                       " has no wgtensor dtype (f32, f16, bf16, f64, i32, i64, u8, bool, c64); convert it with astype() first");
}

// Releases a Python reference from any thread (a tensor may die on a runtime thread).
std::shared_ptr<const void> keep_python_object(py::object obj) {
  PyObject* p = obj.release().ptr();
  return std::shared_ptr<const void>(p, [](const void* q) {
    if (!Py_IsInitialized()) return;  // interpreter gone: nothing left to release into
    py::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject*>(const_cast<void*>(q)));
  });
}

// Element strides and the byte span of a strided layout with non-negative strides; false when
// a stride is negative or not a whole number of elements. Size-1 dims do not constrain.
bool element_layout(const std::vector<int64_t>& shape, const std::vector<int64_t>& byte_strides, int64_t itemsize,
                    wgt::Strides& strides, int64_t& span_bytes) {
  strides.assign(shape.size(), 0);
  int64_t last = 0;
  const wgt::Strides dense = wgt::contiguous_strides(shape);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) {
      strides[i] = dense[i];
      continue;
    }
    if (byte_strides[i] < 0 || byte_strides[i] % itemsize) return false;
    strides[i] = byte_strides[i] / itemsize;
    last += (shape[i] - 1) * strides[i];
  }
  span_bytes = (last + 1) * itemsize;
  return true;
}

}  // namespace

DType to_dtype(py::handle obj) {
  if (py::isinstance<py::str>(obj)) {
    const std::string s = obj.cast<std::string>();
    try {
      return wgt::dtype_from_name(s);
    } catch (const wgt::Error&) {
      if (s == "bfloat16") return DType::BF16;
      // NumPy spellings: "float32", "int64", "bool", ... (NumPy raises TypeError for others).
      return dtype_of_numpy_or_throw(py::dtype(s), "dtype");
    }
  }
  return dtype_of_numpy_or_throw(py::dtype::from_args(py::reinterpret_borrow<py::object>(obj)), "dtype");
}

py::dtype to_numpy_dtype(DType t, const char* op) {
  switch (t) {
    case DType::F32: return py::dtype("float32");
    case DType::F16: return py::dtype("float16");
    case DType::F64: return py::dtype("float64");
    case DType::I32: return py::dtype("int32");
    case DType::I64: return py::dtype("int64");
    case DType::U8: return py::dtype("uint8");
    case DType::Bool: return py::dtype("bool");
    case DType::C64: return py::dtype("complex64");
    case DType::BF16: break;
  }
  wgt::throw_error(wgt::ErrorKind::Unsupported, op, std::string("NumPy has no dtype for ") + wgt::dtype_name(t));
}

Device to_device(py::handle obj) {
  if (obj.is_none()) return Device::cpu();
  return Device::parse(py::str(obj).cast<std::string>());
}

std::vector<int64_t> to_axes(py::handle obj) {
  if (obj.is_none()) return {};
  if (py::isinstance<py::int_>(obj)) return {obj.cast<int64_t>()};
  return obj.cast<std::vector<int64_t>>();
}

Tensor from_numpy(py::array arr, bool copy) {
  const DType dt = dtype_of_numpy_or_throw(arr.dtype(), "from_numpy");
  const int64_t item = static_cast<int64_t>(arr.itemsize());
  std::vector<int64_t> shape(arr.shape(), arr.shape() + arr.ndim());
  std::vector<int64_t> bstrides(arr.strides(), arr.strides() + arr.ndim());
  const int flags = arr.flags();
  const bool borrowable = !copy && arr.size() > 0 && arr.writeable() &&
                          (flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_) != 0 &&
                          arr.dtype().attr("isnative").cast<bool>();
  wgt::Strides strides;
  int64_t span = 0;
  if (borrowable && element_layout(shape, bstrides, item, strides, span)) {
    auto* data = static_cast<uint8_t*>(arr.mutable_data());
    auto storage = wgt::Storage::external(data, static_cast<size_t>(span), keep_python_object(arr));
    return Tensor(std::move(storage), shape, strides, 0, dt);
  }
  // A copy: native byte order, C order.
  py::array c = py::module_::import("numpy").attr("ascontiguousarray")(
      arr, arr.dtype().attr("newbyteorder")("="));
  return Tensor::from_host(c.data(), static_cast<size_t>(c.nbytes()), shape, dt);
}

py::array to_numpy(const Tensor& t0) {
  if (!t0.defined()) wgt::throw_error(wgt::ErrorKind::InvalidArgument, "Tensor.__array__", "undefined tensor");
  Tensor t;
  {
    py::gil_scoped_release nogil;  // a download waits on the device
    t = t0.dtype() == DType::BF16 ? wgt::cast(t0, DType::F32).cpu() : t0.cpu();
  }
  const int64_t item = static_cast<int64_t>(wgt::dtype_size(t.dtype()));
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end()), strides;
  for (int64_t s : t.strides()) strides.push_back(static_cast<py::ssize_t>(s * item));
  void* data = t.numel() ? t.data_ptr() : nullptr;
  auto* owner = new Tensor(t);
  py::capsule base(owner, [](void* p) { delete static_cast<Tensor*>(p); });
  if (!data) {
    // NumPy wants a valid pointer even for no elements: a fresh empty array (nothing shared).
    return py::array(to_numpy_dtype(t.dtype(), "Tensor.__array__"), shape);
  }
  return py::array(to_numpy_dtype(t.dtype(), "Tensor.__array__"), shape, strides, data, base);
}

std::optional<Tensor> as_tensor(py::handle obj, const Tensor* like) {
  if (py::isinstance<Tensor>(obj)) return obj.cast<Tensor>();
  if (py::isinstance<py::array>(obj)) return from_numpy(py::reinterpret_borrow<py::array>(obj));
  const bool scalar = py::isinstance<py::float_>(obj) || py::isinstance<py::int_>(obj) || py::isinstance<py::bool_>(obj);
  if (!scalar) return std::nullopt;
  if (like) return wgt::scalar_like(*like, obj.cast<double>());
  return from_numpy(py::array(py::module_::import("numpy").attr("asarray")(obj)), true);
}

Tensor require_tensor(py::handle obj, const Tensor* like, const char* op) {
  if (auto t = as_tensor(obj, like)) return *t;
  throw py::type_error(std::string(op) + ": expected a wgtensor.Tensor, a NumPy array or a number, got " +
                       std::string(py::str(py::type::of(obj))));
}

// ---- DLPack ----
namespace {
struct ExportCtx {
  Tensor t;
  std::vector<int64_t> shape, strides;
  DLManagedTensor managed{};
};

DLDataType dl_dtype(DType t) {
  switch (t) {
    case DType::F32: return {kDLFloat, 32, 1};
    case DType::F16: return {kDLFloat, 16, 1};
    case DType::F64: return {kDLFloat, 64, 1};
    case DType::BF16: return {kDLBfloat, 16, 1};
    case DType::I32: return {kDLInt, 32, 1};
    case DType::I64: return {kDLInt, 64, 1};
    case DType::U8: return {kDLUInt, 8, 1};
    case DType::C64: return {kDLComplex, 64, 1};
    case DType::Bool: break;
  }
  wgt::throw_error(wgt::ErrorKind::Unsupported, "Tensor.__dlpack__",
                   "DLPack 0.6 has no bool type; cast to u8 or use numpy.asarray(tensor)");
}

constexpr uint8_t kDLBoolCode = 6;  // added to DLPack after 0.6 (what newer producers send)

DType dtype_of_dl(DLDataType d) {
  if (d.lanes == 1) {
    if (d.code == kDLFloat && d.bits == 32) return DType::F32;
    if (d.code == kDLFloat && d.bits == 16) return DType::F16;
    if (d.code == kDLFloat && d.bits == 64) return DType::F64;
    if (d.code == kDLBfloat && d.bits == 16) return DType::BF16;
    if (d.code == kDLInt && d.bits == 32) return DType::I32;
    if (d.code == kDLInt && d.bits == 64) return DType::I64;
    if (d.code == kDLUInt && d.bits == 8) return DType::U8;
    if (d.code == kDLComplex && d.bits == 64) return DType::C64;
    if (d.code == kDLBoolCode && d.bits == 8) return DType::Bool;
  }
  wgt::throw_error(wgt::ErrorKind::DTypeMismatch, "from_dlpack",
                   "DLPack dtype (code " + std::to_string(d.code) + ", " + std::to_string(d.bits) + " bits, " +
                       std::to_string(d.lanes) + " lanes) has no wgtensor dtype");
}

void delete_unconsumed(PyObject* capsule) {
  // A capsule nobody consumed still owns its tensor (a consumer renames it "used_dltensor").
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
    if (m && m->deleter) m->deleter(m);
  }
}
}  // namespace

py::tuple dlpack_device(const Tensor& t) {
  // WebGPU has no DLPack device type: an extension device, which consumers refuse.
  if (t.device().is_cpu()) return py::make_tuple(static_cast<int>(kDLCPU), 0);
  return py::make_tuple(static_cast<int>(kDLExtDev), t.device().index);
}

py::capsule to_dlpack(const Tensor& t) {
  if (!t.device().is_cpu())
    wgt::throw_error(wgt::ErrorKind::Unsupported, "Tensor.__dlpack__",
                     "tensor lives on " + t.device().str() + "; DLPack export is for host tensors: call .cpu() first");
  auto ctx = std::make_unique<ExportCtx>();
  ctx->t = t;
  ctx->shape = t.shape();
  ctx->strides = t.strides();
  DLTensor& d = ctx->managed.dl_tensor;
  d.data = t.numel() ? t.data_ptr() : nullptr;
  d.device = {kDLCPU, 0};
  d.ndim = t.dim();
  d.dtype = dl_dtype(t.dtype());
  d.shape = ctx->shape.data();
  d.strides = ctx->strides.data();
  d.byte_offset = 0;
  ctx->managed.manager_ctx = ctx.get();
  ctx->managed.deleter = [](DLManagedTensor* m) { delete static_cast<ExportCtx*>(m->manager_ctx); };
  DLManagedTensor* m = &ctx.release()->managed;
  PyObject* cap = PyCapsule_New(m, "dltensor", delete_unconsumed);
  if (!cap) {
    m->deleter(m);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(cap);
}

Tensor from_dlpack(py::object obj) {
  py::object cap = obj;
  if (!PyCapsule_CheckExact(obj.ptr())) {
    if (!py::hasattr(obj, "__dlpack__"))
      throw py::type_error("from_dlpack: expected an object with __dlpack__ or a DLPack capsule");
    cap = obj.attr("__dlpack__")();
  }
  if (!PyCapsule_IsValid(cap.ptr(), "dltensor"))
    wgt::throw_error(wgt::ErrorKind::InvalidArgument, "from_dlpack", "not an unconsumed 'dltensor' capsule");
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
  const DLTensor& d = m->dl_tensor;
  if (d.device.device_type != kDLCPU && d.device.device_type != kDLCUDAHost)
    wgt::throw_error(wgt::ErrorKind::Unsupported, "from_dlpack",
                     "DLPack device type " + std::to_string(d.device.device_type) + " is not host memory");
  const DType dt = dtype_of_dl(d.dtype);
  const int64_t item = static_cast<int64_t>(wgt::dtype_size(dt));
  std::vector<int64_t> shape(d.shape, d.shape + d.ndim);
  std::vector<int64_t> bstrides(shape.size());
  const wgt::Strides dense = wgt::contiguous_strides(shape);
  for (size_t i = 0; i < shape.size(); ++i) bstrides[i] = (d.strides ? d.strides[i] : dense[i]) * item;
  wgt::Strides strides;
  int64_t span = 0;
  if (!element_layout(shape, bstrides, item, strides, span))
    wgt::throw_error(wgt::ErrorKind::Unsupported, "from_dlpack", "negative strides; make the source contiguous first");
  // Consumed from here on: the capsule's destructor leaves the tensor to us.
  PyCapsule_SetName(cap.ptr(), "used_dltensor");
  std::shared_ptr<const void> keep(m, [](const void* p) {
    auto* mt = static_cast<DLManagedTensor*>(const_cast<void*>(p));
    if (mt->deleter) mt->deleter(mt);  // producers take the GIL themselves where they need it
  });
  int64_t numel = 1;
  for (int64_t s : shape) numel *= s;
  if (numel == 0) return Tensor::empty(shape, dt);
  auto* data = static_cast<uint8_t*>(d.data) + d.byte_offset;
  return Tensor(wgt::Storage::external(data, static_cast<size_t>(span), std::move(keep)), shape, strides, 0, dt);
}

}  // namespace wgtpy
