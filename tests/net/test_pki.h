// Throwaway certificate authorities and certificates for the TLS tests, made with OpenSSL at
// test time (P-256 keys, valid from an hour ago for a day) and written as PEM files into a
// fresh directory that the object removes.
#pragma once

#include <string>

namespace harvest::testkit {

// A certificate and its key as PEM files.
struct PemFiles {
  std::string certFile;
  std::string keyFile;
};

class TestPki {
 public:
  TestPki();
  ~TestPki();
  TestPki(const TestPki&) = delete;
  TestPki& operator=(const TestPki&) = delete;

  // A self-signed CA named `name`.
  PemFiles makeCa(const std::string& name);
  // A certificate for `name`, signed by `ca`, naming 127.0.0.1 and localhost (so a verifying
  // client dialling either accepts it).
  PemFiles issue(const PemFiles& ca, const std::string& name);
  // A path in the directory, for files the test writes itself.
  std::string path(const std::string& leaf) const { return directory_ + "/" + leaf; }

 private:
  std::string directory_;
  long serial_ = 1;
};

}  // namespace harvest::testkit
