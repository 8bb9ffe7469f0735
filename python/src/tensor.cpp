// wgtensor.Tensor: the handle (storage + shape + strides + offset + dtype), its views, Python
// indexing, operators and the NumPy / DLPack protocols.
#include "common.hpp"

namespace wgtpy {
namespace {

const char* kTensorDoc = R"doc(A tensor: shared storage (host memory or a WebGPU device) + shape + strides + offset + dtype.

Create one with wgtensor.from_numpy / tensor / zeros / ones / full / arange / rand_* (or
from_dlpack); views (slicing, reshape, permute, ...) share storage. np.asarray(t) is zero-copy
for a host tensor; .to("webgpu") / .cpu() are the explicit transfers. Strides are in elements.)doc";

// Python indexing: ints select (dim removed), slices with a positive step view, None inserts a
// dim, ... fills, and one integer index tensor / array / list selects along its dim
// (index_select). Boolean masks are not indexing here: use where().
Tensor index(const Tensor& t, py::handle key) {
  py::tuple items = py::isinstance<py::tuple>(key) ? py::reinterpret_borrow<py::tuple>(key) : py::make_tuple(key);
  int consumed = 0, ellipses = 0;
  for (auto it : items) {
    if (it.is(py::ellipsis())) ++ellipses;
    else if (!it.is_none()) ++consumed;
  }
  if (ellipses > 1) throw py::index_error("an index can only have a single ellipsis ('...')");
  if (consumed > t.dim())
    wgt::throw_error(wgt::ErrorKind::OutOfRange, "Tensor.__getitem__",
                     "too many indices: " + std::to_string(consumed) + " for a tensor of rank " + std::to_string(t.dim()));
  Tensor r = t;
  int64_t d = 0;  // the dim of r the next index item applies to
  bool advanced = false;
  for (auto it : items) {
    if (it.is(py::ellipsis())) {
      d += t.dim() - consumed;
    } else if (it.is_none()) {
      r = r.unsqueeze(d++);
    } else if (py::isinstance<py::slice>(it)) {
      py::ssize_t start, stop, step, len;
      if (!py::reinterpret_borrow<py::slice>(it).compute(static_cast<py::ssize_t>(r.size(d)), &start, &stop, &step, &len))
        throw py::error_already_set();
      if (step <= 0)
        wgt::throw_error(wgt::ErrorKind::Unsupported, "Tensor.__getitem__",
                         "slices with a negative step are not views here; use index_select with reversed indices");
      r = r.slice(d++, start, start + len * step, step);
    } else if (py::isinstance<py::int_>(it) ||
               (py::hasattr(it, "__index__") && !py::isinstance<Tensor>(it) && !py::isinstance<py::array>(it))) {
      r = r.select(d, it.cast<int64_t>());
    } else {
      if (advanced)
        wgt::throw_error(wgt::ErrorKind::Unsupported, "Tensor.__getitem__",
                         "one integer index tensor per indexing expression; index again for the next dim");
      advanced = true;
      Tensor idx;
      if (auto ti = as_tensor(it, nullptr)) idx = *ti;
      else idx = from_numpy(py::array(py::module_::import("numpy").attr("asarray")(it)), true);
      if (idx.dtype() == DType::Bool)
        wgt::throw_error(wgt::ErrorKind::Unsupported, "Tensor.__getitem__", "boolean masks are not supported; use where()");
      if (idx.device() != r.device()) idx = idx.to(r.device());
      r = wgt::index_select(r, d, idx);
      d += idx.dim();
    }
  }
  return r;
}

py::tuple to_tuple(const std::vector<int64_t>& v) {
  py::tuple t(v.size());
  for (size_t i = 0; i < v.size(); ++i) t[i] = v[i];
  return t;
}

// Shape arguments: f(2, 3), f((2, 3)) and f([2, 3]) alike.
wgt::Shape shape_args(py::args args) {
  if (args.size() == 1 && !py::isinstance<py::int_>(args[0])) return args[0].cast<wgt::Shape>();
  return args.cast<wgt::Shape>();
}

// Binary operator: NotImplemented when the other operand is not tensor-like (Python then
// tries the reflected operation or raises TypeError).
template <typename F>
py::object binop(const Tensor& self, py::handle other, bool reflected, F f) {
  auto o = as_tensor(other, &self);
  if (!o) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  Tensor r;
  {
    py::gil_scoped_release nogil;
    r = reflected ? f(*o, self) : f(self, *o);
  }
  return py::cast(std::move(r));
}

}  // namespace

