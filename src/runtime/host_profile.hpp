// Host-side stage timers (wgt/profile.hpp: host_profile). A Scope adds the wall time between
// its construction and destruction to one stage when host profiling is on; when it is off a
// Scope costs one relaxed atomic load.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>

namespace wgt::hostprof {

enum Stage : int {
  OpTotal,      // Runtime::run, whole
  Choose,       // backend choice: capability checks (supports), policy
  Inputs,       // inputs moved or made resident, device-memory budget for the outputs
  Outputs,      // output tensors allocated
  Execute,      // backend execute (launch + dispatch recording)
  Bookkeeping,  // per-op stats and decision log
  Pipeline,     // WebGPU pipeline lookup (or compile) by shader variant
  Dispatch,     // WebGPU dispatch recording, ours and Dawn's (bind group, set/dispatch)
  BindGroup,    // WebGPU bind group creation (cache misses), part of Dispatch
  DawnEncode,   // Dawn's SetPipeline/SetBindGroup/DispatchWorkgroups, part of Dispatch
  Flush,        // WebGPU batch submission (finish, params upload, queue submit)
  kStageCount
};

extern std::atomic<bool> g_on;
void enable_from_env();
void add(Stage s, double seconds);

class Scope {
 public:
  explicit Scope(Stage s) : stage_(s), on_(g_on.load(std::memory_order_relaxed)) {
    if (on_) t0_ = std::chrono::steady_clock::now();
  }
  ~Scope() {
    if (on_) add(stage_, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count());
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  Stage stage_;
  bool on_;
  std::chrono::steady_clock::time_point t0_{};
};

}  // namespace wgt::hostprof
