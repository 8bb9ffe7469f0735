// Dawn instance, adapter discovery and device creation (see device.hpp).
#include "webgpu/device.hpp"

#include <cstdlib>
#include <cstring>

#include "runtime/settings.hpp"

namespace wgt::webgpu {

using namespace api;

std::string to_string(StringView s) {
  if (!s.data) return {};
  return s.length == kStrlen ? std::string(s.data) : std::string(s.data, s.length);
}

namespace {

const char* backend_name(BackendType b) {
  switch (b) {
    case BackendType::Null: return "null";
    case BackendType::WebGPU: return "webgpu";
    case BackendType::D3D11: return "d3d11";
    case BackendType::D3D12: return "d3d12";
    case BackendType::Metal: return "metal";
    case BackendType::Vulkan: return "vulkan";
    case BackendType::OpenGL: return "opengl";
    case BackendType::OpenGLES: return "opengles";
    default: return "undefined";
  }
}
const char* adapter_type_name(AdapterType t) {
  switch (t) {
    case AdapterType::DiscreteGPU: return "discrete-gpu";
    case AdapterType::IntegratedGPU: return "integrated-gpu";
    case AdapterType::CPU: return "cpu";
    default: return "unknown";
  }
}

// WGPUWGSLLanguageFeatureName_Packed4x8IntegerDotProduct (the same in both ABIs).
constexpr uint32_t kWgslPacked4x8IntegerDotProduct = 0x2;

// Limits are read into a padded buffer: the prefix we declare is verified, and whatever the
// build appends after it is preserved when we hand the struct back as required limits.
struct PaddedLimits {
  api::Limits l{};
  uint8_t pad[256] = {};
};
struct PaddedInfo {
  api::AdapterInfo i{};
  uint8_t pad[256] = {};
};

std::vector<std::pair<std::string, uint64_t>> limit_list(const api::Limits& l) {
  return {
      {"maxBufferSize", l.max_buffer_size},
      {"maxStorageBufferBindingSize", l.max_storage_buffer_binding_size},
      {"maxUniformBufferBindingSize", l.max_uniform_buffer_binding_size},
      {"maxStorageBuffersPerShaderStage", l.max_storage_buffers_per_shader_stage},
      {"maxComputeWorkgroupStorageSize", l.max_compute_workgroup_storage_size},
      {"maxComputeInvocationsPerWorkgroup", l.max_compute_invocations_per_workgroup},
      {"maxComputeWorkgroupSizeX", l.max_compute_workgroup_size_x},
      {"maxComputeWorkgroupSizeY", l.max_compute_workgroup_size_y},
      {"maxComputeWorkgroupSizeZ", l.max_compute_workgroup_size_z},
      {"maxComputeWorkgroupsPerDimension", l.max_compute_workgroups_per_dimension},
      {"minUniformBufferOffsetAlignment", l.min_uniform_buffer_offset_alignment},
      {"minStorageBufferOffsetAlignment", l.min_storage_buffer_offset_alignment},
      {"maxBindGroups", l.max_bind_groups},
  };
}

// The adapter's memory heaps (second AdapterGetInfo call with the heaps struct chained;
// Dawn fails the call when the adapter lacks the feature, so it is checked first).
std::vector<HeapDesc> query_heaps(const Procs& p, Adapter a) {
  std::vector<HeapDesc> out;
  if (!p.AdapterHasFeature(a, p.abi->adapter_properties_memory_heaps)) return out;
  PaddedInfo info;
  AdapterPropertiesMemoryHeaps heaps;
  info.i.next = &heaps.chain;
  if (p.AdapterGetInfo(a, &info.i) == Status::Success) {
    for (size_t k = 0; k < heaps.heap_count && heaps.heap_info; ++k)
      out.push_back({heaps.heap_info[k].properties, heaps.heap_info[k].size});
    p.AdapterPropertiesMemoryHeapsFreeMembers(heaps);
  }
  info.i.next = nullptr;
  p.AdapterInfoFreeMembers(info.i);
  return out;
}

// The adapter's subgroup-matrix configs (the same pattern; only where the ABI's sType is known
// and the adapter offers the feature).
std::vector<MatrixConfig> query_matrix_configs(const Procs& p, Adapter a) {
  std::vector<MatrixConfig> out;
  if (!p.abi->stype_subgroup_matrix_configs || !p.AdapterHasFeature(a, p.abi->subgroup_matrix)) return out;
  PaddedInfo info;
  AdapterPropertiesSubgroupMatrixConfigs sm;
  sm.chain.stype = static_cast<SType>(p.abi->stype_subgroup_matrix_configs);
  info.i.next = &sm.chain;
  if (p.AdapterGetInfo(a, &info.i) == Status::Success) {
    for (size_t k = 0; k < sm.config_count && sm.configs; ++k) {
      const auto& c = sm.configs[k];
      out.push_back({c.component_type, c.result_component_type, c.m, c.n, c.k});
    }
    p.AdapterPropertiesSubgroupMatrixConfigsFreeMembers(sm);
  }
  info.i.next = nullptr;
  p.AdapterInfoFreeMembers(info.i);
  return out;
}

}  // namespace

std::string to_string(const MatrixConfig& c) {
  return subgroup_matrix_component_name(c.component) + "->" + subgroup_matrix_component_name(c.result) + " " +
         std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k);
}

