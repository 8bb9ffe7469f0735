// Shared helpers of the Python bindings: argument conversions (dtype, device, axes, tensor
// operands) and the NumPy / DLPack interop used by several binding files.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "wgt/wgt.hpp"

namespace wgtpy {
namespace py = pybind11;
using wgt::Device;
using wgt::DType;
using wgt::Tensor;

// Ops release the GIL while they run: a WebGPU read waits on the device, and CPU ops of
// several Python threads run concurrently (the runtime is thread-safe; docs/architecture.md).
using release_gil = py::call_guard<py::gil_scoped_release>;

// A wgtensor dtype from a name ("f32", "float32"), a NumPy dtype or scalar type, or a Python
// type (float -> f64, as NumPy does). DTypeMismatch for types wgtensor has not.
DType to_dtype(py::handle obj);
// The NumPy dtype of a wgtensor dtype (bf16 has none: Unsupported).
py::dtype to_numpy_dtype(DType t, const char* op);
// "cpu", "webgpu", "webgpu:1", or None (cpu).
Device to_device(py::handle obj);
// None -> every axis, an int, or a sequence of ints.
std::vector<int64_t> to_axes(py::handle obj);

// A tensor over a NumPy array's memory (zero-copy for a writeable, aligned, native-endian array
// with non-negative strides; a copy otherwise or when `copy`). The tensor keeps the array alive.
Tensor from_numpy(py::array arr, bool copy = false);
// A NumPy array over a host tensor's memory (zero-copy; the array keeps the tensor's storage
// alive). Device tensors are downloaded first; bf16 is widened to f32 (copies).
py::array to_numpy(const Tensor& t);
// Operand conversion: a Tensor, a NumPy array (from_numpy) or a Python scalar. A scalar takes
// the dtype and device of `like` (the other operand), as the C++ add(Tensor, double) does.
// nullopt when `obj` is none of these.
std::optional<Tensor> as_tensor(py::handle obj, const Tensor* like);
Tensor require_tensor(py::handle obj, const Tensor* like, const char* op);

// DLPack (dlpack 0.6 ABI, unversioned "dltensor" capsules).
py::capsule to_dlpack(const Tensor& t);
py::tuple dlpack_device(const Tensor& t);
Tensor from_dlpack(py::object obj);

// Binding entry points, one per file.
void init_errors(py::module_& m);
void init_tensor(py::module_& m);
void init_ops(py::module_& m);
void init_nn(py::module_& m);
void init_quant(py::module_& m);
void init_model(py::module_& m);
void init_runtime(py::module_& m);
void init_session(py::module_& m);

}  // namespace wgtpy
