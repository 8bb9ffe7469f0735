// dlopen of Dawn + resolution of the entry-point table (see dawn_loader.hpp).
#include "webgpu/dawn_loader.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "runtime/settings.hpp"
#include "webgpu/dawn_runtime.hpp"

namespace wgt::webgpu {

namespace {
struct Loaded {
  Procs procs;
  bool ok = false;
  std::string why;
  DawnEngine engine;
};

std::mutex& engine_mu() {
  static std::mutex* mu = new std::mutex;
  return *mu;
}
std::string*& override_slot() {  // set_dawn_engine()'s request; null = WGT_DAWN's
  static std::string* s = nullptr;
  return s;
}
std::atomic<bool> g_loaded{false};

using namespace api;

Loaded load() {
  Loaded l;
  std::string why;
  if (!dawn_engine(&l.engine, &why)) {
    l.why = why;
    return l;
  }
  const std::string& path = l.engine.library;
  if (needs_private_runtime(l.engine)) {
    // The start-up re-exec (dawn_runtime.cpp) did not happen or failed: say why, do not
    // dlopen a library whose glibc this process lacks.
    l.why = "Dawn engine " + l.engine.name() + " ('" + path + "') needs glibc " + l.engine.glibc_needed +
            " from its private runtime " + l.engine.runtime_dir + ", and this process did not start under it" +
            (startup_reexec_error().empty() ? std::string(" (the engine was chosen after start-up)")
                                            : " (" + startup_reexec_error() + ")") +
            "; set WGT_DAWN before the program starts, or call set_dawn_engine first thing in main";
    return l;
  }
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h && l.engine.kind == DawnEngineKind::Npm && path.find('/') != std::string::npos) {
    // A stale default path (moved checkout): try the plain name on the loader path.
    h = dlopen("libwebgpu_wrapper.so", RTLD_NOW | RTLD_LOCAL);
  }
  if (!h) {
    const char* e = dlerror();
    l.why = "cannot load Dawn (engine " + l.engine.name() + ") from '" + path + "': " + (e ? e : "unknown error") +
            (l.engine.kind == DawnEngineKind::Npm
                 ? "; set WGT_DAWN_PATH to libwebgpu_wrapper.so (scripts/setup.sh fetches it; `cmake --install` "
                   "copies it to <libdir>/wgtensor/)"
                 : "; scripts/setup_dawn_debian.sh fetches Debian's engine, WGT_DAWN=npm selects the npm one");
    return l;
  }
  DawnAbiKind kind{};
  if (!detect_dawn_abi([h](const char* s) { return dlsym(h, s) != nullptr; }, &kind, &why)) {
    l.why = "Dawn library '" + path + "' " + why;
    return l;
  }
  l.procs.abi = &dawn_abi(kind);
  // Resolve every entry point; a missing one means an incompatible Dawn build.
#define WGT_RESOLVE_PROC(name, ret, params)                                                   \
  l.procs.name = reinterpret_cast<ret(*) params>(dlsym(h, "wgpu" #name));                     \
  if (!l.procs.name) {                                                                        \
    l.why = "Dawn library '" + path + "' lacks entry point wgpu" #name +                        \
            "; use a pinned engine (WGT_DAWN=npm or debian)";                                  \
    return l;                                                                                 \
  }
  WGT_WGPU_PROCS(WGT_RESOLVE_PROC)
#undef WGT_RESOLVE_PROC
  l.ok = true;  // the handle stays open for the life of the process on purpose
  return l;
}

const Loaded& loaded() {
  // Never destroyed: backends owned by the Runtime singleton release Dawn objects during
  // static destruction, after function-local statics created later would be gone.
  static const Loaded* l = [] {
    auto* x = new Loaded(load());
    g_loaded.store(true);
    return x;
  }();
  return *l;
}
}  // namespace

std::string dawn_engine_request() {
  std::lock_guard<std::mutex> lock(engine_mu());
  if (const std::string* o = override_slot()) return *o;
  const auto& r = *settings().dawn;
  return r ? *r : std::string();
}

bool dawn_engine(DawnEngine* out, std::string* why) {
  return resolve_dawn_engine(dawn_engine_request(), engine_locations(*settings().dawn_path), out, why);
}

std::string dawn_library_path() {
  DawnEngine e;
  std::string why;
  return dawn_engine(&e, &why) ? e.library : std::string();
}

bool dawn_loaded() { return g_loaded.load(); }

const Procs* dawn_procs(std::string* why) {
  const Loaded& l = loaded();
  if (!l.ok) {
    if (why) *why = l.why;
    return nullptr;
  }
  return &l.procs;
}

void set_dawn_engine_request(const std::string& request) {
  std::lock_guard<std::mutex> lock(engine_mu());
  std::string*& slot = override_slot();
  if (!slot) slot = new std::string;
  *slot = request;
}

const DawnEngine* loaded_dawn_engine() {
  // An engine whose request could not be resolved was never loaded: no library to report.
  return dawn_loaded() && !loaded().engine.library.empty() ? &loaded().engine : nullptr;
}

}  // namespace wgt::webgpu
