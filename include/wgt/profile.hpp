// GPU kernel times of the WebGPU backend, measured with timestamp queries (profiling mode).
// Host wall time of small kernels is dominated by per-dispatch overhead; these times are what
// the GPU itself spent in each kernel, attributed to its pipeline key (shader + defines).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace wgt {

struct KernelTime {
  std::string kernel;  // pipeline key: shader name, then its defines (e.g. "binary|OP=a + b|...")
  uint64_t count = 0;  // timed dispatches
  double total_us = 0, min_us = 0, max_us = 0;
  double mean_us() const { return count ? total_us / static_cast<double>(count) : 0.0; }
};

// Whether webgpu:device can profile (the adapter offers timestamp-query); *why says why not.
bool webgpu_profile_supported(std::string* why = nullptr, int device = 0);
// Turns profiling mode on or off. On: every dispatch runs in its own compute pass with
// timestamp writes and every batch submission waits for its timestamps, so the host no longer
// runs ahead of the GPU (profiling serializes batches). Throws Unsupported when the device is
// missing or lacks timestamp-query. Env WGT_WEBGPU_PROFILE=1 turns it on at start-up and
// prints webgpu_profile_report() to stderr at exit.
void webgpu_profile(bool on, int device = 0);
bool webgpu_profiling(int device = 0);
// Per-kernel times since the last reset, largest total first. Submits the dispatches still
// being recorded (and waits for them), so every op called so far is included.
std::vector<KernelTime> webgpu_profile_read(bool reset = true, int device = 0);
// A table of webgpu_profile_read(reset) (one line per kernel, sorted by total time).
std::string webgpu_profile_report(bool reset = false, int device = 0);
// The same table for times already read.
std::string format_kernel_times(const std::vector<KernelTime>& times);

// GPU time of whole batches of work, without per-dispatch passes: in batch timing mode each
// recorded batch (up to WGT_WEBGPU_BATCH dispatches, one compute pass) gets a timestamp at the
// beginning and at the end of its pass, so the time covers its kernels running back to back,
// with the barriers between them, and leaves out the host (recording, submission) and idle
// gaps between batches. Each batch submission then waits for its timestamps. Throws
// Unsupported without timestamp-query.
struct BatchGpuTime {
  uint64_t batches = 0, dispatches = 0;
  double gpu_us = 0;
};
void webgpu_batch_timing(bool on, int device = 0);
BatchGpuTime webgpu_batch_time_read(bool reset = true, int device = 0);

// Host-side time of the runtime's own stages, to tell whether small ops are bound by the host:
// per op the backend choice (capability checks, policy), input residency, output allocation,
// the backend's launch and recording, the bookkeeping; for WebGPU also the pipeline lookup,
// the dispatch recording (ours and Dawn's) and the batch submissions. Off by default (then each
// timer costs one relaxed atomic load); env WGT_HOST_PROFILE=1 turns it on at start-up and
// prints host_profile_report() to stderr at exit. Stages nest (an op's execute contains its
// pipeline lookups and dispatches), so totals do not add up across levels.
struct HostStageTime {
  std::string stage;
  uint64_t count = 0;  // times the stage ran
  double total_us = 0;
  double mean_us() const { return count ? total_us / static_cast<double>(count) : 0.0; }
};
void host_profile(bool on);
bool host_profiling();
std::vector<HostStageTime> host_profile_read(bool reset = true);
std::string host_profile_report(bool reset = false);

}  // namespace wgt
