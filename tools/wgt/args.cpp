// Strict option parsing for the wgt subcommands.
#include "args.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace wgt::cli {

Args::Args(std::vector<std::string> argv) : a_(std::move(argv)), used_(a_.size(), false) {}

std::optional<size_t> Args::find(const char* name, const char* short_name, bool takes_value, std::string* inline_value) {
  const std::string lng = std::string("--") + name, eq = lng + "=", shrt = short_name ? std::string("-") + short_name : "";
  std::optional<size_t> at;
  for (size_t i = 0; i < a_.size(); ++i) {
    const std::string& s = a_[i];
    const bool exact = s == lng || (!shrt.empty() && s == shrt);
    const bool with_eq = takes_value && s.rfind(eq, 0) == 0;
    if (!exact && !with_eq) continue;
    if (at) throw UsageError(lng + " is given twice");
    at = i;
    used_[i] = true;
    if (with_eq) {
      *inline_value = s.substr(eq.size());
    } else if (takes_value) {
      if (i + 1 >= a_.size()) throw UsageError(lng + " needs a value");
      *inline_value = a_[i + 1];
      used_[i + 1] = true;
      ++i;
    }
  }
  return at;
}

std::optional<std::string> Args::value(const char* name, const char* short_name) {
  std::string v;
  if (!find(name, short_name, true, &v)) return std::nullopt;
  return v;
}

bool Args::flag(const char* name, const char* short_name) {
  std::string unused;
  return find(name, short_name, false, &unused).has_value();
}

std::string Args::str(const char* name, const char* short_name, const std::string& dflt) {
  return value(name, short_name).value_or(dflt);
}

int64_t parse_int(const std::string& s, const std::string& what, int64_t lo, int64_t hi) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno == ERANGE)
    throw UsageError(what + " expects a whole number, got '" + s + "'");
  if (v < lo || v > hi)
    throw UsageError(what + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + s);
  return v;
}

double parse_real(const std::string& s, const std::string& what, double lo, double hi) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v)) throw UsageError(what + " expects a finite number, got '" + s + "'");
  if (v < lo || v > hi) throw UsageError(what + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + s);
  return v;
}

int64_t Args::integer(const char* name, const char* short_name, int64_t dflt, int64_t lo, int64_t hi) {
  auto v = value(name, short_name);
  return v ? parse_int(*v, std::string("--") + name, lo, hi) : dflt;
}

double Args::real(const char* name, const char* short_name, double dflt, double lo, double hi) {
  auto v = value(name, short_name);
  return v ? parse_real(*v, std::string("--") + name, lo, hi) : dflt;
}

std::optional<std::vector<int32_t>> Args::int_list(const char* name, const char* short_name) {
  auto v = value(name, short_name);
  if (!v) return std::nullopt;
  std::vector<int32_t> out;
  size_t i = 0;
  while (i <= v->size()) {
    size_t j = v->find(',', i);
    if (j == std::string::npos) j = v->size();
    out.push_back(static_cast<int32_t>(parse_int(v->substr(i, j - i), std::string("--") + name + " (an id)", 0, INT32_MAX)));
    i = j + 1;
  }
  return out;
}

void Args::finish() const {
  std::string bad;
  for (size_t i = 0; i < a_.size(); ++i)
    if (!used_[i]) bad += (bad.empty() ? "" : " ") + a_[i];
  if (!bad.empty()) throw UsageError("unknown or unexpected argument(s): " + bad);
}

}  // namespace wgt::cli
