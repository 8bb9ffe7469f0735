// setenv / unsetenv for tests that change WGT_* variables between calls: the library parses
// them once and caches them (runtime/settings.hpp), so each change is followed by
// settings_reload() for the next launch to see it.
#pragma once
#include <cstdlib>
#include <optional>
#include <string>

#include "runtime/settings.hpp"

inline int test_setenv(const char* name, const char* value) {
  const int r = ::setenv(name, value, 1);
  wgt::settings_reload();
  return r;
}

inline int test_unsetenv(const char* name) {
  const int r = ::unsetenv(name);
  wgt::settings_reload();
  return r;
}

// Sets (or with nullptr unsets) an environment variable for one scope and restores the previous
// value (or its absence) at the end, reloading the settings both times.
class EnvGuard {
 public:
  EnvGuard(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) test_setenv(name, value);
    else test_unsetenv(name);
  }
  ~EnvGuard() {
    if (old_) test_setenv(name_.c_str(), old_->c_str());
    else test_unsetenv(name_.c_str());
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};
