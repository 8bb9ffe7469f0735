// Public profiling API (wgt/profile.hpp) over WebGPUBackend's timestamp tallies, the kernel
// table, and the WGT_WEBGPU_PROFILE=1 report printed at process exit.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "webgpu/webgpu_backend.hpp"
#include "wgt/profile.hpp"
#include "wgt/runtime.hpp"

namespace wgt {
namespace {

webgpu::WebGPUBackend& profiled_backend(int device, const char* op) {
  DeviceBackend& b = Runtime::get().device_backend(Device::webgpu(device), op);  // Unsupported if absent
  auto* w = dynamic_cast<webgpu::WebGPUBackend*>(&b);
  if (!w) throw_error(ErrorKind::Unsupported, op, b.name() + " is not a WebGPU backend");
  return *w;
}

std::vector<KernelTime> to_times(const std::vector<webgpu::KernelProfile>& ps) {
  std::vector<KernelTime> out;
  out.reserve(ps.size());
  for (const auto& p : ps)
    out.push_back({p.kernel, p.count, p.total_ns / 1e3, p.min_ns / 1e3, p.max_ns / 1e3});
  return out;
}

// Backends that print their table at exit. Leaked on purpose, like the Runtime: the exit
// handler may run after static destructors of this translation unit.
std::mutex& exit_mu() {
  static auto* m = new std::mutex;
  return *m;
}
std::vector<const webgpu::WebGPUBackend*>& exit_list() {
  static auto* v = new std::vector<const webgpu::WebGPUBackend*>;
  return *v;
}

void print_exit_reports() {
  // Host-side data only: GPU drivers may already be tearing down, so no Dawn call here.
  // Dispatches recorded after the last flush (no synchronize/read at the end) are missing.
  std::lock_guard<std::mutex> lock(exit_mu());
  for (const webgpu::WebGPUBackend* b : exit_list()) {
    const std::string table = format_kernel_times(to_times(b->profile_snapshot()));
    std::fprintf(stderr, "wgtensor profile of %s (%s), WGT_WEBGPU_PROFILE=1:\n%s", b->name().c_str(),
                 b->dawn().desc().name.c_str(), table.c_str());
    if (b->profile_dropped())
      std::fprintf(stderr, "  (%llu dispatches dropped: end timestamp before begin)\n",
                   static_cast<unsigned long long>(b->profile_dropped()));
  }
  std::fflush(stderr);
}

// A kernel key for a table row: defines may hold multi-line WGSL, so whitespace runs become
// one space, and very long keys are cut (the full key stays in KernelTime::kernel).
std::string one_line(const std::string& key) {
  constexpr size_t kMax = 240;
  std::string out;
  bool space = false;
  for (char c : key) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
    if (out.size() >= kMax) return out + "...";
  }
  return out;
}

}  // namespace

namespace webgpu {

void print_profile_at_exit(const WebGPUBackend* b) {
  std::lock_guard<std::mutex> lock(exit_mu());
  static const bool registered = std::atexit(print_exit_reports) == 0;
  if (!registered) return;
  if (std::find(exit_list().begin(), exit_list().end(), b) == exit_list().end()) exit_list().push_back(b);
}

void forget_profile_at_exit(const WebGPUBackend* b) {
  std::lock_guard<std::mutex> lock(exit_mu());
  auto& v = exit_list();
  v.erase(std::remove(v.begin(), v.end(), b), v.end());
}

}  // namespace webgpu

bool webgpu_profile_supported(std::string* why, int device) {
  std::string reason;
  DeviceBackend* b = Runtime::get().webgpu_backend(device, &reason);
  auto* w = dynamic_cast<webgpu::WebGPUBackend*>(b);
  if (w && w->features().timestamp_query) return true;
  if (why)
    *why = !b ? "webgpu:" + std::to_string(device) + " is not available: " + reason
              : b->name() + " ('" + (w ? w->dawn().desc().name : std::string("?")) + "') lacks timestamp-query";
  return false;
}

// The entries below use the backend, which only the holder of the runtime lock may.
void webgpu_profile(bool on, int device) {
  auto lk = Runtime::get().lock();
  profiled_backend(device, "webgpu_profile").set_profiling(on);
}

bool webgpu_profiling(int device) {
  auto lk = Runtime::get().lock();
  auto* w = dynamic_cast<webgpu::WebGPUBackend*>(Runtime::get().webgpu_backend(device));
  return w && w->profiling();
}

std::vector<KernelTime> webgpu_profile_read(bool reset, int device) {
  auto lk = Runtime::get().lock();
  return to_times(profiled_backend(device, "webgpu_profile_read").profile(reset));
}

void webgpu_batch_timing(bool on, int device) {
  auto lk = Runtime::get().lock();
  profiled_backend(device, "webgpu_batch_timing").set_batch_timing(on);
}

BatchGpuTime webgpu_batch_time_read(bool reset, int device) {
  auto lk = Runtime::get().lock();
  const webgpu::BatchTime t = profiled_backend(device, "webgpu_batch_time_read").batch_time(reset);
  return {t.batches, t.dispatches, static_cast<double>(t.gpu_ns) / 1e3};
}

std::string webgpu_profile_report(bool reset, int device) {
  return format_kernel_times(webgpu_profile_read(reset, device));
}

std::string format_kernel_times(const std::vector<KernelTime>& times) {
  std::vector<const KernelTime*> sorted;
  double total = 0;
  uint64_t count = 0;
  for (const auto& t : times) {
    sorted.push_back(&t);
    total += t.total_us;
    count += t.count;
  }
  std::stable_sort(sorted.begin(), sorted.end(), [](const KernelTime* a, const KernelTime* b) { return a->total_us > b->total_us; });
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "GPU kernel time (timestamp queries): %zu kernels, %llu dispatches, %.3f ms\n",
                sorted.size(), static_cast<unsigned long long>(count), total / 1e3);
  out += line;
  if (sorted.empty()) return out;
  std::snprintf(line, sizeof line, "%12s %6s %9s %10s %10s %10s  %s\n", "total ms", "share", "count", "mean us", "min us",
                "max us", "kernel");
  out += line;
  for (const KernelTime* t : sorted) {
    std::snprintf(line, sizeof line, "%12.3f %5.1f%% %9llu %10.2f %10.2f %10.2f  ", t->total_us / 1e3,
                  total > 0 ? 100.0 * t->total_us / total : 0.0, static_cast<unsigned long long>(t->count), t->mean_us(),
                  t->min_us, t->max_us);
    out += line;
    out += one_line(t->kernel);
    out += '\n';
  }
  return out;
}

}  // namespace wgt
