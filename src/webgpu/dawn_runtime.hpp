// Starting under the Debian engine's private runtime without a loader command: when WGT_DAWN
// selects a Dawn whose glibc is newer than the system's (Debian's libwebgpu-dawn0 on Debian 12
// or Ubuntu 24.04, unpacked by scripts/setup_dawn_debian.sh), every program linked with
// wgtensor re-executes itself at load time through that runtime's ld.so (--library-path, the
// same arguments and argv[0]), before main and before any thread exists. The re-exec happens
// at most once: under the private runtime the check finds its libc loaded and does nothing.
// set_dawn_engine() (wgt/webgpu_info.hpp) does the same from main, with /proc/self/cmdline.
#pragma once
#include <string>

#include "webgpu/dawn_engine.hpp"

namespace wgt::webgpu {

// Why the start-up re-exec failed ("" when it was not needed or succeeded).
const std::string& startup_reexec_error();

// The engine request of set_dawn_engine (dawn_loader.cpp keeps it) and the loaded engine
// (nullptr before the first load).
void set_dawn_engine_request(const std::string& request);
const DawnEngine* loaded_dawn_engine();

}  // namespace wgt::webgpu
