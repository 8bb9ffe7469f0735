// A whole file mapped into memory, private and copy-on-write: the pages are read from the file
// on first touch, a write changes only this process's copy, never the file.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace wgt {

class MappedFile {
 public:
  // Error{IO} naming the path and the system's reason when the file cannot be opened, is not
  // a regular file, or cannot be mapped. An empty file maps to size() == 0, data() == nullptr.
  static std::shared_ptr<MappedFile> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  MappedFile() = default;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace wgt
