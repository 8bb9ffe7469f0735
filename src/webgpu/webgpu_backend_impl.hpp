// Private to the WebGPU backend's files (webgpu_*.cpp): the pipeline record, the open batch,
// the fixed sizes and the buffer helper they share.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "webgpu/webgpu_backend.hpp"

namespace wgt::webgpu {

class Pipeline {
 public:
  api::ComputePipeline pipeline = nullptr;
  api::BindGroupLayout layout = nullptr;
  api::PipelineLayout pipeline_layout = nullptr;  // explicit layout, or null (automatic layout)
  uint32_t bindings = 0;                     // explicit layout: storage bindings + the params uniform
  std::string key;
  std::string name;  // ShaderVariant::key() (the cache key less its layout-mode suffix): profile label
};

// The open batch: one command encoder with one compute pass, plus the params arena bytes.
// A profiled batch instead opens one pass per dispatch (pass timestamps are the only
// timestamps core WebGPU offers) and remembers which pipeline each timed pass ran.
struct WebGPUBackend::Batch {
  api::CommandEncoder encoder = nullptr;
  api::ComputePassEncoder pass = nullptr;  // null between dispatches of a profiled batch
  std::vector<uint8_t> arena;  // params of this batch, slots aligned to the uniform alignment
  uint32_t dispatches = 0;
  const Pipeline* last_pipeline = nullptr;  // SetPipeline only when it changes
  bool profiled = false;
  bool pass_timed = false;  // batch timing: its one pass writes timestamps 0 (begin) and 1 (end)
  std::vector<const Pipeline*> timed;  // timed[i] wrote timestamps 2i (begin) and 2i+1 (end)
};

inline constexpr size_t kArenaBytes = 256 * 1024;
inline constexpr size_t kMaxBindGroups = 4096;  // cached bind groups before the cache is reset
// Timed dispatches per profiled batch at most: the WebGPU spec caps a query set at 4096
// queries, two per dispatch.
inline constexpr uint32_t kMaxTimedPerBatch = 2048;

inline size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

// A device buffer of `usage`; OutOfMemory (naming `what`) when Dawn cannot create it.
api::Buffer create_buffer(const DawnDevice& d, api::Flags usage, uint64_t size, const char* what);

// The @group(0) binding types of a kernel's WGSL when they follow the explicit-layout
// convention of context.hpp, else {} (webgpu_pipelines.cpp).
std::vector<api::BufferBindingType> explicit_bindings(const std::string& src);

}  // namespace wgt::webgpu
