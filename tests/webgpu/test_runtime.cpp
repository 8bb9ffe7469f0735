// Runtime tests of the WebGPU backend: the adapter is real, typed errors (foreign buffers,
// oversize tensors, shader compile errors), batching, pool reuse/accounting, transfers.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <numeric>
#include <unistd.h>

#include "conformance.hpp"
#include "settings_env.hpp"
#include "webgpu/buffer_pool.hpp"
#include "webgpu/plans/tuning.hpp"
#include "webgpu/webgpu_backend.hpp"
#include "webgpu_test.hpp"
#include "wgt/webgpu_info.hpp"

namespace wgt {
namespace {

webgpu::WebGPUBackend& backend() {
  std::string why;
  auto* b = dynamic_cast<webgpu::WebGPUBackend*>(Runtime::get().webgpu_backend(0, &why));
  if (!b) throw std::runtime_error("WebGPU adapter required: " + why);
  return *b;
}

// Fails (never skips) without a real adapter; on CI the adapter must be lavapipe.
TEST(WebGPU, AdapterIsReal) {
  std::string why;
  auto adapters = webgpu_adapters(&why);
  ASSERT_FALSE(adapters.empty()) << "no WebGPU adapter: " << why;
  const auto& a = adapters[0];
  std::printf("[adapter] %s (%s, %s, %s)\n", a.name.c_str(), a.backend.c_str(), a.adapter_type.c_str(),
              a.device_description.c_str());
  EXPECT_NE(a.backend, "null") << "Dawn's Null backend computes nothing";
  // WGT_REQUIRE_ADAPTER (scripts/test.sh sets llvmpipe where there is no GPU): a part of the
  // adapter's name that must be there; "lavapipe" means Mesa's lavapipe, which calls itself
  // llvmpipe. CI=true without it requires lavapipe too.
  const char* ci = std::getenv("CI");
  const char* req = std::getenv("WGT_REQUIRE_ADAPTER");
  std::string want = req ? req : "";
  if (want.empty() && ci && std::string(ci) == "true") want = "llvmpipe";
  if (want == "lavapipe") want = "llvmpipe";
  if (!want.empty()) {
    EXPECT_NE(a.name.find(want), std::string::npos) << "expected an adapter named *" << want << "*, got " << a.name;
  }
  // The limits we rely on were read with our own struct layout: check they are sane.
  uint64_t binding = 0, per_dim = 0;
  for (auto& [k, v] : a.limits) {
    if (k == "maxStorageBufferBindingSize") binding = v;
    if (k == "maxComputeWorkgroupsPerDimension") per_dim = v;
  }
  EXPECT_GE(binding, 128ull << 20);
  EXPECT_GE(per_dim, 65535u);
  // lavapipe offers shader-f16 (a regression check of the feature probe); other adapters may
  // not (this Dawn build hides it on the H200), and f16 then runs as packed words.
  if (a.name.find("llvmpipe") != std::string::npos) {
    EXPECT_NE(std::find(a.features.begin(), a.features.end(), "shader-f16"), a.features.end());
  }
}

// WGT_WEBGPU_DISABLE_F16=1 must leave the device without shader-f16 (the packed-f16 test run
// relies on it to emulate adapters that lack the feature); otherwise an adapter that offers
// the feature gets it.
TEST(WebGPU, DisableF16SwitchControlsTheFeature) {
  std::string why;
  auto adapters = webgpu_adapters(&why);
  ASSERT_FALSE(adapters.empty()) << "no WebGPU adapter: " << why;
  const auto& f = adapters[0].features;
  const bool offered = std::find(f.begin(), f.end(), "shader-f16") != f.end();
  const char* env = std::getenv("WGT_WEBGPU_DISABLE_F16");
  const bool disabled = env && *env && std::strcmp(env, "0") != 0;
  EXPECT_EQ(backend().features().shader_f16, offered && !disabled)
      << "adapter offers shader-f16: " << offered << ", WGT_WEBGPU_DISABLE_F16 set: " << disabled;
  // Either way f16 elementwise work stays on the GPU (packed words need no feature).
  const Tensor h = cast(Tensor::from_vector(std::vector<float>{1.5f, -2.0f, 65504.0f}, {3}), DType::F16).to(Device::webgpu());
  OpCall call{OpKind::Binary, "add", {h, h}, {}, {}};
  call.attrs.binary = BinaryOp::Add;
  call.out_specs = {{Shape{3}, DType::F16}};
  Support s = backend().supports(call);
  EXPECT_TRUE(s.ok) << s.reason;
}

// A DeviceBuffer of some other runtime: must be rejected, not read as garbage.
class ForeignBuffer : public DeviceBuffer {
 public:
  uint64_t domain() const override { return 0xF0F0F0F0ull; }
  size_t nbytes() const override { return 64; }
};

TEST(WebGPU, ForeignBufferIsRejected) {
  auto& b = backend();
  auto st = std::make_shared<Storage>(64, b.device());
  st->set_buffer(std::make_shared<ForeignBuffer>());
  Tensor x(st, {16}, {1}, 0, DType::F32);
  Tensor out = Tensor::empty({16}, DType::F32, b.device());
  OpCall call{OpKind::Unary, "neg", {x}, {out}, {}};
  try {
    b.execute(call);
    FAIL() << "foreign buffer accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::RuntimeState);
    EXPECT_NE(std::string(e.what()).find("another device/runtime"), std::string::npos) << e.what();
  }
  uint8_t tmp[4];
  EXPECT_THROW(b.read(*st->buffer(), 0, tmp, 4), Error);
}

TEST(WebGPU, OversizeTensorIsUnsupported) {
  auto& b = backend();
  const uint64_t limit = b.limits().max_storage_buffer_binding_size;
  OpCall call{OpKind::Fill, "full", {}, {}, {}};
  call.out_specs = {{{static_cast<int64_t>(limit / 4 + 1)}, DType::F32}};
  Support s = b.supports(call);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.reason.find("maxStorageBufferBindingSize"), std::string::npos) << s.reason;
  OpCall i64{OpKind::Unary, "neg", {Tensor::empty({4}, DType::I64)}, {}, {}};
  i64.out_specs = {{{4}, DType::I64}};
  EXPECT_FALSE(b.supports(i64).ok);
}

TEST(WebGPU, ShaderCompileErrorIsTyped) {
  auto& b = backend();
  webgpu::ShaderVariant bad{"unary", {{"CT", "f32"}, {"CT_I32", "false"}, {"BINARY", "false"}, {"LOAD_A", "no_such_function"},
                                      {"A_PW", "1"}, {"STORE", "st_f32_f32"}, {"OP", "0"}, {"OUT_PW", "1"}}};
  try {
    b.pipeline(bad);
    FAIL() << "bad WGSL compiled";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::RuntimeState);
    EXPECT_NE(std::string(e.what()).find("no_such_function"), std::string::npos) << e.what();
  }
  webgpu::ShaderVariant missing{"unary", {}};
  EXPECT_THROW(b.pipeline(missing), Error);  // placeholders without defines
  // The device is still healthy afterwards.
  Tensor x = full({8}, 2.0, DType::F32, b.device());
  EXPECT_EQ(neg(x).to_vector<float>()[3], -2.f);
}

