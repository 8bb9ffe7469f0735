// UTF-8 validation with Unicode's "maximal subpart" replacement, and the stream decoder that
// emits only complete characters while tokens arrive one by one (a character's bytes are often
// spread over several byte-fallback or byte-level tokens).
#include "model/tokenizer_impl.hpp"

namespace wgt::detail {

namespace {
const char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD
}

Utf8Step utf8_step(const unsigned char* p, size_t n) {
  const unsigned c = p[0];
  if (c < 0x80) return {Utf8Step::Complete, 1};
  // The second byte's range is narrower after E0/ED/F0/F4: that excludes overlong forms,
  // surrogates and code points above U+10FFFF (Unicode Table 3-7).
  size_t need = 0;
  unsigned lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    need = 2;
  } else if (c == 0xE0) {
    need = 3, lo = 0xA0;
  } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
    need = 3;
  } else if (c == 0xED) {
    need = 3, hi = 0x9F;
  } else if (c == 0xF0) {
    need = 4, lo = 0x90;
  } else if (c >= 0xF1 && c <= 0xF3) {
    need = 4;
  } else if (c == 0xF4) {
    need = 4, hi = 0x8F;
  } else {
    return {Utf8Step::Invalid, 1};  // continuation byte, C0/C1, F5..FF
  }
  for (size_t k = 1; k < need; ++k) {
    if (k >= n) return {Utf8Step::Incomplete, k};
    const unsigned b = p[k];
    const unsigned l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (b < l || b > h) return {Utf8Step::Invalid, k};
  }
  return {Utf8Step::Complete, need};
}

size_t utf8_append_valid(std::string_view in, bool final, std::string& out) {
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  size_t i = 0;
  while (i < in.size()) {
    const Utf8Step s = utf8_step(p + i, in.size() - i);
    if (s.kind == Utf8Step::Complete) {
      out.append(in.data() + i, s.len);
    } else if (s.kind == Utf8Step::Incomplete && !final) {
      return i;  // may still complete with the next bytes
    } else {
      out += kReplacement;
    }
    i += s.len;
  }
  return i;
}

}  // namespace wgt::detail

namespace wgt {

std::string utf8_sanitize(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  detail::utf8_append_valid(bytes, /*final=*/true, out);
  return out;
}

Tokenizer::StreamDecoder::StreamDecoder(const Tokenizer& tok, bool from_start)
    : impl_(tok.impl_), from_start_(from_start), strip_next_(from_start && tok.impl_->spm &&
                                                              tok.impl_->add_space_prefix) {}

std::string Tokenizer::StreamDecoder::push(int32_t id) {
  const auto& t = *impl_;
  if (id < 0 || id >= static_cast<int32_t>(t.piece.size())) {
    throw Error(ErrorKind::OutOfRange, "Tokenizer::StreamDecoder::push",
                "token id " + std::to_string(id) + " outside the vocabulary [0, " +
                    std::to_string(t.piece.size()) + ")");
  }
  std::string_view piece = t.piece[id];
  // Same rule as decode(): the first token after leading BOS tokens loses one leading space.
  if (strip_next_ && id != t.v.bos) {
    strip_next_ = false;
    if (!piece.empty() && piece.front() == ' ') piece.remove_prefix(1);
  }
  pending_.append(piece);
  std::string out;
  const size_t used = detail::utf8_append_valid(pending_, /*final=*/false, out);
  pending_.erase(0, used);
  return out;
}

std::string Tokenizer::StreamDecoder::flush() {
  std::string out;
  detail::utf8_append_valid(pending_, /*final=*/true, out);
  pending_.clear();
  strip_next_ = from_start_ && impl_->spm && impl_->add_space_prefix;
  return out;
}

}  // namespace wgt
