#pragma once
// OpenSSL contexts for both ends, made the same way: TLS 1.2 at least (1.3 preferred, as OpenSSL
// negotiates the highest both sides speak), forward-secret AEAD ciphers only for 1.2, no
// compression, no renegotiation. A private key file must be owner-only (key_file_insecure
// otherwise), like every other key of the project. Errors are config_invalid naming the setting.
#include <filesystem>
#include <memory>
#include <string>

#include "common/error.hpp"

typedef struct ssl_st SSL;

namespace boost::asio::ssl {
class context;
}

namespace takosumi::net {

using TlsContext = std::shared_ptr<boost::asio::ssl::context>;

// The agent's (and the CLI's) side. Without ca_file the system trust store verifies the server;
// the client certificate is optional (both files or neither). Hostname checks are per connection
// (BeastTransport), always on.
struct TlsClientFiles {
  std::filesystem::path ca_file;
  std::filesystem::path cert_file;
  std::filesystem::path key_file;
  std::string key_prefix = "controlPlane.";  // how errors name the settings
};
Result<TlsContext> make_client_context(const TlsClientFiles& files);

// takosumi-control's side. With client_ca_file every connection must present a certificate that
// CA issued (mutual TLS), or the handshake fails.
struct TlsServerFiles {
  std::filesystem::path cert_file;
  std::filesystem::path key_file;
  std::filesystem::path client_ca_file;
};
Result<TlsContext> make_server_context(const TlsServerFiles& files);

// The verified peer certificate's identity: its subject (RFC 2253, e.g. "CN=worker-1,O=Example"),
// or, for a certificate with an empty subject, its first subjectAltName ("DNS:…", "URI:…",
// "IP:…"). Empty without a peer certificate.
std::string peer_certificate_identity(SSL* ssl);

}  // namespace takosumi::net
