// LanguageModel, its configuration from GGUF metadata, synthetic models and the sampler.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <unistd.h>

#include "expect_error.hpp"
#include "wgt/generate.hpp"
#include "wgt/model.hpp"
#include "wgt/synthetic.hpp"
#include "wgt/wgt.hpp"

namespace wgt {
namespace {

using testing::expect_error;

std::string temp_path(const std::string& stem) {
  return (std::filesystem::temp_directory_path() / (stem + "-" + std::to_string(::getpid()) + ".gguf")).string();
}

// A temporary synthetic model file, removed at the end of the test.
struct SyntheticFile {
  std::string path;
  SyntheticFile(const std::string& shape, const std::string& type) : path(temp_path("wgt-test-" + shape + "-" + type)) {
    write_synthetic_model(path, synthetic_shape(shape), type, 3);
  }
  ~SyntheticFile() { std::filesystem::remove(path); }
};

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// ---- sampler ----

TEST(Sampler, GreedyIsArgmaxAndIgnoresNaN) {
  SamplerParams p;
  p.temperature = 0;
  Sampler s(p);
  const std::vector<float> l = {0.5f, NAN, 2.0f, 2.0f, -1.0f};
  EXPECT_EQ(s.sample(l.data(), 5, {}), 2);  // ties: the lowest id
}

TEST(Sampler, TopKOneIsGreedyAtAnyTemperature) {
  SamplerParams p;
  p.temperature = 5.0;
  p.top_k = 1;
  Sampler s(p);
  const std::vector<float> l = {0.1f, 0.3f, 0.2f, -4.0f};
  for (int i = 0; i < 50; ++i) EXPECT_EQ(s.sample(l.data(), 4, {}), 1);
}

TEST(Sampler, RepetitionPenaltyDemotesRecentTokens) {
  SamplerParams p;
  p.temperature = 0;
  p.repeat_penalty = 2.0;
  Sampler s(p);
  const std::vector<float> l = {1.0f, 0.8f, -0.5f};
  EXPECT_EQ(s.sample(l.data(), 3, {}), 0);
  EXPECT_EQ(s.sample(l.data(), 3, {0}), 1);  // 1.0 / 2 < 0.8
  p.repeat_last_n = 1;
  Sampler s1(p);
  EXPECT_EQ(s1.sample(l.data(), 3, {0, 2}), 0);  // 0 is outside the last-1 window
}

TEST(Sampler, DrawsFollowTheSoftmax) {
  SamplerParams p;
  p.temperature = 1.0;
  p.top_k = 0;
  p.top_p = 1.0;
  p.min_p = 0.0;
  p.seed = 11;
  Sampler s(p);
  const std::vector<float> l = {std::log(0.25f), std::log(0.75f)};
  int ones = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) ones += s.sample(l.data(), 2, {});
  // 0.75 within 4.5 standard deviations (sqrt(0.1875 / n) ~ 0.0031).
  EXPECT_NEAR(ones / double(n), 0.75, 0.014);
}

TEST(Sampler, TopPAndMinPCut) {
  const std::vector<float> l = {std::log(0.6f), std::log(0.3f), std::log(0.1f)};
  SamplerParams p;
  p.temperature = 1.0;
  p.top_k = 0;
  p.min_p = 0;
  p.top_p = 0.5;  // only id 0 reaches 0.5
  Sampler a(p);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(a.sample(l.data(), 3, {}), 0);
  p.top_p = 1.0;
  p.min_p = 0.4;  // keeps p >= 0.24: ids 0 and 1
  Sampler b(p);
  bool saw1 = false;
  for (int i = 0; i < 400; ++i) {
    const int32_t id = b.sample(l.data(), 3, {});
    EXPECT_NE(id, 2);
    saw1 |= id == 1;
  }
  EXPECT_TRUE(saw1);
}

TEST(Sampler, SameSeedSameDraws) {
  SamplerParams p;
  p.seed = 99;
  p.top_k = 0;
  p.min_p = 0;
  std::vector<float> l(50);
  for (size_t i = 0; i < l.size(); ++i) l[i] = std::sin(static_cast<float>(i));
  Sampler a(p), b(p);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.sample(l.data(), 50, {}), b.sample(l.data(), 50, {}));
}

TEST(Sampler, SuppressedIdsAreNeverDrawn) {
  SamplerParams p;
  p.temperature = 0;
  p.suppress = {1, 7};  // 7 is outside the vocabulary: ignored
  Sampler s(p);
  const std::vector<float> l = {0.5f, 3.0f, 1.0f};
  EXPECT_EQ(s.sample(l.data(), 3, {}), 2);
}