TEST(WebGPU, ThousandDependentOpsThenOneRead) {
  auto& b = backend();
  b.synchronize();
  const wgt::testing::NoEarlySubmission batches_by_limit;  // submissions counted against max_batch
  const auto before = b.batch_stats();
  Tensor x = full({333}, 0.0, DType::F32, b.device());
  Tensor one = full({333}, 1.0, DType::F32, b.device());
  for (int i = 0; i < 1000; ++i) x = add(x, one);
  const auto mid = b.batch_stats();
  EXPECT_EQ(mid.host_waits, before.host_waits) << "a host wait happened while recording ops";
  EXPECT_LE(mid.submits - before.submits, 1000u / b.max_batch() + 2);
  auto v = x.to_vector<float>();
  EXPECT_EQ(v[0], 1000.f);
  EXPECT_EQ(v[332], 1000.f);
}

// Kernels with params use an explicit layout with a dynamic-offset uniform: a chain over
// the same pooled buffers reuses its bind groups, and freeing pooled buffers drops them.
TEST(WebGPU, BindGroupsAreReusedAcrossDispatches) {
  auto& b = backend();
  b.synchronize();
  const bool saved = b.bind_cache();
  b.set_bind_cache(true);  // off by default on lavapipe (slower dispatches there)
  struct Restore {
    webgpu::WebGPUBackend& b;
    bool on;
    ~Restore() { b.set_bind_cache(on); }
  } restore{b, saved};
  Tensor x = full({333}, 0.0, DType::F32, b.device());
  Tensor one = full({333}, 1.0, DType::F32, b.device());
  for (int i = 0; i < 4; ++i) x = add(x, one);  // warm-up: pipeline, pooled buffers
  const auto s0 = b.batch_stats();
  for (int i = 0; i < 200; ++i) x = add(x, one);
  const auto s1 = b.batch_stats();
  EXPECT_EQ(s1.dispatches - s0.dispatches, 200u);
  EXPECT_GE(s1.bind_group_reuses - s0.bind_group_reuses, 190u) << "bind groups are not reused";
  EXPECT_LE(s1.bind_groups_created - s0.bind_groups_created, 10u);
  EXPECT_EQ(x.to_vector<float>()[332], 204.f);
  // Params differ per dispatch while the bind group is shared: each must see its own.
  Tensor y = full({333}, 0.0, DType::F32, b.device());
  for (int i = 1; i <= 50; ++i) y = add(y, full({333}, static_cast<double>(i), DType::F32, b.device()));
  EXPECT_EQ(y.to_vector<float>()[5], 1275.f);
  // Released pool buffers: cached groups go, later dispatches still bind the right buffers.
  b.release_cached();
  const auto s2 = b.batch_stats();
  for (int i = 0; i < 3; ++i) x = add(x, one);
  EXPECT_GT(b.batch_stats().bind_groups_created, s2.bind_groups_created);
  EXPECT_EQ(x.to_vector<float>()[0], 207.f);
  // Without the cache every dispatch creates its bind group (automatic layouts).
  b.set_bind_cache(false);
  const auto s3 = b.batch_stats();
  for (int i = 0; i < 5; ++i) x = add(x, one);
  const auto s4 = b.batch_stats();
  EXPECT_EQ(s4.bind_groups_created - s3.bind_groups_created, 5u);
  EXPECT_EQ(s4.bind_group_reuses, s3.bind_group_reuses);
  EXPECT_EQ(x.to_vector<float>()[0], 212.f);
}

