#include "net/tls_failure.hpp"

#include <boost/asio/ssl/error.hpp>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <string>

#include "common/error_codes.hpp"

namespace takosumi::net {
namespace {

// Alerts a server sends when it does not accept the client's certificate, or got none.
bool client_certificate_refused(int reason) {
  switch (reason) {
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_TLSV1_ALERT_ACCESS_DENIED:
    case SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE: return true;
    default: return false;
  }
}

}  // namespace

std::optional<Error> tls_failure(const boost::system::error_code& ec, SSL* ssl,
                                 std::string_view where) {
  if (ec.category() != boost::asio::error::get_ssl_category()) return std::nullopt;
  const std::string at(where);
  const long verified = ssl ? SSL_get_verify_result(ssl) : X509_V_OK;
  if (verified == X509_V_ERR_HOSTNAME_MISMATCH || verified == X509_V_ERR_IP_ADDRESS_MISMATCH)
    return Error{std::string(errc::kTlsHostnameMismatch),
                 at + ": the server's certificate is not issued for this host name; use the name "
                      "it was issued for in the URL, or reissue it with this name as a "
                      "subjectAltName"};
  if (verified != X509_V_OK)
    return Error{std::string(errc::kTlsCertificateInvalid),
                 at + ": the server's certificate does not verify (" +
                     X509_verify_cert_error_string(verified) +
                     "); the CA file (controlPlane.caFile, or the system trust store without "
                     "one) must hold the CA that issued it, and it must be within its validity "
                     "dates"};
  const int reason = ERR_GET_REASON(static_cast<unsigned long>(ec.value()));
  if (client_certificate_refused(reason))
    return Error{std::string(errc::kTlsHandshakeFailed),
                 at + ": the server refused the TLS handshake (" + ec.message() +
                     "); when it requires client certificates (mutual TLS), set "
                     "controlPlane.clientCertFile and clientKeyFile to a certificate for client "
                     "authentication issued by the CA of its tls.clientCaFile"};
  return Error{std::string(errc::kTlsHandshakeFailed),
               at + ": TLS handshake failed (" + ec.message() +
                   "); check that the URL names the control plane's HTTPS port and that both "
                   "sides speak TLS 1.2 or newer"};
}

}  // namespace takosumi::net
