// Sampler: repetition penalty, top-k, top-p, min-p and temperature over host logits.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <unordered_set>

#include "wgt/generate.hpp"

namespace wgt {

Sampler::Sampler(const SamplerParams& p) : p_(p), rng_(p.seed) {
  const char* name = "Sampler";
  auto bad = [&](const std::string& what) { throw_error(ErrorKind::InvalidArgument, name, what); };
  if (!std::isfinite(p.temperature)) bad("temperature must be finite");
  if (!(p.top_p > 0)) bad("top_p must be > 0 (>= 1 = off)");
  if (!(p.min_p >= 0 && p.min_p <= 1)) bad("min_p must be in [0, 1] (0 = off)");
  if (!(std::isfinite(p.repeat_penalty) && p.repeat_penalty > 0)) bad("repeat_penalty must be finite and > 0 (1 = off)");
  if (p.repeat_last_n < 0) bad("repeat_last_n must be >= 0");
}

double Sampler::uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

int32_t Sampler::sample(const float* logits, int64_t n, const std::vector<int32_t>& history) {
  if (n <= 0) throw_error(ErrorKind::InvalidArgument, "Sampler::sample", "no logits");
  std::vector<float> l(logits, logits + n);
  if (p_.repeat_penalty != 1.0 && p_.repeat_last_n > 0) {
    const size_t from = history.size() > static_cast<size_t>(p_.repeat_last_n) ? history.size() - p_.repeat_last_n : 0;
    std::unordered_set<int32_t> seen(history.begin() + static_cast<ptrdiff_t>(from), history.end());
    for (int32_t id : seen) {
      if (id < 0 || id >= n) continue;
      float& v = l[static_cast<size_t>(id)];
      v = v > 0 ? static_cast<float>(v / p_.repeat_penalty) : static_cast<float>(v * p_.repeat_penalty);
    }
  }
  for (int32_t id : p_.suppress)
    if (id >= 0 && id < n) l[static_cast<size_t>(id)] = -INFINITY;
  // NaN logits never win: they are treated as -inf everywhere below.
  for (float& v : l)
    if (std::isnan(v)) v = -INFINITY;
  if (p_.temperature <= 0) return static_cast<int32_t>(std::max_element(l.begin(), l.end()) - l.begin());

  // Candidates sorted by logit (descending; ties by id, so the order is deterministic).
  std::vector<int32_t> ids(static_cast<size_t>(n));
  std::iota(ids.begin(), ids.end(), 0);
  size_t keep = ids.size();
  if (p_.top_k > 0) keep = std::min(keep, static_cast<size_t>(p_.top_k));
  auto by_logit = [&](int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); };
  std::partial_sort(ids.begin(), ids.begin() + static_cast<ptrdiff_t>(keep), ids.end(), by_logit);
  ids.resize(keep);
  if (l[ids[0]] == -INFINITY) return ids[0];  // every logit -inf/NaN: nothing to draw from

  // Probabilities at temperature 1 for the top-p / min-p cuts (as llama.cpp does them).
  auto softmax = [&](double temp) {
    std::vector<double> p(ids.size());
    const double mx = l[ids[0]];
    double s = 0;
    for (size_t i = 0; i < ids.size(); ++i) s += p[i] = std::exp((l[ids[i]] - mx) / temp);
    for (double& v : p) v /= s;
    return p;
  };
  std::vector<double> p = softmax(1.0);
  if (p_.top_p < 1) {
    double cum = 0;
    size_t k = 0;
    while (k < p.size() && cum < p_.top_p) cum += p[k++];
    ids.resize(std::max<size_t>(k, 1));
  }
  if (p_.min_p > 0) {
    size_t k = 1;
    while (k < ids.size() && p[k] >= p_.min_p * p[0]) ++k;
    ids.resize(k);
  }
  p = softmax(p_.temperature);
  double u = uniform(), cum = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    cum += p[i];
    if (u < cum) return ids[i];
  }
  return ids.back();  // rounding left u above the total
}

}  // namespace wgt
