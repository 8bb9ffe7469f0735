// The WGSL preprocessor (src/webgpu/shader_registry.cpp): conditional blocks, includes and
// {{NAME}} substitution over an in-memory source table, and its typed errors. No GPU needed.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "webgpu/shader_registry.hpp"
#include "wgt/error.hpp"

using wgt::Error;
using wgt::ErrorKind;
using wgt::webgpu::preprocess_wgsl;
using wgt::webgpu::ShaderDefines;

namespace {

std::string run(const std::map<std::string, std::string>& files, const ShaderDefines& defines, const std::string& entry = "main") {
  return preprocess_wgsl(entry, defines, [&](const std::string& n) {
    auto it = files.find(n);
    if (it == files.end()) wgt::throw_error(ErrorKind::RuntimeState, "test", "no file " + n);
    return it->second;
  });
}
std::string run1(const std::string& text, const ShaderDefines& defines) { return run({{"main", text}}, defines); }

// The message of the RuntimeState error `text` raises, or "" when it raises none.
std::string error_of(const std::string& text, const ShaderDefines& defines = {}) {
  try {
    run1(text, defines);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::RuntimeState) << e.what();
    return e.message();
  }
  return "";
}

}  // namespace

TEST(ShaderPreprocess, IfdefElseAndIfndef) {
  const std::string src = "a\n#ifdef X\nx\n#else\nnot x\n#endif\n#ifndef X\nnx\n#endif\nb\n";
  EXPECT_EQ(run1(src, {{"X", "anything"}}), "a\nx\nb\n");
  EXPECT_EQ(run1(src, {}), "a\nnot x\nnx\nb\n");
}

TEST(ShaderPreprocess, IfElifChainTakesTheFirstTrueBranchOnly) {
  const std::string src = "#if K == 1\none\n#elif K == 2\ntwo\n#elif K >= 2\nbig\n#else\nother\n#endif\n";
  EXPECT_EQ(run1(src, {{"K", "1"}}), "one\n");
  EXPECT_EQ(run1(src, {{"K", "2"}}), "two\n");  // K >= 2 holds too, but #elif K == 2 came first
  EXPECT_EQ(run1(src, {{"K", "7u"}}), "big\n");
  EXPECT_EQ(run1(src, {{"K", "0"}}), "other\n");
}

TEST(ShaderPreprocess, ExpressionsBooleansAndPrecedence) {
  auto val = [](const std::string& e, const ShaderDefines& d) { return run1("#if " + e + "\n1\n#else\n0\n#endif\n", d); };
  const ShaderDefines d{{"T", "true"}, {"F", "false"}, {"N", "4"}};
  EXPECT_EQ(val("T", d), "1\n");
  EXPECT_EQ(val("F", d), "0\n");
  EXPECT_EQ(val("!F && T", d), "1\n");
  EXPECT_EQ(val("F || T && F", d), "0\n");   // && binds tighter
  EXPECT_EQ(val("(F || T) && T", d), "1\n");
  EXPECT_EQ(val("N != 4 || N < 5", d), "1\n");
  EXPECT_EQ(val("N > 4", d), "0\n");
  EXPECT_EQ(val("N <= 4 && !(N == 3)", d), "1\n");
  EXPECT_EQ(val("defined(N) && !defined MISSING", d), "1\n");
  // Short-circuit: the right side is not looked up, so an undefined name there is fine.
  EXPECT_EQ(val("defined(MISSING) && MISSING > 2", d), "0\n");
  EXPECT_EQ(val("T || MISSING", d), "1\n");
}

TEST(ShaderPreprocess, NestingInsideInactiveBlocksIsNotEvaluated) {
  const std::string src =
      "#if A\n"
      "a\n"
      "#if B\n"
      "#if UNDEFINED_BUT_NOT_EVALUATED\nnever\n#elif ALSO_UNDEFINED\nnever\n#else\nnever\n#endif\n"
      "ab\n"
      "#else\n"
      "a!b\n"
      "#endif\n"
      "#else\n"
      "!a\n"
      "#endif\n";
  EXPECT_EQ(run1(src, {{"A", "1"}, {"B", "0"}}), "a\na!b\n");
  EXPECT_EQ(run1(src, {{"A", "0"}}), "!a\n");  // B is not even looked up
  // Evaluated, the same names are errors.
  EXPECT_THROW(run1(src, {{"A", "1"}, {"B", "1"}}), Error);
}

