// llama3_rope_factors: the per-frequency RoPE factors of Llama 3.1+ "llama3" rope scaling
// (declared in wgt/nn.hpp), computed as HF transformers' _compute_llama3_parameters defines
// the scaled inverse frequencies, expressed as llama.cpp's freq_factors (the frequency is
// divided by the factor), so that RopeConfig::freq_factors reproduces a converted model's
// `rope_freqs.weight`. Used for synthetic llama-3 models and tests.
#include <cmath>
#include <numbers>
#include <string>

#include "wgt/error.hpp"
#include "wgt/nn.hpp"

namespace wgt {

std::vector<float> llama3_rope_factors(double scale_factor, double low_freq_factor, double high_freq_factor,
                                       int64_t original_context, double base, int64_t n_rot) {
  const char* name = "llama3_rope_factors";
  auto positive = [&](double v, const char* what) {
    if (!(std::isfinite(v) && v > 0))
      throw_error(ErrorKind::InvalidArgument, name, std::string(what) + " must be finite and > 0, got " + std::to_string(v));
  };
  positive(scale_factor, "scale_factor");
  positive(low_freq_factor, "low_freq_factor");
  positive(high_freq_factor, "high_freq_factor");
  positive(base, "base");
  if (original_context <= 0)
    throw_error(ErrorKind::InvalidArgument, name, "original_context must be > 0, got " + std::to_string(original_context));
  if (!(low_freq_factor < high_freq_factor))
    throw_error(ErrorKind::InvalidArgument, name,
                "low_freq_factor (" + std::to_string(low_freq_factor) + ") must be below high_freq_factor (" +
                    std::to_string(high_freq_factor) + "): the smooth band between them would be empty");
  if (n_rot <= 0 || n_rot % 2 != 0)
    throw_error(ErrorKind::InvalidArgument, name, "n_rot must be even and > 0, got " + std::to_string(n_rot));
  const double ctx = static_cast<double>(original_context);
  const double low_freq_wavelen = ctx / low_freq_factor, high_freq_wavelen = ctx / high_freq_factor;
  std::vector<float> f(static_cast<size_t>(n_rot / 2));
  for (int64_t i = 0; i < n_rot / 2; ++i) {
    const double inv_freq = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(n_rot));
    const double wavelen = 2.0 * std::numbers::pi / inv_freq;
    double factor;
    if (wavelen < high_freq_wavelen) {
      factor = 1.0;  // high frequencies (short wavelengths) keep their rotation
    } else if (wavelen > low_freq_wavelen) {
      factor = scale_factor;  // low frequencies are slowed down by the full scale
    } else {
      // In between, interpolate the inverse frequency between the scaled and the original.
      const double smooth = (ctx / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
      const double new_inv_freq = (1.0 - smooth) * inv_freq / scale_factor + smooth * inv_freq;
      factor = inv_freq / new_inv_freq;
    }
    f[static_cast<size_t>(i)] = static_cast<float>(factor);
  }
  return f;
}

}  // namespace wgt