// Launchers that look their pipeline up by a PipelineKey (the f32 vec4 add here, the quantized
// matvec) must still follow the layout mode: a pipeline remembered with the bind cache on
// has the explicit layout (bind groups reused), one asked for with it off the automatic one.
TEST(WebGPU, KeyedPipelinesFollowTheBindCacheMode) {
  auto& b = backend();
  b.synchronize();
  const bool saved = b.bind_cache();
  struct Restore {
    webgpu::WebGPUBackend& b;
    bool on;
    ~Restore() { b.set_bind_cache(on); }
  } restore{b, saved};
  Tensor x = full({1024}, 0.0, DType::F32, b.device());  // a multiple of 4: binary_vec4
  Tensor one = full({1024}, 1.0, DType::F32, b.device());
  float want = 0;
  for (bool on : {true, false, true}) {
    b.set_bind_cache(on);
    for (int i = 0; i < 3; ++i, ++want) x = add(x, one);  // warm-up: pipeline of this mode, pooled buffers
    const auto s0 = b.batch_stats();
    for (int i = 0; i < 20; ++i, ++want) x = add(x, one);
    const auto s1 = b.batch_stats();
    EXPECT_EQ(s1.pipelines, s0.pipelines) << "bind cache " << on << ": a pipeline was built per call";
    EXPECT_EQ(s1.dispatches - s0.dispatches, 20u);
    if (on) {
      EXPECT_GE(s1.bind_group_reuses - s0.bind_group_reuses, 18u) << "explicit layout expected";
    } else {
      EXPECT_EQ(s1.bind_groups_created - s0.bind_groups_created, 20u) << "automatic layout expected";
      EXPECT_EQ(s1.bind_group_reuses, s0.bind_group_reuses);
    }
    EXPECT_EQ(x.to_vector<float>()[1023], want);
  }
}