TEST(ShaderPreprocess, IncludesOnceAndOnlyFromActiveBlocks) {
  const std::map<std::string, std::string> files = {
      {"main", "#include \"common\"\n#if USE_EXTRA\n#include \"{{PART}}\"\n#endif\n#include \"common\"\nend {{N}}\n"},
      {"common", "common\n"},
      {"extra", "#ifdef X\nextra x\n#endif\nextra\n"}};
  EXPECT_EQ(run(files, {{"USE_EXTRA", "true"}, {"PART", "extra"}, {"N", "3"}}), "common\nextra\nend 3\n");
  EXPECT_EQ(run(files, {{"USE_EXTRA", "false"}, {"PART", "missing_file"}, {"N", "3"}, {"X", ""}}), "common\nend 3\n");
}

TEST(ShaderPreprocess, UndefinedOrNonNumericNameInIfIsATypedError) {
  EXPECT_NE(error_of("#if MISSING\nx\n#endif\n").find("'MISSING' is not defined"), std::string::npos);
  EXPECT_NE(error_of("#if LANE\nx\n#endif\n", {{"LANE", "q4_0_lane"}}).find("not a number"), std::string::npos);
  EXPECT_EQ(error_of("#ifdef MISSING\nx\n#endif\n"), "");  // #ifdef only asks
}

TEST(ShaderPreprocess, UnbalancedAndMalformedDirectivesAreTypedErrors) {
  EXPECT_NE(error_of("#if 1\nx\n").find("#if without #endif"), std::string::npos);
  EXPECT_NE(error_of("x\n#endif\n").find("#endif without #if"), std::string::npos);
  EXPECT_NE(error_of("#else\n").find("#else without #if"), std::string::npos);
  EXPECT_NE(error_of("#elif 1\n").find("#elif without #if"), std::string::npos);
  EXPECT_NE(error_of("#if 1\n#else\n#elif 1\n#endif\n").find("#elif after #else"), std::string::npos);
  EXPECT_NE(error_of("#if 1\n#else\n#else\n#endif\n").find("second #else"), std::string::npos);
  EXPECT_NE(error_of("#if\n#endif\n").find("without an expression"), std::string::npos);
  EXPECT_NE(error_of("#if (1\n#endif\n").find("missing ')'"), std::string::npos);
  EXPECT_NE(error_of("#if 1 +\n#endif\n").find("unexpected"), std::string::npos);
  EXPECT_NE(error_of("#ifdef A B\n#endif\n").find("takes one name"), std::string::npos);
  EXPECT_NE(error_of("#define X 1\n").find("unknown directive '#define'"), std::string::npos);
  EXPECT_NE(error_of("#include nope\n").find("malformed include"), std::string::npos);
  // The line number points at the directive.
  EXPECT_NE(error_of("a\nb\n#endif\n").find("line 3"), std::string::npos);
  // A block opened in an included file must close there.
  try {
    run({{"main", "#include \"inc\"\n#endif\n"}, {"inc", "#if 1\n"}}, {});
    ADD_FAILURE() << "no throw";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("shader 'inc' line 1: #if without #endif"), std::string::npos) << e.message();
  }
}

TEST(ShaderPreprocess, PlaceholderWithoutDefineIsATypedError) {
  EXPECT_EQ(run1("x = {{A}};\n", {{"A", "1"}}), "x = 1;\n");
  EXPECT_NE(error_of("x = {{A}};\n").find("{{A}}"), std::string::npos);
}

// Every embedded shader whose directives do not depend on a variant's defines preprocesses
// cleanly: a shader with an unbalanced block fails here before any GPU compiles it.
TEST(ShaderPreprocess, EmbeddedShadersHaveBalancedDirectives) {
  for (int i = 0; i < wgt::webgpu::kEmbeddedShaderCount; ++i) {
    const std::string text = wgt::webgpu::kEmbeddedShaders[i].source;
    int depth = 0;
    size_t b = 0;
    while (b < text.size()) {
      size_t e = text.find('\n', b);
      if (e == std::string::npos) e = text.size();
      std::string line = text.substr(b, e - b);
      b = e + 1;
      line.erase(0, line.find_first_not_of(" \t"));
      if (line.rfind("#if", 0) == 0) ++depth;
      if (line.rfind("#endif", 0) == 0) --depth;
      ASSERT_GE(depth, 0) << wgt::webgpu::kEmbeddedShaders[i].name;
    }
    EXPECT_EQ(depth, 0) << wgt::webgpu::kEmbeddedShaders[i].name;
  }
}
