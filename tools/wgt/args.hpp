// Command-line options of one wgt subcommand: typed, range-checked, and every argument must be
// consumed (an unknown or repeated option is an error, never silently ignored).
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace wgt::cli {

// A usage error: printed with the command's name and a hint to --help; exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Args {
 public:
  Args(std::vector<std::string> argv);  // the arguments after the subcommand's name

  // "--name VALUE", "--name=VALUE" or, when given, "-s VALUE". Each may appear once.
  std::optional<std::string> value(const char* name, const char* short_name = nullptr);
  bool flag(const char* name, const char* short_name = nullptr);  // "--name" (no value)
  std::string str(const char* name, const char* short_name, const std::string& dflt);
  int64_t integer(const char* name, const char* short_name, int64_t dflt, int64_t lo, int64_t hi);
  double real(const char* name, const char* short_name, double dflt, double lo, double hi);
  // Comma-separated integers ("1,2,3").
  std::optional<std::vector<int32_t>> int_list(const char* name, const char* short_name = nullptr);
  // Throws UsageError naming every argument that no option consumed.
  void finish() const;

 private:
  std::vector<std::string> a_;
  std::vector<bool> used_;
  std::optional<size_t> find(const char* name, const char* short_name, bool takes_value, std::string* inline_value);
};

int64_t parse_int(const std::string& s, const std::string& what, int64_t lo, int64_t hi);
double parse_real(const std::string& s, const std::string& what, double lo, double hi);

}  // namespace wgt::cli
