// Engine resolution and the private runtime's re-exec (see dawn_engine.hpp).
#include "webgpu/dawn_engine.hpp"

#include "runtime/settings.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>


namespace wgt::webgpu {

namespace {

#ifndef WGT_MULTIARCH
#define WGT_MULTIARCH "x86_64-linux-gnu"
#endif

bool file_exists(const std::string& p) {
  struct stat st;
  return !p.empty() && ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string dir_of(const std::string& p) {
  const size_t s = p.rfind('/');
  return s == std::string::npos ? "." : s == 0 ? "/" : p.substr(0, s);
}

// key=value lines of the stamp setup_dawn_debian.sh writes into the private prefix.
std::string stamp_value(const std::string& prefix, const std::string& key) {
  std::ifstream f(prefix + "/wgt-engine.txt");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key + "=", 0) == 0) return line.substr(key.size() + 1);
  return {};
}

// The installed version of a Debian package, from dpkg's status file ("" if absent).
std::string dpkg_version(const std::string& package) {
  std::ifstream f("/var/lib/dpkg/status");
  std::string line;
  bool in = false;
  while (std::getline(f, line)) {
    if (line.empty()) in = false;
    else if (line == "Package: " + package) in = true;
    else if (in && line.rfind("Version: ", 0) == 0) return line.substr(9);
  }
  return {};
}

// The directories of every DT_RUNPATH / DT_RPATH of the loaded objects (the program, its
// libraries, a Python extension module), $ORIGIN expanded, in load order.
std::vector<std::string> loaded_runpaths() {
  std::vector<std::string> dirs;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto& out = *static_cast<std::vector<std::string>*>(data);
        const ElfW(Dyn)* dyn = nullptr;
        for (int i = 0; i < info->dlpi_phnum; ++i)
          if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        if (!dyn) return 0;
        uintptr_t strtab = 0;
        std::vector<uintptr_t> offsets;
        for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
          if (d->d_tag == DT_STRTAB) strtab = d->d_un.d_ptr;
          else if (d->d_tag == DT_RUNPATH || d->d_tag == DT_RPATH) offsets.push_back(d->d_un.d_val);
        }
        if (!strtab || offsets.empty()) return 0;
        // glibc relocates DT_STRTAB in place on x86-64; an unrelocated one is below the base.
        if (strtab < info->dlpi_addr) strtab += info->dlpi_addr;
        std::string origin = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
        char real[PATH_MAX];
        origin = realpath(origin.c_str(), real) ? dir_of(real) : std::string();
        for (uintptr_t off : offsets) {
          std::stringstream ss(reinterpret_cast<const char*>(strtab + off));
          for (std::string dir; std::getline(ss, dir, ':');) {
            if (dir.empty()) continue;
            if (dir.rfind("$ORIGIN", 0) == 0) dir = origin + dir.substr(7);
            out.push_back(dir);
          }
        }
        return 0;
      },
      &dirs);
  return dirs;
}

// A library in the first runpath directory that holds it, else its bare name (then dlopen
// searches). Resolved here rather than by dlopen because dlopen searches the RUNPATH of its
// caller, and under a sanitizer that caller is the sanitizer's interceptor, not the program.
std::string find_in_runpaths(const std::vector<std::string>& runpaths, const std::string& name) {
  for (const std::string& dir : runpaths)
    if (file_exists(dir + "/" + name)) return dir + "/" + name;
  return name;
}

// The private copy of Debian's engine (scripts/setup_dawn_debian.sh's dawn-debian/, marked by
// its wgt-engine.txt stamp) beside a directory the loaded objects search for the npm engine:
// third_party/dawn-debian next to the build tree's third_party/dawn, or dawn-debian inside an
// install's <libdir>/wgtensor. Found at run time, so no source-tree path is compiled in.
std::string find_private_debian_prefix(const std::vector<std::string>& runpaths) {
  for (const std::string& dir : runpaths)
    for (const std::string& cand : {dir + "/../dawn-debian", dir + "/dawn-debian"})
      if (file_exists(cand + "/wgt-engine.txt")) {
        char real[PATH_MAX];
        return realpath(cand.c_str(), real) ? std::string(real) : cand;
      }
  return {};
}

}  // namespace

bool version_less(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  while (sa.good() || sb.good()) {
    long x = 0, y = 0;
    std::string pa, pb;
    if (std::getline(sa, pa, '.')) x = std::strtol(pa.c_str(), nullptr, 10);
    if (std::getline(sb, pb, '.')) y = std::strtol(pb.c_str(), nullptr, 10);
    if (x != y) return x < y;
  }
  return false;
}

EngineLocations engine_locations(const std::optional<std::string>& dawn_path) {
  EngineLocations loc;
  const std::vector<std::string> runpaths = loaded_runpaths();  // one walk of the loaded objects
  if (dawn_path) loc.npm_library = *dawn_path;
  else loc.npm_library = find_in_runpaths(runpaths, "libwebgpu_wrapper.so");
  loc.multiarch = WGT_MULTIARCH;
  loc.system_debian_library = "/usr/lib/" + loc.multiarch + "/libwebgpu_dawn.so.0";
  loc.private_debian_prefix = find_private_debian_prefix(runpaths);
  loc.exists = file_exists;
  return loc;
}

