// SHA-256 (FIPS 180-4) for profile digests and cache-file checksums; no crypto library needed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace corral::seccomp {

class Sha256 {
 public:
  void update(const void* data, size_t len);
  void update(const std::string& s) { update(s.data(), s.size()); }
  // Call once; the object is spent afterwards.
  std::array<uint8_t, 32> finish();

  static std::string hex(const std::array<uint8_t, 32>& digest);

 private:
  void block(const uint8_t* b);

  uint32_t h_[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  uint8_t buf_[64];
  size_t used_ = 0;
  uint64_t total_ = 0;
};

}  // namespace corral::seccomp
