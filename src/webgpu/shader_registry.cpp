// Lookup into the embedded WGSL table and the shader-variant preprocessor (includes,
// conditional blocks, {{NAME}} substitution); the grammar is in shader_registry.hpp.
#include "webgpu/shader_registry.hpp"

#include <cctype>
#include <charconv>
#include <set>
#include <string_view>

#include "wgt/error.hpp"

namespace wgt::webgpu {

const char* shader_source(const std::string& name) {
  for (int i = 0; i < kEmbeddedShaderCount; ++i)
    if (name == kEmbeddedShaders[i].name) return kEmbeddedShaders[i].source;
  throw_error(ErrorKind::RuntimeState, "shader_source", "no embedded WGSL shader named '" + name + "'");
}

namespace {

[[noreturn]] void fail(const std::string& file, size_t line, const std::string& what) {
  throw_error(ErrorKind::RuntimeState, "expand_shader",
              "shader '" + file + "' line " + std::to_string(line) + ": " + what);
}

const std::string* find_define(const ShaderDefines& defines, std::string_view name) {
  for (const auto& [k, v] : defines)
    if (k == name) return &v;
  return nullptr;
}

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Recursive-descent evaluator of one #if / #elif expression. `live` is false inside the
// unevaluated operand of && / ||: names there are parsed but not looked up.
class Expr {
 public:
  Expr(std::string_view s, const ShaderDefines& d, const std::string& file, size_t line)
      : s_(s), defines_(d), file_(file), line_(line) {}
  int64_t eval() {
    const int64_t v = parse_or(true);
    skip_ws();
    if (pos_ != s_.size()) error("unexpected '" + std::string(s_.substr(pos_)) + "'");
    return v;
  }

 private:
  [[noreturn]] void error(const std::string& what) { fail(file_, line_, "#if expression: " + what); }
  void skip_ws() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(std::string_view tok) {
    skip_ws();
    if (s_.substr(pos_, tok.size()) != tok) return false;
    pos_ += tok.size();
    return true;
  }
  std::string_view ident() {
    skip_ws();
    const size_t b = pos_;
    while (pos_ < s_.size() && is_ident_char(s_[pos_])) ++pos_;
    return s_.substr(b, pos_ - b);
  }
  // An integer (optional `u` suffix) or true / false; false when `t` is neither.
  static bool number(std::string_view t, int64_t* out) {
    if (t == "true") return *out = 1, true;
    if (t == "false") return *out = 0, true;
    if (!t.empty() && (t.back() == 'u' || t.back() == 'i')) t.remove_suffix(1);
    if (t.empty()) return false;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), *out);
    return ec == std::errc() && p == t.data() + t.size();
  }
  int64_t parse_or(bool live) {
    int64_t v = parse_and(live);
    while (eat("||")) {
      const int64_t r = parse_and(live && !v);
      v = v || r;
    }
    return v;
  }
  int64_t parse_and(bool live) {
    int64_t v = parse_cmp(live);
    while (eat("&&")) {
      const int64_t r = parse_cmp(live && v);
      v = v && r;
    }
    return v;
  }
  int64_t parse_cmp(bool live) {
    const int64_t a = parse_unary(live);
    for (std::string_view op : {"==", "!=", "<=", ">=", "<", ">"}) {
      if (!eat(op)) continue;
      const int64_t b = parse_unary(live);
      if (op == "==") return a == b;
      if (op == "!=") return a != b;
      if (op == "<=") return a <= b;
      if (op == ">=") return a >= b;
      if (op == "<") return a < b;
      return a > b;
    }
    return a;
  }
  int64_t parse_unary(bool live) {
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == '!' && s_.substr(pos_, 2) != "!=") {
      ++pos_;
      return !parse_unary(live);
    }
    return parse_primary(live);
  }
  int64_t parse_primary(bool live) {
    if (eat("(")) {
      const int64_t v = parse_or(live);
      if (!eat(")")) error("missing ')'");
      return v;
    }
    const std::string_view t = ident();
    if (t.empty()) error(pos_ < s_.size() ? "unexpected '" + std::string(1, s_[pos_]) + "'" : "missing operand");
    if (t == "defined") {
      const bool paren = eat("(");
      const std::string_view n = ident();
      if (n.empty() || (paren && !eat(")"))) error("defined needs a name");
      return find_define(defines_, n) != nullptr;
    }
    int64_t v = 0;
    if (number(t, &v)) return v;
    if (std::isdigit(static_cast<unsigned char>(t[0]))) error("bad number '" + std::string(t) + "'");
    if (!live) return 0;
    const std::string* d = find_define(defines_, t);
    if (!d) error("'" + std::string(t) + "' is not defined (use defined(" + std::string(t) + ") to test for it)");
    if (!number(*d, &v)) error("'" + std::string(t) + "' = '" + *d + "' is not a number or boolean");
    return v;
  }

  std::string_view s_;
  size_t pos_ = 0;
  const ShaderDefines& defines_;
  const std::string& file_;
  size_t line_;
};

