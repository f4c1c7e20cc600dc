#pragma once
// Certificate authorities and certificates made at test time (OpenSSL, P-256): a CA, server and
// client certificates it issues, including ones outside their validity dates, for the TLS tests.
// Nothing here is committed; every key lives in the test's temporary directory.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace takosumi::testing {

struct IssuedCertificate {
  std::string cert_pem;
  std::string key_pem;
  // Writes both; the key owner-only, as the programs require.
  void write(const std::filesystem::path& cert, const std::filesystem::path& key) const;
};

struct CertificateRequest {
  std::string common_name;
  std::vector<std::string> dns_names;
  std::vector<std::string> ip_addresses;
  bool server = true;   // extendedKeyUsage serverAuth
  bool client = false;  // extendedKeyUsage clientAuth
  long valid_from_days = -1;  // relative to now
  long valid_until_days = 30;
};

class TestCa {
 public:
  explicit TestCa(const std::string& name);
  ~TestCa();
  TestCa(const TestCa&) = delete;
  TestCa& operator=(const TestCa&) = delete;

  const std::string& cert_pem() const { return cert_pem_; }
  void write_cert(const std::filesystem::path& file) const;
  IssuedCertificate issue(const CertificateRequest& request) const;

 private:
  struct Keys;
  std::unique_ptr<Keys> keys_;
  std::string cert_pem_;
};

}  // namespace takosumi::testing
