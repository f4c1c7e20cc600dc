#pragma once
// What a failed TLS connection means for the person who has to fix it. A client's handshake, or
// its first read under TLS 1.3 (where the server judges the client's certificate after the client
// has finished), ends with an OpenSSL error; this turns it into one of three stable codes:
//   tls_hostname_mismatch   the certificate is valid but not for the host in the URL
//   tls_certificate_invalid the certificate does not verify (unknown CA, expired, not yet valid…)
//   tls_handshake_failed    anything else in the handshake: no common protocol or cipher, the
//                           server refused our client certificate or wanted one, not TLS at all
// Errors that are not TLS's (a reset, a timeout) are left to the caller (nullopt).
#include <boost/system/error_code.hpp>

#include <optional>
#include <string_view>

#include "common/error.hpp"

typedef struct ssl_st SSL;

namespace takosumi::net {

// ssl: the connection's handle, for the certificate verification result. where: the host and
// port, named in the message.
std::optional<Error> tls_failure(const boost::system::error_code& ec, SSL* ssl,
                                 std::string_view where);

}  // namespace takosumi::net