// The planned families look their pipeline up by the plan's key: repeated calls of one plan
// build no pipeline, another plan (the tuning changed) builds exactly one, and going back to
// the first plan finds its pipeline again.
TEST(WebGPU, PlannedFamiliesReusePipelinesByPlanKey) {
  auto& b = backend();
  b.synchronize();
  const Tensor x = full({1, 64}, 0.5, DType::F32, b.device()), w = full({40, 64}, 0.25, DType::F32, b.device());
  const QTensor qw = quantize(full({40, 64}, 0.25), QType::Q8_0).to(b.device());
  auto run_both = [&] {
    (void)matmul_t(x, w);
    (void)qmatmul_t(x, qw);
  };
  webgpu::KernelTuning tu;
  webgpu::set_kernel_tuning_override(tu);
  run_both();  // warm-up: this plan's pipelines
  const uint64_t p0 = b.batch_stats().pipelines;
  for (int i = 0; i < 5; ++i) run_both();
  EXPECT_EQ(b.batch_stats().pipelines, p0);
  tu.matmul.gemv_off = true;  // the tiled kernel instead of a gemv
  tu.qmatvec.rows = 3;        // no default shape has 3 rows per warp
  webgpu::set_kernel_tuning_override(tu);
  run_both();
  // At most the two new plans' pipelines (earlier tests in the process may have built them).
  const uint64_t p1 = b.batch_stats().pipelines;
  EXPECT_LE(p1, p0 + 2);
  for (int i = 0; i < 3; ++i) run_both();
  EXPECT_EQ(b.batch_stats().pipelines, p1);  // the second plan found its pipelines
  webgpu::set_kernel_tuning_override(webgpu::KernelTuning{});
  run_both();
  EXPECT_EQ(b.batch_stats().pipelines, p1);  // and so did the first, again
  webgpu::set_kernel_tuning_override(std::nullopt);
  b.synchronize();
}

TEST(WebGPU, PoolReusesAndAccounts) {
  auto& b = backend();
  b.synchronize();
  b.release_pool();
  const auto s0 = b.pool_stats();
  EXPECT_EQ(s0.bytes_pooled, 0u);
  {
    Tensor t = Tensor::empty({1000}, DType::F32, b.device());
    const auto s1 = b.pool_stats();
    EXPECT_EQ(s1.bytes_in_use - s0.bytes_in_use, webgpu::BufferPool::size_class(4000));
  }
  const auto s2 = b.pool_stats();
  EXPECT_EQ(s2.bytes_in_use, s0.bytes_in_use);
  EXPECT_EQ(s2.bytes_pooled, webgpu::BufferPool::size_class(4000));
  Tensor again = Tensor::empty({990}, DType::F32, b.device());  // same size class
  const auto s3 = b.pool_stats();
  EXPECT_EQ(s3.reuses, s2.reuses + 1);
  EXPECT_EQ(s3.buffers_created, s2.buffers_created);
  EXPECT_EQ(s3.bytes_allocated, s2.bytes_allocated);
  EXPECT_EQ(webgpu::BufferPool::size_class(1), 256u);
  EXPECT_EQ(webgpu::BufferPool::size_class(5000), 5120u);
  EXPECT_EQ(webgpu::BufferPool::size_class(1 << 20), size_t{1} << 20);
  EXPECT_EQ(webgpu::BufferPool::size_class((1 << 20) + 1), (size_t{1} << 20) + (size_t{1} << 17));
}

TEST(WebGPU, OutOfMemoryIsTyped) {
  auto& b = backend();
  try {
    b.allocate(static_cast<size_t>(b.limits().max_buffer_size) + 4096);
    FAIL() << "allocation above maxBufferSize succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory);
  }
}

