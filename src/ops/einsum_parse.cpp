// einsum spec parser: NumPy's notation into integer labels, operand ranks and label sizes
// checked against the operand specs.
#include "ops/einsum_parse.hpp"

#include <algorithm>

#include "wgt/error.hpp"

namespace wgt::einsum_detail {

namespace {

constexpr const char* kOp = "einsum";

int letter_label(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}
char label_char(int l) { return static_cast<char>(l < 26 ? 'a' + l : 'A' + (l - 26)); }

struct Term {
  std::vector<int> before, after;  // letters before and after "..."
  bool ellipsis = false;
};

Term parse_term(const std::string& s, const std::string& spec, const char* where) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.') {
      if (s.compare(i, 3, "...") != 0 || t.ellipsis)
        throw_error(ErrorKind::InvalidArgument, kOp,
                    std::string("'") + spec + "': a '.' in the " + where +
                        " must be part of one \"...\" (at most one per operand)");
      t.ellipsis = true;
      i += 2;
      continue;
    }
    const int l = letter_label(c);
    if (l < 0)
      throw_error(ErrorKind::InvalidArgument, kOp,
                  std::string("'") + spec + "': unknown subscript '" + c + "' in the " + where +
                      "; subscripts are the letters a-z and A-Z and \"...\"");
    (t.ellipsis ? t.after : t.before).push_back(l);
  }
  return t;
}

}  // namespace

std::string label_name(int label) {
  if (label < kNumLetters) return std::string(1, label_char(label));
  return "...[" + std::to_string(label - kEllipsisBase) + "]";
}

ParsedSpec parse_einsum(const std::string& spec_in, const std::vector<TensorSpec>& operands) {
  std::string spec;
  for (char c : spec_in)
    if (c != ' ') spec += c;
  if (operands.empty()) throw_error(ErrorKind::InvalidArgument, kOp, "needs at least one operand");
  if (operands.size() > static_cast<size_t>(kMaxEinsumOperands))
    throw_error(ErrorKind::InvalidArgument, kOp,
                std::to_string(operands.size()) + " operands; at most " + std::to_string(kMaxEinsumOperands) +
                    " are supported (contract in several calls)");
  const size_t arrow = spec.find("->");
  const std::string lhs = spec.substr(0, arrow);
  const bool explicit_out = arrow != std::string::npos;
  const std::string rhs = explicit_out ? spec.substr(arrow + 2) : "";
  for (char c : lhs + rhs)
    if (c == '-' || c == '>')
      throw_error(ErrorKind::InvalidArgument, kOp, "'" + spec + "': '-' and '>' may only appear once, as \"->\"");
  if (rhs.find(',') != std::string::npos)
    throw_error(ErrorKind::InvalidArgument, kOp, "'" + spec + "': the output has one term (no ',')");

  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',') terms.emplace_back();
    else terms.back() += c;
  }
  if (terms.size() != operands.size())
    throw_error(ErrorKind::InvalidArgument, kOp,
                "'" + spec + "' names " + std::to_string(terms.size()) + " operands but " +
                    std::to_string(operands.size()) + " were given");

  ParsedSpec p;
  p.size.assign(kEllipsisBase + kMaxRank, -1);
  std::vector<int> count(kNumLetters, 0);
  int ell_rank = 0;
  std::vector<Term> parsed;
  for (size_t i = 0; i < terms.size(); ++i) {
    const std::string where = "subscripts of operand " + std::to_string(i);
    Term t = parse_term(terms[i], spec, where.c_str());
    const int rank = static_cast<int>(operands[i].shape.size());
    const int letters = static_cast<int>(t.before.size() + t.after.size());
    if (t.ellipsis ? letters > rank : letters != rank)
      throw_error(ErrorKind::RankMismatch, kOp,
                  "'" + spec + "': operand " + std::to_string(i) + " has rank " + std::to_string(rank) + " but '" +
                      terms[i] + "' has " + std::to_string(letters) + " subscripts" +
                      (t.ellipsis ? " (plus \"...\")" : ""));
    if (t.ellipsis) {
      ell_rank = std::max(ell_rank, rank - letters);
    }
    parsed.push_back(std::move(t));
  }
  for (size_t i = 0; i < parsed.size(); ++i) {
    const Term& t = parsed[i];
    const Shape& shape = operands[i].shape;
    const int rank = static_cast<int>(shape.size());
    const int e = t.ellipsis ? rank - static_cast<int>(t.before.size() + t.after.size()) : 0;
    std::vector<int> labels = t.before;
    for (int j = 0; j < e; ++j) labels.push_back(kEllipsisBase + ell_rank - e + j);
    labels.insert(labels.end(), t.after.begin(), t.after.end());
    for (int ax = 0; ax < rank; ++ax) {
      const int l = labels[ax];
      const int64_t s = shape[ax];
      int64_t& known = p.size[l];
      if (l < kNumLetters) {
        ++count[l];
        if (known >= 0 && known != s)
          throw_error(ErrorKind::ShapeMismatch, kOp,
                      "'" + spec + "': subscript '" + label_name(l) + "' has size " + std::to_string(known) +
                          " and size " + std::to_string(s) + " (operand " + std::to_string(i) + " " + shape_str(shape) + ")");
        known = s;
      } else if (known < 0 || known == 1) {
        known = s;  // "..." dims broadcast: 1 stretches to the other size
      } else if (s != 1 && s != known) {
        throw_error(ErrorKind::ShapeMismatch, kOp,
                    "'" + spec + "': the \"...\" dims do not broadcast (size " + std::to_string(known) + " vs " +
                        std::to_string(s) + " in operand " + std::to_string(i) + " " + shape_str(shape) + ")");
      }
    }
    p.inputs.push_back(std::move(labels));
  }

  std::vector<int> ell;
  for (int j = 0; j < ell_rank; ++j) ell.push_back(kEllipsisBase + j);
  if (!explicit_out) {
    // NumPy's implicit output: the broadcast dims, then the letters used exactly once, in
    // character (ASCII) order.
    p.output = ell;
    std::string once;
    for (int l = 0; l < kNumLetters; ++l)
      if (count[l] == 1) once += label_char(l);
    std::sort(once.begin(), once.end());
    for (char c : once) p.output.push_back(letter_label(c));
  } else {
    Term t = parse_term(rhs, spec, "output");
    p.output = t.before;
    if (t.ellipsis) p.output.insert(p.output.end(), ell.begin(), ell.end());
    p.output.insert(p.output.end(), t.after.begin(), t.after.end());
    std::vector<bool> seen(kNumLetters, false);
    for (int l : p.output) {
      if (l >= kNumLetters) continue;
      if (count[l] == 0)
        throw_error(ErrorKind::InvalidArgument, kOp,
                    "'" + spec + "': output subscript '" + label_name(l) + "' appears in no operand");
      if (seen[l])
        throw_error(ErrorKind::InvalidArgument, kOp,
                    "'" + spec + "': output subscript '" + label_name(l) + "' is repeated; list it once");
      seen[l] = true;
    }
  }
  return p;
}

}  // namespace wgt::einsum_detail
