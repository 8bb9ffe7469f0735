// The public ops of wgt/ops.hpp as module functions (docstrings from the header's comments),
// the creation functions and the NumPy / DLPack entry points.
#include "common.hpp"

namespace wgtpy {
namespace {

using wgt::Tensor;

wgt::GeluApprox to_gelu(const std::string& s) {
  if (s == "erf") return wgt::GeluApprox::Erf;
  if (s == "tanh") return wgt::GeluApprox::Tanh;
  wgt::throw_error(wgt::ErrorKind::InvalidArgument, "gelu", "approximate must be 'erf' or 'tanh', got '" + s + "'");
}

// Binary op over tensors, arrays or scalars (a scalar takes the other operand's dtype/device).
template <Tensor (*F)(const Tensor&, const Tensor&)>
Tensor binary(py::object a, py::object b, const char* name) {
  std::optional<Tensor> ta = py::isinstance<Tensor>(a) || py::isinstance<py::array>(a) ? as_tensor(a, nullptr) : std::nullopt;
  std::optional<Tensor> tb = py::isinstance<Tensor>(b) || py::isinstance<py::array>(b) ? as_tensor(b, nullptr) : std::nullopt;
  if (!ta && !tb) ta = require_tensor(a, nullptr, name);
  if (!ta) ta = require_tensor(a, &*tb, name);
  if (!tb) tb = require_tensor(b, &*ta, name);
  py::gil_scoped_release nogil;
  return F(*ta, *tb);
}

Tensor to_host_tensor(py::object obj, py::object dtype, bool copy) {
  py::object np = py::module_::import("numpy");
  py::array a = np.attr("asarray")(obj);
  if (!dtype.is_none()) a = a.attr("astype")(to_numpy_dtype(to_dtype(dtype), "tensor"), py::arg("copy") = false);
  else if (a.dtype().kind() == 'f' && a.itemsize() == 8 && !py::isinstance<py::array>(obj))
    a = a.attr("astype")("float32");  // Python floats: f32, the library's default dtype
  else if (a.dtype().kind() == 'i' && a.itemsize() == 8 && !py::isinstance<py::array>(obj))
    a = a.attr("astype")("int64");
  return from_numpy(a, copy);
}

}  // namespace

void init_ops(py::module_& m) {
  // ---- interop and creation ----
  m.def("from_numpy", &from_numpy, py::arg("array"), py::arg("copy") = false,
        "A host tensor over the array's memory: zero-copy for a writeable, aligned, native-endian array with\n"
        "non-negative strides (the tensor keeps the array alive and sees its writes); a copy otherwise or when\n"
        "copy=True. Supported dtypes: float32/16/64, int32/64, uint8, bool, complex64.");
  m.def("tensor", [](py::object data, py::object dtype, py::object device) {
          Tensor t = to_host_tensor(data, dtype, true);
          Device d = to_device(device);
          py::gil_scoped_release nogil;
          return t.to(d);
        }, py::arg("data"), py::arg("dtype") = py::none(), py::arg("device") = "cpu",
        "A new tensor (always a copy) from nested lists, a scalar or an array; Python floats become f32.");
  m.def("asarray", [](py::object data, py::object dtype) {
          if (py::isinstance<Tensor>(data) && dtype.is_none()) return data.cast<Tensor>();
          return to_host_tensor(data, dtype, false);
        }, py::arg("data"), py::arg("dtype") = py::none(),
        "A tensor sharing the data's memory where possible (a Tensor itself, a NumPy array zero-copy).");
  m.def("from_dlpack", &from_dlpack, py::arg("obj"),
        "A host tensor over a DLPack producer's memory (an object with __dlpack__, e.g. a NumPy array, or a\n"
        "capsule): zero-copy; the tensor keeps the producer's buffer alive.");
  m.def("empty", [](const wgt::Shape& s, py::object dt, py::object dev) {
          DType d = to_dtype(dt);
          Device v = to_device(dev);
          py::gil_scoped_release g;
          return Tensor::empty(s, d, v);
        },
        py::arg("shape"), py::arg("dtype") = "f32", py::arg("device") = "cpu",
        "Uninitialized contiguous tensor (on a WebGPU device the bytes are undefined until written).");
  m.def("full", [](const wgt::Shape& s, double v, py::object dt, py::object dev) {
          DType d = to_dtype(dt);
          Device where = to_device(dev);
          py::gil_scoped_release g;
          return wgt::full(s, v, d, where);
        },
        py::arg("shape"), py::arg("value"), py::arg("dtype") = "f32", py::arg("device") = "cpu");
  m.def("zeros", [](const wgt::Shape& s, py::object dt, py::object dev) {
          DType d = to_dtype(dt);
          Device v = to_device(dev);
          py::gil_scoped_release g;
          return wgt::zeros(s, d, v);
        },
        py::arg("shape"), py::arg("dtype") = "f32", py::arg("device") = "cpu");
  m.def("ones", [](const wgt::Shape& s, py::object dt, py::object dev) {
          DType d = to_dtype(dt);
          Device v = to_device(dev);
          py::gil_scoped_release g;
          return wgt::ones(s, d, v);
        },
        py::arg("shape"), py::arg("dtype") = "f32", py::arg("device") = "cpu");
  m.def("arange", [](double start, std::optional<double> stop, double step, py::object dt, py::object dev) {
          DType d = to_dtype(dt);
          Device v = to_device(dev);
          py::gil_scoped_release g;
          return stop ? wgt::arange(start, *stop, step, d, v) : wgt::arange(0, start, step, d, v);
        }, py::arg("start"), py::arg("stop") = py::none(), py::arg("step") = 1.0, py::arg("dtype") = "f32",
        py::arg("device") = "cpu", "[start, stop) with step; numel = ceil((stop-start)/step). arange(n) is [0, n).");
  m.def("rand_uniform", [](const wgt::Shape& s, uint64_t seed, double lo, double hi, py::object dt, py::object dev) {
          DType d = to_dtype(dt);
          Device v = to_device(dev);
          py::gil_scoped_release g;
          return wgt::rand_uniform(s, seed, lo, hi, d, v);
        }, py::arg("shape"), py::arg("seed"), py::arg("low") = 0.0, py::arg("high") = 1.0, py::arg("dtype") = "f32",
        py::arg("device") = "cpu",
        "Counter-based random numbers in [low, high): the value at flat index i depends only on (seed, i), so\n"
        "every backend produces the same tensor.");
  m.def("rand_normal", [](const wgt::Shape& s, uint64_t seed, double mean, double sd, py::object dt, py::object dev) {
          DType d = to_dtype(dt);
          Device v = to_device(dev);
          py::gil_scoped_release g;
          return wgt::rand_normal(s, seed, mean, sd, d, v);
        }, py::arg("shape"), py::arg("seed"), py::arg("mean") = 0.0, py::arg("stddev") = 1.0, py::arg("dtype") = "f32",
        py::arg("device") = "cpu", "Counter-based normal numbers (Box-Muller); the same tensor on every backend.");

  // ---- elementwise ----
  struct Unary { const char* name; Tensor (*f)(const Tensor&); const char* doc; };
  const Unary unary[] = {
      {"neg", &wgt::neg, "-x"}, {"abs", &wgt::abs, "|x|"}, {"exp", &wgt::exp, "e^x"}, {"log", &wgt::log, "natural log"},
      {"sqrt", &wgt::sqrt, "square root"}, {"rsqrt", &wgt::rsqrt, "1 / sqrt(x)"}, {"sin", &wgt::sin, "sine"},
      {"cos", &wgt::cos, "cosine"}, {"tanh", &wgt::tanh, "tanh, with relative accuracy near 0 (tanh(1e-10) = 1e-10), NaN -> NaN"},
      {"sigmoid", &wgt::sigmoid, "1 / (1 + e^-x)"}, {"relu", &wgt::relu, "max(x, 0)"}, {"silu", &wgt::silu, "x * sigmoid(x)"},
      {"conj", &wgt::conj, "complex conjugate (c64); the input itself for real dtypes"},
      {"real", &wgt::real, "real part (c64 -> f32); the input itself for real dtypes"},
      {"imag", &wgt::imag, "imaginary part (c64 -> f32); zeros for real dtypes"},
  };
  for (const auto& u : unary) m.def(u.name, u.f, py::arg("x"), release_gil(), u.doc);
  m.def("gelu", [](const Tensor& x, const std::string& a) { return wgt::gelu(x, to_gelu(a)); }, py::arg("x"),
        py::arg("approximate") = "erf", release_gil(), "GELU, exact ('erf') or the tanh approximation ('tanh').");

  const char* bdoc = "Broadcasts (NumPy rules) and promotes dtypes; a Python number takes the other operand's dtype.";
  const char* cdoc = "Comparison: broadcasts, returns a bool tensor.";
#define WGT_BIN(name, doc) \
  m.def(#name, [](py::object a, py::object b) { return binary<&wgt::name>(a, b, #name); }, py::arg("a"), py::arg("b"), doc)
  WGT_BIN(add, bdoc); WGT_BIN(sub, bdoc); WGT_BIN(mul, bdoc); WGT_BIN(div, bdoc); WGT_BIN(pow, bdoc);
  WGT_BIN(maximum, bdoc); WGT_BIN(minimum, bdoc);
  WGT_BIN(eq, cdoc); WGT_BIN(ne, cdoc); WGT_BIN(lt, cdoc); WGT_BIN(le, cdoc); WGT_BIN(gt, cdoc); WGT_BIN(ge, cdoc);
#undef WGT_BIN
  m.def("where", &wgt::where, py::arg("cond"), py::arg("a"), py::arg("b"), release_gil(),
        "cond (bool) ? a : b, all three broadcast together.");
  m.def("cast", [](const Tensor& x, py::object dt) { DType d = to_dtype(dt); py::gil_scoped_release g; return wgt::cast(x, d); },
        py::arg("x"), py::arg("dtype"),
        "Conversion between any two dtypes (float->int truncates toward zero and saturates to the target's range,\n"
        "NaN -> 0; ->bool is x != 0, NaN -> true; int->int wraps; f32->f16/bf16 rounds to nearest even, overflow\n"
        "-> inf; complex->real takes the real part). Every backend: docs/semantics.md.");

  // ---- reductions ----
  const char* rdoc = "axis: None (every axis), an int or a sequence; negative axes allowed; duplicates rejected.";
  auto def_red = [&](const char* name, Tensor (*f)(const Tensor&, const std::vector<int64_t>&, bool)) {
    m.def(name, [f](const Tensor& x, py::object axis, bool keepdim) {
      auto axes = to_axes(axis);
      py::gil_scoped_release g;
      return f(x, axes, keepdim);
    }, py::arg("x"), py::arg("axis") = py::none(), py::arg("keepdim") = false, rdoc);
  };
  def_red("sum", &wgt::sum);
  def_red("mean", &wgt::mean);
  def_red("max", &wgt::max);
  def_red("min", &wgt::min);
  def_red("prod", &wgt::prod);
  m.def("argmax", &wgt::argmax, py::arg("x"), py::arg("axis"), py::arg("keepdim") = false, release_gil(),
        "Index (i64) of the first maximum along one axis.");

  // ---- linear algebra ----
  m.def("matmul", &wgt::matmul, py::arg("a"), py::arg("b"), release_gil(),
        "a: [..., M, K], b: [..., K, N] -> [..., M, N]; batch dims broadcast; 1-D operands are promoted like\n"
        "numpy.matmul.");
  m.def("matmul_t", &wgt::matmul_t, py::arg("a"), py::arg("b"), release_gil(),
        "a: [..., M, K], b: [..., N, K] -> [..., M, N] (b used transposed, as in x @ W^T).");
  m.def("addmm_t", &wgt::addmm_t, py::arg("c"), py::arg("a"), py::arg("b"), release_gil(),
        "c + a @ b^T with c of the result's shape and dtype (a residual or a broadcast bias); one fused kernel\n"
        "where the backend has one, else the matmul and an add.");
  m.def("rms_norm_matmul_t", &wgt::rms_norm_matmul_t, py::arg("x"), py::arg("weight"), py::arg("w"), py::arg("eps") = 1e-6,
        release_gil(), "rms_norm(x, weight, eps) @ w^T, the normalization fused into the product where the backend can.");
  m.def("silu_mul_matmul_t", &wgt::silu_mul_matmul_t, py::arg("gate"), py::arg("up"), py::arg("w"), py::arg("c") = py::none(),
        release_gil(), "[c +] silu_mul(gate, up) @ w^T (the SwiGLU down projection with its residual c).");

  // ---- normalization / softmax ----
  m.def("softmax", &wgt::softmax, py::arg("x"), py::arg("axis") = -1, release_gil(),
        "A row with a NaN or +inf entry, or with every entry -inf, is all NaN on every backend; -inf entries of\n"
        "other rows give 0 (docs/semantics.md).");
  m.def("log_softmax", &wgt::log_softmax, py::arg("x"), py::arg("axis") = -1, release_gil(),
        "log(softmax(x)); -inf entries of a row give -inf (docs/semantics.md).");
  m.def("rms_norm", &wgt::rms_norm, py::arg("x"), py::arg("weight") = py::none(), py::arg("eps") = 1e-6, release_gil(),
        "Over the last dim: x / sqrt(mean(x^2) + eps) * weight (weight optional, shape [D]). No overflow for finite x.");
  m.def("layer_norm", &wgt::layer_norm, py::arg("x"), py::arg("weight") = py::none(), py::arg("bias") = py::none(),
        py::arg("eps") = 1e-5, release_gil(),
        "Over the last dim: (x - mean) / sqrt(var + eps) * weight + bias (both optional, shape [D]). No overflow for\n"
        "finite x; an inf or NaN element makes the row NaN (docs/semantics.md).");

  // ---- shape / indexing ----
  m.def("concat", &wgt::concat, py::arg("xs"), py::arg("axis") = 0, release_gil(), "Concatenation along axis.");
  m.def("slice_copy", &wgt::slice_copy, py::arg("x"), py::arg("axis"), py::arg("start"), py::arg("stop"), py::arg("step") = 1,
        release_gil(), "Copying slice (the view is Tensor.slice or t[a:b]).");
  m.def("index_select", &wgt::index_select, py::arg("x"), py::arg("axis"), py::arg("indices"), release_gil(),
        "Entries along axis by integer (i32/i64) indices of any shape: out.shape = x.shape[:axis] + idx.shape +\n"
        "x.shape[axis+1:]. Indices out of range raise OutOfRange (on a device at the next read-back).");
  m.def("gather", &wgt::gather, py::arg("x"), py::arg("axis"), py::arg("indices"), release_gil(),
        "torch.gather: out[i..][j][k..] = x[i..][idx[i..][j][k..]][k..]; idx has x's rank.");
}

}  // namespace wgtpy
