// WebGPU backend: the dispatch batch (one command encoder and compute pass, the params arena),
// the bind-group cache, and flushing a batch into a submission.
#include "webgpu/webgpu_backend.hpp"

#include <algorithm>
#include <cstring>

#include "runtime/host_profile.hpp"
#include "webgpu/buffer_pool.hpp"
#include "webgpu/webgpu_backend_impl.hpp"

namespace wgt::webgpu {

using namespace api;

size_t WebGPUBackend::BindKeyHash::operator()(const std::vector<uint64_t>& k) const {
  uint64_t h = 0x9E3779B97F4A7C15ull;
  for (uint64_t v : k) h = (h ^ v) * 0x100000001B3ull + (h >> 29);
  return static_cast<size_t>(h);
}

void WebGPUBackend::drop_bind_groups() {
  for (auto& [k, bg] : bind_groups_) dev_->p().BindGroupRelease(bg);
  bind_groups_.clear();
  bind_generation_ = pool_->generation();
}

// ---- batching ----

void WebGPUBackend::begin_batch() {
  const Procs& p = dev_->p();
  if (profiling_ || batch_timing_) ensure_query_set();  // before the batch exists: it may throw
  const bool pass_timed = batch_timing_ && !profiling_;  // per-dispatch profiling takes precedence
  batch_ = std::make_unique<Batch>();
  CommandEncoderDescriptor ed;
  batch_->encoder = p.DeviceCreateCommandEncoder(dev_->handle(), &ed);
  batch_->profiled = profiling_;
  batch_->pass_timed = pass_timed;
  if (!batch_->profiled) {
    ComputePassDescriptor cd;
    PassTimestampWrites tw;
    if (pass_timed) {
      tw.query_set = query_set_;
      tw.beginning_of_pass_write_index = 0;
      tw.end_of_pass_write_index = 1;
      cd.timestamp_writes = &tw;
    }
    batch_->pass = p.CommandEncoderBeginComputePass(batch_->encoder, &cd);
    ++stats_.passes;
  }
  batch_->arena.reserve(arena_capacity_);
}

void WebGPUBackend::dispatch(const Dispatch& d) {
  hostprof::Scope prof(hostprof::Dispatch);
  session_guard("webgpu::dispatch");
  if (!d.pipeline) throw_error(ErrorKind::InvalidArgument, "webgpu::dispatch", "null pipeline");
  if (d.args.size() > limits().max_storage_buffers_per_shader_stage)
    throw_error(ErrorKind::Unsupported, "webgpu::dispatch",
                std::to_string(d.args.size()) + " storage bindings exceed the adapter limit");
  const uint32_t maxg = limits().max_compute_workgroups_per_dimension;
  if (d.groups_x > maxg || d.groups_y > maxg || d.groups_z > maxg)
    throw_error(ErrorKind::Unsupported, "webgpu::dispatch", "workgroup count above maxComputeWorkgroupsPerDimension; use grid()");
  if (d.groups_x == 0 || d.groups_y == 0 || d.groups_z == 0) return;  // nothing to run
  const size_t align = std::max<size_t>(256, limits().min_uniform_buffer_offset_alignment);
  const size_t psize = round_up(d.params_size, 16);
  if (psize > 65536) throw_error(ErrorKind::InvalidArgument, "webgpu::dispatch", "params struct above 64 KiB");
  if (batch_ && round_up(batch_->arena.size(), align) + psize > arena_capacity_) {
    if (session_depth_) ++stats_.session_splits;  // the arena is written once per submission
    flush();
  }
  if (!batch_) begin_batch();
  const Procs& p = dev_->p();
  if (!batch_->pass && !batch_->profiled) {
    // A copy recorded inside a session (record_write) ended the batch's compute pass.
    ComputePassDescriptor cd;
    batch_->pass = p.CommandEncoderBeginComputePass(batch_->encoder, &cd);
    batch_->last_pipeline = nullptr;
    ++stats_.passes;
  }

  // Entries live on the stack for the usual binding counts (no heap allocation per dispatch).
  const size_t n_entries = d.args.size() + (d.params_size ? 1 : 0);
  constexpr size_t kInline = 16;
  BindGroupEntry inline_entries[kInline];
  std::vector<BindGroupEntry> heap_entries(n_entries > kInline ? n_entries : 0);
  BindGroupEntry* entries = n_entries > kInline ? heap_entries.data() : inline_entries;
  for (size_t i = 0; i < d.args.size(); ++i) {
    const auto* wb = static_cast<const WebGPUBuffer*>(d.args[i].buffer);
    if (!wb) throw_error(ErrorKind::InvalidArgument, "webgpu::dispatch", "argument " + std::to_string(i) + " has no buffer");
    raw(*wb, "webgpu::dispatch");  // domain check
    entries[i].binding = static_cast<uint32_t>(i);
    entries[i].buffer = wb->handle();
    entries[i].size = wb->bound_size();
  }
  const bool dynamic = d.pipeline->bindings != 0;
  if (dynamic && (n_entries != d.pipeline->bindings || !d.params_size))
    throw_error(ErrorKind::InvalidArgument, "webgpu::dispatch",
                "kernel '" + d.pipeline->key + "' declares " + std::to_string(d.pipeline->bindings) +
                    " bindings (storage buffers, then the params uniform) but the launcher passes " +
                    std::to_string(d.args.size()) + " buffers" + (d.params_size ? " and params" : " and no params"));
  uint32_t slot = 0;
  if (d.params_size) {
    auto& a = batch_->arena;
    slot = static_cast<uint32_t>(round_up(a.size(), align));
    a.resize(slot + psize, 0);
    std::memcpy(a.data() + slot, d.params, d.params_size);
    auto& e = entries[n_entries - 1];
    e.binding = static_cast<uint32_t>(d.args.size());
    e.buffer = arena_;
    e.offset = dynamic ? 0 : slot;  // dynamic: the slot is passed to SetBindGroup instead
    e.size = psize;
  }
  BindGroupDescriptor bd;
  bd.layout = d.pipeline->layout;
  bd.entry_count = n_entries;
  bd.entries = entries;
  if (batch_->profiled) {
    // Pipeline and bind groups do not carry over between passes: last_pipeline resets.
    const uint32_t i = static_cast<uint32_t>(batch_->timed.size());
    PassTimestampWrites tw;
    tw.query_set = query_set_;
    tw.beginning_of_pass_write_index = 2 * i;
    tw.end_of_pass_write_index = 2 * i + 1;
    ComputePassDescriptor cd;
    cd.timestamp_writes = &tw;
    batch_->pass = p.CommandEncoderBeginComputePass(batch_->encoder, &cd);
    batch_->last_pipeline = nullptr;
    ++stats_.passes;
  }
  if (d.pipeline != batch_->last_pipeline) {
    p.ComputePassEncoderSetPipeline(batch_->pass, d.pipeline->pipeline);
    batch_->last_pipeline = d.pipeline;
  }
  if (dynamic) {
    if (bind_generation_ != pool_->generation() || bind_groups_.size() >= kMaxBindGroups) drop_bind_groups();
    bind_key_.clear();
    bind_key_.push_back(reinterpret_cast<uintptr_t>(d.pipeline));
    bind_key_.push_back(psize);
    for (size_t i = 0; i < d.args.size(); ++i) {
      bind_key_.push_back(reinterpret_cast<uintptr_t>(entries[i].buffer));
      bind_key_.push_back(entries[i].size);
    }
    BindGroup bg;
    if (auto it = bind_groups_.find(bind_key_); it != bind_groups_.end()) {
      bg = it->second;
      ++stats_.bind_group_reuses;
    } else {
      hostprof::Scope prof_bg(hostprof::BindGroup);
      bg = p.DeviceCreateBindGroup(dev_->handle(), &bd);
      bind_groups_.emplace(bind_key_, bg);
      ++stats_.bind_groups_created;
    }
    hostprof::Scope prof_enc(hostprof::DawnEncode);
    p.ComputePassEncoderSetBindGroup(batch_->pass, 0, bg, 1, &slot);
    p.ComputePassEncoderDispatchWorkgroups(batch_->pass, d.groups_x, d.groups_y, d.groups_z);
  } else {
    BindGroup bg;
    {
      hostprof::Scope prof_bg(hostprof::BindGroup);
      bg = p.DeviceCreateBindGroup(dev_->handle(), &bd);
    }
    ++stats_.bind_groups_created;
    hostprof::Scope prof_enc(hostprof::DawnEncode);
    p.ComputePassEncoderSetBindGroup(batch_->pass, 0, bg, 0, nullptr);
    p.ComputePassEncoderDispatchWorkgroups(batch_->pass, d.groups_x, d.groups_y, d.groups_z);
    p.BindGroupRelease(bg);  // the encoder keeps its own reference
  }
  if (batch_->profiled) {
    p.ComputePassEncoderEnd(batch_->pass);
    p.ComputePassEncoderRelease(batch_->pass);
    batch_->pass = nullptr;
    batch_->timed.push_back(d.pipeline);
    ++stats_.timed_dispatches;
  }
  ++stats_.dispatches;
  // A profiled batch also ends when its query set is full (set_max_batch may have grown).
  // A session suspends the batch limit and early submission: only the query set bounds it.
  const uint32_t limit = session_depth_ ? (batch_->profiled ? query_count_ / 2 : UINT32_MAX)
                         : batch_->profiled ? std::min(max_batch_, query_count_ / 2) : max_batch_;
  if (++batch_->dispatches >= limit) {
    if (session_depth_) ++stats_.session_splits;
    flush();
  } else if (session_depth_) {
    // recorded for the session's submission
  } else if (early_batch_ && !batch_->profiled && batch_->dispatches % early_batch_ == 0 && in_flight_->idle()) {
    // The device is idle: hand it what is recorded so far rather than let it wait for the rest.
    ++stats_.early_submits;
    flush();
  }
}

void WebGPUBackend::flush() {
  session_guard("flush");
  flush_with(nullptr);
}

void WebGPUBackend::flush_with(const TailCopy* tail) {
  if (!batch_) return;
  hostprof::Scope prof(hostprof::Flush);
  std::unique_ptr<Batch> b = std::move(batch_);
  const Procs& p = dev_->p();
  if (b->pass) {
    p.ComputePassEncoderEnd(b->pass);
    p.ComputePassEncoderRelease(b->pass);
  }
  const uint32_t n_queries = b->pass_timed ? 2 : 2 * static_cast<uint32_t>(b->timed.size());
  if (n_queries) {
    p.CommandEncoderResolveQuerySet(b->encoder, query_set_, 0, n_queries, query_resolve_, 0);
    p.CommandEncoderCopyBufferToBuffer(b->encoder, query_resolve_, 0, query_read_, 0, uint64_t{8} * n_queries);
  }
  if (tail) p.CommandEncoderCopyBufferToBuffer(b->encoder, tail->src, tail->src_off, tail->dst, 0, tail->size);
  if (tail && tail->status) p.CommandEncoderCopyBufferToBuffer(b->encoder, status_handle(), 0, tail->dst, tail->size, 4);
  CommandBufferDescriptor cd;
  CommandBuffer cb = p.CommandEncoderFinish(b->encoder, &cd);
  // The arena is written once per batch; queue order puts it before this submission.
  if (!b->arena.empty())
    p.QueueWriteBuffer(dev_->queue(), arena_, 0, b->arena.data(), round_up(b->arena.size(), 4));
  p.QueueSubmit(dev_->queue(), 1, &cb);
  p.CommandBufferRelease(cb);
  p.CommandEncoderRelease(b->encoder);
  ++batch_serial_;
  ++stats_.submits;
  // May wait for older submissions (back-pressure); the batch is already handed over.
  in_flight_->submitted(b->dispatches, b->arena.size() + (tail ? tail->size : 0), "webgpu submit");
  if (b->pass_timed) collect_batch_time(*b);
  else if (n_queries) collect_timestamps(*b);
}

}  // namespace wgt::webgpu
