// Minimal declarations of the WebGPU C API subset wgtensor uses, written from the ABI facts
// of the public webgpu.h standard as implemented by the Dawn builds we load at run time
// (bun-webgpu-linux-x64 0.1.7, a 2025 Dawn: WGPUStringView strings, callback-info structs
// with two userdata pointers, WGPUInstanceCapabilities, WGPULimits with maxImmediateSize; and
// Debian's libwebgpu-dawn0, the 2026 header). What differs between the two is in dawn_abi.hpp
// (values) and marked here (the instance descriptor); tests/core/test_dawn_abi.cpp checks
// every layout below against Debian's dawn/webgpu.h when that header is present.
// Only what we call is declared; every struct we pass has its size asserted. Layouts that
// differ between Dawn revisions (adapter info, limits) are verified at run time by the probe
// test (tests/webgpu/test_runtime.cpp) against known lavapipe values.
#pragma once
#include <cstddef>
#include <cstdint>

namespace wgt::webgpu::api {

// ---- handles (opaque pointers) ----
using Instance = struct InstanceImpl*;
using Adapter = struct AdapterImpl*;
using Device = struct DeviceImpl*;
using Queue = struct QueueImpl*;
using Buffer = struct BufferImpl*;
using ShaderModule = struct ShaderModuleImpl*;
using ComputePipeline = struct ComputePipelineImpl*;
using BindGroupLayout = struct BindGroupLayoutImpl*;
using BindGroup = struct BindGroupImpl*;
using PipelineLayout = struct PipelineLayoutImpl*;
using CommandEncoder = struct CommandEncoderImpl*;
using CommandBuffer = struct CommandBufferImpl*;
using ComputePassEncoder = struct ComputePassEncoderImpl*;
using QuerySet = struct QuerySetImpl*;

using Bool = uint32_t;
using Flags = uint64_t;
constexpr size_t kStrlen = SIZE_MAX;       // WGPU_STRLEN: data is NUL-terminated
constexpr uint64_t kWholeSize = UINT64_MAX;  // WGPU_WHOLE_SIZE

struct StringView {
  const char* data = nullptr;
  size_t length = kStrlen;
};
static_assert(sizeof(StringView) == 16);

// ---- enums (values of this Dawn build) ----
// Dawn's sTypes are 0x0005_0000 + position in its extension list; the values below were
// verified on this build: chained on WGPULimits (where they are invalid) Dawn's error names
// them, e.g. 0x50013 -> "SType::AdapterPropertiesMemoryHeaps" (0x50012 is
// BufferHostMappedPointer, 0x50014 AdapterPropertiesD3D).
enum class SType : uint32_t {
  ShaderSourceWGSL = 0x00000002,
  DawnTogglesDescriptor = 0x0005000A,
  AdapterPropertiesMemoryHeaps = 0x00050013,
};
enum class CallbackMode : uint32_t { WaitAnyOnly = 1, AllowProcessEvents = 2, AllowSpontaneous = 3 };
enum class WaitStatus : uint32_t { Success = 1, TimedOut = 2 };  // anything else: error
enum class Status : uint32_t { Success = 1, Error = 2 };
enum class RequestStatus : uint32_t { Success = 1 };  // adapter/device requests; else failure
enum class PowerPreference : uint32_t { Undefined = 0, LowPower = 1, HighPerformance = 2 };
enum class FeatureLevel : uint32_t { Undefined = 0, Compatibility = 1, Core = 2 };
enum class BackendType : uint32_t {
  Undefined = 0, Null = 1, WebGPU = 2, D3D11 = 3, D3D12 = 4, Metal = 5, Vulkan = 6, OpenGL = 7, OpenGLES = 8
};
enum class AdapterType : uint32_t { DiscreteGPU = 1, IntegratedGPU = 2, CPU = 3, Unknown = 4 };
enum class ErrorFilter : uint32_t { Validation = 1, OutOfMemory = 2, Internal = 3 };
enum class ErrorType : uint32_t { NoError = 1, Validation = 2, OutOfMemory = 3, Internal = 4, Unknown = 5 };
enum class DeviceLostReason : uint32_t { Unknown = 1, Destroyed = 2, CallbackCancelled = 3, FailedCreation = 4 };
enum class MapAsyncStatus : uint32_t { Success = 1, CallbackCancelled = 2, Error = 3, Aborted = 4 };
enum class PopErrorScopeStatus : uint32_t { Success = 1 };

// Feature values (WGPUFeatureName) differ between the engines' ABIs: see dawn_abi.hpp.
// WGPUInstanceFeatureName of the 2026 header (the 2025 build has a capabilities struct instead).
namespace instance_feature {
constexpr uint32_t TimedWaitAny = 0x01;
}

// WGPUHeapProperty bits (a 64-bit flags value).
namespace heap_property {
constexpr Flags DeviceLocal = 0x1, HostVisible = 0x2, HostCoherent = 0x4, HostUncached = 0x8, HostCached = 0x10;
}

namespace shader_stage {
constexpr Flags Compute = 0x4;
}
enum class BufferBindingType : uint32_t { BindingNotUsed = 0, Undefined = 1, Uniform = 2, Storage = 3, ReadOnlyStorage = 4 };

namespace usage {
constexpr Flags MapRead = 0x1, MapWrite = 0x2, CopySrc = 0x4, CopyDst = 0x8, Uniform = 0x40, Storage = 0x80;
constexpr Flags QueryResolve = 0x200;  // destination of wgpuCommandEncoderResolveQuerySet
}
namespace map_mode {
constexpr Flags Read = 0x1, Write = 0x2;
}

// ---- structs ----
struct ChainedStruct {
  const ChainedStruct* next = nullptr;
  SType stype{};
};
static_assert(sizeof(ChainedStruct) == 16);

struct Future {
  uint64_t id = 0;
};
struct FutureWaitInfo {
  Future future;
  Bool completed = 0;
};
static_assert(sizeof(FutureWaitInfo) == 16);

struct DawnTogglesDescriptor {
  ChainedStruct chain{nullptr, SType::DawnTogglesDescriptor};
  size_t enabled_count = 0;
  const char* const* enabled = nullptr;
  size_t disabled_count = 0;
  const char* const* disabled = nullptr;
};
static_assert(sizeof(DawnTogglesDescriptor) == 48);

// WGPUInstanceDescriptor has one of two forms (DawnAbi::instance_required_features): the
// npm build's (2025) with an InstanceCapabilities member, and the 2026 header's with a
// required-features array and an optional WGPUInstanceLimits pointer. Same size, different
// meaning of the same bytes: passing one to the other engine fails (Dawn then refuses timed
// waits, "Timeout waits are either not enabled or not supported").
struct InstanceCapabilities {
  void* next = nullptr;
  Bool timed_wait_any_enable = 0;
  size_t timed_wait_any_max_count = 0;
};
struct InstanceDescriptor {
  const ChainedStruct* next = nullptr;
  InstanceCapabilities capabilities;
};
static_assert(sizeof(InstanceDescriptor) == 32);
struct InstanceDescriptor2026 {
  const ChainedStruct* next = nullptr;
  size_t required_feature_count = 0;
  const uint32_t* required_features = nullptr;  // WGPUInstanceFeatureName
  const void* required_limits = nullptr;        // WGPUInstanceLimits*; null = defaults
};
static_assert(sizeof(InstanceDescriptor2026) == 32);

struct RequestAdapterOptions {
  const ChainedStruct* next = nullptr;
  FeatureLevel feature_level = FeatureLevel::Core;
  PowerPreference power_preference = PowerPreference::Undefined;
  Bool force_fallback_adapter = 0;
  BackendType backend_type = BackendType::Undefined;
  void* compatible_surface = nullptr;
};
static_assert(sizeof(RequestAdapterOptions) == 32);

using RequestAdapterCallback = void (*)(uint32_t status, Adapter adapter, StringView message, void* u1, void* u2);
struct RequestAdapterCallbackInfo {
  const ChainedStruct* next = nullptr;
  CallbackMode mode = CallbackMode::WaitAnyOnly;
  RequestAdapterCallback callback = nullptr;
  void* userdata1 = nullptr;
  void* userdata2 = nullptr;
};
static_assert(sizeof(RequestAdapterCallbackInfo) == 40);

struct AdapterInfo {
  void* next = nullptr;
  StringView vendor, architecture, device, description;
  BackendType backend_type{};
  AdapterType adapter_type{};
  uint32_t vendor_id = 0, device_id = 0;
  uint32_t subgroup_min_size = 0, subgroup_max_size = 0;
};
static_assert(sizeof(AdapterInfo) == 96);

// Chained (as an out-struct) on AdapterInfo when the adapter has the feature
// AdapterPropertiesMemoryHeaps; Dawn allocates heap_info, freed by
// wgpuAdapterPropertiesMemoryHeapsFreeMembers. Layout checked on lavapipe: one heap whose
// size is the machine's physical memory (tests/webgpu/test_runtime.cpp).
struct MemoryHeapInfo {
  Flags properties = 0;  // heap_property bits
  uint64_t size = 0;
};
static_assert(sizeof(MemoryHeapInfo) == 16);
struct AdapterPropertiesMemoryHeaps {
  ChainedStruct chain{nullptr, SType::AdapterPropertiesMemoryHeaps};
  size_t heap_count = 0;
  const MemoryHeapInfo* heap_info = nullptr;
};
static_assert(sizeof(AdapterPropertiesMemoryHeaps) == 32);

// Chained (as an out-struct) on AdapterInfo when the adapter has the subgroup-matrix feature
// (else GetInfo fails); Dawn allocates configs, freed by
// wgpuAdapterPropertiesSubgroupMatrixConfigsFreeMembers. Its sType is per ABI (DawnAbi).
struct SubgroupMatrixConfig {
  uint32_t component_type = 0, result_component_type = 0;  // WGPUSubgroupMatrixComponentType
  uint32_t m = 0, n = 0, k = 0;
};
static_assert(sizeof(SubgroupMatrixConfig) == 20);
struct AdapterPropertiesSubgroupMatrixConfigs {
  ChainedStruct chain;
  size_t config_count = 0;
  const SubgroupMatrixConfig* configs = nullptr;
};
static_assert(sizeof(AdapterPropertiesSubgroupMatrixConfigs) == 32);

// WGPULimits of the npm build (members of the standard order, then Dawn's later additions).
// The 2026 header's struct is this one up to max_immediate_size (152 bytes): the per-stage
// members after it are absent there. We only read the common prefix, into a padded buffer.
struct Limits {
  void* next = nullptr;
  uint32_t max_texture_dimension_1d, max_texture_dimension_2d, max_texture_dimension_3d, max_texture_array_layers;
  uint32_t max_bind_groups, max_bind_groups_plus_vertex_buffers, max_bindings_per_bind_group;
  uint32_t max_dynamic_uniform_buffers_per_pipeline_layout, max_dynamic_storage_buffers_per_pipeline_layout;
  uint32_t max_sampled_textures_per_shader_stage, max_samplers_per_shader_stage;
  uint32_t max_storage_buffers_per_shader_stage, max_storage_textures_per_shader_stage;
  uint32_t max_uniform_buffers_per_shader_stage;
  uint64_t max_uniform_buffer_binding_size, max_storage_buffer_binding_size;
  uint32_t min_uniform_buffer_offset_alignment, min_storage_buffer_offset_alignment;
  uint32_t max_vertex_buffers;
  uint64_t max_buffer_size;
  uint32_t max_vertex_attributes, max_vertex_buffer_array_stride, max_inter_stage_shader_variables;
  uint32_t max_color_attachments, max_color_attachment_bytes_per_sample;
  uint32_t max_compute_workgroup_storage_size, max_compute_invocations_per_workgroup;
  uint32_t max_compute_workgroup_size_x, max_compute_workgroup_size_y, max_compute_workgroup_size_z;
  uint32_t max_compute_workgroups_per_dimension;
  uint32_t max_immediate_size;
  uint32_t max_storage_buffers_in_vertex_stage, max_storage_textures_in_vertex_stage;
  uint32_t max_storage_buffers_in_fragment_stage, max_storage_textures_in_fragment_stage;
};
static_assert(sizeof(Limits) == 168);
static_assert(offsetof(Limits, max_storage_buffer_binding_size) == 72);
static_assert(offsetof(Limits, max_buffer_size) == 96);

struct SupportedFeatures {
  size_t count = 0;
  const uint32_t* features = nullptr;
};

struct QueueDescriptor {
  const ChainedStruct* next = nullptr;
  StringView label;
};
using DeviceLostCallback = void (*)(const Device* device, DeviceLostReason reason, StringView message, void* u1, void* u2);
struct DeviceLostCallbackInfo {
  const ChainedStruct* next = nullptr;
  CallbackMode mode = CallbackMode::AllowSpontaneous;
  DeviceLostCallback callback = nullptr;
  void* userdata1 = nullptr;
  void* userdata2 = nullptr;
};
using UncapturedErrorCallback = void (*)(const Device* device, ErrorType type, StringView message, void* u1, void* u2);
struct UncapturedErrorCallbackInfo {
  const ChainedStruct* next = nullptr;
  UncapturedErrorCallback callback = nullptr;
  void* userdata1 = nullptr;
  void* userdata2 = nullptr;
};
struct DeviceDescriptor {
  const ChainedStruct* next = nullptr;
  StringView label;
  size_t required_feature_count = 0;
  const uint32_t* required_features = nullptr;
  const Limits* required_limits = nullptr;
  QueueDescriptor default_queue;
  DeviceLostCallbackInfo device_lost;
  UncapturedErrorCallbackInfo uncaptured_error;
};
static_assert(sizeof(DeviceDescriptor) == 144);

using RequestDeviceCallback = void (*)(uint32_t status, Device device, StringView message, void* u1, void* u2);
struct RequestDeviceCallbackInfo {
  const ChainedStruct* next = nullptr;
  CallbackMode mode = CallbackMode::WaitAnyOnly;
  RequestDeviceCallback callback = nullptr;
  void* userdata1 = nullptr;
  void* userdata2 = nullptr;
};

struct BufferDescriptor {
  const ChainedStruct* next = nullptr;
  StringView label;
  Flags usage = 0;
  uint64_t size = 0;
  Bool mapped_at_creation = 0;
};
static_assert(sizeof(BufferDescriptor) == 48);

struct ShaderSourceWGSL {
  ChainedStruct chain{nullptr, SType::ShaderSourceWGSL};
  StringView code;
};
struct ShaderModuleDescriptor {
  const ChainedStruct* next = nullptr;
  StringView label;
};

struct ComputeState {
  const ChainedStruct* next = nullptr;
  ShaderModule module = nullptr;
  StringView entry_point;
  size_t constant_count = 0;
  const void* constants = nullptr;
};
struct ComputePipelineDescriptor {
  const ChainedStruct* next = nullptr;
  StringView label;
  PipelineLayout layout = nullptr;  // null = automatic layout
  ComputeState compute;
};
static_assert(sizeof(ComputePipelineDescriptor) == 80);

// Explicit bind group layouts (the backend uses them for a dynamic-offset params uniform).
// Layout of this build (with bindingArraySize and PipelineLayoutDescriptor.immediateSize)
// checked with validation on: a layout {read-only storage, storage, dynamic uniform} built
// from these structs validates against a WGSL shader and a dispatch with a dynamic offset
// reads the right params.
struct BufferBindingLayout {
  const ChainedStruct* next = nullptr;
  BufferBindingType type = BufferBindingType::BindingNotUsed;
  Bool has_dynamic_offset = 0;
  uint64_t min_binding_size = 0;
};
static_assert(sizeof(BufferBindingLayout) == 24);
struct BindGroupLayoutEntry {
  const ChainedStruct* next = nullptr;
  uint32_t binding = 0;
  Flags visibility = 0;
  uint32_t binding_array_size = 0;
  BufferBindingLayout buffer;
  uint8_t sampler[16] = {};          // WGPUSamplerBindingLayout, left "not used"
  uint8_t texture[24] = {};          // WGPUTextureBindingLayout, left "not used"
  uint8_t storage_texture[24] = {};  // WGPUStorageTextureBindingLayout, left "not used"
};
static_assert(sizeof(BindGroupLayoutEntry) == 120);
static_assert(offsetof(BindGroupLayoutEntry, buffer) == 32);
struct BindGroupLayoutDescriptor {
  const ChainedStruct* next = nullptr;
  StringView label;
  size_t entry_count = 0;
  const BindGroupLayoutEntry* entries = nullptr;
};
static_assert(sizeof(BindGroupLayoutDescriptor) == 40);
struct PipelineLayoutDescriptor {
  const ChainedStruct* next = nullptr;
  StringView label;
  size_t bind_group_layout_count = 0;
  const BindGroupLayout* bind_group_layouts = nullptr;
  uint32_t immediate_size = 0;
};
static_assert(sizeof(PipelineLayoutDescriptor) == 48);

struct BindGroupEntry {
  const ChainedStruct* next = nullptr;
  uint32_t binding = 0;
  Buffer buffer = nullptr;
  uint64_t offset = 0;
  uint64_t size = kWholeSize;
  void* sampler = nullptr;
  void* texture_view = nullptr;
};
static_assert(sizeof(BindGroupEntry) == 56);
struct BindGroupDescriptor {
  const ChainedStruct* next = nullptr;
  StringView label;
  BindGroupLayout layout = nullptr;
  size_t entry_count = 0;
  const BindGroupEntry* entries = nullptr;
};
static_assert(sizeof(BindGroupDescriptor) == 48);

struct CommandEncoderDescriptor {
  const ChainedStruct* next = nullptr;
  StringView label;
};
// Timestamp queries (feature TimestampQuery). WGPUQueryType numbering of this build starts at
// Occlusion = 1 (0 is not a valid type). A timestamp query set holds u64 nanosecond values;
// ResolveQuerySet writes them, 8 bytes each, to a QueryResolve buffer at a 256-aligned offset.
enum class QueryType : uint32_t { Occlusion = 1, Timestamp = 2 };
constexpr uint32_t kQuerySetIndexUndefined = UINT32_MAX;  // WGPU_QUERY_SET_INDEX_UNDEFINED
struct QuerySetDescriptor {
  const ChainedStruct* next = nullptr;
  StringView label;
  QueryType type = QueryType::Timestamp;
  uint32_t count = 0;
};
static_assert(sizeof(QuerySetDescriptor) == 32);
// WGPUPassTimestampWrites: this build has the extensible form shared by compute and render
// passes (a nextInChain first; Dawn's library exports ValidateAndUnpack<PassTimestampWrites>,
// which only exists for chained structs), not the older 16-byte ComputePassTimestampWrites.
// Checked on lavapipe by tests/webgpu/test_profile.cpp with and without validation.
struct PassTimestampWrites {
  const ChainedStruct* next = nullptr;
  QuerySet query_set = nullptr;
  uint32_t beginning_of_pass_write_index = kQuerySetIndexUndefined;
  uint32_t end_of_pass_write_index = kQuerySetIndexUndefined;
};
static_assert(sizeof(PassTimestampWrites) == 24);

struct ComputePassDescriptor {
  const ChainedStruct* next = nullptr;
  StringView label;
  const PassTimestampWrites* timestamp_writes = nullptr;
};
static_assert(sizeof(ComputePassDescriptor) == 32);
struct CommandBufferDescriptor {
  const ChainedStruct* next = nullptr;
  StringView label;
};

using BufferMapCallback = void (*)(MapAsyncStatus status, StringView message, void* u1, void* u2);
struct BufferMapCallbackInfo {
  const ChainedStruct* next = nullptr;
  CallbackMode mode = CallbackMode::WaitAnyOnly;
  BufferMapCallback callback = nullptr;
  void* userdata1 = nullptr;
  void* userdata2 = nullptr;
};
static_assert(sizeof(BufferMapCallbackInfo) == 40);

using PopErrorScopeCallback = void (*)(uint32_t status, ErrorType type, StringView message, void* u1, void* u2);
struct PopErrorScopeCallbackInfo {
  const ChainedStruct* next = nullptr;
  CallbackMode mode = CallbackMode::WaitAnyOnly;
  PopErrorScopeCallback callback = nullptr;
  void* userdata1 = nullptr;
  void* userdata2 = nullptr;
};

// The status is not read (completion is what WaitAny reports): older Dawn builds pass no
// message argument, so the callback ignores its arguments either way.
using QueueWorkDoneCallback = void (*)(uint32_t status, StringView message, void* u1, void* u2);
struct QueueWorkDoneCallbackInfo {
  const ChainedStruct* next = nullptr;
  CallbackMode mode = CallbackMode::WaitAnyOnly;
  QueueWorkDoneCallback callback = nullptr;
  void* userdata1 = nullptr;
  void* userdata2 = nullptr;
};
static_assert(sizeof(QueueWorkDoneCallbackInfo) == 40);

// ---- entry points: X(name, return, params) ----
#define WGT_WGPU_PROCS(X)                                                                                      \
  X(CreateInstance, Instance, (const void*))  /* InstanceDescriptor or InstanceDescriptor2026 */              \
  X(InstanceRequestAdapter, Future, (Instance, const RequestAdapterOptions*, RequestAdapterCallbackInfo))    \
  X(InstanceWaitAny, uint32_t, (Instance, size_t, FutureWaitInfo*, uint64_t))                                \
  X(InstanceProcessEvents, void, (Instance))                                                                 \
  X(InstanceRelease, void, (Instance))                                                                       \
  X(InstanceAddRef, void, (Instance))                                                                        \
  X(DeviceAddRef, void, (Device))                                                                            \
  X(DeviceGetAdapter, Adapter, (Device))                                                                     \
  X(InstanceHasWGSLLanguageFeature, Bool, (Instance, uint32_t))                                              \
  X(AdapterGetInfo, Status, (Adapter, AdapterInfo*))                                                         \
  X(AdapterInfoFreeMembers, void, (AdapterInfo))                                                             \
  X(AdapterPropertiesMemoryHeapsFreeMembers, void, (AdapterPropertiesMemoryHeaps))                           \
  X(AdapterPropertiesSubgroupMatrixConfigsFreeMembers, void, (AdapterPropertiesSubgroupMatrixConfigs))         \
  X(AdapterGetLimits, Status, (Adapter, Limits*))                                                            \
  X(AdapterGetFeatures, void, (Adapter, SupportedFeatures*))                                                 \
  X(AdapterHasFeature, Bool, (Adapter, uint32_t))                                                            \
  X(SupportedFeaturesFreeMembers, void, (SupportedFeatures))                                                 \
  X(AdapterRequestDevice, Future, (Adapter, const DeviceDescriptor*, RequestDeviceCallbackInfo))             \
  X(AdapterRelease, void, (Adapter))                                                                         \
  X(DeviceGetQueue, Queue, (Device))                                                                         \
  X(DeviceGetLimits, Status, (Device, Limits*))                                                              \
  X(DeviceHasFeature, Bool, (Device, uint32_t))                                                              \
  X(DeviceCreateBuffer, Buffer, (Device, const BufferDescriptor*))                                           \
  X(DeviceCreateShaderModule, ShaderModule, (Device, const ShaderModuleDescriptor*))                         \
  X(DeviceCreateComputePipeline, ComputePipeline, (Device, const ComputePipelineDescriptor*))                \
  X(DeviceCreateBindGroup, BindGroup, (Device, const BindGroupDescriptor*))                                  \
  X(DeviceCreateBindGroupLayout, BindGroupLayout, (Device, const BindGroupLayoutDescriptor*))                \
  X(DeviceCreatePipelineLayout, PipelineLayout, (Device, const PipelineLayoutDescriptor*))                   \
  X(PipelineLayoutRelease, void, (PipelineLayout))                                                           \
  X(DeviceCreateCommandEncoder, CommandEncoder, (Device, const CommandEncoderDescriptor*))                   \
  X(DevicePushErrorScope, void, (Device, ErrorFilter))                                                       \
  X(DevicePopErrorScope, Future, (Device, PopErrorScopeCallbackInfo))                                        \
  X(DeviceTick, void, (Device))                                                                              \
  X(DeviceDestroy, void, (Device))                                                                           \
  X(DeviceRelease, void, (Device))                                                                           \
  X(QueueSubmit, void, (Queue, size_t, const CommandBuffer*))                                                \
  X(QueueWriteBuffer, void, (Queue, Buffer, uint64_t, const void*, size_t))                                  \
  X(QueueOnSubmittedWorkDone, Future, (Queue, QueueWorkDoneCallbackInfo))                                   \
  X(QueueRelease, void, (Queue))                                                                             \
  X(BufferMapAsync, Future, (Buffer, Flags, size_t, size_t, BufferMapCallbackInfo))                          \
  X(BufferGetConstMappedRange, const void*, (Buffer, size_t, size_t))                                        \
  X(BufferUnmap, void, (Buffer))                                                                             \
  X(BufferDestroy, void, (Buffer))                                                                           \
  X(BufferRelease, void, (Buffer))                                                                           \
  X(ShaderModuleRelease, void, (ShaderModule))                                                               \
  X(ComputePipelineGetBindGroupLayout, BindGroupLayout, (ComputePipeline, uint32_t))                         \
  X(ComputePipelineRelease, void, (ComputePipeline))                                                         \
  X(BindGroupLayoutRelease, void, (BindGroupLayout))                                                         \
  X(BindGroupRelease, void, (BindGroup))                                                                     \
  X(CommandEncoderBeginComputePass, ComputePassEncoder, (CommandEncoder, const ComputePassDescriptor*))      \
  X(CommandEncoderCopyBufferToBuffer, void, (CommandEncoder, Buffer, uint64_t, Buffer, uint64_t, uint64_t))  \
  X(CommandEncoderFinish, CommandBuffer, (CommandEncoder, const CommandBufferDescriptor*))                   \
  X(CommandEncoderRelease, void, (CommandEncoder))                                                           \
  X(CommandBufferRelease, void, (CommandBuffer))                                                             \
  X(ComputePassEncoderSetPipeline, void, (ComputePassEncoder, ComputePipeline))                              \
  X(ComputePassEncoderSetBindGroup, void, (ComputePassEncoder, uint32_t, BindGroup, size_t, const uint32_t*)) \
  X(ComputePassEncoderDispatchWorkgroups, void, (ComputePassEncoder, uint32_t, uint32_t, uint32_t))          \
  X(ComputePassEncoderEnd, void, (ComputePassEncoder))                                                       \
  X(ComputePassEncoderRelease, void, (ComputePassEncoder))                                                   \
  X(DeviceCreateQuerySet, QuerySet, (Device, const QuerySetDescriptor*))                                     \
  X(QuerySetDestroy, void, (QuerySet))                                                                       \
  X(QuerySetRelease, void, (QuerySet))                                                                       \
  X(CommandEncoderResolveQuerySet, void, (CommandEncoder, QuerySet, uint32_t, uint32_t, Buffer, uint64_t))

}  // namespace wgt::webgpu::api
