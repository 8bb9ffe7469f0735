// WebGPU backend: the pipeline cache. Compiles a ShaderVariant's WGSL once per key, scans the
// WGSL for the explicit-layout binding convention, and keeps the PipelineKey shortcut maps.
#include "webgpu/webgpu_backend.hpp"

#include <algorithm>
#include <cctype>

#include "runtime/host_profile.hpp"
#include "webgpu/shader_registry.hpp"
#include "webgpu/webgpu_backend_impl.hpp"

namespace wgt::webgpu {

using namespace api;

// The @group(0) bindings of a kernel, when they follow the convention of context.hpp that an
// explicit layout with a dynamic-offset params uniform needs: storage buffers 0..n-1, then
// one uniform at n. Anything else (no params, textures, other groups) returns {} and the
// pipeline keeps the automatic layout with one bind group per dispatch.
std::vector<BufferBindingType> explicit_bindings(const std::string& src) {
  std::vector<std::pair<uint32_t, BufferBindingType>> found;
  auto skip_ws = [&](size_t i) {
    while (i < src.size() && std::isspace(static_cast<unsigned char>(src[i]))) ++i;
    return i;
  };
  auto number = [&](size_t& i, uint32_t& out) {
    size_t j = i;
    out = 0;
    while (j < src.size() && std::isdigit(static_cast<unsigned char>(src[j]))) out = out * 10 + (src[j++] - '0');
    const bool ok = j > i && j < src.size() && src[j] == ')';
    i = j + 1;
    return ok;
  };
  for (size_t at = src.find("@group("); at != std::string::npos; at = src.find("@group(", at + 1)) {
    size_t i = at + 7;
    uint32_t group = 0, binding = 0;
    if (!number(i, group) || group != 0) return {};
    i = skip_ws(i);
    if (src.compare(i, 9, "@binding(") != 0) return {};
    i += 9;
    if (!number(i, binding)) return {};
    i = skip_ws(i);
    if (src.compare(i, 4, "var<") != 0) return {};  // textures/samplers: not handled here
    const size_t end = src.find('>', i);
    if (end == std::string::npos) return {};
    const std::string space = src.substr(i + 4, end - i - 4);
    BufferBindingType t;
    if (space.find("uniform") != std::string::npos) t = BufferBindingType::Uniform;
    else if (space.find("read_write") != std::string::npos) t = BufferBindingType::Storage;
    else if (space.find("storage") != std::string::npos) t = BufferBindingType::ReadOnlyStorage;
    else return {};
    found.emplace_back(binding, t);
  }
  std::sort(found.begin(), found.end());
  std::vector<BufferBindingType> out;
  for (size_t k = 0; k < found.size(); ++k) {
    if (found[k].first != k) return {};  // gaps or duplicates
    const bool last = k + 1 == found.size();
    if ((found[k].second == BufferBindingType::Uniform) != last) return {};
    out.push_back(found[k].second);
  }
  return out;
}

// ---- pipelines ----

const Pipeline* WebGPUBackend::pipeline(const ShaderVariant& variant) {
  hostprof::Scope prof(hostprof::Pipeline);
  // The layout mode is part of the cache key, so set_bind_cache() can switch at any time.
  std::string key = variant.key();
  if (bind_cache_) key += "#dyn";
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second.get();
  const std::string src = expand_shader(variant.shader, variant.defines);
  const Procs& p = dev_->p();
  ShaderSourceWGSL wgsl;
  wgsl.code = {src.data(), src.size()};
  ShaderModuleDescriptor md;
  md.next = &wgsl.chain;
  md.label = {variant.shader.c_str(), kStrlen};
  // Error scopes (not the sticky state): a bad shader is the caller's typed error. The module
  // is checked before the pipeline: with skip_validation Dawn does not survive a pipeline
  // built from a module that failed to compile.
  auto fail = [&](const std::string& msg) {
    throw_error(ErrorKind::RuntimeState, "webgpu: compile " + variant.shader,
                "WGSL shader '" + key + "' failed to compile: " + msg);
  };
  dev_->push_scope(ErrorFilter::Internal);
  dev_->push_scope(ErrorFilter::Validation);
  ShaderModule mod = p.DeviceCreateShaderModule(dev_->handle(), &md);
  std::string err = dev_->pop_scope();
  if (std::string ierr = dev_->pop_scope(); err.empty()) err = ierr;
  if (!mod || !err.empty()) {
    if (mod) p.ShaderModuleRelease(mod);
    fail(err.empty() ? "no shader module returned" : err);
  }
  // Kernels with a params uniform get an explicit layout whose uniform has a dynamic offset,
  // so one bind group serves every dispatch on the same buffers (see dispatch()).
  BindGroupLayout explicit_bgl = nullptr;
  PipelineLayout explicit_pl = nullptr;
  const std::vector<BufferBindingType> bindings = bind_cache_ ? explicit_bindings(src) : std::vector<BufferBindingType>{};
  if (!bindings.empty()) {
    std::vector<BindGroupLayoutEntry> le(bindings.size());
    for (size_t k = 0; k < bindings.size(); ++k) {
      le[k].binding = static_cast<uint32_t>(k);
      le[k].visibility = shader_stage::Compute;
      le[k].buffer.type = bindings[k];
      le[k].buffer.has_dynamic_offset = bindings[k] == BufferBindingType::Uniform;
    }
    BindGroupLayoutDescriptor ld;
    ld.entry_count = le.size();
    ld.entries = le.data();
    dev_->push_scope(ErrorFilter::Validation);
    explicit_bgl = p.DeviceCreateBindGroupLayout(dev_->handle(), &ld);
    if (explicit_bgl) {
      PipelineLayoutDescriptor pld;
      pld.bind_group_layout_count = 1;
      pld.bind_group_layouts = &explicit_bgl;
      explicit_pl = p.DeviceCreatePipelineLayout(dev_->handle(), &pld);
    }
    if (!dev_->pop_scope().empty() || !explicit_pl) {  // keep the automatic layout
      if (explicit_pl) p.PipelineLayoutRelease(explicit_pl);
      if (explicit_bgl) p.BindGroupLayoutRelease(explicit_bgl);
      explicit_pl = nullptr;
      explicit_bgl = nullptr;
    }
  }
  ComputePipelineDescriptor pd;
  pd.label = md.label;
  pd.layout = explicit_pl;
  pd.compute.module = mod;
  pd.compute.entry_point = {"main", kStrlen};
  dev_->push_scope(ErrorFilter::Internal);
  dev_->push_scope(ErrorFilter::Validation);
  ComputePipeline pl = p.DeviceCreateComputePipeline(dev_->handle(), &pd);
  err = dev_->pop_scope();
  if (std::string ierr = dev_->pop_scope(); err.empty()) err = ierr;
  p.ShaderModuleRelease(mod);
  if (!pl || !err.empty()) {
    if (pl) p.ComputePipelineRelease(pl);
    if (explicit_pl) p.PipelineLayoutRelease(explicit_pl);
    if (explicit_bgl) p.BindGroupLayoutRelease(explicit_bgl);
    fail(err.empty() ? "no pipeline returned" : err);
  }
  auto out = std::make_unique<Pipeline>();
  out->pipeline = pl;
  out->layout = explicit_bgl ? explicit_bgl : p.ComputePipelineGetBindGroupLayout(pl, 0);
  out->pipeline_layout = explicit_pl;
  out->bindings = explicit_bgl ? static_cast<uint32_t>(bindings.size()) : 0;
  out->key = key;
  out->name = variant.key();
  ++stats_.pipelines;
  return pipelines_.emplace(key, std::move(out)).first->second.get();
}

size_t WebGPUBackend::PipelineKeyHash::operator()(const PipelineKey& id) const {
  uint64_t h = reinterpret_cast<uintptr_t>(id.family) * 0x9E3779B97F4A7C15ull;
  for (uint64_t w : id.w) h = (h ^ w) * 0x100000001B3ull + (h >> 29);
  return static_cast<size_t>(h ^ (h >> 32));
}

const Pipeline* WebGPUBackend::find_pipeline(const PipelineKey& id) {
  hostprof::Scope prof(hostprof::Pipeline);
  const auto& m = keyed_pipelines_[bind_cache_ ? 1 : 0];
  const auto it = m.find(id);
  return it == m.end() ? nullptr : it->second;
}

void WebGPUBackend::remember_pipeline(const PipelineKey& id, const Pipeline* p) {
  if (p) keyed_pipelines_[bind_cache_ ? 1 : 0].emplace(id, p);
}

}  // namespace wgt::webgpu