void init_tensor(py::module_& m) {
  py::class_<Tensor> c(m, "Tensor", kTensorDoc);
  c.def(py::init([](py::array a) { return from_numpy(a); }), py::arg("array"),
        "A tensor over a NumPy array's memory (as from_numpy), so NumPy arrays pass where tensors are expected.");
  py::implicitly_convertible<py::array, Tensor>();

  c.def_property_readonly("shape", [](const Tensor& t) { return to_tuple(t.shape()); }, "Dims, a tuple of ints.")
      .def_property_readonly("strides", [](const Tensor& t) { return to_tuple(t.strides()); },
                             "Strides in elements (NumPy's are in bytes).")
      .def_property_readonly("offset", &Tensor::offset, "Offset of the first element in its storage, in elements.")
      .def_property_readonly("dtype", [](const Tensor& t) { return std::string(wgt::dtype_name(t.dtype())); },
                             "Element type name: 'f32', 'f16', 'bf16', 'f64', 'i32', 'i64', 'u8', 'bool' or 'c64'.")
      .def_property_readonly("device", [](const Tensor& t) { return t.device().str(); }, "'cpu' or 'webgpu:N'.")
      .def_property_readonly("ndim", &Tensor::dim)
      .def_property_readonly("numel", &Tensor::numel)
      .def_property_readonly("nbytes", &Tensor::nbytes)
      .def_property_readonly("is_contiguous", &Tensor::is_contiguous)
      .def_property_readonly("defined", &Tensor::defined)
      .def_property_readonly("storage_id", [](const Tensor& t) { return t.storage() ? t.storage()->id() : 0; },
                             "Identity of the storage (views of one tensor share it).")
      .def_property_readonly("T", [](const Tensor& t) { return t.dim() < 2 ? t : t.t(); },
                             "The last two dims swapped (a view); a tensor of rank < 2 itself.")
      .def("size", &Tensor::size, py::arg("dim"))
      .def("__len__", [](const Tensor& t) {
        if (t.dim() == 0) throw py::type_error("len() of a 0-d tensor");
        return t.size(0);
      })
      .def("__repr__", &Tensor::str)
      .def("item", &Tensor::item, release_gil(), "Value of a one-element tensor as a float (real part for complex).")
      .def("tolist", [](const Tensor& t) { return to_numpy(t).attr("tolist")(); })
      .def("numpy", &to_numpy, "A NumPy array of the values: zero-copy for a host tensor (the array keeps the storage alive).")
      .def("__array__", [](const Tensor& t, py::object dtype, py::object copy) {
             py::object a = to_numpy(t);
             if (!dtype.is_none()) a = a.attr("astype")(dtype, py::arg("copy") = false);
             if (!copy.is_none() && copy.cast<bool>()) a = a.attr("copy")();
             return a;
           }, py::arg("dtype") = py::none(), py::arg("copy") = py::none(),
           "NumPy protocol (np.asarray(t)): zero-copy for a host tensor; device tensors are downloaded.")
      .def("__dlpack__", [](const Tensor& t, py::object /*stream*/) { return to_dlpack(t); }, py::arg("stream") = py::none(),
           "DLPack export (host tensors; zero-copy, the capsule keeps the storage alive).")
      .def("__dlpack_device__", &dlpack_device)
      .def("__bool__", [](const Tensor& t) {
        if (t.numel() != 1) throw py::value_error("the truth value of a tensor with more than one element is ambiguous");
        py::gil_scoped_release g;
        return t.item() != 0.0;
      })
      .def("__float__", &Tensor::item, release_gil())
      .def("__int__", [](const Tensor& t) { return static_cast<int64_t>(t.item()); }, release_gil())
      .def("__iter__", [](py::object self) {
        const Tensor& t = self.cast<const Tensor&>();
        if (t.dim() == 0) throw py::type_error("iteration over a 0-d tensor");
        py::list rows;
        for (int64_t i = 0; i < t.size(0); ++i) rows.append(py::cast(t.select(0, i)));
        return py::iter(rows);
      })
      .def("__getitem__", &index, py::arg("key"),
           "Python indexing: ints, slices (step > 0), None, ..., and one integer index tensor/array/list per "
           "expression. Views except the index tensor (index_select copies).");

  // ---- views (zero-copy) ----
  c.def("view", [](const Tensor& t, py::args a) { return t.view(shape_args(a)); },
        "A view with another shape (the layout must allow it); -1 infers one dim.")
      .def("reshape", [](const Tensor& t, py::args a) { return t.reshape(shape_args(a)); },
           "A view when the layout allows, else a contiguous copy; -1 infers one dim.")
      .def("permute", [](const Tensor& t, py::args a) { return t.permute(shape_args(a)); })
      .def("transpose", &Tensor::transpose, py::arg("dim0"), py::arg("dim1"))
      .def("t", &Tensor::t, "The last two dims swapped.")
      .def("slice", &Tensor::slice, py::arg("dim"), py::arg("start"), py::arg("stop"), py::arg("step") = 1,
           "A view of [start, stop) with step > 0 along dim (Python-like clamping).")
      .def("select", &Tensor::select, py::arg("dim"), py::arg("index"), "The dim removed at index.")
      .def("expand", [](const Tensor& t, py::args a) { return t.expand(shape_args(a)); },
           "Broadcast to a shape (stride 0 on expanded dims).")
      .def("squeeze", [](const Tensor& t, std::optional<int64_t> d) { return d ? t.squeeze(*d) : t.squeeze(); },
           py::arg("dim") = py::none())
      .def("unsqueeze", &Tensor::unsqueeze, py::arg("dim"))
      .def("flatten", &Tensor::flatten);

  // ---- copies and transfers ----
  c.def("contiguous", &Tensor::contiguous, release_gil(), "Self if contiguous, else a compacted copy on the same device.")
      .def("clone", &Tensor::clone, release_gil(), "A fresh contiguous copy on the same device.")
      .def("to", [](const Tensor& t, py::object target) {
             // A dtype name or a device: .to("webgpu"), .to("cpu"), .to("f16"), .to(np.float16).
             bool is_device = false;
             if (py::isinstance<py::str>(target)) {
               const std::string s = target.cast<std::string>();
               is_device = s == "cpu" || s.rfind("webgpu", 0) == 0;
             }
             if (is_device) {
               Device d = to_device(target);
               py::gil_scoped_release nogil;
               return t.to(d);
             }
             DType dt = to_dtype(target);
             py::gil_scoped_release nogil;
             return wgt::cast(t, dt);
           }, py::arg("target"), "Explicit transfer to a device ('cpu', 'webgpu', 'webgpu:1'), or a cast to a dtype.")
      .def("cpu", &Tensor::cpu, release_gil(), "The tensor on the host (self if already there).")
      .def("webgpu", [](const Tensor& t, int i) { return t.to(Device::webgpu(i)); }, py::arg("index") = 0, release_gil())
      .def("astype", [](const Tensor& t, py::object dt) {
        DType d = to_dtype(dt);
        py::gil_scoped_release nogil;
        return wgt::cast(t, d);
      }, py::arg("dtype"), "cast(): any dtype to any other (docs/semantics.md).");

  // ---- operators ----
  using wgt::Tensor;
  auto def_bin = [&](const char* name, const char* rname, Tensor (*f)(const Tensor&, const Tensor&)) {
    c.def(name, [f](const Tensor& a, py::object b) { return binop(a, b, false, f); }, py::is_operator());
    if (rname) c.def(rname, [f](const Tensor& a, py::object b) { return binop(a, b, true, f); }, py::is_operator());
  };
  def_bin("__add__", "__radd__", &wgt::add);
  def_bin("__sub__", "__rsub__", &wgt::sub);
  def_bin("__mul__", "__rmul__", &wgt::mul);
  def_bin("__truediv__", "__rtruediv__", &wgt::div);
  def_bin("__pow__", "__rpow__", &wgt::pow);
  def_bin("__matmul__", "__rmatmul__", &wgt::matmul);
  def_bin("__eq__", nullptr, &wgt::eq);
  def_bin("__ne__", nullptr, &wgt::ne);
  def_bin("__lt__", nullptr, &wgt::lt);
  def_bin("__le__", nullptr, &wgt::le);
  def_bin("__gt__", nullptr, &wgt::gt);
  def_bin("__ge__", nullptr, &wgt::ge);
  c.def("__neg__", [](const Tensor& t) { return wgt::neg(t); }, release_gil())
      .def("__abs__", [](const Tensor& t) { return wgt::abs(t); }, release_gil());
  c.attr("__hash__") = py::none();  // == is elementwise, as in NumPy
  c.attr("__array_priority__") = 1000;  // ndarray <op> Tensor defers to Tensor's reflected op
}

}  // namespace wgtpy
