#include "store/content_hash.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <fstream>
#include <memory>
#include <stdexcept>

namespace kforge::store {
namespace {

using DigestContext = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

DigestContext new_context() {
  DigestContext context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("OpenSSL could not start a SHA-256 digest");
  }
  return context;
}

void update(EVP_MD_CTX* context, std::string_view bytes) {
  if (EVP_DigestUpdate(context, bytes.data(), bytes.size()) != 1) {
    throw std::runtime_error("OpenSSL SHA-256 update failed");
  }
}

std::string to_hex(const unsigned char* digest, unsigned int length) {
  static constexpr std::string_view kHex = "0123456789abcdef";
  std::string text;
  text.reserve(std::size_t{length} * 2);
  for (unsigned int i = 0; i < length; ++i) {
    text.push_back(kHex[digest[i] >> 4U]);
    text.push_back(kHex[digest[i] & 0xFU]);
  }
  return text;
}

std::string finish(EVP_MD_CTX* context) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context, digest.data(), &length) != 1) {
    throw std::runtime_error("OpenSSL SHA-256 final failed");
  }
  return to_hex(digest.data(), length);
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  auto context = new_context();
  update(context.get(), bytes);
  return finish(context.get());
}

std::string hmac_sha256_hex(std::string_view key, std::string_view message) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  const std::vector<unsigned char> bytes(message.begin(), message.end());
  const auto* result = HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), bytes.data(),
                            bytes.size(), digest.data(), &length);
  if (result == nullptr) {
    throw std::runtime_error("OpenSSL HMAC-SHA-256 failed");
  }
  return to_hex(digest.data(), length);
}

std::string sha256_of_files(const std::vector<std::filesystem::path>& files) {
  auto context = new_context();
  std::array<char, 1 << 16> buffer{};
  for (const auto& file : files) {
    update(context.get(), file.string());
    std::ifstream stream(file, std::ios::binary);
    update(context.get(), stream ? std::string_view("\1") : std::string_view("\0", 1));
    while (stream) {
      stream.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      update(context.get(), std::string_view(buffer.data(), static_cast<std::size_t>(stream.gcount())));
    }
  }
  return finish(context.get());
}

}  // namespace kforge::store
