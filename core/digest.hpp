// A 64-bit FNV-1a digest of bytes: a cheap, stable fingerprint of inputs (not a cryptographic
// hash), the same on every machine and run.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace recycle {

class Digest {
 public:
  /// Adds `bytes`, then a separator, so ("ab", "c") and ("a", "bc") differ.
  Digest& add(std::string_view bytes) noexcept {
    for (const char c : bytes) mix(static_cast<unsigned char>(c));
    mix(0xff);
    return *this;
  }
  [[nodiscard]] std::uint64_t value() const noexcept { return hash_; }
  /// 16 lower-case hex digits.
  [[nodiscard]] std::string hex() const {
    std::string out(16, '0');
    for (int i = 0; i < 16; ++i)
      out[static_cast<std::size_t>(15 - i)] = "0123456789abcdef"[(hash_ >> (4 * i)) & 0xf];
    return out;
  }

 private:
  void mix(unsigned char byte) noexcept {
    hash_ ^= byte;
    hash_ *= 1099511628211ULL;  // the FNV 64-bit prime
  }
  std::uint64_t hash_ = 14695981039346656037ULL;  // the FNV 64-bit offset basis
};

}  // namespace recycle
