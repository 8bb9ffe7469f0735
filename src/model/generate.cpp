// The generation loop: the prompt in chunks of n_batch, then one forward per sampled token.
#include <chrono>

#include "wgt/generate.hpp"

namespace wgt {

GenerateStats generate(LanguageModel& model, const std::vector<int32_t>& prompt, const GenerateOptions& opt,
                       const std::function<bool(int32_t)>& on_token, const std::function<bool(int32_t)>& is_eog) {
  const char* name = "generate";
  if (prompt.empty()) throw_error(ErrorKind::InvalidArgument, name, "the prompt has no tokens (add BOS or some text)");
  if (opt.n_batch <= 0) throw_error(ErrorKind::InvalidArgument, name, "n_batch must be > 0");
  if (model.pos() + static_cast<int64_t>(prompt.size()) > model.n_ctx())
    throw_error(ErrorKind::OutOfRange, name,
                "the prompt (" + std::to_string(prompt.size()) + " tokens) does not fit the context of " +
                    std::to_string(model.n_ctx() - model.pos()) + " free positions");
  using clock = std::chrono::steady_clock;
  auto secs = [](clock::time_point a) { return std::chrono::duration<double>(clock::now() - a).count(); };
  Sampler sampler(opt.sampling);
  GenerateStats st;
  st.n_prompt = static_cast<int64_t>(prompt.size());
  std::vector<int32_t> history = prompt;

  auto t0 = clock::now();
  Tensor logits;
  for (size_t i = 0; i < prompt.size(); i += static_cast<size_t>(opt.n_batch)) {
    const size_t j = std::min(prompt.size(), i + static_cast<size_t>(opt.n_batch));
    logits = model.forward(std::vector<int32_t>(prompt.begin() + static_cast<ptrdiff_t>(i), prompt.begin() + static_cast<ptrdiff_t>(j)));
  }
  const int64_t V = model.config().n_vocab;
  if (opt.n_predict == 0) {
    st.prompt_seconds = secs(t0);
    return st;
  }
  int32_t next = sampler.sample(logits.data<float>(), V, history);
  st.prompt_seconds = secs(t0);

  auto t1 = clock::now();
  while (true) {
    history.push_back(next);
    ++st.n_generated;
    const bool keep_going = on_token(next);
    if (is_eog && is_eog(next)) {
      st.stopped_at_eog = true;
      break;
    }
    if (!keep_going || (opt.n_predict >= 0 && st.n_generated >= opt.n_predict)) break;
    if (model.pos() >= model.n_ctx()) {
      st.context_full = true;
      break;
    }
    logits = model.forward({next});
    next = sampler.sample(logits.data<float>(), V, history);
  }
  st.generate_seconds = secs(t1);
  return st;
}

}  // namespace wgt