TEST(Sampler, RejectsBadParameters) {
  SamplerParams p;
  p.top_p = 0;
  expect_error(ErrorKind::InvalidArgument, [&] { Sampler s(p); });
  p = {};
  p.repeat_penalty = -1;
  expect_error(ErrorKind::InvalidArgument, [&] { Sampler s(p); });
  p = {};
  p.temperature = NAN;
  expect_error(ErrorKind::InvalidArgument, [&] { Sampler s(p); });
}

// ---- synthetic models through the GGUF writer and reader ----

void check_incremental_matches_full(const std::string& shape, const std::string& type) {
  SyntheticFile f(shape, type);
  LanguageModel m = LanguageModel::load(f.path);
  const std::vector<int32_t> toks = {1, 300, 17, 42, 250, 5, 99};
  const Tensor all = m.forward(toks, true);
  ASSERT_EQ(all.shape(), (Shape{7, m.config().n_vocab}));
  std::vector<float> full = all.to_vector<float>();
  for (float v : full) ASSERT_TRUE(std::isfinite(v));
  m.reset();
  m.forward({1, 300, 17});
  std::vector<float> step;
  for (size_t i = 3; i < toks.size(); ++i) step = m.forward({toks[i]}).to_vector<float>();
  const std::vector<float> last(full.end() - m.config().n_vocab, full.end());
  float scale = 0;
  for (float v : last) scale = std::max(scale, std::fabs(v));
  EXPECT_LE(max_abs_diff(step, last), 1e-4f * std::max(scale, 1.0f)) << shape << " " << type;
  EXPECT_EQ(m.pos(), 7);
}

TEST(ModelSynthetic, LlamaQ8IncrementalMatchesFull) { check_incremental_matches_full("tiny", "q8_0"); }
TEST(ModelSynthetic, LlamaF16IncrementalMatchesFull) { check_incremental_matches_full("tiny", "f16"); }
TEST(ModelSynthetic, Llama3RopeFactorsIncrementalMatchesFull) { check_incremental_matches_full("tiny-llama3", "q8_0"); }

TEST(ModelSynthetic, Llama3RopeFactorsAreLoadedAndMatter) {
  SyntheticFile f("tiny-llama3", "f32");
  const GgufFile g = GgufFile::open(f.path);
  ASSERT_NE(g.find_tensor("rope_freqs.weight"), nullptr);
  LanguageModel m = LanguageModel::load(f.path);
  // The same weights without the factors: a copy of the file with rope_freqs dropped.
  GgufWriter w;
  for (const std::string& k : g.keys()) w.set(k, g.at(k));
  for (const GgufTensorInfo& t : g.tensors())
    if (t.name != "rope_freqs.weight") w.add_tensor(t.name, g.tensor(t.name));
  const std::string plain = temp_path("wgt-test-llama3-plain");
  w.write(plain);
  LanguageModel m0 = LanguageModel::load(plain);
  std::filesystem::remove(plain);
  // Positions past the factors' high-frequency band: the logits must differ.
  std::vector<int32_t> toks(300);
  for (size_t i = 0; i < toks.size(); ++i) toks[i] = static_cast<int32_t>(3 + (i * 37) % 500);
  const std::vector<float> a = m.forward(toks).to_vector<float>(), b = m0.forward(toks).to_vector<float>();
  EXPECT_GT(max_abs_diff(a, b), 1e-3f);
}

TEST(ModelSynthetic, Qwen2IncrementalMatchesFull) { check_incremental_matches_full("tiny-qwen2", "q4_0"); }
// Q5_0 / Q5_1: what llama.cpp's k-quant mixes store where rows are not whole 256-blocks.
TEST(ModelSynthetic, Q5FormatsIncrementalMatchesFull) {
  check_incremental_matches_full("tiny-qwen2", "q5_0");
  check_incremental_matches_full("tiny", "q5_1");
}

TEST(ModelSynthetic, ConfigFromMetadata) {
  SyntheticFile f("tiny-qwen2", "f32");
  const GgufFile g = GgufFile::open(f.path);
  const ModelConfig c = model_config_from_gguf(g);
  EXPECT_EQ(c.arch, "qwen2");
  EXPECT_EQ(c.rope.style, RopeStyle::Neox);
  EXPECT_TRUE(c.qkv_bias);
  EXPECT_TRUE(c.tied_output);
  EXPECT_EQ(c.n_heads, 4);
  EXPECT_EQ(c.n_kv_heads, 2);
  EXPECT_EQ(c.head_dim, 32);
  EXPECT_EQ(c.n_vocab, 512);
  EXPECT_DOUBLE_EQ(c.rope.base, 1000000.0);
  const Tokenizer t = tokenizer_from_gguf(g);
  EXPECT_EQ(t.n_vocab(), 512);
  EXPECT_EQ(t.bos(), 1);
  const std::vector<int32_t> ids = t.encode("the cat", true);
  EXPECT_EQ(ids.front(), 1);
  EXPECT_EQ(t.decode(ids), "the cat");
}

