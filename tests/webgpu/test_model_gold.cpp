// LanguageModel on WebGPU against HF's reference logits and greedy output (fixture made
// outside the project): weights resident and pinned, every op on the device.
#include "common/gold_model.hpp"
#include "webgpu_test.hpp"

namespace wgt::testing {
namespace {

class ModelGoldWebGPU : public WebGpuTest {};

TEST_F(ModelGoldWebGPU, ReproducesReference) {
  use_gpu();  // no silent CPU fallback: every op of the model runs on the device
  wgt_test::check_gold_model(Device::webgpu(0));
}

}  // namespace
}  // namespace wgt::testing
