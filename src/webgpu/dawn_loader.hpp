// Loads Dawn's shared library at run time and resolves every WebGPU entry point we use into
// one table, so a binary without Dawn still runs (on CPU) and can say why WebGPU is missing.
// Which library (engine) and which ABI table go with it: dawn_engine.hpp, dawn_abi.hpp.
#pragma once
#include <string>

#include "webgpu/dawn_abi.hpp"
#include "webgpu/dawn_engine.hpp"
#include "webgpu/wgpu_api.hpp"

namespace wgt::webgpu {

namespace api {
struct Procs {
#define WGT_DECLARE_PROC(name, ret, params) ret(*name) params = nullptr;
  WGT_WGPU_PROCS(WGT_DECLARE_PROC)
#undef WGT_DECLARE_PROC
  // The values of the library's ABI that differ between engines (feature numbers, the form
  // of the instance descriptor): every caller takes them from here.
  const DawnAbi* abi = nullptr;
};
}  // namespace api
using api::Procs;

// The process-wide table, loaded once from the engine dawn_engine_request() resolves to (the
// npm engine by name unless WGT_DAWN_PATH is set: the binary's RUNPATH finds it in the build
// tree and in <libdir>/wgtensor when installed; CMakeLists.txt, cmake/install.cmake).
// Returns nullptr and fills *why when the library or an entry point is missing.
const Procs* dawn_procs(std::string* why);
// The engine the table was (or would be) loaded from; false with *why when the request names
// an engine that is not installed.
bool dawn_engine(DawnEngine* out, std::string* why);
// The path the table was (or would be) loaded from ("" when the request cannot be resolved).
std::string dawn_library_path();
// Whether the table has been loaded (set_dawn_engine refuses a change afterwards).
bool dawn_loaded();

}  // namespace wgt::webgpu