// Multiprocessor counts of adapters whose shape heuristics were measured (WebGPU exposes no
// such count): the NVIDIA H200 and H100 SXM, 132 SMs each (public specifications), matched
// by the adapter name; 0 (unknown) for every other adapter.
uint32_t known_compute_units(const std::string& name) {
  for (const char* n : {"H200", "H100 80GB HBM3", "H100 SXM"})
    if (name.find(n) != std::string::npos) return 132;
  return 0;
}

std::string heap_property_names(uint64_t props) {
  static const std::pair<uint64_t, const char*> kNames[] = {
      {heap_property::DeviceLocal, "device-local"},   {heap_property::HostVisible, "host-visible"},
      {heap_property::HostCoherent, "host-coherent"}, {heap_property::HostUncached, "host-uncached"},
      {heap_property::HostCached, "host-cached"}};
  std::string s;
  for (auto [bit, name] : kNames)
    if (props & bit) s += (s.empty() ? "" : "|") + std::string(name);
  return s.empty() ? "none" : s;
}

void derive_memory_heap_bytes(AdapterDesc& d) {
  uint64_t local = 0;
  for (const auto& h : d.heaps)
    if (h.properties & heap_property::DeviceLocal) local += h.size;
  if (local == 0) {
    d.memory_heap_bytes = 0;
    d.memory_heap_basis = d.heaps.empty() ? "no heap information (feature adapter-properties-memory-heaps absent)"
                                          : "no device-local heap reported";
    return;
  }
  // A software or integrated adapter's "device-local" heap is the host's RAM, which the host
  // copies of tensors, the CPU backend and other processes share: claim only half of it.
  if (d.adapter_type == "cpu" || d.adapter_type == "integrated-gpu") {
    d.memory_heap_bytes = local / 2;
    d.memory_heap_basis = "half of the device-local heaps (" + d.adapter_type + " adapter: shared system memory)";
  } else {
    d.memory_heap_bytes = local;
    d.memory_heap_basis = "sum of the device-local heaps";
  }
}

uint64_t DawnInstance::timeout_ms() {
  return *settings().webgpu_timeout_ms;
}

void wait_future(const Procs& p, Instance instance, Future f, const char* what) {
  FutureWaitInfo w{f, 0};
  const uint64_t ms = DawnInstance::timeout_ms();
  uint32_t st = p.InstanceWaitAny(instance, 1, &w, ms * 1000000ull);
  if (st == static_cast<uint32_t>(WaitStatus::Success) && w.completed) return;
  if (st == static_cast<uint32_t>(WaitStatus::TimedOut))
    throw_error(ErrorKind::RuntimeState, what,
                "timed out after " + std::to_string(ms) + " ms waiting for the GPU (WGT_WEBGPU_TIMEOUT_MS); "
                "the device may be hung or the work too large");
  throw_error(ErrorKind::RuntimeState, what, "wgpuInstanceWaitAny failed with status " + std::to_string(st));
}

