#include "test_pki.h"

#include <glog/logging.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

namespace harvest::testkit {
namespace {

struct Freer {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
  void operator()(X509* cert) const { X509_free(cert); }
};
using Key = std::unique_ptr<EVP_PKEY, Freer>;
using Cert = std::unique_ptr<X509, Freer>;

void addExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX context;
  X509V3_set_ctx(&context, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value);
  CHECK(extension != nullptr) << "extension " << value;
  X509_add_ext(cert, extension, -1);
  X509_EXTENSION_free(extension);
}

Key readKey(const std::string& path) {
  FILE* file = std::fopen(path.c_str(), "r");
  CHECK(file != nullptr) << path;
  Key key(PEM_read_PrivateKey(file, nullptr, nullptr, nullptr));
  std::fclose(file);
  CHECK(key) << path;
  return key;
}

Cert readCert(const std::string& path) {
  FILE* file = std::fopen(path.c_str(), "r");
  CHECK(file != nullptr) << path;
  Cert cert(PEM_read_X509(file, nullptr, nullptr, nullptr));
  std::fclose(file);
  CHECK(cert) << path;
  return cert;
}

// Builds, signs and writes one certificate: self-signed when `ca` is null.
PemFiles makeCertificate(const std::string& directory, const std::string& name, long serial,
                         const PemFiles* ca) {
  Key key(EVP_EC_gen("P-256"));
  CHECK(key) << "EVP_EC_gen";
  Cert cert(X509_new());
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* subject = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1, 0);
  Cert issuerCert = ca ? readCert(ca->certFile) : nullptr;
  Key issuerKey = ca ? readKey(ca->keyFile) : nullptr;
  X509* issuer = ca ? issuerCert.get() : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(issuer));
  if (ca == nullptr) {
    addExtension(cert.get(), issuer, NID_basic_constraints, "critical,CA:TRUE");
    addExtension(cert.get(), issuer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    addExtension(cert.get(), issuer, NID_basic_constraints, "critical,CA:FALSE");
    addExtension(cert.get(), issuer, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost");
  }
  CHECK(X509_sign(cert.get(), ca ? issuerKey.get() : key.get(), EVP_sha256()) > 0) << "X509_sign";

  PemFiles files{directory + "/" + name + ".crt", directory + "/" + name + ".key"};
  FILE* out = std::fopen(files.certFile.c_str(), "w");
  CHECK(out != nullptr && PEM_write_X509(out, cert.get()) == 1) << files.certFile;
  std::fclose(out);
  out = std::fopen(files.keyFile.c_str(), "w");
  CHECK(out != nullptr &&
        PEM_write_PrivateKey(out, key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1)
      << files.keyFile;
  std::fclose(out);
  return files;
}

}  // namespace

TestPki::TestPki() {
  std::string pattern = (std::filesystem::temp_directory_path() / "harvest-pki-XXXXXX").string();
  CHECK(mkdtemp(pattern.data()) != nullptr) << pattern;
  directory_ = pattern;
}

TestPki::~TestPki() {
  std::error_code ignored;
  std::filesystem::remove_all(directory_, ignored);
}

PemFiles TestPki::makeCa(const std::string& name) {
  return makeCertificate(directory_, name, serial_++, nullptr);
}

PemFiles TestPki::issue(const PemFiles& ca, const std::string& name) {
  return makeCertificate(directory_, name, serial_++, &ca);
}

}  // namespace harvest::testkit