// An include name may itself be a define ("#include \"{{DOT}}\""), so one entry shader can
// pull a per-variant part (e.g. the block format's decoder) without a wrapper file per variant.
std::string resolve_include(const std::string& name, const ShaderDefines& defines) {
  if (name.size() > 4 && name.starts_with("{{") && name.ends_with("}}"))
    if (const std::string* v = find_define(defines, std::string_view(name).substr(2, name.size() - 4))) return *v;
  return name;
}

struct Preprocessor {
  const ShaderDefines& defines;
  const std::function<std::string(const std::string&)>& lookup;
  std::set<std::string> seen;
  std::string out;

  // One open conditional block: whether its current branch is emitted, whether one of its
  // branches was taken already, whether #else was seen, and whether the enclosing text is.
  struct Cond {
    bool active, taken, in_else, parent;
    size_t line;
  };

  void file(const std::string& name) {
    if (!seen.insert(name).second) return;  // include once: shared helpers may be pulled twice
    const std::string text = lookup(name);
    std::vector<Cond> conds;
    size_t line_no = 0;
    for (size_t b = 0; b <= text.size();) {
      size_t e = text.find('\n', b);
      if (e == std::string::npos) e = text.size();
      const std::string_view line(text.data() + b, e - b);
      ++line_no;
      b = e + 1;
      if (e == text.size() && line.empty()) break;
      const bool emit = conds.empty() || conds.back().active;
      const size_t p = line.find_first_not_of(" \t");
      if (p == std::string_view::npos || line[p] != '#') {
        if (emit) {
          out += line;
          out += '\n';
        }
        continue;
      }
      size_t q = p + 1;
      while (q < line.size() && is_ident_char(line[q])) ++q;
      const std::string_view dir = line.substr(p + 1, q - p - 1);
      std::string_view arg = line.substr(q);
      while (!arg.empty() && std::isspace(static_cast<unsigned char>(arg.front()))) arg.remove_prefix(1);
      while (!arg.empty() && std::isspace(static_cast<unsigned char>(arg.back()))) arg.remove_suffix(1);
      auto eval = [&] {
        if (arg.empty()) fail(name, line_no, "#" + std::string(dir) + " without an expression");
        return Expr(arg, defines, name, line_no).eval() != 0;
      };
      auto name_arg = [&] {
        size_t n = 0;
        while (n < arg.size() && is_ident_char(arg[n])) ++n;
        if (n == 0 || n != arg.size()) fail(name, line_no, "#" + std::string(dir) + " takes one name");
        return find_define(defines, arg) != nullptr;
      };
      if (dir == "if" || dir == "ifdef" || dir == "ifndef") {
        // An inactive region's nested blocks are tracked, never evaluated.
        const bool v = emit && (dir == "if" ? eval() : dir == "ifdef" ? name_arg() : !name_arg());
        conds.push_back({v, v, false, emit, line_no});
      } else if (dir == "elif") {
        if (conds.empty()) fail(name, line_no, "#elif without #if");
        Cond& c = conds.back();
        if (c.in_else) fail(name, line_no, "#elif after #else");
        c.active = c.parent && !c.taken && eval();
        c.taken = c.taken || c.active;
      } else if (dir == "else") {
        if (conds.empty()) fail(name, line_no, "#else without #if");
        Cond& c = conds.back();
        if (c.in_else) fail(name, line_no, "second #else");
        if (!arg.empty()) fail(name, line_no, "#else takes no argument");
        c.in_else = true;
        c.active = c.parent && !c.taken;
        c.taken = true;
      } else if (dir == "endif") {
        if (conds.empty()) fail(name, line_no, "#endif without #if");
        if (!arg.empty()) fail(name, line_no, "#endif takes no argument");
        conds.pop_back();
      } else if (dir == "include") {
        if (!emit) continue;
        if (arg.size() < 2 || arg.front() != '"' || arg.back() != '"')
          fail(name, line_no, "malformed include: " + std::string(line));
        file(resolve_include(std::string(arg.substr(1, arg.size() - 2)), defines));
      } else {
        fail(name, line_no, "unknown directive '#" + std::string(dir) + "'");
      }
    }
    if (!conds.empty()) fail(name, conds.back().line, "#if without #endif");
  }
};

}  // namespace

std::string preprocess_wgsl(const std::string& name, const ShaderDefines& defines,
                            const std::function<std::string(const std::string&)>& lookup) {
  Preprocessor pp{defines, lookup, {}, {}};
  pp.file(name);
  std::string src = std::move(pp.out);
  for (const auto& [k, v] : defines) {
    const std::string pat = "{{" + k + "}}";
    for (size_t pos = src.find(pat); pos != std::string::npos; pos = src.find(pat, pos + v.size()))
      src.replace(pos, pat.size(), v);
  }
  if (size_t pos = src.find("{{"); pos != std::string::npos) {
    size_t end = src.find("}}", pos);
    throw_error(ErrorKind::RuntimeState, "expand_shader",
                "shader '" + name + "' has placeholder " + src.substr(pos, end == std::string::npos ? 20 : end + 2 - pos) +
                    " without a define; add it to the kernel's defines");
  }
  return src;
}

std::string expand_shader(const std::string& name, const ShaderDefines& defines) {
  return preprocess_wgsl(name, defines, [](const std::string& n) { return std::string(shader_source(n)); });
}

}  // namespace wgt::webgpu
