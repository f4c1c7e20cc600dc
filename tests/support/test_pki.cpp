#include "tests/support/test_pki.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <fstream>
#include <stdexcept>

namespace takosumi::testing {
namespace {

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test PKI: ") + what);
}

std::string key_pem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  check(PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr) == 1, "key pem");
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<std::size_t>(n));
  BIO_free(bio);
  return out;
}

std::string certificate_pem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  check(PEM_write_bio_X509(bio, cert) == 1, "cert pem");
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<std::size_t>(n));
  BIO_free(bio);
  return out;
}

void add_extension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  check(ext != nullptr, "extension");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// An unsigned certificate for key, named common_name, valid between the two day offsets, issued
// by issuer (by itself when null).
X509* new_certificate(EVP_PKEY* key, const std::string& common_name, long from_days,
                      long until_days, X509* issuer) {
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof serial);
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert), from_days * 86400);
  X509_gmtime_adj(X509_getm_notAfter(cert), until_days * 86400);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("takosumi tests"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert, issuer ? X509_get_subject_name(issuer) : name);
  X509_set_pubkey(cert, key);
  return cert;
}

}  // namespace

struct TestCa::Keys {
  EVP_PKEY* key = nullptr;
  X509* cert = nullptr;
  ~Keys() {
    X509_free(cert);
    EVP_PKEY_free(key);
  }
};

void IssuedCertificate::write(const std::filesystem::path& cert,
                              const std::filesystem::path& key) const {
  std::ofstream(cert, std::ios::binary) << cert_pem;
  std::filesystem::remove(key);
  { std::ofstream(key, std::ios::binary) << key_pem; }
  std::filesystem::permissions(key, std::filesystem::perms::owner_read |
                                        std::filesystem::perms::owner_write);
}

TestCa::TestCa(const std::string& name) : keys_(std::make_unique<Keys>()) {
  keys_->key = EVP_EC_gen("P-256");
  check(keys_->key != nullptr, "CA key");
  keys_->cert = new_certificate(keys_->key, name, -1, 365, nullptr);
  add_extension(keys_->cert, keys_->cert, NID_basic_constraints, "critical,CA:TRUE");
  add_extension(keys_->cert, keys_->cert, NID_key_usage, "critical,keyCertSign,cRLSign");
  add_extension(keys_->cert, keys_->cert, NID_subject_key_identifier, "hash");
  check(X509_sign(keys_->cert, keys_->key, EVP_sha256()) > 0, "CA signature");
  cert_pem_ = certificate_pem(keys_->cert);
}

TestCa::~TestCa() = default;

void TestCa::write_cert(const std::filesystem::path& file) const {
  std::ofstream(file, std::ios::binary) << cert_pem_;
}

IssuedCertificate TestCa::issue(const CertificateRequest& r) const {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  check(key != nullptr, "leaf key");
  X509* cert =
      new_certificate(key, r.common_name, r.valid_from_days, r.valid_until_days, keys_->cert);
  add_extension(cert, keys_->cert, NID_basic_constraints, "critical,CA:FALSE");
  add_extension(cert, keys_->cert, NID_key_usage, "critical,digitalSignature");
  std::string usage;
  if (r.server) usage = "serverAuth";
  if (r.client) usage += std::string(usage.empty() ? "" : ",") + "clientAuth";
  add_extension(cert, keys_->cert, NID_ext_key_usage, usage);
  std::string names;
  for (const auto& d : r.dns_names) names += (names.empty() ? "DNS:" : ",DNS:") + d;
  for (const auto& ip : r.ip_addresses) names += (names.empty() ? "IP:" : ",IP:") + ip;
  if (!names.empty()) add_extension(cert, keys_->cert, NID_subject_alt_name, names);
  add_extension(cert, keys_->cert, NID_authority_key_identifier, "keyid:always");
  check(X509_sign(cert, keys_->key, EVP_sha256()) > 0, "leaf signature");
  IssuedCertificate out{certificate_pem(cert), key_pem(key)};
  X509_free(cert);
  EVP_PKEY_free(key);
  return out;
}

}  // namespace takosumi::testing
