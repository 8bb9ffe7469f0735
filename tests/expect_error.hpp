// A test's check that a call throws wgt::Error of one kind (the message is printed when the
// kind differs); EXPECT_WGT_ERROR (tests/core/ref_test_util.hpp) also checks the op's name.
#pragma once
#include <gtest/gtest.h>

#include "wgt/error.hpp"

namespace wgt::testing {

template <class F>
void expect_error(ErrorKind kind, F&& f, const char* what = "") {
  try {
    f();
    ADD_FAILURE() << what << (*what ? ": " : "") << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << what << (*what ? ": " : "") << e.what();
  }
}

}  // namespace wgt::testing