void DawnInstance::wait(Future f, const char* what) const { wait_future(*procs_, instance_, f, what); }

AdapterDesc describe_adapter(const Procs& p, Instance instance, Adapter a) {
  PaddedInfo info;
  p.AdapterGetInfo(a, &info.i);
  AdapterDesc d;
  d.name = to_string(info.i.device);
  d.vendor = to_string(info.i.vendor);
  d.architecture = to_string(info.i.architecture);
  d.description = to_string(info.i.description);
  d.backend_type = info.i.backend_type;
  d.backend = backend_name(info.i.backend_type);
  d.adapter_type = adapter_type_name(info.i.adapter_type);
  d.vendor_id = info.i.vendor_id;
  d.device_id = info.i.device_id;
  d.subgroup_min = info.i.subgroup_min_size;
  d.subgroup_max = info.i.subgroup_max_size;
  p.AdapterInfoFreeMembers(info.i);
  if (d.backend_type == BackendType::Null) return d;
  SupportedFeatures sf;
  p.AdapterGetFeatures(a, &sf);
  for (size_t i = 0; i < sf.count; ++i) {
    d.feature_values.push_back(sf.features[i]);
    if (const char* n = p.abi->feature_name(sf.features[i])) d.feature_names.push_back(n);
  }
  p.SupportedFeaturesFreeMembers(sf);
  // A WGSL language feature (instance-wide), listed with the adapter's for `wgt info`.
  if (p.InstanceHasWGSLLanguageFeature(instance, kWgslPacked4x8IntegerDotProduct))
    d.feature_names.push_back("wgsl:packed_4x8_integer_dot_product");
  PaddedLimits lim;
  p.AdapterGetLimits(a, &lim.l);
  d.limit_list = limit_list(lim.l);
  d.heaps = query_heaps(p, a);
  d.matrix_configs = query_matrix_configs(p, a);
  derive_memory_heap_bytes(d);
  return d;
}

DawnInstance* DawnInstance::get(std::string* why) {
  // Leaked on purpose (like the proc table): the Runtime singleton's backends use the
  // instance while statics are destroyed at exit.
  static std::mutex* mu = new std::mutex;
  static DawnInstance* inst = nullptr;
  static bool tried = false;
  static std::string* failure = new std::string;
  std::lock_guard<std::mutex> lock(*mu);
  if (!tried) {
    tried = true;
    auto* d = new DawnInstance();
    if (d->init(failure)) inst = d;
    else delete d;
  }
  if (!inst && why) *why = *failure;
  return inst;
}

