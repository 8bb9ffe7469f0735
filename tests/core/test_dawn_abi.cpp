// The engines' ABI tables and the engine selection (src/webgpu/dawn_abi.*, dawn_engine.*).
// When Debian's dawn/webgpu.h is present (libwebgpu-dawn-dev, or the private copy of
// scripts/setup_dawn_debian.sh; CMake finds it), every value of the 2026 table and every struct
// layout of wgpu_api.hpp is checked against that header: nothing in the table is guessed.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "webgpu/dawn_abi.hpp"
#include "webgpu/dawn_engine.hpp"
#include "webgpu/wgpu_api.hpp"

#ifdef WGT_DAWN_STD_HEADER
#include WGT_DAWN_STD_HEADER
#endif

namespace wgt::webgpu {
namespace {

#ifdef WGT_DAWN_STD_HEADER
// Same size and the same offset of every member we declare (layouts of both engines are the
// same apart from the instance descriptor and the tail of WGPULimits, checked separately).
#define WGT_SAME_SIZE(ours, theirs) static_assert(sizeof(api::ours) == sizeof(theirs), #ours " vs " #theirs)
#define WGT_SAME_AT(ours, of, theirs, tf) \
  static_assert(offsetof(api::ours, of) == offsetof(theirs, tf), #ours "." #of " vs " #theirs "." #tf)
WGT_SAME_SIZE(StringView, WGPUStringView);
WGT_SAME_SIZE(ChainedStruct, WGPUChainedStruct);
WGT_SAME_SIZE(FutureWaitInfo, WGPUFutureWaitInfo);
WGT_SAME_SIZE(DawnTogglesDescriptor, WGPUDawnTogglesDescriptor);
WGT_SAME_AT(DawnTogglesDescriptor, enabled_count, WGPUDawnTogglesDescriptor, enabledToggleCount);
WGT_SAME_AT(DawnTogglesDescriptor, disabled, WGPUDawnTogglesDescriptor, disabledToggles);
WGT_SAME_SIZE(InstanceDescriptor2026, WGPUInstanceDescriptor);
WGT_SAME_AT(InstanceDescriptor2026, required_feature_count, WGPUInstanceDescriptor, requiredFeatureCount);
WGT_SAME_AT(InstanceDescriptor2026, required_features, WGPUInstanceDescriptor, requiredFeatures);
WGT_SAME_AT(InstanceDescriptor2026, required_limits, WGPUInstanceDescriptor, requiredLimits);
WGT_SAME_SIZE(RequestAdapterOptions, WGPURequestAdapterOptions);
WGT_SAME_AT(RequestAdapterOptions, feature_level, WGPURequestAdapterOptions, featureLevel);
WGT_SAME_AT(RequestAdapterOptions, power_preference, WGPURequestAdapterOptions, powerPreference);
WGT_SAME_AT(RequestAdapterOptions, backend_type, WGPURequestAdapterOptions, backendType);
WGT_SAME_SIZE(RequestAdapterCallbackInfo, WGPURequestAdapterCallbackInfo);
WGT_SAME_AT(RequestAdapterCallbackInfo, callback, WGPURequestAdapterCallbackInfo, callback);
WGT_SAME_SIZE(AdapterInfo, WGPUAdapterInfo);
WGT_SAME_AT(AdapterInfo, device, WGPUAdapterInfo, device);
WGT_SAME_AT(AdapterInfo, description, WGPUAdapterInfo, description);
WGT_SAME_AT(AdapterInfo, backend_type, WGPUAdapterInfo, backendType);
WGT_SAME_AT(AdapterInfo, vendor_id, WGPUAdapterInfo, vendorID);
WGT_SAME_AT(AdapterInfo, subgroup_min_size, WGPUAdapterInfo, subgroupMinSize);
WGT_SAME_AT(AdapterInfo, subgroup_max_size, WGPUAdapterInfo, subgroupMaxSize);
WGT_SAME_SIZE(MemoryHeapInfo, WGPUMemoryHeapInfo);
WGT_SAME_SIZE(AdapterPropertiesMemoryHeaps, WGPUAdapterPropertiesMemoryHeaps);
WGT_SAME_AT(AdapterPropertiesMemoryHeaps, heap_info, WGPUAdapterPropertiesMemoryHeaps, heapInfo);
WGT_SAME_SIZE(SubgroupMatrixConfig, WGPUSubgroupMatrixConfig);
WGT_SAME_AT(SubgroupMatrixConfig, result_component_type, WGPUSubgroupMatrixConfig, resultComponentType);
WGT_SAME_AT(SubgroupMatrixConfig, m, WGPUSubgroupMatrixConfig, M);
WGT_SAME_AT(SubgroupMatrixConfig, n, WGPUSubgroupMatrixConfig, N);
WGT_SAME_AT(SubgroupMatrixConfig, k, WGPUSubgroupMatrixConfig, K);
WGT_SAME_SIZE(AdapterPropertiesSubgroupMatrixConfigs, WGPUAdapterPropertiesSubgroupMatrixConfigs);
WGT_SAME_AT(AdapterPropertiesSubgroupMatrixConfigs, config_count, WGPUAdapterPropertiesSubgroupMatrixConfigs, configCount);
WGT_SAME_AT(AdapterPropertiesSubgroupMatrixConfigs, configs, WGPUAdapterPropertiesSubgroupMatrixConfigs, configs);
// WGPULimits: ours (the npm build's) is longer; the 2026 struct is our prefix.
static_assert(sizeof(WGPULimits) <= sizeof(api::Limits));
WGT_SAME_AT(Limits, max_bind_groups, WGPULimits, maxBindGroups);
WGT_SAME_AT(Limits, max_storage_buffers_per_shader_stage, WGPULimits, maxStorageBuffersPerShaderStage);
WGT_SAME_AT(Limits, max_uniform_buffer_binding_size, WGPULimits, maxUniformBufferBindingSize);
WGT_SAME_AT(Limits, max_storage_buffer_binding_size, WGPULimits, maxStorageBufferBindingSize);
WGT_SAME_AT(Limits, min_uniform_buffer_offset_alignment, WGPULimits, minUniformBufferOffsetAlignment);
WGT_SAME_AT(Limits, min_storage_buffer_offset_alignment, WGPULimits, minStorageBufferOffsetAlignment);
WGT_SAME_AT(Limits, max_buffer_size, WGPULimits, maxBufferSize);
WGT_SAME_AT(Limits, max_compute_workgroup_storage_size, WGPULimits, maxComputeWorkgroupStorageSize);
WGT_SAME_AT(Limits, max_compute_invocations_per_workgroup, WGPULimits, maxComputeInvocationsPerWorkgroup);
WGT_SAME_AT(Limits, max_compute_workgroup_size_x, WGPULimits, maxComputeWorkgroupSizeX);
WGT_SAME_AT(Limits, max_compute_workgroups_per_dimension, WGPULimits, maxComputeWorkgroupsPerDimension);
WGT_SAME_AT(Limits, max_immediate_size, WGPULimits, maxImmediateSize);
WGT_SAME_SIZE(SupportedFeatures, WGPUSupportedFeatures);
WGT_SAME_SIZE(DeviceDescriptor, WGPUDeviceDescriptor);
WGT_SAME_AT(DeviceDescriptor, required_feature_count, WGPUDeviceDescriptor, requiredFeatureCount);
WGT_SAME_AT(DeviceDescriptor, required_limits, WGPUDeviceDescriptor, requiredLimits);
WGT_SAME_AT(DeviceDescriptor, default_queue, WGPUDeviceDescriptor, defaultQueue);
WGT_SAME_AT(DeviceDescriptor, device_lost, WGPUDeviceDescriptor, deviceLostCallbackInfo);
WGT_SAME_AT(DeviceDescriptor, uncaptured_error, WGPUDeviceDescriptor, uncapturedErrorCallbackInfo);
WGT_SAME_SIZE(DeviceLostCallbackInfo, WGPUDeviceLostCallbackInfo);
WGT_SAME_SIZE(UncapturedErrorCallbackInfo, WGPUUncapturedErrorCallbackInfo);
WGT_SAME_SIZE(RequestDeviceCallbackInfo, WGPURequestDeviceCallbackInfo);
WGT_SAME_SIZE(BufferDescriptor, WGPUBufferDescriptor);
WGT_SAME_AT(BufferDescriptor, usage, WGPUBufferDescriptor, usage);
WGT_SAME_AT(BufferDescriptor, mapped_at_creation, WGPUBufferDescriptor, mappedAtCreation);
WGT_SAME_SIZE(ShaderSourceWGSL, WGPUShaderSourceWGSL);
WGT_SAME_SIZE(ShaderModuleDescriptor, WGPUShaderModuleDescriptor);
WGT_SAME_SIZE(ComputeState, WGPUComputeState);
WGT_SAME_AT(ComputeState, entry_point, WGPUComputeState, entryPoint);
WGT_SAME_SIZE(ComputePipelineDescriptor, WGPUComputePipelineDescriptor);
WGT_SAME_AT(ComputePipelineDescriptor, compute, WGPUComputePipelineDescriptor, compute);
WGT_SAME_SIZE(BufferBindingLayout, WGPUBufferBindingLayout);
WGT_SAME_AT(BufferBindingLayout, has_dynamic_offset, WGPUBufferBindingLayout, hasDynamicOffset);
WGT_SAME_SIZE(BindGroupLayoutEntry, WGPUBindGroupLayoutEntry);
WGT_SAME_AT(BindGroupLayoutEntry, visibility, WGPUBindGroupLayoutEntry, visibility);
WGT_SAME_AT(BindGroupLayoutEntry, binding_array_size, WGPUBindGroupLayoutEntry, bindingArraySize);
WGT_SAME_AT(BindGroupLayoutEntry, buffer, WGPUBindGroupLayoutEntry, buffer);
WGT_SAME_SIZE(BindGroupLayoutDescriptor, WGPUBindGroupLayoutDescriptor);
WGT_SAME_SIZE(PipelineLayoutDescriptor, WGPUPipelineLayoutDescriptor);
WGT_SAME_AT(PipelineLayoutDescriptor, immediate_size, WGPUPipelineLayoutDescriptor, immediateSize);
WGT_SAME_SIZE(BindGroupEntry, WGPUBindGroupEntry);
WGT_SAME_AT(BindGroupEntry, offset, WGPUBindGroupEntry, offset);
WGT_SAME_AT(BindGroupEntry, size, WGPUBindGroupEntry, size);
WGT_SAME_SIZE(BindGroupDescriptor, WGPUBindGroupDescriptor);
WGT_SAME_SIZE(CommandEncoderDescriptor, WGPUCommandEncoderDescriptor);
WGT_SAME_SIZE(QuerySetDescriptor, WGPUQuerySetDescriptor);
WGT_SAME_SIZE(PassTimestampWrites, WGPUPassTimestampWrites);
WGT_SAME_SIZE(ComputePassDescriptor, WGPUComputePassDescriptor);
WGT_SAME_SIZE(CommandBufferDescriptor, WGPUCommandBufferDescriptor);
WGT_SAME_SIZE(BufferMapCallbackInfo, WGPUBufferMapCallbackInfo);
WGT_SAME_SIZE(PopErrorScopeCallbackInfo, WGPUPopErrorScopeCallbackInfo);
WGT_SAME_SIZE(QueueWorkDoneCallbackInfo, WGPUQueueWorkDoneCallbackInfo);

TEST(DawnAbi, StandardTableMatchesDebianHeader) {
  const DawnAbi& a = dawn_abi(DawnAbiKind::Standard2026);
  EXPECT_EQ(a.timestamp_query, uint32_t(WGPUFeatureName_TimestampQuery));
  EXPECT_EQ(a.shader_f16, uint32_t(WGPUFeatureName_ShaderF16));
  EXPECT_EQ(a.subgroups, uint32_t(WGPUFeatureName_Subgroups));
  EXPECT_EQ(a.buffer_map_extended_usages, uint32_t(WGPUFeatureName_BufferMapExtendedUsages));
  EXPECT_EQ(a.adapter_properties_memory_heaps, uint32_t(WGPUFeatureName_AdapterPropertiesMemoryHeaps));
  EXPECT_EQ(a.subgroup_matrix, uint32_t(WGPUFeatureName_ChromiumExperimentalSubgroupMatrix));
  EXPECT_EQ(a.stype_subgroup_matrix_configs, uint32_t(WGPUSType_AdapterPropertiesSubgroupMatrixConfigs));
  EXPECT_TRUE(a.instance_required_features);
  EXPECT_EQ(api::instance_feature::TimedWaitAny, uint32_t(WGPUInstanceFeatureName_TimedWaitAny));
  // Every named feature has the header's value for that name.
  const std::pair<const char*, uint32_t> header[] = {
      {"core-features-and-limits", WGPUFeatureName_CoreFeaturesAndLimits},
      {"depth-clip-control", WGPUFeatureName_DepthClipControl},
      {"depth32float-stencil8", WGPUFeatureName_Depth32FloatStencil8},
      {"texture-compression-bc", WGPUFeatureName_TextureCompressionBC},
      {"timestamp-query", WGPUFeatureName_TimestampQuery},
      {"indirect-first-instance", WGPUFeatureName_IndirectFirstInstance},
      {"shader-f16", WGPUFeatureName_ShaderF16},
      {"float32-filterable", WGPUFeatureName_Float32Filterable},
      {"subgroups", WGPUFeatureName_Subgroups},
      {"subgroup-size-control", WGPUFeatureName_SubgroupSizeControl},
      {"buffer-map-extended-usages", WGPUFeatureName_BufferMapExtendedUsages},
      {"adapter-properties-memory-heaps", WGPUFeatureName_AdapterPropertiesMemoryHeaps},
      {"chromium-experimental-subgroup-matrix", WGPUFeatureName_ChromiumExperimentalSubgroupMatrix},
  };
  EXPECT_EQ(a.feature_names.size(), std::size(header));
  for (auto [name, value] : header) {
    const char* ours = a.feature_name(value);
    ASSERT_NE(ours, nullptr) << name << " (0x" << std::hex << value << ") is not in the table";
    EXPECT_STREQ(ours, name);
  }
  // The values that are the same in both ABIs (declared once in wgpu_api.hpp).
  EXPECT_EQ(uint32_t(api::SType::ShaderSourceWGSL), uint32_t(WGPUSType_ShaderSourceWGSL));
  EXPECT_EQ(uint32_t(api::SType::DawnTogglesDescriptor), uint32_t(WGPUSType_DawnTogglesDescriptor));
  EXPECT_EQ(uint32_t(api::SType::AdapterPropertiesMemoryHeaps), uint32_t(WGPUSType_AdapterPropertiesMemoryHeaps));
  EXPECT_EQ(uint32_t(api::CallbackMode::WaitAnyOnly), uint32_t(WGPUCallbackMode_WaitAnyOnly));
  EXPECT_EQ(uint32_t(api::CallbackMode::AllowSpontaneous), uint32_t(WGPUCallbackMode_AllowSpontaneous));
  EXPECT_EQ(uint32_t(api::WaitStatus::Success), uint32_t(WGPUWaitStatus_Success));
  EXPECT_EQ(uint32_t(api::WaitStatus::TimedOut), uint32_t(WGPUWaitStatus_TimedOut));
  EXPECT_EQ(uint32_t(api::Status::Success), uint32_t(WGPUStatus_Success));
  EXPECT_EQ(uint32_t(api::RequestStatus::Success), uint32_t(WGPURequestAdapterStatus_Success));
  EXPECT_EQ(uint32_t(api::RequestStatus::Success), uint32_t(WGPURequestDeviceStatus_Success));
  EXPECT_EQ(uint32_t(api::PowerPreference::HighPerformance), uint32_t(WGPUPowerPreference_HighPerformance));
  EXPECT_EQ(uint32_t(api::FeatureLevel::Core), uint32_t(WGPUFeatureLevel_Core));
  EXPECT_EQ(uint32_t(api::BackendType::Vulkan), uint32_t(WGPUBackendType_Vulkan));
  EXPECT_EQ(uint32_t(api::BackendType::Null), uint32_t(WGPUBackendType_Null));
  EXPECT_EQ(uint32_t(api::AdapterType::CPU), uint32_t(WGPUAdapterType_CPU));
  EXPECT_EQ(uint32_t(api::ErrorFilter::Validation), uint32_t(WGPUErrorFilter_Validation));
  EXPECT_EQ(uint32_t(api::ErrorType::OutOfMemory), uint32_t(WGPUErrorType_OutOfMemory));
  EXPECT_EQ(uint32_t(api::DeviceLostReason::Destroyed), uint32_t(WGPUDeviceLostReason_Destroyed));
  EXPECT_EQ(uint32_t(api::MapAsyncStatus::Success), uint32_t(WGPUMapAsyncStatus_Success));
  EXPECT_EQ(uint32_t(api::QueryType::Timestamp), uint32_t(WGPUQueryType_Timestamp));
  EXPECT_EQ(uint32_t(api::BufferBindingType::ReadOnlyStorage), uint32_t(WGPUBufferBindingType_ReadOnlyStorage));
  EXPECT_EQ(api::usage::Storage, WGPUBufferUsage_Storage);
  EXPECT_EQ(api::usage::QueryResolve, WGPUBufferUsage_QueryResolve);
  EXPECT_EQ(api::usage::MapRead, WGPUBufferUsage_MapRead);
  EXPECT_EQ(api::map_mode::Read, WGPUMapMode_Read);
  EXPECT_EQ(api::shader_stage::Compute, WGPUShaderStage_Compute);
  EXPECT_EQ(api::heap_property::DeviceLocal, WGPUHeapProperty_DeviceLocal);
  EXPECT_EQ(subgroup_matrix_component_name(WGPUSubgroupMatrixComponentType_F16), "f16");
  EXPECT_EQ(subgroup_matrix_component_name(WGPUSubgroupMatrixComponentType_I8), "i8");
  EXPECT_EQ(subgroup_matrix_component_name(WGPUSubgroupMatrixComponentType_U32), "u32");
}
#else
TEST(DawnAbi, StandardTableMatchesDebianHeader) {
  GTEST_SKIP() << "Debian's dawn/webgpu.h is not installed (scripts/setup_dawn_debian.sh fetches it; re-run cmake)";
}
#endif

// The two tables disagree exactly where the ABIs do: a value taken from the wrong one names
// another feature (the npm build's ShaderF16 0x0A is IndirectFirstInstance in 2026).
TEST(DawnAbi, TablesDifferWhereTheAbisDo) {
  const DawnAbi& n = dawn_abi(DawnAbiKind::Npm2025);
  const DawnAbi& s = dawn_abi(DawnAbiKind::Standard2026);
  EXPECT_NE(n.shader_f16, s.shader_f16);
  EXPECT_STREQ(n.feature_name(n.shader_f16), "shader-f16");
  EXPECT_STREQ(s.feature_name(s.shader_f16), "shader-f16");
  EXPECT_STREQ(s.feature_name(n.shader_f16), "indirect-first-instance");
  EXPECT_STREQ(n.feature_name(n.subgroups), "subgroups");
  EXPECT_STREQ(s.feature_name(s.subgroups), "subgroups");
  EXPECT_STREQ(n.feature_name(n.timestamp_query), "timestamp-query");
  EXPECT_STREQ(s.feature_name(s.timestamp_query), "timestamp-query");
  EXPECT_FALSE(n.instance_required_features);
  EXPECT_TRUE(s.instance_required_features);
  EXPECT_EQ(n.feature_name(0xdeadbeef), nullptr);
  // No value appears twice in one table.
  for (const DawnAbi* a : {&n, &s}) {
    std::set<uint32_t> seen;
    for (const FeatureName& f : a->feature_names) EXPECT_TRUE(seen.insert(f.value).second) << a->name << " " << f.name;
  }
}

TEST(DawnAbi, DetectedFromExports) {
  auto from = [](std::set<std::string> syms, DawnAbiKind* k, std::string* why) {
    return detect_dawn_abi([&](const char* s) { return syms.count(s) > 0; }, k, why);
  };
  DawnAbiKind k{};
  std::string why;
  ASSERT_TRUE(from({"wgpuGetInstanceFeatures", "wgpuGetInstanceLimits", "wgpuCreateInstance"}, &k, &why));
  EXPECT_EQ(k, DawnAbiKind::Standard2026);
  ASSERT_TRUE(from({"wgpuGetInstanceCapabilities", "wgpuCreateInstance"}, &k, &why));
  EXPECT_EQ(k, DawnAbiKind::Npm2025);
  EXPECT_FALSE(from({"wgpuCreateInstance"}, &k, &why));
  EXPECT_NE(why.find("neither"), std::string::npos) << why;
  EXPECT_FALSE(from({"wgpuGetInstanceCapabilities", "wgpuGetInstanceFeatures", "wgpuGetInstanceLimits"}, &k, &why));
}

// ---- engine selection ----

EngineLocations fake(std::set<std::string> files) {
  EngineLocations loc;
  loc.npm_library = "/b/third_party/dawn/libwebgpu_wrapper.so";
  loc.system_debian_library = "/usr/lib/x86_64-linux-gnu/libwebgpu_dawn.so.0";
  loc.private_debian_prefix = "/b/third_party/dawn-debian";
  loc.multiarch = "x86_64-linux-gnu";
  loc.exists = [files](const std::string& p) { return files.count(p) > 0; };
  return loc;
}
const std::string kNpm = "/b/third_party/dawn/libwebgpu_wrapper.so";
const std::string kSys = "/usr/lib/x86_64-linux-gnu/libwebgpu_dawn.so.0";
const std::string kPrivDir = "/b/third_party/dawn-debian/usr/lib/x86_64-linux-gnu";
const std::string kPriv = kPrivDir + "/libwebgpu_dawn.so.0";

TEST(DawnEngine, AutoPrefersTheSystemsDebianThenNpmThenThePrivateCopy) {
  DawnEngine e;
  std::string why;
  ASSERT_TRUE(resolve_dawn_engine("", fake({kNpm, kSys, kPriv}), &e, &why));
  EXPECT_EQ(e.request, "auto");
  EXPECT_EQ(e.kind, DawnEngineKind::Debian);
  EXPECT_EQ(e.library, kSys);
  EXPECT_TRUE(e.runtime_dir.empty());
  ASSERT_TRUE(resolve_dawn_engine("auto", fake({kNpm, kPriv}), &e, &why));
  EXPECT_EQ(e.kind, DawnEngineKind::Npm);
  EXPECT_EQ(e.library, kNpm);
  ASSERT_TRUE(resolve_dawn_engine("auto", fake({kPriv}), &e, &why));
  EXPECT_EQ(e.kind, DawnEngineKind::Debian);
  EXPECT_EQ(e.library, kPriv);
  EXPECT_EQ(e.runtime_dir, kPrivDir);
  // Nothing installed: npm, whose load then says how to fetch it.
  ASSERT_TRUE(resolve_dawn_engine("auto", fake({}), &e, &why));
  EXPECT_EQ(e.kind, DawnEngineKind::Npm);
}

TEST(DawnEngine, NamedEngines) {
  DawnEngine e;
  std::string why;
  ASSERT_TRUE(resolve_dawn_engine("npm", fake({kNpm, kSys}), &e, &why));
  EXPECT_EQ(e.kind, DawnEngineKind::Npm);
  EXPECT_EQ(e.name(), "npm");
  ASSERT_TRUE(resolve_dawn_engine("debian", fake({kNpm, kSys, kPriv}), &e, &why));
  EXPECT_EQ(e.library, kSys);
  EXPECT_EQ(e.name(), "debian (system)");
  ASSERT_TRUE(resolve_dawn_engine("debian", fake({kNpm, kPriv}), &e, &why));
  EXPECT_EQ(e.library, kPriv);
  EXPECT_EQ(e.runtime_dir, kPrivDir);
  EXPECT_EQ(e.name(), "debian (private runtime)");
  EXPECT_FALSE(resolve_dawn_engine("debian", fake({kNpm}), &e, &why));
  EXPECT_NE(why.find("setup_dawn_debian.sh"), std::string::npos) << why;
  EXPECT_FALSE(resolve_dawn_engine("cuda", fake({kNpm}), &e, &why));
  EXPECT_NE(why.find("auto, npm, debian"), std::string::npos) << why;
}

TEST(DawnEngine, PathsRunUnderTheRuntimeBesideThem) {
  DawnEngine e;
  std::string why;
  ASSERT_TRUE(resolve_dawn_engine("/opt/dawn/libwebgpu_dawn.so", fake({}), &e, &why));
  EXPECT_EQ(e.kind, DawnEngineKind::Path);
  EXPECT_EQ(e.library, "/opt/dawn/libwebgpu_dawn.so");
  EXPECT_TRUE(e.runtime_dir.empty());
  ASSERT_TRUE(resolve_dawn_engine(kPriv, fake({kPrivDir + "/ld-linux-x86-64.so.2", kPrivDir + "/libc.so.6"}), &e, &why));
  EXPECT_EQ(e.runtime_dir, kPrivDir);
  // A loader without its libc is not a runtime.
  ASSERT_TRUE(resolve_dawn_engine(kPriv, fake({kPrivDir + "/ld-linux-x86-64.so.2"}), &e, &why));
  EXPECT_TRUE(e.runtime_dir.empty());
}

// A private copy named by path (as scripts/device_unpack.sh does on the GPU machine): the
// runtime beside it, and the version and glibc from the stamp of its prefix.
TEST(DawnEngine, PathIntoAPrivatePrefixReadsItsStamp) {
  const std::filesystem::path prefix = std::filesystem::temp_directory_path() / ("wgt_dawn_prefix_" + std::to_string(::getpid()));
  const std::filesystem::path lib = prefix / "usr/lib/x86_64-linux-gnu";
  std::filesystem::create_directories(lib);
  for (const char* f : {"ld-linux-x86-64.so.2", "libc.so.6", "libwebgpu_dawn.so.0"}) std::ofstream(lib / f) << "x";
  std::ofstream(prefix / "wgt-engine.txt") << "version=0.0~test-1\nglibc=2.43\nabc\n";
  EngineLocations loc = fake({});
  loc.exists = [](const std::string& p) { return std::filesystem::is_regular_file(p); };
  DawnEngine e;
  std::string why;
  ASSERT_TRUE(resolve_dawn_engine((lib / "libwebgpu_dawn.so.0").string(), loc, &e, &why)) << why;
  EXPECT_EQ(e.runtime_dir, lib.string());
  EXPECT_EQ(e.version, "0.0~test-1");
  EXPECT_EQ(e.glibc_needed, "2.43");
  // The same prefix as the build's private copy: `debian` finds it, with the same stamp.
  loc.private_debian_prefix = prefix.string();
  ASSERT_TRUE(resolve_dawn_engine("debian", loc, &e, &why)) << why;
  EXPECT_EQ(e.library, (lib / "libwebgpu_dawn.so.0").string());
  EXPECT_EQ(e.version, "0.0~test-1");
  EXPECT_EQ(e.glibc_needed, "2.43");
  std::filesystem::remove_all(prefix);
}

TEST(DawnEngine, PrivateRuntimeOnlyForAnOlderGlibc) {
  EXPECT_TRUE(version_less("2.36", "2.43"));
  EXPECT_TRUE(version_less("2.9", "2.43"));
  EXPECT_FALSE(version_less("2.43", "2.43"));
  EXPECT_FALSE(version_less("2.44", "2.43"));
  EXPECT_FALSE(version_less("3.0", "2.43"));
  DawnEngine e;
  EXPECT_FALSE(needs_private_runtime(e));  // no runtime
  e.runtime_dir = "/nonexistent/runtime";
  e.glibc_needed = "1.0";  // any glibc is newer
  EXPECT_FALSE(needs_private_runtime(e));
  e.glibc_needed = "999.0";
  EXPECT_TRUE(needs_private_runtime(e));
  EXPECT_FALSE(running_under_runtime("/nonexistent/runtime"));
}

}  // namespace
}  // namespace wgt::webgpu
