// Umbrella header of the wgtensor public API.
#pragma once
#include "wgt/algebra.hpp"
#include "wgt/backend.hpp"
#include "wgt/backend_handle.hpp"
#include "wgt/device.hpp"
#include "wgt/dtype.hpp"
#include "wgt/error.hpp"
#include "wgt/fft.hpp"
#include "wgt/gguf.hpp"
#include "wgt/host_cache.hpp"
#include "wgt/mapping.hpp"
#include "wgt/nn.hpp"
#include "wgt/ops.hpp"
#include "wgt/profile.hpp"
#include "wgt/quant.hpp"
#include "wgt/runtime.hpp"
#include "wgt/session.hpp"
#include "wgt/shape.hpp"
#include "wgt/tensor.hpp"

namespace wgt {
const char* version();
}
