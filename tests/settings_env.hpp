// setenv / unsetenv for tests that change WGT_* variables between calls: the library parses
// them once and caches them (runtime/settings.hpp), so each change is followed by
// settings_reload() for the next launch to see it.
#pragma once
#include <cstdlib>

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
