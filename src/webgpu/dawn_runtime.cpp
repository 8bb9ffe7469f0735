// The private runtime's re-exec at start-up, and set_dawn_engine / webgpu_engine_info
// (see dawn_runtime.hpp).
#include "webgpu/dawn_runtime.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <vector>

#include "runtime/settings.hpp"
#include "webgpu/dawn_loader.hpp"
#include "wgt/error.hpp"
#include "wgt/webgpu_info.hpp"

namespace wgt::webgpu {

namespace {

std::string& reexec_error() {
  static std::string* s = new std::string;
  return *s;
}

// Runs from .init_array (glibc passes argc/argv), before main: reads WGT_DAWN without touching
// the cached settings (whose first, strict parse belongs to the Runtime) and re-executes when
// the engine needs its private runtime. Any problem is left for the loader to report.
__attribute__((constructor)) void reexec_at_startup(int argc, char** argv, char**) {
  try {
    const Settings s = parse_environment_settings(/*strict=*/false);
    const std::optional<std::string>& req = *s.dawn;
    DawnEngine e;
    std::string why;
    if (!resolve_dawn_engine(req ? *req : std::string(), engine_locations(*s.dawn_path), &e, &why) ||
        !needs_private_runtime(e))
      return;
    reexec_under_runtime(e, argc, argv, &why);
    reexec_error() = why;  // only reached when the exec failed
    std::fprintf(stderr, "wgtensor: %s\n", why.c_str());
  } catch (...) {
    // A bad WGT_DAWN / WGT_DAWN_PATH: the first use of the settings reports it.
  }
}

}  // namespace

const std::string& startup_reexec_error() { return reexec_error(); }

}  // namespace wgt::webgpu

namespace wgt {

void set_dawn_engine(const std::string& engine) {
  using namespace webgpu;
  DawnEngine e;
  std::string why;
  if (!resolve_dawn_engine(engine, engine_locations(*settings().dawn_path), &e, &why))
    throw_error(ErrorKind::InvalidArgument, "set_dawn_engine", why);
  if (dawn_loaded()) {
    const DawnEngine* cur = loaded_dawn_engine();
    if (cur && cur->library == e.library) return;
    throw_error(ErrorKind::RuntimeState, "set_dawn_engine",
                cur ? "Dawn is already loaded from '" + cur->library + "' (engine " + cur->name() +
                          "); choose the engine before the first WebGPU use"
                    : std::string("the WebGPU backend was already set up (without Dawn); choose the engine before "
                                  "the first WebGPU use"));
  }
  if (needs_private_runtime(e)) {
    // Re-start this program under the engine's runtime with the same arguments; WGT_DAWN
    // carries the choice across the exec (the start-up check then finds the runtime loaded).
    std::ifstream f("/proc/self/cmdline", std::ios::binary);
    const std::string cmd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::vector<std::string> args;
    for (size_t i = 0; i < cmd.size();) {
      const size_t z = cmd.find('\0', i);
      args.push_back(cmd.substr(i, z - i));
      i = z == std::string::npos ? cmd.size() : z + 1;
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    setenv("WGT_DAWN", engine.c_str(), 1);
    reexec_under_runtime(e, static_cast<int>(args.size()), argv.data(), &why);
    throw_error(ErrorKind::RuntimeState, "set_dawn_engine", why);
  }
  set_dawn_engine_request(engine);
}

WebGPUEngineInfo webgpu_engine_info() {
  using namespace webgpu;
  WebGPUEngineInfo info;
  DawnEngine e;
  const DawnEngine* cur = loaded_dawn_engine();
  if (!cur) {
    if (!dawn_engine(&e, &info.error)) return info;
    cur = &e;
  }
  info.request = cur->request;
  info.engine = cur->name();
  info.library = cur->library;
  info.version = cur->version;
  info.private_runtime = cur->runtime_dir;
  if (dawn_loaded()) {
    std::string why;
    if (const Procs* p = dawn_procs(&why)) info.abi = p->abi->name;
    else info.error = why;
  }
  return info;
}

}  // namespace wgt