TEST(ModelSynthetic, ForwardRejectsBadTokensAndFullContext) {
  SyntheticFile f("tiny", "q8_0");
  ModelOptions o;
  o.n_ctx = 4;
  LanguageModel m = LanguageModel::load(f.path, o);
  expect_error(ErrorKind::OutOfRange, [&] { m.forward({512}); });
  expect_error(ErrorKind::OutOfRange, [&] { m.forward({-1}); });
  expect_error(ErrorKind::InvalidArgument, [&] { m.forward({}); });
  EXPECT_EQ(m.pos(), 0);  // nothing ran
  m.forward({1, 2, 3});
  expect_error(ErrorKind::OutOfRange, [&] { m.forward({4, 5}); });
  EXPECT_EQ(m.pos(), 3);
  m.forward({4});
  EXPECT_EQ(m.pos(), 4);
}

TEST(ModelSynthetic, GenerateStopsAtContextAndCountsTokens) {
  SyntheticFile f("tiny", "q8_0");
  ModelOptions o;
  o.n_ctx = 10;
  LanguageModel m = LanguageModel::load(f.path, o);
  GenerateOptions go;
  go.n_predict = -1;
  go.sampling.seed = 5;
  int64_t seen = 0;
  const GenerateStats st = generate(m, {1, 20, 30}, go, [&](int32_t) { ++seen; return true; }, [](int32_t) { return false; });
  EXPECT_TRUE(st.context_full);
  EXPECT_EQ(st.n_generated, seen);
  EXPECT_EQ(st.n_generated, 8);  // 7 forwards fill the 10 positions; the 8th token needs none
  go.n_predict = 2;
  m.reset();
  EXPECT_EQ(generate(m, {1}, go, [](int32_t) { return true; }, nullptr).n_generated, 2);
}

// The pull form gives the ids and stats of the callback form; it returns the end-of-generation
// id itself and then nothing, and ends at n_predict or a full context like generate().
TEST(ModelSynthetic, GeneratorMatchesGenerate) {
  SyntheticFile f("tiny", "q8_0");
  ModelOptions o;
  o.n_ctx = 12;
  LanguageModel m = LanguageModel::load(f.path, o);
  GenerateOptions go;
  go.n_predict = -1;
  go.sampling.seed = 9;
  go.sampling.temperature = 1.5;  // varied ids, so that an id repeated by chance is the eog below
  std::vector<int32_t> pushed;
  const GenerateStats st = generate(m, {1, 7}, go, [&](int32_t id) { pushed.push_back(id); return true; }, nullptr);
  m.reset();
  Generator g(m, {1, 7}, go);
  std::vector<int32_t> pulled;
  while (auto id = g.next()) pulled.push_back(*id);
  EXPECT_EQ(pulled, pushed);
  EXPECT_EQ(g.stats().n_generated, st.n_generated);
  EXPECT_TRUE(g.stats().context_full);
  EXPECT_TRUE(st.context_full);
  EXPECT_FALSE(g.next().has_value());  // stays ended

  ASSERT_GE(pushed.size(), 3u);
  const int32_t eog = pushed[2];
  m.reset();
  Generator ge(m, {1, 7}, go, [&](int32_t id) { return id == eog; });
  std::vector<int32_t> until_eog;
  while (auto id = ge.next()) until_eog.push_back(*id);
  ASSERT_FALSE(until_eog.empty());
  EXPECT_EQ(until_eog.back(), eog);
  EXPECT_LE(until_eog.size(), 3u);
  EXPECT_TRUE(ge.stats().stopped_at_eog);

  go.n_predict = 2;
  m.reset();
  Generator g2(m, {1}, go);
  int n = 0;
  while (g2.next()) ++n;
  EXPECT_EQ(n, 2);
  EXPECT_FALSE(g2.stats().context_full);
}

TEST(ModelConfigErrors, UnsupportedArchitectureAndMissingKeys) {
  const std::string path = temp_path("wgt-test-badarch");
  {
    GgufWriter w;
    w.set_string("general.architecture", "gptneox");
    w.write(path);
    expect_error(ErrorKind::Unsupported, [&] { model_config_from_gguf(GgufFile::open(path)); });
  }
  {
    GgufWriter w;
    w.set_string("general.architecture", "llama");
    w.set_u32("llama.block_count", 2);
    w.write(path);
    expect_error(ErrorKind::Format, [&] { model_config_from_gguf(GgufFile::open(path)); });  // no embedding_length
  }
  {
    GgufWriter w;  // no architecture at all
    w.set_u32("x", 1);
    w.write(path);
    expect_error(ErrorKind::Format, [&] { model_config_from_gguf(GgufFile::open(path)); });
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace wgt