TEST(WebGPU, SynchronizeAndTransfersWithOffsets) {
  auto& b = backend();
  std::vector<uint8_t> host(103);
  std::iota(host.begin(), host.end(), 1);
  auto buf = b.allocate(host.size());
  b.write(*buf, 0, host.data(), host.size());
  // Unaligned partial write in the middle, then unaligned reads.
  const uint8_t patch[5] = {200, 201, 202, 203, 204};
  b.write(*buf, 13, patch, 5);
  std::memcpy(host.data() + 13, patch, 5);
  b.synchronize();
  std::vector<uint8_t> back(host.size());
  b.read(*buf, 0, back.data(), back.size());
  EXPECT_EQ(back, host);
  uint8_t mid[7];
  b.read(*buf, 11, mid, 7);
  EXPECT_EQ(0, std::memcmp(mid, host.data() + 11, 7));
  EXPECT_THROW(b.read(*buf, 100, mid, 7), Error);  // past the end
  // A view with an offset downloads the right elements.
  Tensor t = arange(0, 40, 1, DType::F32, b.device()).view({5, 8}).slice(0, 2, 4).slice(1, 3, 7);
  auto v = t.to_vector<float>();
  ASSERT_EQ(v.size(), 8u);
  EXPECT_EQ(v[0], 19.f);
  EXPECT_EQ(v[7], 30.f);
}

// Strided device views read back under every policy: the span they cover is downloaded and
// gathered on the host (under cpu-only the device copy kernel is not allowed to run, and the
// CPU copy's input transfer must not recurse), and a sparse view of a large tensor is
// compacted on the device first so that only its bytes travel.
TEST(WebGPU, StridedViewsReadBackUnderEveryPolicy) {
  const Policy saved = Runtime::get().policy();
  Tensor t = arange(0, 40, 1, DType::F32, Device::webgpu()).view({5, 8});
  for (PolicyMode m : {PolicyMode::CpuOnly, PolicyMode::Auto}) {
    Policy p = saved;
    p.mode = m;
    Runtime::get().set_policy(p);
    auto v = t.transpose(0, 1).slice(0, 1, 3).cpu().to_vector<float>();  // columns 1 and 2
    ASSERT_EQ(v.size(), 10u);
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(v[i], 8.f * i + 1);
      EXPECT_EQ(v[5 + i], 8.f * i + 2);
    }
  }
  Runtime::get().set_policy(saved);
  // One column of a 1024 x 1024 matrix: 4 KiB of a 4 MiB span.
  Tensor big = arange(0, 1024 * 1024, 1, DType::F32, Device::webgpu()).view({1024, 1024});
  Runtime::get().reset_stats();
  auto col = big.slice(1, 5, 6).cpu().to_vector<float>();
  ASSERT_EQ(col.size(), 1024u);
  EXPECT_EQ(col[1023], 1023.f * 1024 + 5);
  EXPECT_LE(Runtime::get().stats().bytes_downloaded, 64u * 1024) << "the sparse view must be compacted on the device";
}

TEST(WebGPU, WaitsTimeOutWithATypedError) {
  auto& b = backend();
  b.synchronize();
  test_setenv("WGT_WEBGPU_TIMEOUT_MS", "soon");
  EXPECT_THROW(b.synchronize(), Error);  // malformed setting: InvalidArgument, not a hang
  test_unsetenv("WGT_WEBGPU_TIMEOUT_MS");
  // Enough work that 1 ms cannot cover it on any adapter, then a 1 ms budget for the wait;
  // all of it still unsubmitted when the wait starts (no early submission while recording).
  const wgt::testing::NoEarlySubmission all_at_once;
  Tensor x = full({1 << 22}, 1.0, DType::F32, b.device());
  Tensor y = x;
  for (int i = 0; i < 256; ++i) y = add(y, x);
  test_setenv("WGT_WEBGPU_TIMEOUT_MS", "1");
  bool timed_out = false;
  try {
    b.synchronize();
  } catch (const Error& e) {
    timed_out = e.kind() == ErrorKind::RuntimeState && std::string(e.what()).find("timed out") != std::string::npos;
  }
  test_unsetenv("WGT_WEBGPU_TIMEOUT_MS");
  EXPECT_TRUE(timed_out) << "a 1 ms wait on ~12 GB of memory traffic did not time out";
  b.synchronize();  // the work completes and the backend stays usable
  EXPECT_EQ(y.to_vector<float>()[12345], 257.f);
}

