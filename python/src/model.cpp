// The model runtime (wgt/model.hpp, generate.hpp, tokenizer.hpp): load_model(path), text in and
// out through the file's tokenizer, generate() as a streaming iterator, logits as NumPy arrays.
#include <memory>

#include "common.hpp"
#include "wgt/generate.hpp"
#include "wgt/model.hpp"
#include "wgt/synthetic.hpp"
#include "wgt/tokenizer.hpp"

namespace wgtpy {
namespace {

struct Model {
  std::unique_ptr<wgt::LanguageModel> lm;
  std::optional<wgt::Tokenizer> tok;  // absent when the file has no (supported) vocabulary
  std::string tok_error;

  const wgt::Tokenizer& tokenizer() const {
    if (!tok) wgt::throw_error(wgt::ErrorKind::Unsupported, "Model.tokenizer", "the model has no usable tokenizer: " + tok_error);
    return *tok;
  }
  std::vector<int32_t> ids(py::handle prompt, bool add_special) const {
    if (py::isinstance<py::str>(prompt)) {
      std::string text = prompt.cast<std::string>();
      py::gil_scoped_release g;
      return tokenizer().encode(text, add_special);
    }
    return prompt.cast<std::vector<int32_t>>();
  }
};

// model.generate(...): pulls one token per __next__ (the GIL released while the model runs).
struct Stream {
  py::object owner;  // the Python Model: keeps the LanguageModel alive while the stream lives
  Model* model = nullptr;
  std::unique_ptr<wgt::Generator> gen;
  std::optional<wgt::Tokenizer::StreamDecoder> decoder;  // text mode
  std::vector<int32_t> tokens;
  bool flushed = false;

