// SentencePiece-style BPE ("llama" vocabularies): spaces are spelled U+2581, the text starts as
// one symbol per UTF-8 character, and the adjacent pair whose concatenation is a token with the
// highest score is merged (ties: leftmost) until no pair forms a token. A remaining symbol that
// is not a token (a character outside the vocabulary) is spelled with <0xNN> byte tokens.
#include "model/symbol_merge.hpp"
#include "model/tokenizer_impl.hpp"

namespace wgt::detail {

namespace {

const char kSpace[] = "\xE2\x96\x81";  // U+2581 LOWER ONE EIGHTH BLOCK

void emit_symbol(const TokenizerImpl& t, std::string_view sym, std::vector<int32_t>& out) {
  if (const int32_t id = t.find(sym); id >= 0) {
    out.push_back(id);
    return;
  }
  bool all_bytes = true;
  for (unsigned char b : sym) all_bytes = all_bytes && t.byte_token[b] >= 0;
  if (all_bytes) {
    for (unsigned char b : sym) out.push_back(t.byte_token[b]);
  } else if (t.v.unk >= 0) {
    out.push_back(t.v.unk);  // one unknown piece, as SentencePiece does without byte fallback
  } else {
    throw_unrepresentable(sym);
  }
}

}  // namespace

void spm_encode(const TokenizerImpl& t, std::string_view text, std::vector<int32_t>& out) {
  std::string s;
  s.reserve(text.size() + 8);
  for (char c : text) {
    if (c == ' ') {
      s += kSpace;
    } else {
      s += c;
    }
  }
  std::vector<size_t> lens;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (size_t i = 0; i < s.size();) {
    // Ill-formed bytes are symbols of one byte: they can only leave through byte tokens.
    const Utf8Step st = utf8_step(p + i, s.size() - i);
    lens.push_back(st.kind == Utf8Step::Complete ? st.len : 1);
    i += lens.back();
  }
  std::vector<MergeSymbol> sym = link_symbols(lens);
  merge_best_first(sym, [&](const MergeSymbol& l, const MergeSymbol& r) -> std::optional<double> {
    const int32_t id = t.find(std::string_view(s).substr(l.off, l.len + r.len));
    if (id < 0) return std::nullopt;
    return t.v.scores.empty() ? 0.0 : static_cast<double>(t.v.scores[id]);
  });
  for_each_symbol(sym, [&](const MergeSymbol& m) { emit_symbol(t, std::string_view(s).substr(m.off, m.len), out); });
}

}  // namespace wgt::detail
