// SentencePiece-style BPE ("llama" vocabularies): spaces are spelled U+2581, the text starts as
// one symbol per UTF-8 character, and the adjacent pair whose concatenation is a token with the
// highest score is merged (ties: leftmost) until no pair forms a token. A remaining symbol that
// is not a token (a character outside the vocabulary) is spelled with <0xNN> byte tokens.
#include <queue>

#include "model/tokenizer_impl.hpp"

namespace wgt::detail {

namespace {

const char kSpace[] = "\xE2\x96\x81";  // U+2581 LOWER ONE EIGHTH BLOCK

struct Symbol {
  int prev, next;
  size_t off, len;
};

struct Bigram {
  float score;
  int left, right;
  size_t len;  // left.len + right.len when queued: a mismatch later means the entry is stale
};

struct LowerBigram {  // priority_queue pops the "largest": highest score, then leftmost
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score != b.score ? a.score < b.score : a.left > b.left;
  }
};

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
  std::vector<Symbol> sym;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (size_t i = 0; i < s.size();) {
    // Ill-formed bytes are symbols of one byte: they can only leave through byte tokens.
    const Utf8Step st = utf8_step(p + i, s.size() - i);
    const size_t len = st.kind == Utf8Step::Complete ? st.len : 1;
    const int idx = static_cast<int>(sym.size());
    sym.push_back({idx - 1, idx + 1, i, len});
    i += len;
  }
  if (sym.empty()) return;
  sym.back().next = -1;

  std::priority_queue<Bigram, std::vector<Bigram>, LowerBigram> queue;
  auto try_pair = [&](int l, int r) {
    if (l < 0 || r < 0) return;
    const int32_t id = t.find(std::string_view(s).substr(sym[l].off, sym[l].len + sym[r].len));
    if (id < 0) return;
    const float score = t.v.scores.empty() ? 0.0f : t.v.scores[id];
    queue.push({score, l, r, sym[l].len + sym[r].len});
  };
  for (int i = 0; i + 1 < static_cast<int>(sym.size()); ++i) try_pair(i, i + 1);

  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& l = sym[b.left];
    Symbol& r = sym[b.right];
    if (l.len == 0 || r.len == 0 || l.next != b.right || l.len + r.len != b.len) continue;
    l.len += r.len;  // symbols are contiguous in `s`
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = b.left;
    try_pair(l.prev, b.left);
    try_pair(b.left, l.next);
  }
  for (int i = 0; i >= 0; i = sym[i].next) {
    emit_symbol(t, std::string_view(s).substr(sym[i].off, sym[i].len), out);
  }
}

}  // namespace wgt::detail
