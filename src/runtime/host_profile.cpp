#include "runtime/host_profile.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "wgt/profile.hpp"

namespace wgt {
namespace hostprof {

namespace {
const char* const kNames[kStageCount] = {"op total (Runtime::run)", "  backend choice (checks, policy)",
                                         "  inputs (residency, budget)", "  outputs (allocation)",
                                         "  execute (launch + record)", "  bookkeeping (stats, log)",
                                         "webgpu pipeline lookup", "webgpu dispatch recording",
                                         "  bind group creation (cache misses)", "  Dawn set/dispatch calls",
                                         "webgpu batch submission"};
std::mutex g_mu;
uint64_t g_count[kStageCount] = {};
double g_total[kStageCount] = {};

}  // namespace

std::atomic<bool> g_on{false};

// WGT_HOST_PROFILE=1 (runtime/settings.hpp), at Runtime construction: profile from the first
// op and print the table at exit. Once per process.
void enable_from_env() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_on.store(true, std::memory_order_relaxed);
    std::atexit([] { std::fputs(host_profile_report().c_str(), stderr); });
  });
}

void add(Stage s, double seconds) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_count[s] += 1;
  g_total[s] += seconds;
}

}  // namespace hostprof

void host_profile(bool on) { hostprof::g_on.store(on, std::memory_order_relaxed); }
bool host_profiling() { return hostprof::g_on.load(std::memory_order_relaxed); }

std::vector<HostStageTime> host_profile_read(bool reset) {
  std::lock_guard<std::mutex> lock(hostprof::g_mu);
  std::vector<HostStageTime> out;
  for (int s = 0; s < hostprof::kStageCount; ++s) {
    out.push_back({hostprof::kNames[s], hostprof::g_count[s], hostprof::g_total[s] * 1e6});
    if (reset) hostprof::g_count[s] = 0, hostprof::g_total[s] = 0;
  }
  return out;
}

std::string host_profile_report(bool reset) {
  std::string r = "wgtensor host profile (wall time on the calling thread)\n";
  char line[160];
  std::snprintf(line, sizeof line, "%-36s %10s %12s %10s\n", "stage", "count", "total us", "mean us");
  r += line;
  for (const auto& t : host_profile_read(reset)) {
    std::snprintf(line, sizeof line, "%-36s %10llu %12.1f %10.3f\n", t.stage.c_str(),
                  static_cast<unsigned long long>(t.count), t.total_us, t.mean_us());
    r += line;
  }
  return r;
}

}  // namespace wgt
