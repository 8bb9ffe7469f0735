// LanguageModel on the CPU against HF's reference logits and greedy output (fixture made
// outside the project), in the fast and in the reference CPU mode.
#include "common/gold_model.hpp"
#include "wgt/runtime.hpp"

namespace {

struct PolicyGuard {
  wgt::Policy saved = wgt::Runtime::get().policy();
  ~PolicyGuard() { wgt::Runtime::get().set_policy(saved); }
};

TEST(ModelGold, CpuFastReproducesReference) {
  PolicyGuard g;
  wgt::Policy p = g.saved;
  p.mode = wgt::PolicyMode::CpuOnly;
  p.cpu_mode = wgt::CpuMode::Fast;
  wgt::Runtime::get().set_policy(p);
  wgt_test::check_gold_model(wgt::Device::cpu());
}

TEST(ModelGold, CpuReferenceReproducesReference) {
  PolicyGuard g;
  wgt::Policy p = g.saved;
  p.mode = wgt::PolicyMode::CpuOnly;
  p.cpu_mode = wgt::CpuMode::Reference;
  wgt::Runtime::get().set_policy(p);
  wgt_test::check_gold_model(wgt::Device::cpu());
}

}  // namespace