// Dawn's AdapterPropertiesMemoryHeaps gives the default memory budget (90% of
// memory_heap_bytes()); on lavapipe the single heap is the machine's physical memory.
TEST(WebGPU, MemoryHeapsGiveTheDefaultBudget) {
  auto& b = backend();
  std::string why;
  auto adapters = webgpu_adapters(&why);
  ASSERT_FALSE(adapters.empty()) << why;
  const WebGPUInfo& a = adapters[0];
  EXPECT_EQ(a.memory_heap_bytes, b.memory_heap_bytes()) << "wgt info and the runtime disagree";
  uint64_t local = 0;
  for (const auto& h : a.memory_heaps) {
    EXPECT_GT(h.size, 0u);
    EXPECT_EQ(h.property_names.find("device-local") != std::string::npos, (h.properties & 1) != 0) << h.property_names;
    if (h.properties & 1) local += h.size;
  }
  if (a.name.find("llvmpipe") != std::string::npos) {
    ASSERT_FALSE(a.memory_heaps.empty()) << "lavapipe offers adapter-properties-memory-heaps: " << a.memory_heap_basis;
    EXPECT_NE(std::find(a.features.begin(), a.features.end(), "adapter-properties-memory-heaps"), a.features.end());
    // Mesa reports the physical memory as lavapipe's heap: this checks our struct layout.
    const uint64_t phys = static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    EXPECT_EQ(local, phys);
    EXPECT_EQ(a.adapter_type, "cpu");
    EXPECT_EQ(b.memory_heap_bytes(), local / 2) << "a software adapter claims half of the shared RAM";
  }
  if (!a.memory_heaps.empty() && local > 0) {
    EXPECT_GT(b.memory_heap_bytes(), 0u);
    EXPECT_LE(b.memory_heap_bytes(), local);
  }
  Runtime& rt = Runtime::get();
  const Policy saved = rt.policy();
  Policy p = saved;
  p.memory_budget = 0;  // default: derived from the heaps
  rt.set_policy(p);
  const uint64_t dflt = rt.memory_budget(0);
  p.memory_budget = 123456789;  // an explicit budget wins
  rt.set_policy(p);
  const uint64_t explicit_budget = rt.memory_budget(0);
  rt.set_policy(saved);
  if (b.memory_heap_bytes()) EXPECT_EQ(dflt, b.memory_heap_bytes() / 10 * 9);
  else EXPECT_EQ(dflt, 4ull << 30);
  EXPECT_EQ(explicit_budget, 123456789u);
}

TEST(WebGPU, MemoryHeapBytesRule) {
  webgpu::AdapterDesc d;
  d.adapter_type = "discrete-gpu";
  d.heaps = {{1, 80ull << 30}, {2 | 4, 64ull << 30}, {1 | 2 | 4, 256ull << 20}};  // VRAM, host RAM, BAR window
  webgpu::derive_memory_heap_bytes(d);
  EXPECT_EQ(d.memory_heap_bytes, (80ull << 30) + (256ull << 20));
  d.adapter_type = "cpu";
  webgpu::derive_memory_heap_bytes(d);
  EXPECT_EQ(d.memory_heap_bytes, ((80ull << 30) + (256ull << 20)) / 2);
  d.heaps = {{2, 64ull << 30}};  // nothing device-local: unknown
  webgpu::derive_memory_heap_bytes(d);
  EXPECT_EQ(d.memory_heap_bytes, 0u);
  d.heaps.clear();
  webgpu::derive_memory_heap_bytes(d);
  EXPECT_EQ(d.memory_heap_bytes, 0u);
  EXPECT_NE(d.memory_heap_basis.find("no heap information"), std::string::npos);
  EXPECT_EQ(webgpu::heap_property_names(1 | 2 | 0x10), "device-local|host-visible|host-cached");
}

TEST(WebGPU, RandomMatchesCpuBits) {
  // uniform01 is exact on both sides, so a [0, 1) draw is bit-identical.
  Tensor g = rand_uniform({1000}, 99, 0.0, 1.0, DType::F32, backend().device());
  Tensor c = rand_uniform({1000}, 99, 0.0, 1.0, DType::F32, Device::cpu());
  EXPECT_EQ(g.to_vector<float>(), c.to_vector<float>());
}

}  // namespace
}  // namespace wgt