bool DawnInstance::init(std::string* why) {
  procs_ = dawn_procs(why);
  if (!procs_) return false;
  // allow_unsafe_apis exposes the experimental features (subgroup-matrix) to the adapters.
  static const char* kInstanceToggles[] = {"allow_unsafe_apis"};
  DawnTogglesDescriptor toggles;
  toggles.enabled_count = 1;
  toggles.enabled = kInstanceToggles;
  // Every wait we do has a timeout, which needs the instance feature TimedWaitAny; where it is
  // requested depends on the engine's ABI.
  static const uint32_t kInstanceFeatures[] = {instance_feature::TimedWaitAny};
  InstanceDescriptor desc25;
  desc25.next = &toggles.chain;
  desc25.capabilities.timed_wait_any_enable = 1;
  InstanceDescriptor2026 desc26;
  desc26.next = &toggles.chain;
  desc26.required_feature_count = 1;
  desc26.required_features = kInstanceFeatures;
  if (procs_->abi->instance_required_features) instance_ = procs_->CreateInstance(&desc26);
  else instance_ = procs_->CreateInstance(&desc25);
  if (!instance_) {
    *why = "wgpuCreateInstance failed (Dawn could not create an instance with TimedWaitAny; ABI " +
           std::string(procs_->abi->name) + ")";
    return false;
  }
  static const char* kAdapterToggles[] = {"vulkan_enable_f16_on_nvidia"};
  DawnTogglesDescriptor adapter_toggles;
  adapter_toggles.enabled_count = 1;
  adapter_toggles.enabled = kAdapterToggles;
  std::string null_seen;
  for (PowerPreference pref : {PowerPreference::HighPerformance, PowerPreference::LowPower}) {
    RequestAdapterOptions opts;
    opts.next = &adapter_toggles.chain;
    opts.power_preference = pref;
    struct Result { Adapter a = nullptr; std::string msg; } res;
    RequestAdapterCallbackInfo cb;
    cb.callback = [](uint32_t status, Adapter a, StringView m, void* u1, void*) {
      auto* r = static_cast<Result*>(u1);
      if (status == static_cast<uint32_t>(RequestStatus::Success)) r->a = a;
      r->msg = to_string(m);
    };
    cb.userdata1 = &res;
    try {
      wait(procs_->InstanceRequestAdapter(instance_, &opts, cb), "webgpu: request adapter");
    } catch (const Error& e) {
      *why = e.what();
      return false;
    }
    if (!res.a) continue;
    AdapterDesc d = describe_adapter(*procs_, instance_, res.a);
    if (d.backend_type == BackendType::Null) {
      null_seen = d.name;
      procs_->AdapterRelease(res.a);
      continue;
    }
    bool dup = false;
    for (auto& [a, e] : adapters_)
      dup |= e.name == d.name && e.vendor_id == d.vendor_id && e.device_id == d.device_id && e.backend_type == d.backend_type;
    if (dup) {
      procs_->AdapterRelease(res.a);
      continue;
    }
    for (const char* t : kInstanceToggles) d.adapter_toggles.push_back(t);
    for (const char* t : kAdapterToggles) d.adapter_toggles.push_back(t);
    adapters_.emplace_back(res.a, std::move(d));
  }
  if (adapters_.empty()) {
    *why = null_seen.empty()
               ? "Dawn found no adapter; install a Vulkan driver (on CPU-only machines Mesa >= 25 lavapipe: "
                 "apt-get install -t bookworm-backports mesa-vulkan-drivers libvulkan1)"
               : "Dawn offered only its Null backend ('" + null_seen +
                     "'), which computes nothing; install a working Vulkan driver (Mesa >= 25 lavapipe from "
                     "bookworm-backports on CPU-only machines)";
    return false;
  }
  // WGT_WEBGPU_ADAPTER=N keeps only adapter N (ordinal in the order above).
  if (const auto& sel = *settings().webgpu_adapter) {
    const long n = static_cast<long>(*sel);
    if (n >= static_cast<long>(adapters_.size())) {
      *why = "WGT_WEBGPU_ADAPTER=" + std::to_string(n) + " is not an adapter ordinal in [0, " +
             std::to_string(adapters_.size()) + ")";
      adapters_.clear();
      return false;
    }
    auto keep = adapters_[n];
    for (size_t i = 0; i < adapters_.size(); ++i)
      if (static_cast<long>(i) != n) procs_->AdapterRelease(adapters_[i].first);
    adapters_ = {keep};
  }
  return true;
}

// ---- device ----

void DawnDevice::on_lost(const Device*, DeviceLostReason reason, StringView msg, void* u1, void*) {
  auto* self = static_cast<DawnDevice*>(u1);
  if (self->destroying_ || reason == DeviceLostReason::Destroyed || reason == DeviceLostReason::CallbackCancelled)
    return;
  std::lock_guard<std::mutex> lock(self->err_mu_);
  self->sticky_ = "device lost (reason " + std::to_string(static_cast<uint32_t>(reason)) + "): " + to_string(msg);
  self->sticky_kind_ = ErrorKind::DeviceLost;
}