  py::object next() {
    while (true) {
      std::optional<int32_t> id;
      {
        py::gil_scoped_release g;
        id = gen->next();
      }
      if (!id) {
        if (decoder && !flushed) {
          flushed = true;
          std::string rest = decoder->flush();
          if (!rest.empty()) return py::str(rest);
        }
        throw py::stop_iteration();
      }
      tokens.push_back(*id);
      if (!decoder) return py::int_(*id);
      std::string piece = decoder->push(*id);
      if (!piece.empty()) return py::str(piece);  // an incomplete UTF-8 character waits for its next token
    }
  }
};

py::dict stats_dict(const wgt::GenerateStats& s) {
  py::dict d;
  d["n_prompt"] = s.n_prompt;
  d["n_generated"] = s.n_generated;
  d["prompt_seconds"] = s.prompt_seconds;
  d["generate_seconds"] = s.generate_seconds;
  d["stopped_at_eog"] = s.stopped_at_eog;
  d["context_full"] = s.context_full;
  return d;
}

py::dict config_dict(const wgt::ModelConfig& c) {
  py::dict d;
  d["arch"] = c.arch, d["name"] = c.name, d["n_vocab"] = c.n_vocab, d["dim"] = c.dim, d["n_layers"] = c.n_layers;
  d["n_heads"] = c.n_heads, d["n_kv_heads"] = c.n_kv_heads, d["head_dim"] = c.head_dim, d["ffn_dim"] = c.ffn_dim;
  d["n_ctx_train"] = c.n_ctx_train, d["norm_eps"] = c.norm_eps, d["tied_output"] = c.tied_output;
  d["qkv_bias"] = c.qkv_bias, d["rope_base"] = c.rope.base;
  return d;
}

}  // namespace

void init_model(py::module_& m) {
  py::class_<Model>(m, "Model", "A language model loaded from a GGUF file (see load_model).")
      .def_property_readonly("config", [](const Model& x) { return config_dict(x.lm->config()); })
      .def_property_readonly("pos", [](const Model& x) { return x.lm->pos(); }, "Tokens in the KV caches.")
      .def_property_readonly("n_ctx", [](const Model& x) { return x.lm->n_ctx(); })
      .def_property_readonly("device", [](const Model& x) { return x.lm->device().str(); })
      .def_property_readonly("weight_bytes", [](const Model& x) { return x.lm->weight_bytes(); })
      .def_property_readonly("eos", [](const Model& x) { return x.tokenizer().eos(); })
      .def_property_readonly("bos", [](const Model& x) { return x.tokenizer().bos(); })
      .def("tokenize", [](const Model& x, const std::string& text, bool add_special) { return x.ids(py::str(text), add_special); },
           py::arg("text"), py::arg("add_special") = true, "Token ids of the text (BOS/EOS as the model adds them).")
      .def("detokenize", [](const Model& x, const std::vector<int32_t>& ids) {
             return py::str(wgt::utf8_sanitize(x.tokenizer().decode(ids)));
           }, py::arg("ids"), "The text of the ids (invalid UTF-8 becomes U+FFFD).")
      .def("reset", [](Model& x) { x.lm->reset(); }, "Empties the KV caches (the weights stay).")
      .def("forward", [](Model& x, const std::vector<int32_t>& tokens, bool all_logits) {
             Tensor t;
             {
               py::gil_scoped_release g;
               t = x.lm->forward(tokens, all_logits);
             }
             return to_numpy(t);
           }, py::arg("tokens"), py::arg("all_logits") = false,
           "Runs tokens at positions pos .. pos + n - 1 (appending to the KV caches); f32 logits as a NumPy array\n"
           "[n, n_vocab] when all_logits, else [1, n_vocab]. OutOfRange (nothing run) for an id not in [0, n_vocab)\n"
           "or a full context.")
      .def("logits", [](Model& x, py::object tokens) {
             std::vector<int32_t> ids = x.ids(tokens, true);
             Tensor t;
             {
               py::gil_scoped_release g;
               x.lm->reset();
               t = x.lm->forward(ids, true);
             }
             return to_numpy(t);
           }, py::arg("tokens"),
           "Logits [n, n_vocab] (NumPy f32) of a token list (or a text, tokenized) from position 0: resets the caches.")
      .def("generate", [](py::object self, py::object prompt, int64_t max_tokens, double temperature, int64_t top_k,
                          double top_p, double min_p, double repeat_penalty, int64_t repeat_last_n, uint64_t seed,
                          bool ignore_eos, bool reset, bool tokens, int64_t n_batch) {
             Model& x = self.cast<Model&>();
             std::vector<int32_t> ids = x.ids(prompt, true);
             wgt::GenerateOptions o;
             o.n_predict = max_tokens;
             o.n_batch = n_batch;
             o.sampling.temperature = temperature, o.sampling.top_k = top_k, o.sampling.top_p = top_p;
             o.sampling.min_p = min_p, o.sampling.repeat_penalty = repeat_penalty, o.sampling.repeat_last_n = repeat_last_n;
             o.sampling.seed = seed;
             std::function<bool(int32_t)> is_eog;
             if (x.tok) {
               const wgt::Tokenizer* tk = &*x.tok;
               if (ignore_eos) {
                 for (int32_t id = 0; id < tk->n_vocab(); ++id)
                   if (tk->is_eog(id)) o.sampling.suppress.push_back(id);
               } else {
                 is_eog = [tk](int32_t id) { return tk->is_eog(id); };
               }
             }
             auto s = std::make_unique<Stream>();
             s->owner = self;
             s->model = &x;
             if (!tokens) s->decoder.emplace(x.tokenizer());
             {
               py::gil_scoped_release g;
               if (reset) x.lm->reset();
               s->gen = std::make_unique<wgt::Generator>(*x.lm, ids, o, is_eog);
             }
             return s;
           }, py::arg("prompt"), py::arg("max_tokens") = 128, py::arg("temperature") = 0.8, py::arg("top_k") = 40,
           py::arg("top_p") = 0.95, py::arg("min_p") = 0.05, py::arg("repeat_penalty") = 1.0, py::arg("repeat_last_n") = 64,
           py::arg("seed") = 0, py::arg("ignore_eos") = false, py::arg("reset") = true, py::arg("tokens") = false,
           py::arg("n_batch") = 512,
           "Streams a continuation of the prompt (a text, tokenized with BOS, or a list of ids): an iterator of text\n"
           "pieces (of ids with tokens=True), one forward per token, ending at an end-of-generation token (unless\n"
           "ignore_eos, which also never samples one), after max_tokens (< 0: no limit) or when the context is\n"
           "full. Sampling: repetition penalty -> top-k -> top-p -> min-p -> temperature (<= 0: greedy). reset=True\n"
           "starts from an empty context. The prompt runs when generate() is called; stream.stats has the counts.");

  py::class_<Stream>(m, "GenerationStream", "Iterator of a model.generate() call.")
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", &Stream::next)
      .def_property_readonly("tokens", [](const Stream& s) { return s.tokens; }, "Ids produced so far.")
      .def_property_readonly("stats", [](const Stream& s) { return stats_dict(s.gen->stats()); });

  m.def("load_model", [](const std::string& path, py::object device, int64_t n_ctx, py::object cache_dtype) {
          wgt::ModelOptions o;
          o.device = to_device(device);
          o.n_ctx = n_ctx;
          o.cache_dtype = to_dtype(cache_dtype);
          auto x = std::make_unique<Model>();
          py::gil_scoped_release g;
          wgt::GgufFile f = wgt::GgufFile::open(path);
          x->lm = std::make_unique<wgt::LanguageModel>(wgt::LanguageModel::load(f, o));
          try {
            x->tok.emplace(wgt::tokenizer_from_gguf(f));
          } catch (const wgt::Error& e) {
            x->tok_error = e.what();
          }
          return x;
        }, py::arg("path"), py::arg("device") = "cpu", py::arg("n_ctx") = 0, py::arg("cache_dtype") = "f32",
        "Loads a GGUF language model (llama, qwen2; docs/model.md): every weight on `device` (pinned there), KV\n"
        "caches of n_ctx positions (0 = min(context_length, 4096)) in cache_dtype (f32 or f16).");
  m.def("write_synthetic_model", [](const std::string& path, const std::string& shape, const std::string& type, uint64_t seed) {
          py::gil_scoped_release g;
          return wgt::write_synthetic_model(path, wgt::synthetic_shape(shape), type, seed);
        }, py::arg("path"), py::arg("shape") = "tiny", py::arg("type") = "q8_0", py::arg("seed") = 1,
        "Writes a GGUF model of a named shape ('tiny', 'tiny-qwen2', 'llama2-7b', ...) with random weights of `type`;\n"
        "returns the bytes written.");
  m.def("synthetic_shapes", [] {
    std::vector<std::string> names;
    for (const auto& s : wgt::synthetic_shapes()) names.push_back(s.name);
    return names;
  });
}

}  // namespace wgtpy
