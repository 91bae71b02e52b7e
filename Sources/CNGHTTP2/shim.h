#ifndef CHIME_CNGHTTP2_SHIM_H
#define CHIME_CNGHTTP2_SHIM_H
// nghttp2: HTTP/2 framing, HPACK, flow control and the protocol's own checks (Debian's libnghttp2-dev).
#include <stdint.h>
#include <sys/types.h>
#include <nghttp2/nghttp2.h>

/// The 24 bytes an HTTP/2 client sends first (RFC 9113 §3.4), for telling h2c from HTTP/1.1.
static inline const char *chime_h2_client_preface(void) { return NGHTTP2_CLIENT_MAGIC; }
static inline size_t chime_h2_client_preface_length(void) { return NGHTTP2_CLIENT_MAGIC_LEN; }
#endif
