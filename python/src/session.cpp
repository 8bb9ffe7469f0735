// Sessions and host mappings as Python sees them (wgt/session.hpp, wgt/mapping.hpp):
//   with wgt.Session("webgpu") as s: ...            one submission, a wait at the end
//   with wgt.map_write(t) as m: m.array[:] = 1       written back when the block ends
// Both are context managers over the C++ objects; their rules are the C++ ones.
#include <memory>

#include "common.hpp"
#include "wgt/mapping.hpp"
#include "wgt/session.hpp"

namespace wgtpy {
namespace {

// A Python `with` block is no C++ scope: the session is made by __enter__ and ended by
// __exit__ (Session::end: waits on a normal exit, only submits when the block raised).
struct PySession {
  Device device;
  std::unique_ptr<wgt::Session> session;
  wgt::Session& get(const char* op) {
    if (!session) wgt::throw_error(wgt::ErrorKind::RuntimeState, op, "the session is not open: use it in a `with` block");
    return *session;
  }
};

py::dict stats_dict(const wgt::SessionStats& s) {
  py::dict r;
  r["dispatches"] = s.dispatches, r["submissions"] = s.submissions, r["host_waits"] = s.host_waits;
  r["splits"] = s.splits;
  return r;
}

// The mapped bytes as a 1-D NumPy array of the tensor's dtype; it keeps the memory alive
// (Mapping::memory), so it stays valid after the mapping ends (detached from the tensor then,
// for a staged mapping). Read mappings give read-only arrays.
py::array mapping_array(wgt::Mapping& m) {
  const py::dtype dt = to_numpy_dtype(m.dtype(), "Mapping.array");
  const py::ssize_t item = static_cast<py::ssize_t>(wgt::dtype_size(m.dtype()));
  const py::ssize_t n = static_cast<py::ssize_t>(m.size()) / item;
  auto* keep = new std::shared_ptr<const void>(m.memory());
  py::capsule base(keep, [](void* p) { delete static_cast<std::shared_ptr<const void>*>(p); });
  void* data = const_cast<uint8_t*>(m.data());
  const std::vector<py::ssize_t> shape{n}, strides{item};
  if (!data) return py::array(dt, shape, strides);
  py::array a(dt, shape, strides, data, base);
  if (m.mode() == wgt::MapMode::Read) a.attr("flags").attr("writeable") = false;
  return a;
}

// Ending a mapping or a session takes the runtime lock, whose holder may be waiting for the
// GIL (to free a NumPy array a dying tensor borrowed): never wait for it with the GIL held.
struct NoGilDelete {
  template <class T>
  void operator()(T* p) const {
    if (PyGILState_Check()) {
      py::gil_scoped_release nogil;
      delete p;
    } else {
      delete p;
    }
  }
};

}  // namespace

void init_session(py::module_& m) {
  py::class_<PySession, std::unique_ptr<PySession, NoGilDelete>>(m, "Session",
                        "An explicit scope on one device: the ops issued inside `with Session(device) as s:` are\n"
                        "recorded into one submission, submitted and waited for when the block ends (only submitted\n"
                        "when it raises). s.flush() submits, s.synchronize() submits and waits, s.stats() counts.\n"
                        "A session belongs to its thread: other threads' work on its device raises RuntimeState.")
      .def(py::init([](py::handle device) { return PySession{to_device(device), nullptr}; }), py::arg("device") = "webgpu")
      .def("__enter__", [](PySession& s) -> PySession& {
        if (s.session) wgt::throw_error(wgt::ErrorKind::RuntimeState, "Session.__enter__", "the session is already open");
        {
          py::gil_scoped_release nogil;
          s.session = std::make_unique<wgt::Session>(s.device);
        }
        return s;
      }, py::return_value_policy::reference)
      .def("__exit__", [](PySession& s, py::handle exc_type, py::handle, py::handle) {
        wgt::Session& ss = s.get("Session.__exit__");
        {
          py::gil_scoped_release nogil;
          ss.end(exc_type.is_none());
        }
        return false;  // never swallows the block's exception
      })
      .def("flush", [](PySession& s) { wgt::Session& ss = s.get("Session.flush"); py::gil_scoped_release g; ss.flush(); })
      .def("synchronize", [](PySession& s) {
        wgt::Session& ss = s.get("Session.synchronize");
        py::gil_scoped_release g;
        ss.synchronize();
      })
      .def("stats", [](PySession& s) { return stats_dict(s.get("Session.stats").stats()); },
           "{'dispatches', 'submissions', 'host_waits', 'splits'} since the session opened.")
      .def_property_readonly("device", [](const PySession& s) { return s.device.str(); })
      .def_property_readonly("outermost", [](PySession& s) { return s.get("Session.outermost").outermost(); });

  py::class_<wgt::Mapping, std::unique_ptr<wgt::Mapping, NoGilDelete>>(m, "Mapping",
                           "A host view of a tensor's bytes (map_read / map_write), valid until unmap() or the end of\n"
                           "its `with` block; a write mapping's bytes go back to the tensor then.")
      .def_property_readonly("array", &mapping_array, "The mapped elements as a 1-D NumPy array.")
      .def_property_readonly("zero_copy", &wgt::Mapping::zero_copy)
      .def_property_readonly("size", &wgt::Mapping::size, "Bytes mapped.")
      .def_property_readonly("mapped", &wgt::Mapping::mapped)
      .def_property_readonly("mode", [](const wgt::Mapping& x) { return x.mode() == wgt::MapMode::Read ? "read" : "write"; })
      .def("unmap", &wgt::Mapping::unmap, release_gil())
      .def("__enter__", [](wgt::Mapping& x) -> wgt::Mapping& { return x; }, py::return_value_policy::reference)
      .def("__exit__", [](wgt::Mapping& x, py::handle, py::handle, py::handle) {
        if (x.mapped()) {
          py::gil_scoped_release nogil;
          x.unmap();
        }
        return false;
      });

  auto span = [](std::optional<uint64_t> offset, std::optional<uint64_t> nbytes) {
    return wgt::MapSpan{offset.value_or(0), nbytes.value_or(wgt::MapSpan::kToEnd)};
  };
  m.def("map_read", [span](const Tensor& t, std::optional<uint64_t> offset, std::optional<uint64_t> nbytes) {
    return wgt::map_read(t, span(offset, nbytes));
  }, py::arg("t"), py::arg("offset") = py::none(), py::arg("nbytes") = py::none(), release_gil(),
        "Maps `nbytes` bytes from byte `offset` of a contiguous tensor (default: all of it) for reading.");
  m.def("map_write", [span](const Tensor& t, std::optional<uint64_t> offset, std::optional<uint64_t> nbytes) {
    return wgt::map_write(t, span(offset, nbytes));
  }, py::arg("t"), py::arg("offset") = py::none(), py::arg("nbytes") = py::none(), release_gil(),
        "Maps a byte span of a contiguous tensor for writing; written back at unmap().");
}

}  // namespace wgtpy
