// Direct-summation oracle for contractions: an explicit letters-only spec ("ij,jk->ik")
// evaluated by visiting every assignment of every letter, in complex<double>. Independent of
// the einsum parser and planner under test.
#pragma once
#include <complex>
#include <map>
#include <string>
#include <vector>

#include "wgt/wgt.hpp"

namespace wgt::test {

inline std::vector<std::complex<double>> values_c(const Tensor& t) {
  std::vector<std::complex<double>> out;
  if (t.dtype() == DType::C64) {
    for (c64_t v : t.to_vector<c64_t>()) out.emplace_back(v.re, v.im);
  } else {
    for (double v : cast(t, DType::F64).to_vector<double>()) out.emplace_back(v, 0.0);
  }
  return out;
}

inline std::vector<std::complex<double>> ref_einsum(const std::string& spec, const std::vector<Tensor>& ops) {
  const size_t arrow = spec.find("->");
  std::vector<std::string> terms(1);
  for (char c : spec.substr(0, arrow)) {
    if (c == ',') terms.emplace_back();
    else terms.back() += c;
  }
  const std::string out = spec.substr(arrow + 2);
  std::map<char, int64_t> size;
  std::vector<std::vector<std::complex<double>>> vals;
  for (size_t i = 0; i < ops.size(); ++i) {
    for (size_t d = 0; d < terms[i].size(); ++d) size[terms[i][d]] = ops[i].shape()[d];
    vals.push_back(values_c(ops[i]));
  }
  std::vector<char> letters;
  for (auto& [c, s] : size) letters.push_back(c);
  int64_t out_n = 1;
  for (char c : out) out_n *= size[c];
  std::vector<std::complex<double>> res(static_cast<size_t>(out_n));
  std::map<char, int64_t> at;
  for (char c : letters) at[c] = 0;
  auto flat = [&](const std::string& term) {
    int64_t f = 0;
    for (char c : term) f = f * size[c] + at[c];
    return f;
  };
  for (auto& [c, s] : size)
    if (s == 0) return res;
  while (true) {
    std::complex<double> p = 1;
    for (size_t i = 0; i < ops.size(); ++i) p *= vals[i][static_cast<size_t>(flat(terms[i]))];
    res[static_cast<size_t>(flat(out))] += p;
    size_t k = letters.size();
    while (k > 0) {
      --k;
      if (++at[letters[k]] < size[letters[k]]) break;
      at[letters[k]] = 0;
      if (k == 0) return res;
    }
    if (letters.empty()) return res;
  }
}

inline std::vector<double> re_parts(const std::vector<std::complex<double>>& v) {
  std::vector<double> r;
  for (auto x : v) r.push_back(x.real());
  return r;
}

}  // namespace wgt::test
