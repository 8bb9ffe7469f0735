// Which Dawn library ("engine") the WebGPU backend loads, chosen by WGT_DAWN or
// set_dawn_engine(): the npm build (bun-webgpu, the default), Debian's libwebgpu_dawn.so (the
// system's libwebgpu-dawn0, or the private copy scripts/setup_dawn_debian.sh unpacks with the
// glibc it needs), or a library named by path. Resolution is pure over `EngineLocations` so
// the selection rules are unit-tested without the libraries (tests/core/test_dawn_abi.cpp).
#pragma once
#include <functional>
#include <optional>
#include <string>

namespace wgt::webgpu {

enum class DawnEngineKind { Npm, Debian, Path };

// Where the engines are looked for (engine_locations() gives the build's).
struct EngineLocations {
  std::string npm_library;                // WGT_DAWN_PATH, else the build's third_party/dawn/
  std::string system_debian_library;      // libwebgpu_dawn.so.0 in the system's library dir
  std::string private_debian_prefix;      // dawn-debian beside the npm engine's directory (runpaths)
  std::string multiarch;                  // e.g. x86_64-linux-gnu
  std::function<bool(const std::string&)> exists;  // file test (tests substitute their own)
};
// The build's locations; `dawn_path` is WGT_DAWN_PATH (the npm library's override).
EngineLocations engine_locations(const std::optional<std::string>& dawn_path);

struct DawnEngine {
  std::string request;  // what was asked: auto, npm, debian, or a path
  DawnEngineKind kind = DawnEngineKind::Npm;
  std::string library;  // what dlopen gets
  // A private runtime (a directory holding its own ld-linux and libc) the library must run
  // under; empty when it runs under the system's. Debian's engine on an older glibc.
  std::string runtime_dir;
  std::string glibc_needed;  // the private runtime's glibc version ("2.43"); empty if unknown
  std::string version;       // the engine's version (package version), "" if unknown
  std::string name() const;  // "npm", "debian (system)", "debian (private runtime)", "path"
};

// Resolves a request (empty = auto). False with *why when it names an engine that is not
// installed (e.g. debian without scripts/setup_dawn_debian.sh having run).
//   auto:   the system's Debian Dawn if installed, else npm if present, else the private
//           Debian copy, else npm (whose load then says how to fetch it).
//   npm:    WGT_DAWN_PATH or third_party/dawn/libwebgpu_wrapper.so.
//   debian: the system's libwebgpu_dawn.so.0, else the private copy under its runtime.
//   a path: that library; a private runtime when its directory holds ld-linux and libc.
bool resolve_dawn_engine(const std::string& request, const EngineLocations& loc, DawnEngine* out, std::string* why);

// The request in force: set_dawn_engine()'s, else WGT_DAWN's ("" = auto).
std::string dawn_engine_request();

// True when this process runs under the glibc of `runtime_dir` (its libc.so.6 is the one
// loaded), i.e. the re-exec already happened or was not needed.
bool running_under_runtime(const std::string& runtime_dir);
// Whether the process must re-start under engine.runtime_dir: a private runtime, not already
// in use, and the running glibc older than the one it needs.
bool needs_private_runtime(const DawnEngine& engine);
// Re-executes the process under the engine's private runtime (its ld.so with --library-path,
// argv[0] kept); returns only on failure, with *why.
void reexec_under_runtime(const DawnEngine& engine, int argc, char** argv, std::string* why);

// "2.36" < "2.43" (numeric, dot-separated).
bool version_less(const std::string& a, const std::string& b);

}  // namespace wgt::webgpu
