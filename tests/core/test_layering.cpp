// The layering rules of docs/architecture.md that a grep can check: placement and the
// environment belong to src/runtime/. A library file that reads the policy re-implements
// placement beside Runtime::run; one that calls getenv bypasses the settings table.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/settings.hpp"
#include "settings_env.hpp"
#include "wgt/error.hpp"

namespace wgt {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Source files under `dir` (relative to the checkout) outside src/runtime/ whose text matches
// `re`, with the first match of each.
std::vector<std::string> offenders(const char* dir, const std::regex& re, int* files) {
  std::vector<std::string> out;
  const fs::path root = fs::path(WGT_SOURCE_DIR);
  const fs::path runtime = root / "src" / "runtime";
  for (const auto& ent : fs::recursive_directory_iterator(root / dir)) {
    const std::string ext = ent.path().extension().string();
    if (!ent.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".h")) continue;
    if (ent.path().parent_path() == runtime) continue;
    ++*files;
    const std::string text = read_text(ent.path());
    std::smatch m;
    if (std::regex_search(text, m, re)) out.push_back(fs::relative(ent.path(), root).string() + ": " + m.str());
  }
  return out;
}

// Only the runtime reads the policy: every other library file hands its calls to
// Runtime::run (in-place calls declare what they write in OpCall::mutates). The CLI under
// tools/ is a user of the public API and may set policies like any program.
TEST(Layering, OnlyTheRuntimeReadsThePolicy) {
  int files = 0;
  const auto bad = offenders("src", std::regex(R"(\bpolicy\(\)|\bPolicyMode::)"), &files);
  EXPECT_GT(files, 50);  // the tree was found
  for (const auto& b : bad) ADD_FAILURE() << b << " (placement belongs to Runtime::run)";
}

// Only the runtime reads the environment (the settings table, and foreign_env for the
// variables the library does not own), in the library and in the CLI alike.
TEST(Layering, OnlyTheRuntimeReadsTheEnvironment) {
  int files = 0;
  const std::regex re(R"(\b(secure_)?getenv\s*\(|\benviron\b)");
  for (const char* dir : {"src", "tools"})
    for (const auto& b : offenders(dir, re, &files)) ADD_FAILURE() << b << " (read it through runtime/settings.hpp)";
  EXPECT_GT(files, 50);
}

TEST(Layering, ForeignEnvReadsOtherVariablesOnly) {
  test_setenv("LAYERING_PROBE_X", "value");
  EXPECT_STREQ(foreign_env("LAYERING_PROBE_X"), "value");
  test_setenv("LAYERING_PROBE_X", "");
  EXPECT_EQ(foreign_env("LAYERING_PROBE_X"), nullptr);  // empty is unset, as for the settings
  try {
    (void)foreign_env("WGT_POLICY");
    ADD_FAILURE() << "a WGT_ variable must go through settings()";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
  }
  test_unsetenv("LAYERING_PROBE_X");
}

}  // namespace
}  // namespace wgt
