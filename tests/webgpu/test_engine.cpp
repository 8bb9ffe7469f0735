// The Dawn engine in use (WGT_DAWN): the library and ABI are the ones asked for, a private
// runtime is really in use when the engine needs one, the engine cannot change once loaded,
// and f16 takes the native path wherever the engine's adapter has shader-f16 (the f16 feature
// value differs between the engines' ABIs, so a wrong table shows here as the packed path).
// scripts/test.sh runs this binary under WGT_DAWN=npm (the whole suite) and debian (a subset).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include <algorithm>
#include <cmath>

#include "webgpu/dawn_engine.hpp"
#include "webgpu/kernels/matmul.hpp"
#include "webgpu/webgpu_backend.hpp"
#include "wgt/webgpu_info.hpp"
#include "wgt/wgt.hpp"

namespace wgt {
namespace {

std::string requested() {
  const char* r = std::getenv("WGT_DAWN");
  return r && *r ? r : "auto";
}

webgpu::WebGPUBackend& backend() {
  std::string why;
  auto* b = dynamic_cast<webgpu::WebGPUBackend*>(Runtime::get().webgpu_backend(0, &why));
  if (!b) throw std::runtime_error("WebGPU adapter required: " + why);
  return *b;
}

TEST(WebGpuEngine, IsTheRequestedOne) {
  std::string why;
  ASSERT_FALSE(webgpu_adapters(&why).empty()) << why;
  const WebGPUEngineInfo e = webgpu_engine_info();
  std::printf("[engine] %s %s (%s), ABI %s, runtime '%s'\n", e.engine.c_str(), e.version.c_str(), e.library.c_str(),
              e.abi.c_str(), e.private_runtime.c_str());
  EXPECT_TRUE(e.error.empty()) << e.error;
  EXPECT_EQ(e.request, requested());
  if (requested() == "debian") {
    EXPECT_EQ(e.engine.rfind("debian", 0), 0u) << e.engine;
    EXPECT_NE(e.abi.find("2026"), std::string::npos) << e.abi;
    EXPECT_FALSE(e.version.empty());
  } else if (requested() == "npm") {
    EXPECT_EQ(e.engine, "npm");
    EXPECT_NE(e.abi.find("2025"), std::string::npos) << e.abi;
  }
  // A private runtime is the one this process runs under (the start-up re-exec happened).
  if (!e.private_runtime.empty()) {
    EXPECT_TRUE(webgpu::running_under_runtime(e.private_runtime)) << e.private_runtime;
  }
}

TEST(WebGpuEngine, CannotChangeOnceLoaded) {
  std::string why;
  ASSERT_FALSE(webgpu_adapters(&why).empty()) << why;
  const WebGPUEngineInfo e = webgpu_engine_info();
  // The same library again is fine; a name that is no engine is an InvalidArgument.
  EXPECT_NO_THROW(set_dawn_engine(e.library));
  try {
    set_dawn_engine("cuda");
    ADD_FAILURE() << "set_dawn_engine(\"cuda\") did not throw";
  } catch (const Error& err) {
    EXPECT_EQ(err.kind(), ErrorKind::InvalidArgument) << err.what();
  }
  // Another library: refused now that Dawn is loaded.
  try {
    set_dawn_engine("/nonexistent/libwebgpu_dawn.so");
    ADD_FAILURE() << "changing the engine after load did not throw";
  } catch (const Error& err) {
    EXPECT_EQ(err.kind(), ErrorKind::RuntimeState) << err.what();
    EXPECT_NE(std::string(err.what()).find(e.library), std::string::npos) << err.what();
  }
  EXPECT_EQ(webgpu_engine_info().library, e.library);
}

// Native f16 (storage and arithmetic) wherever the device has shader-f16: lavapipe has it
// under both engines. The matmul's f16 variant is then not the packed one, and the result
// matches the CPU reference.
TEST(WebGpuEngine, F16IsNativeWhereTheAdapterHasShaderF16) {
  std::string why;
  auto adapters = webgpu_adapters(&why);
  ASSERT_FALSE(adapters.empty()) << why;
  const auto& f = adapters[0].features;
  const bool offered = std::find(f.begin(), f.end(), "shader-f16") != f.end();
  const char* dis = std::getenv("WGT_WEBGPU_DISABLE_F16");
  const char* store = std::getenv("WGT_MATMUL_F16");
  if ((dis && std::strcmp(dis, "1") == 0) || (store && *store)) GTEST_SKIP() << "f16 path forced by the environment";
  if (adapters[0].name.find("llvmpipe") != std::string::npos) {
    EXPECT_TRUE(offered) << "lavapipe offers shader-f16";
  }
  EXPECT_EQ(backend().features().shader_f16, offered);
  Policy saved = Runtime::get().policy();
  Policy ref = saved;
  ref.mode = PolicyMode::CpuOnly;
  ref.cpu_mode = CpuMode::Reference;
  Policy gpu = saved;
  gpu.mode = PolicyMode::Auto;
  gpu.allow_fallback = false;
  // Random values on the CPU, rounded to f16 there: both sides multiply the same numbers.
  const Tensor a = cast(rand_uniform({17, 33}, 11, -1.0, 1.0), DType::F16);
  const Tensor b = cast(rand_uniform({33, 9}, 12, -1.0, 1.0), DType::F16);
  Runtime::get().set_policy(ref);
  const Tensor want = matmul(cast(a, DType::F32), cast(b, DType::F32));
  Runtime::get().set_policy(gpu);
  const Tensor got = matmul(a.to(Device::webgpu()), b.to(Device::webgpu()));
  const std::string variant = webgpu::matmul_last_variant();
  Runtime::get().set_policy(saved);
  EXPECT_EQ(variant.find("f16p") == std::string::npos, offered) << variant;
  const auto w = want.cpu().to_vector<float>(), g = cast(got, DType::F32).cpu().to_vector<float>();
  ASSERT_EQ(w.size(), g.size());
  for (size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(g[i], w[i], 2e-2 * (1 + std::fabs(w[i]))) << i;
}

}  // namespace
}  // namespace wgt
