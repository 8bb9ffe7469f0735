// wgt::Error -> Python exceptions: wgtensor.Error, and one subclass per ErrorKind named as the
// kind (wgtensor.Unsupported, wgtensor.OutOfMemory, ...). The classes are made from the
// enumeration itself (error_kind_name), so a kind added to wgt/error.hpp gets its class
// without a change here. Some also derive from the Python exception that code catching
// built-in errors expects (an out-of-range index is an IndexError, which ends iteration).
#include <map>

#include "common.hpp"

namespace wgtpy {
namespace {

// The Python exception each known kind also is; kinds not listed derive from Error only.
PyObject* builtin_base(const std::string& kind) {
  static const std::map<std::string, PyObject*> bases = {
      {"InvalidArgument", PyExc_ValueError}, {"ShapeMismatch", PyExc_ValueError},
      {"DTypeMismatch", PyExc_TypeError},    {"RankMismatch", PyExc_ValueError},
      {"OutOfRange", PyExc_IndexError},      {"Unsupported", PyExc_NotImplementedError},
      {"OutOfMemory", PyExc_MemoryError},    {"IO", PyExc_OSError},
      {"Format", PyExc_ValueError},
  };
  auto it = bases.find(kind);
  return it == bases.end() ? nullptr : it->second;
}

PyObject* g_error = nullptr;
std::map<wgt::ErrorKind, PyObject*>& kind_classes() {
  static std::map<wgt::ErrorKind, PyObject*> classes;
  return classes;
}

}  // namespace

void init_errors(py::module_& m) {
  g_error = PyErr_NewExceptionWithDoc(
      "wgtensor.Error",
      "Base class of every wgtensor error. Attributes: kind (the C++ ErrorKind name, e.g.\n"
      "'Unsupported'), op (the operation that raised it, e.g. 'matmul') and message (what to do).",
      PyExc_Exception, nullptr);
  m.add_object("Error", py::handle(g_error));
  // ErrorKind values are consecutive from 0; error_kind_name answers "?" past the last one.
  for (int k = 0; k < 256; ++k) {
    const auto kind = static_cast<wgt::ErrorKind>(k);
    const std::string name = wgt::error_kind_name(kind);
    if (name == "?") break;
    PyObject* extra = builtin_base(name);
    py::tuple bases = extra ? py::make_tuple(py::handle(g_error), py::handle(extra)) : py::make_tuple(py::handle(g_error));
    const std::string qualified = "wgtensor." + name;
    const std::string doc = "wgt::Error of kind " + name + " (a subclass of wgtensor.Error).";
    PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc.c_str(), bases.ptr(), nullptr);
    kind_classes()[kind] = cls;
    m.add_object(name.c_str(), py::handle(cls));
  }
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const wgt::Error& e) {
      auto it = kind_classes().find(e.kind());
      PyObject* cls = it == kind_classes().end() ? g_error : it->second;
      py::object exc = py::reinterpret_borrow<py::object>(cls)(e.what());
      exc.attr("kind") = wgt::error_kind_name(e.kind());
      exc.attr("op") = e.op();
      exc.attr("message") = e.message();
      PyErr_SetObject(cls, exc.ptr());
    }
  });
}

}  // namespace wgtpy
