// Loads Dawn's shared library at run time and resolves every WebGPU entry point we use into
// one table, so a binary without Dawn still runs (on CPU) and can say why WebGPU is missing.
#pragma once
#include <string>

#include "webgpu/wgpu_api.hpp"

namespace wgt::webgpu {

namespace api {
struct Procs {
#define WGT_DECLARE_PROC(name, ret, params) ret(*name) params = nullptr;
  WGT_WGPU_PROCS(WGT_DECLARE_PROC)
#undef WGT_DECLARE_PROC
};
}  // namespace api
using api::Procs;

// The process-wide table, loaded once: path from env WGT_DAWN_PATH, else
// "libwebgpu_wrapper.so" on the loader's search path (the calling binary's RUNPATH, which
// the build and the install set to Dawn's directory; CMakeLists.txt, cmake/install.cmake).
// Returns nullptr and fills *why when the library or an entry point is missing.
const Procs* dawn_procs(std::string* why);
// The path the table was (or would be) loaded from.
std::string dawn_library_path();

}  // namespace wgt::webgpu
