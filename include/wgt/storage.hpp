// Storage: one allocation of bytes with a known identity, living on the host or on a device.
// A device storage may temporarily hold its bytes on the host (evicted by the residency
// manager); the handle stays valid and the data is re-uploaded on next use.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "wgt/device.hpp"

namespace wgt {

// A buffer owned by a device backend. `domain()` identifies the runtime instance (device) that
// allocated it, so a buffer from another device or runtime is rejected instead of misread.
class DeviceBuffer {
 public:
  virtual ~DeviceBuffer() = default;
  virtual uint64_t domain() const = 0;
  virtual size_t nbytes() const = 0;
};

// Host bytes, 64-byte aligned, from the host caching allocator (wgt/host_cache.hpp).
struct HostBytes {
  explicit HostBytes(size_t n);
  ~HostBytes();
  HostBytes(const HostBytes&) = delete;
  HostBytes& operator=(const HostBytes&) = delete;
  uint8_t* data = nullptr;
  size_t size = 0;
};

class Storage : public std::enable_shared_from_this<Storage> {
 public:
  Storage(size_t nbytes, Device device);
  // A storage that never holds bytes: describes an output for capability checks.
  static std::shared_ptr<Storage> meta(size_t nbytes, Device device);
  // A CPU storage over host bytes owned elsewhere (a file mapping, another storage): no copy.
  // `data` must stay valid while `keep_alive` lives; the storage holds `keep_alive` until it
  // is destroyed. Reads and writes go to `data` itself (a mapping meant to be written must be
  // private, e.g. MAP_PRIVATE, so the file never changes).
  static std::shared_ptr<Storage> external(uint8_t* data, size_t nbytes, std::shared_ptr<const void> keep_alive);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  uint64_t id() const { return id_; }  // unique per allocation, process-wide

  // Host bytes: always present for CPU storage; for device storage only while evicted/staged.
  uint8_t* host_data() const { return host_ ? host_->data : borrowed_; }
  bool has_host() const { return host_ || borrowed_; }
  bool host_borrowed() const { return borrowed_ != nullptr; }  // host bytes owned elsewhere
  void ensure_host();   // allocates (uninitialized) host bytes if missing
  // Releases the host bytes: frees owned ones, drops the reference to borrowed ones.
  void drop_host() {
    host_.reset();
    borrowed_ = nullptr;
    borrowed_keep_.reset();
  }
  // Lends a device storage its host bytes for the next upload (which drops them) instead of
  // copying them into bytes of its own. Requires that the storage has no host bytes yet.
  void borrow_host(uint8_t* data, std::shared_ptr<const void> keep_alive);

  // Device buffer, present while resident.
  const std::shared_ptr<DeviceBuffer>& buffer() const { return buffer_; }
  void set_buffer(std::shared_ptr<DeviceBuffer> b) { buffer_ = std::move(b); }
  bool resident() const { return static_cast<bool>(buffer_); }

  // Residency-manager state.
  // Pinning is counted: every pin() needs its own unpin() (Runtime::pin / unpin).
  bool pinned() const { return pin_count_ > 0; }
  uint32_t pin_count() const { return pin_count_; }
  void add_pin() { ++pin_count_; }
  void drop_pin() { --pin_count_; }
  uint64_t last_use() const { return last_use_; }
  void touch(uint64_t tick) { last_use_ = tick; }
  bool tracked() const { return tracked_; }  // known to the residency manager
  void set_tracked() { tracked_ = true; }

  // Host mappings (wgt/mapping.hpp, under the runtime lock): the read mappings and the one
  // write mapping open on this storage. A mapped storage is never evicted.
  uint32_t map_readers() const { return map_readers_; }
  bool map_writer() const { return map_writer_; }
  bool mapped() const { return map_readers_ || map_writer_; }
  void add_map(bool write) { write ? void(map_writer_ = true) : void(++map_readers_); }
  void drop_map(bool write) { write ? void(map_writer_ = false) : void(--map_readers_); }

 private:
  size_t nbytes_;
  Device device_;
  uint64_t id_;
  std::unique_ptr<HostBytes> host_;
  uint8_t* borrowed_ = nullptr;                // host bytes owned by borrowed_keep_ (never freed here)
  std::shared_ptr<const void> borrowed_keep_;
  std::shared_ptr<DeviceBuffer> buffer_;
  uint32_t pin_count_ = 0;
  uint64_t last_use_ = 0;
  bool tracked_ = false;
  uint32_t map_readers_ = 0;
  bool map_writer_ = false;
};

}  // namespace wgt
