// Benchmark timing shared by the WebGPU benches: a fixed wall-time warm-up (so the GPU clocks
// ramp up and pipelines/pools are built before anything is timed), wall time over enough calls
// to last a target duration, and, where the adapter has timestamp-query, the GPU time of the
// kernels of one call measured in profiling mode (wgt/profile.hpp).
//
// Why both: wall time per call = max(host time per call, GPU time per call) once the queue is
// full; for small kernels (5-60 us) the host side (~4-8 us per dispatch through Dawn) and clock
// ramp-up dominate it. GPU time is the sum of the kernels' own durations (begin to end of each
// kernel's pass), so it leaves out dispatch gaps and inter-kernel barriers: a lower bound of
// what the device spends per call.
//
// Env: WGT_BENCH_WARMUP_MS (default 200), WGT_BENCH_MS (default: the bench's target, 300 ms),
// WGT_BENCH_GPU=0 skips the profiled run, WGT_BENCH_BATCH_GPU=0 the batch GPU time, and
// WGT_BENCH_BATCH_ROUNDS (default 3, 1-15) sets how many batch runs give its median, min and max:
// on the H200 single runs of a multi-dispatch call (the block decode step) have varied by 2-3x
// between runs of one process (BENCHMARKS.md run 12), and the spread tells such figures apart.
#pragma once
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "wgt/webgpu_info.hpp"
#include "wgt/wgt.hpp"

