// Token sampling and the generation loop over a LanguageModel (prompt processing, then one
// token per forward). Text is the caller's business: ids in, ids out (see wgt/tokenizer.hpp).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <vector>

#include "wgt/model.hpp"

namespace wgt {

// The llama.cpp-style chain, applied in this order to the last position's logits:
// repetition penalty over the last repeat_last_n ids -> top-k -> top-p -> min-p -> temperature
// -> a draw. temperature <= 0 is greedy (the argmax after the penalty; ties: lowest id).
struct SamplerParams {
  double temperature = 0.8;
  int64_t top_k = 40;           // <= 0: off
  double top_p = 0.95;          // >= 1: off
  double min_p = 0.05;          // <= 0: off; keeps p >= min_p * p_max
  double repeat_penalty = 1.0;  // 1: off; > 1 divides positive logits (multiplies negative ones)
  int64_t repeat_last_n = 64;
  uint64_t seed = 0;
  std::vector<int32_t> suppress;  // ids never drawn (their logits count as -inf), e.g. EOS for --ignore-eos
};

class Sampler {
 public:
  explicit Sampler(const SamplerParams& p);  // InvalidArgument for a parameter out of range
  // Picks the next id from n_vocab logits; `history` holds the ids so far (prompt included).
  int32_t sample(const float* logits, int64_t n_vocab, const std::vector<int32_t>& history);
  const SamplerParams& params() const { return p_; }

 private:
  SamplerParams p_;
  std::mt19937_64 rng_;
  double uniform();  // [0, 1), the same sequence on every platform for a seed
};

struct GenerateOptions {
  int64_t n_predict = 128;   // tokens to generate at most (< 0: until EOS or the context is full)
  int64_t n_batch = 512;     // prompt tokens per forward
  SamplerParams sampling;
};

struct GenerateStats {
  int64_t n_prompt = 0, n_generated = 0;
  double prompt_seconds = 0;      // prompt processing, first token's logits included
  double generate_seconds = 0;    // every later forward
  bool stopped_at_eog = false;
  bool context_full = false;
};

// The generation loop one token at a time, for callers that pull tokens (an iterator, e.g. the
// Python module's model.generate) instead of receiving them in a callback. The constructor
// runs the prompt from the model's current position (generate()'s checks and errors); each
// next() returns the next sampled id, or nothing once the loop has ended: after an
// end-of-generation id (is_eog; that id is still returned), after n_predict ids, or when the
// context is full (no position left for the forward the next id needs). The model must
// outlive the Generator and must not be run by anyone else meanwhile.
class Generator {
 public:
  Generator(LanguageModel& model, const std::vector<int32_t>& prompt, const GenerateOptions& opt,
            std::function<bool(int32_t)> is_eog = {});
  std::optional<int32_t> next();
  const GenerateStats& stats() const { return st_; }
  bool done() const { return done_; }

 private:
  LanguageModel* model_;
  GenerateOptions opt_;
  std::function<bool(int32_t)> is_eog_;
  Sampler sampler_;
  GenerateStats st_;
  std::vector<int32_t> history_;
  int32_t pending_ = -1;  // sampled, not yet returned
  bool done_ = false;
};

// Runs the prompt (from the model's current position), then samples up to n_predict tokens.
// on_token gets each new id (return false to stop early); is_eog tells end-of-generation ids
// (they are passed to on_token too, and end the loop).
GenerateStats generate(LanguageModel& model, const std::vector<int32_t>& prompt, const GenerateOptions& opt,
                       const std::function<bool(int32_t)>& on_token, const std::function<bool(int32_t)>& is_eog);

}  // namespace wgt
