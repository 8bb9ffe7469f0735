// The end-to-end check against ../shared/fixtures/gold-f16-mha.*: HF transformers' logits of
// 32 tokens and its 16-token greedy continuation, reproduced by LanguageModel on a device.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "common/fixtures.hpp"
#include "wgt/generate.hpp"
#include "wgt/model.hpp"

namespace wgt_test {

inline void check_gold_model(wgt::Device device) {
  using namespace wgt;
  const std::string json = read_file(fixture_path("gold-f16-mha.json"));
  const std::vector<int32_t> tokens = json_int_array(json, "tokens");
  const std::vector<int32_t> prompt = json_int_array(json, "greedy_prompt");
  const std::vector<int32_t> expected = json_int_array(json, "greedy_out");
  const NpyF32 ref = read_npy_f32(fixture_path("gold-f16-mha.logits.npy"));
  ASSERT_EQ(tokens.size(), 32u);
  ASSERT_EQ(ref.shape, (std::vector<int64_t>{32, 800}));

  ModelOptions opt;
  opt.device = device;
  LanguageModel m = LanguageModel::load(fixture_path("gold-f16-mha.gguf"), opt);
  EXPECT_EQ(m.config().arch, "llama");
  EXPECT_EQ(m.config().n_layers, 3);
  EXPECT_EQ(m.config().n_vocab, 800);
  EXPECT_TRUE(m.config().tied_output);

  // Logits of every position, within 1e-3 of the largest |logit|.
  const Tensor logits = m.forward(tokens, /*all_logits=*/true);
  ASSERT_EQ(logits.shape(), (Shape{32, 800}));
  const std::vector<float> got = logits.to_vector<float>();
  float max_ref = 0, max_diff = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_TRUE(std::isfinite(got[i])) << "logit " << i;
    max_ref = std::max(max_ref, std::fabs(ref.data[i]));
    max_diff = std::max(max_diff, std::fabs(got[i] - ref.data[i]));
  }
  EXPECT_GT(max_ref, 0.1f);
  EXPECT_LE(max_diff, 1e-3f * max_ref) << "max |logit - HF| = " << max_diff << ", max |HF logit| = " << max_ref;

  // The greedy continuation, token for token (the prompt, then 16 generated ids).
  m.reset();
  GenerateOptions go;
  go.n_predict = static_cast<int64_t>(expected.size() - prompt.size());
  go.sampling.temperature = 0;
  std::vector<int32_t> out = prompt;
  generate(m, prompt, go, [&](int32_t id) { out.push_back(id); return true; }, nullptr);
  EXPECT_EQ(out, expected);

  // The prompt in one forward, then token by token, gives the same logits as all at once
  // (the KV cache holds what a full forward would compute).
  m.reset();
  m.forward(std::vector<int32_t>(tokens.begin(), tokens.begin() + 20));
  const Tensor step = m.forward({tokens[20]});
  const std::vector<float> sv = step.to_vector<float>();
  float step_diff = 0;
  for (size_t j = 0; j < sv.size(); ++j) step_diff = std::max(step_diff, std::fabs(sv[j] - got[20 * 800 + j]));
  EXPECT_LE(step_diff, 1e-3f * max_ref);
}

}  // namespace wgt_test
