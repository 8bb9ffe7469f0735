// The extension module wgtensor._wgtensor; wgtensor/__init__.py re-exports it with the
// pure-Python helpers (context managers).
#include "common.hpp"

PYBIND11_MODULE(_wgtensor, m) {
  m.doc() = "wgtensor: a tensor runtime with a WebGPU (Dawn) backend and CPU backends";
  wgtpy::init_errors(m);  // first: every later binding may raise
  wgtpy::init_tensor(m);
  wgtpy::init_ops(m);
  wgtpy::init_quant(m);
  wgtpy::init_nn(m);
  wgtpy::init_model(m);
  wgtpy::init_runtime(m);
  wgtpy::init_session(m);
}
