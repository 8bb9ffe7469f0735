// wgt::Error construction and kind names.
#include "wgt/error.hpp"

namespace wgt {

const char* error_kind_name(ErrorKind k) {
  switch (k) {
    case ErrorKind::InvalidArgument: return "InvalidArgument";
    case ErrorKind::ShapeMismatch: return "ShapeMismatch";
    case ErrorKind::DTypeMismatch: return "DTypeMismatch";
    case ErrorKind::RankMismatch: return "RankMismatch";
    case ErrorKind::OutOfRange: return "OutOfRange";
    case ErrorKind::Unsupported: return "Unsupported";
    case ErrorKind::OutOfMemory: return "OutOfMemory";
    case ErrorKind::DeviceLost: return "DeviceLost";
    case ErrorKind::RuntimeState: return "RuntimeState";
    case ErrorKind::IO: return "IO";
    case ErrorKind::Format: return "Format";
    case ErrorKind::BackendInit: return "BackendInit";
  }
  return "?";
}

Error::Error(ErrorKind kind, std::string op, std::string message)
    : std::runtime_error(std::string("wgt::") + error_kind_name(kind) + " in " + op + ": " + message),
      kind_(kind),
      op_(std::move(op)),
      message_(std::move(message)) {}

void throw_error(ErrorKind kind, const std::string& op, const std::string& message) {
  throw Error(kind, op, message);
}

}  // namespace wgt