std::string DawnEngine::name() const {
  switch (kind) {
    case DawnEngineKind::Npm: return "npm";
    case DawnEngineKind::Debian: return runtime_dir.empty() ? "debian (system)" : "debian (private runtime)";
    case DawnEngineKind::Path: return "path";
  }
  return "?";
}

bool resolve_dawn_engine(const std::string& request, const EngineLocations& loc, DawnEngine* out, std::string* why) {
  DawnEngine e;
  e.request = request.empty() ? "auto" : request;
  const std::string priv_lib = loc.private_debian_prefix.empty()
                                   ? std::string()
                                   : loc.private_debian_prefix + "/usr/lib/" + loc.multiarch + "/libwebgpu_dawn.so.0";
  const bool have_system = loc.exists(loc.system_debian_library);
  const bool have_private = !priv_lib.empty() && loc.exists(priv_lib);
  auto npm = [&] {
    e.kind = DawnEngineKind::Npm;
    e.library = loc.npm_library;
    e.version = "bun-webgpu-linux-x64 0.1.7";
  };
  auto system_debian = [&] {
    e.kind = DawnEngineKind::Debian;
    e.library = loc.system_debian_library;
    e.version = dpkg_version("libwebgpu-dawn0");
  };
  auto private_debian = [&] {
    e.kind = DawnEngineKind::Debian;
    e.library = priv_lib;
    e.runtime_dir = dir_of(priv_lib);
    e.version = stamp_value(loc.private_debian_prefix, "version");
    e.glibc_needed = stamp_value(loc.private_debian_prefix, "glibc");
  };
  if (e.request == "auto") {
    if (have_system) system_debian();
    // A bare name is found by the dynamic loader (the binary's RUNPATH): assumed present.
    else if (loc.npm_library.find('/') == std::string::npos || loc.exists(loc.npm_library) || !have_private) npm();
    else private_debian();
  } else if (e.request == "npm") {
    npm();
  } else if (e.request == "debian") {
    if (have_system) system_debian();
    else if (have_private) private_debian();
    else {
      *why = "WGT_DAWN=debian: Debian's Dawn is not installed (neither " + loc.system_debian_library +
             " nor " + (priv_lib.empty() ? std::string("a private copy") : priv_lib) +
             "); run scripts/setup_dawn_debian.sh, or install libwebgpu-dawn0, or use WGT_DAWN=npm";
      return false;
    }
  } else if (e.request.find('/') != std::string::npos) {
    e.kind = DawnEngineKind::Path;
    e.library = e.request;
    const std::string dir = dir_of(e.request);
    if (loc.exists(dir + "/ld-linux-x86-64.so.2") && loc.exists(dir + "/libc.so.6")) {
      e.runtime_dir = dir;
      // A copy unpacked by setup_dawn_debian.sh: its stamp is three levels up (usr/lib/<arch>).
      const std::string prefix = dir_of(dir_of(dir_of(dir)));
      e.glibc_needed = stamp_value(prefix, "glibc");
      e.version = stamp_value(prefix, "version");
    }
  } else {
    *why = "WGT_DAWN='" + e.request + "': expected auto, npm, debian or a path to a libwebgpu_dawn.so (with a '/')";
    return false;
  }
  *out = std::move(e);
  return true;
}

bool running_under_runtime(const std::string& runtime_dir) {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&gnu_get_libc_version), &info) || !info.dli_fname) return false;
  char real_libc[PATH_MAX], real_dir[PATH_MAX];
  if (!realpath(info.dli_fname, real_libc) || !realpath(runtime_dir.c_str(), real_dir)) return false;
  return dir_of(real_libc) == real_dir;
}

bool needs_private_runtime(const DawnEngine& engine) {
  if (engine.runtime_dir.empty() || running_under_runtime(engine.runtime_dir)) return false;
  // Unknown need (no stamp): the runtime ships beside the library for a reason, use it.
  return engine.glibc_needed.empty() || version_less(gnu_get_libc_version(), engine.glibc_needed);
}

void reexec_under_runtime(const DawnEngine& engine, int argc, char** argv, std::string* why) {
  const std::string ldso = engine.runtime_dir + "/ld-linux-x86-64.so.2";
  // The executable's own path, read now: after the exec /proc/self/exe would name ld.so.
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) {
    *why = std::string("cannot read /proc/self/exe: ") + std::strerror(errno);
    return;
  }
  exe[n] = '\0';
  std::vector<char*> args;
  std::string argv0 = argc > 0 && argv && argv[0] ? argv[0] : exe;
  // --library-path replaces LD_LIBRARY_PATH for the new image: keep its directories after the
  // runtime's (libraries carried beside the program, e.g. scripts/device_unpack.sh's).
  std::string path = engine.runtime_dir;
  if (const char* ld = foreign_env("LD_LIBRARY_PATH")) path += std::string(":") + ld;
  const char* fixed[] = {ldso.c_str(), "--library-path", path.c_str(), "--argv0", argv0.c_str(), exe};
  for (const char* a : fixed) args.push_back(const_cast<char*>(a));
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  std::fflush(nullptr);  // what the program printed so far would die with the old image
  execv(ldso.c_str(), args.data());
  *why = "cannot start under the private runtime " + ldso + ": " + std::strerror(errno);
}

}  // namespace wgt::webgpu
