// Host stage profiler (wgt/profile.hpp host_profile): off by default, counts each op's stages
// once per op while on, nothing while off, reset on read, and a report naming every stage.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "wgt/wgt.hpp"

namespace wgt {
namespace {

const HostStageTime& stage(const std::vector<HostStageTime>& ts, const std::string& prefix) {
  for (const auto& t : ts) {
    std::string name = t.stage;
    name.erase(0, name.find_first_not_of(' '));
    if (name.rfind(prefix, 0) == 0) return t;
  }
  throw std::runtime_error("no stage " + prefix);
}

TEST(HostProfile, CountsStagesPerOpOnlyWhileOn) {
  const char* env = std::getenv("WGT_HOST_PROFILE");
  if (!env || std::string(env) != "1") {
    EXPECT_FALSE(host_profiling());
  }
  const bool was_on = host_profiling();
  const Policy keep = Runtime::get().policy();
  Policy cpu = keep;
  cpu.mode = PolicyMode::CpuOnly;
  Runtime::get().set_policy(cpu);
  const Tensor a = full({3, 5}, 2.0), b = full({3, 5}, 0.5);

  host_profile(true);
  (void)host_profile_read(true);
  Tensor c = add(a, b);
  c = mul(c, b);
  c = relu(c);
  const auto ts = host_profile_read(true);
  EXPECT_EQ(c.to_vector<float>()[14], 1.25f);
  for (const char* s : {"op total", "backend choice", "inputs", "outputs", "execute", "bookkeeping"}) {
    const HostStageTime& t = stage(ts, s);
    EXPECT_EQ(t.count, 3u) << s;
    EXPECT_GE(t.total_us, 0.0) << s;
  }
  EXPECT_GT(stage(ts, "op total").total_us, 0.0);
  EXPECT_LE(stage(ts, "execute").total_us, stage(ts, "op total").total_us);
  // CPU ops never reach the WebGPU stages.
  EXPECT_EQ(stage(ts, "webgpu dispatch").count, 0u);
  EXPECT_EQ(stage(ts, "webgpu pipeline").count, 0u);

  const auto again = host_profile_read(true);
  EXPECT_EQ(stage(again, "op total").count, 0u);  // reset by the previous read

  host_profile(false);
  EXPECT_FALSE(host_profiling());
  c = add(c, a);
  EXPECT_EQ(stage(host_profile_read(true), "op total").count, 0u);

  const std::string report = host_profile_report();
  for (const char* s : {"op total (Runtime::run)", "webgpu pipeline lookup", "webgpu dispatch recording",
                        "bind group creation", "webgpu batch submission", "mean us"})
    EXPECT_NE(report.find(s), std::string::npos) << s << "\n" << report;
  host_profile(was_on);
  Runtime::get().set_policy(keep);
}

}  // namespace
}  // namespace wgt
