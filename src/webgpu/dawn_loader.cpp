// dlopen of Dawn + resolution of the entry-point table (see dawn_loader.hpp).
#include "webgpu/dawn_loader.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "runtime/settings.hpp"

namespace wgt::webgpu {

std::string dawn_library_path() {
  if (const auto& p = *settings().dawn_path) return *p;
  // By name: the dynamic loader searches the RUNPATH of the object calling dlopen (the build
  // tree's third_party/dawn in its binaries; <libdir>/wgtensor in installed ones, CMake
  // package and pkg-config consumers included), then LD_LIBRARY_PATH and the system's paths.
  return "libwebgpu_wrapper.so";
}

namespace {
struct Loaded {
  Procs procs;
  bool ok = false;
  std::string why;
};

using namespace api;

Loaded load() {
  Loaded l;
  std::string path = dawn_library_path();
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    l.why = "cannot load Dawn from '" + path + "': " + (e ? e : "unknown error") +
            "; set WGT_DAWN_PATH to libwebgpu_wrapper.so (scripts/setup.sh fetches it; `cmake --install` "
            "copies it to <libdir>/wgtensor/)";
    return l;
  }
  // Resolve every entry point; a missing one means an incompatible Dawn build.
#define WGT_RESOLVE_PROC(name, ret, params)                                                   \
  l.procs.name = reinterpret_cast<ret(*) params>(dlsym(h, "wgpu" #name));                     \
  if (!l.procs.name) {                                                                        \
    l.why = "Dawn library '" + path + "' lacks entry point wgpu" #name +                        \
            "; use the pinned build (bun-webgpu-linux-x64 0.1.7)";                             \
    return l;                                                                                 \
  }
  WGT_WGPU_PROCS(WGT_RESOLVE_PROC)
#undef WGT_RESOLVE_PROC
  l.ok = true;  // the handle stays open for the life of the process on purpose
  return l;
}
}  // namespace

const Procs* dawn_procs(std::string* why) {
  // Never destroyed: backends owned by the Runtime singleton release Dawn objects during
  // static destruction, after function-local statics created later would be gone.
  static const Loaded* loaded = new Loaded(load());
  if (!loaded->ok) {
    if (why) *why = loaded->why;
    return nullptr;
  }
  return &loaded->procs;
}

}  // namespace wgt::webgpu
