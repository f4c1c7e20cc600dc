#include "net/tls_context.hpp"

#include <boost/asio/ssl/context.hpp>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <arpa/inet.h>

#include "common/error_codes.hpp"
#include "crypto/keys.hpp"

namespace takosumi::net {
namespace {

namespace ssl = boost::asio::ssl;
namespace fs = std::filesystem;

// TLS 1.2 suites with forward secrecy and an AEAD; TLS 1.3's own suites are all such already.
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
constexpr std::size_t kMaxPrivateKeyPem = 16 * 1024;

// An encrypted key must fail, not make OpenSSL prompt on the terminal (or stdin) and hang the
// server's only thread.
int no_passphrase(char*, int, int, void*) { return 0; }

// The last OpenSSL error, for a message; clears the queue.
std::string openssl_error() {
  unsigned long last = 0;
  while (unsigned long e = ERR_get_error()) last = e;
  if (last == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(last, buf, sizeof buf);
  return buf;
}

Error invalid(std::string_view key, const fs::path& file, std::string_view what) {
  return Error{std::string(errc::kConfigInvalid),
               std::string(key) + " " + file.string() + ": " + std::string(what)};
}

Status require_file(std::string_view key, const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    return std::unexpected(invalid(key, file, "does not exist or is not a regular file"));
  return {};
}

SSL_CTX* common_settings(ssl::context& ctx) {
  SSL_CTX* h = ctx.native_handle();
  SSL_CTX_set_min_proto_version(h, TLS1_2_VERSION);
  SSL_CTX_set_options(h, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_set_cipher_list(h, kTls12Ciphers);
  SSL_CTX_set_default_passwd_cb(h, no_passphrase);
  return h;
}

Status load_verify_file(SSL_CTX* h, std::string_view key, const fs::path& file) {
  TAKOSUMI_TRY(require_file(key, file));
  if (SSL_CTX_load_verify_file(h, file.c_str()) != 1)
    return std::unexpected(invalid(key, file, "is not a PEM CA certificate (" + openssl_error() + ")"));
  return {};
}

// The certificate chain, then the key read through the project's owner-only check, then whether
// the two belong together.
Status load_certificate_and_key(SSL_CTX* h, std::string_view cert_key, const fs::path& cert,
                                std::string_view key_key, const fs::path& key) {
  TAKOSUMI_TRY(require_file(cert_key, cert));
  if (SSL_CTX_use_certificate_chain_file(h, cert.c_str()) != 1)
    return std::unexpected(
        invalid(cert_key, cert, "is not a PEM certificate chain (" + openssl_error() + ")"));
  auto pem = crypto::read_private_file(key, kMaxPrivateKeyPem);
  if (!pem) return std::unexpected(pem.error().with_context(std::string(key_key)));
  BIO* bio = BIO_new_mem_buf(pem->data(), static_cast<int>(pem->size()));
  EVP_PKEY* pkey = bio ? PEM_read_bio_PrivateKey(bio, nullptr, no_passphrase, nullptr) : nullptr;
  BIO_free(bio);
  if (!pkey)
    return std::unexpected(invalid(key_key, key, "is not an unencrypted PEM private key (" +
                                                     openssl_error() + ")"));
  const int used = SSL_CTX_use_PrivateKey(h, pkey);
  EVP_PKEY_free(pkey);
  if (used != 1 || SSL_CTX_check_private_key(h) != 1)
    return std::unexpected(invalid(key_key, key, "does not belong to the certificate in " +
                                                     cert.string() + " (" + openssl_error() + ")"));
  return {};
}

}  // namespace

Result<TlsContext> make_client_context(const TlsClientFiles& files) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  SSL_CTX* h = common_settings(*ctx);
  const std::string& p = files.key_prefix;
  if (!files.ca_file.empty()) {
    TAKOSUMI_TRY(load_verify_file(h, p + "caFile", files.ca_file));
  } else if (SSL_CTX_set_default_verify_paths(h) != 1) {
    return fail(errc::kConfigInvalid, "cannot load the system trust store (" + openssl_error() +
                                          "); set " + p + "caFile");
  }
  SSL_CTX_set_verify(h, SSL_VERIFY_PEER, nullptr);
  if (files.cert_file.empty() != files.key_file.empty())
    return fail(errc::kConfigInvalid,
                p + "clientCertFile and " + p + "clientKeyFile go together: set both or neither");
  if (!files.cert_file.empty())
    TAKOSUMI_TRY(load_certificate_and_key(h, p + "clientCertFile", files.cert_file,
                                          p + "clientKeyFile", files.key_file));
  return ctx;
}

Result<TlsContext> make_server_context(const TlsServerFiles& files) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* h = common_settings(*ctx);
  SSL_CTX_set_options(h, SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (files.cert_file.empty() || files.key_file.empty())
    return fail(errc::kConfigInvalid, "tls.certFile and tls.keyFile are both required for https");
  TAKOSUMI_TRY(
      load_certificate_and_key(h, "tls.certFile", files.cert_file, "tls.keyFile", files.key_file));
  if (!files.client_ca_file.empty()) {
    TAKOSUMI_TRY(load_verify_file(h, "tls.clientCaFile", files.client_ca_file));
    // The CA names the server asks for, so a client with several certificates picks the right one.
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(files.client_ca_file.c_str());
    if (!names)
      return std::unexpected(invalid("tls.clientCaFile", files.client_ca_file,
                                     "holds no CA certificate (" + openssl_error() + ")"));
    SSL_CTX_set_client_CA_list(h, names);
    SSL_CTX_set_verify(h, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  // Resumed sessions must stay within this server's verified clients.
  static constexpr unsigned char kSessionContext[] = "takosumi-control";
  SSL_CTX_set_session_id_context(h, kSessionContext, sizeof kSessionContext - 1);
  return ctx;
}

std::string peer_certificate_identity(SSL* ssl) {
  X509* cert = ssl ? SSL_get0_peer_certificate(ssl) : nullptr;
  if (!cert) return {};
  std::string out;
  if (BIO* bio = BIO_new(BIO_s_mem())) {
    if (X509_NAME_print_ex(bio, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253) > 0) {
      char* data = nullptr;
      const long n = BIO_get_mem_data(bio, &data);
      if (n > 0) out.assign(data, static_cast<std::size_t>(n));
    }
    BIO_free(bio);
  }
  if (!out.empty()) return out;
  auto* names = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names) && out.empty(); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
    if (name->type == GEN_DNS || name->type == GEN_URI) {
      const ASN1_IA5STRING* s = name->type == GEN_DNS ? name->d.dNSName : name->d.uniformResourceIdentifier;
      out = std::string(name->type == GEN_DNS ? "DNS:" : "URI:") +
            std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                        static_cast<std::size_t>(ASN1_STRING_length(s)));
    } else if (name->type == GEN_IPADD) {
      const int n = ASN1_STRING_length(name->d.iPAddress);
      char text[INET6_ADDRSTRLEN] = {};
      if ((n == 4 || n == 16) &&
          inet_ntop(n == 4 ? AF_INET : AF_INET6, ASN1_STRING_get0_data(name->d.iPAddress), text,
                    sizeof text))
        out = std::string("IP:") + text;
    }
  }
  GENERAL_NAMES_free(names);
  return out;
}

}  // namespace takosumi::net
