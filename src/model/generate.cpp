// The generation loop: the prompt in chunks of n_batch, then one forward per sampled token.
// generate() is the callback form of Generator, so the two cannot drift apart.
#include <chrono>

#include "wgt/generate.hpp"

namespace wgt {
namespace {
using clock_type = std::chrono::steady_clock;
double seconds_since(clock_type::time_point a) {
  return std::chrono::duration<double>(clock_type::now() - a).count();
}
}  // namespace

Generator::Generator(LanguageModel& model, const std::vector<int32_t>& prompt, const GenerateOptions& opt,
                     std::function<bool(int32_t)> is_eog)
    : model_(&model), opt_(opt), is_eog_(std::move(is_eog)), sampler_(opt.sampling), history_(prompt) {
  const char* name = "generate";
  if (prompt.empty()) throw_error(ErrorKind::InvalidArgument, name, "the prompt has no tokens (add BOS or some text)");
  if (opt.n_batch <= 0) throw_error(ErrorKind::InvalidArgument, name, "n_batch must be > 0");
  if (model.pos() + static_cast<int64_t>(prompt.size()) > model.n_ctx())
    throw_error(ErrorKind::OutOfRange, name,
                "the prompt (" + std::to_string(prompt.size()) + " tokens) does not fit the context of " +
                    std::to_string(model.n_ctx() - model.pos()) + " free positions");
  st_.n_prompt = static_cast<int64_t>(prompt.size());
  const auto t0 = clock_type::now();
  Tensor logits;
  for (size_t i = 0; i < prompt.size(); i += static_cast<size_t>(opt.n_batch)) {
    const size_t j = std::min(prompt.size(), i + static_cast<size_t>(opt.n_batch));
    logits = model.forward(std::vector<int32_t>(prompt.begin() + static_cast<ptrdiff_t>(i), prompt.begin() + static_cast<ptrdiff_t>(j)));
  }
  if (opt.n_predict == 0) {
    done_ = true;
  } else {
    pending_ = sampler_.sample(logits.data<float>(), model.config().n_vocab, history_);
  }
  st_.prompt_seconds = seconds_since(t0);
}

std::optional<int32_t> Generator::next() {
  if (done_) return std::nullopt;
  if (pending_ < 0) {
    // The previous id was returned and ended nothing: its forward gives the next one.
    if (model_->pos() >= model_->n_ctx()) {
      st_.context_full = true;
      done_ = true;
      return std::nullopt;
    }
    const auto t = clock_type::now();
    Tensor logits = model_->forward({history_.back()});
    pending_ = sampler_.sample(logits.data<float>(), model_->config().n_vocab, history_);
    st_.generate_seconds += seconds_since(t);
  }
  const int32_t id = pending_;
  pending_ = -1;
  history_.push_back(id);
  ++st_.n_generated;
  if (is_eog_ && is_eog_(id)) {
    st_.stopped_at_eog = true;
    done_ = true;
  } else if (opt_.n_predict >= 0 && st_.n_generated >= opt_.n_predict) {
    done_ = true;
  }
  return id;
}

GenerateStats generate(LanguageModel& model, const std::vector<int32_t>& prompt, const GenerateOptions& opt,
                       const std::function<bool(int32_t)>& on_token, const std::function<bool(int32_t)>& is_eog) {
  Generator g(model, prompt, opt, is_eog);
  while (auto id = g.next())
    if (!on_token(*id)) break;
  return g.stats();
}

}  // namespace wgt