void DawnDevice::on_error(const Device*, ErrorType type, StringView msg, void* u1, void*) {
  auto* self = static_cast<DawnDevice*>(u1);
  std::lock_guard<std::mutex> lock(self->err_mu_);
  if (!self->sticky_.empty()) return;  // keep the first error: later ones are usually fallout
  self->sticky_ = std::string(type == ErrorType::OutOfMemory ? "out of memory: " : "uncaptured WebGPU error: ") +
                  to_string(msg);
  self->sticky_kind_ = type == ErrorType::OutOfMemory ? ErrorKind::OutOfMemory : ErrorKind::RuntimeState;
}

void DawnDevice::check(const char* op) {
  std::string msg;
  ErrorKind kind;
  {
    std::lock_guard<std::mutex> lock(err_mu_);
    if (sticky_.empty()) return;
    msg = sticky_;
    kind = sticky_kind_;
    if (kind != ErrorKind::DeviceLost) sticky_.clear();  // a lost device stays lost
  }
  throw_error(kind, op, msg + (kind == ErrorKind::DeviceLost ? "; restart the process to get a new device"
                                                             : "; rerun with WGT_WEBGPU_VALIDATE=1 for details"));
}

void DawnDevice::push_scope(ErrorFilter f) const { p().DevicePushErrorScope(device_, f); }

std::string DawnDevice::pop_scope(ErrorType* type) const {
  struct R { ErrorType type = ErrorType::NoError; std::string msg; } r;
  PopErrorScopeCallbackInfo cb;
  cb.callback = [](uint32_t, ErrorType t, StringView m, void* u1, void*) {
    auto* rr = static_cast<R*>(u1);
    rr->type = t;
    rr->msg = to_string(m);
  };
  cb.userdata1 = &r;
  wait(p().DevicePopErrorScope(device_, cb), "webgpu: pop error scope");
  if (type) *type = r.type;
  if (r.type == ErrorType::NoError) return {};
  return r.msg.empty() ? "WebGPU error of type " + std::to_string(static_cast<uint32_t>(r.type)) : r.msg;
}

void DawnDevice::wait(Future f, const char* what) const { wait_future(*procs_, instance_, f, what); }

DawnDevice::DawnDevice(DawnInstance& inst, size_t index)
    : procs_(&inst.procs()), instance_(inst.handle()), desc_(inst.desc(index)) {
  const Adapter adapter = inst.adapter(index);
  validate_ = *settings().webgpu_validate;
  std::vector<uint32_t> want;
  auto has = [&](uint32_t f) { return p().AdapterHasFeature(adapter, f) != 0; };
  // WGT_WEBGPU_DISABLE_F16=1 leaves shader-f16 unrequested (emulates adapters without it).
  const bool no_f16 = *settings().webgpu_disable_f16;
  const DawnAbi& abi = *p().abi;
  for (uint32_t f : {abi.shader_f16, abi.subgroups, abi.timestamp_query, abi.subgroup_matrix})
    if (has(f) && !(no_f16 && f == abi.shader_f16)) want.push_back(f);
  PaddedLimits lim;
  p().AdapterGetLimits(adapter, &lim.l);

  // Speed toggles unless validation is asked for (they remove bounds checks and zero-init:
  // kernels must be correct, which the conformance tests check with validation on and off).
  static const char* kFastOn[] = {"skip_validation", "disable_robustness", "disable_workgroup_init",
                                  "disable_polyfills_on_integer_div_and_mod"};
  static const char* kFastOff[] = {"lazy_clear_resource_on_first_use", "timestamp_quantization"};
  static const char* kValidateOn[] = {"enable_immediate_error_handling"};
  DawnTogglesDescriptor toggles;
  if (validate_) {
    toggles.enabled_count = 1;
    toggles.enabled = kValidateOn;
    toggles_.push_back("+enable_immediate_error_handling");
  } else {
    toggles.enabled_count = 4;
    toggles.enabled = kFastOn;
    toggles.disabled_count = 2;
    toggles.disabled = kFastOff;
    for (const char* t : kFastOn) toggles_.push_back(std::string("+") + t);
    for (const char* t : kFastOff) toggles_.push_back(std::string("-") + t);
  }
  DeviceDescriptor dd;
  dd.next = &toggles.chain;
  dd.label = {"wgtensor", kStrlen};
  dd.required_feature_count = want.size();
  dd.required_features = want.data();
  dd.required_limits = &lim.l;
  dd.device_lost.mode = CallbackMode::AllowSpontaneous;
  dd.device_lost.callback = &DawnDevice::on_lost;
  dd.device_lost.userdata1 = this;
  dd.uncaptured_error.callback = &DawnDevice::on_error;
  dd.uncaptured_error.userdata1 = this;
  struct R { Device d = nullptr; std::string msg; } r;
  RequestDeviceCallbackInfo cb;
  cb.callback = [](uint32_t status, Device d, StringView m, void* u1, void*) {
    auto* rr = static_cast<R*>(u1);
    if (status == static_cast<uint32_t>(RequestStatus::Success)) rr->d = d;
    rr->msg = to_string(m);
  };
  cb.userdata1 = &r;
  wait(p().AdapterRequestDevice(adapter, &dd, cb), "webgpu: request device");
  if (!r.d)
    throw_error(ErrorKind::BackendInit, "webgpu", "device creation on '" + desc().name + "' failed: " + r.msg);
  device_ = r.d;
  query_device();
}