namespace wgt::bench {

struct Timing {
  int iters = 0;        // calls in the timed wall-clock run
  double warmup_s = 0;  // wall seconds of warm-up calls before it
  double wall_s = 0;    // wall seconds per call, between two synchronize() calls
  double host_s = 0;    // host seconds per call to enqueue them (the timed run, before its final wait)
  double host_cpu_s = 0;  // CPU seconds of the calling thread per call over the same span
  double gpu_s = -1;    // GPU kernel seconds per call (sum over the call's kernels); < 0: not measured
  double batch_gpu_s = -1;  // GPU seconds per call in batch timing mode (calls back to back): the median
                            // of batch_rounds runs; < 0: not measured
  double batch_gpu_min_s = -1, batch_gpu_max_s = -1;  // the fastest and slowest of those runs
  int batch_calls = 0;      // calls in each run
  int batch_rounds = 0;     // runs
  int gpu_iters = 0;    // calls in the profiled run
  std::vector<KernelTime> kernels;  // per-kernel times of the profiled run, largest total first
  std::string gpu_why;  // why gpu_s was not measured
  // What the timed wall-clock run did besides recording dispatches, per call (a wall time far
  // above the batch GPU time has to come from somewhere: host waits on the device, transfers,
  // evictions under the memory budget, CPU fallbacks): queue submissions, host waits
  // (the run's two synchronize() calls excluded), bytes uploaded / downloaded, evictions,
  // fallbacks; -1 where the counters were not available.
  double submits = -1, host_waits = -1, up_bytes = -1, down_bytes = -1, evictions = -1, fallbacks = -1;
  bool has_gpu() const { return gpu_s >= 0; }
};

struct TimingOptions {
  double warmup_ms = 200;  // repeated calls before timing
  double target_ms = 300;  // the timed run lasts at least this long
  int min_iters = 1;
  int max_iters = 1 << 20;
  bool gpu = true;  // also measure GPU kernel time when timestamp-query is available
};

namespace detail {

inline double env_ms(const char* name, double dflt) {
  const char* v = std::getenv(name);
  if (!v || !*v) return dflt;
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  return (*end == '\0' && x >= 0) ? x : dflt;
}

// Wall seconds of n calls, the queue drained before and after; *host gets the seconds spent
// enqueueing them (before the final wait). When host is close to the wall time, the calls
// are bound by the host side (recording, validation, submission), not by the GPU.
inline double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// *host_cpu: the calling thread's CPU seconds over the same span (without the time it was
// preempted, e.g. by lavapipe's worker threads on a small machine).
inline double run_wall(const std::function<void()>& fn, int n, double* host = nullptr, double* host_cpu = nullptr) {
  synchronize();
  const double c0 = thread_cpu_s();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) fn();
  const auto t1 = std::chrono::steady_clock::now();
  const double c1 = thread_cpu_s();
  synchronize();
  if (host) *host = std::chrono::duration<double>(t1 - t0).count();
  if (host_cpu) *host_cpu = c1 - c0;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The WebGPU device's batching counters, or nothing when there is no such device.
inline std::optional<WebGPUBatchStats> batch_stats() {
  try {
    return webgpu_batch_stats();
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace detail

// Times fn (which only enqueues work: the helper synchronizes around the runs).
inline Timing time_calls(const std::function<void()>& fn, TimingOptions o = {}) {
  o.warmup_ms = detail::env_ms("WGT_BENCH_WARMUP_MS", o.warmup_ms);
  o.target_ms = detail::env_ms("WGT_BENCH_MS", o.target_ms);
  Timing t;
  // Warm-up: doubling rounds until warmup_ms of wall time passed; the last round's rate
  // sizes the timed run.
  int n = 1;
  double per_call = 0, warm_s = 0;
  for (;;) {
    const double s = detail::run_wall(fn, n);
    warm_s += s;
    per_call = s / n;
    if (warm_s * 1e3 >= o.warmup_ms || n >= o.max_iters) break;
    n = std::min(o.max_iters, n * 2);
  }
  t.warmup_s = warm_s;
  // Timed run: enough calls for target_ms; rerun larger if the estimate was short.
  n = per_call > 0 ? static_cast<int>(std::ceil(o.target_ms * 1e-3 / per_call)) : o.min_iters;
  n = std::clamp(n, o.min_iters, o.max_iters);
  for (;;) {
    double host = 0, host_cpu = 0;
    if (host_profiling()) (void)host_profile_read(true);  // WGT_HOST_PROFILE=1: the timed run's stages only
    const RuntimeStats rs0 = Runtime::get().stats();
    const auto bs0 = detail::batch_stats();
    const double s = detail::run_wall(fn, n, &host, &host_cpu);
    const RuntimeStats rs1 = Runtime::get().stats();
    const auto bs1 = detail::batch_stats();
    if (bs0 && bs1) {
      t.submits = static_cast<double>(bs1->submits - bs0->submits) / n;
      // run_wall's synchronize() before and after the calls wait at most once each
      t.host_waits = std::max(0.0, static_cast<double>(bs1->host_waits - bs0->host_waits) - 2) / n;
    }
    t.up_bytes = static_cast<double>(rs1.bytes_uploaded - rs0.bytes_uploaded) / n;
    t.down_bytes = static_cast<double>(rs1.bytes_downloaded - rs0.bytes_downloaded) / n;
    t.evictions = static_cast<double>(rs1.evictions - rs0.evictions) / n;
    t.fallbacks = static_cast<double>(rs1.fallbacks - rs0.fallbacks) / n;
    if (host_profiling()) std::fprintf(stderr, "timed run of %d calls: %s", n, host_profile_report(true).c_str());
    t.iters = n;
    t.wall_s = s / n;
    t.host_s = host / n;
    t.host_cpu_s = host_cpu / n;
    if (s * 1e3 >= o.target_ms * 0.9 || n >= o.max_iters) break;
    n = std::clamp(s > 0 ? static_cast<int>(n * o.target_ms / (s * 1e3) * 1.2) + 1 : n * 8, n + 1, o.max_iters);
  }
  // Batch GPU time (wgt/profile.hpp webgpu_batch_timing): the calls' kernels back to back
  // inside whole batches, host time excluded. WGT_BENCH_BATCH_GPU=0 skips it.
  if (detail::env_ms("WGT_BENCH_BATCH_GPU", 1) != 0 && webgpu_profile_supported()) {
    const int nb = std::clamp(n, 1, 256);
    const int rounds = static_cast<int>(std::clamp(detail::env_ms("WGT_BENCH_BATCH_ROUNDS", 3), 1.0, 15.0));
    std::vector<double> per_call;
    for (int r = 0; r < rounds; ++r) {
      synchronize();
      webgpu_batch_timing(true);
      (void)webgpu_batch_time_read(true);
      for (int i = 0; i < nb; ++i) fn();
      synchronize();
      const BatchGpuTime bt = webgpu_batch_time_read(true);
      webgpu_batch_timing(false);
      if (bt.batches > 0) per_call.push_back(bt.gpu_us * 1e-6 / nb);
    }
    t.batch_calls = nb;
    if (!per_call.empty()) {
      std::sort(per_call.begin(), per_call.end());
      t.batch_rounds = static_cast<int>(per_call.size());
      t.batch_gpu_s = per_call[per_call.size() / 2];
      t.batch_gpu_min_s = per_call.front();
      t.batch_gpu_max_s = per_call.back();
    }
  }
  if (!o.gpu || detail::env_ms("WGT_BENCH_GPU", 1) == 0) {
    t.gpu_why = "disabled";
    return t;
  }
  if (!webgpu_profile_supported(&t.gpu_why)) return t;
  // Profiled run over the same number of calls. Tallies are read before and after without a
  // reset, so a process-wide WGT_WEBGPU_PROFILE=1 report keeps its data.
  const bool was_on = webgpu_profiling();
  synchronize();
  webgpu_profile(true);
  std::map<std::string, KernelTime> before;
  for (auto& k : webgpu_profile_read(false)) before[k.kernel] = k;
  for (int i = 0; i < n; ++i) fn();
  synchronize();
  std::vector<KernelTime> after = webgpu_profile_read(false);
  if (!was_on) webgpu_profile(false);
  double gpu_us = 0;
  for (auto& k : after) {
    if (auto it = before.find(k.kernel); it != before.end()) {
      k.count -= it->second.count;
      k.total_us -= it->second.total_us;  // min/max stay those of the whole tally
    }
    if (k.count == 0) continue;
    gpu_us += k.total_us;
    t.kernels.push_back(k);
  }
  std::stable_sort(t.kernels.begin(), t.kernels.end(),
                   [](const KernelTime& a, const KernelTime& b) { return a.total_us > b.total_us; });
  t.gpu_iters = n;
  t.gpu_s = gpu_us * 1e-6 / n;
  return t;
}

// How many distinct copies of its operands a bench cycles through. The H200's L2 holds 50 MB,
// so a 16-60 MB operand read by every call of a loop is served partly from L2; with copies
// whose total exceeds L2 several times every call reads from memory, as in a model's decode
// step (each layer's weights and cache are read once per token). Default: enough copies of
// bytes_per_copy for 128 MB; env WGT_BENCH_COPIES sets the count (1 = the old, L2-assisted
// figures).
inline int copies_from_env(double bytes_per_copy = 0) {
  const int dflt = bytes_per_copy > 0 ? static_cast<int>(std::ceil(128e6 / bytes_per_copy)) : 1;
  const double c = detail::env_ms("WGT_BENCH_COPIES", dflt);
  return std::max(1, std::min(64, static_cast<int>(c)));
}

// "%.*f" of v * scale, or "-" (right-aligned in width) when v < 0 (not measured).
inline std::string fmt(double v, double scale, int width, int prec) {
  char buf[64];
  if (v < 0 || !std::isfinite(v)) std::snprintf(buf, sizeof buf, "%*s", width, "-");
  else std::snprintf(buf, sizeof buf, "%*.*f", width, prec, v * scale);
  return buf;
}

// Rate (units per second) of amount per call over s seconds per call; -1 when s is not measured.
inline double rate(double amount, double s) { return s > 0 ? amount / s : -1; }

// One line saying how the gpu column was measured (or why it is empty).
inline void print_gpu_note(const Timing& t) {
  if (t.batch_gpu_s >= 0)
    std::printf("  (batch gpu: %.3f us/call, median of %d runs (min %.3f, max %.3f) of %d calls back to back in whole "
                "batches, timestamps at each batch's pass begin/end: device time without the host)\n",
                t.batch_gpu_s * 1e6, t.batch_rounds, t.batch_gpu_min_s * 1e6, t.batch_gpu_max_s * 1e6, t.batch_calls);
  if (t.has_gpu())
    std::printf("  (wall: %d calls after %.0f ms of warm-up, host enqueue %.2f us/call (%.2f us of thread CPU); gpu: sum "
                "of kernel times from timestamp queries over %d profiled calls)\n", t.iters, t.warmup_s * 1e3,
                t.host_s * 1e6, t.host_cpu_s * 1e6, t.gpu_iters);
  else
    std::printf("  (wall: %d calls, host enqueue %.2f us/call (%.2f us of thread CPU); gpu column empty: %s)\n", t.iters,
                t.host_s * 1e6, t.host_cpu_s * 1e6, t.gpu_why.c_str());
  if (t.submits >= 0)
    std::printf("  (timed run, per call: %.2f submissions, %.2f host waits, %.0f B uploaded, %.0f B downloaded, %.2f "
                "evictions, %.2f fallbacks)\n", t.submits, t.host_waits, t.up_bytes, t.down_bytes, t.evictions, t.fallbacks);
}

}  // namespace wgt::bench
