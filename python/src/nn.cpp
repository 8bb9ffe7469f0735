// Transformer building blocks (wgt/nn.hpp): RoPE, attention, the feed-forward networks, the KV
// cache and the llama-style block. Docstrings follow the header's comments.
#include "common.hpp"

namespace wgtpy {
namespace {
using wgt::Tensor;

wgt::RopeStyle to_rope_style(const std::string& s) {
  if (s == "normal") return wgt::RopeStyle::Normal;
  if (s == "neox") return wgt::RopeStyle::Neox;
  wgt::throw_error(wgt::ErrorKind::InvalidArgument, "RopeConfig", "style must be 'normal' or 'neox', got '" + s + "'");
}
const char* rope_style_name(wgt::RopeStyle s) { return s == wgt::RopeStyle::Normal ? "normal" : "neox"; }

const char* kRopeDoc =
    "RoPE: x is [seq, n_heads, head_dim] or [batch, seq, n_heads, head_dim]. For the row at position p (offset + s,\n"
    "or positions[s]) and pair i in [0, n_rot/2): theta_i = p * freq_scale * base^(-2i / n_rot) / f_i, and\n"
    "(a, b) -> (a cos theta_i - b sin theta_i, a sin theta_i + b cos theta_i), where the pair is (x[2i], x[2i+1])\n"
    "for style 'normal' (llama) and (x[i], x[i + n_rot/2]) for 'neox'. Dims >= n_rot pass unchanged; f_i are the\n"
    "freq_factors (1 when undefined). `pos` is an int offset or an i32/i64 positions tensor [seq].";

wgt::RopeConfig rope_cfg(std::optional<wgt::RopeConfig> cfg) { return cfg ? *cfg : wgt::RopeConfig{}; }
}  // namespace

void init_nn(py::module_& m) {
  py::class_<wgt::RopeConfig>(m, "RopeConfig", "RoPE parameters (see rope()).")
      .def(py::init([](const std::string& style, double base, double freq_scale, int64_t n_rot, std::optional<Tensor> ff) {
             wgt::RopeConfig c;
             c.style = to_rope_style(style);
             c.base = base;
             c.freq_scale = freq_scale;
             c.n_rot = n_rot;
             if (ff) c.freq_factors = *ff;
             return c;
           }), py::arg("style") = "normal", py::arg("base") = 10000.0, py::arg("freq_scale") = 1.0, py::arg("n_rot") = 0,
           py::arg("freq_factors") = py::none())
      .def_property("style", [](const wgt::RopeConfig& c) { return rope_style_name(c.style); },
                    [](wgt::RopeConfig& c, const std::string& s) { c.style = to_rope_style(s); })
      .def_readwrite("base", &wgt::RopeConfig::base)
      .def_readwrite("freq_scale", &wgt::RopeConfig::freq_scale)
      .def_readwrite("n_rot", &wgt::RopeConfig::n_rot, "0 = head_dim (which must then be even)")
      .def_readwrite("freq_factors", &wgt::RopeConfig::freq_factors, "Optional f32 [n_rot/2] on x's device.")
      .def("__repr__", [](const wgt::RopeConfig& c) {
        return "RopeConfig(style='" + std::string(rope_style_name(c.style)) + "', base=" + std::to_string(c.base) +
               ", freq_scale=" + std::to_string(c.freq_scale) + ", n_rot=" + std::to_string(c.n_rot) + ")";
      });

  m.def("rope", [](const Tensor& x, py::object pos, std::optional<wgt::RopeConfig> cfg) {
          auto c = rope_cfg(cfg);
          if (py::isinstance<py::int_>(pos)) {
            int64_t off = pos.cast<int64_t>();
            py::gil_scoped_release g;
            return wgt::rope(x, off, c);
          }
          Tensor p = require_tensor(pos, nullptr, "rope");
          py::gil_scoped_release g;
          return wgt::rope(x, p, c);
        }, py::arg("x"), py::arg("pos") = 0, py::arg("cfg") = py::none(), kRopeDoc);
  m.def("rope_", [](Tensor& x, py::object pos, std::optional<wgt::RopeConfig> cfg) {
          auto c = rope_cfg(cfg);
          if (py::isinstance<py::int_>(pos)) {
            int64_t off = pos.cast<int64_t>();
            py::gil_scoped_release g;
            wgt::rope_(x, off, c);
          } else {
            Tensor p = require_tensor(pos, nullptr, "rope_");
            py::gil_scoped_release g;
            wgt::rope_(x, p, c);
          }
        }, py::arg("x"), py::arg("pos") = 0, py::arg("cfg") = py::none(),
        "rope() written into x's own storage (x may be a strided view); InvalidArgument when x's elements overlap.");
  m.def("llama3_rope_factors", &wgt::llama3_rope_factors, py::arg("scale_factor"), py::arg("low_freq_factor"),
        py::arg("high_freq_factor"), py::arg("original_context"), py::arg("base"), py::arg("n_rot"),
        "The llama3 RoPE factors f_i, i in [0, n_rot/2), as HF transformers' llama3 rope_scaling defines them.");
  m.def("attention", [](const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal, std::optional<Tensor> mask) {
          wgt::AttnConfig c;
          c.scale = scale;
          c.causal = causal;
          c.mask = mask;
          py::gil_scoped_release g;
          return wgt::attention(q, k, v, c);
        }, py::arg("q"), py::arg("k"), py::arg("v"), py::arg("scale") = 0.0, py::arg("causal") = true,
        py::arg("mask") = py::none(),
        "q [q_len, n_heads, d], k and v [kv_len, n_kv_heads, d] (grouped-query: query head h uses kv head\n"
        "h / (n_heads / n_kv_heads)). out[i, h] = sum_j softmax_j(scale * q[i,h].k[j,g] + mask[i, j]) v[j, g];\n"
        "scale 0 = 1/sqrt(d). Causal: the queries are the LAST q_len positions (query i sees keys\n"
        "j <= kv_len - q_len + i). mask: additive, broadcastable to [q_len, kv_len].");
  m.def("silu_mul", &wgt::silu_mul, py::arg("a"), py::arg("b"), release_gil(), "silu(a) * b, fused.");
  m.def("swiglu_ffn", &wgt::swiglu_ffn, py::arg("x"), py::arg("w_gate"), py::arg("w_up"), py::arg("w_down"), release_gil(),
        "(silu(x W_g^T) * (x W_u^T)) W_d^T (weights [out_features, in_features]).");
  m.def("gelu_mlp", [](const Tensor& x, const Tensor& w1, std::optional<Tensor> b1, const Tensor& w2, std::optional<Tensor> b2,
                       const std::string& approx) {
          auto a = approx == "tanh" ? wgt::GeluApprox::Tanh : wgt::GeluApprox::Erf;
          if (approx != "tanh" && approx != "erf")
            wgt::throw_error(wgt::ErrorKind::InvalidArgument, "gelu_mlp", "approximate must be 'erf' or 'tanh'");
          py::gil_scoped_release g;
          return wgt::gelu_mlp(x, w1, b1, w2, b2, a);
        }, py::arg("x"), py::arg("w1"), py::arg("b1"), py::arg("w2"), py::arg("b2"), py::arg("approximate") = "erf",
        "gelu(x W1^T + b1) W2^T + b2 (biases optional: None).");
  m.def("linear", py::overload_cast<const Tensor&, const Tensor&>(&wgt::linear), py::arg("x"), py::arg("w"), release_gil(),
        "x W^T in W's dtype, the result in x's dtype (W may also be a QTensor).");
  m.def("linear", py::overload_cast<const Tensor&, const wgt::QTensor&>(&wgt::linear), py::arg("x"), py::arg("w"), release_gil());

  py::class_<wgt::KVCache>(m, "KVCache",
                           "Two buffers [max_ctx, n_kv_heads, head_dim] (f32 or f16) on the CPU or a WebGPU device (pinned there).")
      .def(py::init([](int64_t max_ctx, int64_t n_kv, int64_t hd, py::object dt, py::object dev) {
             DType d = to_dtype(dt);
             Device v = to_device(dev);
             py::gil_scoped_release g;
             return wgt::KVCache(max_ctx, n_kv, hd, d, v);
           }), py::arg("max_ctx"), py::arg("n_kv_heads"), py::arg("head_dim"), py::arg("dtype") = "f32",
           py::arg("device") = "cpu")
      .def("append", &wgt::KVCache::append, py::arg("k"), py::arg("v"), release_gil(),
           "Appends k, v [n, n_kv_heads, head_dim]; OutOfRange (nothing written) past max_ctx.")
      .def("append_rope", &wgt::KVCache::append_rope, py::arg("q"), py::arg("k"), py::arg("v"), py::arg("cfg"), release_gil(),
           "rope_(q, size(), cfg) then append(rope(k, size(), cfg), v), in one op where the backend can.")
      .def("view_k", &wgt::KVCache::view_k)
      .def("view_v", &wgt::KVCache::view_v)
      .def_property_readonly("size", &wgt::KVCache::size)
      .def_property_readonly("max_ctx", &wgt::KVCache::max_ctx)
      .def_property_readonly("dtype", [](const wgt::KVCache& c) { return std::string(wgt::dtype_name(c.dtype())); })
      .def_property_readonly("device", [](const wgt::KVCache& c) { return c.device().str(); })
      .def("clear", &wgt::KVCache::clear);

  py::class_<wgt::BlockConfig>(m, "BlockConfig", "Shape of a llama pre-norm block.")
      .def(py::init([](int64_t dim, int64_t n_heads, int64_t n_kv_heads, int64_t head_dim, int64_t ffn_dim, double eps,
                       std::optional<wgt::RopeConfig> rope) {
             wgt::BlockConfig c;
             c.dim = dim, c.n_heads = n_heads, c.n_kv_heads = n_kv_heads, c.head_dim = head_dim, c.ffn_dim = ffn_dim;
             c.norm_eps = eps;
             if (rope) c.rope = *rope;
             return c;
           }), py::arg("dim"), py::arg("n_heads"), py::arg("n_kv_heads") = 0, py::arg("head_dim") = 0, py::arg("ffn_dim") = 0,
           py::arg("norm_eps") = 1e-5, py::arg("rope") = py::none())
      .def_readwrite("dim", &wgt::BlockConfig::dim)
      .def_readwrite("n_heads", &wgt::BlockConfig::n_heads)
      .def_readwrite("n_kv_heads", &wgt::BlockConfig::n_kv_heads)
      .def_readwrite("head_dim", &wgt::BlockConfig::head_dim)
      .def_readwrite("ffn_dim", &wgt::BlockConfig::ffn_dim)
      .def_readwrite("norm_eps", &wgt::BlockConfig::norm_eps)
      .def_readwrite("rope", &wgt::BlockConfig::rope);

  py::class_<wgt::BlockWeights> bw(m, "BlockWeights",
                                   "Weights of a block (x @ W^T layout): dense tensors; quantized() gives a copy with QTensor projections.");
  bw.def(py::init<>())
      .def_static("random", [](const wgt::BlockConfig& c, uint64_t seed, py::object dt, py::object dev) {
            DType d = to_dtype(dt);
            Device v = to_device(dev);
            py::gil_scoped_release g;
            return wgt::BlockWeights::random(c, seed, d, v);
          }, py::arg("cfg"), py::arg("seed"), py::arg("dtype") = "f32", py::arg("device") = "cpu",
          "Random weights scaled like a trained model's (~1/sqrt(fan_in)).")
      .def("quantized", [](const wgt::BlockWeights& w, const std::string& t) {
             auto q = wgt::qtype_from_name(t);
             py::gil_scoped_release g;
             return w.quantized(q);
           },
           py::arg("qtype"), "A copy with every dense projection quantized (norms stay dense).")
      .def("to", [](const wgt::BlockWeights& w, py::object d) {
             Device v = to_device(d);
             py::gil_scoped_release g;
             return w.to(v);
           }, py::arg("device"))
      .def_property_readonly("device", [](const wgt::BlockWeights& w) { return w.device().str(); });
#define WGT_W(name) bw.def_readwrite(#name, &wgt::BlockWeights::name)
  WGT_W(attn_norm); WGT_W(wq); WGT_W(wk); WGT_W(wv); WGT_W(wo); WGT_W(ffn_norm); WGT_W(w_gate); WGT_W(w_up); WGT_W(w_down);
  WGT_W(bq); WGT_W(bk); WGT_W(bv);
#undef WGT_W

  py::class_<wgt::TransformerBlock>(m, "TransformerBlock",
                                    "Llama pre-norm block: h = x + attention(rope(...)) Wo^T; out = h + swiglu_ffn(rmsnorm(h), ...).")
      .def(py::init<const wgt::BlockConfig&, wgt::BlockWeights>(), py::arg("cfg"), py::arg("weights"), release_gil())
      .def("forward", &wgt::TransformerBlock::forward, py::arg("x"), py::arg("cache"), py::arg("pos"), release_gil(),
           "x [seq, dim]; pos must equal cache.size (the cache holds the earlier positions).")
      .def("make_cache", [](const wgt::TransformerBlock& b, int64_t n, py::object dt) { return b.make_cache(n, to_dtype(dt)); },
           py::arg("max_ctx"), py::arg("dtype") = "f32")
      .def_property_readonly("device", [](const wgt::TransformerBlock& b) { return b.device().str(); })
      .def("pin_weights", &wgt::TransformerBlock::pin_weights);

  py::class_<wgt::BlockStack>(m, "BlockStack", "N blocks with one KV cache each, run in order.")
      .def(py::init([](std::vector<wgt::TransformerBlock> blocks, int64_t max_ctx, py::object dt) {
             return std::make_unique<wgt::BlockStack>(std::move(blocks), max_ctx, to_dtype(dt));
           }), py::arg("blocks"), py::arg("max_ctx"), py::arg("cache_dtype") = "f32")
      .def("forward", &wgt::BlockStack::forward, py::arg("x"), release_gil(), "x [seq, dim]; positions continue from pos.")
      .def_property_readonly("pos", &wgt::BlockStack::pos)
      .def("reset", &wgt::BlockStack::reset)
      .def("__len__", &wgt::BlockStack::size);
}

}  // namespace wgtpy