DawnDevice::DawnDevice(const Procs& procs, Instance instance, Device device)
    : procs_(&procs), instance_(instance), adopted_(true) {
  // Our own references: the caller keeps (and releases) theirs.
  p().InstanceAddRef(instance_);
  p().DeviceAddRef(device_ = device);
  if (Adapter a = p().DeviceGetAdapter(device_)) {
    desc_ = describe_adapter(p(), instance_, a);
    p().AdapterRelease(a);
  }
  query_device();
}

// The queue, and the features and limits the device has (what it was created with).
void DawnDevice::query_device() {
  const DawnAbi& abi = *p().abi;
  queue_ = p().DeviceGetQueue(device_);
  features_.shader_f16 = p().DeviceHasFeature(device_, abi.shader_f16) != 0;
  features_.subgroups = p().DeviceHasFeature(device_, abi.subgroups) != 0;
  features_.timestamp_query = p().DeviceHasFeature(device_, abi.timestamp_query) != 0;
  features_.subgroup_matrix = p().DeviceHasFeature(device_, abi.subgroup_matrix) != 0;
  if (features_.subgroup_matrix) features_.subgroup_matrix_configs = desc().matrix_configs;
  features_.packed_dot = p().InstanceHasWGSLLanguageFeature(instance_, kWgslPacked4x8IntegerDotProduct) != 0;
  PaddedLimits dl;
  p().DeviceGetLimits(device_, &dl.l);
  limits_.max_buffer_size = dl.l.max_buffer_size;
  limits_.max_storage_buffer_binding_size = dl.l.max_storage_buffer_binding_size;
  limits_.max_compute_workgroups_per_dimension = dl.l.max_compute_workgroups_per_dimension;
  limits_.max_compute_invocations_per_workgroup = dl.l.max_compute_invocations_per_workgroup;
  limits_.max_compute_workgroup_size_x = dl.l.max_compute_workgroup_size_x;
  limits_.max_compute_workgroup_storage_size = dl.l.max_compute_workgroup_storage_size;
  limits_.max_storage_buffers_per_shader_stage = dl.l.max_storage_buffers_per_shader_stage;
  limits_.min_uniform_buffer_offset_alignment = dl.l.min_uniform_buffer_offset_alignment;
  limits_.min_storage_buffer_offset_alignment = dl.l.min_storage_buffer_offset_alignment;
  limits_.subgroup_min_size = desc().subgroup_min;
  limits_.subgroup_max_size = desc().subgroup_max;
  limits_.compute_units = known_compute_units(desc().name);
}

DawnDevice::~DawnDevice() {
  destroying_ = true;
  if (queue_) p().QueueRelease(queue_);
  if (!device_) return;
  if (adopted_) {  // the caller's device: drop our references only
    p().DeviceRelease(device_);
    p().InstanceRelease(instance_);
    return;
  }
  p().DeviceDestroy(device_);
  p().DeviceRelease(device_);
}

}  // namespace wgt::webgpu
